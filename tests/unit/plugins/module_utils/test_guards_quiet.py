"""The quiet verdict over a run (issue 17 section 4): other processes' CPU, not our own, not the load.

Snapshots are (ppid, pgrp, session, kernel_thread, cpu_ticks, start_ticks) per pid, as read_stat
reads them from /proc/<pid>/stat; the last test reads the real /proc of this machine."""

import os
import subprocess
import sys
import time

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.run import benchrun
from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS
from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import (
    OWNER_ENV, cpu_snapshot, harness_processes, other_cpu, own_processes, read_stat, run_verdict)
from ansible_collections.benchlab.bench.tests.unit.plugins.modules.helper import patch_module_args

# 1 init; 2 kthreadd + 3 kworker; 10 make (session 10) -> 11 ansible-playbook (pgrp 11) -> 12 worker ->
# 13 sh -> 14 module; 15 the tool (own session 15) -> 16 its child; 17 another worker of the
# controller (pgrp 11); 20 sshd -> 21 a stranger's hog (session 21); 22 a fio of someone else
BEFORE = {1: (0, 1, 1, False, 50, 1), 2: (0, 0, 0, True, 0, 1), 3: (2, 0, 0, True, 500, 2),
          10: (1, 10, 10, False, 5, 10), 11: (10, 11, 10, False, 900, 11), 12: (11, 11, 10, False, 80, 12),
          13: (12, 11, 10, False, 1, 13), 14: (13, 11, 10, False, 30, 14), 17: (11, 11, 10, False, 70, 17),
          20: (1, 20, 20, False, 3, 5), 21: (20, 21, 21, False, 100, 21), 22: (1, 22, 22, False, 10, 22)}
AFTER = dict(BEFORE)
AFTER.update({3: (2, 0, 0, True, 900, 2), 11: (10, 11, 10, False, 1500, 11), 12: (11, 11, 10, False, 99, 12),
              14: (13, 11, 10, False, 60, 14), 15: (14, 15, 15, False, 2000, 30), 16: (15, 15, 15, False, 700, 31),
              17: (11, 11, 10, False, 400, 17), 21: (20, 21, 21, False, 160, 21), 22: (1, 22, 22, False, 11, 22)})


def test_own_processes_by_ancestry_group_and_session_never_by_name():
    own = own_processes(AFTER, 14, sessions=[15])
    assert {1, 10, 11, 12, 13, 14} <= own           # ancestors: the shell, the worker, ansible-playbook
    assert {15, 16} <= own                          # the tool and its child (descendants, its session)
    assert 17 in own                                # another Ansible worker: the module's process group
    assert {2, 3} <= own                            # kernel threads (writeback for our own writes)
    assert 21 not in own and 22 not in own and 20 not in own


def test_other_cpu_counts_only_other_processes_over_the_window():
    own = own_processes(BEFORE, 14, [15]) | own_processes(AFTER, 14, [15])
    assert other_cpu(BEFORE, AFTER, own) == [(60, 21), (1, 22)]
    # a pid reused by a new process (another start time) counts from zero
    after = dict(AFTER)
    after[22] = (1, 22, 22, False, 40, 99)
    assert other_cpu(BEFORE, after, own)[0:2] == [(60, 21), (40, 22)]


def test_run_verdict_sets_quiet_from_the_other_cpu_share():
    rec = {'quiet': True, 'max_other_cpu_pct': 10.0}
    warnings = []
    run_verdict(rec, warnings, [(61, 21)], window_s=10.0, cpus=2, ticks_per_s=100, proc='/nonexistent')
    assert rec['quiet'] is True and rec['other_cpu_pct'] == 3.05 and warnings == []
    run_verdict(rec, warnings, [(1000, 21)], window_s=10.0, cpus=2, ticks_per_s=100, proc='/nonexistent')
    assert rec['quiet'] is False and rec['other_cpu_pct'] == 50.0 and rec['busiest'] == ['?[21] 10.00s']
    assert 'other processes used 50.0% of the CPU' in warnings[0]
    off = {'quiesce': False}
    assert run_verdict(off, warnings, [(1000, 21)], 10.0) == {'quiesce': False}  # no verdict asked: none given
    # a competing benchmark found before the run stays not quiet however idle the run was
    busy = {'quiet': False, 'max_other_cpu_pct': 10.0}
    assert run_verdict(busy, [], [], 10.0)['quiet'] is False


def test_on_this_machine_a_hog_outside_our_tree_is_other_and_our_child_is_own(tmp_path):
    pidfile = tmp_path / 'hog.pid'
    hog = ('import os, time\nopen(%r, "w").write(str(os.getpid()))\nt = time.time() + 30\n'
           'while time.time() < t: pass' % str(pidfile))
    # setsid --fork: the stranger is no descendant of ours (re-parented) and has a session of its own
    subprocess.run(['setsid', '--fork', sys.executable, '-c', hog], check=True)
    child = subprocess.Popen([sys.executable, '-c', 'import time\nt = time.time() + 30\nwhile time.time() < t: pass'])
    stranger = None
    try:
        for _try in range(100):
            if pidfile.exists() and pidfile.read_text():
                stranger = int(pidfile.read_text())
                break
            time.sleep(0.05)
        assert stranger
        before = cpu_snapshot()
        time.sleep(1.0)
        after = cpu_snapshot()
        me = os.getpid()
        own = own_processes(before, me) | own_processes(after, me)
        assert child.pid in own and stranger not in own and me in own and os.getppid() in own
        used = dict((pid, ticks) for ticks, pid in other_cpu(before, after, own))
        assert child.pid not in used
        assert used.get(stranger, 0) > 0     # it ran: some CPU time, however little it got
        assert read_stat('/proc', stranger)[2] == stranger  # its own session
    finally:
        child.kill()
        child.wait()
        if stranger:
            os.kill(stranger, 9)   # the pid this test started (written by the process itself)


def test_the_verdict_takes_the_least_the_clock_ticks_prove():
    """A dd of 64 MiB took 0.08 s: over that window on 2 CPUs a clock tick is 6.25 %, and a process
    that started meanwhile shows 2 ticks (12.5 %) although it may have used little more than one. The
    figure is what was counted; the verdict only what the counters prove (each process's count may be
    one tick high): 1 tick proven, 6.25 %, is quiet. Two processes spinning through it are not."""
    rec = {'quiet': True, 'max_other_cpu_pct': 10.0}
    warnings = []
    run_verdict(rec, warnings, [(2, 77)], window_s=0.08, cpus=2, ticks_per_s=100, proc='/nonexistent')
    assert rec['quiet'] is True and rec['other_cpu_pct'] == 12.5 and warnings == []
    run_verdict(rec, warnings, [(8, 5), (8, 6)], window_s=0.08, cpus=2, ticks_per_s=100, proc='/nonexistent')
    assert rec['quiet'] is False and rec['other_cpu_pct'] == 100.0
    assert 'at least 87.5% counting whole clock ticks' in warnings[0], warnings


# the waiter (40) the action plugin started on the host through sh (39) from a worker (12) of
# ansible-playbook (11), following a batch that runs in the background (50: async_wrapper's child,
# re-parented to init, a session of its own); 41 a child of the waiter; 21 a stranger
HARNESS = dict(AFTER)
HARNESS.update({39: (12, 11, 10, False, 1, 39), 40: (39, 11, 10, False, 4, 40), 41: (40, 11, 10, False, 1, 41),
                50: (1, 50, 50, False, 20, 50)})


def test_the_harness_of_a_batch_in_the_background_is_its_marked_processes_with_their_tree():
    assert 40 not in own_processes(HARNESS, 50)          # no ancestor of the background batch
    harness = harness_processes(HARNESS, [40])
    assert {40, 39, 12, 11, 10, 1} <= harness and 41 in harness
    assert 21 not in harness and 22 not in harness and 17 not in harness
    assert harness_processes(HARNESS, [999]) == set()    # gone before the snapshot: nothing


BURNER = r'''
import os, sys, time
open(sys.argv[1], 'w').write(str(os.getpid()))
while not os.path.exists(sys.argv[2]): time.sleep(0.005)
t = time.time() + 0.3
while time.time() < t: pass
open(sys.argv[3], 'w').close()
time.sleep(5)
'''


@pytest.mark.parametrize('marked', [True, False])
def test_a_process_carrying_the_runs_mark_is_its_harness_and_a_stranger_is_other_load(tmp_path, monkeypatch, marked):
    """Real processes: while the tool runs, a process outside the module's tree (setsid --fork, as the
    controller's waiter is: started over another connection) spins 0.3 s. Carrying this run's mark it
    is the run's own harness, not counted; without it, it is other load. Judged by what the verdict
    was given to count, so other work on this machine meanwhile changes nothing here."""
    pidfile, go, burnt = tmp_path / 'burner.pid', tmp_path / 'go', tmp_path / 'burnt'
    env = dict(os.environ)
    env.pop(OWNER_ENV, None)
    if marked:
        env[OWNER_ENV] = 'run-A'
    counted = []
    real_verdict = benchrun.run_verdict
    monkeypatch.setattr(benchrun, 'run_verdict', lambda rec, warnings, used, *a, **kw: (
        counted.extend(pid for _ticks, pid in used), real_verdict(rec, warnings, used, *a, **kw))[1])
    spec = dict(COMMON_ARGS, path=dict(type='path'), keep=dict(type='bool', default=False))
    with patch_module_args({'path': str(tmp_path), 'run_id': 'run-A', 'guards': {'quiesce': True}}):
        module = AnsibleModule(argument_spec=spec)
    # the tool: says go (inside the measured window), then waits until the burner has spun
    tool = [sys.executable, '-c', 'import os, time\nopen(%r, "w").close()\nwhile not os.path.exists(%r): time.sleep(0.01)'
            % (str(go), str(burnt))]
    try:
        subprocess.run(['setsid', '--fork', sys.executable, '-c', BURNER, str(pidfile), str(go), str(burnt)], env=env,
                       check=True)
        for _try in range(400):
            if pidfile.exists() and pidfile.read_text():
                break
            time.sleep(0.01)
        burner = int(pidfile.read_text())
        with BenchRun(module, 'sleep') as br:
            br.workdir_in(str(tmp_path))
            params = {}
            br.measure(params)
            assert br.run(tool).rc == 0
        assert 'other_cpu_pct' in params['guards']
        assert (burner in counted) is not marked, (burner, counted, params['guards'])
    finally:
        if pidfile.exists() and pidfile.read_text():
            try:
                os.kill(int(pidfile.read_text()), 9)   # the pid the burner wrote itself
            except OSError:
                pass
