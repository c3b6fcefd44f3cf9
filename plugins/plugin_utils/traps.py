# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Known traps of storage and network benchmarking, detected in the analysis (DESIGN.md section 5).

Each flag is {code, message}: a stable code for machines and a one-line explanation for people.
(a) faster_than_baseline  a cell better than its baseline beyond noise
(b) too_fast              bonnie++ '+++++' values
(c) cpu_bound             per-char tests at >= 90 % CPU
(d) below_2x_ram          a data set below twice the RAM
(e) drbd_not_uptodate     DRBD not UpToDate / resyncing while the cell ran
(f) gate_not_met          the variance gate's cap was reached with the CV still too high
and zero_data (a write of /dev/zero), zero_elision (zeros written significantly faster than real
data in the same cell: the storage skips or compresses zero blocks, as OpenVZ ploop did) and
not_quiet (the machine was busy during a run).
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.stats import compare

CPU_BOUND_PCT = 90.0


def _flag(code, message):
    return {'code': code, 'message': message}


def cell_flags(benchmark, cell, records, gate=None, environment=None, expected_faster=False):
    """Flags for one cell of one benchmark; `cell` is the analysis cell (metrics with comparisons)."""
    flags = []
    primary = benchmark['primary']
    s = cell['metrics'].get(primary)
    if s and s.get('significant') and s.get('delta_pct') is not None and not expected_faster:
        better = s['delta_pct'] > 0 if s['better'] == 'higher' else s['delta_pct'] < 0
        if better:
            flags.append(_flag('faster_than_baseline', (
                'suspicious: %s is %+.1f%% vs the baseline %s beyond noise (p=%.3g) — zero-block skipping, '
                'write-back cache or caches not dropped?') % (primary, s['delta_pct'], benchmark['baseline'], s['p'])))
    too_fast = sorted(m for m, v in cell['metrics'].items() if v.get('too_fast'))
    if too_fast:
        flags.append(_flag('too_fast', 'too fast to measure (+++++) in %s: use a larger -s / -n' % ', '.join(too_fast)))
    cpu = sorted(m for m, v in cell['metrics'].items()
                 if m.endswith('_char_cpu') and v.get('mean') is not None and v['mean'] >= CPU_BOUND_PCT)
    if cpu:
        flags.append(_flag('cpu_bound', 'per-char tests at >= %d%% CPU (%s): they measure the CPU, not the disk'
                           % (CPU_BOUND_PCT, ', '.join(cpu))))
    ram = [w for r in records for w in (r.get('warnings') or []) if 'below 2x RAM' in w]
    if ram:
        flags.append(_flag('below_2x_ram', ram[0]))
    zero = [r for r in records if (r.get('params') or {}).get('data') == 'zero']
    if zero:
        flags.append(_flag('zero_data', 'wrote zeros (/dev/zero) in %d run(s): storage that skips or compresses '
                                        'zero blocks (ploop, thin volumes, btrfs/zfs compression) fakes the speed'
                           % len(zero)))
    busy = [r for r in records if ((r.get('params') or {}).get('guards') or {}).get('quiet') is False]
    if busy:
        flags.append(_flag('not_quiet', 'the machine was busy (load or another benchmark) during %d of %d run(s)'
                           % (len(busy), len(records))))
    for env in environment or []:
        bad = [d for d in env.get('drbd') or [] if d.get('disk_state') != 'UpToDate'
               or (d.get('replication') or '').startswith('Sync') or d.get('peer_disk_state') not in (None, 'UpToDate')]
        if bad:
            flags.append(_flag('drbd_not_uptodate', 'DRBD %s was %s/%s (%s) during the cell: resync traffic distorts it' % (
                bad[0].get('name'), bad[0].get('disk_state'), bad[0].get('peer_disk_state'), bad[0].get('replication'))))
    if gate and gate.get('capped'):
        flags.append(_flag('gate_not_met', 'CV %.1f%% of %s still above max_cv %.1f%% after %d runs (the cap)' % (
            (gate['cv'] or 0) * 100, gate['metric'], gate['max_cv'] * 100, gate['n'])))
    return flags


def zero_elision_flag(zero_cell, real_cell, metric, real_name):
    """The ploop trap inside one cell: zeros significantly faster than real data.

    OpenVZ ploop (and thin volumes, dedup, compressing file systems) does not write all-zero
    blocks: in the reference thread (shared/reference/002) `dd if=/dev/zero ... conv=fdatasync`
    in a ploop container ran at 215 MB/s against 45 MB/s on its host and 42 MB/s in a simfs
    container. benchlab writes random data by default; a matrix that also writes zeros in the
    same cell (inventories/lab bench_matrix_openvz does, on purpose) gets this flag.
    """
    z, r = zero_cell['metrics'].get(metric), real_cell['metrics'].get(metric)
    if not z or not r or not z['n'] or not r['n']:
        return None
    cmp = compare(z, r, better=z['better'])
    if not cmp['significant'] or cmp['worse']:
        return None
    ratio = z['mean'] / r['mean'] if r['mean'] else float('inf')
    if z['better'] == 'lower':
        ratio = r['mean'] / z['mean'] if z['mean'] else float('inf')
    return _flag('zero_elision', (
        'zeros went %.1fx as fast as real data (%s, p=%.3g): this storage skips or compresses zero blocks, '
        'so the zero-data number measures nothing') % (ratio, real_name, cmp['p'] or 0.0))
