# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/plugin_utils/plan/matrix.py: validation (schemas/matrix-v1.json + semantic checks) and expansion."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import (
    DEFAULT_REPETITIONS, MatrixError, expand_plan, validate_matrix)

EXAMPLE = Path(__file__).resolve().parents[4] / 'inventories' / 'local' / 'group_vars' / 'all' / 'matrix.yml'
HOSTS = ('localhost',)


@pytest.fixture
def matrix():
    with open(EXAMPLE) as f:
        return yaml.safe_load(f)['bench_matrix']


def test_example_matrix_is_valid(matrix):
    assert validate_matrix(matrix, HOSTS) is matrix
    assert validate_matrix(matrix) is matrix


def test_example_matrix_expands(matrix):
    plan = expand_plan(matrix, HOSTS)
    reps, benchmarks, cells = matrix['repetitions'], matrix['benchmarks'], matrix['cells']
    assert (reps, len(benchmarks), len(cells)) == (3, 4, 2)
    assert len(plan['runs']) == reps * len(benchmarks) * len(cells) == 24
    assert plan['name'] == 'local-quick'
    assert plan['baseline'] == 'host-rootfs'
    assert plan['repetitions'] == 3
    assert plan['hosts'] == ['localhost']
    assert [c['name'] for c in plan['cells']] == ['host-rootfs', 'host-tmpfs']
    assert [b['name'] for b in plan['benchmarks']] == [b['name'] for b in benchmarks]


def test_repetitions_are_interleaved(matrix):
    runs = expand_plan(matrix, HOSTS)['runs']
    per_rep = len(matrix['benchmarks']) * len(matrix['cells'])
    # repetition 1 of everything, then repetition 2, ...
    assert [r['repetition'] for r in runs] == [1] * per_rep + [2] * per_rep + [3] * per_rep
    expected_order = [(b['name'], c['name']) for b in matrix['benchmarks'] for c in matrix['cells']]
    for rep in range(3):
        chunk = runs[rep * per_rep:(rep + 1) * per_rep]
        assert [(r['benchmark'], r['cell']) for r in chunk] == expected_order
    # every (benchmark, cell) pair is run exactly `repetitions` times
    pairs = [(r['benchmark'], r['cell']) for r in runs]
    assert all(pairs.count(p) == 3 for p in expected_order)


def test_run_contents(matrix):
    runs = expand_plan(matrix, HOSTS)['runs']
    first, second = runs[0], runs[1]
    assert first == {'host': 'localhost', 'cell': 'host-rootfs', 'path': '/var/tmp', 'tool': 'dd',
                     'benchmark': 'dd-write', 'params': {'test': 'write', 'size': '256M', 'bs': '1M'},
                     'repetition': 1,
                     'labels': {'platform': 'host', 'storage': 'rootfs', 'cell': 'host-rootfs', 'benchmark': 'dd-write'},
                     'guards': {'quiesce': True, 'max_load_per_cpu': 0.75, 'max_other_cpu_pct': 10.0, 'quiesce_wait_s': 0,
                                'cooldown_s': 0, 'warmup': False},
                     'drop_hypervisor_caches': True, 'async_s': 0, 'poll_s': 0}
    assert second['path'] == '/dev/shm'
    assert second['labels'] == {'platform': 'host', 'storage': 'tmpfs', 'cell': 'host-tmpfs', 'benchmark': 'dd-write'}
    fio = [r for r in runs if r['benchmark'] == 'fio-randread'][0]
    assert fio['tool'] == 'fio'
    assert fio['params'] == {'rw': 'randread', 'bs': '4k', 'size': '256M', 'runtime': 5, 'time_based': True}


def test_expansion_does_not_share_or_change_the_input(matrix):
    before = copy.deepcopy(matrix)
    runs = expand_plan(matrix, HOSTS)['runs']
    runs[0]['params']['bs'] = '4k'
    runs[0]['labels']['platform'] = 'x'
    assert runs[2]['params']['bs'] == '1M'
    assert runs[2]['labels']['platform'] == 'host'
    assert matrix == before


def test_defaults(matrix):
    del matrix['repetitions']
    del matrix['baseline']
    plan = expand_plan(matrix)
    assert plan['repetitions'] == DEFAULT_REPETITIONS == 3
    assert plan['baseline'] == 'host-rootfs'  # the first cell
    assert len(plan['runs']) == DEFAULT_REPETITIONS * 4 * 2


def test_benchmark_restricted_to_some_cells(matrix):
    matrix['repetitions'] = 2
    matrix['benchmarks'][3]['cells'] = ['host-tmpfs']
    plan = expand_plan(matrix, HOSTS)
    assert len(plan['runs']) == 2 * (3 * 2 + 1)
    assert {r['cell'] for r in plan['runs'] if r['benchmark'] == 'fio-randread'} == {'host-tmpfs'}


def test_several_hosts_in_cell_order(matrix):
    matrix['cells'].insert(0, {'name': 'vm1', 'host': 'vm1.example', 'path': '/srv'})
    plan = expand_plan(matrix, ['localhost', 'vm1.example'])
    assert plan['hosts'] == ['vm1.example', 'localhost']
    assert plan['cells'][0]['labels'] == {}
    assert plan['runs'][0]['labels'] == {'cell': 'vm1', 'benchmark': 'dd-write'}


def _problems(matrix, hosts=HOSTS):
    with pytest.raises(MatrixError) as exc:
        expand_plan(matrix, hosts)
    return exc.value


def _set(path, value):
    def mutate(m):
        target = m
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


INVALID = [
    ('repetitions-string', _set(('repetitions',), '3'), 'bench_matrix.repetitions'),
    ('repetitions-bool', _set(('repetitions',), True), 'bench_matrix.repetitions'),
    ('repetitions-0', _set(('repetitions',), 0), 'bench_matrix.repetitions'),
    ('repetitions-1000', _set(('repetitions',), 1000), 'bench_matrix.repetitions'),
    ('unknown-tool', _set(('benchmarks', 0, 'tool'), 'iozone'), 'bench_matrix.benchmarks[0].tool'),
    ('unknown-dd-param', _set(('benchmarks', 1, 'params', 'iodepth'), 4), 'bench_matrix.benchmarks[1].params'),
    ('unknown-fio-param', _set(('benchmarks', 2, 'params', 'count'), 4), 'bench_matrix.benchmarks[2].params'),
    ('bad-dd-test', _set(('benchmarks', 0, 'params', 'test'), 'erase'), 'bench_matrix.benchmarks[0].params.test'),
    ('bad-fio-rw', _set(('benchmarks', 3, 'params', 'rw'), 'trim'), 'bench_matrix.benchmarks[3].params.rw'),
    ('negative-size-int', _set(('benchmarks', 0, 'params', 'size'), -5), 'bench_matrix.benchmarks[0].params.size'),
    ('negative-size-str', _set(('benchmarks', 2, 'params', 'size'), '-5M'), 'bench_matrix.benchmarks[2].params.size'),
    ('zero-size', _set(('benchmarks', 0, 'params', 'bs'), 0), 'bench_matrix.benchmarks[0].params.bs'),
    ('runtime-string', _set(('benchmarks', 2, 'params', 'runtime'), '5s'), 'bench_matrix.benchmarks[2].params.runtime'),
    ('relative-path', _set(('cells', 1, 'path'), 'dev/shm'), 'bench_matrix.cells[1].path'),
    ('dotdot-path', _set(('cells', 1, 'path'), '/dev/shm/../etc'), 'bench_matrix.cells[1].path'),
    ('dotdot-path-end', _set(('cells', 0, 'path'), '/var/tmp/..'), 'bench_matrix.cells[0].path'),
    ('duplicate-cell', _set(('cells', 1, 'name'), 'host-rootfs'), 'bench_matrix.cells[1].name'),
    ('duplicate-benchmark', _set(('benchmarks', 3, 'name'), 'dd-write'), 'bench_matrix.benchmarks[3].name'),
    ('baseline-not-a-cell', _set(('baseline',), 'nfs'), 'bench_matrix.baseline'),
    ('host-not-in-inventory', _set(('cells', 1, 'host'), 'db1'), 'bench_matrix.cells[1].host'),
    ('benchmark-cell-unknown', _set(('benchmarks', 0, 'cells'), ['host-rootfs', 'nope']),
     'bench_matrix.benchmarks[0].cells[1]'),
    ('bad-cell-name', _set(('cells', 0, 'name'), 'has space'), 'bench_matrix.cells[0].name'),
    ('bad-label-name', _set(('cells', 0, 'labels', 'Platform'), 'x'), 'bench_matrix.cells[0].labels'),
    ('unknown-top-key', _set(('repetition',), 3), 'bench_matrix'),
    ('cell-without-host', lambda m: m['cells'][1].pop('host'), 'bench_matrix.cells[1]'),
    ('no-cells', _set(('cells',), []), 'bench_matrix.cells'),
]


@pytest.mark.parametrize('mutate,field', [pytest.param(m, f, id=i) for i, m, f in INVALID])
def test_invalid_matrix_names_the_field(matrix, mutate, field):
    mutate(matrix)
    err = _problems(matrix)
    assert isinstance(err, ValueError)
    assert str(err).startswith('invalid bench_matrix:\n- ')
    assert any(p.startswith(field + ':') for p in err.problems), err.problems
    assert field + ':' in str(err)


def test_all_problems_are_listed(matrix):
    matrix['repetitions'] = 0
    matrix['cells'][1]['path'] = 'relative'
    matrix['benchmarks'][0]['tool'] = 'iozone'
    err = _problems(matrix)
    fields = [p.split(':')[0] for p in err.problems]
    assert fields == ['bench_matrix.benchmarks[0].tool', 'bench_matrix.cells[1].path', 'bench_matrix.repetitions']
    assert str(err).count('\n- ') == 3


def test_inventory_check_only_when_hosts_given(matrix):
    matrix['cells'][1]['host'] = 'db1'
    assert len(expand_plan(matrix)['runs']) == 24
    assert 'db1' in str(_problems(matrix, ['localhost']))


@pytest.mark.parametrize('value', [None, [], 'bench_matrix', 3])
def test_matrix_must_be_a_mapping(value):
    with pytest.raises(MatrixError, match='bench_matrix: must be a mapping'):
        validate_matrix(value)


@pytest.mark.parametrize('value', ['/var/tmp/..x', '/var/tmp/x..', '/a/...'])
def test_dots_that_are_not_parent_references_are_allowed(matrix, value):
    matrix['cells'][0]['path'] = value
    assert validate_matrix(matrix, HOSTS) is matrix


def test_float_repetitions_is_a_matrix_error_or_a_plan(matrix):
    matrix['repetitions'] = 3.0
    try:
        plan = expand_plan(matrix, HOSTS)
    except MatrixError as e:
        assert 'bench_matrix.repetitions' in str(e)
        return
    assert len(plan['runs']) == 24


def test_methodology_cooldown_warmup_and_gates(matrix):
    m = dict(matrix, methodology={'cooldown_s': 5, 'warmup': True})
    m['benchmarks'] = [dict(matrix['benchmarks'][0], repetitions=2,
                            methodology={'max_cv': 0.05, 'max_repetitions': 6, 'warmup': False})] + matrix['benchmarks'][1:]
    plan = expand_plan(m, HOSTS)
    dd_write = [r for r in plan['runs'] if r['benchmark'] == 'dd-write']
    assert [r['repetition'] for r in dd_write] == [1, 1, 2, 2]  # its own repetitions, no warm-up
    assert [r['guards']['cooldown_s'] for r in dd_write] == [0, 0, 5, 5]
    warm = [r for r in plan['runs'] if r['repetition'] == 0]
    assert warm == plan['runs'][:len(warm)] and len(warm) == 3 * 2  # the other 3 benchmarks x 2 cells, first
    assert all(r['guards']['warmup'] for r in warm)
    assert plan['gates'] == {'dd-write': {'max_cv': 0.05, 'max_repetitions': 6}}


@pytest.mark.parametrize('methodology,message', [
    ({'max_cv': 0.05}, 'max_cv needs max_repetitions'),
    ({'max_cv': 0.05, 'max_repetitions': 2}, 'max_repetitions (2) is below repetitions (3)'),
    ({'cooldown': 3}, "Additional properties are not allowed ('cooldown' was unexpected)"),
    ({'max_cv': 0}, 'bench_matrix.benchmarks[0].methodology.max_cv'),
])
def test_bad_methodology_names_the_field(matrix, methodology, message):
    m = dict(matrix)
    m['benchmarks'] = [dict(matrix['benchmarks'][0], methodology=methodology)] + matrix['benchmarks'][1:]
    with pytest.raises(MatrixError) as e:
        expand_plan(m, HOSTS)
    assert message in str(e.value) and 'bench_matrix.benchmarks[0]' in str(e.value)


def test_long_runs_and_runs_with_a_timeout_go_async():
    from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import estimate_s, run_timing, DEFAULT_METHODOLOGY
    m = dict(DEFAULT_METHODOLOGY)
    assert estimate_s('iperf', {'time': 60}) == 62
    assert estimate_s('dbench', {'clients': [1, 4], 'time': 10}) == 24
    assert estimate_s('dd', {'size': '1G'}) == pytest.approx(1073.74 / 50, rel=1e-3)
    assert estimate_s('dd', {'size': '1G', 'test': 'copy'}) == pytest.approx(2 * 1073.74 / 50, rel=1e-3)
    assert estimate_s('bonnie', {}) is None
    assert run_timing('iperf', {'time': 5}, m) == (0, 0)                      # short: synchronous
    async_s, poll_s = run_timing('dd', {'size': '48G'}, m)                   # the field report's 78 minutes
    assert async_s == int(3 * 48 * 1024 ** 3 / 1e6 / 50) and 5 <= poll_s <= 60
    assert run_timing('bonnie', {}, m)[0] == 6 * 3600                        # unknown length: async, capped
    assert run_timing('iperf', {'time': 5}, dict(m, timeout_s=30)) == (30, 2)  # a timeout: async so it can kill
    assert run_timing('fio', {'runtime': 200}, dict(m, async_after_s=300)) == (0, 0)


def test_timing_reaches_the_runs(matrix):
    matrix = dict(matrix, methodology={'timeout_s': 900})
    runs = expand_plan(matrix, HOSTS)['runs']
    assert {r['async_s'] for r in runs} == {900}


def test_max_other_cpu_pct_reaches_every_run(matrix):
    """The not_quiet threshold (module_utils/run/guards.py) from the matrix, per benchmark over the
    matrix's, the guards' default otherwise; the guards every run gets are ones the module accepts."""
    from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import DEFAULTS, normalize
    plan = expand_plan(matrix, HOSTS)
    assert {r['guards']['max_other_cpu_pct'] for r in plan['runs']} == {DEFAULTS['max_other_cpu_pct']}
    m = dict(matrix, methodology={'max_other_cpu_pct': 35})
    m['benchmarks'] = [dict(matrix['benchmarks'][0], methodology={'max_other_cpu_pct': 2.5})] + matrix['benchmarks'][1:]
    runs = expand_plan(m, HOSTS)['runs']
    first = matrix['benchmarks'][0]['name']
    assert {r['guards']['max_other_cpu_pct'] for r in runs if r['benchmark'] == first} == {2.5}
    assert {r['guards']['max_other_cpu_pct'] for r in runs if r['benchmark'] != first} == {35}
    assert all(normalize(r['guards'])['max_other_cpu_pct'] == r['guards']['max_other_cpu_pct'] for r in runs)


@pytest.mark.parametrize('value,message', [(0, 'less than or equal to the minimum of 0'), (150, 'greater than the maximum of 100'),
                                           ('10', "'10' is not of type 'number'")])
def test_bad_max_other_cpu_pct_names_the_field(matrix, value, message):
    with pytest.raises(MatrixError) as e:
        expand_plan(dict(matrix, methodology={'max_other_cpu_pct': value}), HOSTS)
    assert 'bench_matrix.methodology.max_other_cpu_pct' in str(e.value) and message in str(e.value), str(e.value)


def test_a_label_value_has_a_length_limit(matrix):
    """Before: a 20,000-character label was taken and pushed the HTML report's tables off the page."""
    matrix['cells'][0]['labels']['storage'] = 'x' * 20000
    with pytest.raises(MatrixError) as e:
        validate_matrix(matrix, HOSTS)
    assert ("bench_matrix.cells[0].labels.storage: '%s... (20002 characters) is too long" % ('x' * 59)) in str(e.value)
    assert len(str(e.value)) < 1000   # named, never repeated whole
    matrix['cells'][0]['labels']['storage'] = 'x' * 256
    assert validate_matrix(matrix, HOSTS) is matrix
