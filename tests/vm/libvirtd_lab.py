"""A private libvirtd for the KVM tests, started and stopped by the tests themselves.

libvirtd runs in its own mount and network namespaces (`unshare --mount --net`):
- mount: /etc/libvirt, /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt and /run/libvirt are
  private directories under the lab's work directory, so the daemon reads our qemu.conf (qemu as
  root, no security driver, no cgroups, logs to files instead of virtlogd) and writes no state
  into the machine's real libvirt directories;
- net: the bridges, tap devices and iptables rules libvirt makes for its networks live and die
  with the namespace; Ansible reaches the guests by running inside the same network namespace
  (`nsenter`, below).
Commands run in the lab (`lab.nsenter(argv)`: ansible-playbook, ip) see it the way `ip netns exec`
shows a namespace: its network namespace and, in a mount namespace of their own, a sysfs mounted
afresh on /sys. sysfs shows the network devices of the namespace that mounted it, so without that
/sys/class/net would still list the machine's interfaces (a bridge made in the lab, which the
kvm_guest role looks for in /sys/class/net/<bridge>/bridge, would not be there). Everything else is
the machine's: the same file systems (files written land where they would), the same block
devices in the new sysfs (/sys/block, /sys/dev/block: losetup, blkid); the submounts of /sys
(/sys/fs/cgroup, ...) are not there.
The client socket is in the work directory: connect with `lab.uri` (qemu:///system?socket=...).
Stopping destroys what is left, kills every process of the namespace (libvirtd, qemu, dnsmasq:
only processes whose mount namespace is the lab's) and removes the mount points it had to create.
"""

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

STATE_DIRS = {
    'etc': '/etc/libvirt',
    'lib': '/var/lib/libvirt',
    'cache': '/var/cache/libvirt',
    'log': '/var/log/libvirt',
    'run': '/run/libvirt',
}

QEMU_CONF = '''user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
stdio_handler = "file"
namespaces = []
cgroup_controllers = []
'''


class Libvirtd:
    """A libvirtd in private mount + network namespaces; use as a context manager."""

    def __init__(self, workdir, tag='kvmt'):
        self.dir = Path(workdir)
        self.tag = tag
        self.proc = None
        self.pid = None
        self._mnt_ns = None
        self.created_mountpoints = []
        self.sock = self.dir / 'sock' / 'libvirt-sock'
        self.uri = 'qemu:///system?socket=%s' % self.sock

    # -- namespace helpers -------------------------------------------------------------------
    def _ns_inode(self, pid, kind):
        try:
            return os.stat('/proc/%d/ns/%s' % (pid, kind)).st_ino
        except OSError:
            return None

    def ns_pids(self):
        """Processes living in the lab's mount namespace (ours only: libvirtd and its children)."""
        mine = self._mnt_ns
        # never the namespace this process lives in (the machine's): until `unshare` has run, the
        # lab's pid shows it, and a lab that failed early must not kill everything on the machine
        if self.pid is None or mine is None or mine == self._ns_inode(os.getpid(), 'mnt'):
            return []
        pids = []
        for entry in os.listdir('/proc'):
            if entry.isdigit() and int(entry) != os.getpid():
                if self._ns_inode(int(entry), 'mnt') == mine:
                    pids.append(int(entry))
        return pids

    def nsenter(self, argv):
        """argv prefixed to run inside the lab's network namespace, with the lab's own /sys (as `ip netns
        exec` does: a mount namespace of its own, slave to the machine's so that the machine's later
        mounts still reach it, where the machine's /sys is detached and a sysfs mounted, which then
        shows the lab's network devices). The mount namespace dies with the command's last process."""
        sysfs = 'umount -l /sys && mount -t sysfs sysfs /sys && exec "$@"'
        return (['nsenter', '--net=/proc/%d/ns/net' % self.pid, '--', 'unshare', '--mount', '--propagation', 'slave',
                 '--', 'sh', '-c', sysfs, 'sh'] + [str(a) for a in argv])

    def virsh(self, *args, check=True, timeout=60):
        return subprocess.run(['virsh', '-q', '-c', self.uri] + [str(a) for a in args], capture_output=True,
                              text=True, check=check, timeout=timeout)

    # -- life cycle ----------------------------------------------------------------------------
    def start(self, timeout=30):
        longest = self.dir / 'sock' / 'libvirt-admin-sock'
        if len(str(longest).encode()) > 107:  # sun_path: 108 bytes with the NUL
            raise ValueError('the lab directory %s is too deep: libvirtd\'s socket %s would exceed the 107 bytes '
                             'of a unix socket path' % (self.dir, longest))
        for sub in list(STATE_DIRS) + ['sock']:
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        # what libvirt-daemon-system would have made
        for sub in ('etc/qemu', 'etc/qemu/networks', 'lib/dnsmasq', 'lib/qemu', 'lib/network', 'log/qemu',
                    'cache/qemu'):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / 'etc' / 'qemu.conf').write_text(QEMU_CONF)
        conf = self.dir / 'libvirtd.conf'
        conf.write_text('unix_sock_dir = "%s"\nauth_unix_rw = "none"\nauth_unix_ro = "none"\n'
                        'log_outputs = "3:file:%s"\n' % (self.dir / 'sock', self.dir / 'libvirtd.log'))
        for target in STATE_DIRS.values():
            if not os.path.isdir(target):
                os.makedirs(target)
                self.created_mountpoints.append(target)
        # Debian's qemu driver insists on its user existing: give it one, in the namespace only.
        for name, line in (('passwd', 'libvirt-qemu:x:64055:64055:Libvirt Qemu:/var/lib/libvirt:/usr/sbin/nologin'),
                           ('group', 'libvirt-qemu:x:64055:')):
            text = Path('/etc', name).read_text()
            if not re.search(r'^libvirt-qemu:', text, re.M):
                text = text.rstrip('\n') + '\n' + line + '\n'
            (self.dir / name).write_text(text)
        binds = [(self.dir / sub, target) for sub, target in STATE_DIRS.items()]
        binds += [(self.dir / 'passwd', '/etc/passwd'), (self.dir / 'group', '/etc/group')]
        mounts = ' && '.join('mount --bind %s %s' % pair for pair in binds)
        script = ('set -e; ip link set lo up; %s; exec libvirtd --config %s --pid-file %s'
                  % (mounts, conf, self.dir / 'libvirtd.pid'))
        self.proc = subprocess.Popen(['unshare', '--mount', '--net', '--propagation', 'private', '--',
                                      'sh', '-c', script], stdout=open(self.dir / 'libvirtd.out', 'wb'),
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.proc.pid
        try:
            return self._wait(timeout)
        except BaseException:
            self.stop()
            raise

    def _wait(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('libvirtd exited: %s' % self.log_tail())
            ns = self._ns_inode(self.pid, 'mnt')
            if ns is not None and ns != self._ns_inode(os.getpid(), 'mnt'):
                self._mnt_ns = ns  # the lab's own, once `unshare` has made it
            if self.sock.exists() and self.virsh('uri', check=False).returncode == 0:
                return self
            time.sleep(0.2)
        raise RuntimeError('libvirtd did not answer within %ss: %s' % (timeout, self.log_tail()))

    def log_tail(self, n=30):
        text = ''
        for name in ('libvirtd.out', 'libvirtd.log'):
            p = self.dir / name
            if p.exists():
                text += '\n'.join(p.read_text(errors='replace').splitlines()[-n:]) + '\n'
        return text

    def stop(self):
        if self.proc is None:
            return
        try:
            for name in self.virsh('list', '--name', check=False).stdout.split():
                self.virsh('destroy', name, check=False)
        except (OSError, subprocess.SubprocessError):
            pass
        pids = self.ns_pids()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and any(os.path.exists('/proc/%d' % p) for p in pids):
                try:
                    self.proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    pass
            pids = [p for p in pids if os.path.exists('/proc/%d' % p)]
            if not pids:
                break
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for target in reversed(self.created_mountpoints):
            try:
                os.rmdir(target)
            except OSError:
                pass
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def cleanup_dir(path):
    shutil.rmtree(path, ignore_errors=True)
