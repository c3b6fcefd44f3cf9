"""Issue 27, the target side, for real: what fio options, dbench load files, a signal to the module and
a cell path can reach outside the work directory, through the real modules (`ansible localhost -m`).

Each test first does the harm by hand with the real tool against files made for the purpose (so the
test shows the hazard exists on this machine, as the finding says), then gives the same input to the
benchlab module, which refuses it naming the option or line; the files it would have reached are
unchanged (sha256 before and after):
- fio `ioengine=e4defrag` with `donorname=../../victim.txt`: fio truncates the victim to 0 bytes;
- fio `cgroup=<..>/x`: fio makes the directory and writes its pid into `x/tasks` of a user's tree;
- fio `ioengine=nbd` against an image served by qemu-nbd on a unix socket: fio overwrites the image;
- a dbench load file with Deltree/Unlink/NTCreateX+WriteX on `\\..\\..\\...`: dbench empties a
  directory, deletes a file and zeroes another;
- a SIGTERM to the fio module stops its fio, but not a user's process working in the work directory;
- a cell path that is a symlink to /etc, and /proc, are refused naming where they resolve to;
- fio `rw=trim` on tmpfs and `fill_device=1` / a size beyond the free space on a 32 MiB ext4 are
  refused with the cause, before fio writes anything.
Every server, process, loop device and mount made here is released in `finally`. Under the shared
lock: `flock /tmp/benchlab-live.lock .venv/bin/python -m pytest tests/integration/test_hostile_target_input.py`.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import BIN, REPO, module, processes_with
import test_devguard_live
from test_devguard_live import MiB, sh

loop = test_devguard_live.loop  # the fixture: loop devices and mounts released in finally

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root (fio cgroups, loop devices, mounts)')
FIO = shutil.which('fio')
DBENCH = shutil.which('dbench')


def sha(path):
    with open(str(path), 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def tree(root):
    """{relative path: sha256 or 'dir'} of everything under root."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(str(root)):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), str(root))] = 'dir'
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, str(root))] = sha(p)
    return out


def victims(base):
    """A cell directory and, beside it, a user's files of random content; returns (cell, before)."""
    cell = base / 'data' / 'cell'
    cell.mkdir(parents=True)
    (base / 'victim-dir').mkdir()
    for name in ('victim.txt', 'zeroed.bin', 'victim-dir/a'):
        (base / name).write_bytes(os.urandom(65536))
    return cell, tree(base)


def outside(base, cell):
    return dict((k, v) for k, v in tree(base).items() if not k.startswith('data'))


@pytest.mark.skipif(not FIO, reason='fio is not installed')
def test_fio_e4defrag_donor_outside_is_refused(env, tmp_path):
    by_hand = tmp_path / 'by-hand'
    cell, _before = victims(by_hand)
    subprocess.run([FIO, '--name=j', '--ioengine=e4defrag', '--donorname=../../victim.txt', '--inplace=1',
                    '--rw=write', '--size=1m', '--bs=64k', '--output-format=terse'], cwd=str(cell),
                   capture_output=True, timeout=120, check=False)
    assert (by_hand / 'victim.txt').stat().st_size == 0        # the finding: fio truncated it

    base = tmp_path / 'module'
    cell, before = victims(base)
    # the module's work directory is <cell>/benchlab-fio-*: ../../../victim.txt is base/victim.txt
    rc, _s, res = module(env, 'fio', {'path': str(cell), 'rw': 'write', 'size': '1M', 'bs': '64k',
                                      'options': {'ioengine': 'e4defrag', 'donorname': '../../../victim.txt',
                                                  'inplace': 1}})
    assert rc != 0 and 'options: ioengine=e4defrag is refused' in res['msg'], res
    assert 'files besides the job\'s own' in res['msg'] and 'allow_unsafe_options: true' in res['msg']
    job = tmp_path / 'job.fio'
    job.write_text('[defrag]\nioengine=e4defrag\ndonorname=../../../victim.txt\ninplace=1\nrw=write\nsize=1m\n')
    rc, _s, res = module(env, 'fio', {'path': str(cell), 'job_file': str(job)})
    assert rc != 0 and '%s line 2 ([defrag]): ioengine=e4defrag is refused' % job in res['msg'], res
    assert outside(base, cell) == dict((k, v) for k, v in before.items() if not k.startswith('data'))
    assert os.listdir(str(cell)) == []


def _cgroup_escape(target):
    """A cgroup name that leads from fio's cgroup mount point (cgroup.c find_cgroup_mnt: the first cgroup
    mount with blkio, or the cgroup2 one) to `target`. fio joins them in a 64-byte buffer: keep it short."""
    with open('/proc/mounts') as f:
        for line in f:
            _src, where, fstype, opts = line.split()[:4]
            if (fstype == 'cgroup' and 'blkio' in opts) or fstype == 'cgroup2':
                return '../' * len(where.strip('/').split('/')) + str(target).lstrip('/')
    pytest.skip('no cgroup hierarchy fio would use is mounted')


@pytest.mark.skipif(not FIO, reason='fio is not installed')
def test_fio_cgroup_outside_the_cgroup_tree_is_refused(env, tmp_path):
    short = '/var/tmp/bl27cg-%d' % os.getpid()       # fio's 64-byte cgroup path: a short user directory
    try:
        os.mkdir(short)
        user = os.path.join(short, 'u')
        os.mkdir(user)
        cell = tmp_path / 'cell'
        cell.mkdir()
        proc = subprocess.run([FIO, '--name=j', '--cgroup=%s' % _cgroup_escape(os.path.join(user, 'x')), '--rw=read',
                               '--size=64k', '--output-format=terse'], cwd=str(tmp_path), capture_output=True, text=True,
                              timeout=120, check=False)
        # the finding: fio made the directory in the user's tree and wrote its pid into its tasks file
        # (cgroup v1 here, blkio mounted; with cgroup v2 only, fio writes cgroup.procs)
        made = sorted(os.listdir(os.path.join(user, 'x'))) if os.path.isdir(os.path.join(user, 'x')) else []
        assert made in (['tasks'], ['cgroup.procs']), (made, proc.stdout[-300:], proc.stderr[-300:])
        shutil.rmtree(os.path.join(user, 'x'))
        with open(os.path.join(user, 'notes.txt'), 'wb') as f:
            f.write(os.urandom(4096))
        before = tree(short)
        rc, _s, res = module(env, 'fio', {'path': str(cell), 'rw': 'read', 'size': '1M',
                                          'options': {'cgroup': _cgroup_escape(os.path.join(user, 'x'))}})
        assert rc != 0 and 'options: cgroup=../' in res['msg'] and 'cgroup hierarchy' in res['msg'], res
        assert tree(short) == before and os.listdir(str(cell)) == []
    finally:
        shutil.rmtree(short, ignore_errors=True)


@pytest.mark.skipif(not FIO or not shutil.which('qemu-nbd'), reason='needs fio and qemu-nbd')
def test_fio_nbd_engine_is_refused_and_the_served_image_keeps_its_bytes(env, tmp_path):
    image = tmp_path / 'image.raw'
    image.write_bytes(os.urandom(16 * MiB))
    sock = tmp_path / 'nbd.sock'
    server = subprocess.Popen(['qemu-nbd', '-k', str(sock), '-f', 'raw', '--persistent', str(image)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _i in range(100):
            if sock.exists():
                break
            time.sleep(0.1)
        uri = 'nbd+unix:///?socket=%s' % sock
        before = sha(image)
        cell = tmp_path / 'cell'
        cell.mkdir()
        rc, _s, res = module(env, 'fio', {'path': str(cell), 'rw': 'write', 'size': '8M', 'bs': '64k',
                                          'options': {'ioengine': 'nbd', 'uri': uri}})
        assert rc != 0 and 'options: ioengine=nbd is refused' in res['msg'], res
        assert 'across the network' in res['msg']
        assert sha(image) == before and os.listdir(str(cell)) == []
        # the finding, by hand: fio writes the served image through the socket
        subprocess.run([FIO, '--name=j', '--ioengine=nbd', '--uri=%s' % uri, '--rw=write', '--size=8m', '--bs=64k',
                        '--output-format=terse'], cwd=str(cell), capture_output=True, timeout=120, check=False)
        assert sha(image) != before
    finally:
        server.terminate()
        server.wait(timeout=30)


HOSTILE_LOAD = ('Deltree "\\..\\..\\..\\victim-dir" NT_STATUS_OK\n'
                'Unlink "\\..\\..\\..\\victim.txt" 0x10 NT_STATUS_OK\n'
                'NTCreateX "\\..\\..\\..\\zeroed.bin" 0x0 0x5 1001 NT_STATUS_OK\n'
                'WriteX 1001 0 4096 4096 NT_STATUS_OK\n'
                'Close 1001 NT_STATUS_OK\n')


@pytest.mark.skipif(not DBENCH, reason='dbench is not installed')
def test_dbench_load_file_leaving_the_work_directory_is_refused(env, tmp_path):
    load = tmp_path / 'hostile.txt'
    load.write_text(HOSTILE_LOAD)
    by_hand = tmp_path / 'by-hand'
    cell, _before = victims(by_hand)
    work = cell / 'benchlab-dbench-byhand'      # where the module's -D would be
    work.mkdir()
    subprocess.run(['timeout', '-k', '5', '60', DBENCH, '-t', '2', '-D', str(work), '-c', str(load), '1'],
                   capture_output=True, timeout=90, check=False)
    # the finding: the directory emptied, the file deleted, the other zeroed (4096 zero bytes)
    assert os.listdir(str(by_hand / 'victim-dir')) == [] and not (by_hand / 'victim.txt').exists()
    assert (by_hand / 'zeroed.bin').read_bytes() == b'\0' * 4096

    base = tmp_path / 'module'
    cell, before = victims(base)
    rc, _s, res = module(env, 'dbench', {'path': str(cell), 'loadfile': str(load), 'time': 2})
    assert rc != 0, res
    assert res['msg'].startswith('dbench load file refused: loadfile %s line 1: ' % load), res['msg']
    assert 'victim-dir' in res['msg'] and 'leads out of the work directory' in res['msg']
    assert tree(base) == before and os.listdir(str(cell)) == []
    assert not any(n.startswith('benchlab-dbench-load-') for n in os.listdir('/dev/shm'))


@pytest.mark.skipif(not FIO, reason='fio is not installed')
def test_sigterm_to_the_fio_module_spares_a_users_process_in_the_work_directory(env, tmp_path):
    cell = tmp_path / 'cell'
    cell.mkdir()
    argv = [str(BIN / 'ansible'), 'localhost', '-i', str(REPO / 'inventories/local'), '-m', 'benchlab.bench.fio', '-a',
            json.dumps({'path': str(cell), 'rw': 'read', 'bs': '64k', 'size': '8M', 'runtime': 120, 'time_based': True,
                        'direct': False, 'run_id': 'sigterm-test', 'run_key': 'k'}), '-o']
    play = subprocess.Popen(argv, cwd=str(REPO), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    user = None
    try:
        workdir, marker = None, None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (marker and marker.get('pgid') and processes_with(workdir, 'fio')):
            time.sleep(0.2)
            dirs = [d for d in os.listdir(str(cell)) if d.startswith('benchlab-fio-')]
            if dirs:
                workdir = str(cell / dirs[0])
                try:
                    with open(os.path.join(workdir, '.benchlab-owner.json')) as f:
                        marker = json.load(f)
                except (OSError, ValueError):
                    marker = None
        assert marker and marker['pgid'], 'fio did not start: %s' % (play.poll(),)
        # a user's process that merely works in the work directory, started after fio, in a session of its own
        user = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], cwd=workdir,
                                start_new_session=True)
        time.sleep(0.3)
        fio_pids = processes_with(workdir, 'fio')
        assert fio_pids
        os.kill(marker['pid'], signal.SIGTERM)          # the module process (its marker names it)
        out, err = play.communicate(timeout=120)
        assert 'interrupted by signal 15' in out, out[-2000:] + err[-2000:]
        assert user.poll() is None, 'the user\'s process was killed'
        assert processes_with(workdir, 'fio') == [] and not os.path.exists(workdir)
    finally:
        if play.poll() is None:
            play.kill()
            play.wait()
        if user is not None:
            user.kill()
            user.wait()


def test_a_cell_path_resolving_to_etc_or_proc_is_refused(env, tmp_path):
    link = tmp_path / 'cell'
    link.symlink_to('/etc')
    before = os.stat('/etc').st_mtime_ns, sorted(os.listdir('/etc'))
    rc, _s, res = module(env, 'dd', {'path': str(link), 'size': '1M'})
    assert rc != 0 and res['msg'].startswith('path %s resolves to /etc, which is in /etc' % link), res
    # no work directory was made (and removed) in /etc: its modification time and entries are as they were
    assert (os.stat('/etc').st_mtime_ns, sorted(os.listdir('/etc'))) == before
    rc, _s, res = module(env, 'fio', {'path': '/proc', 'size': '1M'})
    assert rc != 0 and res['msg'].startswith('path /proc is in /proc (the kernel\'s process and settings interface, '
                                             'not storage)'), res


@pytest.mark.skipif(not FIO, reason='fio is not installed')
def test_fio_trim_on_tmpfs_names_the_cause(env):
    cell = '/dev/shm/benchlab-trim-test-%d' % os.getpid()
    os.mkdir(cell)
    try:
        rc, _s, res = module(env, 'fio', {'path': cell, 'rw': 'trim', 'size': '1M', 'direct': False})
        assert rc != 0 and 'options: rw=trim: fio trims (discards) with BLKDISCARD' in res['msg'], res
        assert 'Inappropriate ioctl for device' in res['msg'] and os.listdir(cell) == []
    finally:
        shutil.rmtree(cell)


@pytest.mark.skipif(not FIO, reason='fio is not installed')
def test_fio_fill_device_and_a_size_beyond_the_free_space_are_refused(env, tmp_path, loop):
    lo = loop(32 * MiB)
    sh('mkfs.ext4', '-q', lo.dev)
    mnt = tmp_path / 'mnt'
    mnt.mkdir()
    lo.mount(lo.dev, str(mnt))
    (mnt / 'user.txt').write_bytes(os.urandom(4096))
    before = tree(mnt)
    free = os.statvfs(str(mnt)).f_bavail
    rc, _s, res = module(env, 'fio', {'path': str(mnt), 'rw': 'write', 'bs': '1M', 'options': {'fill_device': 1}})
    assert rc != 0 and 'options: fill_device=1: fio would write' in res['msg'], res
    assert 'until its file system is full' in res['msg']
    rc, _s, res = module(env, 'fio', {'path': str(mnt), 'rw': 'write', 'bs': '1M', 'size': '16M', 'numjobs': 4})
    assert rc != 0 and 'not enough free space in %s/benchlab-fio-' % mnt in res['msg'], res
    assert 'fio would write 67108864 bytes (64 MiB)' in res['msg']
    assert tree(mnt) == before and os.statvfs(str(mnt)).f_bavail == free
