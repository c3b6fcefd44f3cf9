"""Resuming a run (issue 9): which runs of a plan an earlier attempt already measured."""

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.filter.resume_plan import resume_plan as resume_filter
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import cell_key, resume_plan

MATRIX = {'name': 'r', 'repetitions': 3, 'methodology': {'warmup': True},
          'cells': [{'name': 'a', 'host': 'h1', 'path': '/var/tmp'}, {'name': 'b', 'host': 'h2', 'path': '/srv'}],
          'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}},
                         {'name': 'dbench', 'tool': 'dbench', 'params': {'clients': [1, 4]}}]}


def plan(matrix=None):
    return expand_plan(matrix or MATRIX, inventory_hosts=['h1', 'h2'])


def rec(bench, cell, host, warmup=False, clients=None, value=100.0):
    labels = {'cell': cell, 'benchmark': bench}
    if clients:
        labels['clients'] = clients
    r = new_record('dd' if bench.startswith('dd') else 'dbench', 'write', {'throughput': metric(value, 'MB/s')},
                   labels=labels, params={'guards': {'warmup': warmup}})
    return dict(r, host=host)


def test_key_is_stable_and_changes_with_what_defines_a_cell():
    p = plan()
    cell, bench = p['cells'][0], p['benchmarks'][0]
    assert cell_key(cell, bench) == cell_key(copy.deepcopy(cell), copy.deepcopy(bench))
    assert cell_key(dict(cell, path='/other'), bench) != cell_key(cell, bench)
    assert cell_key(cell, dict(bench, params={'test': 'write', 'size': '16M'})) != cell_key(cell, bench)
    assert cell_key(dict(cell, labels={'x': 1}), bench) != cell_key(cell, bench)


def test_nothing_done_keeps_every_run():
    p = plan()
    out = resume_plan(p, p, [], 'run-1')
    assert out['runs'] == p['runs'] and out['resume']['skipped'] == 0 and out['resume']['run_id'] == 'run-1'


def test_done_runs_and_their_warmups_are_left_out():
    p = plan()
    records = [rec('dd-write', 'a', 'h1', warmup=True), rec('dd-write', 'a', 'h1'), rec('dd-write', 'a', 'h1'),
               # a dbench run gives one record per client count: two runs done, the third cut short
               rec('dbench', 'b', 'h2', clients=1), rec('dbench', 'b', 'h2', clients=4),
               rec('dbench', 'b', 'h2', clients=1), rec('dbench', 'b', 'h2', clients=4),
               rec('dbench', 'b', 'h2', clients=1)]
    out = resume_plan(p, p, records, 'run-1')
    left = [(r['benchmark'], r['cell'], r['repetition']) for r in out['runs']]
    assert ('dd-write', 'a', 0) not in left and ('dd-write', 'a', 1) not in left and ('dd-write', 'a', 2) not in left
    assert ('dd-write', 'a', 3) in left
    assert [x for x in left if x[:2] == ('dbench', 'b')] == [('dbench', 'b', 3)]
    # untouched pairs keep all their runs, warm-up included
    assert [x for x in left if x[:2] == ('dd-write', 'b')] == [('dd-write', 'b', i) for i in (0, 1, 2, 3)]
    assert out['resume']['skipped'] == len(p['runs']) - len(out['runs'])
    assert {d['benchmark'] + '/' + d['cell']: d['runs'] for d in out['resume']['done']} == {'dd-write/a': 2, 'dbench/b': 3 - 1}
    assert len(out['resume']['records']) == len(records)
    # the order of what is left is the plan's (interleaved) order
    assert out['runs'] == [r for r in p['runs'] if (r['benchmark'], r['cell'], r['repetition']) in left]


def test_a_changed_definition_is_measured_again():
    old = plan()
    matrix = copy.deepcopy(MATRIX)
    matrix['benchmarks'][0]['params']['size'] = '16M'
    new = plan(matrix)
    records = [rec('dd-write', 'a', 'h1'), rec('dd-write', 'a', 'h1')]
    out = resume_plan(new, old, records, 'run-1')
    assert out['runs'] == new['runs']
    assert out['resume']['changed'] == [['dd-write', 'a']] and out['resume']['records'] == []


def test_records_of_pairs_no_longer_in_the_plan_are_ignored():
    p = plan()
    out = resume_plan(p, p, [rec('gone', 'a', 'h1'), rec('dd-write', 'zzz', 'h1')], 'run-1')
    assert out['runs'] == p['runs'] and out['resume']['records'] == []


def test_everything_done_leaves_no_run():
    p = plan()
    records = [rec(b, c, h) for b in ('dd-write', 'dbench') for c, h in (('a', 'h1'), ('b', 'h2')) for _i in range(3)]
    out = resume_plan(p, p, records, 'run-1')
    assert out['runs'] == [] and out['resume']['skipped'] == len(p['runs'])


def test_filter_errors_name_the_problem():
    with pytest.raises(AnsibleFilterError, match='resume_plan: the input must be a plan'):
        resume_filter({'x': 1}, None, [])
    with pytest.raises(AnsibleFilterError, match='records must be a list'):
        resume_filter(plan(), None, 'nope')
    with pytest.raises(AnsibleFilterError, match='previous_plan must be'):
        resume_filter(plan(), 'nope', [])


def test_stamped_cell_key_wins_over_the_previous_plan():
    """Attempt 1 measured size 8M, attempt 2 (16M) re-measured and rewrote plan.json; attempt 3
    (16M) must count only attempt 2's records, whatever plan.json says."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys
    old = plan()
    matrix = copy.deepcopy(MATRIX)
    matrix['benchmarks'][0]['params']['size'] = '16M'
    new = plan(matrix)
    k_old, k_new = plan_keys(old)[('dd-write', 'a')], plan_keys(new)[('dd-write', 'a')]
    records = [dict(rec('dd-write', 'a', 'h1'), cell_key=k_old) for _i in range(3)] + \
              [dict(rec('dd-write', 'a', 'h1'), cell_key=k_new)]
    out = resume_plan(new, new, records, 'run-1')
    assert {d['benchmark'] + '/' + d['cell']: d['runs'] for d in out['resume']['done']} == {'dd-write/a': 1}
    assert len(out['resume']['records']) == 1
