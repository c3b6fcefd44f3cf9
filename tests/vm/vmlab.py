"""Helpers shared by the qemu tests (tests/vm): the guests' kvm_guest variables, a static inventory
of booted guests, the environment of an ansible-playbook run inside the private libvirtd's network
namespace (libvirtd_lab.py)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import libvirtd_lab  # noqa: E402  pylint: disable=wrong-import-position

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
NET = {'name': 'kvmt-routed', 'bridge': 'kvmtbr0', 'host': '198.19.77.1', 'prefix': '198.19.77.'}


def ansible_env(tmp_path, control_dir):
    env = dict(os.environ)
    env.update(ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1',
               BENCHLAB_REPORT_DIR=str(tmp_path / 'runs'), PATH='%s:%s' % (BIN, env.get('PATH', '')),
               ANSIBLE_SSH_ARGS='-o ControlMaster=auto -o ControlPersist=60s -o ControlPath=%s/%%C' % control_dir,
               ANSIBLE_TIMEOUT='60', ANSIBLE_PIPELINING='True')
    return env


def image_host_key(image):
    out = subprocess.run(['debugfs', '-R', 'cat /etc/ssh/ssh_host_ed25519_key.pub', str(image / 'rootfs.img')],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[:1] == ['ssh-ed25519'], out
    return ' '.join(out[:2])


def guest_vars(image, work, name, ip, state='present', gateway=None, **extra):
    """kvm_guest variables of one small TCG guest on the lab's routed network (direct kernel boot,
    static address and host name from the kernel command line; `gateway`: the guest's default
    route, the host's address on the routed network unless given, e.g. on a bridge of the test's own)."""
    out = {
        'kvm_guest_serial_log': str(work / ('console-%s.log' % name)),
        'kvm_guest_state': state,
        'kvm_guest_name': name,
        'kvm_guest_domain_type': 'qemu',
        'kvm_guest_memory_mib': 320,
        'kvm_guest_vcpus': 1,
        'kvm_guest_base_image': str(image / 'rootfs.img'),
        'kvm_guest_base_format': 'raw',
        'kvm_guest_disk_mode': 'overlay',
        'kvm_guest_image_dir': str(work / 'images'),
        'kvm_guest_disk_bus': 'virtio',
        'kvm_guest_disk_cache': 'none',
        'kvm_guest_disk_io': 'native',
        'kvm_guest_network_mode': 'routed',
        'kvm_guest_network_name': NET['name'],
        'kvm_guest_network_bridge': NET['bridge'],
        'kvm_guest_network_address': NET['host'],
        'kvm_guest_network_remove': True,
        'kvm_guest_ip': ip,
        'kvm_guest_kernel': str(image / 'vmlinuz'),
        'kvm_guest_initrd': str(image / 'initrd.img'),
        # systemd.hostname: DRBD matches its `on` sections against uname -n
        'kvm_guest_cmdline': 'root=/dev/vda rw console=ttyS0 net.ifnames=0 systemd.hostname=%s '
                             'ip=%s::%s:255.255.255.0:%s:eth0:off' % (name, ip, gateway or NET['host'], name),
        'kvm_guest_ssh_private_key_file': str(image / 'id_ed25519'),
        'kvm_guest_ssh_host_public_key': image_host_key(image),
        'kvm_guest_known_hosts_file': str(work / 'known_hosts'),
        'kvm_guest_python_interpreter': '/usr/bin/python3',
        'kvm_guest_wait_timeout': 600,
    }
    out.update(extra)
    return out


def static_inventory(image, work, guests, groups=('kvm_guests',), extra_vars=None):
    """Inventory of guests already booted ({name: ip}) as the kvm_guest role adds them, for later runs."""
    hosts = {'localhost': {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}}
    members = {}
    for name, ip in guests.items():
        members[name] = {'ansible_host': ip, 'ansible_user': 'root',
                         'ansible_ssh_private_key_file': str(image / 'id_ed25519'),
                         'ansible_ssh_common_args': '-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes'
                                                    % (work / 'known_hosts'),
                         'ansible_python_interpreter': '/usr/bin/python3', 'bench_hypervisor_host': 'localhost'}
        members[name].update((extra_vars or {}).get(name, {}))
    inv = {'all': {'hosts': hosts, 'children': {g: {'hosts': members} for g in groups}}}
    return inv


def in_lab(lab, *argv, check=True):
    """A command in the lab's network namespace (with its own sysfs), its output captured."""
    return subprocess.run(lab.nsenter(argv), capture_output=True, text=True, check=check, timeout=60)


def make_bridge(lab, name, address=None, prefix=24):
    """An existing bridge for bridged guests (what an administrator would have), made by the test in the
    lab's network namespace: `name` with the host's `address` (None: the host has none on it, as on a
    dedicated link between guests), up. The kvm_guest role's check finds it (the lab's own sysfs); the
    machine's sysfs does not show it. It dies with the lab's namespace."""
    # never on the machine itself
    assert lab.pid and os.readlink('/proc/%d/ns/net' % lab.pid) != os.readlink('/proc/self/ns/net')
    in_lab(lab, 'ip', 'link', 'add', name, 'type', 'bridge')
    if address:
        in_lab(lab, 'ip', 'address', 'add', '%s/%d' % (address, prefix), 'dev', name)
    in_lab(lab, 'ip', 'link', 'set', name, 'up')
    assert in_lab(lab, 'test', '-d', '/sys/class/net/%s/bridge' % name, check=False).returncode == 0
    assert not os.path.exists('/sys/class/net/%s' % name)


def remove_bridge(lab, name):
    """The test's bridge after its guests are gone: it must still be there (the role leaves a bridge it
    did not make), without ports; then removed."""
    assert in_lab(lab, 'test', '-d', '/sys/class/net/%s/bridge' % name, check=False).returncode == 0
    assert in_lab(lab, 'ip', '-o', 'link', 'show', 'master', name).stdout.strip() == ''
    in_lab(lab, 'ip', 'link', 'delete', name)
    assert name not in in_lab(lab, 'ip', '-o', 'link').stdout


def write_json(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return path


def playbook(lab, env, inv, book, *extra, timeout=1800, log=None):
    """ansible-playbook in the lab's network namespace; returns the CompletedProcess. Its output goes
    to `log` (default: next to the playbook) while it runs, so a slow run can be followed."""
    argv = [BIN / 'ansible-playbook', '-i', inv, book, '-e', 'kvm_guest_uri=%s' % lab.uri] + list(extra)
    log = Path(log or str(book) + '.log')
    with open(log, 'w', encoding='utf-8') as out:
        res = subprocess.run(lab.nsenter(argv), cwd=str(REPO), env=env, stdout=out, stderr=subprocess.STDOUT,
                             timeout=timeout, check=False)
    res.stdout = log.read_text(errors='replace')
    res.stderr = ''
    return res


def control_dir(tag):
    """A private directory for the ssh control sockets (a short path: their length is limited)."""
    path = Path('/tmp/%s-cp-%d' % (tag, os.getpid()))
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def timed_playbook(lab, env, inv, work, name, book, timings, *extra, timeout=1800):
    """playbook() of `book` (a path, or a list of plays written to <work>/<name>.yml), its wall time in
    timings[name] and the time of each of its tasks in <work>/<name>.timer.json
    (perf/callback_plugins/task_timer.py; print_task_times shows them)."""
    if not isinstance(book, (str, Path)):
        book = write_json(work / (name + '.yml'), book)
    env = dict(env, BENCHLAB_PERF_TIMER=str(work / (name + '.timer.json')),
               ANSIBLE_CALLBACK_PLUGINS=str(REPO / 'perf' / 'callback_plugins'),
               ANSIBLE_CALLBACKS_ENABLED='benchlab.bench.report,task_timer')
    t0 = time.monotonic()
    try:
        return playbook(lab, env, inv, book, *extra, timeout=timeout, log=work / (name + '.log'))
    finally:
        timings[name] = time.monotonic() - t0


def print_task_times(work, top=12):
    for timer in sorted(work.glob('*.timer.json')):
        tasks = json.loads(timer.read_text())['tasks']
        slow = sorted(tasks.items(), key=lambda kv: -kv[1]['s'])[:top]
        print('%s: %s' % (timer.name, '; '.join('%s %.0fs x%d' % (k, v['s'], v['count']) for k, v in slow)))


def run_records(runs_dir, n_runs=1):
    """The last of the n_runs report directories under runs_dir and its records."""
    runs = sorted(p for p in runs_dir.iterdir() if p.is_dir() and not p.is_symlink())
    assert len(runs) == n_runs, runs
    return runs[-1], [json.loads(line) for line in (runs[-1] / 'results.jsonl').read_text().splitlines()]


def teardown(lab, control, images=None):
    """Whatever happened: the ssh masters closed, the private libvirtd stopped (its domains destroyed,
    every process of its namespace killed), the control directory and the guests' disks removed."""
    for sock in control.glob('*'):
        subprocess.run(['ssh', '-O', 'exit', '-o', 'ControlPath=%s' % sock, 'kvmt'], capture_output=True,
                       check=False, timeout=30)
    lab.stop()
    libvirtd_lab.cleanup_dir(control)
    if images is not None:
        libvirtd_lab.cleanup_dir(images)


class LoopFs:
    """An ext4 file system of its own on a loop device (a sparse file under `work`), mounted at
    work/<name>: a guest's image directory whose bytes no other work shares, so the host's counters of
    that loop device are the guest's image's alone. Made before the private libvirtd starts (its mount
    namespace copies the mounts there are then; qemu opens the images through that copy). `close()`
    unmounts it and detaches the loop device, whatever happened (a mount the lab's namespace still
    holds goes with that namespace; the detach then waits for it: losetup's autoclear)."""

    def __init__(self, work, name, size='512M'):
        self.file = work / ('%s.img' % name)
        self.mnt = work / name
        self.dev = None
        subprocess.run(['truncate', '-s', size, str(self.file)], check=True)
        subprocess.run(['mkfs.ext4', '-q', '-F', str(self.file)], check=True)
        self.dev = subprocess.run(['losetup', '-f', '--show', str(self.file)], capture_output=True, text=True,
                                  check=True).stdout.strip()
        try:
            self.mnt.mkdir()
            subprocess.run(['mount', self.dev, str(self.mnt)], check=True)
        except (OSError, subprocess.CalledProcessError):
            self.close()
            raise

    def close(self):
        if self.dev:
            subprocess.run(['umount', str(self.mnt)], check=False)
            subprocess.run(['losetup', '-d', self.dev], check=False)
            self.dev = None
