# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One play writes a run (issue 27, finding 9): plugin_utils/run/rundir.py RunLock and lock_holder, with
real processes holding the lock (another Python process stands in for another ansible-playbook).

Two runs started with the same run id both said "stored" while measurements went missing. The
report callback now holds an flock on the run directory's lock file for the play's lifetime: a
second holder is refused naming the first (pid, host, start); a lock file left by a killed play
holds nothing; the run directory a play made and never wrote into is removed with the lock."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from ansible.executor.stats import AggregateStats

from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import (LOCK_NAME, OutputDirError, RunDir, RunInUse,
                                                                                RunLock, current_run, lock_holder)
from ansible_collections.benchlab.bench.tests.unit.helpers import CallbackResult, CallbackTask

from ansible_collections.benchlab.bench.tests.unit.plugins.plugin_utils.test_nothing_lost import PLAN, callback  # noqa: F401  pylint: disable=unused-import

HOLD = textwrap.dedent('''
    import sys
    from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir, RunLock
    lock = RunLock(RunDir(sys.argv[1], sys.argv[2]))
    lock.acquire()
    print('held', flush=True)
    sys.stdin.readline()
    lock.release()
''')


@pytest.fixture
def holder():
    """Another process holding a run's lock until its stdin closes."""
    procs = []

    def start(base, run_id):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))   # the collection as here
        p = subprocess.Popen([sys.executable, '-c', HOLD, str(base), run_id], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
        assert p.stdout.readline().strip() == 'held'
        procs.append(p)
        return p
    yield start
    for p in procs:
        if p.poll() is None:
            p.stdin.close()
            p.wait(timeout=30)


def test_a_second_play_with_the_same_run_id_is_refused_naming_the_first(tmp_path, holder):
    first = holder(tmp_path, 'nightly')
    with pytest.raises(RunInUse) as e:
        RunLock(RunDir(str(tmp_path), 'nightly')).acquire()
    assert str(e.value).startswith('run id nightly is in use by a running play (pid %d on ' % first.pid)
    assert 'wait until it ends (then this run id resumes it), or choose another run id (BENCHLAB_RUN_ID)' in str(e.value)
    holding = lock_holder(str(tmp_path / 'nightly'))
    assert holding['pid'] == first.pid and set(holding) == {'pid', 'host', 'since'}
    assert lock_holder(str(tmp_path / 'nightly'), own_pids=[first.pid]) is None   # the holder's own check
    first.stdin.close()
    first.wait(timeout=30)
    lock = RunLock(RunDir(str(tmp_path), 'nightly'))   # ended: free again
    lock.acquire()
    lock.release()


def test_another_run_id_is_not_held(tmp_path, holder):
    holder(tmp_path, 'nightly')
    lock = RunLock(RunDir(str(tmp_path), 'nightly-2'))
    lock.acquire()
    assert lock.held
    lock.release()


def test_a_killed_plays_lock_file_holds_nothing(tmp_path, holder):
    first = holder(tmp_path, 'killed')
    first.kill()
    first.wait()
    assert (tmp_path / 'killed' / LOCK_NAME).exists()      # left behind by SIGKILL ...
    assert lock_holder(str(tmp_path / 'killed')) is None    # ... but nobody holds it
    lock = RunLock(RunDir(str(tmp_path), 'killed'))
    lock.acquire()
    assert json.loads((tmp_path / 'killed' / LOCK_NAME).read_text())['pid'] == os.getpid()
    lock.release()
    assert not (tmp_path / 'killed' / LOCK_NAME).exists()
    assert (tmp_path / 'killed').is_dir()   # a directory it did not make is kept


def test_a_play_that_wrote_nothing_leaves_nothing(tmp_path):
    base = tmp_path / 'runs'
    lock = RunLock(RunDir(str(base), 'r1'))
    lock.acquire()
    assert sorted(os.listdir(str(base / 'r1'))) == [LOCK_NAME]
    assert (os.stat(str(base / 'r1' / LOCK_NAME)).st_mode & 0o777) == 0o600
    lock.release()
    assert not base.exists()


def test_a_play_that_wrote_keeps_its_files_and_directory(tmp_path):
    rundir = RunDir(str(tmp_path / 'runs'), 'r1')
    lock = RunLock(rundir)
    lock.acquire()
    rundir.write_text('report.md', '# r1\n')
    lock.release()
    assert sorted(os.listdir(rundir.path)) == ['report.md']


def test_acquire_is_idempotent_in_one_play_and_nobody_else_is_seen(tmp_path):
    rundir = RunDir(str(tmp_path), 'r1')
    lock = RunLock(rundir)
    lock.acquire()
    lock.acquire()   # a second playbook of the same ansible-playbook command
    assert lock_holder(rundir.path) is None       # our own lock (this process)
    assert lock_holder(rundir.path, own_pids=[])['pid'] == os.getpid()
    lock.release()
    lock.release()


def test_a_lock_file_that_is_a_symlink_is_not_followed(tmp_path):
    rundir = RunDir(str(tmp_path), 'r1')
    rundir.ensure()
    victim = tmp_path / 'victim.txt'
    victim.write_text('keep me\n')
    os.symlink(str(victim), os.path.join(rundir.path, LOCK_NAME))
    with pytest.raises(OutputDirError, match='cannot take its lock .benchlab-run.lock'):
        RunLock(rundir).acquire()
    assert victim.read_text() == 'keep me\n'


# -- the report callback holds the lock for the play's lifetime ---------------------------------

def test_the_callback_refuses_a_run_id_another_play_holds_before_any_host(callback, tmp_path, holder):  # noqa: F811
    first = holder(tmp_path / 'runs', 'nightly')
    cb = callback(run_id='nightly')
    assert cb.preflight_error.startswith('benchlab.bench.report: run id nightly is in use by a running play (pid %d '
                                         % first.pid)
    # the plan play reads it as data (the lookup benchlab.bench.run_state), never from the environment
    assert current_run()['preflight_error'] == cb.preflight_error
    cb.v2_playbook_on_stats(AggregateStats())   # the plan play stopped: nothing written, the first play's files kept
    assert sorted(os.listdir(str(tmp_path / 'runs' / 'nightly'))) == [LOCK_NAME]
    assert lock_holder(str(tmp_path / 'runs' / 'nightly'))['pid'] == first.pid


def test_the_callback_holds_the_lock_until_the_end_of_the_play(callback, tmp_path):  # noqa: F811
    cb = callback(run_id='mine')
    assert cb.preflight_error is None
    assert lock_holder(str(tmp_path / 'runs' / 'mine'), own_pids=[])['pid'] == os.getpid()
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('plan', 'ansible.builtin.set_fact'),
                                      {'ansible_facts': {'bench_plan': PLAN}}))
    cb.v2_playbook_on_stats(AggregateStats())
    assert LOCK_NAME not in os.listdir(str(tmp_path / 'runs' / 'mine'))
    assert lock_holder(str(tmp_path / 'runs' / 'mine'), own_pids=[]) is None


def test_a_play_that_stops_before_its_plan_leaves_no_run_directory(callback, tmp_path):  # noqa: F811
    cb = callback(run_id='stopped')
    assert (tmp_path / 'runs' / 'stopped').is_dir()
    cb.v2_playbook_on_stats(AggregateStats())
    assert not (tmp_path / 'runs').exists()


def test_resuming_a_run_another_play_holds_keeps_this_play_in_its_own_directory(callback, tmp_path, holder):  # noqa: F811
    holder(tmp_path / 'runs', 'busy')
    cb = callback(run_id='mine')
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('plan', 'ansible.builtin.set_fact'),
                                      {'ansible_facts': {'bench_plan': dict(PLAN, resume=dict(run_id='busy', records=[]))}}))
    assert cb.rundir.run_id == 'mine'
    assert any(kind == 'error' and 'run id busy is in use by a running play' in m for kind, m in cb.messages)
    assert sorted(os.listdir(str(tmp_path / 'runs' / 'busy'))) == [LOCK_NAME]   # nothing written there
    cb.v2_playbook_on_stats(AggregateStats())


def test_resuming_a_free_run_moves_the_lock_there(callback, tmp_path):  # noqa: F811
    RunDir(str(tmp_path / 'runs'), 'earlier').write_text('results.jsonl', '')
    cb = callback(run_id='mine')
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('plan', 'ansible.builtin.set_fact'),
                                      {'ansible_facts': {'bench_plan': dict(PLAN, resume=dict(run_id='earlier', records=[]))}}))
    assert cb.rundir.run_id == 'earlier'
    assert lock_holder(str(tmp_path / 'runs' / 'earlier'), own_pids=[])['pid'] == os.getpid()
    assert not (tmp_path / 'runs' / 'mine').exists()   # the directory it made and never wrote: gone
    cb.v2_playbook_on_stats(AggregateStats())
    assert LOCK_NAME not in os.listdir(str(tmp_path / 'runs' / 'earlier'))
