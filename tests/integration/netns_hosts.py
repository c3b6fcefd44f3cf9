"""SSH hosts on this machine: network namespaces on a test bridge, each with its own sshd.

    with ssh_hosts(16, tmp_dir) as fleet:
        fleet.hosts      # {'node01': '198.19.250.11', ...}
        fleet.inventory(names)   # an inventory dict reaching them over real SSH
        fleet.cut('node01')      # make a host unreachable: stop its sshd, take its link down

The namespaces share this machine's filesystem. Everything made (namespaces, veths, the bridge,
sshd processes and Ansible's ssh control masters for these hosts) is removed on exit, also when
the body fails; so are /run/netns (made by the first `ip netns add`, a bind mount onto itself) and
/run/sshd (sshd's privilege separation directory) when this made them and they are empty again.
"""

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from conftest import processes_with

NET = '198.19.250.'
BRIDGE = 'bl9br0'


def sh(*argv, check=True):
    return subprocess.run([str(a) for a in argv], check=check, capture_output=True, text=True)


def namespace_pids(ns):
    """The PIDs (strings) of the processes in network namespace `ns`."""
    return sh('ip', 'netns', 'pids', ns, check=False).stdout.split()


def kill_namespace_processes(ns):
    """Every process left in a namespace (sshd's per-connection children outlive the listener and,
    with the link down, never learn that the client left): they would keep the namespace and its
    veth alive after `ip netns del`."""
    for pid in namespace_pids(ns):
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (OSError, ValueError):
            pass


def _port_open(ip):
    return sh('bash', '-c', 'exec 3<>/dev/tcp/%s/22' % ip, check=False).returncode == 0


class Fleet(object):
    def __init__(self, tmp):
        self.tmp = Path(tmp)
        self.hosts = {}
        self.namespaces = {}
        self.sshd = {}
        self.key = self.tmp / 'id_ed25519'
        self.control = self.tmp / 'cp'

    def inventory(self, names=None):
        names = sorted(self.hosts) if names is None else names
        return {'all': {'hosts': {h: {'ansible_host': self.hosts[h]} for h in names}, 'vars': {
            'ansible_user': 'root', 'ansible_ssh_private_key_file': str(self.key),
            'ansible_python_interpreter': '/usr/bin/python3',
            'ansible_ssh_common_args': '-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'}}}

    def env(self):
        """Environment entries for ansible-playbook: ssh control masters kept in the fleet's dir."""
        return {'ANSIBLE_SSH_CONTROL_PATH_DIR': str(self.control), 'ANSIBLE_HOST_KEY_CHECKING': 'False'}

    def cut(self, name, others_connected=False):
        """The host becomes unreachable: its sshd stops and its link goes down. Ansible's ssh control
        masters are stopped (a master to a host whose link is down would wait for TCP to give up):
        every master, or with others_connected only the cut host's, so that a task running on
        another host over its master goes on."""
        proc = self.sshd.pop(name, None)
        if proc:
            proc.terminate()
            proc.wait(timeout=10)
        sh('ip', 'netns', 'exec', self.namespaces[name], 'ip', 'link', 'set', 'eth0', 'down', check=False)
        kill_namespace_processes(self.namespaces[name])
        self._kill_control_masters(self.hosts[name] if others_connected else None)

    def _kill_control_masters(self, address=None):
        for pid in processes_with(self.control):
            try:
                if address is not None and address.encode() not in Path('/proc/%d/cmdline' % pid).read_bytes().split(b'\0'):
                    continue
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass


RUN_DIRS = (Path('/run/netns'), Path('/run/sshd'))


def remove_if_made_and_empty(path, made):
    """Remove `path` if it is in `made` (it did not exist before) and empty now; `ip netns add`
    bind-mounts /run/netns onto itself, so its mounts go first. Anything found in it is left alone."""
    if path not in made or not path.is_dir() or os.listdir(str(path)):
        return
    for _i in range(5):  # until it is no mount point (os.path.ismount misses a bind mount onto itself)
        if sh('umount', '-n', path, check=False).returncode != 0:
            break
    try:
        path.rmdir()
    except OSError:
        pass


@contextlib.contextmanager
def ssh_hosts(n, tmp):
    made = [d for d in RUN_DIRS if not d.exists()]
    fleet = Fleet(tmp)
    tmp = fleet.tmp
    tmp.mkdir(parents=True, exist_ok=True)
    sh('ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', fleet.key)
    hostkey = tmp / 'host_ed25519'
    sh('ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', hostkey)
    auth = tmp / 'authorized_keys'
    auth.write_text((tmp / 'id_ed25519.pub').read_text())
    auth.chmod(0o600)
    # the hosts' temporary files (a module's AnsiballZ payload among them: a module killed with its
    # host, by cut(), leaves its payload directory) in the fleet's directory, not this machine's /tmp
    hosttmp = tmp / 'tmp'
    hosttmp.mkdir(mode=0o1777)
    Path('/run/sshd').mkdir(mode=0o755, exist_ok=True)
    try:
        sh('ip', 'link', 'add', BRIDGE, 'type', 'bridge')
        sh('ip', 'addr', 'add', NET + '1/24', 'dev', BRIDGE)
        sh('ip', 'link', 'set', BRIDGE, 'up')
        for i in range(1, n + 1):
            name, ns, ip = 'node%02d' % i, 'bl9-h%d' % i, NET + str(10 + i)
            sh('ip', 'netns', 'add', ns)
            fleet.namespaces[name] = ns
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
                'MaxSessions 50', 'Subsystem sftp internal-sftp',
                # bash sources ~/.bashrc for a command over SSH only in a top-level shell (SHLVL below 1):
                # these hosts share this machine's /root, whose .bashrc runs `pyenv rehash`; a session
                # killed mid-rehash (the fault tests kill playbooks and cut links) leaves its lock file,
                # and every later session waited 60 s on it (a lost-host test then ran past its limit)
                'SetEnv SHLVL=1 TMPDIR=%s' % hosttmp, '']))
            with open(tmp / ('sshd-%d.log' % i), 'w') as log:
                fleet.sshd[name] = subprocess.Popen(['ip', 'netns', 'exec', ns, '/usr/sbin/sshd', '-D', '-e', '-f', str(cfg)],
                                                    stdout=subprocess.DEVNULL, stderr=log)
            fleet.hosts[name] = ip
        deadline = time.monotonic() + 30
        for name, ip in fleet.hosts.items():
            while not _port_open(ip):
                if time.monotonic() > deadline:
                    raise AssertionError('sshd of %s (%s) did not come up' % (name, ip))
                time.sleep(0.2)
        yield fleet
    finally:
        for proc in fleet.sshd.values():
            proc.terminate()
        for proc in fleet.sshd.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        fleet._kill_control_masters()  # pylint: disable=protected-access
        for ns in fleet.namespaces.values():
            kill_namespace_processes(ns)
            sh('ip', 'netns', 'del', ns, check=False)
        for i in range(1, len(fleet.namespaces) + 1):  # a veth whose namespace is gone goes with it
            sh('ip', 'link', 'del', 'bl9v%d' % i, check=False)
        sh('ip', 'link', 'del', BRIDGE, check=False)
        for d in RUN_DIRS:
            remove_if_made_and_empty(d, made)
