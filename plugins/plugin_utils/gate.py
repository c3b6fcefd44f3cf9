# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The variance gate: which (benchmark, cell) needs another run. Pure functions.

A gated benchmark (max_cv and max_repetitions in its methodology) is repeated in a cell until the
coefficient of variation of its primary metric is at most max_cv, or max_repetitions counted runs
exist. Warm-up runs never count.
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.stats import summarize
from ansible_collections.benchlab.bench.plugins.plugin_utils.measurements import measurements
from ansible_collections.benchlab.bench.plugins.plugin_utils.grouping import benchmark_of, counted, primary_metric


def _series_cv(records):
    """(metric, cv) of one series of records (same test and sub-test labels)."""
    names = []
    for r in records:
        names.extend(m for m in r['metrics'] if m not in names)
    metric = primary_metric(names)
    if not metric:
        return None, None
    s = summarize([r['metrics'][metric]['value'] for r in records if metric in r['metrics']])
    return metric, (s['cv'] if s['n'] >= 2 else None)


def gate_status(records, max_cv, max_repetitions):
    """{n, cv, met, capped} for the counted records of one (benchmark, cell).

    A run may give several series (compress and decompress, dbench client counts): the gate is
    met when every series' CV is; n is the number of runs (the largest series), cv the worst CV."""
    series = {}
    for r in measurements(records):     # n counts repetitions, never the workers of one
        if counted(r):
            series.setdefault(benchmark_of(r), []).append(r)
    n = max([len(v) for v in series.values()] or [0])
    worst, metric, met = None, None, bool(series)
    for recs in series.values():
        m, cv = _series_cv(recs)
        metric = metric or m
        if cv is None or cv > max_cv:
            met = False
        if cv is not None and (worst is None or cv > worst):
            worst = cv
    return {'metric': metric, 'n': n, 'cv': worst, 'max_cv': max_cv,
            'max_repetitions': max_repetitions, 'met': met, 'capped': (not met) and n >= max_repetitions}


def next_runs(plan, records, host):
    """The runs to add on `host` now: one more repetition of every gated (benchmark, cell) of this
    host whose gate is neither met nor capped."""
    gates = plan.get('gates') or {}
    if not gates:
        return []
    last = {}
    for run in plan['runs']:
        if run['host'] == host and run['benchmark'] in gates:
            last[(run['benchmark'], run['cell'])] = run
    extra = []
    for (bench, cell), run in sorted(last.items(), key=lambda kv: plan['runs'].index(kv[1])):
        mine = [r for r in records if (r.get('labels') or {}).get('benchmark') == bench
                and (r.get('labels') or {}).get('cell') == cell]
        status = gate_status(mine, gates[bench]['max_cv'], gates[bench]['max_repetitions'])
        if status['met'] or status['capped']:
            continue
        cooldown = next(b['methodology']['cooldown_s'] for b in plan['benchmarks'] if b['name'] == bench)
        guards = dict(run['guards'], warmup=False, cooldown_s=cooldown)
        extra.append(dict(run, repetition=status['n'] + 1, guards=guards, gate=True))
    return extra
