# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Known traps of storage and network benchmarking, detected in the analysis (docs/usage.md, statistics and traps).

The one trap vocabulary: ``VOCABULARY`` maps every code to a short title and an explanation; the
analysis and every renderer (md, html, csv, terminal, json) take them from here. Each flag on a
cell is {code, message}: the code for machines, a one-line message for people.

Codes a target puts on its record (``flags``; module_utils/run/trapcodes.py): below_2x_ram, zero_data,
not_quiet, source_on_test_storage, unsafe_options. Codes decided from the evidence of a run's observation
(plugin_utils/explain/explain.py): writes_elided, write_amplified, not_durable, served_from_cache, device_bound, cpu_bound,
link_bound, steal, host_busy. Codes the analysis finds: faster_than_baseline, too_fast,
cpu_bound, drbd_not_uptodate, gate_not_met, zero_elision (zeros significantly faster than real data
in the same cell, the ploop trap), duplicate_runs (measurements.py), regression, params_differ and tool_version_differs
(regress.py).
Records written before the codes existed have no ``flags``: ``record_codes`` derives them from their
old fields, the only place that still reads a warning's text.
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import compare
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import (
    BELOW_2X_RAM, DEVICE_BOUND, HOST_BUSY, LINK_BOUND, NOT_DURABLE, NOT_QUIET, SERVED_FROM_CACHE, SOURCE_ON_TEST_STORAGE, STEAL,
    UNSAFE_OPTIONS, WRITE_AMPLIFIED, WRITES_ELIDED, ZERO_DATA, record_flags)

# Found by the analysis on runs meant to run at once (plugin_utils/analysis/measurements.py).
NOT_TOGETHER = 'not_together'

# code -> (title, explanation: what it means and what to do about it)
VOCABULARY = {
    NOT_TOGETHER: ('did not run together', (
        'Runs meant to run at once (concurrent iperf pairs, the runs of one step) did not overlap for most of '
        'their time (records\' started and duration_s): their sum would be no concurrent figure, so it is left '
        'out. Raise params.start_delay_s (iperf pairs) or give the tool a longer time.')),
    'faster_than_baseline': ('faster than its baseline', (
        'A cell measured faster than its baseline beyond noise. A layer (container, VM, DRBD) cannot make the '
        'disk faster: suspect zero-block skipping, write-back caching or caches that were not dropped. Mark the '
        'cell expected_faster if it is faster by design (tmpfs).')),
    'too_fast': ('too fast to measure', 'bonnie++ printed +++++: the test finished too quickly to measure. '
                                        'Use a larger -s / -n.'),
    'cpu_bound': ('CPU-bound', (
        'The tool used 90 % or more of a core (or all cores were 90 % busy, mostly with it), as observed during '
        'the run, or bonnie++\'s per-character tests ran at >= 90% CPU: the number measures the CPU, not the '
        'storage or the network.')),
    WRITES_ELIDED: ('writes elided', (
        'Observed: the narrowest of the layers under the file system (the one with the fewest of the bytes, down '
        'to the disk under a loop device\'s image or the host\'s under a guest\'s) received less than half of the '
        'bytes the tool wrote, and the rest was not '
        'waiting in the page cache. The storage skipped zero blocks, compressed or deduplicated them (ploop, thin '
        'volumes, btrfs/zfs compression) at the layer named: the throughput is not the disk\'s.')),
    WRITE_AMPLIFIED: ('write amplified', (
        'Observed: the first device below the file system received more than 1.5 times the bytes the tool wrote '
        '(journal, DRBD meta-data, thin or qcow2 allocation, RAID): the factor is the layer\'s cost.')),
    NOT_DURABLE: ('not durable', (
        'Observed: the tool synced its writes (dd conv=fdatasync, fio end_fsync/fsync, sysbench fsync) and the '
        'sync returned with less than nine tenths of them on the narrowest layer, the rest waiting in a cache above '
        'it (a page cache that a flush did not reach, a hypervisor\'s cache=unsafe, a library that skips fsync): '
        'the number is the cache\'s, and a crash would lose the data. Evidence, not proof: a disk\'s own volatile '
        'cache is invisible from here.')),
    SERVED_FROM_CACHE: ('served from cache', (
        'Observed: a read whose narrowest layer delivered less than half of the bytes the tool read. A cache served '
        'the rest where it sits: the page cache, the page cache of a loop device\'s backing file, the host under '
        'a guest\'s disk. The number is memory\'s, not the storage\'s: drop the caches (on the host too), use '
        'direct I/O on every layer, or read more than twice the RAM.')),
    DEVICE_BOUND: ('device-bound', 'Observed: a device layer was 90 % busy or more: the number is that '
                                   'device\'s limit (the deepest busy layer holds up those above it).'),
    LINK_BOUND: ('link-bound', 'Observed: a network interface in the path carried 90 % or more of its known '
                               'speed or shaping rate: the number is the link\'s limit.'),
    STEAL: ('CPU steal', 'Observed: 5 % or more of the CPU time was stolen by the hypervisor (other guests or '
                         'the host were busy): the number includes the competition below.'),
    HOST_BUSY: ('hypervisor host busy', 'Observed on the hypervisor host at the same time: its CPUs or a disk the '
                                        'guest does not use were 90 % busy with other work.'),
    BELOW_2X_RAM: ('data set below 2x RAM', 'The data set is smaller than twice the RAM: the page cache may serve '
                                            'it and inflate the numbers.'),
    'drbd_not_uptodate': ('DRBD not UpToDate', 'DRBD was not UpToDate (or was resyncing) while the cell ran: '
                                               'resync traffic distorts the numbers.'),
    'gate_not_met': ('variance gate not met', 'The variance gate reached its cap (max_repetitions) with the '
                                              'coefficient of variation still above max_cv or the confidence '
                                              'interval of the mean still wider than target_ci_pct: the result '
                                              'is noisy or not as precise as asked.'),
    ZERO_DATA: ('zero or compressible data', (
        'The run wrote zeros or compressible data (dd from /dev/zero, dbench and sysbench fileio write zero '
        'buffers, fio with zero_buffers / buffer_compress_percentage / buffer_pattern / dedupe_percentage). '
        'Storage that skips or compresses such blocks (ploop, thin volumes, compression, dedup) fakes the '
        'speed.')),
    'zero_elision': ('zeros elided', 'Zeros were written significantly faster than real data in the same cell: '
                                     'the storage skips zero blocks, so the zero-data number measures nothing.'),
    NOT_QUIET: ('machine not quiet', (
        'Other processes (not this run\'s own tool, module or Ansible) used the CPU during the run, or another '
        'benchmark was running: the number includes the competition.')),
    SOURCE_ON_TEST_STORAGE: ('source read from the storage under test', (
        'The benchmark read its source data from the storage it measures (dd\'s random source did not fit in '
        '/dev/shm, or data_dir is on it): the reads compete with the writes. Set data_dir to a tmpfs with room.')),
    UNSAFE_OPTIONS: ('unsafe options allowed', (
        'The run was allowed (allow_unsafe_options) to use what benchlab refuses by default and cannot check: a fio '
        'engine that writes more than the job\'s own files (e4defrag, network engines), a host object (cgroup), '
        'a program, a path outside the work directory or an option fio\'s table does not classify. The record\'s '
        'warnings name each one; what it touched is the user\'s responsibility.')),
    'duplicate_runs': ('duplicate records', (
        'One repetition arrived as several records: it is counted once (their mean), so n stays the number '
        'of repetitions. A re-run of the same repetition, or workers the tool did not aggregate.')),
    'regression': ('regression', 'The candidate run is significantly worse than the stored run it is compared '
                                 'with.'),
    'params_differ': ('not the same experiment', (
        'The compared runs ran this benchmark with different parameters (block size, size, job options...): '
        'the difference may be the parameters, not the system. The regression gate cannot judge it unless '
        'told they are the same experiment (compare_ignore_params).')),
    'tool_version_differs': ('another tool version', (
        'The compared runs measured with different versions of the tool: a change of the tool can move the '
        'number by itself.')),
}

# Codes a single run (record) carries: the report shows the fraction of runs each one flagged.
RUN_CODES = (BELOW_2X_RAM, ZERO_DATA, NOT_QUIET, SOURCE_ON_TEST_STORAGE, UNSAFE_OPTIONS, NOT_TOGETHER)


def title(code):
    return VOCABULARY.get(code, (code, ''))[0]


def explanation(code):
    return VOCABULARY.get(code, (code, ''))[1]


def record_codes(rec):
    """The trap codes of one record: its ``flags``, or for a record from before the codes (no
    ``flags`` key) the same codes derived from its old fields."""
    if isinstance(rec.get('flags'), list):
        return list(rec['flags'])
    legacy = [BELOW_2X_RAM] if any('below 2x RAM' in str(w) for w in rec.get('warnings') or []) else []
    return record_flags(rec.get('params'), legacy)


def trap_rates(runs):
    """[{code, title, flagged, runs, fraction}] of every run-level code: how many of the counted
    runs (measurements, one per repetition) carry it."""
    out = []
    for code in RUN_CODES:
        flagged = sum(1 for r in runs if code in record_codes(r))
        out.append(dict(code=code, title=title(code), flagged=flagged, runs=len(runs),
                        fraction=round(flagged / len(runs), 4) if runs else None))
    return out


CPU_BOUND_PCT = 90.0


def _flag(code, message):
    return {'code': code, 'message': message}


def gate_shortfall(gate):
    """What a gate that is not met still lacks: ['CV 7.1% above max_cv 5.0%', '95% CI +-9.0% of the
    mean above the target +-5%']."""
    out = []
    if gate.get('max_cv') is not None and (gate.get('cv') is None or gate['cv'] > gate['max_cv']):
        cv = 'n/a' if gate.get('cv') is None else '%.1f%%' % (gate['cv'] * 100)
        out.append('CV %s above max_cv %.1f%%' % (cv, gate['max_cv'] * 100))
    if gate.get('target_ci_pct') is not None and not gate.get('precise'):
        out.append('95%% CI %s of the mean above the target +-%.4g%%' % (
            'n/a' if gate.get('ci_pct') is None else '+-%.1f%%' % gate['ci_pct'], gate['target_ci_pct']))
    return out or ['short of its target']


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
    flags.extend(_record_flags(records))
    flags.extend(_drbd_flags(records, environment))
    if gate and gate.get('capped'):
        flags.append(_flag('gate_not_met', '%s still %s after %d runs (the cap)' % (
            gate['metric'], ' and '.join(gate_shortfall(gate)), gate['n'])))
    return flags


# run-level code -> the cell's message, given how many of its runs carry the code and how many ran
_RUN_MESSAGES = {
    BELOW_2X_RAM: ('the data set was below 2x RAM in %d of %d run(s): the page cache may inflate the result (the '
                   'warnings give the sizes)'),
    ZERO_DATA: ('wrote zeros or compressible data in %d of %d run(s): storage that skips or compresses zero blocks '
                '(ploop, thin volumes, btrfs/zfs compression) fakes the speed'),
    NOT_QUIET: 'other processes used the CPU (or another benchmark ran) during %d of %d run(s)',
    SOURCE_ON_TEST_STORAGE: ('the source data was read from the storage under test in %d of %d run(s): set data_dir '
                             'to a tmpfs with room'),
    UNSAFE_OPTIONS: ('allow_unsafe_options let through what benchlab does not check in %d of %d run(s) (the warnings '
                     'name the options)'),
    NOT_TOGETHER: ('the concurrent pairs did not run together in %d of %d run(s): those runs have no value (the '
                   'warnings say how far apart they started)'),
}


def _drbd_bad(states):
    """The DRBD resource states (drbd_status entries) that distort a measurement."""
    return [d for d in states or [] if d.get('disk_state') != 'UpToDate'
            or (d.get('replication') or '').startswith(('Sync', 'PausedSync'))
            or d.get('peer_disk_state') not in (None, 'UpToDate')]


def _drbd_flags(records, environment):
    """drbd_not_uptodate from the state each run recorded right before it measured
    (params.guards.drbd, set by the bench_run role after its wait); for records without it, from
    the cell's environment (taken once, before the cell's first run)."""
    states = [((r.get('params') or {}).get('guards') or {}).get('drbd') for r in records]
    per_run = [s for s in states if s is not None]
    if per_run:
        bad = [b for b in (_drbd_bad(s) for s in per_run) if b]
        if bad:
            d = bad[0][0]
            return [_flag('drbd_not_uptodate', 'DRBD %s was %s/%s (%s) at the start of %d of %d run(s): resync '
                                               'traffic distorts it' % (d.get('name'), d.get('disk_state'),
                                                                        d.get('peer_disk_state'), d.get('replication'),
                                                                        len(bad), len(per_run)))]
        return []
    for env in environment or []:
        bad = _drbd_bad(env.get('drbd'))
        if bad:
            return [_flag('drbd_not_uptodate', 'DRBD %s was %s/%s (%s) during the cell: resync traffic distorts it' % (
                bad[0].get('name'), bad[0].get('disk_state'), bad[0].get('peer_disk_state'), bad[0].get('replication')))]
    return []


def _record_flags(records):
    """The cell's flags from the codes its records carry, each with the count of runs."""
    codes = [record_codes(r) for r in records]
    flags = []
    for code in RUN_CODES:
        flagged = sum(1 for c in codes if code in c)
        if flagged:
            flags.append(_flag(code, _RUN_MESSAGES[code] % (flagged, len(records))))
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
