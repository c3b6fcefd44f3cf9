# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Owned work directories (module_utils/run/workdir.py), the run skeleton's dry run
(module_utils/run/benchrun.py, through the real modules in check mode) and dd's free-space check.
Real directories and real processes; the modules run in-process with patch_module_args."""

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections import namedtuple

import pytest

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core < 2.19 (`make compat` runs the unit tests under 2.16)
    import contextlib

    from ansible.module_utils import basic

    @contextlib.contextmanager
    def patch_module_args(args):
        saved = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = json.dumps({'ANSIBLE_MODULE_ARGS': args}).encode()
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved

from ansible_collections.benchlab.bench.plugins.module_utils.run import benchrun as br
from ansible_collections.benchlab.bench.plugins.module_utils.run import workdir as wd
from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import space_needed
from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import free_space_problem


def test_marker_is_written_0600_with_the_contract_fields(tmp_path):
    d = wd.create_workdir(str(tmp_path), 'fio', run_id='r1', run_key='k1')
    assert os.path.basename(d).startswith('benchlab-fio-')
    st = os.stat(os.path.join(d, wd.MARKER))
    assert stat.S_IMODE(st.st_mode) == 0o600 and stat.S_IMODE(os.stat(d).st_mode) == 0o700
    doc = json.loads(open(os.path.join(d, wd.MARKER)).read())
    assert doc == dict(doc, benchlab=1, run_id='r1', run_key='k1', tool='fio', pid=os.getpid(), pgid=None,
                       pid_start=None, keep=False)
    assert set(doc) == {'benchlab', 'run_id', 'run_key', 'tool', 'created', 'pid', 'pgid', 'pid_start', 'keep'}
    wd.update_marker(d, pgid=123, pid_start=456)
    assert wd.read_marker(d)[0]['pgid'] == 123 and os.listdir(d) == [wd.MARKER]


def test_a_marker_that_is_a_symlink_or_not_json_does_not_count(tmp_path):
    d = tmp_path / 'benchlab-x-1'
    d.mkdir()
    real = tmp_path / 'elsewhere.json'
    real.write_text(json.dumps({'benchlab': 1, 'run_id': 'r', 'run_key': 'k', 'keep': False}))
    (d / wd.MARKER).symlink_to(real)
    assert wd.read_marker(str(d))[0] is None
    (d / wd.MARKER).unlink()
    (d / wd.MARKER).write_text('{not json')
    assert wd.read_marker(str(d)) == (None, 'marker is not valid JSON')
    assert wd.read_marker(str(d), uid=os.geteuid() + 1)[1].startswith('marker is owned by uid')


@pytest.fixture
def sleeper():
    procs = []

    def start(cwd=None, new_session=True):
        p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], cwd=cwd,
                             start_new_session=new_session)
        procs.append(p)
        return p
    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def test_cleanup_removes_only_this_runs_unkept_dirs_and_stops_only_their_groups(tmp_path, sleeper):
    base = str(tmp_path)
    mine = wd.create_workdir(base, 'fio', run_id='r1', run_key='k1')
    other_run = wd.create_workdir(base, 'fio', run_id='r2', run_key='k1')
    other_key = wd.create_workdir(base, 'fio', run_id='r1', run_key='k2')
    kept = wd.create_workdir(base, 'dd', run_id='r1', run_key='k1', keep=True)
    user = tmp_path / 'benchlab-keepme'
    user.mkdir()
    (user / 'data.txt').write_text('precious')
    (tmp_path / 'benchlab-runs').mkdir()
    tool = sleeper()
    wd.update_marker(mine, pgid=tool.pid, pid_start=wd.proc_start_time(tool.pid))
    theirs = sleeper()
    wd.update_marker(other_run, pgid=theirs.pid, pid_start=wd.proc_start_time(theirs.pid))
    bystander = sleeper(cwd=str(user))

    planned = wd.cleanup_owned([base], 'r1', 'k1', check=True)
    assert planned['removed'] == [mine] and os.path.isdir(mine) and tool.poll() is None
    out = wd.cleanup_owned([base], 'r1', 'k1', grace=2)
    assert out['removed'] == [mine]
    assert out['stopped'] == [{'dir': mine, 'pid': tool.pid, 'signal': 'SIGTERM'}]
    assert tool.wait(timeout=10) == -signal.SIGTERM
    assert theirs.poll() is None and bystander.poll() is None
    for d in (other_run, other_key, kept, str(user), str(tmp_path / 'benchlab-runs')):
        assert os.path.isdir(d), d
    assert (user / 'data.txt').read_text() == 'precious'
    reasons = dict((k['path'], k['reason']) for k in out['kept'])
    assert reasons[kept] == 'marker says keep: true'
    assert 'another run' in reasons[other_run] and 'another run' in reasons[other_key]
    assert reasons[str(user)].startswith('no marker')


@pytest.fixture
def stop_raises():
    """SIGTERM handled as a benchmark module handles it (benchrun._raise_interrupted)."""
    previous = signal.signal(signal.SIGTERM, br._raise_interrupted)
    yield
    signal.signal(signal.SIGTERM, previous)


def stop_during_fsync(monkeypatch):
    """A real SIGTERM to this process the moment the owner marker is fsynced (on a busy disk that
    fsync takes long enough for a stop to land in it)."""
    real = os.fsync

    def fsync(fd):
        os.kill(os.getpid(), signal.SIGTERM)
        real(fd)
    monkeypatch.setattr(wd.os, 'fsync', fsync)


def test_a_stop_during_the_marker_write_leaves_no_directory(tmp_path, monkeypatch, stop_raises):
    stop_during_fsync(monkeypatch)
    with pytest.raises(br.Interrupted):
        wd.create_workdir(str(tmp_path), 'dd', run_id='r', run_key='k')
    assert list(tmp_path.iterdir()) == []


def test_a_stop_inside_stop_deferred_is_acted_on_at_its_end(stop_raises):
    steps = []
    with pytest.raises(br.Interrupted, match='signal %d' % signal.SIGTERM):
        with br.stop_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)                 # the handler has run by now: held
            steps.append('the block ran to its end')
    assert steps == ['the block ran to its end']
    with br.stop_deferred():                 # nothing pending is left over for a later block
        steps.append('again')


class ModuleFailed(Exception):
    pass


class FailingModule(object):
    """What BenchRun uses of AnsibleModule; fail_json raises with the result."""
    check_mode = False

    def __init__(self):
        self.params = dict(guards={'quiesce': False}, keep=False, run_id='r', run_key='k', labels={})
        self.result = None

    def fail_json(self, **result):
        self.result = result
        raise ModuleFailed()


def test_a_run_stopped_while_it_makes_its_work_directory_removes_it(tmp_path, monkeypatch):
    module = FailingModule()
    stop_during_fsync(monkeypatch)
    with pytest.raises(ModuleFailed):
        with br.BenchRun(module, 'dd') as run:
            run.workdir_in(str(tmp_path))
            pytest.fail('the stop was not acted on')
    assert 'interrupted by signal %d' % signal.SIGTERM in module.result['msg']
    assert list(tmp_path.iterdir()) == []


def test_a_reused_pid_is_never_signalled(tmp_path, sleeper):
    d = wd.create_workdir(str(tmp_path), 'fio', run_id='r', run_key='k')
    stranger = sleeper()
    # the marker names this pid with another start time: the recorded process is gone
    wd.update_marker(d, pgid=stranger.pid, pid_start=wd.proc_start_time(stranger.pid) - 1)
    assert wd.recorded_processes(stranger.pid, wd.proc_start_time(stranger.pid) - 1) == []
    out = wd.cleanup_owned([str(tmp_path)], 'r', 'k', grace=0.5)
    assert out['stopped'] == [] and out['removed'] == [d]
    assert stranger.poll() is None


def test_descendants_in_sessions_of_their_own_are_found(tmp_path, sleeper):
    """fio puts each job in a session of its own: the leader's descendants count."""
    d = wd.create_workdir(str(tmp_path), 'fio', run_id='r', run_key='k')
    code = ('import subprocess, sys, time; subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], '
            'start_new_session=True); time.sleep(120)')
    leader = subprocess.Popen([sys.executable, '-c', code], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            procs = wd.recorded_processes(leader.pid, wd.proc_start_time(leader.pid))
            if len(procs) == 2:
                break
            time.sleep(0.1)
        assert len(procs) == 2
        child = [pid for pid, _s in procs if pid != leader.pid][0]
        stopped = wd.stop_recorded(leader.pid, wd.proc_start_time(leader.pid), grace=2)
        assert sorted(s['pid'] for s in stopped) == sorted([leader.pid, child])
        assert leader.wait(timeout=10) < 0
        time.sleep(0.2)
        assert wd.proc_start_time(child) is None or not os.path.exists('/proc/%d/cmdline' % child) \
            or open('/proc/%d/stat' % child).read().split(') ')[1][0] == 'Z'
    finally:
        if leader.poll() is None:
            leader.kill()
        leader.wait()


def test_a_users_process_working_in_the_work_directory_is_never_signalled(tmp_path, sleeper):
    """Issue 27: a process is the run's by its recorded group and start time (and descent from the
    recorded leader), never by its working directory: a user's process that merely sits in the work
    directory, started after the tool, survives the cleanup."""
    d = wd.create_workdir(str(tmp_path), 'fio', run_id='r', run_key='k')
    tool = sleeper()
    start = wd.proc_start_time(tool.pid)
    wd.update_marker(d, pgid=tool.pid, pid_start=start)
    time.sleep(0.05)     # the user's process starts after the tool (clock ticks are 10 ms)
    user = sleeper(cwd=d)
    assert os.readlink('/proc/%d/cwd' % user.pid) == os.path.realpath(d)
    assert [pid for pid, _s in wd.recorded_processes(tool.pid, start)] == [tool.pid]
    out = wd.cleanup_owned([str(tmp_path)], 'r', 'k', grace=2)
    assert out['stopped'] == [{'dir': d, 'pid': tool.pid, 'signal': 'SIGTERM'}] and out['removed'] == [d]
    assert tool.wait(timeout=10) == -signal.SIGTERM
    assert user.poll() is None


StatVfs = namedtuple('StatVfs', 'f_bavail f_frsize')
Stat = namedtuple('Stat', 'st_dev')


def test_dd_free_space_names_path_needed_and_available():
    fs = {'/srv': (1, StatVfs(1000, 4096)), '/dev/shm': (2, StatVfs(10, 4096))}

    def statvfs(d):
        return fs[d][1]

    def stat_(d):
        return Stat(fs[d][0])
    assert free_space_problem(space_needed('write', 4096000, '/srv', '/dev/shm'), 'dd', statvfs, stat_) \
        .startswith('not enough free space in /dev/shm: dd would write 4096000 bytes')
    assert free_space_problem(space_needed('write', 40960, '/srv', '/dev/shm'), 'dd', statvfs, stat_) is None
    # a copy writes two files; the source in the same filesystem adds up
    msg = free_space_problem(space_needed('copy', 3000 * 1024, '/srv'), 'dd', statvfs, stat_)
    assert msg == ('not enough free space in /srv: dd would write 6144000 bytes (5.9 MiB) there and only 4096000 '
                   'bytes (3.9 MiB) are available: set a smaller size, or free space')
    assert free_space_problem(space_needed('write', 3000 * 1024, '/srv', '/srv'), 'dd', statvfs, stat_) is not None
    assert space_needed('write', 10, None, None) == []      # /dev/zero onto a block device


class Exited(Exception):
    pass


def run_module(name, args, capsys):
    """Run a benchlab module's main() in check mode; its JSON result."""
    mod = __import__('ansible_collections.benchlab.bench.plugins.modules.%s' % name, fromlist=['main'])
    with patch_module_args(dict(args, _ansible_check_mode=True)):
        with pytest.raises(SystemExit):
            mod.main()
    return json.loads(capsys.readouterr().out)


def test_dry_run_of_dd_names_argv_writes_and_no_refusal(tmp_path, capsys):
    res = run_module('dd', {'path': str(tmp_path), 'size': '8M', 'run_id': 'r', 'run_key': 'k'}, capsys)
    dry = res['bench_dry_run']
    assert res['changed'] is False and dry['tool'] == 'dd' and dry['refused'] is None
    assert dry['argv'] == res['cmd'] and 'count=8' in dry['argv'] and dry['argv'][0].endswith('dd')
    workdir = os.path.join(str(tmp_path), 'benchlab-dd-XXXXXX')
    assert dry['writes'] == [workdir] and workdir in dry['creates'] and workdir in dry['removes']
    assert os.listdir(str(tmp_path)) == []


def test_dry_run_reports_a_refusal_instead_of_failing(tmp_path, capsys):
    res = run_module('dd', {'path': str(tmp_path), 'size': '64T'}, capsys)
    assert res.get('failed') is not True
    assert res['bench_dry_run']['refused'].startswith('not enough free space in %s' % tmp_path)
    res = run_module('fio', {'path': str(tmp_path), 'options': {'exec_prerun': 'touch /tmp/x'}}, capsys)
    assert 'exec_prerun' in res['bench_dry_run']['refused'] and 'allow_unsafe_options' in res['bench_dry_run']['refused']
    assert res['bench_dry_run']['argv'][0].endswith('fio')
    assert os.listdir(str(tmp_path)) == []


def test_dry_run_of_the_other_modules(tmp_path, capsys):
    path = str(tmp_path)
    res = run_module('sysbench_fileio', {'path': path, 'size': '8M', 'files': 2}, capsys)
    dry = res['bench_dry_run']
    assert dry['argv'][-1] == 'run' and [a[-1] for a in dry['argvs']] == ['prepare', 'run', 'cleanup']
    assert dry['writes'] == [os.path.join(path, 'benchlab-sysbench-XXXXXX')] and dry['refused'] is None
    res = run_module('compress', {'path': path, 'size': '1M', 'compressors': ['bzip2']}, capsys)
    assert res['bench_dry_run']['tool'] == 'compress' and len(res['bench_dry_run']['argvs']) == 2
    res = run_module('iperf', {'role': 'client', 'server': '127.0.0.1'}, capsys)
    assert res['bench_dry_run']['argv'] == res['cmd'] and res['bench_dry_run']['writes'] == []
    assert os.listdir(path) == []


@pytest.mark.parametrize('target', ['/etc', '/usr/share', '/proc', '/'])
def test_a_cell_path_that_resolves_into_the_system_is_refused(target, tmp_path, capsys):
    """Issue 27: a cell path that is a symlink to /etc (or /etc itself, /proc, /) is refused by every
    benchmark module before a work directory exists, naming where it resolves to."""
    link = tmp_path / 'cell'
    link.symlink_to(target)
    for name, args in (('dd', {'size': '1M'}), ('fio', {'size': '1M'}), ('sysbench_fileio', {'size': '8M', 'files': 2}),
                       ('bonnie', {'size': '1M'}), ('compress', {'size': '1M', 'compressors': ['gzip']}),
                       ('dbench', {'time': 2})):
        res = run_module(name, dict(args, path=str(link)), capsys)
        refused = res.get('bench_dry_run', {}).get('refused') or res.get('msg')
        assert refused and refused.startswith('path %s resolves to %s, which ' % (link, target)), (name, refused)
        if target == '/':
            assert 'is the root directory /' in refused
        else:
            assert 'is in /%s' % target.split('/')[1] in refused and 'give a directory on the storage' in refused
    assert wd.system_directory_problem('/dev/shm') is None and wd.system_directory_problem(str(tmp_path)) is None
    # the controller judges the name only; a /dev/<x> may be a block device there
    assert wd.system_directory_problem('/dev/vdb', resolve=False, device_paths=True) is None
    assert wd.system_directory_problem('/dev', resolve=False, device_paths=True) is not None


def test_a_path_through_proc_self_cwd_is_refused_by_its_name(tmp_path, capsys, monkeypatch):
    """/proc/self/cwd resolves to wherever the module runs (here a harmless tmp_path), so the place
    alone let it through and the record named the link. Every benchmark module refuses it by name."""
    monkeypatch.chdir(tmp_path)
    for name, args in (('dd', {'size': '1M'}), ('fio', {'size': '1M'}), ('compress', {'size': '1M', 'compressors': ['gzip']})):
        res = run_module(name, dict(args, path='/proc/self/cwd'), capsys)
        refused = res.get('bench_dry_run', {}).get('refused') or res.get('msg')
        assert refused and refused.startswith('path /proc/self/cwd is in /proc'), (name, refused)
    assert wd.system_directory_problem('/proc/self/cwd') is not None and os.listdir(str(tmp_path)) == []
