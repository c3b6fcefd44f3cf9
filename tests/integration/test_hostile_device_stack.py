"""The device guard follows the whole stack (issue 27 finding 4 / build item 3), through the writers.

Reproduced first on main as the finding describes: a loop device made with an offset into another
loop device whose ext4 is mounted passed the guard with `destructive: true` (blkid sees no signature
at the offset) and dd overwrote the mounted file system's file; `e2fsck -fn` still called the file
system clean — silent corruption. Each case here builds such a stack on real loop devices (root),
runs a real writer against the top device through `ansible localhost -m benchlab.bench.dd` (and
`benchlab.bench.fio` for the finding itself) with `destructive: true, force: true`, and checks:
the writer is refused naming what holds the storage below; the user's file (sha256, read back after
a remount so the page cache cannot hide a change) and `e2fsck -fn` are as before.

The cases: a loop at an offset into a mounted loop device (dd and fio); a loop on a loop on a
mounted loop (recursive); a second loop over the image file of a mounted loop, at an offset; a
partition (`partx -a`: `losetup -P` makes no partition nodes here) of a loop device whose image
another, mounted loop device reaches at an offset inside that partition; a loop device over a
partitioned loop device, inside its mounted partition; a loop over
an image file that a process holds open; a loop over an active swap file. The control: a loop over
a file nobody else uses is written (dd succeeds), and so is a loop over the image of a mounted loop
device at bytes that loop device does not reach (past its sizelimit).

Partitions that overlap each other cannot be made on this kernel (partx's BLKPG_ADD_PARTITION
refuses an overlap, and partition scanning makes no nodes here): that case is unit-tested over a
built sysfs tree (tests/unit/plugins/module_utils/test_layers.py).

Every loop device, partition node, mount, swap area and process is released in `finally`, also when
an assertion fails. Runs under the shared live lock; about 25 s in all.
"""

import os
import struct
import subprocess
import sys
import tempfile

import pytest

from conftest import module
from test_devguard_live import sha256 as sha256_file   # of a device or a file

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for loop devices, mounts and swap')

MiB = 1024 * 1024


def sh(*argv):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=True).stdout.strip()


class Stack:
    """Loop devices, partition nodes, mounts, swap areas and processes made for one case; close()
    undoes every one of them, in reverse order, also after a failure."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.undo = []

    def image(self, size):
        fd, path = tempfile.mkstemp(prefix='devstack-', suffix='.img', dir='/var/tmp')
        os.close(fd)
        self.undo.append(['rm', '-f', path])
        os.truncate(path, size)
        return path

    def loop(self, backing, offset=None, sizelimit=None):
        argv = ['losetup', '-f', '--show']
        if offset is not None:
            argv += ['-o', str(offset)]
        if sizelimit is not None:
            argv += ['--sizelimit', str(sizelimit)]
        dev = sh(*(argv + [backing]))
        self.undo.append(['losetup', '-d', dev])
        return dev

    def partitions(self, dev, parts):
        """An msdos table with `parts` [(start sector, sectors)], its nodes made by partx -a."""
        mbr = bytearray(512)
        for i, (start, count) in enumerate(parts):
            mbr[446 + 16 * i:446 + 16 * (i + 1)] = b'\x00\xff\xff\xff\x83\xff\xff\xff' + struct.pack('<II', start, count)
        mbr[510:512] = b'\x55\xaa'
        with open(dev, 'r+b') as f:
            f.write(bytes(mbr))
            os.fsync(f.fileno())
        self.undo.append(['partx', '-d', dev])
        sh('partx', '-a', dev)
        return ['%sp%d' % (dev, i + 1) for i in range(len(parts))]

    def ext4_with_file(self, dev, name, size=4 * MiB):
        """mkfs.ext4 on `dev`, mounted; a file of random data in it. Returns (mount point, file)."""
        sh('mkfs.ext4', '-q', '-b', '4096', dev)
        mnt = tempfile.mkdtemp(prefix='devstack-mnt-', dir=str(self.tmp))
        sh('mount', dev, mnt)
        self.undo.append(['umount', mnt])
        path = os.path.join(mnt, name)
        with open(path, 'wb') as f:
            f.write(os.urandom(size))
            os.fsync(f.fileno())
        return mnt, path

    def extent(self, path):
        """(byte offset, length) of the file's first extent on its device (filefrag -v, 4096-byte blocks)."""
        out = sh('filefrag', '-b4096', '-v', path)
        for line in out.splitlines():
            fields = line.replace(':', ' ').replace('..', ' ').split()
            if fields and fields[0] == '0':
                return int(fields[3]) * 4096, (int(fields[2]) - int(fields[1]) + 1) * 4096
        raise AssertionError(out)

    def swapfile(self, path):
        with open(path, 'r+b') as f:     # swapon takes no file with holes
            f.write(b'\0' * os.fstat(f.fileno()).st_size)
            os.fsync(f.fileno())
        sh('mkswap', '-q', path)
        sh('swapon', path)
        self.undo.append(['swapoff', path])

    def holder(self, path):
        child = subprocess.Popen([sys.executable, '-c', 'import sys; f = open(sys.argv[1], "rb"); print("open", '
                                  'flush=True); sys.stdin.read()', path], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        self.undo.append(child)
        assert child.stdout.readline().strip() == 'open'
        return child

    def close(self):
        errors = []
        for step in reversed(self.undo):
            if isinstance(step, subprocess.Popen):
                step.kill()
                step.wait()
                continue
            p = subprocess.run(step, capture_output=True, text=True, check=False)
            if p.returncode:
                errors.append('%s: %s' % (' '.join(step), p.stderr.strip()))
        assert not errors, errors


@pytest.fixture
def stack(tmp_path):
    s = Stack(tmp_path)
    try:
        yield s
    finally:
        s.close()


def remount_sha(mnt, dev, path):
    """The file's sha256 read from the device (unmounted and mounted again: no page cache)."""
    sh('umount', mnt)
    sh('mount', dev, mnt)
    return sha256_file(path)


def fsck_clean(mnt, dev):
    sh('umount', mnt)
    fsck = subprocess.run(['e2fsck', '-fn', dev], capture_output=True, text=True, check=False)
    sh('mount', dev, mnt)
    return fsck.returncode == 0, fsck.stdout + fsck.stderr


def write_with(env, tmp_path, writer, dev):
    if writer == 'dd':
        return module(env, 'dd', {'path': dev, 'size': '1M', 'bs': '64k', 'destructive': True, 'force': True})
    # a job file: with the module's own options fio joins --directory and filename (it would write
    # <work>/dev/loopN, a file); a job file's filename= names the device itself
    work = tmp_path / 'fio-work'
    work.mkdir(exist_ok=True)
    job = '[stack]\nfilename=%s\nrw=write\nbs=64k\nsize=1M\nend_fsync=1\n' % dev
    return module(env, 'fio', {'path': str(work), 'job_file_content': job, 'destructive': True, 'force': True})


def assert_refused_and_intact(env, tmp_path, writer, dev, mnt, fsdev, path, *words):
    before = remount_sha(mnt, fsdev, path)
    rc, _status, res = write_with(env, tmp_path, writer, dev)
    after = remount_sha(mnt, fsdev, path)
    clean, fsck = fsck_clean(mnt, fsdev)
    assert after == before, 'the user\'s file changed under %s (rc %s): %s' % (dev, rc, res.get('msg') or res)
    assert clean, fsck
    assert rc != 0, res
    for w in words:
        assert w in res['msg'], res['msg']
    assert 'no option overrides this' in res['msg']


@pytest.mark.parametrize('writer', ['dd', 'fio'])
def test_loop_at_an_offset_into_a_mounted_loop_device(env, tmp_path, stack, writer):
    """The finding itself: loop1 = losetup -o <the file's first extent> /dev/loop0, loop0's ext4 mounted."""
    img = stack.image(32 * MiB)
    lower = stack.loop(img)
    mnt, path = stack.ext4_with_file(lower, 'precious')
    offset, _length = stack.extent(path)
    top = stack.loop(lower, offset=offset, sizelimit=MiB)
    # what let it through: no signature at the offset
    assert subprocess.run(['blkid', '-p', top], capture_output=True, check=False).returncode == 2
    assert_refused_and_intact(env, tmp_path, writer, top, mnt, lower, path,
                              top, 'a loop device over %s' % lower, '%s is mounted on %s' % (lower, mnt),
                              'umount %s' % mnt)


def test_loop_on_a_loop_on_a_mounted_loop(env, tmp_path, stack):
    img = stack.image(32 * MiB)
    lower = stack.loop(img)
    mnt, path = stack.ext4_with_file(lower, 'precious')
    offset, _length = stack.extent(path)
    middle = stack.loop(lower)
    top = stack.loop(middle, offset=offset, sizelimit=MiB)
    assert_refused_and_intact(env, tmp_path, 'dd', top, mnt, lower, path,
                              'a loop device over %s' % middle, 'a loop device over %s' % lower,
                              '%s is mounted on %s' % (lower, mnt))


def test_second_loop_over_the_image_of_a_mounted_loop(env, tmp_path, stack):
    img = stack.image(32 * MiB)
    lower = stack.loop(img)
    mnt, path = stack.ext4_with_file(lower, 'precious')
    offset, _length = stack.extent(path)
    top = stack.loop(img, offset=offset, sizelimit=MiB)
    assert_refused_and_intact(env, tmp_path, 'dd', top, mnt, lower, path,
                              'a loop device over the file %s' % img, '%s reaches the same bytes' % lower,
                              '%s is mounted on %s' % (lower, mnt))


def test_partition_of_a_loop_over_the_image_of_a_mounted_loop(env, tmp_path, stack):
    """A partition (partx -a) of one loop device over an image, and a second loop device over the same
    image at an offset, its ext4 mounted; the partition starts where the user's file lies."""
    img = stack.image(64 * MiB)
    inner = stack.loop(img, offset=8 * MiB, sizelimit=24 * MiB)
    mnt, path = stack.ext4_with_file(inner, 'precious')
    offset, _length = stack.extent(path)
    disk = stack.loop(img)
    (p1,) = stack.partitions(disk, [((8 * MiB + offset) // 512, 4096)])
    assert_refused_and_intact(env, tmp_path, 'dd', p1, mnt, inner, path,
                              'a partition of %s' % disk, 'a loop device over the file %s' % img,
                              '%s reaches the same bytes' % inner, '%s is mounted on %s' % (inner, mnt))


def test_loop_over_a_partitioned_loop_inside_its_mounted_partition(env, tmp_path, stack):
    img = stack.image(64 * MiB)
    disk = stack.loop(img)
    (p1,) = stack.partitions(disk, [(2048, 40960)])
    mnt, path = stack.ext4_with_file(p1, 'precious')
    offset, _length = stack.extent(path)
    top = stack.loop(disk, offset=2048 * 512 + offset, sizelimit=MiB)
    assert_refused_and_intact(env, tmp_path, 'dd', top, mnt, p1, path,
                              'a loop device over %s' % disk, 'the partition %s' % p1,
                              '%s is mounted on %s' % (p1, mnt))


def test_loop_over_a_file_a_process_holds_open(env, tmp_path, stack):
    img = stack.image(8 * MiB)
    with open(img, 'r+b') as f:
        f.write(os.urandom(8 * MiB))
    before = sha256_file(img)
    child = stack.holder(img)
    top = stack.loop(img)
    rc, _status, res = module(env, 'dd', {'path': top, 'size': '1M', 'bs': '64k', 'destructive': True, 'force': True})
    assert sha256_file(img) == before
    assert rc != 0 and 'is open in process %d' % child.pid in res['msg'], res


def test_loop_over_an_active_swap_file(env, tmp_path, stack):
    img = stack.image(16 * MiB)
    os.chmod(img, 0o600)
    stack.swapfile(img)
    before = sha256_file(img)
    top = stack.loop(img, offset=8 * MiB)
    rc, _status, res = module(env, 'dd', {'path': top, 'size': '1M', 'bs': '64k', 'destructive': True, 'force': True})
    assert sha256_file(img) == before
    assert rc != 0 and 'the file %s is active swap' % img in res['msg'] and 'swapoff %s' % img in res['msg'], res


def test_control_a_loop_nobody_else_reaches_is_written(env, tmp_path, stack):
    """The guard still lets a free device be written: a loop over a file of its own, and a loop over
    the image of a mounted loop device at bytes that loop device does not reach (past its sizelimit)."""
    img = stack.image(8 * MiB)
    top = stack.loop(img)
    rc, _status, res = module(env, 'dd', {'path': top, 'size': '1M', 'bs': '64k', 'destructive': True})
    assert rc == 0, res
    assert res['bench_result']['metrics']['bytes']['value'] == MiB
    shared = stack.image(48 * MiB)
    lower = stack.loop(shared, sizelimit=32 * MiB)
    mnt, path = stack.ext4_with_file(lower, 'precious')
    beside = stack.loop(shared, offset=32 * MiB)
    before = remount_sha(mnt, lower, path)
    rc, _status, res = module(env, 'dd', {'path': beside, 'size': '1M', 'bs': '64k', 'destructive': True})
    assert rc == 0, res
    assert remount_sha(mnt, lower, path) == before
