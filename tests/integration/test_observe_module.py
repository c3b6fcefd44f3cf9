"""benchlab.bench.observe on its own (`ansible localhost -m`): started, a real dd meanwhile (not through
benchlab), stopped; the window's summary shows dd's bytes on the loop device under the path, the
sampler process is gone and its state directory removed. A directory of another run id is refused
and left alone. Check mode starts nothing. About 6 s under the shared live lock."""

import json
import os
import subprocess
import tempfile
import time

import pytest

from conftest import module

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for the loop device and the mount')

MiB = 1024 * 1024


@pytest.fixture
def ext4_loop(tmp_path):
    fd, img = tempfile.mkstemp(prefix='observe-', suffix='.img', dir='/var/tmp')
    os.close(fd)
    os.truncate(img, 128 * MiB)
    undo = [['rm', '-f', img]]
    try:
        dev = subprocess.run(['losetup', '-f', '--show', img], capture_output=True, text=True, check=True).stdout.strip()
        undo.append(['losetup', '-d', dev])
        subprocess.run(['mkfs.ext4', '-q', dev], check=True)
        mnt = tmp_path / 'mnt'
        mnt.mkdir()
        subprocess.run(['mount', dev, str(mnt)], check=True)
        undo.append(['umount', str(mnt)])
        yield dev, str(mnt)
    finally:
        for step in reversed(undo):
            subprocess.run(step, capture_output=True, check=False)


def alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except OSError:
        return False


def test_started_then_stopped_sees_what_happened_in_between(env, ext4_loop, tmp_path):
    dev, mnt = ext4_loop
    parent = tmp_path / 'state'
    parent.mkdir()
    rc, _s, started = module(env, 'observe', {'state': 'started', 'paths': [mnt], 'interval_s': 0.5,
                                              'parent': str(parent), 'run_id': 'obs-1', 'max_s': 60})
    assert rc == 0 and started['changed'], started
    sid, pid = started['observe_id'], started['pid']
    assert os.path.dirname(sid) == str(parent) and alive(pid)
    assert [l['name'] for l in started['layers']][2] == os.path.basename(dev)
    marker = json.loads(open(os.path.join(sid, '.benchlab-owner.json')).read())
    assert marker['run_id'] == 'obs-1' and marker['pgid'] == pid
    subprocess.run(['dd', 'if=/dev/urandom', 'of=%s/f' % mnt, 'bs=1M', 'count=24', 'conv=fdatasync', 'status=none'],
                   check=True)
    time.sleep(1.2)
    # another run's id: refused, the sampler and its directory left as they are
    rc, _s, res = module(env, 'observe', {'state': 'stopped', 'id': sid, 'run_id': 'someone-else'})
    assert rc != 0 and 'not ours, left alone' in res['msg'] and alive(pid) and os.path.isdir(sid)
    rc, _s, res = module(env, 'observe', {'state': 'stopped', 'id': sid, 'run_id': 'obs-1'})
    assert rc == 0, res
    obs = res['observed']
    loop = next(d for d in obs['devices'] if d['name'] == os.path.basename(dev))
    assert loop['write_bytes'] >= 24 * MiB and obs['samples'] >= 3 and obs['window_s'] >= 1.0
    assert obs['series'] in res['bench_observed'] and 'tool' not in obs
    assert res['signalled'] and res['signalled'][0]['pid'] == pid
    for _attempt in range(30):
        if not alive(pid):
            break
        time.sleep(0.1)
    assert not alive(pid) and not os.path.exists(sid)


def test_check_mode_starts_nothing(env, tmp_path):
    rc, _s, res = module(env, 'observe', {'state': 'started', 'paths': [str(tmp_path)], 'parent': str(tmp_path),
                                          'run_id': 'obs-2'}, check=True)
    assert rc == 0 and not res['changed'] and 'pid' not in res
    assert [p for p in os.listdir(str(tmp_path)) if p.startswith('benchlab-observe-')] == []


def test_a_directory_without_the_marker_is_refused(env, tmp_path):
    fake = tmp_path / 'benchlab-observe-abcdef'
    fake.mkdir()
    rc, _s, res = module(env, 'observe', {'state': 'stopped', 'id': str(fake), 'run_id': 'obs-3'})
    assert rc != 0 and 'not ours' in res['msg'] and fake.is_dir()


def test_a_parent_that_is_not_for_temporary_files_is_refused(env, tmp_path):
    """Before: parent=/etc was taken and the state directory written there. A link under /tmp to /etc
    is judged by where it leads."""
    before = sorted(os.listdir('/etc'))
    link = tmp_path / 'etc-link'
    link.symlink_to('/etc')
    for parent, shown in (('/etc', '/etc'), (str(link), '%s (/etc)' % link)):
        rc, _s, res = module(env, 'observe', {'state': 'started', 'paths': [str(tmp_path)], 'parent': parent,
                                              'run_id': 'obs-etc'})
        assert rc != 0 and res['msg'].startswith('parent: %s is not a directory for temporary files' % shown), res
    assert sorted(os.listdir('/etc')) == before
