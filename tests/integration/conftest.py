"""Integration test helpers: real ansible-playbook / ansible / ansible-runner runs on this machine."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import ansible_runner
import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FILES = Path(__file__).resolve().parent / 'files'
sys.path.insert(0, str(REPO / '.collections'))


def ansible_env(tmp_path, **extra):
    env = dict(os.environ)
    env.update(ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1',
               BENCHLAB_REPORT_DIR=str(tmp_path / 'runs'),
               BENCHLAB_HISTORY_DB=str(tmp_path / 'history.sqlite'),
               PATH='%s:%s' % (BIN, env.get('PATH', '')))
    env.update(extra)
    return env


def runner_run(**kwargs):
    """ansible_runner.run(**kwargs), leaving this process's SIGINT and SIGTERM handlers as they were.
    Called in the main thread, ansible-runner sets handlers of its own for both (they only mark its
    run cancelled) and keeps them after it returns: pytest would then go on through Ctrl-C and a
    CI timeout's SIGTERM, and the fixtures would never remove what they made."""
    saved = [(signum, signal.getsignal(signum)) for signum in (signal.SIGINT, signal.SIGTERM)]
    try:
        return ansible_runner.run(**kwargs)
    finally:
        for signum, handler in saved:
            signal.signal(signum, handler)


def run(argv, env, cwd=REPO, timeout=900):
    proc = subprocess.run([str(a) for a in argv], cwd=str(cwd), env=env, capture_output=True, text=True, check=False,
                          timeout=timeout)
    return proc


def processes_with(marker, program=None):
    """PIDs (sorted) of the processes whose command line contains `marker` (a path, usually),
    optionally only those whose argv[0] is `program`."""
    marker = str(marker).encode()
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                cmdline = f.read()
        except OSError:
            continue
        if marker in cmdline and (program is None or os.path.basename(cmdline.split(b'\0')[0]) == program.encode()):
            found.append(int(entry))
    return sorted(found)


def run_dirs(base):
    base = Path(base)
    return sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink()) if base.exists() else []


def load_run(run_dir):
    run_dir = Path(run_dir)
    results = json.loads((run_dir / 'results.json').read_text())
    jsonl = [json.loads(line) for line in (run_dir / 'results.jsonl').read_text().splitlines()]
    return results, jsonl


def interrupted(argv, env, jsonl, records, signum, cwd=REPO, timeout=300):
    """Run argv (a playbook), send it `signum` once `jsonl` holds `records` lines, and return its
    output; the process is killed if it outlives the signal (also when the test fails)."""
    proc = subprocess.Popen([str(a) for a in argv], cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + timeout
        while not (jsonl.exists() and len(jsonl.read_text().splitlines()) >= records):
            assert proc.poll() is None, 'the playbook ended before %d records' % records
            assert time.monotonic() < deadline, 'no %d records in %s' % (records, jsonl)
            time.sleep(0.2)
        proc.send_signal(signum)
        out, _err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out


def module(env, name, args, check=False):
    """Run benchlab.bench.<name> on localhost with `ansible -m`; return (rc, status, result dict)."""
    argv = [BIN / 'ansible', 'localhost', '-i', REPO / 'inventories/local', '-m', 'benchlab.bench.%s' % name,
            '-a', json.dumps(args), '-o']
    if check:
        argv.append('--check')
    proc = run(argv, env)
    out = proc.stdout.strip()
    # one-line output: "localhost | SUCCESS => {...}" or "localhost | FAILED! => {...}"
    status, _sep, payload = out.partition(' => ')
    return proc.returncode, status, json.loads(payload) if payload else {'raw': out + proc.stderr}


# The local lab (LXC guests on this machine, benchlab.bench.local_lab) needs root, lxc and mmdebstrap.
needs_lab = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which('lxc-start') or not shutil.which('mmdebstrap'),
    reason='the local lab needs root, lxc and mmdebstrap')


def teardown_lab_prefix(env, prefix):
    """playbooks/teardown.yml for the lab `prefix` (only what that lab made and marked)."""
    proc = run([BIN / 'ansible-playbook', 'playbooks/teardown.yml', '-i', 'inventories/local',
                '-e', 'local_lab_prefix=%s' % prefix], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return proc


@pytest.fixture
def env(tmp_path):
    return ansible_env(tmp_path)


# The shared lab of the integration tests (prefix bls, 198.19.64.0/24 bridged, 198.19.65.x routed): the
# five guests the KVM-versions rendition needs (dir/loop storage, bridged/routed). Built by the first
# lab_bench.yml run that uses it (lab_bench_keep), reused as it is by the next ones (local_lab_reuse:
# seconds instead of a repair of every step), torn down at the end of the session whatever happened.
# The tests that build, repair or break a lab on purpose have labs of their own (test_local_lab.py).
SHARED_LAB_PREFIX = 'bls'
SHARED_LAB_GUESTS = [
    {'name': 'bls-g1', 'storage': 'dir', 'net': 'bridged', 'address': '198.19.64.11'},
    {'name': 'bls-g2', 'storage': 'loop', 'net': 'routed', 'address': '198.19.65.12'},
    {'name': 'bls-g3', 'storage': 'dir', 'net': 'bridged', 'address': '198.19.64.13'},
    {'name': 'bls-g4', 'storage': 'loop', 'net': 'routed', 'address': '198.19.65.14'},
    {'name': 'bls-g5', 'storage': 'dir', 'net': 'routed', 'address': '198.19.65.15'},
]
SHARED_LAB_VARS = {'local_lab_prefix': SHARED_LAB_PREFIX, 'local_lab_host_address': '198.19.64.1',
                   'local_lab_loop_size': '1G', 'local_lab_data_size': '1G', 'local_lab_guests': SHARED_LAB_GUESTS,
                   'lab_bench_keep': True, 'local_lab_reuse': True}


# make integration runs the tests in several pytest sessions: BENCHLAB_SHARED_LAB=keep leaves the lab for a
# later session (no teardown at the end), =reuse takes the one left (no teardown at the start; the
# first lab_bench.yml run repairs it if it is not whole); unset: torn down before and after.
SHARED_LAB_SESSION = os.environ.get('BENCHLAB_SHARED_LAB', '')


@pytest.fixture(scope='session')
def shared_lab(tmp_path_factory):
    """The variables of the shared lab for playbooks/lab_bench.yml (see SHARED_LAB_VARS)."""
    if os.geteuid() != 0 or not shutil.which('lxc-start') or not shutil.which('mmdebstrap'):
        pytest.skip('the local lab needs root, lxc and mmdebstrap')
    assert SHARED_LAB_SESSION in ('', 'keep', 'reuse'), 'BENCHLAB_SHARED_LAB=%s: keep, reuse or unset' % SHARED_LAB_SESSION
    env = ansible_env(tmp_path_factory.mktemp('shared-lab'))
    if SHARED_LAB_SESSION != 'reuse':
        teardown_lab_prefix(env, SHARED_LAB_PREFIX)
    try:
        yield dict(SHARED_LAB_VARS)
    finally:
        if SHARED_LAB_SESSION != 'keep':
            teardown_lab_prefix(env, SHARED_LAB_PREFIX)


# The canary (issue 14 section 9): things benchlab did not make, checked untouched after the session.
from canary import benchlab_canary, pytest_sessionfinish, pytest_terminal_summary  # noqa: E402,F401  pylint: disable=wrong-import-position,unused-import
