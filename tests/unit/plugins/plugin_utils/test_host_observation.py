"""The host below a run, observed through the one run path (plugin_utils/plan/runpath.py observer_phases,
amend_records), its figures (module_utils/observe/observe.py: the guest's cgroup, the kernel threads, a
sampler cut to another machine's window) and what the explanation makes of them (explain.py
host_verdict, host_cost). The live side: tests/integration/test_host_observe_live.py."""

import os
import subprocess
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.observe.observe import (
    cgroup_cpu_ns, cgroup_of_pid, crop_samples, kthread_ticks, summarize)
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.explain import explain_cell, host_cost, run_verdicts
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import (
    CLOCK_SLACK_S, CLOCK_TOLERANCE_S, amend_records, by_name, clock_reading, clock_shift, clocks_apart, drbd_peers,
    local_observers, observer_args, observer_phases, phase_args, plan_batches, run_guards, start_guards, stop_left_observers,
    with_clock)
from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import create_workdir, proc_start_time, update_marker
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.schedule import plan_schedule

FIXTURES = Path(__file__).resolve().parents[3] / 'unit' / 'fixtures' / 'observe' / 'host-guest-cgroup'
GUEST = {'bench_hypervisor_host': 'hv', 'bench_hypervisor_disk': '/var/lib/benchlab/bl/bl-g2.img',
         'bench_hypervisor_guest': {'kind': 'lxc', 'name': 'bl-g2'}}
DRBD = {'drbd_resources': [{'name': 'r0', 'disk': '/dev/vdb', 'nodes': [
    {'name': 'p1', 'address': '10.0.0.1:7788'}, {'name': 'p2', 'address': '10.0.0.2:7788', 'disk': '/dev/vdc'},
    {'name': 'elsewhere', 'address': '[fd00::3]:7788'}]}]}


def _plan(reps=2, methodology=None):
    m = {'name': 'm', 'repetitions': reps, 'cells': [{'name': 'c', 'host': 'h1', 'path': '/var/tmp'}],
         'benchmarks': [{'name': 'dd', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]}
    if methodology:
        m['methodology'] = methodology
    return expand_plan(m, inventory_hosts=['h1'])


def _batches(plan, hostvars):
    return plan_schedule(plan, hostvars)['batches']


def test_a_guest_gets_an_observer_on_its_host_before_and_after_each_run():
    plan = _plan()
    batches = _batches(plan, {'h1': GUEST, 'hv': {}})
    assert [len(b['hosts']['h1']['runs']) for b in batches] == [1, 1]      # a run with phases is alone
    phases = dict((p['name'], p) for p in batches[0]['hosts']['h1']['phases'])
    start, stop = phases['observe@hv'], phases['observed@hv']
    expected = ('start', 'hv', 'benchlab.bench.observe', 'hypervisor')
    assert (start['at'], start['host'], start['module'], start['observes']) == expected
    assert start['args'] == {'paths': ['/var/lib/benchlab/bl/bl-g2.img'], 'guest': {'kind': 'lxc', 'name': 'bl-g2'},
                             'state': 'started', 'interval_s': 1.0, 'max_s': 960}
    assert stop['at'] == 'after' and stop['args'] == {'state': 'stopped'} and stop['ignore_errors'] is True
    assert stop['args_from'] == {'id': 'observe@hv.observe_id'}
    # the stop takes the sampler the start made; a start that did not run: nothing to stop
    done = by_name([dict(item=start, observe_id='/var/tmp/benchlab-observe-abc', pid=42, pid_start=99)])
    assert phase_args(stop, done) == {'state': 'stopped', 'id': '/var/tmp/benchlab-observe-abc'}
    assert phase_args(stop, by_name([dict(item=start, failed=False, phase_failed=True)])) is None


def test_observation_off_means_no_observer_and_a_plain_run_is_still_batched():
    off = _batches(_plan(methodology={'observe_interval_s': 0}), {'h1': GUEST, 'hv': {}})
    assert all(not p.get('observes') for b in off for p in b['hosts']['h1']['phases'])
    faster = _batches(_plan(methodology={'observe_interval_s': 0.25}), {'h1': GUEST, 'hv': {}})
    assert faster[0]['hosts']['h1']['phases'][1]['args']['interval_s'] == 0.25
    (plain,) = _batches(_plan(reps=3), {'h1': {}})
    assert len(plain['hosts']['h1']['runs']) == 3 and plain['hosts']['h1']['phases'] == []


def test_a_hypervisor_host_the_inventory_does_not_name_is_not_observed():
    """bench_hypervisor_host may be a contention label only (no such inventory host): no observer is
    delegated to it (Ansible cannot reach it: the runs failed), the cache drop stays as it was."""
    batches = _batches(_plan(), {'h1': GUEST})
    phases = [p for b in batches for p in b['hosts']['h1']['phases']]
    assert not any(p.get('observes') for p in phases)
    assert [p['name'] for p in phases] == ['hypervisor-caches', 'hypervisor-caches']
    # this controller needs no inventory entry (Ansible's implicit localhost): it is observed
    local = _batches(_plan(), {'h1': dict(GUEST, bench_hypervisor_host='localhost')})
    assert [p['host'] for p in local[0]['hosts']['h1']['phases'] if p.get('observes')] == ['localhost', 'localhost']


def test_a_drbd_host_observes_the_peers_the_inventory_names():
    hostvars = {'p1': DRBD, 'p2': {}}
    assert drbd_peers('p1', DRBD, hostvars) == [('p2', ['/dev/vdc'], ['10.0.0.1'])]   # 'elsewhere': not in the inventory
    run = dict(_plan()['runs'][0], host='p1')
    (start, stop) = observer_phases(run, hostvars)
    assert start['host'] == 'p2' and start['observes'] == 'drbd_peer'
    assert start['args']['paths'] == ['/dev/vdc'] and start['args']['toward'] == ['10.0.0.1']
    assert stop['name'] == 'observed@p2'
    # the node named after this host by drbd_node_name; an IPv6 address without its brackets
    v6 = {'drbd_node_name': 'elsewhere', 'drbd_resources': DRBD['drbd_resources']}
    assert drbd_peers('h9', v6, {'p1': {}, 'p2': {}}) == [('p1', ['/dev/vdb'], ['fd00::3']), ('p2', ['/dev/vdc'], ['fd00::3'])]


def _held(wall_start=1000.0, window_s=2.0, key='k1', repetition=1, written=512 * 1024 * 1024):
    return {'tool': 'dd', 'test': 'write', 'cell_key': key, 'repetition': repetition,
            'observed': {'interval_s': 1, 'samples': 3, 'window_s': window_s, 'wall_start': wall_start,
                         'devices': [{'name': 'loop2', 'kind': 'loop', 'layer': 2, 'read_bytes': 0,
                                      'write_bytes': written, 'util_pct_mean': 40.0}],
                         'tool': {'write_bytes': written, 'rchar': written}, 'missing': []}}


def test_the_stop_is_cut_to_the_targets_window_and_carries_the_owner():
    """A container's host reads the same clock: the target's window as it is, no clock read; a qemu
    guest's host (its clock starts from the emulated RTC, whole seconds) and a DRBD peer have clocks
    of their own: without their readings, the window widened by CLOCK_TOLERANCE_S on each side (a
    guest's 0.6 s synced write under cache=none, its host's disk seen with 1.2 of its 17 MB in the
    unwidened window: writes_elided where nothing was elided)."""
    start = {'name': 'observe@hv', 'at': 'start', 'host': 'hv', 'observes': 'hypervisor',
             'args': {'state': 'started', 'guest': {'kind': 'lxc', 'name': 'bl-g2'}}}
    run = {'key': 'k1', 'repetition': 1, 'phases': [start]}
    stop = {'name': 'observed@hv', 'at': 'after', 'host': 'hv', 'observes': 'hypervisor'}
    held = [_held(), _held(wall_start=5000.0, key='other')]     # another run's record: not this one's window
    reading = {'offset_s': 3.0, 'error_s': 0.1}
    assert observer_args(stop, {'state': 'stopped', 'id': '/x'}, run, held, 'run-1', clock=reading) == {
        'state': 'stopped', 'id': '/x', 'run_id': 'run-1', 'run_key': 'k1', 'since': 1000.0, 'until': 1002.0}
    assert not clocks_apart(dict(run, phases=[start, stop]))
    assert observer_args(start, {'state': 'started'}, run, held, 'run-1') == {
        'state': 'started', 'run_id': 'run-1', 'run_key': 'k1'}
    m = CLOCK_TOLERANCE_S
    assert m >= 1.0
    vm = dict(run, phases=[dict(start, args={'state': 'started', 'guest': {'kind': 'libvirt', 'name': 'g1'}}), stop])
    peer = dict(run, phases=[dict(start, observes='drbd_peer', args={'state': 'started'}), dict(stop, observes='drbd_peer')])
    for other, phase in ((vm, stop), (peer, dict(stop, observes='drbd_peer'))):
        assert clocks_apart(other)
        got = observer_args(phase, {'state': 'stopped', 'id': '/x'}, other, held, 'run-1')
        assert (got['since'], got['until']) == (1000.0 - m, 1002.0 + m), got
        # the host's clock read but not the target's (an older record): still the tolerance
        got = observer_args(phase, {'state': 'stopped', 'id': '/x'}, other, held, 'run-1', clock=reading)
        assert (got['since'], got['until']) == (1000.0 - m, 1002.0 + m), got


def test_read_clocks_carry_the_targets_window_onto_the_hosts_clock():
    """A guest whose clock is 2.5 s behind the controller's (read to within 0.2 s) under a host 0.5 s
    ahead of it (read to within 0.05 s): the guest's window [1000, 1002] is the host's [1003, 1005],
    widened by the readings' errors and the slack only; the 1 s guess ended before it began."""
    start = {'name': 'observe@hv', 'at': 'start', 'host': 'hv', 'observes': 'hypervisor',
             'args': {'state': 'started', 'guest': {'kind': 'libvirt', 'name': 'g1'}}}
    stop = {'name': 'observed@hv', 'at': 'after', 'host': 'hv', 'observes': 'hypervisor'}
    run = {'key': 'k1', 'repetition': 1, 'phases': [start, stop]}
    guest = clock_reading(100.0, '97.5\n', 100.4)
    assert guest == {'offset_s': -2.7, 'error_s': 0.2}
    host = clock_reading(200.0, ' 200.55 ', 200.1)
    assert host == {'offset_s': 0.5, 'error_s': 0.05}
    held = with_clock([_held(), _held(wall_start=5000.0, key='other')], guest)
    assert all(r['observed']['clock'] == guest for r in held)
    shift, margin = clock_shift(stop, run, held[:1], host)
    assert shift == 3.2 and margin == round(0.25 + CLOCK_SLACK_S, 4)
    got = observer_args(stop, {'state': 'stopped', 'id': '/x'}, run, held, 'run-1', clock=host)
    assert (got['since'], got['until']) == (1000.0 + 3.2 - margin, 1002.0 + 3.2 + margin), got
    guessed = observer_args(stop, {'state': 'stopped', 'id': '/x'}, run, held[:1], 'run-1')
    assert guessed['until'] < 1000.0 + 3.2      # the guess's window ended before the run began on the host


def test_the_agreed_start_carries_the_hosts_clock_where_the_reading_tells_it_apart():
    """start_guards: the controller's moment, and the host's offset where it exceeds its reading's
    error (else 0: the clocks agree as far as can be told); no reading, no offset; no start, nothing."""
    assert start_guards(None, {'offset_s': 2.0, 'error_s': 0.1}) == {}
    assert start_guards(1000, None) == {'start_at': 1000.0}
    assert start_guards(1000, {'offset_s': -2.0, 'error_s': 0.1}) == {'start_at': 1000.0, 'clock_offset_s': -2.0}
    assert start_guards(1000, {'offset_s': 0.004, 'error_s': 0.01}) == {'start_at': 1000.0, 'clock_offset_s': 0.0}
    run = {'key': 'k1', 'guards': {'quiesce': True}}
    assert run_guards(run, {}, 1000.5, {'offset_s': 1.5, 'error_s': 0.2}) == {
        'quiesce': True, 'start_at': 1000.5, 'clock_offset_s': 1.5}
    phase = {'name': 'pair-2', 'start_at': True, 'args': {'guards': {'quiesce': False}}}
    assert phase_args(phase, {}, 1000.5, {'offset_s': 1.5, 'error_s': 0.2})['guards'] == {
        'quiesce': False, 'start_at': 1000.5, 'clock_offset_s': 1.5}


def test_a_clock_that_cannot_be_read_is_none():
    """busybox date prints %N as it is; no output, an error's, a clock reading that is not a number,
    or a controller clock that went backwards: no reading (the tolerance is used), never a traceback."""
    for out in ('1796662650.N', '', None, 'date: invalid date', 'nan', 'inf', b'12'.decode() + 'x'):
        assert clock_reading(10.0, out, 10.2) is None, out
    assert clock_reading(10.2, '10.1', 10.0) is None
    assert with_clock([_held()], None) == [_held()]
    assert with_clock([{'tool': 'dd'}], {'offset_s': 0.0, 'error_s': 0.0}) == [{'tool': 'dd'}]


def _host_obs(busy=40.0, guest=20.0, kthreads=5.0, devices=None, window_s=2.0):
    cpu = {'busy_pct_mean': busy, 'cores': 2, 'kthread_pct': kthreads, 'kthread_cpu_s': kthreads / 100.0 * 2 * window_s}
    if guest is not None:
        cpu.update(guest_pct=guest, guest_cpu_s=guest / 100.0 * 2 * window_s)
    return {'interval_s': 1, 'samples': 3, 'window_s': window_s, 'cpu': cpu, 'guest_devices': ['loop2', 'vda'],
            'devices': devices if devices is not None else [
                {'name': 'loop2', 'kind': 'loop', 'layer': 0, 'read_bytes': 0, 'write_bytes': 512 * 2 ** 20,
                 'util_pct_mean': 50.0},
                {'name': 'vda', 'kind': 'disk', 'layer': 3, 'read_bytes': 0, 'write_bytes': 530 * 2 ** 20,
                 'util_pct_mean': 95.0}], 'series': 'abc'}


def test_amend_puts_the_hosts_observation_on_the_runs_records():
    run = {'key': 'k1', 'repetition': 1}
    start = {'name': 'observe@hv', 'at': 'start', 'host': 'hv', 'observes': 'hypervisor'}
    stop_hv = {'name': 'observed@hv', 'at': 'after', 'host': 'hv', 'observes': 'hypervisor'}
    stop_p2 = {'name': 'observed@p2', 'at': 'after', 'host': 'p2', 'observes': 'drbd_peer'}
    done = [dict(item=start, observe_id='/x'), dict(item=stop_hv, observed=_host_obs()),
            dict(item=stop_p2, failed=False, phase_failed=True, msg='observed@p2 on p2: unreachable')]
    (rec,) = amend_records([_held(), _held(key='other')], run, done)
    host = rec['observed']['host']
    assert host['name'] == 'hv' and host['role'] == 'hypervisor' and host['series'] == 'abc'
    assert host['cost'] == host_cost(rec, host)
    # 40 % of 2 cores for 2 s = 1.6 CPU s, less the guest's 0.8 s, over 0.537 GB
    assert host['cost']['cpu_s'] == 0.8 and host['cost']['cpu_s_per_gb'] == round(0.8 / (512 * 2 ** 20 / 1e9), 3)
    assert host['cost']['kernel_cpu_s'] == 0.2 and host['cost']['outside_guest'] is True
    assert 'peers' not in rec['observed']
    assert rec['observed']['missing'] == [{'source': 'observer on p2', 'why': 'observed@p2 on p2: unreachable'}]
    # two observers: the first is observed.host, the next one in observed.peers
    two = amend_records([_held()], run, [dict(item=stop_hv, observed=_host_obs()),
                                         dict(item=stop_p2, observed=_host_obs(guest=None))])[0]['observed']
    assert two['host']['name'] == 'hv' and [p['name'] for p in two['peers']] == ['p2']
    # the line of the cell says the cost
    explained, _flags = explain_cell([rec])
    assert host['cost']['guest_cpu_s_per_gb'] == round(0.8 / (512 * 2 ** 20 / 1e9), 3)
    assert 'guest_cpu_s_per_gb' not in host_cost(rec, dict(host, cpu=dict(host['cpu'], guest_cpu_s=None)))
    assert 'host hv: 1.49 CPU s per GB moved outside the guest (0.37 in its kernel threads; the guest itself 1.49), ' \
        'guest 268.4 MB/s' \
        in explained['line'], explained['line']


@pytest.mark.parametrize('host,fires', [
    (_host_obs(busy=99.0, guest=15.0, kthreads=2.0), 'the host\'s CPUs 99 % busy, 82 % of them with other work than '
                                                     'this guest (its own cgroup 15 %, kernel threads 2.0 %)'),
    # busy, but with the guest and the layers' kernel threads (loop, writeback): not other work
    (_host_obs(busy=95.0, guest=40.0, kthreads=30.0), None),
    # the guest's cgroup unknown: the CPU is not judged
    (_host_obs(busy=99.0, guest=None, kthreads=2.0), None),
    # the disk under the image busy with the guest's own bytes: no; with twice them and more: yes
    (_host_obs(), None),
    (_host_obs(devices=[{'name': 'vda', 'kind': 'disk', 'layer': 3, 'read_bytes': 900 * 2 ** 20,
                         'write_bytes': 600 * 2 ** 20, 'util_pct_mean': 97.0}]),
     'the host\'s vda 97 % busy with other work than this guest, 66 % of its bytes'),
    # a device outside the guest's stack
    (_host_obs(devices=[{'name': 'sdb', 'kind': 'disk', 'layer': 0, 'read_bytes': 2 ** 20, 'write_bytes': 0,
                         'util_pct_mean': 91.0}]), 'the host\'s sdb 91 % busy with other work than this guest, 100 % '
                                                   'of its bytes'),
])
def test_host_busy_is_work_that_is_not_the_guests(host, fires):
    rec = _held()
    rec['observed']['host'] = host
    got = [v['message'] for v in run_verdicts(rec) if v['code'] == 'host_busy']
    assert got == ([fires] if fires else [])


def test_only_observers_on_this_controller_are_stopped_by_the_run_path():
    start = {'name': 'observe@localhost', 'at': 'start', 'host': 'localhost', 'observes': 'hypervisor'}
    remote = dict(start, name='observe@hv', host='hv')
    results = by_name([dict(item=start, pid=42, pid_start=1234, observe_id='/var/tmp/benchlab-observe-a'),
                       dict(item=remote, pid=43, pid_start=5, observe_id='/var/tmp/benchlab-observe-b'),
                       dict(item={'name': 'server', 'at': 'before', 'host': 'localhost'}, pid=44, pid_start=6)])
    assert local_observers(results, {'localhost': {'ansible_connection': 'local'}, 'hv': {'ansible_host': '10.0.0.9'}}) \
        == [(42, 1234, '/var/tmp/benchlab-observe-a')]
    assert local_observers(results, {'hv': {'ansible_connection': 'local'}}) == [
        (42, 1234, '/var/tmp/benchlab-observe-a'), (43, 5, '/var/tmp/benchlab-observe-b')]


def _sampler(tmp_path, **marker):
    """A state directory as the observe module makes it, its marker recording a real process (a
    sleep in a session of its own, standing in for the sampler)."""
    workdir = create_workdir(str(tmp_path), 'observe', run_id='r1', run_key='k1')
    proc = subprocess.Popen(['sleep', '60'], start_new_session=True)
    update_marker(workdir, pgid=proc.pid, pid_start=proc_start_time(proc.pid), **marker)
    return workdir, proc


def test_an_observer_left_running_at_the_end_is_stopped_and_its_directory_removed(tmp_path):
    workdir, proc = _sampler(tmp_path)
    try:
        assert stop_left_observers([(proc.pid, proc_start_time(proc.pid), workdir)]) == [os.path.realpath(workdir)]
        assert proc.wait(timeout=10) is not None and not os.path.exists(workdir)
        # stopped by its after phase (its directory gone): nothing to do
        assert stop_left_observers([(proc.pid, 1, workdir)]) == []
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize('what', ['another process', 'keep', 'not an observer'])
def test_a_directory_that_does_not_record_that_observer_is_left_alone(tmp_path, what):
    workdir, proc = _sampler(tmp_path, **({'keep': True} if what == 'keep' else {}))
    try:
        start = proc_start_time(proc.pid)
        pid = proc.pid + 100000 if what == 'another process' else proc.pid
        if what == 'not an observer':
            other = os.path.join(str(tmp_path), 'benchlab-fio-x')
            os.rename(workdir, other)
            workdir = other
        assert stop_left_observers([(pid, start, workdir)]) == []
        assert os.path.isdir(workdir) and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_crop_keeps_the_samples_that_bracket_the_window():
    samples = [{'t': i, 'wall': 100.0 + i} for i in range(10)]
    assert [s['wall'] for s in crop_samples(samples, 102.5, 105.2)] == [102.0, 103.0, 104.0, 105.0, 106.0]
    assert crop_samples(samples, None, None) == samples
    assert crop_samples([{'t': 0}, {'t': 1}], 1, 2) == [{'t': 0}, {'t': 1}]        # no wall time: all
    assert crop_samples(samples, 120.0, 130.0) == []                                # after the sampler: none


def test_the_guests_cgroup_and_the_kernel_threads_from_captured_files(tmp_path):
    proc, cg = tmp_path / 'proc', tmp_path / 'cgroup'
    (proc / '4242').mkdir(parents=True)
    (proc / '4242' / 'cgroup').write_text((FIXTURES / 'pid.cgroup').read_text())
    group = cg / 'cpuacct' / 'benchlab-capture-21539'
    group.mkdir(parents=True)
    (group / 'cpuacct.usage').write_text((FIXTURES / 'cpuacct.usage').read_text())
    assert cgroup_of_pid(4242, str(proc), str(cg)) == str(group)
    assert cgroup_cpu_ns(str(group)) == 2352579823
    (group / 'cpu.stat').write_text('usage_usec 1500\nuser_usec 1000\n')     # cgroup v2's file wins
    assert cgroup_cpu_ns(str(group)) == 1500000
    # a process in the root cgroup is no guest of its own
    (proc / '1').mkdir()
    (proc / '1' / 'cgroup').write_text('2:cpuacct:/\n0::/\n')
    assert cgroup_of_pid(1, str(proc), str(cg)) is None
    # the kernel threads: kthreadd's children, each one's utime + stime
    children = (FIXTURES / 'kthreadd.children').read_text().split()
    (proc / '2' / 'task' / '2').mkdir(parents=True)
    (proc / '2' / 'task' / '2' / 'children').write_text(' '.join(children))
    expected = 0
    for pid, line in zip(children, (FIXTURES / 'kthreads.stat').read_text().splitlines()):
        (proc / pid).mkdir(exist_ok=True)
        (proc / pid / 'stat').write_text(line + '\n')
        f = line.rsplit(')', 1)[1].split()
        expected += int(f[11]) + int(f[12])
    assert kthread_ticks(str(proc)) == expected and expected > 0


def test_a_hosts_summary_tells_the_guests_cpu_and_the_kernel_threads():
    a = {'t': 0.0, 'wall': 10.0, 'cpu': {'cpu': [100, 0, 50, 800, 50, 0, 0, 0]}, 'guest_ns': 0, 'kthreads': 10}
    b = {'t': 2.0, 'wall': 12.0, 'cpu': {'cpu': [300, 0, 150, 800, 50, 0, 0, 0]}, 'guest_ns': int(1.5e9), 'kthreads': 60}
    obs, _series = summarize([a, b], [], 1.0, ticks=100)
    assert obs['wall_start'] == 10.0
    assert obs['cpu']['guest_cpu_s'] == 1.5 and obs['cpu']['guest_pct'] == 75.0      # of 1 core x 2 s
    assert obs['cpu']['kthread_cpu_s'] == 0.5 and obs['cpu']['kthread_pct'] == 25.0
    # a target's summary has neither
    obs, _series = summarize([dict(a, guest_ns=None), dict(b, guest_ns=None)], [], 1.0, ticks=100)
    assert 'guest_pct' not in obs['cpu']


def test_schedule_looks_up_a_drbd_hosts_peers_in_the_inventory():
    from ansible_collections.benchlab.bench.plugins.filter.schedule_runs import _known
    plan = _plan(reps=1)
    known = _known(plan['runs'], {'h1': DRBD, 'p2': {'ansible_host': '10.0.0.2'}})
    assert set(known) == {'h1', 'p2'}
    (batch,) = plan_batches(plan, [{'h1': 0}], [False], plan_keys(plan), set(), known)
    assert [p['name'] for p in batch['hosts']['h1']['phases'] if p.get('observes')] == ['observe@p2', 'observed@p2']
    assert os.path.basename(str(FIXTURES)) == 'host-guest-cgroup'


def test_guests_measured_together_in_one_step_are_not_observed_from_their_host():
    m = {'name': 'm', 'repetitions': 1, 'concurrency': 2,
         'cells': [{'name': 'c1', 'host': 'h1', 'path': '/var/tmp'}, {'name': 'c2', 'host': 'h2', 'path': '/var/tmp'}],
         'benchmarks': [{'name': 'dd', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]}
    plan = expand_plan(m, inventory_hosts=['h1', 'h2'])
    batches = _batches(plan, {'h1': GUEST, 'h2': GUEST, 'hv': {}})
    together = [b for b in batches if b['together']]
    assert together and all(len(b['hosts']) == 2 for b in together)
    phases = [p for b in together for h in b['hosts'].values() for p in h['phases']]
    assert phases and not any(p.get('observes') for p in phases)


def test_a_together_step_agrees_on_the_longest_delay_its_runs_ask_for():
    """Guests measured at once wait for one moment, agreed once for the step: it must lie past the
    slowest guest's module start-up, which the iperf run's params.start_delay_s says (the four-guest
    VM test's 45 s); a step of runs without a delay of their own leaves it to the role's default."""
    def cell(name, host, port, delay=None):
        c = {'name': name, 'host': host, 'path': '/tmp', 'params': {'iperf': {
            'server_host': 'localhost', 'server_address': '10.0.0.1', 'port': port,
            'concurrent': [{'client_host': 'localhost', 'server_host': host, 'server_address': '10.0.0.2',
                            'port': port + 1}]}}}
        if delay is not None:
            c['params']['iperf']['start_delay_s'] = delay
        return c

    m = {'name': 'm', 'repetitions': 1, 'concurrency': 2,
         'cells': [cell('c1', 'h1', 5341, 45), cell('c2', 'h2', 5343)],
         'benchmarks': [{'name': 'iperf', 'tool': 'iperf', 'params': {'version': 3, 'time': 2}}]}
    plan = expand_plan(m, inventory_hosts=['h1', 'h2', 'localhost'])
    (batch,) = [b for b in _batches(plan, {'h1': {}, 'h2': {}, 'localhost': {}}) if b['together']]
    assert sorted(batch['hosts']) == ['h1', 'h2']
    assert [batch['hosts'][h]['start_delay_s'] for h in ('h1', 'h2')] == [45.0, 45.0]
    dd = _batches(expand_plan(dict(m, cells=[{'name': 'c1', 'host': 'h1', 'path': '/tmp'},
                                             {'name': 'c2', 'host': 'h2', 'path': '/tmp'}],
                                   benchmarks=[{'name': 'dd', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]),
                              inventory_hosts=['h1', 'h2']), {'h1': {}, 'h2': {}})
    assert [x['start_delay_s'] for b in dd if b['together'] for x in b['hosts'].values()] == [None, None]


def test_a_drbd_host_observes_its_own_links_toward_its_peers():
    """A DRBD node's runs carry its peers' addresses (guards.observe_toward): its own observer counts
    what its replication links sent during the run, on its own clock (inventory peer or not)."""
    node = dict(DRBD, drbd_node_name='p1')
    plan = _plan(reps=1)
    (batch,) = _batches(plan, {'h1': node, 'p2': {}})
    (run,) = batch['hosts']['h1']['runs']
    assert run['guards']['observe_toward'] == ['10.0.0.2', 'fd00::3']
    # an address the guard would refuse is left out (not observed) rather than failing the run
    odd = dict(node, drbd_resources=[dict(node['drbd_resources'][0], nodes=node['drbd_resources'][0]['nodes'] + [
        {'name': 'p4', 'address': 'ipv4 10.0.0.4:7788'}])])
    (batch,) = _batches(_plan(reps=1), {'h1': odd, 'p2': {}})
    assert batch['hosts']['h1']['runs'][0]['guards']['observe_toward'] == ['10.0.0.2', 'fd00::3']
    # observation off: nothing to observe toward
    (batch,) = _batches(_plan(reps=1, methodology={'observe_interval_s': 0}), {'h1': node, 'p2': {}})
    assert 'observe_toward' not in (batch['hosts']['h1']['runs'][0].get('guards') or {})
    # not a node of the resource (the fixture's nodes do not name h1): none
    (batch,) = _batches(plan, {'h1': DRBD, 'p2': {}})
    assert 'observe_toward' not in (batch['hosts']['h1']['runs'][0].get('guards') or {})
