# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""Methodology guards a benchmark module applies right before it measures (docs/usage.md).

- quiescence: before the run, other benchmark processes and the load average per CPU (wait up to
  `quiesce_wait_s` for the machine to calm down); the verdict ``quiet`` is measured over the run
  itself: the CPU time that *other* processes used while the tool ran (``other_cpu_pct``, from
  /proc/<pid>/stat before and after, module_utils/run/benchrun.py takes the two samples), never the
  load average, which counts the run's own tool, the module and Ansible;
- cool-down: sleep `cooldown_s` before the measurement (the bench_run role asks for it between
  repetitions);
- warm-up: a run marked `warmup` is measured and stored but not counted by the analysis;
- `hypervisor_caches_dropped`: set by the bench_run role when it dropped the caches of the guest's
  hypervisor host before the run (the module cannot reach that host itself).
- `start_at`: a moment (Unix time, seconds) to start the measurement at, so that runs on several
  hosts start together (the bench_run role sets it for the concurrent pairs of an iperf run): the
  module sleeps until then, last of all, and records how late it was (``start_late_s``; a clock
  behind or a start that came too late shows there, and the analysis checks that the pairs really
  ran together, plugin_utils/analysis/measurements.py).
- `clock_offset_s`: set by the run path with `start_at`: this host's clock less the controller's, as
  it read it right before the run (0 where the reading could not tell them apart): the module waits
  for `start_at` plus it on its own clock, and records it, so that the analysis carries the run's
  `started` onto the controller's clock (a guest's clock may be seconds off its host's).
- `observe_interval_s`: the matrix's methodology.observe_interval_s, carried to the module with the
  run's guards (module_utils/run/benchrun.py samples at that interval; 0 turns observation off).
- `observe_toward`: set by the bench_run role on a DRBD host: its peers' addresses; the run's
  observation counts the interfaces it reaches them through (module_utils/run/benchrun.py), so its
  replication link's bytes are in the record.
- `drbd`: set by the bench_run role on a DRBD host: the state of its resources right before the run
  (after waiting for UpToDate), recorded as is; the analysis flags the run when one was not
  UpToDate or resyncing (plugin_utils/explain/traps.py).
- other benchlab runs: every tool a benchmark module starts carries the environment variable
  OWNER_ENV with its run's id (module_utils/run/benchrun.py); a process carrying another run's id is
  another benchlab run measuring on this host at the same time (competition, ``not_quiet``),
  seen before the measurement and, while the tool runs, by a scan every WATCH_INTERVAL_S seconds
  (OtherRuns). Found by that mark only, never by a process name, and a run's own processes (its
  run id) never count: neither in the competition nor in ``other_cpu_pct`` (the controller's waiter
  that follows a batch in the background carries the run's mark too; harness_processes). Another user's processes are visible only to root (their environment is
  private).
What was done is returned for the record's ``params.guards``; what went wrong becomes a warning.
"""

import functools
import os
import re
import time

# Processes whose presence means another benchmark (or a compressor) competes for the machine: the
# controller names every benchmark's own in guards.processes (the tool table, the matrix schema's
# benchmark units: plugin_utils/common/toolinfo.py; the action plugin every module runs through adds
# them). Without that option only the usual load generators are known here.
LOAD_GENERATORS = ('stress', 'stress-ng')

DEFAULTS = {
    'quiesce': True,
    'max_load_per_cpu': 0.75,
    'max_other_cpu_pct': 10.0,
    'quiesce_wait_s': 0,
    'cooldown_s': 0,
    'warmup': False,
    'hypervisor_caches_dropped': None,
    'concurrency': None,
    'drbd': None,
    'start_at': None,
    'clock_offset_s': None,
    'processes': None,
    'observe_interval_s': None,
    'observe_toward': None,
}
_TYPES = {'quiesce': bool, 'max_load_per_cpu': (int, float), 'max_other_cpu_pct': (int, float), 'quiesce_wait_s': (int, float),
          'cooldown_s': (int, float), 'warmup': bool, 'hypervisor_caches_dropped': (bool, type(None)),
          'concurrency': (int, type(None)), 'drbd': (list, type(None)),
          'start_at': (int, float, type(None)), 'clock_offset_s': (int, float, type(None)), 'processes': (list, type(None)),
          'observe_interval_s': (int, float, type(None)), 'observe_toward': (list, type(None))}


_LISTS = {'drbd': 'a list of DRBD resource states', 'processes': 'a list of process names',
          'observe_toward': 'a list of host names or addresses'}
_ADDRESS_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.:%-]{0,252}$')
_NUMBERS = ('max_load_per_cpu', 'max_other_cpu_pct', 'quiesce_wait_s', 'cooldown_s', 'observe_interval_s',
            'concurrency')
# The mark every tool a benchmark module starts carries in its environment: its run's id
# (owner_mark). Set by module_utils/run/benchrun.py, read by OtherRuns.
OWNER_ENV = 'BENCHLAB_OWNER_RUN'
WATCH_INTERVAL_S = 1.0
_MARK_SHOWN_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$')
# /proc/<pid>/stat flags: a kernel thread (it works for whoever asked, such as writeback for our
# own writes; not "other load")
PF_KTHREAD = 0x00200000


def is_address(value):
    """Whether a guards.observe_toward item is a plain host name or address (data, never syntax)."""
    return isinstance(value, str) and bool(_ADDRESS_RE.match(value))


class GuardError(ValueError):
    """A guards option of the wrong name or type; the message names it."""


def normalize(guards):
    """Defaults merged with `guards`; unknown keys and wrong types raise GuardError naming them."""
    out = dict(DEFAULTS)
    for key, value in (guards or {}).items():
        if key not in DEFAULTS:
            raise GuardError('guards.%s: unknown guard (known: %s)' % (key, ', '.join(sorted(DEFAULTS))))
        if isinstance(value, bool) and key in _NUMBERS + ('start_at', 'clock_offset_s'):
            raise GuardError('guards.%s: expected a number, got %r' % (key, value))
        if not isinstance(value, _TYPES[key]):
            kind = 'true/false' if _TYPES[key] is bool else _LISTS.get(key, 'a number')
            raise GuardError('guards.%s: expected %s, got %r' % (key, kind, value))
        if key == 'processes' and value is not None and not all(isinstance(n, str) and n for n in value):
            raise GuardError('guards.processes: expected %s, got %r' % (_LISTS[key], value))
        if key == 'observe_toward' and value is not None and not all(is_address(a) for a in value):
            raise GuardError('guards.observe_toward: expected %s, got %r' % (_LISTS[key], value))
        if key in _NUMBERS[:-1] and value is not None and value < 0:
            raise GuardError('guards.%s: must not be negative, got %r' % (key, value))
        if key == 'concurrency' and value is not None and value < 1:
            raise GuardError('guards.concurrency: must be 1 or more, got %r' % (value,))
        out[key] = value
    return out


def owner_mark(run_id, pid=None):
    """The OWNER_ENV value for the tools of a run: its run id; for a module run without one (by hand),
    'pid-<module pid>', which only this module's tools carry."""
    return str(run_id) if run_id else 'pid-%d' % (pid or os.getpid())


def _read_bytes(path, limit=1 << 20):
    try:
        with open(path, 'rb') as f:
            return f.read(limit)
    except (OSError, IOError):
        return None


def process_mark(proc, pid):
    """The OWNER_ENV value in the environment of process `pid`, or None (none, gone, or not
    readable: another user's process when not root)."""
    data = _read_bytes(os.path.join(proc, str(pid), 'environ'))
    prefix = OWNER_ENV.encode('ascii') + b'='
    for item in (data or b'').split(b'\0'):
        if item.startswith(prefix):
            return item[len(prefix):].decode('utf-8', 'replace')
    return None


def _exited(proc, pid):
    """A zombie (exited, not yet reaped) runs nothing; nor does a process that is gone."""
    data = _read_bytes(os.path.join(proc, str(pid), 'stat'), 4096)
    try:
        return data is None or data.rsplit(b')', 1)[1].split()[0] in (b'Z', b'X')
    except IndexError:
        return False


def shown_mark(mark):
    """Another run's mark as shown in a warning: a run id as is, anything else quoted and cut short."""
    return mark if _MARK_SHOWN_RE.match(mark) else repr(mark[:64])


class OtherRuns(object):
    """The processes of other benchlab runs on this host: those whose environment carries OWNER_ENV
    with a mark other than `mark` (this run's). current() scans /proc now; start() begins a
    measurement window and watch() adds what runs now to it; unreported() hands each one found in
    the window over once. A process's environment is read once per (pid, name) (an exec changes
    the name and is read again)."""

    def __init__(self, mark, proc='/proc', own_pid=None):
        self.mark = mark
        self.proc = proc
        self.own_pid = own_pid or os.getpid()
        self._marks = {}
        self.seen = {}
        self._reported = set()

    def current(self):
        """[(pid, name, mark)] of other runs' processes running now."""
        found, alive = [], {}
        try:
            entries = os.listdir(self.proc)
        except OSError:
            return found
        for entry in entries:
            if not entry.isdigit() or int(entry) == self.own_pid:
                continue
            name = _read_bytes(os.path.join(self.proc, entry, 'comm'), 256)
            if name is None:
                continue
            key = (int(entry), name)
            if key not in self._marks:
                self._marks[key] = process_mark(self.proc, entry)
            alive[key] = self._marks[key]
            mark = self._marks[key]
            if mark is not None and mark != self.mark and not _exited(self.proc, entry):
                found.append((int(entry), name.decode('utf-8', 'replace').strip(), mark))
        self._marks = alive    # forget the processes that are gone
        return sorted(found)

    def start(self):
        self.seen = {}
        self._reported = set()
        return self.watch()

    def watch(self):
        now = self.current()
        for pid, name, mark in now:
            self.seen.setdefault((pid, name), mark)
        return now

    def unreported(self):
        """{mark: ['name[pid]', ...]} of the processes found in the window not handed over yet."""
        out = {}
        for (pid, name), mark in sorted(self.seen.items()):
            if (pid, name) not in self._reported:
                self._reported.add((pid, name))
                out.setdefault(mark, []).append('%s[%d]' % (name, pid))
        return out


def other_runs_verdict(record, warnings, others):
    """Another benchlab run measured on this host during the window of `others` (OtherRuns): the
    record is not quiet (``not_quiet``), ``other_runs`` names their run ids, and a warning each.
    A record without a quiesce verdict is left alone."""
    if others is None or record.get('quiet') is None:
        return record
    for mark, procs in sorted(others.unreported().items()):
        record['quiet'] = False
        shown = shown_mark(mark)
        if shown not in record.setdefault('other_runs', []):
            record['other_runs'].append(shown)
        warnings.append('machine not quiet: another benchlab run (run id %s) measured on this host at the same time: '
                        '%s' % (shown, ', '.join(procs[:5])))
    return record


def competing_names(guards):
    """The process names that mean a competing benchmark: guards.processes (from the controller),
    and the usual load generators."""
    names = list((guards or {}).get('processes') or ())
    return tuple(names + [n for n in LOAD_GENERATORS if n not in names])


def competing_processes(proc='/proc', own_pid=None, names=LOAD_GENERATORS):
    """[(pid, name)] of processes named one of `names` running now, other than `own_pid` and its
    children. A zombie (exited, not yet reaped: an iperf server just stopped) runs nothing."""
    own_pid = own_pid or os.getpid()
    found = []
    try:
        entries = os.listdir(proc)
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == own_pid:
            continue
        try:
            with open(os.path.join(proc, entry, 'comm')) as f:
                name = f.read().strip()
            if name not in names:
                continue
            with open(os.path.join(proc, entry, 'stat')) as f:
                fields = f.read().rsplit(')', 1)[1].split()
            state, ppid = fields[0], int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid != own_pid and state not in ('Z', 'X'):
            found.append((int(entry), name))
    return sorted(found)


def quiet_verdict(load1, cpus, max_load_per_cpu, competing):
    """(quiet, reason): is the machine quiet enough to measure? Pure."""
    reasons = []
    limit = max_load_per_cpu * max(1, cpus)
    if load1 > limit:
        reasons.append('load average %.2f is above %.2f (%.2f per CPU x %d CPUs)' % (load1, limit, max_load_per_cpu, cpus))
    if competing:
        reasons.append('other benchmark processes are running: %s' % ', '.join('%s[%d]' % (n, p) for p, n in competing))
    return (not reasons), '; '.join(reasons)


def read_stat(proc, pid):
    """(ppid, pgrp, session, kernel_thread, cpu_ticks, start_ticks) of one /proc/<pid>/stat, or None."""
    try:
        with open(os.path.join(proc, str(pid), 'stat')) as f:
            rest = f.read().rsplit(')', 1)[1].split()
        return (int(rest[1]), int(rest[2]), int(rest[3]), bool(int(rest[6]) & PF_KTHREAD),
                int(rest[11]) + int(rest[12]), int(rest[19]))
    except (OSError, IOError, ValueError, IndexError):
        return None


def cpu_snapshot(proc='/proc'):
    """{pid: read_stat(...)} of every process now."""
    snap = {}
    try:
        entries = os.listdir(proc)
    except OSError:
        return snap
    for entry in entries:
        if entry.isdigit():
            st = read_stat(proc, entry)
            if st is not None:
                snap[int(entry)] = st
    return snap


def own_processes(snap, self_pid, sessions=()):
    """The pids of `snap` that are this run's own: kernel threads, the module's ancestors (the shell,
    sshd's session or the Ansible worker and ansible-playbook that started it), its descendants (the
    tool), every process of the module's process group (with a local connection the controller's
    ansible-playbook job: its workers and what they started; with ssh the remote command) and of the
    tool's own session (`sessions`: benchrun runs the tool in a session of its own). Chosen by
    ancestry, process group and session, never by a name: a benchmark called like ours but outside
    this tree is other load."""
    own = set(pid for pid, st in snap.items() if st[3])
    pid = self_pid
    while pid in snap and pid not in own:
        own.add(pid)
        pid = snap[pid][0]
    own.add(self_pid)
    groups = set(sessions)
    if self_pid in snap:
        groups.add(snap[self_pid][1])
    groups.discard(0)   # a group outside this pid namespace reads as 0: it names nothing here
    own.update(p for p, st in snap.items() if st[1] in groups or st[2] in set(sessions))
    children = {}
    for p, st in snap.items():
        children.setdefault(st[0], []).append(p)
    todo, seen = [self_pid], set([self_pid])
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                own.add(child)
                todo.append(child)
    return own


def harness_processes(snap, pids):
    """`pids` (processes of this run's harness: they carry this run's own mark, such as the waiter the
    controller's action plugin starts on the host to follow a batch running in the background) with
    their ancestors (with a local connection the Ansible worker and ansible-playbook; with SSH the
    session) and descendants, in `snap`. A batch in the background has no ancestor of Ansible's, so
    this is how the harness around it is known: by this run's mark, never by a name."""
    out = set()
    for pid in pids:
        while pid in snap and pid not in out:
            out.add(pid)
            pid = snap[pid][0]
    children = {}
    for p, st in snap.items():
        children.setdefault(st[0], []).append(p)
    todo = [p for p in pids if p in snap]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def other_cpu(before, after, own):
    """[(cpu_ticks, pid)] used between the two snapshots by processes not in `own`, busiest first.
    A pid whose start time changed is a new process: all its ticks count."""
    used = []
    for pid, st in after.items():
        if pid in own:
            continue
        prev = before.get(pid)
        ticks = st[4] - (prev[4] if prev and prev[5] == st[5] else 0)
        if ticks > 0:
            used.append((ticks, pid))
    return sorted(used, reverse=True)


# A start this much after guards.start_at is a warning: the runs meant to start together did not.
START_LATE_WARN_S = 0.5


def apply_guards(guards, sleep=time.sleep, now=time.monotonic, loadavg=os.getloadavg, cpus=None,
                 competing=None, clock=time.time, others=None):
    """Apply the guards before a measurement. Returns (params for the record, warnings). `competing`
    (no arguments -> [(pid, name)]) replaces the scan for the processes competing_names names.
    `others` (OtherRuns): other benchlab runs are waited for like competing processes, and those
    still running when the measurement starts make it not quiet; its window starts here."""
    g = normalize(guards)
    if competing is None:
        competing = functools.partial(competing_processes, names=competing_names(g))
    cpus = cpus or os.cpu_count() or 1
    warnings = []
    record = {'quiesce': g['quiesce'], 'cooldown_s': g['cooldown_s'], 'warmup': g['warmup'],
              'hypervisor_caches_dropped': g['hypervisor_caches_dropped']}
    for key in ('concurrency', 'drbd', 'observe_toward'):
        if g[key] is not None:
            record[key] = g[key]
    if g['cooldown_s']:
        sleep(g['cooldown_s'])
    if g['quiesce']:
        start = now()
        while True:
            load1 = loadavg()[0]
            others_now = competing()
            runs_now = [(pid, '%s of benchlab run %s' % (name, shown_mark(mark)))
                        for pid, name, mark in (others.current() if others is not None else [])]
            calm = quiet_verdict(load1, cpus, g['max_load_per_cpu'], others_now + runs_now)[0]
            waited = now() - start
            if calm or waited >= g['quiesce_wait_s']:
                break
            sleep(min(2.0, g['quiesce_wait_s'] - waited))
        # The load average only decides how long to wait: it counts this run's own tool, module and
        # Ansible. The verdict is other benchmarks now, and other processes' CPU over the run
        # (run_verdict, when the skeleton measured the run).
        quiet = not others_now
        record.update(load_before=round(load1, 2), waited_s=round(waited, 1), quiet=quiet,
                      max_other_cpu_pct=g['max_other_cpu_pct'])
        if not quiet:
            warnings.append('machine not quiet before the measurement: %s%s' % (
                quiet_verdict(0, cpus, g['max_load_per_cpu'], others_now)[1],
                ' (waited %.0f s)' % waited if g['quiesce_wait_s'] else ''))
        if others is not None:   # the window starts: other runs running now count
            others.start()
            other_runs_verdict(record, warnings, others)
        elif not calm and g['quiesce_wait_s']:
            warnings.append('load average %.2f still above %.2f per CPU after waiting %.0f s (it counts this run\'s '
                            'own processes too: the verdict is the other processes\' CPU during the run)'
                            % (load1, g['max_load_per_cpu'], waited))
    if g['warmup']:
        warnings.append('warm-up run: stored, not counted in the statistics')
    if g['start_at'] is not None:
        _wait_for_start(g, record, warnings, sleep, clock)
    return record, warnings


def _wait_for_start(g, record, warnings, sleep, clock):
    """Sleep until the agreed moment (guards.start_at, the controller's) on this host's clock (plus
    guards.clock_offset_s), then record how late the start was."""
    moment = g['start_at'] + (g['clock_offset_s'] or 0.0)
    ahead = moment - clock()
    if ahead > 0:
        sleep(ahead)
    late = max(0.0, clock() - moment)
    record.update(start_at=g['start_at'], start_late_s=round(late, 3))
    if g['clock_offset_s'] is not None:
        record['clock_offset_s'] = g['clock_offset_s']
    if late > START_LATE_WARN_S:
        warnings.append('started %.1f s after the agreed start (guards.start_at): the runs meant to start '
                        'together did not (a slow start of the others, or this host\'s clock)' % late)


def _comm(proc, pid):
    try:
        with open(os.path.join(proc, str(pid), 'comm')) as f:
            return f.read().strip()
    except (OSError, IOError):
        return '?'


def run_verdict(record, warnings, used, window_s, cpus=None, ticks_per_s=100, proc='/proc'):
    """The quiet verdict over the run: `used` [(cpu_ticks, pid)] of other processes (other_cpu) during
    `window_s` seconds. Sets record other_cpu_pct (% of all CPUs), busiest and quiet (false when above
    max_other_cpu_pct); adds a warning then. A record without a quiesce verdict is left alone."""
    if record.get('quiet') is None or window_s <= 0:
        return record
    cpus = cpus or os.cpu_count() or 1
    share = 100.0 / float(ticks_per_s) / (window_s * cpus)    # one clock tick, in % of the window's CPU
    pct = share * sum(t for t, _p in used)
    # The kernel counts a process's CPU in whole clock ticks, so each process's figure over the
    # window may be up to one tick more than it used (its count at the start rounded down): the
    # verdict takes the least the counters prove. Over a 0.08 s window on 2 CPUs a tick is 6 %:
    # two ticks of a process starting up would otherwise read as a busy machine.
    proven = share * sum(max(t - 1, 0) for t, _p in used)
    limit = record.get('max_other_cpu_pct', DEFAULTS['max_other_cpu_pct'])
    record['other_cpu_pct'] = round(pct, 2)
    busiest = ['%s[%d] %.2fs' % (_comm(proc, p), p, t / float(ticks_per_s)) for t, p in used[:3]]
    if busiest:
        record['busiest'] = busiest
    if proven > limit:
        record['quiet'] = False
        warnings.append('machine not quiet during the measurement: other processes used %.1f%% of the CPU '
                        '(%d CPUs, above %.1f%%; at least %.1f%% counting whole clock ticks): %s'
                        % (pct, cpus, limit, proven, ', '.join(busiest)))
    return record
