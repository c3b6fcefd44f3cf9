# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Another benchlab run on the same host is competition (issue 27, finding 9): module_utils/run/guards.py
OtherRuns and module_utils/run/benchrun.py, with real processes on this machine.

Two runs measuring one cell at once each ran 35 % slower and neither was flagged. Every tool a
benchmark module starts now carries guards.OWNER_ENV (its run id); a process carrying another
run's id, seen before the measurement or while the tool runs, makes the record not quiet and names
that run. Found by that mark only: a process merely named like a benchmark tool, or with
"benchlab" on its command line, is not another run; this run's own processes never count.

The guard looks at every process of the machine, as it must; so while `make test` runs these tests
another stage may run benchlab's own runs (the compat playbooks), which it would rightly see. The
tests that assert what was or was not seen at a moment therefore look through a view of /proc that
holds only the processes they started (`own_proc`: links to their real /proc/<pid>); the first test
scans the whole of /proc and asserts only what it started."""

import functools
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.run import benchrun, guards
from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS
from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import OWNER_ENV, OtherRuns, apply_guards, owner_mark
from ansible_collections.benchlab.bench.tests.unit.plugins.modules.helper import patch_module_args


@pytest.fixture
def own_proc(tmp_path):
    """A view of /proc that holds only the processes `spawn` starts: a link to each one's /proc/<pid>."""
    view = tmp_path / 'proc-view'
    view.mkdir()
    return view


@pytest.fixture
def spawn(own_proc):
    """Start real processes (a sleep), optionally carrying a run's mark or under another name; each
    one is also linked into `own_proc`."""
    procs = []

    def start(mark=None, seconds=60, name=None, argv_extra=()):
        env = dict(os.environ)
        env.pop(OWNER_ENV, None)
        if mark is not None:
            env[OWNER_ENV] = mark
        exe = shutil.which('sleep')
        if name:   # a copy of sleep called like a benchmark tool: its comm is `name`
            exe = os.path.join(start.tmp, name)
            if not os.path.exists(exe):
                shutil.copy(shutil.which('sleep'), exe)
        p = subprocess.Popen([exe, str(seconds)] + list(argv_extra), env=env)
        p.comm = os.path.basename(exe)[:15]     # what /proc/<pid>/comm says once it has exec'd
        procs.append(p)
        os.symlink('/proc/%d' % p.pid, str(own_proc / str(p.pid)))
        return p
    start.tmp = None
    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def _wait_visible(p):
    """Until process `p` has exec'd its program: before that it is a fork of this interpreter, with
    this interpreter's environment (no mark). Its comm names the program then (waiting for a comm that
    is not 'python3' passed at once under Python 3.12, whose comm is 'python3.12': CI saw the fork)."""
    for _i in range(500):
        try:
            with open('/proc/%d/comm' % p.pid) as f:
                if f.read().strip() == p.comm:
                    return
        except OSError:
            pass
        time.sleep(0.01)
    raise AssertionError('process %d never showed its program %s in /proc' % (p.pid, p.comm))


def test_another_runs_process_is_found_by_its_mark_only(spawn, tmp_path):
    spawn.tmp = str(tmp_path)
    other = spawn(mark='nightly-2')
    mine = spawn(mark='nightly-1')
    fio_named = spawn(name='fio')                                     # a user's "fio": no mark
    benchlab_argv = spawn(argv_extra=['benchlab-bench', 'BENCHLAB_OWNER_RUN=nightly-2'])   # text, not the environment
    for p in (other, mine, fio_named, benchlab_argv):
        _wait_visible(p)
    found = OtherRuns('nightly-1').current()
    pids = [pid for pid, _name, _mark in found]
    assert (other.pid, 'sleep', 'nightly-2') in found
    assert mine.pid not in pids and fio_named.pid not in pids and benchlab_argv.pid not in pids


def test_a_run_without_a_run_id_marks_its_tools_with_its_own_pid():
    assert owner_mark('20261204T1-abc') == '20261204T1-abc'
    assert owner_mark(None, pid=4242) == 'pid-4242' and owner_mark('', pid=7) == 'pid-7'


def test_another_run_at_the_start_makes_the_measurement_not_quiet(spawn, own_proc):
    other = spawn(mark='run-B')
    _wait_visible(other)
    others = OtherRuns('run-A', proc=str(own_proc))
    done, warnings = apply_guards({'quiesce': True}, loadavg=lambda: (0.0, 0.0, 0.0), competing=lambda: [],
                                  others=others)
    assert done['quiet'] is False and done['other_runs'] == ['run-B']
    assert any(w.startswith('machine not quiet: another benchlab run (run id run-B) measured on this host at the '
                            'same time: sleep[%d]' % other.pid) for w in warnings), warnings


def test_the_runs_own_processes_and_no_other_run_leave_it_quiet(spawn, own_proc):
    mine = spawn(mark='run-A')
    _wait_visible(mine)
    done, warnings = apply_guards({'quiesce': True}, loadavg=lambda: (0.0, 0.0, 0.0), competing=lambda: [],
                                  others=OtherRuns('run-A', proc=str(own_proc)))
    assert done['quiet'] is True and 'other_runs' not in done and warnings == []


def test_another_run_is_waited_for_like_a_competing_process(spawn, own_proc):
    """quiesce_wait_s: the other run's tool ends while we wait; the measurement is then quiet."""
    other = spawn(mark='run-B', seconds=0.5)
    _wait_visible(other)
    done, warnings = apply_guards({'quiesce': True, 'quiesce_wait_s': 30}, loadavg=lambda: (0.0, 0.0, 0.0),
                                  competing=lambda: [], others=OtherRuns('run-A', proc=str(own_proc)))
    assert done['quiet'] is True and warnings == [] and done['waited_s'] > 0


def _module(tmp_path, run_id):
    spec = dict(COMMON_ARGS, path=dict(type='path'), keep=dict(type='bool', default=False))
    with patch_module_args({'path': str(tmp_path), 'run_id': run_id, 'guards': {'quiesce': True}}):
        return AnsibleModule(argument_spec=spec)


def test_a_run_that_starts_while_the_tool_runs_is_seen_and_names_itself(tmp_path, monkeypatch, spawn, own_proc):
    """The measured tool waits for a file; meanwhile another run's tool starts and ends, then the
    file appears: the other run lived only inside the measurement, and the watch saw it."""
    monkeypatch.setattr(benchrun, 'WATCH_INTERVAL_S', 0.05)
    monkeypatch.setattr(benchrun, 'OtherRuns', functools.partial(guards.OtherRuns, proc=str(own_proc)))
    module = _module(tmp_path, 'run-A')
    started, done_file = tmp_path / 'started', tmp_path / 'done'
    tool = [sys.executable, '-c', 'import os, time\nopen(%r, "w").close()\nwhile not os.path.exists(%r): '
            'time.sleep(0.02)' % (str(started), str(done_file))]
    seen = {}

    def other_run():
        while not started.exists():
            time.sleep(0.01)
        p = spawn(mark='run-B', seconds=1.0)
        seen['pid'] = p.pid
        p.wait()
        done_file.write_text('')

    thread = threading.Thread(target=other_run)
    with BenchRun(module, 'sleep') as br:
        br.workdir_in(str(tmp_path))
        params = {}
        br.measure(params)
        assert params['guards']['quiet'] is True   # nobody else at the start
        thread.start()
        res = br.run(tool)
        thread.join()
        assert res.rc == 0
        record = params['guards']
        assert record['quiet'] is False and record['other_runs'] == ['run-B']
        assert any('another benchlab run (run id run-B)' in w and 'sleep[%d]' % seen['pid'] in w for w in br.warnings)
        # the tool itself carried this run's mark
        assert br.mark == 'run-A'


def test_the_tool_carries_the_runs_mark(tmp_path):
    module = _module(tmp_path, 'run-A')
    with BenchRun(module, 'env') as br:
        br.workdir_in(str(tmp_path))
        res = br.run(['env'])
    assert '%s=run-A' % OWNER_ENV in res.stdout.splitlines()


def test_an_unreadable_environment_is_no_other_run(tmp_path):
    """/proc of a process whose environment cannot be read (another user's, without root): not
    counted, never a failure. A fake /proc tree stands in for the permission this root user has."""
    proc = tmp_path / 'proc'
    (proc / '77').mkdir(parents=True)
    (proc / '77' / 'comm').write_text('fio\n')
    (proc / '77' / 'environ').write_bytes(b'')
    (proc / '77' / 'environ').chmod(0)
    (proc / '78').mkdir()
    (proc / '78' / 'comm').write_text('fio\n')
    (proc / '78' / 'environ').write_bytes(b'PATH=/bin\0%s=\x1b]0;evil\x07\0' % OWNER_ENV.encode())
    for pid in ('77', '78'):
        (proc / pid / 'stat').write_text('%s (fio) S 1 %s %s 0 -1 4194304 1 0 0 0 5 1 0 0 20 0 1 0 100 1 1\n' % (pid, pid, pid))
    found = OtherRuns('run-A', proc=str(proc)).current()
    assert found == [(78, 'fio', '\x1b]0;evil\x07')]
    assert guards.shown_mark(found[0][2]) == repr('\x1b]0;evil\x07')   # shown quoted, never raw
