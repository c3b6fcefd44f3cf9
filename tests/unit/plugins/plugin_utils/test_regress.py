# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two runs side by side and the regression decision (plugin_utils/analysis/regress.py)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record, validate_record
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import compare
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.regress import CompareError, compare_runs, describe, judge
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import write_reports
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir


# -- the decision ---------------------------------------------------------------------------

BASE = [100.0, 101.0, 99.0, 100.5, 99.5]


@pytest.mark.parametrize('better, candidate, threshold, expected', [
    # higher is better (MB/s): 20 % lower, significant -> regression at 5 %, not at 25 %
    ('higher', [80.0, 81.0, 79.0, 80.5, 79.5], 5, True),
    ('higher', [80.0, 81.0, 79.0, 80.5, 79.5], 25, False),
    # 2 % lower and significant, but within a 5 % threshold
    ('higher', [98.0, 99.0, 97.0, 98.5, 97.5], 5, False),
    # 20 % lower on average but noisy: not significant -> no regression even at 0 %
    ('higher', [40.0, 150.0, 60.0, 140.0, 10.0], 0, False),
    # 20 % higher: better, never a regression
    ('higher', [120.0, 121.0, 119.0, 120.5, 119.5], 0, False),
    # lower is better (seconds): 20 % longer is a regression, 20 % shorter is not
    ('lower', [120.0, 121.0, 119.0, 120.5, 119.5], 5, True),
    ('lower', [120.0, 121.0, 119.0, 120.5, 119.5], 25, False),
    ('lower', [80.0, 81.0, 79.0, 80.5, 79.5], 0, False),
    ('lower', [102.0, 103.0, 101.0, 102.5, 101.5], 5, False),
])
def test_regression_decision(better, candidate, threshold, expected):
    v = judge(candidate, BASE, better, threshold)
    assert v['regression'] is expected
    ref = compare(candidate, BASE, better=better)
    assert v['delta_pct'] == pytest.approx(ref['delta_pct'])
    assert v['significant'] == ref['significant']
    if expected:
        assert v['significant'] and v['worse'] and v['beyond_threshold']


def test_too_little_data_is_undecided_not_a_pass():
    v = judge([10.0], [100.0], 'higher', 5)
    assert v['regression'] is None and v['beyond_threshold'] is True


def test_bad_threshold():
    with pytest.raises(CompareError, match='regression_threshold'):
        judge([1.0, 2.0], [1.0, 2.0], 'higher', -1)


# -- whole runs -----------------------------------------------------------------------------

def rec(bench, cell, values, test='write', tool='dd', unit='MB/s', elapsed=True, params=None, version='9.1'):
    out = []
    for i, v in enumerate(values):
        metrics = {'throughput': metric(v, unit)}
        if elapsed:
            metrics['elapsed'] = metric(round(800.0 / v, 6), 's', 'lower')
        r = new_record(tool, test, metrics, tool_version=version,
                       labels={'benchmark': bench, 'cell': cell, 'platform': 'host'},
                       params=dict(params or {'size': '8M'}, guards={'load_before': 0.1 * i}))
        assert validate_record(r) == []
        out.append(dict(r, host='localhost'))
    return out


def run_doc(run_id, records, matrix='m'):
    return dict(run_id=run_id, started='2026-12-01T22:00:00Z', finished='2026-12-01T22:10:00Z', user='me',
                inventory='inventories/local', playbook='bench.yml', matrix=matrix, collection_version='0.1.0',
                status='complete', invalid=[], failed=[], records=records,
                environment={'localhost/%s' % c: dict(host='localhost', labels={'cell': c}, kernel='6.1')
                             for c in sorted(set(r['labels']['cell'] for r in records))},
                plan=None, analysis={'benchmarks': []})


def test_one_cell_slowed_down_is_flagged():
    base = run_doc('B1', rec('dd-write', 'rootfs', [180.0, 182.0, 179.0]))
    cand = run_doc('C1', rec('dd-write', 'rootfs', [2.0, 2.1, 2.05]))
    doc = compare_runs(base, cand, threshold=5)
    assert doc['run_id'] == 'compare-C1-vs-B1'
    (b,) = doc['analysis']['benchmarks']
    assert b['name'] == 'dd-write'  # one cell: the table keeps the benchmark's name
    assert [c['cell'] for c in b['cells']] == ['rootfs @ baseline', 'rootfs @ candidate']
    assert b['baseline'] == 'rootfs @ baseline' and b['cells'][0]['baseline']
    cand_cell = b['cells'][1]
    assert cand_cell['metrics']['throughput']['regression'] is True
    assert cand_cell['metrics']['elapsed']['regression'] is True      # lower is better: longer is worse
    assert cand_cell['metrics']['throughput']['delta_pct'] == pytest.approx((2.05 - 180.333) / 180.333 * 100, abs=0.1)
    assert [f['code'] for f in cand_cell['flags']].count('regression') == 2
    regs = doc['comparison']['regressions']
    assert sorted(r['metric'] for r in regs) == ['elapsed', 'throughput']
    thr = next(r for r in regs if r['metric'] == 'throughput')
    assert thr['benchmark'] == 'dd-write' and thr['cell'] == 'rootfs' and thr['unit'] == 'MB/s'
    assert thr['candidate_n'] == thr['baseline_n'] == 3 and thr['p'] < 0.05
    assert 'dd-write rootfs throughput' in describe(thr) and '5% threshold' in describe(thr)
    # the relabelled records are still valid records, and tell which run they came from
    for r in doc['records']:
        assert validate_record({k: v for k, v in r.items() if k != 'host'}) == []
    assert set(r['labels']['run'] for r in doc['records']) == {'B1', 'C1'}
    # the environment follows the relabelled cells
    assert sorted(e['labels']['cell'] for e in doc['environment'].values()) == ['rootfs @ baseline', 'rootfs @ candidate']
    json.dumps(doc)  # a document results.json can hold


def test_same_numbers_no_regression_and_improvement_is_not_a_trap():
    base = run_doc('B1', rec('dd-write', 'rootfs', [100.0, 102.0, 98.0]))
    same = run_doc('C1', rec('dd-write', 'rootfs', [101.0, 99.0, 100.0]))
    doc = compare_runs(base, same, threshold=5)
    assert doc['comparison']['regressions'] == []
    faster = run_doc('C2', rec('dd-write', 'rootfs', [200.0, 201.0, 199.0]))
    doc = compare_runs(base, faster, threshold=0)
    assert doc['comparison']['regressions'] == []
    cand = doc['analysis']['benchmarks'][0]['cells'][1]
    assert cand['metrics']['throughput']['significant'] is True
    assert not [f for f in cand['flags'] if f['code'] in ('faster_than_baseline', 'regression')]


def test_several_cells_each_compared_with_the_same_cell_of_the_baseline_run():
    base = run_doc('B1', rec('dd-write', 'rootfs', [100.0, 101.0, 99.0]) + rec('dd-write', 'tmpfs', [900.0, 905.0, 895.0])
                   + rec('dd-write', 'gone', [50.0, 51.0]))
    cand = run_doc('C1', rec('dd-write', 'rootfs', [100.5, 100.0, 99.5]) + rec('dd-write', 'tmpfs', [500.0, 502.0, 498.0])
                   + rec('dd-write', 'newcell', [10.0, 11.0]))
    doc = compare_runs(base, cand, threshold=5, metrics=['throughput'])
    tables = dict((b['name'], b) for b in doc['analysis']['benchmarks'])
    assert set(tables) == {'dd-write [rootfs]', 'dd-write [tmpfs]', 'dd-write [gone]', 'dd-write [newcell]'}
    assert tables['dd-write [tmpfs]']['baseline'] == 'tmpfs @ baseline'
    regs = doc['comparison']['regressions']
    assert [(r['benchmark'], r['cell'], r['metric']) for r in regs] == [('dd-write [tmpfs]', 'tmpfs', 'throughput')]
    # tmpfs 900 -> 500 is -44 %: compared with tmpfs in the baseline run, not with rootfs
    assert regs[0]['delta_pct'] == pytest.approx(-44.4, abs=0.2)
    assert doc['comparison']['missing'] == [dict(benchmark='dd-write [gone]', cell='gone', reason='not in the candidate run')]
    assert doc['comparison']['new'] == [dict(benchmark='dd-write [newcell]', cell='newcell', reason='not in the baseline run')]
    # only the metrics asked for are judged
    tmpfs = tables['dd-write [tmpfs]']['cells'][1]
    assert tmpfs['metrics']['elapsed']['regression'] is None and tmpfs['metrics']['throughput']['regression'] is True


def test_single_repetition_is_listed_as_too_little_data():
    doc = compare_runs(run_doc('B1', rec('dd-write', 'rootfs', [100.0])), run_doc('C1', rec('dd-write', 'rootfs', [10.0])))
    assert doc['comparison']['regressions'] == []
    assert sorted(u['metric'] for u in doc['comparison']['too_little_data']) == ['elapsed', 'throughput']
    assert 'n=1 vs n=1' in doc['comparison']['too_little_data'][0]['reason']


def test_failures_of_both_runs_are_kept_and_tagged():
    base = dict(run_doc('B1', rec('dd-write', 'rootfs', [100.0, 101.0])), failed=[dict(host='h', task='fio', msg='x')])
    doc = compare_runs(base, run_doc('C1', rec('dd-write', 'rootfs', [100.0, 101.0])))
    assert doc['failed'] == [dict(host='h', task='baseline run B1: fio', msg='x')]


def test_not_a_document():
    with pytest.raises(CompareError, match='baseline run'):
        compare_runs({}, run_doc('C1', []))
    with pytest.raises(CompareError, match='regression_threshold'):
        compare_runs(run_doc('B1', []), run_doc('C1', []), threshold='5')


def test_the_report_files_are_written_from_the_comparison(tmp_path):
    doc = compare_runs(run_doc('B1', rec('dd-write', 'rootfs', [180.0, 182.0, 179.0])),
                       run_doc('C1', rec('dd-write', 'rootfs', [2.0, 2.1, 2.05])))
    paths = write_reports(RunDir(str(tmp_path), doc['run_id']), doc)
    md = open(paths['report.md']).read()
    assert 'rootfs @ baseline' in md and 'rootfs @ candidate' in md
    assert 'regression' in md  # the flag's explanation is in the report
    assert json.load(open(paths['results.json']))['comparison']['regressions']


# -- like with like: the parameters and tool versions of the two runs ------------------------------------

def test_a_regression_is_never_called_between_different_parameters(tmp_path):
    """The report of the issue: two runs of one benchmark name, bs 1M vs 4k, printed 'REGRESSION -45 %'
    with nothing saying the parameters differ. Now: the difference beside the verdict in every
    format, the gate cannot judge it; a parameter that varies within a run (guards) is no difference."""
    base = run_doc('B1', rec('fio-write', 'rootfs', [180.0, 182.0, 179.0], params={'bs': '1M', 'size': '8M'}))
    cand = run_doc('C1', rec('fio-write', 'rootfs', [99.0, 100.0, 98.0], params={'bs': '4k', 'size': '8M'}))
    doc = compare_runs(base, cand, threshold=5)
    comp = doc['comparison']
    assert comp['regressions'] == []
    assert sorted(u['metric'] for u in comp['cannot_judge']) == ['elapsed', 'throughput']
    assert all(u['reason'].startswith('different parameters (bs 1M vs 4k): not the same experiment')
               for u in comp['cannot_judge'])
    assert comp['params_differ'] == [dict(benchmark='fio-write', cell='rootfs', text='bs 1M vs 4k', tool_version=None,
                                          params=[dict(param='bs', baseline='1M', candidate='4k')])]
    cell = doc['analysis']['benchmarks'][0]['cells'][1]
    assert cell['metrics']['throughput']['verdict'] == 'worse'   # the analysis still says what it sees
    assert [f['code'] for f in cell['flags']] == ['params_differ']
    paths = write_reports(RunDir(str(tmp_path), doc['run_id']), doc)
    for name in ('report.md', 'report.html', 'summary.csv'):
        assert 'worse, parameters differ: bs 1M vs 4k' in open(paths[name]).read() or (
            name == 'summary.csv' and 'bs 1M vs 4k' in open(paths[name]).read()), name
    assert json.load(open(paths['results.json']))['comparison']['params_differ'][0]['text'] == 'bs 1M vs 4k'
    # told they are the same experiment: judged (and still shown)
    same = compare_runs(base, cand, threshold=5, ignore_params=True)
    assert sorted(r['metric'] for r in same['comparison']['regressions']) == ['elapsed', 'throughput']
    assert same['comparison']['params_differ'][0]['text'] == 'bs 1M vs 4k'


def test_a_tool_version_that_differs_is_shown_and_judged():
    base = run_doc('B1', rec('dd-write', 'rootfs', [180.0, 182.0, 179.0], version='9.1'))
    cand = run_doc('C1', rec('dd-write', 'rootfs', [2.0, 2.1, 2.05], version='9.4'))
    comp = compare_runs(base, cand, threshold=5)['comparison']
    assert sorted(r['metric'] for r in comp['regressions']) == ['elapsed', 'throughput']
    assert comp['params_differ'][0]['text'] == 'tool version 9.1 vs 9.4'


def test_identical_experiments_show_no_difference_and_values_are_inert():
    base = run_doc('B1', rec('dd-write', 'rootfs', [100.0, 102.0, 98.0]))
    comp = compare_runs(base, run_doc('C1', rec('dd-write', 'rootfs', [101.0, 99.0, 100.0])))['comparison']
    assert comp['params_differ'] == [] and comp['cannot_judge'] == []
    hostile = run_doc('C2', rec('dd-write', 'rootfs', [101.0, 99.0, 100.0],
                                params={'size': '8M', 'options': '|**x**| <b>[a](b) `c`\x1b[31m'}))
    (d,) = compare_runs(base, hostile)['comparison']['params_differ']
    assert d['params'][0]['param'] == 'options' and d['params'][0]['baseline'] == '(not set)'
    assert not set(d['text']) & set('|*<>[]`\x1b_')
