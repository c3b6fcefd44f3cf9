"""Methodology guards: pure decisions with injected clock/load, and the real /proc scan."""

import subprocess
import time

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import (
    GuardError, apply_guards, competing_names, competing_processes, normalize, quiet_verdict)
from ansible_collections.benchlab.bench.plugins.module_utils.observe.procfs import proc_state


class Clock(object):
    def __init__(self):
        self.t = 0.0
        self.slept = []

    def now(self):
        return self.t

    def sleep(self, s):
        self.slept.append(s)
        self.t += s


def test_defaults_and_bad_options_name_the_field():
    assert normalize(None)['quiesce'] is True and normalize({})['cooldown_s'] == 0
    with pytest.raises(GuardError, match=r'guards\.cooldown: unknown guard'):
        normalize({'cooldown': 3})
    with pytest.raises(GuardError, match=r'guards\.cooldown_s: expected a number'):
        normalize({'cooldown_s': True})
    with pytest.raises(GuardError, match=r'guards\.quiesce_wait_s: must not be negative'):
        normalize({'quiesce_wait_s': -1})
    with pytest.raises(GuardError, match=r'guards\.warmup: expected true/false'):
        normalize({'warmup': 'yes'})
    with pytest.raises(GuardError, match=r'guards\.drbd: expected a list of DRBD resource states'):
        normalize({'drbd': 'UpToDate'})
    assert normalize({'observe_toward': ['198.19.79.12', 'fd00::2', 'peer-2.lab']})['observe_toward'][2] == 'peer-2.lab'
    for bad in ('10.0.0.2', ['10.0.0.2 -x'], ['$(reboot)'], [''], [7]):
        with pytest.raises(GuardError, match=r'guards\.observe_toward: expected a list of host names or addresses'):
            normalize({'observe_toward': bad})


def test_quiet_verdict():
    assert quiet_verdict(0.5, 2, 0.75, []) == (True, '')
    quiet, reason = quiet_verdict(1.6, 2, 0.75, [(42, 'fio')])
    assert not quiet and 'load average 1.60 is above 1.50' in reason and 'fio[42]' in reason


def test_a_busy_machine_is_warned_about_without_waiting_by_default():
    clock = Clock()
    done, warnings = apply_guards({}, sleep=clock.sleep, now=clock.now, loadavg=lambda: (0.1, 0, 0), cpus=2,
                                  competing=lambda: [(42, 'fio')])
    assert done['quiet'] is False and done['waited_s'] == 0 and clock.slept == []
    assert len(warnings) == 1 and 'not quiet' in warnings[0] and 'fio[42]' in warnings[0]


def test_the_load_average_alone_is_no_verdict():
    """It counts the run's own tool, module and Ansible (issue 17 section 4): only recorded."""
    done, warnings = apply_guards({}, sleep=Clock().sleep, now=Clock().now, loadavg=lambda: (3.0, 0, 0), cpus=2,
                                  competing=lambda: [])
    assert done['quiet'] is True and done['load_before'] == 3.0 and warnings == []


def test_waiting_for_quiet_stops_when_quiet_or_at_the_limit():
    clock = Clock()
    loads = iter([3.0, 2.0, 0.5])
    done, warnings = apply_guards({'quiesce_wait_s': 30}, sleep=clock.sleep, now=clock.now,
                                  loadavg=lambda: (next(loads), 0, 0), cpus=2, competing=lambda: [])
    assert done['quiet'] is True and warnings == [] and clock.t == 4.0
    clock = Clock()
    done, warnings = apply_guards({'quiesce_wait_s': 5}, sleep=clock.sleep, now=clock.now,
                                  loadavg=lambda: (9.0, 0, 0), cpus=2, competing=lambda: [])
    assert done['quiet'] is True and done['waited_s'] == 5.0 and 'after waiting 5 s' in warnings[0]


def test_cooldown_warmup_and_switching_quiescence_off():
    clock = Clock()
    done, warnings = apply_guards({'cooldown_s': 3, 'warmup': True, 'quiesce': False}, sleep=clock.sleep,
                                  now=clock.now, loadavg=lambda: (99.0, 0, 0), competing=lambda: [(1, 'fio')])
    assert clock.slept == [3] and done['warmup'] is True and 'quiet' not in done
    assert warnings == ['warm-up run: stored, not counted in the statistics']


def test_the_drbd_state_before_the_run_is_recorded_as_given():
    state = [{'name': 'r0', 'disk_state': 'UpToDate', 'peer_disk_state': 'UpToDate', 'replication': 'Established'}]
    done, _warnings = apply_guards({'drbd': state, 'quiesce': False})
    assert done['drbd'] == state
    assert 'drbd' not in apply_guards({'quiesce': False})[0]


def test_competing_processes_finds_a_real_compressor():
    proc = subprocess.Popen(['bzip2', '-c'], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        for _attempt in range(50):  # until the child has exec'd bzip2 (its comm changes then)
            if (proc.pid, 'bzip2') in competing_processes(own_pid=1, names=('bzip2',)):
                break
            time.sleep(0.05)
        assert (proc.pid, 'bzip2') in competing_processes(own_pid=1, names=('bzip2',))
        # only the names it is given: the target knows no tool's names of its own
        assert (proc.pid, 'bzip2') not in competing_processes(own_pid=1)
        # the caller's own children are its own measurement, not competition
        assert (proc.pid, 'bzip2') not in competing_processes(names=('bzip2',))
        # exited and not yet reaped (a zombie): nothing runs, no competition
        proc.kill()
        for _attempt in range(50):
            if proc_state(proc.pid) == 'Z':
                break
            time.sleep(0.05)
        assert proc_state(proc.pid) == 'Z'
        assert (proc.pid, 'bzip2') not in competing_processes(own_pid=1, names=('bzip2',))
    finally:
        proc.kill()
        proc.wait()


class WallClock(Clock):
    """Unix time for guards.start_at: starts at 1000.0."""
    def __init__(self):
        Clock.__init__(self)
        self.t = 1000.0


def test_start_at_waits_for_the_agreed_moment_and_records_how_late_it_was():
    c = WallClock()
    done, warnings = apply_guards({'quiesce': False, 'start_at': 1002.5}, sleep=c.sleep, now=c.now, clock=c.now)
    assert c.slept == [2.5] and done['start_at'] == 1002.5 and done['start_late_s'] == 0.0 and warnings == []
    # the agreed moment already passed (a slow start of this pair, or a clock behind): said, no sleep
    c = WallClock()
    done, warnings = apply_guards({'quiesce': False, 'start_at': 998.0}, sleep=c.sleep, now=c.now, clock=c.now)
    assert c.slept == [] and done['start_late_s'] == 2.0
    assert warnings == ["started 2.0 s after the agreed start (guards.start_at): the runs meant to start together "
                        "did not (a slow start of the others, or this host's clock)"]
    # the wait comes last, after the cool-down: nothing else runs between it and the tool
    c = WallClock()
    done, _w = apply_guards({'quiesce': False, 'cooldown_s': 1, 'start_at': 1003.0}, sleep=c.sleep, now=c.now, clock=c.now)
    assert c.slept == [1, 2.0]
    assert 'start_at' not in apply_guards({'quiesce': False}, sleep=c.sleep)[0]
    with pytest.raises(GuardError, match=r'guards\.start_at: expected a number'):
        normalize({'start_at': True})
    with pytest.raises(GuardError, match=r'guards\.start_at: expected a number'):
        normalize({'start_at': 'soon'})


def test_the_agreed_start_is_the_controllers_moment_on_this_hosts_clock():
    """A host whose clock is 2 s behind the controller's (clock_offset_s -2, read by the run path):
    it waits for 1000.5 on its own clock, the controller's 1002.5; late is measured against that
    moment, and both are recorded."""
    c = WallClock()
    done, warnings = apply_guards({'quiesce': False, 'start_at': 1002.5, 'clock_offset_s': -2.0},
                                  sleep=c.sleep, now=c.now, clock=c.now)
    assert c.slept == [0.5] and warnings == []
    assert (done['start_at'], done['clock_offset_s'], done['start_late_s']) == (1002.5, -2.0, 0.0)
    c = WallClock()
    done, warnings = apply_guards({'quiesce': False, 'start_at': 1002.5, 'clock_offset_s': 3.0},
                                  sleep=c.sleep, now=c.now, clock=c.now)
    assert c.slept == [5.5] and done['start_late_s'] == 0.0
    with pytest.raises(GuardError, match=r'guards\.clock_offset_s: expected a number'):
        normalize({'start_at': 1.0, 'clock_offset_s': False})


def test_the_quiesce_guard_counts_the_processes_the_controller_names():
    """guards.processes (the tool table's process names, passed by the controller) is what apply_guards
    scans for, with the load generators; it is not recorded."""
    proc = subprocess.Popen(['bzip2', '-c'], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        assert competing_names({'processes': ['bzip2', 'fio']}) == ('bzip2', 'fio', 'stress', 'stress-ng')
        assert competing_names({}) == ('stress', 'stress-ng')
        for _attempt in range(50):
            if competing_processes(own_pid=1, names=('bzip2',)):
                break
            time.sleep(0.05)
        # this test's own child would not count (own children are the measurement): ask as pid 1 would
        done, warnings = apply_guards({'processes': ['bzip2']}, sleep=lambda s: None,
                                      competing=lambda: competing_processes(own_pid=1, names=competing_names({'processes': ['bzip2']})))
        assert done['quiet'] is False and 'bzip2[%d]' % proc.pid in warnings[0] and 'processes' not in done
        # without the names (a module called without the controller's action plugin), bzip2 is no benchmark
        assert (proc.pid, 'bzip2') not in competing_processes(own_pid=1, names=competing_names({}))
    finally:
        proc.kill()
        proc.wait()


def test_a_bad_processes_guard_is_named():
    with pytest.raises(GuardError, match=r'guards.processes: expected a list of process names'):
        normalize({'processes': 'fio'})
    with pytest.raises(GuardError, match=r'guards.processes: expected a list of process names'):
        normalize({'processes': ['fio', 3]})
