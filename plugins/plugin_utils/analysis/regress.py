# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two stored runs side by side, and the regression gate. Pure functions.

compare_runs(baseline_doc, candidate_doc, threshold) returns a results document the report
renderers draw like any run: every record of the baseline run gets the cell ``<cell> @ baseline``,
every record of the candidate run ``<cell> @ candidate``, and each table holds one cell of one
benchmark (``<benchmark> [<cell>]`` when the benchmark ran in several cells), so the baseline
column of each table is the same cell in the baseline run. The analysis (analysis.analyze) gives
per metric the comparison and its verdict (better, worse, equivalent, inconclusive; corrected
across the comparison's tables like any report).

The gate judges each metric (gate_outcome): a **regression** when the verdict is worse *and* the
candidate is worse by more than ``threshold`` percent of the baseline mean; a **pass** when the
verdict is better, or when a one-sided Welch test shows the candidate is not worse by the threshold
or more (non-inferiority at alpha: the data rule a regression beyond the threshold out); otherwise
the gate **cannot judge** it: fewer than two repetitions on a side (too little data), or data that
can neither show nor rule out a regression beyond the threshold. A cell or benchmark in one run
only, a metric the candidate lacks, and a baseline and candidate that are the same run cannot be
judged either; nor can a benchmark whose parameters differ between the runs (not the same
experiment, experiment_differences), unless the caller says they are (ignore_params). Parameters
and tool versions that differ are shown either way: ``differs`` on each candidate metric (beside
the verdict in every format), a flag on the cell, ``params_differ`` in the comparison. Regressions are marked on the metric
(``regression: true``), flagged on the cell (code ``regression``) and listed in the document's ``comparison`` section with everything that
could not be judged (``cannot_judge``, each with its reason); with fail_on_regression, both fail the
play (action compare_runs)."""

from __future__ import annotations

import hashlib
import json
import re

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import compare, tost
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import ALPHA
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.grouping import benchmark_of, cell_of

SIDES = ('baseline', 'candidate')
# Record params that are a run's own observations (load before it, time waited), not the experiment.
RUN_OBSERVATIONS = ('guards',)
# What a parameter's value may show of itself in a verdict (inert in every report format): the rest is '?'.
_UNSAFE = re.compile(r'[^A-Za-z0-9 .:/+=,%-]')
# The longest run id rundir.RUN_ID_RE accepts (a comparison's report goes to a run directory too).
MAX_RUN_ID = 128


class CompareError(ValueError):
    """Arguments or documents compare_runs cannot use; the message says which."""


def judge(candidate, baseline, better, threshold, alpha=ALPHA):
    """The regression verdict of one metric: candidate and baseline are lists of values or summaries.

    Returns inference.compare's result (a family of one) plus `regression` (True/False; None when there
    is too little data, i.e. fewer than two values on a side), `beyond_threshold` and the gate's
    outcome (`gate`: regression, pass or cannot judge, with `gate_reason`)."""
    _check_threshold(threshold)
    cmp = compare(candidate, baseline, better=better, alpha=alpha)
    cmp.update(gate_outcome(cmp, cmp['candidate'], cmp['baseline'], better, threshold, alpha))
    return cmp


def _check_threshold(threshold):
    if threshold is None or not is_number(threshold) or threshold < 0:
        raise CompareError('regression_threshold must be a number >= 0 (percent), got %r' % (threshold,))


def worse_by_pct(delta, better):
    """How much worse than the baseline a delta (in %) is: positive is worse."""
    return -delta if better == 'higher' else delta


def gate_outcome(cmp, c, b, better, threshold, alpha=ALPHA):
    """The gate's judgement of one compared metric (cmp: its comparison with verdict, p and
    delta_pct; c, b: the candidate's and the baseline's summaries): {gate, gate_reason, regression,
    beyond_threshold, threshold_pct, p_non_inferiority}. See the module docstring."""
    delta = cmp.get('delta_pct')
    beyond = None if delta is None else worse_by_pct(delta, better) > threshold
    out = dict(beyond_threshold=beyond, threshold_pct=float(threshold), p_non_inferiority=None, regression=None)
    if cmp.get('p') is None:
        out.update(gate='cannot judge', gate_reason='too little data: n=%d vs n=%d (needs 2 on each side)'
                   % (c['n'], b['n']))
        return out
    out['regression'] = bool(cmp['verdict'] == 'worse' and beyond)
    if out['regression']:
        out.update(gate='regression', gate_reason='significantly worse by more than the %.4g%% threshold' % threshold)
        return out
    if cmp['verdict'] == 'better':
        out.update(gate='pass', gate_reason='better')
        return out
    p_ni = None
    if b.get('mean'):
        margin = abs(b['mean']) * threshold / 100.0
        ni = tost(c, b, -margin, float('inf')) if better == 'higher' else tost(c, b, float('-inf'), margin)
        p_ni = ni['p'] if ni else None
    elif cmp['verdict'] == 'equivalent':     # the same constant on both sides
        p_ni = 0.0
    out['p_non_inferiority'] = p_ni
    if p_ni is not None and p_ni < alpha:
        out.update(gate='pass', gate_reason='not worse by %.4g%% or more (one-sided test, p=%.2g)' % (threshold, p_ni))
        return out
    need = cmp.get('repetitions_needed')
    out.update(gate='cannot judge', gate_reason=(
        '%s: the data can neither show nor rule out a regression beyond the %.4g%% threshold (%s, detectable: %s)%s'
        % (cmp.get('verdict'), threshold, 'n/a' if delta is None else '%+.1f%%' % delta, _pct(cmp.get('mde_pct')),
           ('; about %d repetitions per side would settle it' % need) if need else '')))
    return out


def _pct(x):
    return 'n/a' if x is None else '%.1f%%' % x


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


def _experiment(records):
    """({param: {canonical JSON value}}, {tool version}) of one side of a table."""
    values = {}
    for rec in records:
        for k, v in (rec.get('params') or {}).items():
            if k not in RUN_OBSERVATIONS:
                values.setdefault(k, set()).add(json.dumps(v, sort_keys=True, default=str))
    return values, set(str(r['tool_version']) for r in records if r.get('tool_version'))


def _shown_value(values):
    if not values:
        return '(not set)'
    v = json.loads(next(iter(values)))
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    text = _UNSAFE.sub('?', text)
    return text if len(text) <= 40 else text[:39] + '…'


def experiment_differences(baseline_records, candidate_records):
    """How two sides of a table are not the same experiment: ([{param, baseline, candidate}], the
    tool versions {baseline: [...], candidate: [...]} when they differ, else None). A parameter that
    varies between one side's own repetitions is a run's figure, not the experiment, and is left out;
    values are shown inert (see _UNSAFE), baseline first."""
    (bp, bv), (cp, cv) = _experiment(baseline_records), _experiment(candidate_records)
    params = []
    for k in sorted(set(bp) | set(cp)):
        b, c = bp.get(k), cp.get(k)
        if len(b or ()) > 1 or len(c or ()) > 1 or b == c:
            continue
        params.append(dict(param=_UNSAFE.sub('?', k), baseline=_shown_value(b), candidate=_shown_value(c)))
    versions = dict(baseline=sorted(bv), candidate=sorted(cv)) if bv and cv and bv != cv else None
    return params, versions


def differs_text(params, versions):
    """'bs 1M vs 4k; tool version 3.33 vs 3.35' (baseline first), '' when nothing differs."""
    parts = ['%s %s vs %s' % (d['param'], d['baseline'], d['candidate']) for d in params]
    if versions:
        parts.append('tool version %s vs %s' % tuple(_UNSAFE.sub('?', '/'.join(versions[s])) for s in SIDES))
    return '; '.join(parts)


def compare_runs(baseline_doc, candidate_doc, threshold=5.0, metrics=None, alpha=ALPHA, labels=None, correction=None,
                 margin=None, ignore_params=False):
    """The comparison results document of two stored runs (see the module docstring).

    metrics: metric names the gate judges (all by default); labels: {side: run label} for the
    header; correction, margin: how the comparison's verdicts are corrected (holm, bh, none) and the
    equivalence margin in % (defaults: Holm, 5); ignore_params: the two runs are the same experiment
    although their parameters differ (the difference is still shown; the gate then judges)."""
    for side, doc in zip(SIDES, (baseline_doc, candidate_doc)):
        if not isinstance(doc, dict) or not doc.get('run_id'):
            raise CompareError('the %s run is not a results document with a run_id' % side)
    _check_threshold(threshold)
    if baseline_doc['run_id'] == candidate_doc['run_id']:
        raise CompareError('the baseline and the candidate are the same run (%s): a run is never compared with itself '
                           '(name another candidate; candidate=latest is the newest stored run, whatever its status)'
                           % baseline_doc['run_id'])
    docs = dict(zip(SIDES, (baseline_doc, candidate_doc)))
    records, environment, plan = _merged(docs, correction, margin)
    analysis = analyze(records, plan, environment)
    wanted = set(metrics) if metrics else None
    found = dict(regressions=[], too_little_data=[], missing=[], new=[], cannot_judge=[], params_differ=[], passed=0)
    sides = {}
    for rec in records:
        sides.setdefault((rec['labels']['benchmark'], rec['labels']['cell']), []).append(rec)
    for b in analysis['benchmarks']:
        _mark_differences(b, sides, found, ignore_params)
        _judge_benchmark(b, wanted, threshold, alpha, found)
    found['regressions'].sort(key=lambda r: -(r['delta_pct'] if r['better'] == 'lower' else -r['delta_pct']))
    comparison = dict(baseline=_run_info(baseline_doc, (labels or {}).get('baseline')),
                      candidate=_run_info(candidate_doc, (labels or {}).get('candidate')),
                      regression_threshold=float(threshold), alpha=alpha, metrics=sorted(wanted) if wanted else None,
                      ignore_params=bool(ignore_params), **found)
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


def _merged(docs, correction=None, margin=None):
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
    if correction:
        plan['correction'] = correction
    if margin is not None:
        plan['equivalence_margin_pct'] = margin
    return records, environment, plan


def _mark_differences(b, sides, found, ignore_params):
    """Parameters or tool versions that differ between the two sides of a table: on the candidate
    cell (flag, and `differs` on each of its metrics, shown beside the verdict), in found's
    params_differ; unless ignore_params, `b['not_comparable']` (the gate cannot judge it)."""
    base = next((c for c in b['cells'] if c['cell'].endswith(' @ baseline')), None)
    cand = next((c for c in b['cells'] if c['cell'].endswith(' @ candidate')), None)
    if base is None or cand is None:
        return
    params, versions = experiment_differences(sides.get((b['name'], base['cell']), []),
                                              sides.get((b['name'], cand['cell']), []))
    text = differs_text(params, versions)
    if not text:
        return
    for s in cand['metrics'].values():
        s['differs'] = text
    where = dict(benchmark=b['name'], cell=cand['cell'].rsplit(' @ ', 1)[0])
    found['params_differ'].append(dict(where, params=params, tool_version=versions, text=text))
    if params:
        cand['flags'].append(dict(code='params_differ', message='not the same experiment as the baseline run: %s%s' % (
            text, ' (compare_ignore_params: compared as the same experiment)' if ignore_params else
            ' (the gate cannot judge it)')))
        if not ignore_params:
            b['not_comparable'] = 'different parameters (%s): not the same experiment, so the gate calls no ' \
                                  'regression (compare_ignore_params=true if they are)' % text
    else:
        cand['flags'].append(dict(code='tool_version_differs', message='another tool version than the baseline run: %s'
                                  % text))


def _judge_benchmark(b, wanted, threshold, alpha, found):
    """Judge one benchmark's candidate cell against its baseline cell; appends to found's lists."""
    base = next((c for c in b['cells'] if c['cell'].endswith(' @ baseline')), None)
    cand = next((c for c in b['cells'] if c['cell'].endswith(' @ candidate')), None)
    where = dict(benchmark=b['name'], cell=(base or cand)['cell'].rsplit(' @ ', 1)[0])
    if cand is None or base is None:
        item = dict(where, reason='not in the candidate run' if cand is None else 'not in the baseline run')
        found['missing' if cand is None else 'new'].append(item)
        found['cannot_judge'].append(item)
        return
    b['regressions'] = []
    for m in b['metrics']:
        s, ref = cand['metrics'].get(m), base['metrics'].get(m)
        if s is None or ref is None:
            if ref is not None and (wanted is None or m in wanted):
                item = dict(where, metric=m, reason='metric not in the candidate run')
                found['missing'].append(item)
                found['cannot_judge'].append(item)
            continue
        s['regression'] = None
        if wanted is not None and m not in wanted:
            continue
        if b.get('not_comparable'):
            found['cannot_judge'].append(dict(where, metric=m, reason=b['not_comparable'], verdict=s.get('verdict')))
            continue
        if not s['n'] or not ref['n']:
            item = dict(where, metric=m, reason='no measured value (too fast?)')
            found['too_little_data'].append(item)
            found['cannot_judge'].append(item)
            continue
        v = gate_outcome(s, s, ref, s['better'], threshold, alpha)
        s.update(regression=v['regression'], gate=v['gate'], p_non_inferiority=v['p_non_inferiority'])
        if v['gate'] == 'pass':
            found['passed'] += 1
        elif v['gate'] == 'cannot judge':
            item = dict(where, metric=m, reason=v['gate_reason'], verdict=s.get('verdict'))
            if v['regression'] is None:
                found['too_little_data'].append(item)
            found['cannot_judge'].append(item)
        else:
            item = dict(where, metric=m, unit=s['unit'], better=s['better'], baseline_mean=ref['mean'],
                        candidate_mean=s['mean'], baseline_n=ref['n'], candidate_n=s['n'], delta_pct=s['delta_pct'],
                        ci_pct=s['ci_pct'], p=s['p'], p_adjusted=s.get('p_adjusted'), test=s.get('test'),
                        verdict=s.get('verdict'), threshold_pct=float(threshold))
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
    return ('%s %s %s: %s %s vs %s in the baseline run (%+.1f%%, CI %s, p=%s, corrected %s, %s, n=%d vs %d): '
            'significantly worse than the baseline by more than the %.4g%% threshold (%s is better)') % (
        item['benchmark'], item['cell'], item['metric'], _num(item['candidate_mean']), item['unit'],
        _num(item['baseline_mean']), item['delta_pct'],
        ('[%+.1f%%, %+.1f%%]' % tuple(ci)) if ci else 'n/a', _num(item['p']), _num(item.get('p_adjusted')),
        item.get('test') or 'welch', item['candidate_n'], item['baseline_n'], item['threshold_pct'], item['better'])


def describe_unjudged(item):
    """One line for people: what the gate could not judge, and why."""
    return '%s: %s' % (' '.join(str(item[k]) for k in ('benchmark', 'cell', 'metric') if item.get(k)), item['reason'])
