# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The regression gate fails when it cannot judge (plugin_utils/analysis/regress.py, history `latest`).

Before: a candidate 10x slower with n=1 ended "no regression" (too little data was no failure), a
baseline cell missing from the candidate too, and candidate=latest took the newest *complete* run,
so after an interrupted run the baseline was compared with itself. The live counterpart is
tests/integration/test_compare_gate_live.py."""

from __future__ import annotations

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import load_run, store_run
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.regress import (
    CompareError, compare_runs, describe_unjudged, gate_outcome, judge)


def rec(cell, values, bench='dd-write'):
    return [dict(new_record('dd', 'write', {'throughput': metric(v, 'MB/s')}, tool_version='9.1',
                            labels={'benchmark': bench, 'cell': cell}, params={'size': '8M'}),
                 host='localhost', repetition=i + 1) for i, v in enumerate(values)]


def doc(run_id, records, status='complete', started='2026-12-01T22:00:00Z'):
    return dict(run_id=run_id, started=started, finished=started, user='me', inventory='i', playbook='bench.yml',
                matrix='m', collection_version='0.1.0', status=status, invalid=[], failed=[], records=records,
                environment={}, plan=None, analysis={'benchmarks': []})


def test_ten_times_slower_with_one_repetition_cannot_be_judged():
    base = doc('B', rec('rootfs', [180.0, 182.0, 179.0]))
    cand = doc('C', rec('rootfs', [18.0]))
    c = compare_runs(base, cand, threshold=5)['comparison']
    assert c['regressions'] == []
    (item,) = c['cannot_judge']
    assert (item['benchmark'], item['cell'], item['metric']) == ('dd-write', 'rootfs', 'throughput')
    assert item['reason'] == 'too little data: n=1 vs n=3 (needs 2 on each side)'
    assert c['too_little_data'] == [item]
    assert describe_unjudged(item) == 'dd-write rootfs throughput: too little data: n=1 vs n=3 (needs 2 on each side)'


def test_a_cell_or_benchmark_on_one_side_only_cannot_be_judged():
    base = doc('B', rec('rootfs', [100.0, 101.0, 99.0]) + rec('tmpfs', [900.0, 905.0, 895.0]))
    cand = doc('C', rec('rootfs', [100.5, 100.0, 99.5]) + rec('rootfs', [50.0, 51.0, 49.0], bench='fio-new'))
    c = compare_runs(base, cand, threshold=5)['comparison']
    assert c['regressions'] == []
    assert sorted((u['benchmark'], u['cell'], u['reason']) for u in c['cannot_judge']) == [
        ('dd-write [tmpfs]', 'tmpfs', 'not in the candidate run'), ('fio-new', 'rootfs', 'not in the baseline run')]


def test_a_run_is_never_compared_with_itself():
    base = doc('B', rec('rootfs', [100.0, 101.0, 99.0]))
    with pytest.raises(CompareError, match=r'the baseline and the candidate are the same run \(B\)'):
        compare_runs(base, dict(base), threshold=5)


@pytest.mark.parametrize('candidate, threshold, gate', [
    ([100.5, 100.0, 99.5, 100.2, 99.8], 5, 'pass'),          # the same: a regression beyond 5 % is ruled out
    ([80.0, 81.0, 79.0, 80.5, 79.5], 5, 'regression'),       # 20 % lower, significant
    ([98.0, 99.0, 97.0, 98.5, 97.5], 5, 'pass'),             # 2 % lower, significant, ruled out beyond 5 %
    ([40.0, 150.0, 60.0, 140.0, 10.0], 5, 'cannot judge'),   # could be anything
    ([120.0, 121.0, 119.0, 120.5, 119.5], 0, 'pass'),        # better
])
def test_gate_outcomes(candidate, threshold, gate):
    v = judge(candidate, [100.0, 101.0, 99.0, 100.5, 99.5], 'higher', threshold)
    assert v['gate'] == gate, v['gate_reason']


def test_cannot_judge_says_why_and_what_would_settle_it():
    v = judge([40.0, 150.0, 60.0, 140.0, 10.0], [100.0, 101.0, 99.0, 100.5, 99.5], 'higher', 5)
    assert v['regression'] is False and v['p_non_inferiority'] > 0.05
    assert v['gate_reason'].startswith('inconclusive: the data can neither show nor rule out a regression beyond the 5% '
                                       'threshold')
    assert 'repetitions per side would settle it' in v['gate_reason']
    out = gate_outcome(dict(p=None, delta_pct=None), {'n': 1}, {'n': 3}, 'higher', 5)
    assert out['gate'] == 'cannot judge' and out['regression'] is None


def test_latest_is_the_newest_run_whatever_its_status(tmp_path):
    db = str(tmp_path / 'h.sqlite')
    store_run(db, doc('base', rec('rootfs', [100.0, 101.0, 99.0]), started='2026-12-01T22:00:00Z'), label='nightly')
    store_run(db, doc('broken', rec('rootfs', [10.0]), status='interrupted', started='2026-12-02T22:00:00Z'), label='nightly')
    assert load_run(db, 'latest')['run_id'] == 'broken'
    assert load_run(db, 'nightly')['run_id'] == 'base'      # a label still names its newest complete run
    c = compare_runs(load_run(db, 'nightly'), load_run(db, 'latest'), threshold=5)['comparison']
    assert c['candidate']['status'] == 'interrupted' and c['cannot_judge'][0]['reason'].startswith('too little data')
