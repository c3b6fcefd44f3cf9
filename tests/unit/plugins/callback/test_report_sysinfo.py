# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cell's environment reaches the report from benchlab.bench.sysinfo or from the cell's first run
(the benchmark modules' option describe), also when that run failed."""

from ansible_collections.benchlab.bench.plugins.callback.report import CallbackModule
from ansible_collections.benchlab.bench.tests.unit.helpers import CallbackResult, CallbackTask


INFO = {'hostname': 'h1', 'kernel': {'release': '6.1'}, 'target': {'path': '/srv', 'fstype': 'xfs'}}


def test_a_failed_first_run_still_describes_its_cell():
    cb = CallbackModule()
    cb.v2_runner_on_failed(CallbackResult('h1', CallbackTask('Benchmark dd w in c1 #1', 'benchlab.bench.run_benchmark'), {
        'failed': True, 'msg': 'dd failed', 'sysinfo': INFO, 'labels': {'cell': 'c1', 'benchmark': 'w'},
        'invocation': {'module_args': {'labels': {'cell': 'c1', 'benchmark': 'w'}}}}))
    assert cb.sysinfo == {'h1/c1': dict(INFO, host='h1', labels={'cell': 'c1', 'benchmark': 'w'})}
    assert [f['cell'] for f in cb.failed] == ['c1']


def test_a_run_that_describes_its_cell_and_the_sysinfo_module_land_in_the_same_place():
    cb = CallbackModule()
    cb.v2_runner_on_ok(CallbackResult('h1', CallbackTask('Benchmark dd w in c1 #1', 'benchlab.bench.run_benchmark'),
                                      {'sysinfo': INFO, 'labels': {'cell': 'c1'}}))
    cb.v2_runner_on_ok(CallbackResult('h2', CallbackTask('Describe', 'benchlab.bench.sysinfo'),
                                      {'sysinfo': dict(INFO, hostname='h2'), 'labels': {'cell': 'c2'}}))
    assert sorted(cb.sysinfo) == ['h1/c1', 'h2/c2'] and cb.sysinfo['h2/c2']['hostname'] == 'h2'
    # a failure of some other task that happens to return sysinfo is not a benchmark's: nothing kept
    cb.v2_runner_on_failed(CallbackResult('h1', CallbackTask('cmd', 'ansible.builtin.command'),
                                          {'failed': True, 'sysinfo': INFO, 'labels': {'cell': 'c3'}}))
    assert 'h1/c3' not in cb.sysinfo
