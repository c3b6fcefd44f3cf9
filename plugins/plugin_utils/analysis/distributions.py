# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Latency as a distribution, and the spread of a network cell: the records' `distributions` merged
over a cell's repetitions. Pure functions.

A record may carry histograms (fio's completion latency per direction, merged over the run's
workers by the parser) and intervals (iperf3's throughput per reporting interval). Per cell:

- a histogram: the repetitions' histograms summed (fio's buckets are the same in every run), its
  percentiles p50/p90/p99/p99.9 (fio's own rule: the first bucket at which the running count reaches
  the percentile), and per percentile the mean and 95% CI of the repetitions' own percentiles (n =
  repetitions: how much the tail moves from run to run); plus the CDF of the merged histogram,
  thinned to at most CDF_POINTS points on a log scale, for the report's chart;
- intervals: the pooled interval throughputs' p10/p50/p90, min and max, and the coefficient of
  variation within a run (the mean over the repetitions of each run's own CV): how steady the link
  was inside a run, beside the spread between runs the table shows.

Records of one repetition (concurrent pairs) are one measurement: their histograms are summed and
their intervals added up interval by interval, as their throughputs are; pairs that did not run
together are left out, as the measurement itself is (measurements.py).
"""

from __future__ import annotations

import math

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import histogram_percentile, summarize
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.measurements import TOGETHER_MIN, run_key, together

PERCENTILES = (50.0, 90.0, 99.0, 99.9)
INTERVAL_PERCENTILES = (10.0, 50.0, 90.0)
CDF_POINTS = 120
_TO_MS = {'ns': 1e-6, 'us': 1e-3}


def percentile_name(pct):
    """99.9 -> 'p99.9', 50.0 -> 'p50'."""
    return 'p%s' % ('%g' % pct)


def _repetitions(records):
    """The records of one cell grouped into measurements (one per repetition), in order; a group of
    concurrent records that did not run together is left out."""
    groups, order = {}, []
    for i, r in enumerate(records):
        key = run_key(r) or ('record', i)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(r)
    out = []
    for key in order:
        recs = groups[key]
        if len(recs) > 1:
            tog = together(recs)
            if tog is not None and tog['fraction'] < TOGETHER_MIN:
                continue
        out.append(recs)
    return out


def _histogram(recs, name):
    """{bucket value in ms: count} of distribution `name` summed over records, or None."""
    merged = {}
    for r in recs:
        d = (r.get('distributions') or {}).get(name)
        if not d or d.get('kind') != 'histogram':
            continue
        scale = _TO_MS.get(d.get('unit'))
        if scale is None:
            continue
        for v, c in zip(d.get('values') or [], d.get('counts') or []):
            key = v * scale
            merged[key] = merged.get(key, 0) + c
    return merged or None


def _intervals(recs, name):
    """The interval values of distribution `name`: one record's, or concurrent records' added up
    interval by interval (as long as the shortest)."""
    series = [d.get('values') or [] for d in ((r.get('distributions') or {}).get(name) for r in recs)
              if d and d.get('kind') == 'intervals']
    if not series:
        return None
    if len(series) == 1:
        return list(series[0])
    return [sum(vals) for vals in zip(*series)]


def _names(records, kind):
    names = []
    for r in records:
        for name, d in (r.get('distributions') or {}).items():
            if isinstance(d, dict) and d.get('kind') == kind and name not in names:
                names.append(name)
    return names


def cdf_points(hist, points=CDF_POINTS):
    """[[value, cumulative fraction]] of a histogram {value: count}, at most `points` of them: every
    bucket when there are few, else the last bucket of each of `points` equal steps of log(value)."""
    items = sorted(hist.items())
    total = float(sum(c for _v, c in items))
    if not total:
        return []
    out, running = [], 0
    for v, c in items:
        running += c
        out.append([v, running / total])
    if len(out) <= points:
        return [[_round(v), round(f, 6)] for v, f in out]
    lo, hi = math.log(max(out[0][0], 1e-12)), math.log(max(out[-1][0], 1e-12))
    step = (hi - lo) / points or 1.0
    thin, last = [], None
    for v, f in out:
        slot = int((math.log(max(v, 1e-12)) - lo) / step)
        if thin and slot == last:
            thin[-1] = [v, f]
        else:
            thin.append([v, f])
        last = slot
    return [[_round(v), round(f, 6)] for v, f in thin]


def _round(v):
    return float('%.6g' % v)


def _stat(values):
    s = summarize(values)
    return dict(mean=s['mean'], ci95=s['ci95'], n=s['n'])


def histogram_summary(measured, name):
    """One histogram distribution of a cell over its repetitions (`measured`: lists of records, one
    per repetition); None when no repetition carries it."""
    per_rep = [h for h in (_histogram(recs, name) for recs in measured) if h]
    if not per_rep:
        return None
    merged = {}
    for h in per_rep:
        for v, c in h.items():
            merged[v] = merged.get(v, 0) + c
    percentiles = {}
    for pct in PERCENTILES:
        reps = [histogram_percentile(h, pct) for h in per_rep]
        percentiles[percentile_name(pct)] = dict(_stat(reps), merged=histogram_percentile(merged, pct))
    return dict(kind='histogram', unit='ms', samples=sum(merged.values()), repetitions=len(per_rep),
                percentiles=percentiles, cdf=cdf_points(merged))


def intervals_summary(measured, name):
    """One intervals distribution of a cell over its repetitions; None without one."""
    per_rep = [v for v in (_intervals(recs, name) for recs in measured) if v]
    if not per_rep:
        return None
    pooled = sorted(v for rep in per_rep for v in rep)
    cvs = [s['cv'] for s in (summarize(rep) for rep in per_rep) if s['cv'] is not None]

    def at(pct):
        pos = pct / 100.0 * (len(pooled) - 1)
        i = int(math.floor(pos))
        return pooled[i] + (pooled[min(i + 1, len(pooled) - 1)] - pooled[i]) * (pos - i)
    return dict(kind='intervals', unit='Mbit/s', intervals=len(pooled), repetitions=len(per_rep),
                percentiles=dict((percentile_name(p), at(p)) for p in INTERVAL_PERCENTILES),
                min=pooled[0], max=pooled[-1], cv_within_run=(sum(cvs) / len(cvs)) if cvs else None)


def cell_distributions(records):
    """{distribution name: its summary} of one cell's counted records, or None when none carries one."""
    if not any(r.get('distributions') for r in records):
        return None
    measured = _repetitions(records)
    out = {}
    for name in _names(records, 'histogram'):
        summary = histogram_summary(measured, name)
        if summary:
            out[name] = summary
    for name in _names(records, 'intervals'):
        summary = intervals_summary(measured, name)
        if summary:
            out[name] = summary
    return out or None
