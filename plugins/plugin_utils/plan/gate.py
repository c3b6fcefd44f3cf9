# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The variance gate: which (benchmark, cell) needs another run. Pure functions.

A gated benchmark (max_repetitions with max_cv, target_ci_pct or both in its methodology) is
repeated in a cell until its primary metric is as steady and as precise as asked - the coefficient
of variation at most max_cv, the half-width of the 95% confidence interval of the mean at most
target_ci_pct percent of the mean (the precision target) - or max_repetitions counted runs exist.
Warm-up runs never count.
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import summarize
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.measurements import measurements
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.grouping import benchmark_of, counted, primary_metric


def _series_spread(records):
    """(metric, cv, ci_pct) of one series of records (same test and sub-test labels): the primary
    metric's coefficient of variation and the half-width of its mean's 95% CI in % of the mean
    (None below two values, or with a mean of 0)."""
    names = []
    for r in records:
        names.extend(m for m in r['metrics'] if m not in names)
    metric = primary_metric(names)
    if not metric:
        return None, None, None
    s = summarize([r['metrics'][metric]['value'] for r in records if metric in r['metrics']])
    if s['n'] < 2:
        return metric, None, None
    ci_pct = (s['ci95'][1] - s['ci95'][0]) / 2.0 / abs(s['mean']) * 100.0 if s['mean'] else None
    return metric, s['cv'], ci_pct


def _worst(a, b):
    return b if a is None or (b is not None and b > a) else a


def gate_status(records, max_cv, max_repetitions, target_ci_pct=None):
    """{metric, n, cv, max_cv, ci_pct, target_ci_pct, precise, met, capped} for the counted records of
    one (benchmark, cell). max_cv or target_ci_pct may be None (not asked).

    A run may give several series (compress and decompress, dbench client counts): the gate is met
    when every series meets what was asked; n is the number of runs (the largest series), cv and
    ci_pct the worst series'. precise: the precision target is met (None without one)."""
    series = {}
    for r in measurements(records):     # n counts repetitions, never the workers of one
        if counted(r):
            series.setdefault(benchmark_of(r), []).append(r)
    n = max([len(v) for v in series.values()] or [0])
    worst_cv, worst_ci, metric = None, None, None
    steady = precise = bool(series)
    for recs in series.values():
        m, cv, ci_pct = _series_spread(recs)
        metric = metric or m
        if max_cv is not None and (cv is None or cv > max_cv):
            steady = False
        if target_ci_pct is not None and (ci_pct is None or ci_pct > target_ci_pct):
            precise = False
        worst_cv, worst_ci = _worst(worst_cv, cv), _worst(worst_ci, ci_pct)
    met = steady and precise
    return {'metric': metric, 'n': n, 'cv': worst_cv, 'max_cv': max_cv, 'ci_pct': worst_ci,
            'target_ci_pct': target_ci_pct, 'precise': None if target_ci_pct is None else precise,
            'max_repetitions': max_repetitions, 'met': met, 'capped': (not met) and n >= max_repetitions}


def plan_gate(methodology):
    """The plan's gate of a benchmark from its effective methodology: {max_cv and/or target_ci_pct,
    max_repetitions}, or None when it asks for neither max_cv nor target_ci_pct."""
    gate = dict((k, methodology[k]) for k in ('max_cv', 'target_ci_pct') if k in methodology)
    if not gate:
        return None
    gate['max_repetitions'] = methodology['max_repetitions']
    return gate


def status_of(records, gate):
    """gate_status for a plan's gate (plan_gate)."""
    return gate_status(records, gate.get('max_cv'), gate['max_repetitions'], gate.get('target_ci_pct'))


def next_runs(plan, records, host):
    """The runs to add on `host` now: one more repetition of every gated (benchmark, cell) of this
    host whose gate is neither met nor capped (interleaved: one round adds one run to each)."""
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
        status = status_of(mine, gates[bench])
        if status['met'] or status['capped']:
            continue
        cooldown = next(b['methodology']['cooldown_s'] for b in plan['benchmarks'] if b['name'] == bench)
        guards = dict(run['guards'], warmup=False, cooldown_s=cooldown)
        extra.append(dict(run, repetition=status['n'] + 1, guards=guards, gate=True))
    return extra
