"""Faults, signals and resume (issue 9), on the real playbook.

- SIGTERM or SIGINT to ansible-playbook mid-run: results.jsonl stays intact (every line a whole
  record), the report is written and marked interrupted, nothing the modules made is left behind.
- Re-running with the same run id measures only what is missing; the final report has every
  record once.
- A benchmark killed mid-run is recorded as a failed cell with its reason and the host goes on
  with its other cells; a host that becomes unreachable mid-run is listed with its reason while
  the other hosts finish; the play ends non-zero.
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.action.run_benchmark import STOP_WAIT_S
from conftest import BIN, REPO, interrupted, load_run, processes_with, run, run_dirs
from netns_hosts import namespace_pids, ssh_hosts


def playbook(env, matrix_file, *extra):
    return [str(BIN / 'ansible-playbook'), 'playbooks/bench.yml', '-i', 'inventories/local', '-e', '@%s' % matrix_file,
            '-e', 'bench_install_tools=false'] + list(extra)


def write_matrix(path, matrix):
    path.write_text(yaml.safe_dump({'bench_matrix': matrix}))
    return path


@pytest.mark.parametrize('signum', [signal.SIGTERM, signal.SIGINT], ids=['SIGTERM', 'SIGINT'])
def test_signal_keeps_results_and_writes_an_interrupted_report_then_resume_completes(signum, tmp_path, env):
    data = tmp_path / 'data'
    data.mkdir()
    matrix = write_matrix(tmp_path / 'matrix.yml', {
        'name': 'signal', 'repetitions': 6, 'methodology': {'cooldown_s': 1, 'quiesce': False},
        'cells': [{'name': 'host', 'host': 'localhost', 'path': str(data)}],
        'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]})
    env = dict(env, BENCHLAB_RUN_ID='signal-run')
    rc, out = interrupted(playbook(env, matrix), env, tmp_path / 'runs' / 'signal-run' / 'results.jsonl', 2, signum)
    assert rc != 0, out[-3000:]
    run_dir = tmp_path / 'runs' / 'signal-run'
    results, lines = load_run(run_dir)  # every line of results.jsonl is a whole JSON record
    assert 2 <= len(lines) < 6
    assert results['status'] == 'interrupted' and len(results['records']) == len(lines)
    assert 'interrupted' in (run_dir / 'report.md').read_text()
    if signum == signal.SIGINT:
        # Ctrl-C: ansible-playbook returns once its workers have stopped the batch and the batch has
        # cleaned up (the stopper waits for the module process to end)
        assert processes_with(data) == [] and list(data.iterdir()) == [], out[-2000:]
    else:
        # SIGTERM: Ansible's own handler ends the main process at once; its workers stop the batch
        # and wait for it (at most STOP_WAIT_S) in the background
        deadline = time.monotonic() + STOP_WAIT_S + 10
        while (processes_with(data) or list(data.iterdir())) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_with(data) == [] and list(data.iterdir()) == [], out[-2000:]

    # the same run id again: only the missing repetitions run
    proc2 = run(playbook(env, matrix), env)
    assert proc2.returncode == 0, proc2.stdout[-3000:]
    results, lines2 = load_run(run_dir)
    assert results['status'] == 'complete'
    assert len(lines2) == 6 and len(results['records']) == 6
    assert lines2[:len(lines)] == lines  # what was measured before is kept, not measured again
    assert results['plan']['resume']['skipped'] == len(lines)
    (bench,) = results['analysis']['benchmarks']
    assert bench['cells'][0]['n'] == 6


def test_resume_by_name_of_a_missing_run_is_a_clear_error(tmp_path, env):
    matrix = write_matrix(tmp_path / 'matrix.yml', {
        'name': 'resume', 'repetitions': 1, 'cells': [{'name': 'host', 'host': 'localhost', 'path': '/var/tmp'}],
        'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '1M'}}]})
    proc = run(playbook(env, matrix, '-e', 'bench_resume=no-such-run'), env)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "bench_resume: no run 'no-such-run'" in proc.stdout + proc.stderr


@pytest.fixture
def one_ssh_host(tmp_path):
    if not Path('/usr/sbin/sshd').exists():
        pytest.skip('openssh-server is not installed (.ci/run installs it)')
    with ssh_hosts(1, tmp_path / 'fleet') as fleet:
        yield fleet


def test_killed_benchmark_and_lost_host_are_failed_cells_the_rest_finishes(tmp_path, env, one_ssh_host):
    fleet = one_ssh_host
    inventory = fleet.inventory()
    inventory['all']['hosts']['localhost'] = {'ansible_connection': 'local',
                                              'ansible_python_interpreter': str(BIN / 'python')}
    (tmp_path / 'inventory.yml').write_text(yaml.safe_dump(inventory))
    dirs = {}
    for name in ('local-a', 'local-b', 'remote'):
        dirs[name] = tmp_path / name
        dirs[name].mkdir()
    matrix = write_matrix(tmp_path / 'matrix.yml', {
        'name': 'faults', 'repetitions': 2, 'baseline': 'local-a',
        'methodology': {'cooldown_s': 0, 'quiesce': False},
        'cells': [{'name': 'local-a', 'host': 'localhost', 'path': str(dirs['local-a'])},
                  {'name': 'local-b', 'host': 'localhost', 'path': str(dirs['local-b'])},
                  {'name': 'remote', 'host': 'node01', 'path': str(dirs['remote'])}],
        'benchmarks': [{'name': 'fio-read', 'tool': 'fio',
                        'params': {'rw': 'read', 'bs': '64k', 'size': '8M', 'runtime': 3, 'time_based': True}}]})
    argv = [str(BIN / 'ansible-playbook'), 'playbooks/bench.yml', '-i', str(tmp_path / 'inventory.yml'),
            '-e', '@%s' % matrix, '-e', 'bench_install_tools=false']
    env = dict(env, **fleet.env())
    proc = subprocess.Popen(argv, cwd=str(REPO), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = cut = False
    try:
        deadline = time.monotonic() + 600
        while proc.poll() is None and time.monotonic() < deadline:
            if not killed:  # kill the first fio of cell local-b
                for pid in processes_with(dirs['local-b']):
                    try:
                        if Path('/proc/%d/comm' % pid).read_text().strip() == 'fio':
                            os.kill(pid, signal.SIGKILL)
                            killed = True
                    except OSError:
                        pass
            jsonl = next(iter(run_dirs(tmp_path / 'runs')), tmp_path / 'x') / 'results.jsonl'
            if not cut and jsonl.exists() and any('"node01"' in line for line in jsonl.read_text().splitlines()):
                fleet.cut('node01')  # after its first record, the remote host is lost
                cut = True
            time.sleep(0.05)
        out, _err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert killed and cut
    assert proc.returncode != 0, out[-3000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results, lines = load_run(run_dir)
    per_cell = {}
    for r in lines:
        per_cell.setdefault(r['labels']['cell'], []).append(r)
    # localhost went on: local-a has both repetitions, local-b the one that was not killed
    assert len(per_cell['local-a']) == 2 and len(per_cell['local-b']) == 1, out[-3000:]
    assert len(per_cell['remote']) == 1
    failed = {(f.get('host'), f.get('cell')): f for f in results['failed']}
    assert ('localhost', 'local-b') in failed, results['failed']
    assert 'signal' in failed[('localhost', 'local-b')]['msg'].lower() or '-9' in failed[('localhost', 'local-b')]['msg']
    assert any(f['host'] == 'node01' and 'unreachable' in f['msg'] for f in results['failed']), results['failed']
    report = (run_dir / 'report.md').read_text()
    assert 'local-b' in report and 'unreachable' in report


def test_async_runs_finish_and_a_timeout_stops_a_run_as_a_failed_cell(tmp_path, env):
    """Runs with a timeout go async with polling: one that finishes in time gives its record; one
    that outlives its timeout is stopped, listed as failed, and its tool does not survive."""
    data = tmp_path / 'data'
    data.mkdir()
    matrix = write_matrix(tmp_path / 'matrix.yml', {
        'name': 'async', 'repetitions': 1, 'methodology': {'cooldown_s': 0, 'quiesce': False},
        'cells': [{'name': 'host', 'host': 'localhost', 'path': str(data)}],
        'benchmarks': [
            {'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '4M'},
             'methodology': {'timeout_s': 120}},
            {'name': 'fio-long', 'tool': 'fio', 'methodology': {'timeout_s': 4},
             'params': {'rw': 'read', 'bs': '64k', 'size': '8M', 'runtime': 60, 'time_based': True}}]})
    # a module killed by its timeout leaves Ansible's payload directory in TMPDIR: keep it in tmp_path
    (tmp_path / 'tmp').mkdir()
    env = dict(env, TMPDIR=str(tmp_path / 'tmp'))
    proc = run(playbook(env, matrix), env, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results, lines = load_run(run_dir)
    assert [r['labels']['benchmark'] for r in lines] == ['dd-write'], out[-3000:]
    assert results['plan']['runs'][0]['async_s'] == 120
    assert 'ASYNC POLL' in out or 'async' in out.lower()
    failed = [f for f in results['failed'] if f.get('benchmark') == 'fio-long' and f.get('cell') == 'host']
    assert failed and 'timeout' in failed[0]['msg'].lower(), results['failed']
    time.sleep(2)
    assert processes_with(data) == [], 'the timed-out fio survived'
    assert list(data.iterdir()) == []  # its work directory was removed too


def _in_namespace(ns, comm):
    for pid in namespace_pids(ns):
        try:
            if Path('/proc/%s/comm' % pid).read_text().strip() == comm:
                return True
        except OSError:
            pass
    return False


def _start_guest_play(tmp_path, env, fleet, matrix, **extra):
    """bench.yml started (Popen) with `matrix` on the fleet, node01 a guest of this controller
    (bench_hypervisor_host: localhost: its runs are observed here); `extra`: more host variables."""
    inventory = fleet.inventory()
    inventory['all']['hosts']['node01']['bench_hypervisor_host'] = 'localhost'
    for host, hostvars in extra.items():
        inventory['all']['hosts'][host].update(hostvars)
    inventory['all']['hosts']['localhost'] = {'ansible_connection': 'local',
                                              'ansible_python_interpreter': str(BIN / 'python')}
    (tmp_path / 'inventory.yml').write_text(yaml.safe_dump(inventory))
    argv = [str(BIN / 'ansible-playbook'), 'playbooks/bench.yml', '-i', str(tmp_path / 'inventory.yml'),
            '-e', '@%s' % write_matrix(tmp_path / 'matrix.yml', matrix), '-e', 'bench_install_tools=false']
    return subprocess.Popen(argv, cwd=str(REPO), env=dict(env, **fleet.env()), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_a_lost_server_host_does_not_leave_the_observer_below_the_run_running(tmp_path, env):
    """node01 is a guest of this controller (bench_hypervisor_host: localhost): each of its runs is
    observed on localhost by an observer the run path starts before the run and stops after it. Its
    iperf server host (node02) is lost once the client is done: the work after the run on node02
    (stopping the server) is unreachable, and still the observer below the run is stopped, its state
    directory removed and the run's record stored with what it saw (the observers were stopped, and
    the held records stored, after that work, which never came)."""
    if not Path('/usr/sbin/sshd').exists():
        pytest.skip('openssh-server is not installed (.ci/run installs it)')
    observers = set(Path('/var/tmp').glob('benchlab-observe-*'))
    with ssh_hosts(2, tmp_path / 'fleet') as fleet:
        (tmp_path / 'data').mkdir()
        proc = _start_guest_play(tmp_path, env, fleet, {
            'name': 'lost-server', 'repetitions': 1, 'methodology': {'cooldown_s': 0, 'quiesce': False},
            'cells': [{'name': 'guest', 'host': 'node01', 'path': str(tmp_path / 'data')}],
            'benchmarks': [{'name': 'net', 'tool': 'iperf',
                            'params': {'time': 3, 'port': 5397, 'server_host': 'node02',
                                       'server_address': fleet.hosts['node02']}}]},
            # no ssh control master to node02: a master to a host whose link went down waits for TCP
            node02={'ansible_ssh_args': '-o ControlMaster=no'})
        seen = cut = False
        try:
            deadline = time.monotonic() + 240
            while proc.poll() is None and time.monotonic() < deadline:
                running = _in_namespace(fleet.namespaces['node01'], 'iperf3')
                if not cut and seen and not running:
                    fleet.cut('node02', others_connected=True)   # the client is done: its server host is lost
                    cut = True
                seen = seen or running
                time.sleep(0.05)
            out, _err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert cut, out[-3000:]
    assert proc.returncode != 0, out[-3000:]
    assert 'Stop observing the hosts below the runs' in out, out[-3000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results, lines = load_run(run_dir)
    assert any(f.get('host') == 'node01' and 'unreachable' in f['msg'] for f in results['failed']), results['failed']
    (rec,) = lines
    assert rec['tool'] == 'iperf3' and rec['observed']['host']['name'] == 'localhost', rec.get('observed')
    left = set(Path('/var/tmp').glob('benchlab-observe-*')) - observers
    assert not left, 'left behind: %s\n%s' % (sorted(left), out[-6000:])


def test_an_unreachable_target_does_not_leave_the_observer_below_its_run_running(tmp_path, env):
    """node01 is a guest of this controller (bench_hypervisor_host: localhost), its fio run observed on
    localhost by an observer its start phase started. node01 itself is lost while fio runs: Ansible
    runs nothing more for it (no `always`), so the phase that stops the observer never comes. The
    report callback stops it at the end, by its recorded process, and removes its state directory
    (without that, the sampler ran until its limit, the run's time and a minute, and its directory
    stayed in /var/tmp)."""
    if not Path('/usr/sbin/sshd').exists():
        pytest.skip('openssh-server is not installed (.ci/run installs it)')
    observers = set(Path('/var/tmp').glob('benchlab-observe-*'))
    with ssh_hosts(1, tmp_path / 'fleet') as fleet:
        (tmp_path / 'data').mkdir()
        proc = _start_guest_play(tmp_path, env, fleet, {
            'name': 'lost-target', 'repetitions': 1, 'methodology': {'cooldown_s': 0, 'quiesce': False},
            'cells': [{'name': 'guest', 'host': 'node01', 'path': str(tmp_path / 'data')}],
            'benchmarks': [{'name': 'fio-read', 'tool': 'fio',
                            'params': {'rw': 'read', 'bs': '64k', 'size': '8M', 'runtime': 30, 'time_based': True}}]})
        cut = False
        try:
            deadline = time.monotonic() + 240
            while proc.poll() is None and time.monotonic() < deadline:
                if not cut and _in_namespace(fleet.namespaces['node01'], 'fio'):
                    running = set(Path('/var/tmp').glob('benchlab-observe-*')) - observers
                    fleet.cut('node01')   # the target is lost while its run is observed below it
                    cut = True
                time.sleep(0.05)
            out, _err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert cut, out[-3000:]
    assert running, 'no observer was running below the run when its target was lost'
    assert proc.returncode != 0, out[-3000:]
    assert 'an observer of a host below a run was still running at the end' in out, out[-3000:]
    left = set(Path('/var/tmp').glob('benchlab-observe-*')) - observers
    assert not left, 'left behind: %s\n%s' % (sorted(left), out[-6000:])
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results = json.loads((run_dir / 'results.json').read_text())   # no record came back: no results.jsonl
    assert any(f.get('host') == 'node01' and 'unreachable' in f['msg'] for f in results['failed']), results['failed']


def test_ctrl_c_during_an_observed_run_returns_with_nothing_of_the_run_left(tmp_path, env):
    """node01 is a guest of this controller, its fio run observed on localhost. SIGINT to
    ansible-playbook while fio runs: the report is written (interrupted), and at the moment the
    playbook returns fio no longer runs on node01, the cell holds no work directory and the observer
    below the run is stopped with its state directory removed."""
    if not Path('/usr/sbin/sshd').exists():
        pytest.skip('openssh-server is not installed (.ci/run installs it)')
    observers = set(Path('/var/tmp').glob('benchlab-observe-*'))
    data = tmp_path / 'data'
    with ssh_hosts(1, tmp_path / 'fleet') as fleet:
        data.mkdir()
        proc = _start_guest_play(tmp_path, env, fleet, {
            'name': 'ctrl-c-observed', 'repetitions': 1, 'methodology': {'cooldown_s': 0, 'quiesce': False},
            'cells': [{'name': 'guest', 'host': 'node01', 'path': str(data)}],
            'benchmarks': [{'name': 'fio-read', 'tool': 'fio',
                            'params': {'rw': 'read', 'bs': '64k', 'size': '8M', 'runtime': 60, 'time_based': True}}]})
        running = set()
        try:
            deadline = time.monotonic() + 240
            while proc.poll() is None and time.monotonic() < deadline and not running:
                if _in_namespace(fleet.namespaces['node01'], 'fio'):
                    running = set(Path('/var/tmp').glob('benchlab-observe-*')) - observers
                time.sleep(0.05)
            assert running, 'no observer was running below the run while fio ran'
            proc.send_signal(signal.SIGINT)
            out, _err = proc.communicate(timeout=120)
            # the moment it returned
            fio_left = _in_namespace(fleet.namespaces['node01'], 'fio')
            work_left = sorted(p.name for p in data.iterdir())
            observers_left = set(Path('/var/tmp').glob('benchlab-observe-*')) - observers
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode != 0, out[-3000:]
    assert 'SIGINT received, writing the report' in out, out[-3000:]
    assert not fio_left and work_left == [], (work_left, out[-3000:])
    assert not observers_left, 'left behind: %s\n%s' % (sorted(observers_left), out[-6000:])
    (run_dir,) = run_dirs(tmp_path / 'runs')
    assert json.loads((run_dir / 'results.json').read_text())['status'] == 'interrupted'
