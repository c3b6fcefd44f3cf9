# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A metric over time: the stored runs of a matrix (or run label) as a series, the points where it
changed, and what in the environment changed there ("since when is it slower, and why?").

The series: for one cell, benchmark and metric, each stored run that measured it (oldest first, by
start) gives one point - the mean of its repetitions, their 95% confidence interval and n
(stats.summarize). ``index`` counts the series from 0.

Change points: **E-divisive means** (Matteson, D. S. and James, N. A., "A Nonparametric Approach
for Multiple Change Point Analysis of Multivariate Data", JASA 109 (505), 2014), the method
MongoDB runs on its CI performance results (Daly et al., "The Use of Change Point Detection to
Identify Software Performance Regressions in a Continuous Integration System", ICPE 2020), in
the form of their implementation (the signal-processing-algorithms package, e_divisive): over
the per-run means, the split tau of a window that maximises the energy statistic

    t(tau) = tau (n - tau) / n * (2/(tau (n-tau)) S_xy - 2/tau^2 S_x - 2/(n-tau)^2 S_y)

(S_x, S_y: sums of |a - b| over pairs within the left and the right part, S_xy across them) is a
candidate; it is a change point when a permutation test finds it significant (the largest
statistic of the windows' values shuffled reaches it in at most ``pvalue`` x (permutations + 1)
of ``permutations`` shuffles); the windows are then split there and the search goes on until no
candidate is significant. Here the sums come from two Fenwick trees over the values' ranks, so a
window costs O(n log n) instead of a distance matrix's O(n^2); the permutations come from a
seeded generator (the same series gives the same change points every time), and the test stops
as soon as its outcome is decided. tests/unit/plugins/plugin_utils/test_trend.py checks the
change points against the reference implementation's on published and generated series.

At each change point: its run, the change in percent (the mean of the segment it starts against
the mean of the segment before it) and the environment keys whose values differ between the run
before and the run at the change point (the stored sysinfo of the cell - kernel, mount options,
file system, ... - and the tool's and the collection's versions).
"""

from __future__ import annotations

import hashlib
import random
import re

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import delta_pct, summarize
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import ENV_VOLATILE, flatten_environment

PVALUE = 0.05
PERMUTATIONS = 100
SEED = 1234
METHOD = dict(name='e-divisive means', reference='Matteson and James 2014; Daly et al. 2020 (MongoDB)',
              pvalue=PVALUE, permutations=PERMUTATIONS, seed=SEED)


class TrendError(ValueError):
    """A trend that cannot be drawn (nothing selected, no such metric); the message says why."""


# -- E-divisive means ------------------------------------------------------------------------------

class _Fenwick(object):
    """Counts and sums of the values present, by rank: sum |v - w| over them in O(log n)."""

    def __init__(self, size):
        self.n = size
        self.count = [0] * (size + 1)
        self.total = [0.0] * (size + 1)
        self.all_count = 0
        self.all_total = 0.0

    def add(self, rank, value, sign):
        self.all_count += sign
        self.all_total += sign * value
        i = rank + 1
        while i <= self.n:
            self.count[i] += sign
            self.total[i] += sign * value
            i += i & -i

    def distance_sum(self, rank, value):
        """sum |value - w| over the values present, `rank` being value's place in the sort order."""
        c, t = 0, 0.0
        i = rank + 1
        while i > 0:
            c += self.count[i]
            t += self.total[i]
            i -= i & -i
        return (c * value - t) + ((self.all_total - t) - (self.all_count - c) * value)


def _t_stats(values):
    """t(tau) for tau = 0 .. n-1 of one window (see the module docstring)."""
    n = len(values)
    order = sorted(range(n), key=lambda i: values[i])
    rank = [0] * n
    for r, i in enumerate(order):
        rank[i] = r
    left, right = _Fenwick(n), _Fenwick(n)
    for i, v in enumerate(values):
        right.add(rank[i], v, 1)
    s = [values[i] for i in order]
    y = sum(s[k] * (2 * k - n + 1) for k in range(n))
    x = xy = 0.0
    out = [0.0] * n
    for tau in range(n):
        m = n - tau
        if tau and m:
            e = 2.0 * xy / (tau * m) - 2.0 * x / (tau * tau) - 2.0 * y / (m * m)
            out[tau] = tau * m / float(n) * e
        v, r = values[tau], rank[tau]
        column = left.distance_sum(r, v)
        row = right.distance_sum(r, v)
        xy += row - column
        x += column
        y -= row
        right.add(r, v, -1)
        left.add(r, v, 1)
    return out


def _best(values):
    stats = _t_stats(values)
    idx = max(range(len(stats)), key=lambda i: stats[i])
    return idx, stats[idx]


def e_divisive(values, pvalue=PVALUE, permutations=PERMUTATIONS, seed=SEED):
    """The change points of a series (indices where a new segment starts), in the order found."""
    values = [float(v) for v in values]
    rng = random.Random(seed)
    points, memo = [], {}
    while True:
        bounds = [0] + sorted(points) + [len(values)]
        windows = list(zip(bounds, bounds[1:]))
        candidates = []
        for a, b in windows:
            if (a, b) not in memo:
                idx, stat = _best(values[a:b]) if b - a > 1 else (0, 0.0)
                memo[(a, b)] = (idx + a, stat)
            candidates.append(memo[(a, b)])
        point, stat = max(candidates, key=lambda c: c[1])
        allowed = pvalue * (permutations + 1)
        better = 0
        for _permutation in range(permutations):
            best = 0.0
            for a, b in windows:
                if b - a > 1:
                    shuffled = values[a:b]
                    rng.shuffle(shuffled)
                    best = max(best, _best(shuffled)[1])
            if best >= stat:
                better += 1
                if better > allowed:
                    break  # decided: not significant
        if better > allowed or point in points or point == 0:
            return points
        points.append(point)


# -- the series and its change points ----------------------------------------------------------------

def series_of(values_by_run, run_ids):
    """The series points, oldest first: runs with at least one measured value."""
    out = []
    for run_id in run_ids:
        if run_id not in values_by_run:
            continue
        started, values, _unit, _better = values_by_run[run_id]
        s = summarize(values)
        if not s['n']:
            continue
        out.append(dict(run_id=run_id, started=started, mean=s['mean'], ci95=s['ci95'], n=s['n']))
    return out


def _segment_mean(series, a, b):
    means = [p['mean'] for p in series[a:b]]
    return sum(means) / len(means) if means else None


def changed_environment(before_doc, after_doc, benchmark, cell):
    """{key: [before, after]} of the environment keys that differ between two runs for one cell:
    its stored sysinfo (flattened like the report's environment table), the tool's version(s) in
    its records and the collection's version."""
    def flat(doc):
        out = {}
        for key, env in sorted((doc.get('environment') or {}).items()):
            if isinstance(env, dict) and ((env.get('labels') or {}).get('cell') or env.get('host') or key) == cell:
                out.update(flatten_environment(env))
        versions = sorted(set(str(r.get('tool_version')) for r in doc.get('records') or []
                              if isinstance(r, dict) and (r.get('labels') or {}).get('cell') == cell
                              and (r.get('labels') or {}).get('benchmark') == benchmark and r.get('tool_version')))
        if versions:
            out['tool_version'] = ', '.join(versions)
        if doc.get('collection_version'):
            out['collection_version'] = str(doc['collection_version'])
        return out
    a, b = flat(before_doc), flat(after_doc)
    return dict((k, [a.get(k), b.get(k)]) for k in sorted(set(a) | set(b))
                if k not in ENV_VOLATILE and a.get(k) != b.get(k))


def change_points(series, load_doc, benchmark, cell, pvalue=PVALUE, permutations=PERMUTATIONS, seed=SEED):
    """The change points of a series, in series order; load_doc(run_id) gives a stored document
    (only the runs on either side of a change point are loaded)."""
    found = sorted(e_divisive([p['mean'] for p in series], pvalue, permutations, seed)) if len(series) > 2 else []
    bounds = [0] + found + [len(series)]
    out = []
    for k, index in enumerate(found):
        before = _segment_mean(series, bounds[k], index)
        after = _segment_mean(series, index, bounds[k + 2])
        out.append(dict(index=index, run_id=series[index]['run_id'], delta_pct=delta_pct(after, before),
                        changed_environment=changed_environment(load_doc(series[index - 1]['run_id']),
                                                                load_doc(series[index]['run_id']), benchmark, cell)))
    return out


def trend_id(query):
    """The run id of a trend report: trend-<benchmark>-<cell>-<metric>, made a valid run id, with a
    digest of the whole selection (two selections never share a directory)."""
    key = '|'.join('%s=%s' % (k, query.get(k)) for k in ('matrix', 'label', 'benchmark', 'cell', 'metric'))
    digest = hashlib.sha256(key.encode('utf-8')).hexdigest()[:10]
    slug = re.sub(r'[^A-Za-z0-9_.-]+', '_', '%s-%s-%s' % (query['benchmark'], query['cell'], query['metric']))
    return 'trend-%s-%s' % (slug.strip('._-')[:100] or 'x', digest)


def trend_document(store, benchmark, cell, metric, matrix=None, label=None, meta=None, pvalue=PVALUE,
                   permutations=PERMUTATIONS):
    """The trend's results document: meta (run_id, started ... like a run's), ``trend``
    ({series, change_points}: the contract) and ``trend_query`` (what was selected, the unit, the
    direction and the method)."""
    if not (matrix or label):
        raise TrendError('name the runs: trend_matrix (a matrix name) or trend_label (a run label)')
    run_ids = store.run_ids(label=label, matrix=matrix)
    what = ('matrix %r' % matrix) if matrix else ('label %r' % label)
    if matrix and label:
        what = 'matrix %r with label %r' % (matrix, label)
    if not run_ids:
        raise TrendError('no stored run of %s in %s' % (what, store.location))
    values = store.metric_values(run_ids, benchmark, cell, metric)
    if not values:
        known = store.series_names(run_ids)
        raise TrendError('no run of %s in %s measured %s of benchmark %r in cell %r. Stored there: %s' % (
            what, store.location, metric, benchmark, cell,
            '; '.join('%s / %s / %s' % k for k in known[:20]) or 'no metric'))
    series = series_of(values, run_ids)
    docs = {}

    def load_doc(run_id):
        if run_id not in docs:
            docs[run_id] = store.load(run_id)
        return docs[run_id]
    points = change_points(series, load_doc, benchmark, cell, pvalue, permutations)
    any_run = next(iter(values.values()))
    query = dict(matrix=matrix, label=label, benchmark=benchmark, cell=cell, metric=metric, unit=any_run[2],
                 better=any_run[3], runs_selected=len(run_ids), method=dict(METHOD, pvalue=pvalue,
                                                                            permutations=permutations))
    doc = dict(meta or {})
    doc.update(run_id=trend_id(query), matrix=matrix or label, status='complete', invalid=[], failed=[],
               trend=dict(series=series, change_points=points), trend_query=query)
    return doc
