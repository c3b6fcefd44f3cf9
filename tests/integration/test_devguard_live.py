"""module_utils/devguard.py on REAL loop devices (root): a partitioned disk with a mounted ext4
partition, the same disk unmounted, a signature without force, active swap, a device another
process holds open O_EXCL, DRBD meta-data written by drbdmeta, and a clean device.

Every refusal leaves the device's bytes as they were (sha256 of the whole device before/after).
Partition nodes come from `partx -a` (`losetup -P` does not make them on this machine). Every loop
device, partition node, mount, swap area and child process is released in `finally`, also when an
assertion fails. Device-mapper/md holders cannot exist on this kernel: that logic is unit-tested
over a built sysfs tree (tests/unit/plugins/module_utils/test_devguard.py).
"""

import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.devguard import (
    DeviceGuardError, check_device_writable, is_block_device)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for loop devices, mounts and swap')

MiB = 1024 * 1024


def sh(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True, check=True).stdout.strip()


def sha256(dev):
    h = hashlib.sha256()
    with open(dev, 'rb') as f:
        for chunk in iter(lambda: f.read(MiB), b''):
            h.update(chunk)
    return h.hexdigest()


def write_mbr(dev, parts):
    """An msdos partition table with `parts` [(type byte, start sector, sectors)]: no sfdisk/fdisk here."""
    mbr = bytearray(512)
    for i, (ptype, start, count) in enumerate(parts):
        mbr[446 + 16 * i:446 + 16 * (i + 1)] = b'\x00\xff\xff\xff' + bytes([ptype]) + b'\xff\xff\xff' + \
            struct.pack('<II', start, count)
    mbr[510:512] = b'\x55\xaa'
    with open(dev, 'r+b') as f:
        f.write(bytes(mbr))
        f.flush()
        os.fsync(f.fileno())


class Loop:
    """One loop device over a sparse image; everything made on it is recorded and undone by close()."""

    def __init__(self, size=64 * MiB):
        fd, self.image = tempfile.mkstemp(prefix='devguard-', suffix='.img', dir='/var/tmp')
        os.close(fd)
        os.truncate(self.image, size)
        self.dev = None
        self.mounts, self.swaps, self.partitioned = [], [], False
        try:
            self.dev = sh('losetup', '-f', '--show', self.image)
        except BaseException:
            os.unlink(self.image)
            raise

    def partition(self):
        write_mbr(self.dev, [(0x83, 2048, 32 * 2048), (0x83, 34 * 2048, 16 * 2048)])
        self.partitioned = True
        sh('partx', '-a', self.dev)
        return self.dev + 'p1', self.dev + 'p2'

    def mount(self, dev, where):
        sh('mount', dev, where)
        self.mounts.append(where)

    def swapon(self, dev):
        sh('swapon', dev)
        self.swaps.append(dev)

    def close(self):
        errors = []
        for argv in ([['swapoff', s] for s in self.swaps] + [['umount', m] for m in reversed(self.mounts)]
                     + ([['partx', '-d', self.dev]] if self.partitioned and self.dev else [])
                     + ([['losetup', '-d', self.dev]] if self.dev else [])):
            p = subprocess.run(argv, capture_output=True, text=True, check=False)
            if p.returncode:
                errors.append('%s: %s' % (' '.join(argv), p.stderr.strip()))
        os.unlink(self.image)
        attached = sh('losetup', '-j', self.image) if os.path.exists(self.image) else ''
        assert not errors and not attached, errors


@pytest.fixture
def loop():
    made = []

    def make(size=64 * MiB):
        lo = Loop(size)
        made.append(lo)
        return lo
    try:
        yield make
    finally:
        for lo in made:
            lo.close()


def refused(dev, *words, **kw):
    with pytest.raises(DeviceGuardError) as e:
        check_device_writable(dev, **kw)
    msg = str(e.value)
    for w in words:
        assert w in msg, msg
    return msg


def test_whole_disk_with_a_mounted_partition_is_refused_and_left_intact(loop, tmp_path):
    lo = loop()
    p1, p2 = lo.partition()
    sh('mkfs.ext4', '-q', p1)
    mnt = tmp_path / 'mnt'
    mnt.mkdir()
    lo.mount(p1, str(mnt))
    (mnt / 'precious').write_text('user data\n')
    os.sync()
    before = sha256(lo.dev)
    # neither the whole disk nor the partition, whatever the options
    for kw in (dict(destructive=True, force=True), dict(destructive=False)):
        refused(lo.dev, lo.dev, p1, 'mounted on %s' % mnt, 'umount %s' % mnt, 'in use', **kw)
        refused(p1, p1, 'umount %s' % mnt, **kw)
    # the free, clean sibling partition may be written
    info = check_device_writable(p2, destructive=True)
    assert info['parent'] == os.path.basename(lo.dev) and info['signature'] is None
    assert info['size_bytes'] == 16 * MiB
    assert sha256(lo.dev) == before
    assert (mnt / 'precious').read_text() == 'user data\n'


def test_unmounted_disk_needs_destructive_then_force_for_its_partition_table(loop):
    lo = loop()
    p1, _p2 = lo.partition()
    sh('mkfs.ext4', '-q', p1)
    before = sha256(lo.dev)
    refused(lo.dev, lo.dev, 'destructive: true', destructive=False)
    refused(lo.dev, 'dos partition table', 'force: true', destructive=True)
    refused(p1, 'ext4', 'force: true', destructive=True)
    assert sha256(lo.dev) == before
    info = check_device_writable(lo.dev, destructive=True, force=True)
    assert info['partitions'] == [os.path.basename(p1), os.path.basename(_p2)]
    assert 'dos' in info['signature'] and info['major_minor'] == '7:%d' % os.minor(os.stat(lo.dev).st_rdev)


def test_active_swap_is_refused(loop):
    lo = loop(32 * MiB)
    sh('mkswap', '-q', lo.dev)
    lo.swapon(lo.dev)
    before = sha256(lo.dev)
    refused(lo.dev, 'active swap', 'swapoff %s' % lo.dev, destructive=True, force=True)
    assert sha256(lo.dev) == before


def test_swap_on_a_partition_refuses_the_whole_disk(loop):
    lo = loop()
    _p1, p2 = lo.partition()
    sh('mkswap', '-q', p2)
    lo.swapon(p2)
    refused(lo.dev, '%s (its partition) is active swap' % p2, 'swapoff %s' % p2, destructive=True, force=True)


def test_a_device_another_process_holds_exclusively_is_busy(loop):
    lo = loop(16 * MiB)
    child = subprocess.Popen(
        [sys.executable, '-c', 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL); '
                               'print("held", flush=True); sys.stdin.read()', lo.dev],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == 'held'
        before = sha256(lo.dev)
        refused(lo.dev, 'busy', 'fuser -vm %s' % lo.dev, destructive=True, force=True)
        assert sha256(lo.dev) == before
    finally:
        child.kill()
        child.wait()
    # released: the same device passes
    assert check_device_writable(lo.dev, destructive=True)['signature'] is None


@pytest.mark.skipif(not shutil.which('drbdmeta'), reason='drbdmeta is not installed')
@pytest.mark.parametrize('version', ['v08', 'v09'])
def test_drbd_meta_data_needs_force(loop, version):
    lo = loop(32 * MiB)
    subprocess.run(['drbdmeta', '--force', '97', version, lo.dev, 'internal', 'create-md', '1'],
                   stdin=subprocess.DEVNULL, capture_output=True, check=True)
    refused(lo.dev, 'DRBD meta-data %s' % version, 'force: true', destructive=True)
    assert 'DRBD' in check_device_writable(lo.dev, destructive=True, force=True)['signature']


def test_clean_loop_device_is_allowed(loop):
    lo = loop(16 * MiB)
    assert is_block_device(lo.dev)
    info = check_device_writable(lo.dev, destructive=True, what='benchmark')
    assert info == {'path': lo.dev, 'name': os.path.basename(lo.dev), 'major_minor': info['major_minor'],
                    'size_bytes': 16 * MiB, 'signature': None, 'partitions': [], 'parent': None}
    # through a symlink (as /dev/disk/by-id/... are), the message and the verdict are the device's
    link = '/var/tmp/devguard-link-%d' % os.getpid()
    os.symlink(lo.dev, link)
    try:
        assert check_device_writable(link, destructive=True)['name'] == os.path.basename(lo.dev)
        refused(link, '%s (%s)' % (link, lo.dev), 'refusing to benchmark', destructive=False, what='benchmark')
    finally:
        os.unlink(link)
