"""The private libvirtd's own safety, without starting a guest (libvirtd_lab.py).

A lab whose libvirtd failed before `unshare` made its namespaces saw the machine's own mount
namespace under its pid, and its stop() then killed every process of the machine's namespace (it
happened: a lab directory too deep for libvirtd's unix socket). Now it kills nothing then, and a
too-deep directory is refused before anything starts.

And what a command run in the lab (lab.nsenter) sees: the lab's network devices in /sys/class/net
(the kvm_guest role looks for a bridged guest's bridge there), the machine's block devices and file
systems."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import libvirtd_lab  # noqa: E402  pylint: disable=wrong-import-position


def test_a_lab_that_never_left_this_namespace_kills_nothing(tmp_path):
    lab = libvirtd_lab.Libvirtd(tmp_path)
    lab.pid = os.getpid()  # as seen before unshare: the lab's pid in the machine's namespace
    lab._mnt_ns = os.stat('/proc/self/ns/mnt').st_ino  # pylint: disable=protected-access
    assert lab.ns_pids() == []
    lab._mnt_ns = None  # pylint: disable=protected-access
    assert lab.ns_pids() == []


def test_a_lab_directory_too_deep_for_the_socket_is_refused_before_anything_starts(tmp_path):
    deep = tmp_path / ('d' * 120)
    lab = libvirtd_lab.Libvirtd(deep)
    with pytest.raises(ValueError, match='too deep.*libvirt-admin-sock'):
        lab.start()
    assert lab.proc is None and not deep.exists()


@pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in ('unshare', 'nsenter', 'ip', 'losetup')),
                    reason='needs root, unshare, nsenter, ip, losetup')
def test_a_command_in_the_lab_sees_the_labs_network_devices_in_sysfs_and_the_machines_files(tmp_path):
    lab = libvirtd_lab.Libvirtd(tmp_path)
    # a network namespace of its own in place of the lab's libvirtd (nsenter only needs its pid)
    holder = subprocess.Popen(['unshare', '--net', '--', 'sleep', '60'])
    loop_dev = None
    try:
        for _i in range(50):
            if os.readlink('/proc/%d/ns/net' % holder.pid) != os.readlink('/proc/self/ns/net'):
                break
            time.sleep(0.1)
        # never the machine's own namespace: the bridge below would be made on the machine
        assert os.readlink('/proc/%d/ns/net' % holder.pid) != os.readlink('/proc/self/ns/net')
        lab.pid = holder.pid

        def run(*argv):
            return subprocess.run(lab.nsenter(argv), capture_output=True, text=True, check=True, timeout=30).stdout

        run('ip', 'link', 'add', 'kvmtsys0', 'type', 'bridge')
        assert run('ls', '/sys/class/net').split() == ['kvmtsys0', 'lo']
        assert run('ls', '-d', '/sys/class/net/kvmtsys0/bridge').strip()
        assert not os.path.exists('/sys/class/net/kvmtsys0')
        # the block devices are the machine's (losetup, blkid, the device guard read /sys/block and
        # /sys/dev/block): a loop device made here, on the machine, is seen in the lab with its file.
        # (Not a comparison of the whole lists: the other VM tests make loop devices at the same time.)
        backing = tmp_path / 'backing.img'
        with open(backing, 'wb') as f:
            f.truncate(1 << 20)
        loop_dev = subprocess.run(['losetup', '-f', '--show', str(backing)], capture_output=True, text=True,
                                  check=True).stdout.strip()
        assert os.path.basename(loop_dev) in run('ls', '/sys/block').split()
        assert run('losetup', '--noheadings', '-O', 'BACK-FILE', loop_dev).strip() == str(backing)
        # files written in the lab land on the machine's file systems
        run('sh', '-c', 'echo written > %s' % (tmp_path / 'out'))
        assert (tmp_path / 'out').read_text() == 'written\n'
    finally:
        holder.kill()
        holder.wait(timeout=10)
        if loop_dev:
            subprocess.run(['losetup', '-d', loop_dev], check=False)
