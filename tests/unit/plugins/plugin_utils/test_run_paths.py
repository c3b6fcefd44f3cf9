# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 19 / 15 / 29: every run takes the one path (benchlab.bench.run_benchmark); what a batch
holds and which phases a run needs (plugin_utils/plan/runpath.py through schedule.plan_schedule), and the
one planning path's host labels (matrix_plan labels_var)."""

from __future__ import annotations

import pytest

from ansible_collections.benchlab.bench.plugins.filter.matrix_plan import matrix_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.schedule import plan_schedule


def _matrix(tool='dd', params=None, hosts=('h1',), reps=1):
    return {'name': 'm', 'repetitions': reps,
            'cells': [{'name': 'c-%s' % h, 'host': h, 'path': '/srv', 'labels': {'storage': 'disk'}} for h in hosts],
            'benchmarks': [{'name': 'b', 'tool': tool, 'params': params or {}}]}


def _batches(plan, hostvars):
    return plan_schedule(plan, hostvars)['batches']


def test_a_plain_run_is_one_call_without_phases():
    plan = expand_plan(_matrix(params={'size': '8M'}), inventory_hosts=['h1'])
    (batch,) = _batches(plan, {'h1': {}})
    (run,) = batch['hosts']['h1']['runs']
    assert batch['hosts']['h1']['phases'] == [] and run['phases'] == [] and run['key'] and run['index'] == 0
    assert run['step'] == 0 and run['describe'] is True and run['limit_s'] == 900


@pytest.mark.parametrize('hostvars,phase', [
    ({'bench_hypervisor_host': 'hv'}, {'name': 'hypervisor-caches', 'at': 'before', 'host': 'hv',
                                       'module': 'benchlab.bench.drop_caches', 'guard': {'hypervisor_caches_dropped': 'dropped'}}),
    ({'drbd_resources': [{'name': 'r0'}], 'drbd_wait_timeout': 60},
     {'name': 'drbd-uptodate', 'at': 'before', 'host': 'h1', 'module': 'benchlab.bench.drbd_status', 'guard': {'drbd': 'drbd'}}),
])
def test_a_host_to_prepare_gets_its_phases_and_runs_one_run_at_a_time(hostvars, phase):
    plan = expand_plan(_matrix(params={'size': '8M'}, reps=2), inventory_hosts=['h1'])
    batches = _batches(plan, {'h1': hostvars})
    assert [len(b['hosts']['h1']['runs']) for b in batches] == [1, 1]
    for b in batches:
        (ph,) = [p for p in b['hosts']['h1']['phases'] if not p.get('observes')]   # observers: test_host_observation
        assert dict((k, ph[k]) for k in phase) == phase
    if 'drbd_resources' in hostvars:    # the host's own wait time, the DRBD role's defaults for the rest
        assert ph['args'] == {'names': ['r0'], 'wait': 'uptodate', 'timeout': 60, 'interval': 5, 'missing_ok': False}


def test_a_hypervisor_drop_the_matrix_turns_off_is_recorded_as_not_done():
    plan = expand_plan(dict(_matrix(params={'size': '8M'}), methodology={'drop_hypervisor_caches': False}),
                       inventory_hosts=['h1'])
    (batch,) = _batches(plan, {'h1': {'bench_hypervisor_host': 'hv'}})
    (run,) = batch['hosts']['h1']['runs']
    assert [p['name'] for p in run['phases'] if not p.get('observes')] == []
    assert run['guards']['hypervisor_caches_dropped'] is False


def test_iperf_and_async_runs_take_the_one_path():
    plan = expand_plan(_matrix(tool='iperf', reps=2), inventory_hosts=['h1'])
    batches = _batches(plan, {'h1': {}})
    assert [len(b['hosts']['h1']['runs']) for b in batches] == [1, 1]      # a run with phases is alone
    assert [p['name'] for p in batches[0]['hosts']['h1']['phases']] == ['server', 'stop']
    slow = expand_plan(_matrix(params={'size': '64G'}, reps=3), inventory_hosts=['h1'])
    assert slow['runs'][0]['async_s'] > 0
    (batch,) = _batches(slow, {'h1': {}})                                    # async runs batch as well
    runs = batch['hosts']['h1']['runs']
    assert len(runs) == 3 and all(r['limit_s'] == r['async_s'] for r in runs)


def test_consecutive_steps_of_one_tool_are_one_batch_per_host():
    m = _matrix(params={'size': '8M'}, hosts=('h1', 'h2'), reps=3)
    plan = expand_plan(m, inventory_hosts=['h1', 'h2'])
    (batch,) = _batches(plan, {'h1': {}, 'h2': {}})
    assert (batch['step'], batch['steps'], batch['together']) == (0, 3, False)
    assert [r['step'] for r in batch['hosts']['h1']['runs']] == [0, 1, 2]
    assert [r['repetition'] for r in batch['hosts']['h2']['runs']] == [1, 2, 3]


def test_a_step_is_batched_only_when_all_its_runs_can_be():
    m = _matrix(params={'size': '8M'}, hosts=('h1', 'h2'), reps=2)
    plan = expand_plan(m, inventory_hosts=['h1', 'h2'])
    batches = _batches(plan, {'h1': {}, 'h2': {'drbd_resources': [{'name': 'r0'}]}})
    assert len(batches) == 2 and all(len(h['runs']) == 1 for b in batches for h in b['hosts'].values())


def test_tools_contending_hosts_and_together_steps_break_a_batch():
    m = _matrix(params={'size': '8M'}, reps=2)
    m['benchmarks'].append({'name': 'f', 'tool': 'fio', 'params': {'size': '8M'}})
    plan = expand_plan(m, inventory_hosts=['h1'])
    assert [len(b['hosts']['h1']['runs']) for b in _batches(plan, {'h1': {}})] == [1, 1, 1, 1]   # dd, fio, dd, fio
    two = expand_plan(_matrix(params={'size': '8M'}, hosts=('g1', 'g2'), reps=2), inventory_hosts=['g1', 'g2'])
    batches = _batches(two, {'g1': {'bench_contention': 'lun'}, 'g2': {'bench_contention': 'lun'}})
    assert len(batches) == 4      # g1 and g2 take turns (one LUN): never in one batch
    assert all(len(b['hosts']) == 1 for b in batches)
    together = expand_plan(dict(_matrix(params={'size': '8M'}, hosts=('g1', 'g2'), reps=2), concurrency=2),
                           inventory_hosts=['g1', 'g2'])
    batches = _batches(together, {'g1': {'bench_contention': 'lun'}, 'g2': {'bench_contention': 'lun'}})
    assert [b['together'] for b in batches] == [True, True] and all(b['steps'] == 1 for b in batches)


def test_a_batch_holds_at_most_batch_max_runs(monkeypatch):
    from ansible_collections.benchlab.bench.plugins.plugin_utils.plan import runpath
    monkeypatch.setattr(runpath, 'BATCH_MAX_RUNS', 2)
    plan = expand_plan(_matrix(params={'size': '8M'}, reps=5), inventory_hosts=['h1'])
    assert [len(b['hosts']['h1']['runs']) for b in _batches(plan, {'h1': {}})] == [2, 2, 1]


def test_cells_take_their_host_labels_and_keep_their_own():
    hostvars = {'h1': {'bench_lab_labels': {'platform': 'lxc', 'storage': 'loop'}}, 'h2': {}}
    plan = matrix_plan(_matrix(hosts=('h1', 'h2')), inventory_hosts=['h1', 'h2'], hostvars=hostvars,
                       labels_var='bench_lab_labels')
    labels = dict((r['cell'], r['labels']) for r in plan['runs'])
    assert labels['c-h1']['platform'] == 'lxc' and labels['c-h1']['storage'] == 'disk'
    assert 'platform' not in labels['c-h2']
    plain = matrix_plan(_matrix(hosts=('h1',)), inventory_hosts=['h1'], hostvars=hostvars, labels_var='')
    assert 'platform' not in plain['runs'][0]['labels']


class _Undefined(object):
    """What ansible-core 2.19+'s HostVars gives for a host not in the inventory: a value that
    fails when used, not a KeyError."""

    def get(self, key, default=None):
        raise AssertionError('an undefined host was used: %s' % key)


class _HostVars(dict):
    def __getitem__(self, host):
        return dict.__getitem__(self, host) if host in self else _Undefined()


def test_a_cell_host_not_in_the_inventory_is_named_by_the_matrix_check():
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel
    hostvars = _HostVars(h1={'bench_lab_labels': {'platform': 'lxc'}})
    with pytest.raises(AnsibleFilterError, match=r"bench_matrix.cells\[1\].host: 'g7' is not in the inventory"):
        matrix_plan(_matrix(hosts=('h1', 'g7')), inventory_hosts=['h1'], hostvars=hostvars, labels_var='bench_lab_labels')
