# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two stored runs side by side, and the regression gate. Pure functions.

compare_runs(baseline_doc, candidate_doc, threshold) returns a results document the report
renderers draw like any run: every record of the baseline run gets the cell ``<cell> @ baseline``,
every record of the candidate run ``<cell> @ candidate``, and each table holds one cell of one
benchmark (``<benchmark> [<cell>]`` when the benchmark ran in several cells), so the baseline
column of each table is the same cell in the baseline run. The analysis (analysis.analyze) gives
per metric the Welch comparison (delta %, CI, p, significant); a candidate metric is a
**regression** when it is significantly worse than the baseline (p < alpha, in the direction its
``better`` says) *and* worse by more than ``threshold`` percent of the baseline mean. Regressions
are marked on the metric (``regression: true``), flagged on the cell (code ``regression``) and
listed in the document's ``comparison`` section with what was too little data to judge (fewer than
two repetitions on a side), what is missing from the candidate and what is new in it."""

from __future__ import annotations

import hashlib

from ansible_collections.benchlab.bench.plugins.module_utils.stats import ALPHA, compare
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.grouping import benchmark_of, cell_of

SIDES = ('baseline', 'candidate')
# The longest run id rundir.RUN_ID_RE accepts (a comparison's report goes to a run directory too).
MAX_RUN_ID = 128


class CompareError(ValueError):
    """Arguments or documents compare_runs cannot use; the message says which."""


def judge(candidate, baseline, better, threshold, alpha=ALPHA):
    """The regression verdict of one metric: candidate and baseline are lists of values or summaries.

    Returns stats.compare's result plus `regression` (True/False; None when there is too little data,
    i.e. fewer than two values on a side) and `beyond_threshold`."""
    if threshold is None or threshold < 0:
        raise CompareError('regression_threshold must be a number >= 0 (percent), got %r' % (threshold,))
    cmp = compare(candidate, baseline, better=better, alpha=alpha)
    delta = cmp['delta_pct']
    if delta is None:
        beyond = None
    else:
        beyond = (-delta if better == 'higher' else delta) > threshold
    if cmp['significant'] is None:
        regression = None
    else:
        regression = bool(cmp['worse'] and beyond)
    cmp.update(regression=regression, beyond_threshold=beyond, threshold_pct=float(threshold))
    return cmp


def side_cell(cell, side):
    return '%s @ %s' % (cell, side)


def _table_key(rec):
    bench, series = benchmark_of(rec)
    return bench if bench is not None else series[0]


def _relabel(doc, side, multi):
    out = []
    for rec in doc.get('records') or []:
        key, cell = _table_key(rec), cell_of(rec)
        labels = dict(rec.get('labels') or {})
        labels.update(benchmark=('%s [%s]' % (key, cell)) if key in multi else key, cell=side_cell(cell, side),
                      run=doc.get('run_id'))
        # step numbers belong to one run's schedule: two runs' step 0 never ran together
        out.append(dict(((k, v) for k, v in rec.items() if k != 'step'), labels=labels))
    return out


def _relabel_env(doc, side):
    out = {}
    for key, env in (doc.get('environment') or {}).items():
        if not isinstance(env, dict):
            continue
        labels = dict(env.get('labels') or {})
        labels.update(cell=side_cell(labels.get('cell') or env.get('host') or key, side), run=doc.get('run_id'))
        out['%s/%s' % (side, key)] = dict(env, labels=labels)
    return out


def _run_info(doc, label=None):
    info = dict((k, doc.get(k)) for k in ('run_id', 'matrix', 'started', 'finished', 'user', 'inventory', 'status',
                                          'collection_version'))
    info['label'] = label
    return info


def compare_runs(baseline_doc, candidate_doc, threshold=5.0, metrics=None, alpha=ALPHA, labels=None):
    """The comparison results document of two stored runs (see the module docstring).

    metrics: metric names the gate judges (all by default); labels: {side: run label} for the
    header."""
    for side, doc in zip(SIDES, (baseline_doc, candidate_doc)):
        if not isinstance(doc, dict) or not doc.get('run_id'):
            raise CompareError('the %s run is not a results document with a run_id' % side)
    if threshold is None or isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or threshold < 0:
        raise CompareError('regression_threshold must be a number >= 0 (percent), got %r' % (threshold,))
    docs = dict(zip(SIDES, (baseline_doc, candidate_doc)))
    records, environment, plan = _merged(docs)
    analysis = analyze(records, plan, environment)
    wanted = set(metrics) if metrics else None
    found = dict(regressions=[], too_little_data=[], missing=[], new=[])
    for b in analysis['benchmarks']:
        _judge_benchmark(b, wanted, threshold, alpha, found)
    found['regressions'].sort(key=lambda r: -(r['delta_pct'] if r['better'] == 'lower' else -r['delta_pct']))
    comparison = dict(baseline=_run_info(baseline_doc, (labels or {}).get('baseline')),
                      candidate=_run_info(candidate_doc, (labels or {}).get('candidate')),
                      regression_threshold=float(threshold), alpha=alpha, metrics=sorted(wanted) if wanted else None,
                      **found)
    tagged = []
    for side in SIDES:
        for item in docs[side].get('failed') or []:
            tagged.append(dict(item, task='%s run %s: %s' % (side, docs[side]['run_id'], item.get('task', ''))))
    return dict(run_id=comparison_id(baseline_doc['run_id'], candidate_doc['run_id']),
                started=candidate_doc.get('started'), finished=candidate_doc.get('finished'),
                user=candidate_doc.get('user'), inventory=candidate_doc.get('inventory'), playbook='compare.yml',
                matrix=_matrix_title(baseline_doc, candidate_doc), collection_version=candidate_doc.get('collection_version'),
                status='complete', invalid=list(baseline_doc.get('invalid') or []) + list(candidate_doc.get('invalid') or []),
                failed=tagged, records=records, environment=environment, plan=plan, analysis=analysis,
                comparison=comparison)


def _merged(docs):
    """(records, environment, plan) of both runs, each cell renamed '<cell> @ <side>'."""
    cells_of = {}
    order = []
    for side in SIDES:
        for rec in docs[side].get('records') or []:
            key, cell = _table_key(rec), cell_of(rec)
            cells_of.setdefault(key, set()).add(cell)
            if cell not in order:
                order.append(cell)
    multi = set(k for k, cells in cells_of.items() if len(cells) > 1)
    records = _relabel(docs['baseline'], 'baseline', multi) + _relabel(docs['candidate'], 'candidate', multi)
    environment = dict(_relabel_env(docs['baseline'], 'baseline'), **_relabel_env(docs['candidate'], 'candidate'))
    # A faster candidate is an improvement here, not the "faster than its baseline" trap.
    plan_cells = [dict(name=side_cell(c, side), labels=dict(run=docs[side]['run_id']), expected_faster=True)
                  for c in order for side in SIDES]
    plan = dict(name='compare %s vs %s' % (docs['candidate']['run_id'], docs['baseline']['run_id']), baseline=None,
                cells=plan_cells, gates={}, compare=True)
    return records, environment, plan


def _judge_benchmark(b, wanted, threshold, alpha, found):
    """Judge one benchmark's candidate cell against its baseline cell; appends to found's lists."""
    base = next((c for c in b['cells'] if c['cell'].endswith(' @ baseline')), None)
    cand = next((c for c in b['cells'] if c['cell'].endswith(' @ candidate')), None)
    where = dict(benchmark=b['name'], cell=(base or cand)['cell'].rsplit(' @ ', 1)[0])
    if cand is None or base is None:
        found['missing' if cand is None else 'new'].append(
            dict(where, reason='not in the candidate run' if cand is None else 'not in the baseline run'))
        return
    b['regressions'] = []
    for m in b['metrics']:
        s, ref = cand['metrics'].get(m), base['metrics'].get(m)
        if s is None or ref is None:
            if ref is not None:
                found['missing'].append(dict(where, metric=m, reason='metric not in the candidate run'))
            continue
        s['regression'] = None
        if wanted is not None and m not in wanted:
            continue
        if not s['n'] or not ref['n']:
            found['too_little_data'].append(dict(where, metric=m, reason='no measured value (too fast?)'))
            continue
        v = judge(s, ref, s['better'], threshold, alpha)
        s['regression'] = v['regression']
        if v['regression'] is None:
            found['too_little_data'].append(dict(where, metric=m, reason='too little data: n=%d vs n=%d (needs 2 on each '
                                                 'side)' % (s['n'], ref['n'])))
        elif v['regression']:
            item = dict(where, metric=m, unit=s['unit'], better=s['better'], baseline_mean=ref['mean'],
                        candidate_mean=s['mean'], baseline_n=ref['n'], candidate_n=s['n'], delta_pct=v['delta_pct'],
                        ci_pct=v['ci_pct'], p=v['p'], threshold_pct=float(threshold))
            found['regressions'].append(item)
            b['regressions'].append(m)
            cand['flags'].append(dict(code='regression', message=describe(item)))


def comparison_id(baseline_id, candidate_id):
    """The run id of a comparison: 'compare-<candidate>-vs-<baseline>', and when that is longer than
    a run id may be (rundir.RUN_ID_RE: 128 characters; two long ids, or comparisons of comparisons)
    both ids shortened and a digest of the full pair appended, so every pair keeps its own id."""
    full = 'compare-%s-vs-%s' % (candidate_id, baseline_id)
    if len(full) <= MAX_RUN_ID:
        return full
    digest = hashlib.sha256(full.encode('utf-8')).hexdigest()[:12]
    keep = (MAX_RUN_ID - len('compare--vs--') - len(digest)) // 2
    return 'compare-%s-vs-%s-%s' % (str(candidate_id)[:keep].rstrip('.-_'), str(baseline_id)[:keep].rstrip('.-_'),
                                    digest)


def _matrix_title(baseline_doc, candidate_doc):
    a, b = baseline_doc.get('matrix'), candidate_doc.get('matrix')
    if a == b:
        return a
    return '%s vs %s' % (b or candidate_doc['run_id'], a or baseline_doc['run_id'])


def _num(x):
    return 'n/a' if x is None else ('%.4g' % x)


def describe(item):
    """One line for people: what regressed, by how much, against which threshold."""
    ci = item.get('ci_pct')
    return ('%s %s %s: %s %s vs %s in the baseline run (%+.1f%%, CI %s, p=%s, n=%d vs %d): significantly worse '
            'than the baseline by more than the %.4g%% threshold (%s is better)') % (
        item['benchmark'], item['cell'], item['metric'], _num(item['candidate_mean']), item['unit'],
        _num(item['baseline_mean']), item['delta_pct'],
        ('[%+.1f%%, %+.1f%%]' % tuple(ci)) if ci else 'n/a', _num(item['p']), item['candidate_n'],
        item['baseline_n'], item['threshold_pct'], item['better'])
