"""Contention-aware scheduling (issue 9): which runs may share a step."""

import itertools

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.filter.schedule_runs import schedule_runs as schedule_filter
from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import GuardError, apply_guards, normalize
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.schedule import (
    ScheduleError, contention, host_resources, plan_schedule, schedule_runs)

HOSTS = ['g1', 'g2', 'g3', 'g4', 'bare']
# g1 and g2 are guests of hv-a; g3 and g4 share a SAN LUN; bare holds only itself
HOSTVARS = {'g1': {'bench_hypervisor_host': 'hv-a'}, 'g2': {'bench_hypervisor_host': 'hv-a'},
            'g3': {'bench_contention': ['lun-7']}, 'g4': {'bench_contention': 'lun-7'}, 'bare': {}}


def matrix(reps=3, concurrency=None, iperf=False):
    m = {'name': 's', 'repetitions': reps, 'cells': [{'name': h, 'host': h, 'path': '/var/tmp'} for h in HOSTS],
         'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]}
    if iperf:
        m['benchmarks'].append({'name': 'tcp', 'tool': 'iperf', 'cells': ['g3'], 'params': {'server_host': 'g1'}})
    if concurrency:
        m['concurrency'] = concurrency
    return m


def plan(**kw):
    return expand_plan(matrix(**kw), inventory_hosts=HOSTS)


def occupied(p, i):
    run = p['runs'][i]
    hosts = {run['host'], (run['params'] or {}).get('server_host')} - {None}
    return hosts


def check(p, steps, concurrency=1):
    """Every run exactly once; per host in plan order; no resource over `concurrency` in a step."""
    done = sorted(i for s in steps for i in s.values())
    assert done == list(range(len(p['runs'])))
    for host in HOSTS:
        mine = [s[host] for s in steps if host in s]
        assert mine == sorted(mine)
        assert all(p['runs'][i]['host'] == host for i in mine)
    res = contention(p, HOSTVARS)
    for s in steps:
        assert s, 'an empty step'
        count = {}
        for i in s.values():
            for r in set(r for h in occupied(p, i) for r in res[h]):
                count[r] = count.get(r, 0) + 1
        assert max(count.values()) <= concurrency, (s, count)


def test_resources_from_the_inventory():
    assert host_resources('g1', HOSTVARS) == ['machine:hv-a']
    assert host_resources('g4', HOSTVARS) == ['machine:g4', 'lun-7']
    assert host_resources('unknown', HOSTVARS) == ['machine:unknown']


def test_contending_hosts_take_turns_and_the_others_run_beside_them():
    p = plan()
    steps = schedule_runs(p['runs'], contention(p, HOSTVARS))
    check(p, steps)
    # 15 runs; the two pairs take turns (6 steps each) while bare runs beside them
    assert len(steps) == 6
    assert max(len(s) for s in steps) == 3
    assert not any({'g1', 'g2'} <= set(s) or {'g3', 'g4'} <= set(s) for s in steps)


def test_without_contention_every_host_runs_in_every_step():
    p = plan()
    steps = schedule_runs(p['runs'], contention(p, {}))
    assert len(steps) == 3 and all(sorted(s) == sorted(HOSTS) for s in steps)


def test_concurrency_on_purpose_lets_a_group_run_together_and_says_so_in_the_guards():
    p = plan(concurrency=2)
    steps = plan_schedule(p, HOSTVARS)['steps']
    check(p, steps, concurrency=2)
    assert len(steps) == 3
    assert all(r['guards']['concurrency'] == 2 for r in p['runs'])
    assert 'concurrency' not in plan()['runs'][0]['guards']
    record, _warnings = apply_guards(p['runs'][0]['guards'], sleep=lambda s: None, competing=lambda: [])
    assert record['concurrency'] == 2
    # its steps of several hosts start on one agreed moment (roles/bench_run/tasks/together.yml)
    sched = plan_schedule(p, HOSTVARS)
    assert sched['together'] == [len(s) > 1 for s in sched['steps']] and any(sched['together'])
    # without concurrency on purpose, hosts that merely do not contend run side by side, unsynchronized
    assert not any(plan_schedule(plan(), HOSTVARS)['together'])


def test_an_iperf_run_holds_its_server_host_too():
    p = plan(iperf=True)
    steps = plan_schedule(p, HOSTVARS)['steps']
    check(p, steps)
    iperf = [i for i, r in enumerate(p['runs']) if r['tool'] == 'iperf']
    for s in steps:
        if any(i in iperf for i in s.values()):
            assert not {'g1', 'g2', 'g4'} & set(s)  # g1 serves; g2 shares its hypervisor; g4 the LUN of g3


@pytest.mark.parametrize('reps,concurrency', list(itertools.product([1, 2, 5], [1, 2, 3])))
def test_schedules_are_valid(reps, concurrency):
    p = plan(reps=reps, concurrency=concurrency if concurrency > 1 else None, iperf=True)
    check(p, plan_schedule(p, HOSTVARS)['steps'], concurrency)


@pytest.mark.parametrize('hostvars,message', [
    ({'g1': {'bench_contention': 7}}, 'g1: bench_contention must be a list'),
    ({'g1': {'bench_contention': ['ok', '']}}, 'g1: bench_contention must be a list'),
    ({'g2': {'bench_hypervisor_host': ['hv']}}, 'g2: bench_hypervisor_host must be a host name'),
])
def test_wrong_contention_variables_name_the_host_and_variable(hostvars, message):
    with pytest.raises(ScheduleError, match=message):
        plan_schedule(plan(), hostvars)
    with pytest.raises(AnsibleFilterError, match='schedule_runs: ' + message):
        schedule_filter(plan(), hostvars)


def test_filter_reads_only_the_contention_variables_and_refuses_a_non_plan():
    out = schedule_filter(plan(), dict(HOSTVARS, bare={'ansible_password': 'x', 'bench_contention': None}))
    assert out['contention']['bare'] == ['machine:bare']
    assert out['contention']['g1'] == ['machine:hv-a']
    with pytest.raises(AnsibleFilterError, match='the input must be a plan'):
        schedule_filter({'cells': []}, HOSTVARS)


def test_guard_concurrency_must_be_a_positive_integer():
    assert normalize({'concurrency': 3})['concurrency'] == 3
    for bad in (0, True, 'two'):
        with pytest.raises(GuardError, match='guards.concurrency'):
            normalize({'concurrency': bad})


def test_a_cells_first_run_describes_it():
    p = plan()
    sched = plan_schedule(p, {'g3': {'bench_contention': 'lun-7'}, 'g4': {'bench_contention': 'lun-7'}})
    described = [p['runs'][i] for i in sched['describe']]
    assert sorted(r['cell'] for r in described) == sched['described_cells'] == sorted(HOSTS)
    for run in described:   # the cell's first run in the schedule (g3 and g4 take turns)
        first = next(i for s in sched['steps'] for i in sorted(s.values()) if p['runs'][i]['cell'] == run['cell'])
        assert p['runs'][first] is run and run['repetition'] == 1
    # the batches carry it on exactly those runs
    flagged = sorted(r['index'] for b in sched['batches'] for h in b['hosts'].values() for r in h['runs'] if r['describe'])
    assert flagged == sched['describe']


def test_a_cell_whose_first_run_has_phases_is_left_to_the_sysinfo_task():
    """g1 and g2 have a hypervisor host (its caches dropped first: a phase): their environment is
    taken by the sysinfo task before any run, as the cell was found; every other cell's first run
    describes it, with or without a variance gate (every run takes the one path)."""
    p = plan()
    sched = plan_schedule(p, HOSTVARS)
    assert sched['described_cells'] == ['bare', 'g3', 'g4']
    gated = dict(p, gates={'dd-write': {'max_cv_pct': 5}})
    assert plan_schedule(gated, {})['described_cells'] == sorted(HOSTS)
    assert plan_schedule(gated, {})['describe'] == plan_schedule(p, {})['describe']


def test_the_steps_keep_the_plans_order_across_contending_hosts():
    """g1 and g2 share a hypervisor: each step holds one of them, in the plan's order (repetition 1 of
    each cell, then 2), never one host's runs as a block."""
    p = expand_plan(dict(matrix(reps=3), cells=[{'name': h, 'host': h, 'path': '/var/tmp'} for h in ('g1', 'g2')]),
                    inventory_hosts=HOSTS)
    steps = schedule_runs(p['runs'], contention(p, HOSTVARS))
    assert [sorted(s.values()) for s in steps] == [[i] for i in range(6)]
    assert [p['runs'][s[h]]['host'] for s in steps for h in s] == ['g1', 'g2'] * 3


def test_a_rounds_runs_are_batched_in_its_order_across_hosts():
    p = expand_plan(dict(matrix(reps=1), cells=[{'name': h, 'host': h, 'path': '/var/tmp'} for h in ('g1', 'g2', 'bare')]),
                    inventory_hosts=HOSTS)
    extra = [dict(r, repetition=2, gate=True) for r in p['runs']] + [dict(r, repetition=3, gate=True) for r in p['runs']]
    out = schedule_filter(p, HOSTVARS, extra=extra)
    assert list(out) == ['batches']
    order = [(h, r['repetition']) for b in out['batches'] for h, part in b['hosts'].items() for r in part['runs']]
    # g1 and g2 take turns in the round's order; bare, which contends with neither, fills the steps beside them
    assert order == [('g1', 2), ('bare', 2), ('g2', 2), ('bare', 3), ('g1', 3), ('g2', 3)]
    assert [sorted(b['hosts']) for b in out['batches']] == [['bare', 'g1'], ['bare', 'g2'], ['g1'], ['g2']]
    runs = [r for b in out['batches'] for part in b['hosts'].values() for r in part['runs']]
    assert all(r['index'] is None and 'step' not in r and r['gate'] for r in runs)
    assert not any(b['together'] for b in out['batches'])
