"""Scale (issue 9): 16 SSH hosts on this machine run sysinfo and a small dd through bench.yml.

Each "host" is a network namespace with its own address from the benchmarking range
(198.19.250.0/24) on a test bridge, running its own sshd; Ansible reaches every one over real
SSH. The namespaces share this machine's filesystem (each cell writes in its own directory), so
this measures the product's fan-out — connections, forks, records, the report — not 16 disks.
The wall time for 1, 4 and 16 hosts is printed. Everything the test makes (namespaces, veths,
bridge, sshd and ssh control processes, directories) is removed, also when it fails.
"""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import BIN, load_run, run, run_dirs
from netns_hosts import ssh_hosts

SIZES = (1, 4, 16)


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    if not Path('/usr/sbin/sshd').exists():
        pytest.skip('openssh-server is not installed (.ci/run installs it)')
    with ssh_hosts(max(SIZES), tmp_path_factory.mktemp('fleet')) as f:
        yield f


def test_fleet_of_16_ssh_hosts(fleet, tmp_path, capsys):
    hosts = fleet.hosts
    walls = {}
    for n in SIZES:
        names = sorted(hosts)[:n]
        inventory = fleet.inventory(names)
        inv = tmp_path / ('inventory-%d.yml' % n)
        inv.write_text(yaml.safe_dump(inventory))
        dirs = []
        for h in names:
            d = tmp_path / ('data-%d' % n) / h
            d.mkdir(parents=True)
            dirs.append(str(d))
        matrix = {'bench_matrix': {
            'name': 'fleet-%d' % n, 'repetitions': 1, 'methodology': {'cooldown_s': 0, 'quiesce': False},
            'cells': [{'name': h, 'host': h, 'path': d, 'labels': {'platform': 'netns'}} for h, d in zip(names, dirs)],
            'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '4M'}}]}}
        mfile = tmp_path / ('matrix-%d.json' % n)
        mfile.write_text(json.dumps(matrix))
        env = dict(os.environ, ANSIBLE_CONFIG=str(Path(__file__).resolve().parents[2] / 'ansible.cfg'),
                   ANSIBLE_NOCOLOR='1', ANSIBLE_FORKS='16', BENCHLAB_REPORT_DIR=str(tmp_path / ('runs-%d' % n)),
                   BENCHLAB_HISTORY_DB=str(tmp_path / 'history.sqlite'),
                   PATH='%s:%s' % (BIN, os.environ.get('PATH', '')), **fleet.env())
        t0 = time.monotonic()
        proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', inv, '-e', '@%s' % mfile,
                    '-e', 'bench_install_tools=false'], env, timeout=1200)
        walls[n] = time.monotonic() - t0
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
        (run_dir,) = run_dirs(tmp_path / ('runs-%d' % n))
        results, jsonl = load_run(run_dir)
        # every host answered over SSH, ran dd, and described itself; the report holds all of them
        assert sorted(r['host'] for r in jsonl) == names
        assert all(r['metrics']['throughput']['value'] > 0 for r in jsonl)
        assert len(results['environment']) == n
        (bench,) = results['analysis']['benchmarks']
        assert sorted(c['cell'] for c in bench['cells']) == names
        report = (run_dir / 'report.md').read_text()
        assert all(h in report for h in names)
        for d in dirs:  # the modules cleaned up on every host
            assert os.listdir(d) == []
    with capsys.disabled():
        print('\nfleet wall time: ' + ', '.join('%d host(s) %.1f s' % (n, walls[n]) for n in SIZES))


def test_a_command_over_ssh_reads_no_bashrc_and_keeps_its_files_in_the_fleet(fleet):
    """The test hosts share this machine's /root. bash run by sshd for a command sources ~/.bashrc
    when it is not nested (bash's shell.c: run_by_ssh and a shell level below 2); this machine's
    .bashrc runs `pyenv rehash`, and a session killed mid-rehash (the fault tests kill playbooks and
    cut links) left its lock file: every later SSH command then waited 60 s on it. The hosts' sshd
    hands each session SHLVL=1, so bash counts itself nested (level 2) and reads no .bashrc; and
    TMPDIR in the fleet's own directory (a module's payload left by a host cut mid-run stays there)."""
    host = sorted(fleet.hosts)[0]
    proc = subprocess.run(['ssh', '-i', str(fleet.key), '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
                           '-o', 'BatchMode=yes', 'root@%s' % fleet.hosts[host], 'echo "$SHLVL|$TMPDIR|$0"'],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    level, tmpdir, shell = proc.stdout.strip().split('|')
    assert tmpdir == str(fleet.tmp / 'tmp'), proc.stdout
    # a login shell other than bash reads no .bashrc at all; bash, nested, neither
    assert not shell.endswith('bash') or int(level) >= 2, proc.stdout
