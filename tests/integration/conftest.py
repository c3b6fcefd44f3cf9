"""Integration test helpers: real ansible-playbook / ansible / ansible-runner runs on this machine."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

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


# The canary (issue 14 section 9): things benchlab did not make, checked untouched after the session.
from canary import benchlab_canary, pytest_sessionfinish, pytest_terminal_summary  # noqa: E402,F401  pylint: disable=wrong-import-position,unused-import
