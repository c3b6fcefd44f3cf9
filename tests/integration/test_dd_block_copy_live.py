"""benchlab.bench.dd test copy with input on REAL loop devices (root), through `ansible -m`: a
block device copied onto another (dd if=A of=B bs=4M conv=fdatasync, caches dropped first), and
the device guard's refusals of the destination (not destructive, a signature without force, the
destination mounted, the same device twice; every class with the data checked, also a partition of
the input: test_devguard_live.py). After the copy the destination's first `size` bytes
equal the source's; after every refusal the destination's bytes are what they were.

Needs the lab lock (loop devices): `flock /work/wt/lab.lock .venv/bin/python -m pytest
tests/integration/test_dd_block_copy_live.py`. Every loop device and mount is released in
`finally`, also when an assertion fails.
"""

import hashlib
import os
import subprocess
import tempfile

import pytest

from conftest import module

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for loop devices and mounts')

MiB = 1024 * 1024


def sh(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True, check=True).stdout.strip()


def digest(dev, size=None):
    h = hashlib.sha256()
    left = size
    with open(dev, 'rb') as f:
        while left is None or left > 0:
            chunk = f.read(MiB if left is None else min(MiB, left))
            if not chunk:
                break
            h.update(chunk)
            if left is not None:
                left -= len(chunk)
    return h.hexdigest()


@pytest.fixture
def loops():
    made, mounts = [], []

    def make(size=32 * MiB, random=False):
        fd, image = tempfile.mkstemp(prefix='ddcopy-', suffix='.img', dir='/var/tmp')
        os.close(fd)
        made.append([image, None])
        if random:
            with open(image, 'wb') as f:
                f.write(os.urandom(size))
        else:
            os.truncate(image, size)
        made[-1][1] = sh('losetup', '-f', '--show', image)
        return made[-1][1]
    try:
        yield make, mounts
    finally:
        errors = []
        for where in reversed(mounts):
            p = subprocess.run(['umount', where], capture_output=True, text=True, check=False)
            errors += [p.stderr] if p.returncode else []
            os.rmdir(where)
        for image, dev in made:
            if dev:
                p = subprocess.run(['losetup', '-d', dev], capture_output=True, text=True, check=False)
                errors += [p.stderr] if p.returncode else []
            os.unlink(image)
        assert not errors, errors


def test_block_device_copy_and_the_guard_on_real_loop_devices(env, loops, tmp_path):
    make, mounts = loops
    src, dst = make(random=True), make()
    args = {'test': 'copy', 'input': src, 'path': dst, 'size': '16M', 'bs': '4M', 'guards': {'quiesce': False}}

    before = digest(dst)
    rc, status, res = module(env, 'dd', args)  # no destructive: the guard refuses
    assert 'FAILED' in status and 'destructive: true' in res['msg'], res
    assert digest(dst) == before

    rc, status, res = module(env, 'dd', dict(args, input=dst, destructive=True))  # the same device
    assert 'FAILED' in status and 'same device' in res['msg'], res
    assert digest(dst) == before

    rc, status, res = module(env, 'dd', dict(args, destructive=True))
    assert rc == 0 and 'SUCCESS' in status, res
    rec = res['bench_result']
    assert rec['test'] == 'copy' and rec['params']['input'] == src
    assert rec['metrics']['bytes']['value'] == 16 * MiB and rec['metrics']['throughput']['value'] > 0
    assert res['cmd'][1:] == ['if=' + src, 'of=' + dst, 'bs=4194304', 'count=4', 'conv=fdatasync'], res['cmd']
    assert rec['params']['drop_caches'] is True  # dropped for real (root)
    # the copy is exact beyond the head the module zeroes again afterwards (1 MiB), and the head is zero
    with open(src, 'rb') as a, open(dst, 'rb') as b:
        a.seek(MiB)
        b.seek(MiB)
        assert a.read(15 * MiB) == b.read(15 * MiB)
        b.seek(0)
        assert b.read(MiB) == b'\0' * MiB and res['cleared_bytes'] == MiB

    sh('mkfs.ext4', '-q', '-F', src)  # the input now has a superblock: a copy carries it over ...
    rc, status, res = module(env, 'dd', dict(args, destructive=True))
    assert rc == 0, res
    rc, status, res = module(env, 'dd', dict(args, destructive=True))  # ... and the next one is not refused
    assert rc == 0, res
    assert subprocess.run(['blkid', '-p', dst], capture_output=True, check=False).returncode == 2  # 2: none found

    sh('mkfs.ext4', '-q', '-F', dst)  # the destination now carries a file system
    before = digest(dst)
    rc, status, res = module(env, 'dd', dict(args, destructive=True))
    assert 'FAILED' in status and 'ext4' in res['msg'] and 'force: true' in res['msg'], res
    assert digest(dst) == before

    where = tempfile.mkdtemp(prefix='ddcopy-mnt-', dir='/var/tmp')
    sh('mount', dst, where)
    mounts.append(where)
    rc, status, res = module(env, 'dd', dict(args, destructive=True, force=True))  # mounted: never
    assert 'FAILED' in status and 'in use' in res['msg'], res
