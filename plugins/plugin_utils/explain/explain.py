# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every number explained: verdicts from the evidence of each run's observation (the record's
``observed``, module_utils/observe/observe.py), per run and per cell, and the one "explained" line the
reports show for every cell.

Per run (``run_verdicts``), each with its figures:

- ``writes_elided``: the first device layer below the file system received less than half of the
  bytes the tool wrote (its /proc/<pid>/io write_bytes less what it cancelled), and the rest is not
  waiting in the page cache (Dirty + Writeback at the end): zero blocks skipped, compression, dedup;
- ``write_amplified``: more than 1.5 times them (journal, DRBD meta-data, thin/qcow2 allocation, RAID);
- ``served_from_cache``: a read (dd's read test, or a record with read figures and none for writes,
  whose tool made storage write less than a tenth of what it read) whose first device delivered
  less than a tenth of the bytes the tool read;
- ``device_bound``: a device layer >= 90 % busy; ``cpu_bound``: the tool >= 90 % of a core (or its
  main thread on a CPU or waiting for one >= 90 % of the window: a CPU-bound thread that others
  kept from a whole core), or all cores >= 90 % busy mostly with the tool; ``link_bound``: an interface at >= 90 % of its known speed
  or shaping rate; ``steal``: >= 5 % of the CPU time stolen;
- ``host_busy``: the hypervisor host (``observed.host``, sampled there at the same time) >= 90 %
  busy, at least half of it with work that is neither the guest's own cgroup nor the host's kernel
  threads (the layers' work for it), or one of its devices >= 90 % busy with at least twice the bytes
  the guest moved (``host_verdict``); ``host_cost``: the host's CPU per GB the tool moved.

Per cell (``explain_cell``): the limiter most repetitions agree on (the record's ``limited_by``),
the median of each figure over the runs that agree, each verdict with the number of runs it fired
in, and the line. A record with observations decides from evidence first: the inference trap
``zero_elision`` (zeros faster than real data) stays quiet when the observation shows the zeros
reached the device (``evidence_denies_elision``).
"""

from __future__ import annotations

import statistics

from ansible_collections.benchlab.bench.plugins.module_utils.observe.observe import SATURATED_PCT, limited_by, link_util
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import (
    CPU_BOUND, DEVICE_BOUND, EVIDENCE_CODES, HOST_BUSY, LINK_BOUND, NOT_DURABLE, SERVED_FROM_CACHE, STEAL,
    WRITE_AMPLIFIED, WRITES_ELIDED)
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.layerpath import (
    DURABLE_SHARE, STOPPED_BELOW, judge, layers_of, pending_at, stop_text, mb as stop_mb)
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import record_direction, record_synced

ELIDED_BELOW = STOPPED_BELOW
AMPLIFIED_ABOVE = 1.5
CACHE_BELOW = 0.1               # a tool that wrote this share of what it read made no pure read
STEAL_PCT = 5.0
MIN_BYTES = 1024 * 1024          # below this the tool moved too little to judge bytes per byte
NOT_OBSERVED = 'not observed'


def _fmt(x, digits=2):
    return ('%.' + str(digits) + 'f') % x


def _pct(x):
    return '%.0f %%' % x if x >= 9.5 else '%.1f %%' % x


# ---- one run -----------------------------------------------------------------------------------

def _first_device(observed):
    """The device layer closest to the tool (the one right under its file system), or None."""
    devices = [d for d in observed.get('devices') or [] if isinstance(d.get('layer'), int)]
    return min(devices, key=lambda d: d['layer']) if devices else None


def write_figures(observed):
    """(tool bytes written, device, bytes it received) or None when the run wrote too little or
    the tool's I/O is unknown."""
    tool = observed.get('tool') or {}
    dev = _first_device(observed)
    if dev is None or 'write_bytes' not in tool:
        return None
    written = tool['write_bytes'] - tool.get('cancelled_write_bytes', 0)
    if written < MIN_BYTES:
        return None
    return written, dev, dev['write_bytes']


def link_figures(rec):
    """(tool bytes written, interface, bytes it sent) of a run that writes to a replicated device
    (its target observed its links toward the DRBD peers: params.guards.observe_toward): the busiest
    of those links, counted on the target's own clock; else None."""
    obs = rec.get('observed') if isinstance(rec.get('observed'), dict) else {}
    if not ((rec.get('params') or {}).get('guards') or {}).get('observe_toward'):
        return None
    w = _figures(rec)[0]
    links = [n for n in obs.get('net') or [] if isinstance(n.get('tx_bytes'), int)]
    if not w or not links:
        return None
    busiest = max(links, key=lambda n: n['tx_bytes'])
    return w[0], busiest['name'], busiest['tx_bytes']


def read_figures(observed, laid_out=False):
    """(tool bytes read, device, bytes it delivered) for a read: the tool read at least MIN_BYTES
    and made storage write less than a tenth of that (`laid_out`: its unit says the writes were the
    file it laid out before reading it, not its work); else None."""
    tool = observed.get('tool') or {}
    dev = _first_device(observed)
    if dev is None or 'rchar' not in tool:
        return None
    read = tool['rchar']
    if read < MIN_BYTES or (not laid_out and tool.get('write_bytes', 0) >= CACHE_BELOW * read):
        return None
    return read, dev, dev['read_bytes']


def direction(rec):
    """'read', 'write' or None: what the record's own work did to the storage. Its tool's unit says
    (toolinfo.record_direction: a fio or sysbench read lays out its file first, which is not the
    read's work); where it does not, a record with read figures and none for writes is a read."""
    said = record_direction(rec)
    if said is not None:
        return said
    metrics = rec.get('metrics') or {}

    def moved(prefix):
        return any(k.startswith(prefix) and (m.get('value') or 0) > 0 for k, m in metrics.items() if isinstance(m, dict))
    return 'read' if moved('read_') and not moved('write_') else None


def is_read(rec):
    """Whether a record measured reads of the storage: only then is what its tool read a read of the
    storage (a write test reads its source from /dev/urandom or a tmpfs)."""
    return direction(rec) == 'read'


def _figures(rec):
    """(write figures, read figures) of a record with an observation, by what its own work did: a read
    is explained by what it read, never by the bytes of the file laid out for it."""
    obs = rec.get('observed') if isinstance(rec.get('observed'), dict) else {}
    kind = direction(rec)
    if kind == 'read':
        return None, read_figures(obs, laid_out=True)
    return write_figures(obs), None


def _pending(observed, at_start=False):
    """Dirty and writeback memory (the machine's, not only the tool's) when the window closed, or
    when it opened: at most that much of what the devices received in the window may be older
    writes the kernel flushed then."""
    mem = observed.get('memory') or {}
    return sum(max(0, (mem.get('%s_end_bytes' % k) or 0) - ((mem.get('%s_delta_bytes' % k) or 0) if at_start else 0))
               for k in ('dirty', 'writeback'))


def _verdict(code, message, figure, unit, name=None):
    v = {'code': code, 'message': message, 'figure': figure, 'unit': unit}
    if name:
        v['name'] = name
    return v


def run_verdicts(rec):
    """The evidence verdicts of one record: [{code, message, figure, unit, name}] (empty without
    an observation)."""
    obs = rec.get('observed') if isinstance(rec.get('observed'), dict) else None
    if not obs:
        return []
    out = []
    w, r = _figures(rec)
    if w:
        written, dev, reached = w
        out.extend(_write_path_verdicts(rec, obs, written))
        ratio = reached / float(written)
        if ratio > AMPLIFIED_ABOVE and reached - _pending(obs, at_start=True) > AMPLIFIED_ABOVE * written:
            # (not when the excess may be older dirty data the kernel flushed during the window: a
            # tool that does not sync, such as bzip2 writing its output after its input was made)
            out.append(_verdict(WRITE_AMPLIFIED, '%s bytes reached %s per byte written (%.1fx: journal, meta-data, '
                                                 'allocation or RAID)' % (_fmt(ratio), dev['name'], ratio),
                                ratio, 'bytes/byte', dev['name']))
    if r:
        judged = judge(obs, 'read', r[0])
        if judged and judged['ratio'] < STOPPED_BELOW:     # the narrowest layer delivered less than half
            name, share, at = stop_text(judged)
            held = (judged['stopped'] or {}).get('held_by') or 'caches above %s' % name
            out.append(_verdict(SERVED_FROM_CACHE, '%s came from %s: served by %s' % (share, at, held),
                                judged['ratio'], 'bytes/byte', name))
    busy = [d for d in obs.get('devices') or [] if (d.get('util_pct_mean') or 0) >= SATURATED_PCT]
    if busy:
        d = max(busy, key=lambda x: (x.get('layer', 0), x['util_pct_mean']))
        wait = ', %s ms per I/O' % _fmt(d['await_ms']) if d.get('await_ms') is not None else ''
        out.append(_verdict(DEVICE_BOUND, '%s %s busy%s' % (d['name'], _pct(d['util_pct_mean']), wait),
                            d['util_pct_mean'], '%', d['name']))
    cpu = obs.get('cpu') or {}
    tool_pct, all_pct, cores = cpu.get('tool_cpu_pct'), cpu.get('busy_pct_mean'), cpu.get('cores') or 1
    runnable = cpu.get('tool_runnable_pct')
    if tool_pct is not None and SATURATED_PCT <= tool_pct <= 110.0:    # one thread at a core's limit
        out.append(_verdict(CPU_BOUND, 'the tool used %s of a core' % _pct(tool_pct), tool_pct, '%', 'tool'))
    elif tool_pct is not None and tool_pct <= 110.0 and (runnable or 0) >= SATURATED_PCT:
        # a CPU-bound thread on a machine where others took part of the CPU
        out.append(_verdict(CPU_BOUND, 'the tool was on a CPU or waiting for one %s of the time (it got %s of a '
                                       'core)' % (_pct(runnable), _pct(tool_pct)), runnable, '%', 'tool'))
    elif all_pct is not None and all_pct >= SATURATED_PCT and tool_pct is not None and tool_pct / cores >= all_pct / 2:
        out.append(_verdict(CPU_BOUND, 'all %d cores %s busy, mostly with the tool' % (cores, _pct(all_pct)),
                            all_pct, '%', 'all cores'))
    for n in obs.get('net') or []:
        util = link_util(n)
        if (util or 0) >= SATURATED_PCT:
            limit = min(x for x in (n.get('speed_mbit'), n.get('rate_mbit')) if x)
            rate = n.get('mbit_active') if n.get('util_pct_active') is not None else n.get('mbit_mean')
            out.append(_verdict(LINK_BOUND, '%s at %s of %s Mbit/s (%s)' % (
                n['name'], _fmt(rate or 0, 1), _fmt(limit, 0), _pct(util)), util, '%', n['name']))
    if (cpu.get('steal_pct') or 0) >= STEAL_PCT:
        out.append(_verdict(STEAL, '%s of the CPU time stolen by the hypervisor' % _pct(cpu['steal_pct']),
                            cpu['steal_pct'], '%'))
    host = host_verdict(obs)
    if host:
        out.append(host)
    return out


def _write_path_verdicts(rec, obs, written):
    """writes_elided or not_durable, decided at the narrowest of the layers (layerpath.judge: the one
    with the fewest of the bytes): it got less than half of the bytes written and nothing waits above
    it (skipped or compressed, named where they stopped); or the tool synced (its unit's ``synced``) and
    the sync returned with less than nine tenths of them there, the rest waiting in a cache above it."""
    judged = judge(obs, 'write', written)
    if not judged:
        return []
    name, share, at = stop_text(judged)
    stopped, low = judged['stopped'] or {}, judged['narrowest']
    pending = pending_at(obs, stopped.get('where') or low['where'])
    if judged['ratio'] < ELIDED_BELOW and low['bytes'] + pending < ELIDED_BELOW * written:
        return [_verdict(WRITES_ELIDED, '%s reached %s: the storage skipped or compressed them' % (share, at),
                         judged['ratio'], 'bytes/byte', name)]
    if judged['ratio'] < DURABLE_SHARE and pending >= 0.5 * (written - low['bytes']) and record_synced(rec):
        held = stopped.get('held_by') or 'a cache above %s' % low['name']
        return [_verdict(NOT_DURABLE, 'the sync returned with %s of %s MB on %s: %s holds the rest' % (
            stop_mb(low['bytes']), stop_mb(written), _layer_name(low), held), judged['ratio'], 'bytes/byte', name)]
    return []


def _layer_name(layer):
    return layer['name'] if layer['where'] == 'target' else 'the host\'s %s' % layer['name']


def _guest_bytes(obs, host):
    """The bytes the guest moved to and from its disk in the window: its own first device's (what the
    target saw), else the first block layer on the host under the guest's disk (host.guest_devices)."""
    dev = _first_device(obs)
    if dev is not None:
        return dev['read_bytes'] + dev['write_bytes']
    mine = host.get('guest_devices') or []
    for d in host.get('devices') or []:
        if mine and d['name'] == mine[0]:
            return d['read_bytes'] + d['write_bytes']
    return 0


def host_verdict(obs):
    """host_busy from the host's observation made at the same time (``observed.host``), or None:

    - its CPUs >= 90 % busy and at least half of that other work than the guest's: the host's busy
      CPU less the guest's own cgroup (``cpu.guest_pct``: its processes, or its VM's threads) and less
      the host's kernel threads (``cpu.kthread_pct``: the layers' work for the guest, such as loop
      and DRBD workers and writeback); not judged where the guest's cgroup is unknown (a DRBD peer has
      no guest; a guest whose cgroup could not be found is named in the host's ``missing``);
    - one of its devices >= 90 % busy that moved at least twice the bytes the guest moved (a device
      outside the guest's stack, ``guest_devices``, counts none of them as the guest's)."""
    host = obs.get('host') if isinstance(obs.get('host'), dict) else None
    if not host:
        return None
    cpu = host.get('cpu') or {}
    busy, guest = cpu.get('busy_pct_mean'), cpu.get('guest_pct')
    if busy is not None and guest is not None:
        other = max(0.0, busy - guest - (cpu.get('kthread_pct') or 0.0))
        if busy >= SATURATED_PCT and other >= busy / 2.0:
            return _verdict(HOST_BUSY, 'the host\'s CPUs %s busy, %s of them with other work than this guest (its '
                                       'own cgroup %s, kernel threads %s)' % (
                                           _pct(busy), _pct(other), _pct(guest), _pct(cpu.get('kthread_pct') or 0.0)),
                            other, '%', host.get('name'))
    mine = set(host.get('guest_devices') or ())
    guest_bytes = _guest_bytes(obs, host)
    for d in host.get('devices') or []:
        moved = (d.get('read_bytes') or 0) + (d.get('write_bytes') or 0)
        other = moved - (guest_bytes if d['name'] in mine else 0)
        if (d.get('util_pct_mean') or 0) >= SATURATED_PCT and other >= moved / 2.0:
            share = ', %.0f %% of its bytes' % (100.0 * other / moved) if moved else ''
            return _verdict(HOST_BUSY, 'the host\'s %s %s busy with other work than this guest%s' % (
                d['name'], _pct(d['util_pct_mean']), share), d['util_pct_mean'], '%', d['name'])
    return None


def host_cost(rec, host=None):
    """The host-side cost of the layers under a guest or a DRBD primary, per GB the tool moved, beside
    the guest's throughput: the CPU seconds of the host's kernel threads in the window (loop and DRBD
    workers, writeback, jbd2, vhost: ``kernel_cpu_s_per_gb``) and the host's busy CPU outside the
    guest's own cgroup (``cpu_s_per_gb``: those and any other work; a DRBD peer, with no guest: all of
    it), and the guest's own cgroup there (``guest_cpu_s_per_gb``: for a KVM guest all of qemu, its
    vCPUs and I/O threads). {host, role, cpu_s, kernel_cpu_s, gb, cpu_s_per_gb, kernel_cpu_s_per_gb,
    guest_cpu_s_per_gb, guest_mbs, outside_guest}, or None (no host observed, or the tool's bytes unknown)."""
    obs = rec.get('observed') if isinstance(rec.get('observed'), dict) else {}
    host = host if host is not None else obs.get('host')
    if not isinstance(host, dict):
        return None
    cpu = host.get('cpu') or {}
    if cpu.get('busy_pct_mean') is None or not host.get('window_s'):
        return None
    w, r = _figures(rec)
    moved = w[0] if w else (r[0] if r else None)
    if not moved:
        return None
    gb = moved / 1e9
    busy_s = cpu['busy_pct_mean'] / 100.0 * (cpu.get('cores') or 1) * host['window_s']
    cpu_s = max(0.0, busy_s - (cpu.get('guest_cpu_s') or 0.0))
    window = obs.get('window_s') or host['window_s']
    out = {'host': host.get('name'), 'role': host.get('role'), 'cpu_s': round(cpu_s, 3), 'gb': round(gb, 4),
           'cpu_s_per_gb': round(cpu_s / gb, 3), 'guest_mbs': round(moved / 1e6 / window, 2),
           'outside_guest': cpu.get('guest_cpu_s') is not None}
    if cpu.get('kthread_cpu_s') is not None:
        out.update(kernel_cpu_s=cpu['kthread_cpu_s'], kernel_cpu_s_per_gb=round(cpu['kthread_cpu_s'] / gb, 3))
    if cpu.get('guest_cpu_s') is not None:
        # the guest's own cgroup on the host: for a KVM guest all of qemu (vCPUs and I/O threads)
        out['guest_cpu_s_per_gb'] = round(cpu['guest_cpu_s'] / gb, 3)
    return out


def run_limiter(rec):
    """The record's limited_by (what the target decided), else decided from its observation."""
    if isinstance(rec.get('limited_by'), dict):
        return rec['limited_by']
    return limited_by(rec.get('observed')) if isinstance(rec.get('observed'), dict) else None


def evidence_rates(runs):
    """[{code, title, flagged, runs, fraction}] of the evidence codes over the runs that were
    observed (the shape of traps.trap_rates); [] when no run was."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.traps import title
    observed = [r for r in runs if isinstance(r.get('observed'), dict)]
    if not observed:
        return []
    codes = [set(v['code'] for v in run_verdicts(r)) for r in observed]
    return [dict(code=code, title=title(code), flagged=sum(1 for c in codes if code in c), runs=len(observed),
                 fraction=round(sum(1 for c in codes if code in c) / len(observed), 4) if observed else None)
            for code in EVIDENCE_CODES]


# The evidence columns of results.csv (one value each per record; empty without an observation).
CSV_COLUMNS = ('limited_by', 'limited_by_pct', 'device', 'device_util_pct', 'bytes_per_byte_written',
               'bytes_per_byte_read', 'narrowest_device', 'narrowest_bytes_per_byte', 'cpu_busy_pct', 'tool_cpu_pct',
               'steal_pct', 'evidence', 'host_cpu_s_per_gb')


def record_figures(rec):
    """The CSV_COLUMNS values of one record (None where it has no such figure)."""
    obs = rec.get('observed') if isinstance(rec.get('observed'), dict) else None
    if not obs:
        return (None,) * len(CSV_COLUMNS)
    lim = run_limiter(rec) or {}
    dev = _first_device(obs) or {}
    w, r = _figures(rec)
    cpu = obs.get('cpu') or {}
    judged = judge(obs, 'write', w[0]) if w else judge(obs, 'read', r[0]) if r else None
    low = judged['narrowest'] if judged else {}
    return ('%s %s' % (lim['resource'], lim['name']) if lim else None, lim.get('figure'), dev.get('name'),
            dev.get('util_pct_mean'), round(w[2] / float(w[0]), 4) if w else None,
            round(r[2] / float(r[0]), 4) if r else None,
            ('%s:%s' % (low['where'], low['name']) if low.get('where') not in (None, 'target')
             else low.get('name')), round(judged['ratio'], 4) if judged else None,
            cpu.get('busy_pct_mean'), cpu.get('tool_cpu_pct'),
            cpu.get('steal_pct'), ' '.join(v['code'] for v in run_verdicts(rec)) or None,
            (host_cost(rec) or {}).get('cpu_s_per_gb'))


# ---- one cell ----------------------------------------------------------------------------------

def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def cell_limiter(records):
    """The limiter most observed runs agree on: {resource, name, figure (median over those runs),
    unit, saturated, runs (agreeing), of (observed runs)}, or None."""
    found = [l for l in (run_limiter(r) for r in records) if l]
    if not found:
        return None
    counts = {}
    for l in found:
        counts.setdefault((l['resource'], l['name']), []).append(l)
    key = max(counts, key=lambda k: (len(counts[k]), sum(1 for l in counts[k] if l.get('saturated'))))
    agree = counts[key]
    figure = _median([l['figure'] for l in agree])
    return {'resource': key[0], 'name': key[1], 'figure': round(figure, 1), 'unit': agree[0].get('unit', '%'),
            'saturated': figure >= SATURATED_PCT, 'runs': len(agree), 'of': len(found)}


def _bytes_line(records, kind):
    """The median bytes per byte of the tool on the first device (`ratio`, `device`) and, where a run's
    bytes went through more than one layer, on each of them (`layers`: [{name, where, ratio}], top
    down, layerpath.judge)."""
    if kind == 'link':
        figs = [link_figures(r) for r in records]
    else:
        figs = [_figures(r)[0 if kind == 'write' else 1] for r in records]
    pairs = [(r, f) for r, f in zip(records, figs) if f]
    if not pairs:
        return None
    ratio = _median([reached / float(total) for _r, (total, _dev, reached) in pairs])
    if kind == 'link':
        return {'ratio': round(ratio, 4), 'interface': pairs[0][1][1], 'runs': len(pairs)}
    out = {'ratio': round(ratio, 4), 'device': pairs[0][1][1]['name'], 'runs': len(pairs)}
    per_layer = {}
    for r, (total, _dev, _reached) in pairs:
        for layer in (judge(r['observed'], kind, total) or {}).get('layers') or []:
            per_layer.setdefault((layer['name'], layer['where']), []).append(layer['of_tool'])
    if len(per_layer) > 1:
        out['layers'] = [{'name': name, 'where': where, 'ratio': round(_median(v), 4)}
                         for (name, where), v in per_layer.items()]
    return out


def _ratio_text(fig, kind):
    """'1.00 byte on loop0, 0.11 on vda per byte written' (each layer's median bytes per byte)."""
    prep = 'on' if kind == 'write' else 'from'
    first = '%s %s %s %s' % (_fmt(fig['ratio']), 'byte' if round(fig['ratio'], 2) == 1 else 'bytes', prep,
                             fig['device'])
    below = ['%s %s %s%s' % (_fmt(l['ratio']), prep, 'the host\'s ' if l['where'] != 'target' else '', l['name'])
             for l in (fig.get('layers') or [])[1:]]
    return ', '.join([first] + below) + ' per byte %s' % ('written' if kind == 'write' else 'read')


def explain_cell(records):
    """The cell's evidence: {line, limiter, written, read, verdicts: [{code, message, runs, of}],
    observed: runs with an observation, of: runs, median_series: the series id of the median
    repetition}, and the cell flags [{code, message}] the verdicts make."""
    observed = [r for r in records if isinstance(r.get('observed'), dict)]
    if not observed:
        why = 'imported hand-run results: not observed' if records and all(_imported(r) for r in records) \
            else 'not observed (observation off, or records from before it)'
        return {'line': why, 'observed': 0, 'of': len(records)}, []
    limiter = cell_limiter(observed)
    if limiter and limiter['resource'] == 'cpu' and limiter['name'] == 'all cores':
        limiter['mostly_tool'] = _mostly_tool(observed)
    written, read = _bytes_line(observed, 'write'), _bytes_line(observed, 'read')
    link = _bytes_line(observed, 'link')
    per_code = {}
    for r in observed:
        for v in run_verdicts(r):
            per_code.setdefault(v['code'], []).append(v)
    verdicts, flags = [], []
    for code in EVIDENCE_CODES:
        fired = per_code.get(code)
        if not fired:
            continue
        figure = _median([v['figure'] for v in fired])
        message = _cell_message(code, fired, figure, len(observed))
        verdicts.append({'code': code, 'message': message, 'figure': round(figure, 4), 'unit': fired[0]['unit'],
                         'runs': len(fired), 'of': len(observed)})
        flags.append({'code': code, 'message': message})
    median = _median_run(observed)
    cost = cell_host_cost(observed)
    out = {'line': _line(limiter, written, read, per_code, len(observed), cost, link), 'limiter': limiter,
           'written': written, 'read': read, 'link': link, 'verdicts': verdicts, 'observed': len(observed), 'of': len(records),
           'host_cost': cost, 'median_series': median['observed'].get('series'), 'stack': stack_figures(median['observed'])}
    return out, flags


def _imported(rec):
    return not rec.get('cmd') and not rec.get('started')


def _cell_message(code, fired, figure, n):
    """The cell's message of a verdict: the median run's message with its figure, and in how many runs."""
    best = min(fired, key=lambda v: abs(v['figure'] - figure))
    return '%s (%d of %d observed runs)' % (best['message'], len(fired), n)


def cell_host_cost(records):
    """The median host-side cost over a cell's runs with one (host_cost), with how many had it, or None."""
    costs = [c for c in (host_cost(r) for r in records) if c]
    if not costs:
        return None
    out = {'host': costs[0]['host'], 'role': costs[0]['role'], 'outside_guest': costs[0]['outside_guest'],
           'cpu_s_per_gb': round(_median([c['cpu_s_per_gb'] for c in costs]), 3),
           'guest_mbs': round(_median([c['guest_mbs'] for c in costs]), 2), 'runs': len(costs)}
    for key in ('kernel_cpu_s_per_gb', 'guest_cpu_s_per_gb'):
        values = [c[key] for c in costs if c.get(key) is not None]
        if values:
            out[key] = round(_median(values), 3)
    return out


def _cost_text(cost):
    who = 'outside the guest' if cost['outside_guest'] else 'on that host'
    inside = []
    if cost.get('kernel_cpu_s_per_gb') is not None:
        inside.append('%s in its kernel threads' % _fmt(cost['kernel_cpu_s_per_gb']))
    if cost.get('guest_cpu_s_per_gb') is not None:
        inside.append('the guest itself %s' % _fmt(cost['guest_cpu_s_per_gb']))
    kernel = ' (%s)' % '; '.join(inside) if inside else ''
    return 'host %s: %s CPU s per GB moved %s%s, guest %s MB/s' % (
        cost['host'], _fmt(cost['cpu_s_per_gb']), who, kernel, _fmt(cost['guest_mbs'], 1))


def _line(limiter, written, read, per_code, n, cost=None, link=None):
    parts = []
    if limiter:
        parts.append(_limiter_text(limiter))
    if written:
        text = _ratio_text(written, 'write')
        if WRITES_ELIDED in per_code:
            text += ': writes elided' + _at(per_code[WRITES_ELIDED], written)
        elif NOT_DURABLE in per_code:
            text += ': not durable' + _at(per_code[NOT_DURABLE], written)
        elif WRITE_AMPLIFIED in per_code:
            text += ': write amplified'
        parts.append(text)
    if link:
        parts.append('%s %s over %s toward the DRBD peer per byte written' % (
            _fmt(link['ratio']), 'byte' if round(link['ratio'], 2) == 1 else 'bytes', link['interface']))
    if read:
        text = _ratio_text(read, 'read')
        if SERVED_FROM_CACHE in per_code:
            text += ': served from cache' + _at(per_code[SERVED_FROM_CACHE], read)
        parts.append(text)
    if STEAL in per_code:
        parts.append('steal %s' % _pct(_median([v['figure'] for v in per_code[STEAL]])))
    if HOST_BUSY in per_code:
        parts.append('host busy')
    if cost:
        parts.append(_cost_text(cost))
    return '; '.join(parts) if parts else 'observed, no figures'


def _at(fired, fig):
    """' at <layer>' for verdicts the bytes' path decided, where it is not the first device (the layer
    most of the runs named), else ''."""
    names = [v.get('name') for v in fired if v.get('name')]
    if not names:
        return ''
    name = max(set(names), key=names.count)
    return '' if name == fig.get('device') and not fig.get('layers') else ' at %s' % name


def _limiter_text(l):
    agree = '' if l['runs'] == l['of'] else ' (%d of %d runs)' % (l['runs'], l['of'])
    fig = _pct(l['figure'])
    if l['resource'] == 'cpu' and l['name'] == 'tool':
        what = 'the tool\'s CPU, %s of a core' % fig
    elif l['resource'] == 'cpu':
        what = 'all cores, %s busy%s' % (fig, '' if l.get('mostly_tool') else
                                         ' (mostly other work than the tool: kernel threads or other processes)')
    elif l['resource'] == 'link':
        what = '%s, %s of its rate' % (l['name'], fig)
    else:
        what = '%s, %s busy' % (l['name'], fig)
    if not l['saturated']:
        return 'nothing saturated (busiest: %s)%s' % (what, agree)
    return 'limited by %s%s' % (what, agree)


def _mostly_tool(records):
    """Whether the tool itself kept the cores busy in most observed runs."""
    votes = []
    for r in records:
        cpu = r['observed'].get('cpu') or {}
        if cpu.get('tool_cpu_pct') is not None and cpu.get('busy_pct_mean'):
            votes.append(cpu['tool_cpu_pct'] / float(cpu.get('cores') or 1) >= cpu['busy_pct_mean'] / 2.0)
    return bool(votes) and sum(votes) * 2 > len(votes)


def _median_run(records):
    """The median repetition (by duration) of the observed records."""
    ordered = sorted(records, key=lambda r: (r.get('duration_s') is None, r.get('duration_s') or 0))
    return ordered[(len(ordered) - 1) // 2]


def stack_figures(observed):
    """The layer stack of one run with each block device's bytes and utilisation during its window:
    [{layer, name, kind, above, read_bytes, write_bytes, util_pct_mean}] (bytes only for devices), then
    a hypervisor's devices under a guest's disk (layerpath.layers_of), each with ``host``."""
    devices = dict((d['name'], d) for d in observed.get('devices') or [])
    out = []
    for layer in observed.get('stack') or []:
        entry = dict((k, layer.get(k)) for k in ('layer', 'name', 'kind', 'above'))
        for extra in ('fstype', 'backing_file', 'offset'):
            if layer.get(extra) not in (None, 0, ''):
                entry[extra] = layer[extra]
        d = devices.get(layer['name']) if layer.get('kind') not in ('path', 'file', 'directory', 'filesystem') else None
        if d:
            entry.update(read_bytes=d['read_bytes'], write_bytes=d['write_bytes'], util_pct_mean=d.get('util_pct_mean'))
        out.append(entry)
    host = observed.get('host') if isinstance(observed.get('host'), dict) else {}
    util = dict((d.get('name'), d.get('util_pct_mean')) for d in host.get('devices') or [] if isinstance(d, dict))
    depth = max([e['layer'] for e in out if isinstance(e.get('layer'), int)] or [-1])
    above = out[-1]['name'] if out else None
    for layer in [l for l in layers_of(observed) if l['where'] != 'target']:
        depth += 1
        out.append({'layer': depth, 'name': layer['name'], 'kind': layer['kind'] or 'disk', 'above': above,
                    'host': layer['where'], 'read_bytes': layer['read_bytes'], 'write_bytes': layer['write_bytes'],
                    'util_pct_mean': util.get(layer['name'])})
        above = layer['name']
    return out


def evidence_denies_elision(explained):
    """True when a cell's observed runs show its written bytes reached the device (the median run at
    least half of them): the inference trap zero_elision (zeros faster than real data) is then no
    storage trick, and the evidence decides."""
    written = (explained or {}).get('written')
    return bool(written) and written['ratio'] >= ELIDED_BELOW


def merge_flags(flags, new):
    """Add the evidence flags to a cell's flags; one flag per code (bonnie++'s per-char cpu_bound
    and the observed one become one message)."""
    by_code = dict((f['code'], f) for f in flags)
    for f in new:
        if f['code'] in by_code:
            by_code[f['code']]['message'] += '; observed: %s' % f['message']
        else:
            flags.append(f)
            by_code[f['code']] = f
    return flags
