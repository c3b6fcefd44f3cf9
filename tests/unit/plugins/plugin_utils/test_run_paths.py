# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 19 / 15: which steps are one task (schedule.plan_schedule's one_task), and the one planning
path's host labels (matrix_plan labels_var)."""

from __future__ import annotations

import pytest

from ansible_collections.benchlab.bench.plugins.filter.matrix_plan import matrix_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.schedule import plan_schedule


def _matrix(tool='dd', params=None, hosts=('h1',)):
    return {'name': 'm', 'repetitions': 1,
            'cells': [{'name': 'c-%s' % h, 'host': h, 'path': '/srv', 'labels': {'storage': 'disk'}} for h in hosts],
            'benchmarks': [{'name': 'b', 'tool': tool, 'params': params or {}}]}


def test_a_plain_run_is_one_task():
    plan = expand_plan(_matrix(params={'size': '8M'}), inventory_hosts=['h1'])
    assert plan_schedule(plan, {'h1': {}})['one_task'] == [True]


@pytest.mark.parametrize('hostvars', [{'bench_hypervisor_host': 'hv'}, {'drbd_resources': [{'name': 'r0'}]}])
def test_a_host_to_prepare_takes_the_task_files(hostvars):
    plan = expand_plan(_matrix(params={'size': '8M'}), inventory_hosts=['h1'])
    assert plan_schedule(plan, {'h1': hostvars})['one_task'] == [False]


def test_iperf_and_async_runs_take_the_task_files():
    plan = expand_plan(_matrix(tool='iperf'), inventory_hosts=['h1'])
    assert plan_schedule(plan, {'h1': {}})['one_task'] == [False]
    slow = expand_plan(_matrix(params={'size': '64G'}), inventory_hosts=['h1'])
    assert slow['runs'][0]['async_s'] > 0
    assert plan_schedule(slow, {'h1': {}})['one_task'] == [False]


def test_a_step_is_one_task_only_when_all_its_runs_are():
    m = _matrix(params={'size': '8M'}, hosts=('h1', 'h2'))
    plan = expand_plan(m, inventory_hosts=['h1', 'h2'])
    sched = plan_schedule(plan, {'h1': {}, 'h2': {'drbd_resources': [{'name': 'r0'}]}})
    assert len(sched['steps']) == 1 and sched['one_task'] == [False]


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
