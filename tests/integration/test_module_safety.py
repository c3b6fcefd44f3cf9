"""Issue 14 sections 1 and 5 through the real modules (`ansible localhost -m`), on real loop devices.

- fio: `exec_prerun` in options is refused before fio runs (the canary is never created);
  `filename=/dev/loopN` without `destructive: true` is refused and the device's bytes are intact.
- (every class of the device guard through dd, fio and drbd_md, the data checked: test_devguard_live.py)
- dd checks the free space before writing: 64M on a 32 MiB ext4 is refused with the path, the
  bytes needed and the bytes available, and nothing is left there.
Loop devices, partition nodes and mounts are released in `finally` (the Loop helper of
test_devguard_live.py).
"""

import os

import pytest

from conftest import module
import test_devguard_live
from test_devguard_live import MiB, sh, sha256

loop = test_devguard_live.loop  # the fixture: loop devices, partitions and mounts released in finally

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for loop devices and mounts')


def test_fio_exec_prerun_is_refused_and_never_runs(env, tmp_path):
    canary = tmp_path / 'canary'
    work = tmp_path / 'work'
    work.mkdir()
    rc, status, res = module(env, 'fio', {'path': str(work), 'size': '1M', 'rw': 'read',
                                          'options': {'exec_prerun': 'touch %s' % canary}})
    assert rc != 0 and 'exec_prerun' in res['msg'] and 'allow_unsafe_options: true' in res['msg'], res
    assert not canary.exists()
    assert os.listdir(work) == []
    # in check mode the refusal is reported in the dry run, not raised
    rc, status, res = module(env, 'fio', {'path': str(work), 'options': {'exec_prerun': 'touch %s' % canary}},
                             check=True)
    assert rc == 0 and 'exec_prerun' in res['bench_dry_run']['refused'] and not canary.exists()


def test_fio_on_a_device_needs_destructive_and_leaves_its_data(env, tmp_path, loop):
    lo = loop(16 * MiB)
    with open(lo.dev, 'r+b') as f:
        f.write(os.urandom(16 * MiB))
    before = sha256(lo.dev)
    work = tmp_path / 'work'
    work.mkdir()
    rc, status, res = module(env, 'fio', {'path': str(work), 'rw': 'write', 'size': '4M', 'bs': '64k',
                                          'options': {'filename': lo.dev}})
    assert rc != 0 and lo.dev in res['msg'] and 'destructive: true' in res['msg'], res
    assert sha256(lo.dev) == before
    assert os.listdir(work) == []
    rc, status, res = module(env, 'fio', {'path': str(work), 'rw': 'write', 'options': {'filename': lo.dev}},
                             check=True)
    assert rc == 0 and lo.dev in res['bench_dry_run']['writes'] and 'destructive' in res['bench_dry_run']['refused']


def test_dd_checks_free_space_before_writing(env, tmp_path, loop):
    lo = loop(32 * MiB)
    sh('mkfs.ext4', '-q', lo.dev)
    mnt = tmp_path / 'small'
    mnt.mkdir()
    lo.mount(lo.dev, str(mnt))
    for data in ('random', 'zero'):
        rc, status, res = module(env, 'dd', {'path': str(mnt), 'size': '64M', 'data': data})
        assert rc != 0, res
        msg = res['msg']
        assert msg.startswith('not enough free space in %s: dd would write %d bytes' % (mnt, 64 * MiB)), msg
        assert 'bytes' in msg.split('only ', 1)[1]
        assert sorted(os.listdir(mnt)) == ['lost+found']
    rc, status, res = module(env, 'dd', {'path': str(mnt), 'size': '4M'})
    assert rc == 0 and res['bench_result']['metrics']['bytes']['value'] == 4 * MiB, res
