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
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import BIN, load_run, run, run_dirs

NET = '198.19.250.'
BRIDGE = 'bl9br0'
SIZES = (1, 4, 16)


def sh(*argv, check=True):
    return subprocess.run([str(a) for a in argv], check=check, capture_output=True, text=True)


def wait_port(ns, ip, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sh('ip', 'netns', 'exec', ns, 'sh', '-c', 'exec 3<>/dev/tcp/%s/22' % ip, check=False).returncode == 0:
            return
        if sh('bash', '-c', 'exec 3<>/dev/tcp/%s/22' % ip, check=False).returncode == 0:
            return
        time.sleep(0.2)
    raise AssertionError('sshd on %s (%s) did not come up' % (ip, ns))


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    """16 namespaces with sshd; yields (hosts {name: ip}, key path, ssh dir)."""
    if not shutil.which('sshd') and not Path('/usr/sbin/sshd').exists():
        pytest.skip('openssh-server is not installed (.ci/run installs it)')
    tmp = tmp_path_factory.mktemp('fleet')
    key = tmp / 'id_ed25519'
    sh('ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', key)
    hostkey = tmp / 'host_ed25519'
    sh('ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', hostkey)
    auth = tmp / 'authorized_keys'
    auth.write_text((tmp / 'id_ed25519.pub').read_text())
    auth.chmod(0o600)
    Path('/run/sshd').mkdir(mode=0o755, exist_ok=True)
    made_ns, pids = [], []
    try:
        sh('ip', 'link', 'add', BRIDGE, 'type', 'bridge')
        sh('ip', 'addr', 'add', NET + '1/24', 'dev', BRIDGE)
        sh('ip', 'link', 'set', BRIDGE, 'up')
        hosts = {}
        for i in range(1, max(SIZES) + 1):
            ns, ip = 'bl9-h%d' % i, NET + str(10 + i)
            sh('ip', 'netns', 'add', ns)
            made_ns.append(ns)
            sh('ip', 'link', 'add', 'bl9v%d' % i, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns)
            sh('ip', 'link', 'set', 'bl9v%d' % i, 'master', BRIDGE, 'up')
            sh('ip', 'netns', 'exec', ns, 'ip', 'addr', 'add', ip + '/24', 'dev', 'eth0')
            sh('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'eth0', 'up')
            sh('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up')
            cfg = tmp / ('sshd-%d.conf' % i)
            cfg.write_text('\n'.join([
                'ListenAddress %s' % ip, 'Port 22', 'HostKey %s' % hostkey, 'AuthorizedKeysFile %s' % auth,
                'PermitRootLogin prohibit-password', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no',
                'UsePAM no', 'PidFile %s' % (tmp / ('sshd-%d.pid' % i)), 'StrictModes no', 'MaxStartups 100',
                'MaxSessions 50', 'Subsystem sftp internal-sftp', '']))
            proc = subprocess.Popen(['ip', 'netns', 'exec', ns, '/usr/sbin/sshd', '-D', '-e', '-f', str(cfg)],
                                    stdout=subprocess.DEVNULL, stderr=open(tmp / ('sshd-%d.log' % i), 'w'))
            pids.append(proc)
            hosts['node%02d' % i] = ip
        for i, ip in enumerate(hosts.values(), 1):
            wait_port('bl9-h%d' % i, ip)
        yield hosts, key, tmp
    finally:
        for proc in pids:
            proc.send_signal(signal.SIGTERM)
        for proc in pids:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        # ssh ControlPersist masters Ansible left for these hosts
        control = tmp / 'cp'
        for entry in os.listdir('/proc'):
            if entry.isdigit():
                try:
                    cmd = Path('/proc/%s/cmdline' % entry).read_bytes()
                except OSError:
                    continue
                if str(control).encode() in cmd:
                    try:
                        os.kill(int(entry), signal.SIGTERM)
                    except OSError:
                        pass
        for ns in made_ns:
            sh('ip', 'netns', 'del', ns, check=False)
        sh('ip', 'link', 'del', BRIDGE, check=False)


def test_fleet_of_16_ssh_hosts(fleet, tmp_path, capsys):
    hosts, key, tmp = fleet
    walls = {}
    for n in SIZES:
        names = sorted(hosts)[:n]
        inventory = {'all': {'hosts': {h: {'ansible_host': hosts[h]} for h in names}, 'vars': {
            'ansible_user': 'root', 'ansible_ssh_private_key_file': str(key),
            'ansible_python_interpreter': '/usr/bin/python3',
            'ansible_ssh_common_args': '-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'}}}
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
                   ANSIBLE_NOCOLOR='1', ANSIBLE_FORKS='16', ANSIBLE_SSH_CONTROL_PATH_DIR=str(tmp / 'cp'),
                   ANSIBLE_HOST_KEY_CHECKING='False', BENCHLAB_REPORT_DIR=str(tmp_path / ('runs-%d' % n)),
                   BENCHLAB_HISTORY_DB=str(tmp_path / 'history.sqlite'),
                   PATH='%s:%s' % (BIN, os.environ.get('PATH', '')))
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
