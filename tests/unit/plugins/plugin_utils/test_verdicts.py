# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every comparison of a report concludes (plugin_utils/analysis/verdicts.py), corrected across the report,
and the variance gate's precision target (plugin_utils/plan/gate.py: target_ci_pct)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import adjust
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze, charted_metric
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.gate import gate_status, next_runs
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import MatrixError, expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown, render_terminal
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import render_summary_csv
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_json, results_problems
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.verdicts import VerdictError, correction_method

# (benchmark, cell) -> repetitions; base is every benchmark's baseline
VALUES = {
    ('b1', 'base'): [100.0, 101.0, 99.0, 100.5, 99.5],
    ('b1', 'same'): [100.2, 100.9, 99.3, 100.1, 99.8],         # equivalent within 5 %
    ('b1', 'slow'): [90.0, 91.0, 89.0, 90.5, 89.5],            # 10 % worse, 1 % spread: worse
    ('b1', 'wild'): [60.0, 140.0, 80.0, 130.0, 95.0],          # inconclusive
    ('b2', 'base'): [50.0, 50.5, 49.5, 50.2, 49.8],
    ('b2', 'same'): [51.5, 52.0, 51.0, 51.8, 51.2],            # +3 %: small, but significant
    ('b2', 'slow'): [50.1],                                    # one repetition
    ('b2', 'wild'): [50.0, 49.0],
}


def records():
    out = []
    for (bench, cell), values in VALUES.items():
        for i, v in enumerate(values):
            out.append(dict(new_record('dd', 'write', {'throughput': metric(v, 'MB/s'),
                                                       'elapsed': metric(round(800.0 / v, 6), 's', 'lower')},
                                       labels={'benchmark': bench, 'cell': cell}, params={}),
                            host='h', repetition=i + 1))
    return out


PLAN = {'baseline': 'base', 'cells': [{'name': n} for n in ('base', 'same', 'slow', 'wild')]}


def _row(a, bench, cell):
    return next(r for r in a['overview'] if r['benchmark'] == bench and r['cell'] == cell)


def test_every_overview_row_concludes_and_the_report_is_corrected_across_them():
    a = analyze(records(), PLAN)
    verdicts = dict(((r['benchmark'], r['cell']), r['verdict']) for r in a['overview'])
    assert verdicts == {('b1', 'same'): 'equivalent', ('b1', 'slow'): 'worse', ('b1', 'wild'): 'inconclusive',
                        ('b2', 'same'): 'better', ('b2', 'slow'): 'inconclusive', ('b2', 'wild'): 'inconclusive'}
    for r in a['overview']:
        for key in ('mde_pct', 'equivalence_margin_pct', 'p', 'p_adjusted', 'test', 'repetitions_needed'):
            assert key in r
        assert r['equivalence_margin_pct'] == 5.0 and r['test'] == 'welch'
        assert (r['repetitions_needed'] is not None) == (r['verdict'] == 'inconclusive')
    assert _row(a, 'b2', 'slow')['p'] is None and _row(a, 'b2', 'slow')['reason'].startswith('too little data')
    # Holm across the five overview rows with a p-value, as multipletests would correct them
    rows = [r for r in a['overview'] if r['p'] is not None]
    assert [r['p_adjusted'] for r in rows] == pytest.approx(adjust([r['p'] for r in rows], 'holm'))
    (head, detail) = a['correction']['families']
    assert (head['name'], head['comparisons'], head['tested']) == ('headline', 6, 5)
    assert head['verdicts'] == {'better': 1, 'worse': 1, 'equivalent': 1, 'inconclusive': 3}
    assert (detail['name'], detail['comparisons']) == ('detail', 6)   # elapsed of each compared cell
    # the tables' metrics carry the same conclusion, corrected in their own family
    cell = next(c for b in a['benchmarks'] if b['name'] == 'b1' for c in b['cells'] if c['cell'] == 'slow')
    assert cell['metrics']['throughput']['verdict'] == 'worse' and cell['metrics']['elapsed']['verdict'] == 'worse'
    assert results_problems(json.loads(results_json(dict(
        run_id='r', started=None, finished=None, status='complete', records=records(), environment={}, plan=PLAN,
        analysis=a, invalid=[], failed=[])))) == []


def test_the_correction_and_the_margin_come_from_the_plan():
    plan = dict(PLAN, correction='none', equivalence_margin_pct=2.0,
                benchmarks=[{'name': 'b2', 'equivalence_margin_pct': 10.0}])
    a = analyze(records(), plan)
    assert a['correction']['method'] == 'none'
    assert all(r['p_adjusted'] == r['p'] for r in a['overview'])
    assert _row(a, 'b1', 'same')['equivalence_margin_pct'] == 2.0
    assert _row(a, 'b2', 'same')['equivalence_margin_pct'] == 10.0
    assert analyze(records(), plan, correction='bh')['correction']['method'] == 'bh'
    assert correction_method(None) == 'holm' and correction_method('BH') == 'bh'
    with pytest.raises(VerdictError, match='correction must be one of holm, bh, none'):
        correction_method('bonferroni')


def test_every_format_shows_the_verdict_and_the_detectable_effect():
    a = analyze(records(), PLAN)
    meta = {'run_id': 'r', 'matrix': 'm'}
    md = render_markdown(a, meta)
    assert '**Verdicts.** The overview: 6 comparison(s), 5 with a p-value, corrected together (Holm, α 0.05): ' \
           '1 better, 1 worse, 1 equivalent, 3 inconclusive.' in md
    wild = _row(a, 'b1', 'wild')
    assert '| b1 | wild | base | throughput | ' in md
    line = next(ln for ln in md.splitlines() if ln.startswith('| b1 | wild | base | throughput | '))
    assert 'inconclusive, needs %d per side' % wild['repetitions_needed'] in line
    assert '%.1f%%' % wild['mde_pct'] in line and 'Welch t-test, p ' in line
    assert '**worse**' in next(ln for ln in md.splitlines() if ln.startswith('| b1 | slow | base | throughput | '))
    html = render_html(a, meta)
    assert html.count('<g class="forest-row equivalent">') == 1 and html.count('<g class="forest-row worse">') == 1
    assert html.count('<rect class="margin"') == 6          # the margin band of each row with a delta
    assert 'equivalent within ±5%' in html and 'inconclusive, too little data, needs' in html
    term = render_terminal(a)
    assert any(ln.startswith('verdicts of the overview: 6 comparison(s)') for ln in term.splitlines())
    rows = list(csv.DictReader(io.StringIO(render_summary_csv(a, charted_metric))))
    assert len(rows) == 16      # 8 cells x 2 metrics
    slow = next(r for r in rows if (r['benchmark'], r['cell'], r['metric']) == ('b1', 'slow', 'throughput'))
    assert (slow['verdict'], slow['family'], slow['baseline_cell']) == ('worse', 'headline', 'base')
    assert float(slow['mde_pct']) == pytest.approx(_row(a, 'b1', 'slow')['mde_pct'])
    base = next(r for r in rows if (r['benchmark'], r['cell'], r['metric']) == ('b1', 'base', 'elapsed'))
    assert base['verdict'] == '' and base['family'] == ''


# -- the precision target -----------------------------------------------------------------------

def rec(cell, value):
    return new_record('dd', 'write', {'throughput': metric(value, 'MB/s')}, labels={'benchmark': 'w', 'cell': cell},
                      params={'guards': {'warmup': False}})


def test_gate_status_with_a_precision_target():
    tight = gate_status([rec('q', v) for v in (100, 101, 99)], None, 8, target_ci_pct=5)
    # half-width t(0.975, 2) * 1 / sqrt(3) = 2.48 of a mean of 100: within +-5 %
    assert tight['met'] is True and tight['precise'] is True and tight['ci_pct'] == pytest.approx(2.484, abs=1e-3)
    loose = gate_status([rec('n', v) for v in (100, 110, 90)], None, 8, target_ci_pct=5)
    assert loose['met'] is False and loose['precise'] is False and loose['capped'] is False
    assert loose['ci_pct'] == pytest.approx(24.84, abs=0.01)
    # both asked: met only when both are
    both = gate_status([rec('n', v) for v in (100, 101, 99)], 0.005, 8, target_ci_pct=5)
    assert both['met'] is False and both['precise'] is True
    capped = gate_status([rec('n', v) for v in (100, 110, 90) * 2 + (100, 100)], None, 8, target_ci_pct=1)
    assert capped['capped'] is True and capped['n'] == 8


def test_the_precision_target_repeats_a_cell_until_precise_or_capped():
    matrix = {'name': 'p', 'repetitions': 3, 'baseline': 'quiet',
              'cells': [{'name': 'quiet', 'host': 'h1', 'path': '/a'}, {'name': 'noisy', 'host': 'h1', 'path': '/b'}],
              'benchmarks': [{'name': 'w', 'tool': 'dd', 'methodology': {'target_ci_pct': 5, 'max_repetitions': 5}}]}
    plan = expand_plan(matrix)
    assert plan['gates'] == {'w': {'target_ci_pct': 5, 'max_repetitions': 5}}
    recs = [rec(r['cell'], 100.0 + (r['repetition'] % 2) * (30 if r['cell'] == 'noisy' else 0.5)) for r in plan['runs']]
    added = []
    while True:
        more = next_runs(plan, recs, 'h1')
        if not more:
            break
        added.extend((m['cell'], m['repetition']) for m in more)
        recs.extend(rec(m['cell'], 100.0 + (m['repetition'] % 2) * 30) for m in more)
    assert added == [('noisy', 4), ('noisy', 5)]
    a = analyze(recs, plan)
    gates = dict((c['cell'], c['gate']) for c in a['benchmarks'][0]['cells'])
    assert gates['quiet']['precise'] is True and gates['noisy']['precise'] is False and gates['noisy']['capped']
    md = render_markdown(a, {'run_id': 'p'}, None, plan)
    assert 'quiet: n=3, variance gate met: 95% CI ±' in md and '(target ±5%: met) after 3 runs (cap 5)' in md
    assert 'noisy: n=5, variance gate NOT met at the cap: 95% CI ±' in md and '(target ±5%: not met)' in md
    flag = next(f for c in a['benchmarks'][0]['cells'] if c['cell'] == 'noisy' for f in c['flags']
                if f['code'] == 'gate_not_met')
    assert 'of the mean above the target +-5%' in flag['message']


def test_a_precision_target_needs_a_cap():
    with pytest.raises(MatrixError, match='target_ci_pct needs max_repetitions'):
        expand_plan({'name': 'p', 'cells': [{'name': 'c', 'host': 'h', 'path': '/a'}],
                     'benchmarks': [{'name': 'w', 'tool': 'dd', 'methodology': {'target_ci_pct': 5}}]})
