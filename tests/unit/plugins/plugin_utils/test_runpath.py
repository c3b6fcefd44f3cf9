# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/plugin_utils/plan/runpath.py: the phases a unit declares (iperf's servers and concurrent pairs),
what a run's guards and a phase's options take from earlier phases, and what a batch's results
come to (Outcome): records stamped and stored as each run ends, failures named per run."""

from __future__ import annotations

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import (
    Outcome, PhaseError, by_name, phase_args, phase_problems, phase_run_args, run_guards, run_phases, start_delay_s)

PAIRS = [{'client_host': 'c2', 'server_host': 's2', 'server_address': '10.0.0.2'},
         {'client_host': 'c3', 'server_host': 's3', 'server_address': '10.0.0.3', 'port': 6000}]


def _iperf_run(**params):
    m = {'name': 'm', 'repetitions': 1, 'cells': [{'name': 'lan', 'host': 'c1', 'path': '/tmp'}],
         'benchmarks': [{'name': 'net', 'tool': 'iperf', 'params': dict({'time': 5, 'server_host': 's1',
                                                                         'server_address': '10.0.0.1'}, **params)}]}
    return expand_plan(m, inventory_hosts=['c1', 'c2', 'c3', 's1', 's2', 's3'])['runs'][0]


def test_iperf_declares_its_servers_and_concurrent_pairs():
    run = _iperf_run(concurrent=PAIRS, version=2, udp=True)
    phases = run_phases(run, {})
    assert [(p['name'], p['at'], p['host']) for p in phases] == [
        ('server', 'before', 's1'), ('server-2', 'before', 's2'), ('server-3', 'before', 's3'),
        ('pair-2', 'start', 'c2'), ('pair-3', 'start', 'c3'), ('collect-2', 'after', 'c2'), ('collect-3', 'after', 'c3'),
        ('stop-2', 'after', 's2'), ('stop-3', 'after', 's3'), ('stop', 'after', 's1')]
    by = dict((p['name'], p) for p in phases)
    assert by['server']['args'] == {'role': 'server', 'state': 'started', 'bind': '10.0.0.1', 'version': 2, 'udp': True,
                                    'server_timeout': 125}
    assert by['server-2']['args']['port'] == 5002 and by['server-3']['args']['port'] == 6000   # base 5001 + n, or its own
    pair = by['pair-2']
    assert pair['start_at'] and pair['records'] and pair['async_s'] == 125
    assert pair['args']['labels'] == {'cell': 'lan', 'benchmark': 'net', 'pair': 2, 'pairs': 3, 'client': 'c2'}
    assert pair['args']['guards'] == {'quiesce': False, 'cooldown_s': 0, 'warmup': False}
    assert by['collect-3']['collect'] == 'pair-3' and by['stop']['args_from'] == {'pid': 'server.pid'}
    assert start_delay_s(run) == pytest.approx(2 + 1.5 * 2)
    assert start_delay_s(_iperf_run(concurrent=PAIRS, start_delay_s=9)) == 9
    assert start_delay_s(_iperf_run()) is None


def test_an_iperf2_udp_server_of_several_streams_keeps_a_port_per_stream_and_tells_its_clients():
    """Its server may listen on port..port+parallel-1 (the module decides from the host's iperf 2):
    the pairs' default ports leave that range free, and the server's answer (incr_dstport) becomes
    the option of the run's own client and of each pair's."""
    run = _iperf_run(concurrent=PAIRS, version=2, udp=True, parallel=3)
    by = dict((p['name'], p) for p in run_phases(run, {}))
    assert by['server']['args']['parallel'] == 3 and by['server']['run_args'] == {'incr_dstport': 'incr_dstport'}
    # 5001-5003 the run's own server, 5004-5006 pair 2's; pair 3 has its own port
    assert by['server-2']['args']['port'] == 5004 and by['pair-2']['args']['port'] == 5004
    assert by['server-3']['args']['port'] == 6000
    assert by['pair-2']['args_from'] == {'incr_dstport': 'server-2.incr_dstport'}
    assert phase_args(by['pair-2'], by_name([_done('server-2', pid=7, incr_dstport=True)]))['incr_dstport'] is True
    run = dict(run, phases=list(by.values()))
    assert phase_run_args(run, by_name([_done('server', pid=7, incr_dstport=True)])) == {'incr_dstport': True}
    assert phase_run_args(run, by_name([_done('server', pid=7, incr_dstport=False)])) == {'incr_dstport': False}
    # the server did not say (it failed): the module's default
    assert phase_run_args(run, by_name([_done('server', failed=True, msg='bind')])) == {}
    # TCP or iperf3: a port per server, as before
    plain = dict((p['name'], p) for p in run_phases(_iperf_run(concurrent=PAIRS, version=2, parallel=3), {}))
    assert plain['server-2']['args']['port'] == 5002


def test_the_path_adds_its_own_phases_first():
    run = _iperf_run()
    phases = run_phases(run, {'c1': {'bench_hypervisor_host': 'hv1'}, 'hv1': {}})
    assert [p['name'] for p in phases] == ['hypervisor-caches', 'observe@hv1', 'observed@hv1', 'server', 'stop']


@pytest.mark.parametrize('bad,problem', [
    ([{'name': 'x', 'at': 'during', 'host': 'h', 'module': 'benchlab.bench.iperf'}], 'at must be one of'),
    ([{'name': 'x', 'at': 'before', 'host': 'h', 'module': 'ansible.builtin.shell'}], 'module must be one of benchlab.bench'),
    ([{'name': 'x', 'at': 'before', 'module': 'benchlab.bench.iperf'}], 'no host'),
    ([{'name': 'x', 'at': 'after', 'host': 'h', 'collect': 'y'}], "collects 'y', no earlier phase"),
    ([{'name': 'x', 'at': 'after', 'host': 'h', 'module': 'benchlab.bench.iperf', 'args_from': {'pid': 'srv.pid'}}],
     "args_from 'srv.pid' names no earlier phase"),
    ([{'name': 'x', 'at': 'before', 'host': 'h', 'module': 'benchlab.bench.iperf', 'shell': 'rm'}], 'unknown key(s) shell'),
])
def test_a_wrong_phase_is_named(bad, problem):
    (found,) = phase_problems('newbench', bad)
    assert 'plugins/plugin_utils/benchmarks/newbench.py phases()[0]' in found and problem in found, found


def test_a_unit_declaring_a_wrong_phase_stops_the_plan(monkeypatch):
    from ansible_collections.benchlab.bench.plugins.plugin_utils.benchmarks import iperf
    bad = [{'name': 'x', 'at': 'sometime', 'host': 'h', 'module': 'benchlab.bench.iperf'}]
    monkeypatch.setattr(iperf, 'phases', lambda run, hostvars: bad)
    with pytest.raises(PhaseError, match='iperf.py phases'):
        run_phases(_iperf_run(), {})


def _done(name, **result):
    return dict(result, item={'name': name})


def test_guards_and_options_take_what_earlier_phases_found():
    run = dict(_iperf_run(), phases=[{'name': 'hypervisor-caches', 'at': 'before', 'guard': {'hypervisor_caches_dropped': 'dropped'}},
                                     {'name': 'drbd-uptodate', 'at': 'before', 'guard': {'drbd': 'drbd'}}])
    done = by_name([_done('hypervisor-caches', dropped=True), _done('drbd-uptodate', drbd=[{'name': 'r0'}])])
    guards = run_guards(run, done, start_at=1700000000.5)
    assert guards['hypervisor_caches_dropped'] is True and guards['drbd'] == [{'name': 'r0'}]
    assert guards['start_at'] == 1700000000.5 and guards['cooldown_s'] == 0
    failed = by_name([_done('hypervisor-caches', dropped=False, phase_failed=True, msg='not root')])
    assert run_guards(run, failed)['hypervisor_caches_dropped'] is False     # tried and failed: not dropped
    stop = {'name': 'stop', 'args': {'role': 'server', 'state': 'stopped'}, 'args_from': {'pid': 'server.pid'}}
    assert phase_args(stop, by_name([_done('server', pid=4242)])) == {'role': 'server', 'state': 'stopped', 'pid': 4242}
    assert phase_args(stop, by_name([_done('server', failed=True, msg='bind')])) is None   # nothing to stop
    assert phase_args(stop, {}) is None
    pair = {'name': 'pair-2', 'start_at': True, 'args': {'guards': {'quiesce': False}}}
    assert phase_args(pair, {}, 12.5)['guards'] == {'quiesce': False, 'start_at': 12.5}


def _rec(v, cell='c'):
    return new_record('dd', 'write', {'throughput': metric(v, 'MB/s')}, labels={'cell': cell, 'benchmark': 'b'})


def test_each_run_of_a_batch_is_stamped_stored_and_announced_as_it_ends():
    runs = [{'tool': 'dd', 'benchmark': 'b', 'cell': 'c', 'repetition': r, 'step': r - 1, 'key': 'k', 'labels': {}}
            for r in (1, 2, 3)]
    stored, announced = [], []
    out = Outcome(runs, 'run-9', store=lambda rec: stored.append(rec) or True, announce=announced.append)
    out.spool_lines([{'start': 0}, {'done': 0, 'result': {'changed': True, 'bench_result': _rec(1.0),
                                                          'sysinfo': {'hostname': 'h'}, 'labels': {'cell': 'c'}}}])
    assert [r['repetition'] for r in stored] == [1] and stored[0]['run_id'] == 'run-9' and stored[0]['cell_key'] == 'k'
    out.spool_lines([{'start': 1}, {'done': 1, 'result': {'failed': True, 'msg': 'dd failed (rc=1)'}}])
    out.spool_lines([{'done': 1, 'result': {'bench_result': _rec(9.0)}}])     # a line seen twice counts once
    # the module's final result: run 2 is there (never in the spool), run 0 again (already done)
    out.finish_all({'runs': [{'bench_result': _rec(1.0)}, {'failed': True}, {'bench_result': _rec(3.0)}]})
    assert announced == runs and len(stored) == 2 and out.stored == [True, True]
    res = out.result()
    assert [r['repetition'] for r in res['bench_results']] == [1, 3]
    assert res['failed'] and res['bench_failed_runs'] == [{'benchmark': 'b', 'cell': 'c', 'repetition': 2,
                                                          'msg': 'dd failed (rc=1)'}]
    assert res['msg'].startswith('1 of 3 run(s) failed: b in c #2: dd failed')
    assert res['bench_sysinfo'] == [{'labels': {'cell': 'c'}, 'sysinfo': {'hostname': 'h'}}] and res['changed']


def test_runs_a_dead_module_never_reported_fail_with_its_message():
    runs = [{'tool': 'dd', 'benchmark': 'b', 'cell': 'c', 'repetition': r, 'key': 'k'} for r in (1, 2)]
    out = Outcome(runs, 'r')
    out.spool_lines([{'done': 0, 'result': {'bench_result': _rec(1.0)}}])
    out.finish_all({'failed': True, 'msg': 'Job reached maximum time limit of 960 seconds.'})
    assert [r['repetition'] for r in out.lost()] == [2]
    res = out.result()
    assert res['bench_failed_runs'][0]['msg'] == 'Job reached maximum time limit of 960 seconds.'
    assert res['bench_results_stored'] == [False]      # no callback: the callback stores it when the task ends


def test_a_runs_observed_series_is_stored_before_its_record_or_left_to_the_callback():
    runs = [{'tool': 'dd', 'benchmark': 'b', 'cell': 'c', 'repetition': r, 'key': 'k'} for r in (1, 2)]
    order = []
    out = Outcome(runs, 'r', store=lambda rec: order.append(('record', rec['repetition'])) or True,
                  store_series=lambda sid, data: order.append(('series', sid)) or sid != 'bbbbbbbbbbbb')
    out.finish(0, {'bench_result': _rec(1.0), 'bench_observed': {'aaaaaaaaaaaa': {'t': [0.0]}}})
    out.finish(1, {'bench_result': _rec(2.0), 'bench_observed': {'bbbbbbbbbbbb': {'t': [0.0, 1.0]}}})
    assert order == [('series', 'aaaaaaaaaaaa'), ('record', 1), ('series', 'bbbbbbbbbbbb'), ('record', 2)]
    # the series the run path could not write goes to the report callback with the task's result
    assert out.result()['bench_observed'] == {'bbbbbbbbbbbb': {'t': [0.0, 1.0]}}
    # without a callback (no store), every series is in the result
    out = Outcome(runs[:1], 'r')
    out.finish(0, {'bench_result': _rec(1.0), 'bench_observed': {'aaaaaaaaaaaa': {'t': [0.0]}}})
    assert out.result()['bench_observed'] == {'aaaaaaaaaaaa': {'t': [0.0]}}
