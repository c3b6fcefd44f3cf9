"""benchlab.bench.iperf really runs here, over loopback only (127.0.0.1), with 1 s tests.

Every test that can start a server uses the `iperf_guard` fixture: afterwards it kills (SIGKILL)
any iperf process still alive on the test's ports and fails the test if there was one.
"""

import json
import os
import signal
import socket
import sys
import time

import pytest

from conftest import REPO, load_run, module, run, run_dirs, BIN

sys.path.insert(0, str(REPO / '.collections'))
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record  # noqa: E402

PORTS = list(range(15711, 15740))


def argv_ports(argv):
    """The ports an iperf argv names: a port, or every port of a range (an iperf 2 server on a port
    per stream: -p 15736-15737)."""
    out = set()
    for arg in argv:
        first, _sep, last = arg.partition('-')
        if first.isdigit() and (not last or last.isdigit()):
            out.update(range(int(first), int(last or first) + 1))
    return out


def iperf_processes(ports=None):
    """(pid, argv) of live (non-zombie) iperf/iperf3 processes that use one of `ports`."""
    ports = PORTS if ports is None else ports
    found = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % name, 'rb') as f:
                argv = [a.decode() for a in f.read().split(b'\0') if a]
            with open('/proc/%s/stat' % name) as f:
                state = f.read().rsplit(')', 1)[1].split()[0]
        except OSError:
            continue
        if not argv or os.path.basename(argv[0]) not in ('iperf', 'iperf3') or state in ('Z', 'X'):
            continue
        if argv_ports(argv) & set(ports):
            found.append((int(name), argv))
    return found


@pytest.fixture
def iperf_guard():
    yield
    left = iperf_processes()
    for pid, _argv in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert left == [], 'iperf processes survived: %r' % left


def valid(rec):
    assert validate_record(rec) == [], rec
    return rec


def test_iperf3_loopback_with_spawned_server(env, iperf_guard):
    rc, status, res = module(env, 'iperf', {'server': '127.0.0.1', 'spawn_server': True, 'port': 15711,
                                            'time': 1, 'labels': {'net': 'lo'}})
    assert rc == 0, res
    rec = valid(res['bench_result'])
    assert rec['tool'] == 'iperf3' and rec['test'] == 'tcp' and rec['tool_version'] == '3.12'
    assert rec['labels'] == {'net': 'lo'}
    params = dict(rec['params'])
    guards = params.pop('guards')
    assert params == {'server': '127.0.0.1', 'port': 15711, 'version': 3, 'protocol': 'tcp',
                      'direction': 'forward', 'streams': 1, 'window': None, 'time': 1}
    assert guards['quiesce'] is True
    assert rec['metrics']['throughput']['unit'] == 'Mbit/s' and rec['metrics']['throughput']['value'] > 0
    assert rec['metrics']['retransmits']['unit'] == 'count'
    assert any('loopback' in w for w in rec['warnings'])
    assert res['server_cmd'][:7] == [res['server_cmd'][0], '-s', '-1', '-B', '127.0.0.1', '-p', '15711']
    assert res['bench_results'] == [rec]


def test_iperf3_reverse_parallel_window(env, iperf_guard):
    rc, status, res = module(env, 'iperf', {'server': '127.0.0.1', 'spawn_server': True, 'port': 15712,
                                            'time': 1, 'reverse': True, 'parallel': 2, 'window': '256k'})
    assert rc == 0, res
    rec = valid(res['bench_result'])
    assert rec['test'] == 'tcp_reverse'
    assert rec['params']['direction'] == 'reverse' and rec['params']['streams'] == 2
    assert rec['params']['window'] == '256k'
    assert ['-P', '2'] == res['cmd'][res['cmd'].index('-P'):res['cmd'].index('-P') + 2]
    assert '-R' in res['cmd'] and '256k' in res['cmd']


def test_iperf3_udp(env, iperf_guard):
    rc, status, res = module(env, 'iperf', {'server': '127.0.0.1', 'spawn_server': True, 'port': 15713,
                                            'time': 1, 'udp': True, 'bandwidth': '20M'})
    assert rc == 0, res
    rec = valid(res['bench_result'])
    assert rec['test'] == 'udp' and set(rec['metrics']) == {'throughput', 'jitter', 'lost_pct'}
    assert 5 < rec['metrics']['throughput']['value'] < 25  # about the 20 Mbit/s asked
    assert rec['params']['bandwidth'] == '20M'


def test_iperf2_tcp_and_udp(env, iperf_guard):
    rc, status, res = module(env, 'iperf', {'server': '127.0.0.1', 'spawn_server': True, 'port': 15714,
                                            'time': 1, 'version': 2, 'parallel': 2, 'window': '256k'})
    assert rc == 0, res
    rec = valid(res['bench_result'])
    assert rec['tool'] == 'iperf' and rec['tool_version'] == '2.1.8' and rec['params']['format'] == 'csv'
    assert res['cmd'][-2:] == ['-y', 'C'] and rec['params']['streams'] == 2
    assert res['signal'] in ('SIGTERM', 'SIGKILL')  # the iperf2 server has to be stopped
    rc, status, res = module(env, 'iperf', {'server': '127.0.0.1', 'spawn_server': True, 'port': 15715,
                                            'time': 1, 'version': 2, 'udp': True, 'bandwidth': '20M',
                                            'reverse': True})
    assert rc == 0, res
    rec = valid(res['bench_result'])
    assert rec['test'] == 'udp_reverse' and 'jitter' in rec['metrics'] and 'lost_pct' in rec['metrics']
    assert '-u' in res['server_cmd']


def test_iperf2_udp_streams_each_on_a_port_of_their_own(env, iperf_guard):
    """iperf 2.1's server takes a port range and its client --incr-dstport: each parallel UDP stream has
    a port of its own, so no stream's first datagram races another stream's accept (ICMP port
    unreachable, "recvmsg failed: Connection refused"); the server is one process, stopped by its pid."""
    rc, status, res = module(env, 'iperf', {'server': '127.0.0.1', 'spawn_server': True, 'port': 15722,
                                            'time': 1, 'version': 2, 'udp': True, 'bandwidth': '10M',
                                            'reverse': True, 'parallel': 2, 'window': '256k'})
    assert rc == 0, res
    assert res['server_cmd'][res['server_cmd'].index('-p') + 1] == '15722-15723' and '--incr-dstport' in res['cmd']
    rec = valid(res['bench_result'])
    assert rec['test'] == 'udp_reverse' and rec['params']['streams'] == 2
    assert not any('refused' in w for w in rec['warnings']), rec['warnings']
    assert res['signal'] in ('SIGTERM', 'SIGKILL')
    # the server role: it says so (incr_dstport), the client sends each stream to its own port
    rc, status, srv = module(env, 'iperf', {'role': 'server', 'bind': '127.0.0.1', 'port': 15724, 'version': 2,
                                            'udp': True, 'parallel': 2})
    assert rc == 0 and srv['ports'] == [15724, 15725] and srv['incr_dstport'] is True, srv
    assert [p for p, _a in iperf_processes([15725])] == [srv['pid']]
    rc, status, cli = module(env, 'iperf', {'server': '127.0.0.1', 'port': 15724, 'time': 1, 'version': 2, 'udp': True,
                                            'bandwidth': '10M', 'parallel': 2, 'incr_dstport': True})
    assert rc == 0 and '--incr-dstport' in cli['cmd'], cli
    assert valid(cli['bench_result'])['params']['streams'] == 2
    rc, status, stop = module(env, 'iperf', {'role': 'server', 'state': 'stopped', 'pid': srv['pid']})
    assert rc == 0 and stop['stopped'] is True, stop
    assert 'Server listening on UDP ports 15724-15725' in stop['server_output']
    assert iperf_processes([15724, 15725]) == []


@pytest.mark.parametrize('version,udp', [(3, False), (2, False), (2, True)])
def test_connection_refused_fails_clearly(env, iperf_guard, version, udp):
    args = {'server': '127.0.0.1', 'port': 15716, 'time': 1, 'version': version}
    if udp:
        args.update(udp=True, bandwidth='1M')
    rc, status, res = module(env, 'iperf', args)
    assert rc != 0 and 'FAILED' in status
    assert res['rc'] == 0  # the tool itself said "success"
    assert 'Connection refused' in res['msg']
    assert 'Traceback' not in json.dumps(res)


def test_server_role_start_and_stop(env, iperf_guard):
    for version, port in ((3, 15717), (2, 15718)):
        rc, status, srv = module(env, 'iperf', {'role': 'server', 'bind': '127.0.0.1', 'port': port,
                                                'version': version})
        assert rc == 0 and srv['changed'] is True, srv
        pid = srv['pid']
        assert [p for p, _a in iperf_processes([port])] == [pid]
        # it listens, detached: the module returned while the server runs
        rc, status, cli = module(env, 'iperf', {'server': '127.0.0.1', 'port': port, 'time': 1,
                                                'version': version})
        assert rc == 0, cli
        valid(cli['bench_result'])
        rc, status, stop = module(env, 'iperf', {'role': 'server', 'state': 'stopped', 'pid': pid})
        assert rc == 0, stop
        if version == 3:
            assert stop['stopped'] is False  # -1: it ended after its one test
        else:
            assert stop['stopped'] is True and stop['signal'] in ('SIGTERM', 'SIGKILL')
            assert 'Server listening on TCP port %d' % port in stop['server_output']
        assert iperf_processes([port]) == []


def test_stop_never_touches_another_process(env):
    victim = os.getpid()
    rc, status, res = module(env, 'iperf', {'role': 'server', 'state': 'stopped', 'pid': victim})
    assert rc == 0 and res['stopped'] is False and res['changed'] is False
    assert os.path.exists('/proc/%d' % victim)


def test_wildcard_bind_is_refused(env, iperf_guard):
    for bind in ('0.0.0.0', '::'):
        rc, status, res = module(env, 'iperf', {'role': 'server', 'bind': bind, 'port': 15719})
        assert rc != 0 and res['msg'].startswith('bind: the server must be bound to the test address')


def test_busy_port_is_reported(env, iperf_guard):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(('127.0.0.1', 15720))
        s.listen(1)
        rc, status, res = module(env, 'iperf', {'server': '127.0.0.1', 'spawn_server': True, 'port': 15720,
                                                'time': 1})
    finally:
        s.close()
    assert rc != 0
    assert 'the iperf server exited at once' in res['msg'] and 'Address already in use' in res['msg']


def test_check_mode_starts_nothing(env, iperf_guard):
    rc, status, res = module(env, 'iperf', {'server': '127.0.0.1', 'spawn_server': True, 'port': 15721,
                                            'version': 2, 'udp': True}, check=True)
    assert rc == 0 and 'bench_result' not in res
    assert res['cmd'][1:3] == ['-c', '127.0.0.1'] and '-u' in res['cmd']
    rc, status, res = module(env, 'iperf', {'role': 'server', 'bind': '127.0.0.1', 'port': 15721}, check=True)
    assert rc == 0 and 'pid' not in res and res['cmd'][1] == '-s'
    assert iperf_processes([15721]) == []


# ------------------------------------------------------------------ the one run path (bench_run)

# The role's own run path with a plan made by hand (so that a run the matrix schema would refuse,
# time 0, reaches the client after its server started): the iperf unit's phases start the server
# before the client and stop it after, whatever happened.
PLAYBOOK = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Run the plan through the bench_run role
      ansible.builtin.include_role:
        name: benchlab.bench.bench_run
      vars:
        bench_run_plan: {plan}
'''
STOP = "stop on localhost"


def run_tasks_file(env, tmp_path, item, **run_options):
    plan = {'name': 'iperf-path', 'cells': [{'name': item['cell'], 'host': 'localhost', 'path': item['path'], 'labels': {}}],
            'benchmarks': [{'name': item['benchmark'], 'tool': 'iperf', 'params': item['params'], 'cells': [item['cell']]}],
            'runs': [dict(item, guards={'quiesce': False, 'cooldown_s': 0}, async_s=0, poll_s=0, **run_options)], 'gates': {}}
    play = tmp_path / 'play.yml'
    play.write_text(PLAYBOOK.format(plan=json.dumps(plan)))
    return run([BIN / 'ansible-playbook', '-i', REPO / 'inventories/local', play], env, timeout=120)


def item(port, **params):
    p = dict(server_host='localhost', server_address='127.0.0.1', port=port, time=1)
    p.update(params)
    return dict(host='localhost', cell='host-lo', path='/tmp', tool='iperf', benchmark='net', params=p,
                repetition=1, labels={'cell': 'host-lo', 'benchmark': 'net'})


@pytest.mark.parametrize('port,params', [
    (15731, {}),
    # an iperf 2 UDP server of two streams listens on 15736-15737 (a port per stream)
    (15736, {'version': 2, 'udp': True, 'bandwidth': '10M', 'reverse': True, 'parallel': 2, 'window': '256k'}),
])
def test_bench_run_tasks_file(env, tmp_path, iperf_guard, port, params):
    proc = run_tasks_file(env, tmp_path, item(port, **params))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert STOP in proc.stdout
    assert iperf_processes([port, port + 1]) == []
    results, jsonl = load_run(run_dirs(tmp_path / 'runs')[-1])
    recs = [r for r in jsonl if r.get('tool') in ('iperf', 'iperf3')]
    assert len(recs) == 1, jsonl
    assert recs[0]['host'] == 'localhost'  # added by the report callback, not part of the record
    rec = valid(dict((k, v) for k, v in recs[0].items() if k not in ('host',)))
    assert rec['labels'] == {'cell': 'host-lo', 'benchmark': 'net'}
    assert rec['params']['port'] == port
    # the run path put the run's context on the record
    assert rec['repetition'] == 1 and rec['step'] == 0 and rec['run_id'] == results['run_id'] and rec['cell_key']
    # the test's own server (delegated, not a child of the client) is not a competing benchmark
    assert not any('other benchmark processes' in w for w in rec['warnings']), rec['warnings']
    if params:
        assert rec['tool'] == 'iperf' and rec['test'] == 'udp_reverse' and rec['params']['streams'] == 2
        # the server phase's answer reached the client: each stream on its own port, none refused
        assert '--incr-dstport' in rec['cmd'], rec['cmd']
        assert not any('refused' in w for w in rec['warnings']), rec['warnings']


def test_bench_run_tasks_file_stops_the_server_when_the_client_fails(env, tmp_path, iperf_guard):
    # time 0 is refused by the client after the server started: the phases after the run must stop it
    proc = run_tasks_file(env, tmp_path, item(15733, version=2, time=0))
    assert proc.returncode != 0
    assert 'time: 0 is less than the minimum of 1' in proc.stdout
    assert STOP in proc.stdout
    out = proc.stdout[proc.stdout.index('Do the work on other hosts after the runs'):]
    assert 'changed: [localhost] => (item=stop on localhost)' in out.split('PLAY RECAP')[0]
    time.sleep(0.2)
    assert iperf_processes([15733]) == []


def test_a_client_still_running_at_its_timeout_is_stopped_by_its_module(env, tmp_path, iperf_guard):
    # a 60 s client with a run timeout of 3 s: the module stops it at its deadline (it ran outside it
    # before, until the controller gave up 60 s after the timeout); the run fails with the reason,
    # the server phase is stopped after it and no iperf process is left
    t0 = time.monotonic()
    proc = run_tasks_file(env, tmp_path, item(15734, time=60), timeout_s=3)
    elapsed = time.monotonic() - t0
    assert proc.returncode != 0, proc.stdout
    assert 'still running after its timeout_s of 3 s: stopped' in proc.stdout, proc.stdout
    assert STOP in proc.stdout
    assert elapsed < 45, 'the client ran on past its timeout: %.0f s' % elapsed
    # the role's last task fails the host with the run's own reason
    assert '1 run(s) failed on localhost: net in host-lo #1' in proc.stdout, proc.stdout
    time.sleep(0.2)
    assert iperf_processes([15734]) == []
