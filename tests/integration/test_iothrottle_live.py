"""The I/O throttle the live tests slow a device with (iothrottle.py), for each mechanism: cgroup v1
blkio and cgroup v2 io.max. Each runs where the machine has it and is skipped, saying why, where it
cannot exist (an allowed skip, tests/skips-allowed.yml: this development machine has the v1 blkio
hierarchy, so the v2 io controller cannot be enabled; a cgroup v2 only host is the other way round).

A direct-I/O write and direct reads by a process in the cgroup: the cgroup's own statistics count the
bytes (the I/O went through it), and they took at least the time the limit allows (a lower bound the
throttle guarantees; a loaded machine only makes it longer). The loop device's image lives in
/dev/shm. The loop device and the cgroup are removed in `finally`. A few seconds.
"""

import os
import subprocess
import tempfile
import time

import pytest

import iothrottle

MiB = 1024 * 1024
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for the loop device and the cgroup')


def sh(*argv):
    return subprocess.run([str(a) for a in argv], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def device():
    image = tempfile.mkstemp(prefix='benchlab-throttle-', dir='/dev/shm')[1]
    dev = None
    try:
        with open(image, 'wb') as f:
            f.write(os.urandom(16 * MiB))
        dev = sh('losetup', '--find', '--show', image)
        yield dev, sh('lsblk', '-dno', 'MAJ:MIN', dev).strip()
    finally:
        if dev:
            subprocess.run(['losetup', '-d', dev], check=False)
        os.unlink(image)


@pytest.mark.parametrize('mechanism', iothrottle.MECHANISMS)
def test_the_throttle_governs_direct_writes_and_reads(mechanism, device, tmp_path):
    why = iothrottle.unavailable(mechanism)
    if why:
        pytest.skip(why)
    dev, majmin = device
    throttle = iothrottle.Throttle('benchlab-throttle', mechanism)
    try:
        throttle.limit(majmin, wbps=2 * 1000 * 1000, riops=100)
        t0 = time.monotonic()
        subprocess.run(throttle.wrap(['dd', 'if=/dev/zero', 'of=%s' % dev, 'bs=1M', 'count=4', 'oflag=direct',
                                      'status=none']), check=True)
        wrote_s = time.monotonic() - t0
        t0 = time.monotonic()
        subprocess.run(throttle.wrap(['dd', 'if=%s' % dev, 'of=/dev/null', 'bs=4k', 'count=300', 'iflag=direct',
                                      'status=none']), check=True)
        read_s = time.monotonic() - t0
        read, written = throttle.io_bytes(majmin)
        assert written >= 4 * MiB, (mechanism, written)
        assert read >= 300 * 4096, (mechanism, read)
        # 4 MiB at 2 MB/s is 2.1 s, 300 reads at 100/s 3 s: at least half of each, whatever a burst allowance
        assert wrote_s >= 1.0 and read_s >= 1.5, (mechanism, wrote_s, read_s)
        throttle.limit(majmin, wbps=0, riops=0)
    finally:
        assert throttle.remove()
