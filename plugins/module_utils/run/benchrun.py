# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The skeleton every benchmark module runs in (docs/architecture.md, "Safety").

``BenchRun`` owns the dangerous parts, so that a module keeps only its options, validation and
argv:

- the work directory and its ownership marker (module_utils/run/workdir.py), removed at the end
  unless ``keep``;
- check mode: ``bench_dry_run`` = {tool, argv, writes, creates, removes, refused} (shared
  contract 4); a refusal in check mode is reported there instead of failing;
- the device guard (module_utils/run/devguard.py) for every device a module writes;
- the methodology guards (common.start_measurement), and the quiet verdict over the run: the CPU
  time other processes used while the tool ran (guards.run_verdict; this run's own tree, its
  process group and the tool's session are left out), and other benchlab runs' tools seen while it
  ran (guards.OtherRuns: every tool started here carries guards.OWNER_ENV with the run id);
- running the tool timed, in a session of its own whose process group and leader start time are
  recorded in the marker while it runs;
- observation of every measured run (module_utils/observe/observe.py): a sampler thread from right before
  the tool starts to right after it exited, over the devices of the layer stack under the path (or
  the devices written), the CPUs, the tool's process tree, memory, pressure and the interfaces in
  the path; each record gets its ``observed`` summary and ``limited_by``, the module's result the
  series (``bench_observed``, by series id) for the report callback to store;
- parse-or-fail (runner.fail with the output tails);
- cleanup: the tool's recorded processes are stopped when the module fails or is interrupted
  (SIGTERM/SIGHUP/SIGINT), then the work directory is removed;
- a batch (``run_module``, the option ``batch``): several runs of the module in one module process,
  one after the other, each with its own options, guards, work directory and result, each result
  appended to a spool file the moment the run ends (the controller streams it from there), a run's
  ``timeout_s`` enforced on its tool (stopped, the run failed, the batch goes on).

Use (a module's ``main`` is ``run_module(argument_spec, run)``, ``run(module)`` its one run)::

    with BenchRun(module, 'fio') as br:
        workdir = br.workdir_in(path)
        argv = [...]
        br.dry_run(argv, writes=[workdir])        # exits here in check mode
        br.measure(params)
        res = br.run(argv, cwd=workdir)
        records = br.parse('fio', res, fio_records, res.stdout, ...)
        br.exit(bench_result=records[0])
"""

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
import traceback

from ansible.module_utils import basic
from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import describe, start_measurement
from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import DeviceGuardError, check_device_writable
from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import (
    OWNER_ENV, WATCH_INTERVAL_S, OtherRuns, cpu_snapshot, harness_processes, other_cpu, other_runs_verdict, owner_mark,
    own_processes, process_mark, run_verdict)
from ansible_collections.benchlab.bench.plugins.module_utils.observe.observe import (
    DEFAULT_INTERVAL_S, Observer, exited_totals, limited_by, route_interfaces, target_layers)
from ansible_collections.benchlab.bench.plugins.module_utils.run.options import argument_spec as options_spec, bound_problems
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import C_LOCALE, CommandResult, fail
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import record_flags
from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import (
    create_workdir, proc_start_time, remove_tree, stop_recorded, system_directory_problem, update_marker)

PLACEHOLDER = 'XXXXXX'
# How often a batch run's tool is checked for its deadline and the batch's stop file.
STOP_CHECK_S = 0.25
STOP_SIGNALS = ('SIGTERM', 'SIGHUP', 'SIGINT')


class Interrupted(Exception):
    """The module received a stop signal while it ran (or its run's time was up)."""


# While `depth` > 0 a stop signal is held (`pending`) and acted on when the last deferral ends: a
# directory this run creates is then both made and known to its cleanup, never only made.
_DEFERRED = {'depth': 0, 'pending': None}


def _raise_interrupted(signum, _frame):
    if _DEFERRED['depth']:
        _DEFERRED['pending'] = signum
        return
    raise Interrupted('benchmark module interrupted by signal %d' % signum)


@contextlib.contextmanager
def stop_deferred():
    """Hold a stop signal that arrives inside the block until its end (then Interrupted is raised
    there): for creating what the run must remove and recording it for its cleanup in one step
    (the owner marker's fsync can take seconds on a busy disk, long enough for a stop to land)."""
    _DEFERRED['depth'] += 1
    try:
        yield
    finally:
        _DEFERRED['depth'] -= 1
        pending = _DEFERRED['pending']
        if not _DEFERRED['depth'] and pending is not None:   # the stop wins over the block's own error
            _DEFERRED['pending'] = None
            _raise_interrupted(pending, None)


def new_dry_run(tool):
    return {'tool': tool, 'argv': [], 'writes': [], 'creates': [], 'removes': [], 'refused': None}


class BenchRun(object):
    """One benchmark module run; a context manager (see the module docstring)."""

    def __init__(self, module, tool, what=None, errors=()):
        self.module = module
        self.tool = tool
        self.what = what or tool
        self.check_mode = module.check_mode
        self.keep = bool(module.params.get('keep'))
        self.result = {'changed': False}
        self.warnings = []
        self.flags = []
        self.dry = new_dry_run(tool)
        self.workdir = None
        self.owned = []
        self.parent = None
        self._running = None
        self._guard = None
        self.mark = owner_mark(module.params.get('run_id'))
        self._others = None
        self._measured = False
        self._watched = None        # (layers, interfaces) found by measure(), before the guards
        self.devices_written = []
        self.observe_interfaces = []
        self.link_rates = {}
        self.observations = []      # [(argv, observed, series)] of every observed run
        self._handlers = {}
        self._errors = (OSError, IOError, Interrupted) + tuple(errors)
        if module.params.get('describe'):
            # the cell's environment, as benchlab.bench.sysinfo describes it, before anything of the run
            # (its first run on the bench_run role's one-task path: one module run less per cell)
            path = module.params.get('path')
            self.result.update(sysinfo=describe(module, path if path and os.path.exists(path) else None),
                               labels=module.params.get('labels') or {})

    # -- context --------------------------------------------------------------------------

    def __enter__(self):
        for name in STOP_SIGNALS:
            sig = getattr(signal, name)
            try:
                self._handlers[sig] = signal.signal(sig, _raise_interrupted)
            except (ValueError, OSError):
                pass
        return self

    def __exit__(self, exc_type, exc, _tb):
        # a second stop signal must not cut the cleanup short
        for sig in self._handlers:
            signal.signal(sig, signal.SIG_IGN)
        self.stop_tool()
        for path, keep in self.owned:
            if not keep:
                remove_tree(path)
        for sig, handler in self._handlers.items():
            signal.signal(sig, handler)
        if exc_type is not None and issubclass(exc_type, self._errors):
            self.module.fail_json(msg='%s benchmark in %s failed: %s' % (self.what, self.parent or '-', exc),
                                  **self.context())
        return False

    def context(self, **extra):
        """The result keys attached to a failure (runner.fail sets cmd itself)."""
        out = dict((k, v) for k, v in self.result.items() if k not in ('cmd', 'changed'))
        out['changed'] = self.result.get('changed', False)
        out.update(extra)
        return out

    # -- guards and check mode ----------------------------------------------------------------

    def refuse(self, msg):
        """A guard refused: in check mode noted in bench_dry_run.refused, otherwise a failure."""
        if self.check_mode:
            if self.dry['refused'] is None:
                self.dry['refused'] = msg
            return
        self.module.fail_json(msg=msg, **self.context())

    def device(self, path, destructive, force=False):
        """Pass a block device the module writes through the device guard. Returns the guard's
        description of the device, or None when it refused (check mode only)."""
        if path not in self.dry['writes']:
            self.dry['writes'].append(path)
        try:
            info = check_device_writable(path, destructive, force=force)
        except DeviceGuardError as e:
            self.refuse(str(e))
            return None
        if path not in self.devices_written:
            self.devices_written.append(path)
        return info

    def workdir_in(self, parent, name=None, keep=None):
        """A private work directory with its ownership marker in `parent` (a placeholder path in
        check mode), removed at the end unless keep; refused when `parent` resolves to / or into a
        directory of the operating system (workdir.system_directory_problem). Without `name` it is the run's work
        directory (``self.workdir``); with one (``benchlab-<name>-*``) an extra owned directory,
        such as dd's random source in /dev/shm."""
        keep = self.keep if keep is None else keep
        tool = name or self.tool
        problem = system_directory_problem(parent)
        if problem:
            self.refuse(problem)
        if self.check_mode:
            path = os.path.join(parent, 'benchlab-%s-%s' % (tool, PLACEHOLDER))
        else:
            p = self.module.params
            with stop_deferred():
                path = create_workdir(parent, tool, run_id=p.get('run_id'), run_key=p.get('run_key'), keep=keep)
                self.owned.append((path, keep))
        if path not in self.dry['creates']:
            self.dry['creates'].append(path)
            if not keep:
                self.dry['removes'].append(path)
        if name is None:
            self.parent = parent
            self.workdir = path
        return path

    def drop_workdir(self):
        """Remove the run's work directory now (a module that runs the tool several times)."""
        if self.workdir and not self.check_mode and not self.keep:
            remove_tree(self.workdir)
            self.owned = [(p, k) for p, k in self.owned if p != self.workdir]
        self.workdir = None

    def dry_run(self, argv, writes=None, argvs=None, **extra):
        """What would run. In check mode: exit with cmd and bench_dry_run (changed stays false unless
        the module would change something besides its own work directory, such as a user)."""
        self.dry['argv'] = list(argv)
        if argvs:
            self.dry['argvs'] = [list(a) for a in argvs]
        for w in writes or []:
            if w not in self.dry['writes']:
                self.dry['writes'].append(w)
        self.result['cmd'] = list(argv)
        if self.check_mode:
            result = dict(self.result, bench_dry_run=self.dry)
            result.update(extra)
            self.module.exit_json(**result)

    # -- measuring ------------------------------------------------------------------------

    def measure(self, params, warnings=None, competing=None):
        """The methodology guards, right before the measurement. What the observer watches is found
        first: the guards end at the agreed moment (guards.start_at), and nothing that takes time
        (the layer stack, the routes toward a peer) may come between that moment and the tool."""
        warnings = self.warnings if warnings is None else warnings
        self._watched = self._watch_list() if self.observe_interval() > 0 and not self.check_mode else None
        self._others = OtherRuns(self.mark)
        done = start_measurement(self.module, params, warnings, competing=competing, others=self._others)
        self._guard = (done, warnings)    # the next run() measures the other processes' CPU
        self._measured = True             # every run() from now on is observed
        return done

    # -- observation ----------------------------------------------------------------------

    def observe_interval(self):
        """Seconds between samples: the run's guards.observe_interval_s (the matrix's methodology,
        through the plan), else the option observe_interval_s; 0 turns observation off."""
        p = self.module.params
        value = (p.get('guards') or {}).get('observe_interval_s')
        if value is None:
            value = p.get('observe_interval_s', DEFAULT_INTERVAL_S)
        return float(value or 0)

    def new_observer(self):
        """An Observer of the devices under the run's path (or the devices it writes), or None when
        observation is off or this is check mode."""
        interval = self.observe_interval()
        if interval <= 0 or self.check_mode:
            return None
        layers, interfaces = self._watched or self._watch_list()
        return Observer(interval, layers, interfaces=interfaces, link_rates=self.link_rates)

    def _watch_list(self):
        """(layers, interfaces) an observer of this run watches: the layer stack under the run's path
        (or the devices it writes), the interfaces the module named and the links toward the hosts the
        run's writes go to as well (a DRBD peer: guards.observe_toward)."""
        layers = []
        targets = self.devices_written or [t for t in [self.module.params.get('path')] if t]
        for t in targets:
            layers.extend(target_layers(t))
        interfaces = list(self.observe_interfaces)
        for address in (self.module.params.get('guards') or {}).get('observe_toward') or []:
            interfaces.extend(n for n in route_interfaces(str(address)) if n not in interfaces)
        return layers, interfaces

    def _keep_observation(self, argv, obs, tool=None):
        observed, series = obs.stop(tool)
        if tool is None:
            why = 'the exited tool\'s totals could not be read (no waitid, or /proc hides it)'
            observed['missing'].append({'source': '/proc/<pid>/io', 'why': why})
        series_id = os.urandom(6).hex()
        observed['series'] = series_id
        self.observations.append((list(argv), observed, series))
        return observed

    def run(self, argv, cwd=None, data=None, verdict=True):
        """Run the tool (argv list), C locale, timed, in a batch stopped at its deadline; with a work directory in
        a session of its own (marker: its group). verdict=False: no quiet verdict (iperf's client, see iperf.py)."""
        if not isinstance(argv, (list, tuple)):
            raise TypeError('argv must be a list, not %r' % type(argv).__name__)
        argv = [str(a) for a in argv]
        env = dict(os.environ)
        env.update(C_LOCALE)
        env[OWNER_ENV] = self.mark    # other runs on this host see whose tool this is
        owned = [path for path, _keep in self.owned]
        own_session = bool(owned)
        guard, self._guard = (self._guard if verdict else None), None
        before = cpu_snapshot() if guard else None
        obs = self.new_observer() if self._measured else None
        if obs is not None:
            obs.start()                   # the first sample: right before the tool starts
        start = time.monotonic()
        devnull = open(os.devnull, 'rb')
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, close_fds=True, start_new_session=own_session,
                                    stdin=subprocess.PIPE if data is not None else devnull,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except BaseException:
            if obs is not None:
                obs.cancel()
            raise
        finally:
            devnull.close()
        if obs is not None:
            obs.watch(proc.pid)
        if own_session:
            self._running = (proc.pid, proc_start_time(proc.pid))
            for path in owned:
                update_marker(path, pgid=proc.pid, pid_start=self._running[1])
        observed = None
        if obs is not None:
            stopper = self._stopper(proc)
            try:
                out, err, tool = _communicate_observed(proc, data, self._others if guard else None, check_stop=stopper)
            except BaseException:
                obs.cancel()
                raise
            if stopper is not None and stopper.state:    # a batch's run stopped (its timeout, the controller gone)
                obs.cancel()
                proc.wait()
                self._running = None
                raise Interrupted(stopper.state['reason'])
            observed = self._keep_observation(argv, obs, tool)   # the last sample: the tool has exited
            proc.wait()
        else:
            out, err = self._communicate(proc, data, self._others if guard else None)
        duration = time.monotonic() - start
        self._running = None
        if guard:
            self._quiet_verdict(guard, before, duration, [proc.pid] if own_session else [])
            other_runs_verdict(guard[0], guard[1], self._others)
        res = CommandResult(argv, proc.returncode, to_native(out, errors='surrogate_or_strict'),
                            to_native(err, errors='surrogate_or_strict'), duration)
        res.observed = observed
        return res

    def _stop_reason(self):
        """Why a batch's run must stop its tool now, or None: the controller asked the batch to stop
        (it went away: the batch's stop file), or the run's deadline (its timeout_s) has passed."""
        stop_file = getattr(self.module, 'stop_file', None)
        if stop_file and os.path.exists(stop_file):
            return 'stopped: the controller that ran the batch went away'
        deadline = getattr(self.module, 'deadline', None)
        if deadline is not None and time.monotonic() >= deadline:
            return 'still running after its timeout_s of %s s: stopped' % getattr(self.module, 'timeout_s', '?')
        return None

    def _stopper(self, proc):
        """For a batch's run (a deadline or a stop file): a check, called every STOP_CHECK_S seconds
        while the tool runs, that stops the tool (its process group) once _stop_reason says so and
        keeps the reason in its `state`; None outside a batch."""
        if getattr(self.module, 'deadline', None) is None and not getattr(self.module, 'stop_file', None):
            return None
        state = {}

        def check():
            if state:
                return
            why = self._stop_reason()
            if why:
                state['reason'] = why
                if self._running:
                    self.stop_tool()
                else:
                    proc.kill()
        check.state = state
        return check

    def _communicate(self, proc, data, others=None):
        """The tool's output. With `others` (guards.OtherRuns), other benchlab runs' tools are looked
        for every WATCH_INTERVAL_S seconds while the tool runs, and once at its end. In a batch the
        tool is stopped and the run fails with Interrupted when _stop_reason says so."""
        stopper = self._stopper(proc)
        if stopper is None and others is None:
            return proc.communicate(data)
        slice_s = STOP_CHECK_S if stopper is not None else WATCH_INTERVAL_S
        watched = time.monotonic()
        while True:
            try:
                out, err = proc.communicate(data, timeout=slice_s)
            except subprocess.TimeoutExpired:
                data = None     # given to the tool once
                if others is not None and time.monotonic() - watched >= WATCH_INTERVAL_S - 0.001:
                    others.watch()
                    watched = time.monotonic()
                if stopper is not None:
                    stopper()
                    if stopper.state:
                        proc.communicate()
                        raise Interrupted(stopper.state['reason'])
                continue
            if others is not None:
                others.watch()
            return out, err

    def _quiet_verdict(self, guard, before, window_s, sessions):
        """guards.run_verdict over the run that just ended (the tool is reaped: its CPU is ours). Of the
        processes that used CPU meanwhile, those carrying this run's mark are its harness (the waiter
        that follows a batch in the background): they, their ancestors and descendants are ours."""
        after = cpu_snapshot()
        me = os.getpid()
        own = own_processes(before, me, sessions) | own_processes(after, me, sessions)
        used = other_cpu(before, after, own)
        marked = [pid for _ticks, pid in used if process_mark('/proc', pid) == self.mark]
        if marked:
            own |= harness_processes(after, marked)
            used = other_cpu(before, after, own)
        try:
            ticks = os.sysconf('SC_CLK_TCK')
        except (ValueError, OSError):
            ticks = 100
        run_verdict(guard[0], guard[1], used, window_s, ticks_per_s=ticks)

    def stop_tool(self):
        """Stop the running tool's recorded processes (failure or interrupt)."""
        if self._running:
            pgid, start = self._running
            self._running = None
            stop_recorded(pgid, start, grace=3.0)

    # -- results --------------------------------------------------------------------------

    def attach_observations(self, records):
        """Each record gets the observation of the run that made it (the run whose argv is the
        record's cmd; a record without cmd, when one run was observed, that one) as ``observed``,
        and ``limited_by``; the
        series go into the result's ``bench_observed`` {series id: series}."""
        if not self.observations:
            return
        used = {}
        for rec in records:
            if not isinstance(rec, dict) or 'observed' in rec:
                continue
            match = [o for o in self.observations if o[0] == rec.get('cmd')]
            if not match and len(self.observations) == 1 and not rec.get('cmd'):
                match = self.observations
            if not match:
                continue
            _argv, observed, series = match[-1]
            rec['observed'] = observed
            found = limited_by(observed)
            if found:
                rec['limited_by'] = found
            used[observed['series']] = series
        if used:
            self.result['bench_observed'] = used

    def fail(self, what, res, extra=None, **kwargs):
        fail(self.module, what, res, extra=extra, **self.context(**kwargs))

    def parse(self, what, res, func, *args, **kwargs):
        """func(*args, **kwargs), or a failure naming `what` when it raises a parse error."""
        try:
            return func(*args, **kwargs)
        except ValueError as e:
            self.fail(what, res, extra=str(e))

    def flag(self, code, message=None):
        """A trap code (module_utils/run/trapcodes.py) for every record of this run, and its warning text."""
        if code not in self.flags:
            self.flags.append(code)
        if message and message not in self.warnings:
            self.warnings.append(message)

    def warn(self, message, code=None):
        """A warning (None: nothing to say) and, with it, its trap code."""
        if message:
            self.flag(code, message) if code else self.warnings.append(message)

    def exit(self, **result):
        records = [result.get('bench_result')] + list(result.get('bench_results') or [])
        for rec in records:
            if isinstance(rec, dict):
                rec['flags'] = record_flags(rec.get('params'), list(rec.get('flags') or []) + self.flags)
        self.attach_observations(records)
        self.result.update(result)
        if self.keep and self.workdir and not self.check_mode:
            self.result['workdir'] = self.workdir
        self.module.exit_json(**self.result)


# -- a batch: several runs in one module process ------------------------------------------------

class RunEnded(Exception):
    """A run of a batch called exit_json or fail_json: its result, and the batch goes on."""

    def __init__(self, result):
        Exception.__init__(self, result.get('msg'))
        self.result = result


class OneRun(object):
    """The module as one run of a batch sees it: its own params, check mode, deadline and warnings;
    exit_json and fail_json end the run (RunEnded), not the module; everything else is the module's."""

    def __init__(self, module, params, timeout_s=None, batch=None, stop_file=None):
        self._module = module
        self.params = params
        self.stop_file = stop_file
        # what the runs of one batch share (a module may keep something for the next run, and register
        # its removal in batch['cleanup'], called when the batch ends)
        self.batch = batch
        self.check_mode = module.check_mode
        self.timeout_s = timeout_s
        self.deadline = None
        self.warnings = []

    def start_clock(self):
        if self.timeout_s:
            self.deadline = time.monotonic() + float(self.timeout_s)

    def exit_json(self, **result):
        raise RunEnded(result)

    def fail_json(self, msg=None, **result):
        result.update(failed=True, msg=msg)
        raise RunEnded(result)

    def warn(self, warning):
        self.warnings.append(warning)

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        path = self._module.get_bin_path(arg, required=False, opt_dirs=opt_dirs)
        if required and path is None:
            self.fail_json(msg='Failed to find required executable "%s" on the target' % arg)
        return path

    def __getattr__(self, name):
        return getattr(self._module, name)


def _spool_line(spool, doc):
    """One JSON line for the controller, which reads the spool while the batch runs."""
    if spool:
        with open(spool, 'a') as f:
            f.write(json.dumps(doc, sort_keys=True) + '\n')


def _one(module, validator, item, run, batch, stop_file=None, table=None):
    """The result of one run of a batch (the run ends in exit_json or fail_json; any error is its failure)."""
    if not isinstance(item, dict) or not isinstance(item.get('options'), dict):
        return dict(failed=True, msg='batch: each run is {options: {...}, timeout_s: ...}')
    checked = validator.validate(dict(item['options']))
    problems = list(checked.error_messages) or bound_problems(table or {}, checked.validated_parameters)
    if problems:
        return dict(failed=True, msg='; '.join(problems))
    one = OneRun(module, checked.validated_parameters, item.get('timeout_s'), batch, stop_file)
    one.start_clock()
    try:
        run(one)
        result = dict(failed=True, msg='the module ended the run without a result')
    except RunEnded as e:
        result = e.result
    except Exception as e:  # pylint: disable=broad-except  # a bug in one run never costs the others
        result = dict(failed=True, msg='%s: %s' % (type(e).__name__, e), exception=traceback.format_exc())
    if one.warnings:
        result['warnings'] = list(result.get('warnings') or []) + one.warnings
    return result


def run_module(table, run, **constraints):
    """A benchmark module's main(): one run, ``run(AnsibleModule(...))``; or with the option
    ``batch`` ({runs: [{options, timeout_s}], spool}) every run of the batch in turn, in this one
    process, each with its own options checked against the module's argument spec, its result
    appended to the spool the moment it ends ({"start": i}, then {"done": i, "result": {...}}), and
    all of them returned as ``runs``. A failed run fails itself only. A file ``<spool>.stop`` (the
    controller went away) stops the running tool and the batch. ``table``: the module's option table
    (options.py): its argument spec, and the bounds checked after Ansible's own checks."""
    argument_spec = options_spec(table)
    raw = basic._load_params() or {}
    if not raw.get('batch'):
        module = basic.AnsibleModule(argument_spec=argument_spec, supports_check_mode=True, **constraints)
        problems = bound_problems(table, module.params)
        if problems:
            module.fail_json(msg='; '.join(problems))
        run(module)
        return
    # the runs' own options are checked per run below; at the top only the batch counts
    relaxed = dict((k, dict(v, required=False)) for k, v in argument_spec.items())
    module = basic.AnsibleModule(argument_spec=relaxed, supports_check_mode=True)
    batch = module.params['batch']
    validator = ModuleArgumentSpecValidator(argument_spec, **constraints)
    results, shared = [], {'cleanup': []}
    spool = batch.get('spool')
    stop_file = spool + '.stop' if spool else None
    # who to stop when the controller goes away (it checks the start time before it signals)
    _spool_line(spool, {'pid': os.getpid(), 'pid_start': proc_start_time(os.getpid())})
    previous = signal.signal(signal.SIGTERM, _raise_interrupted)   # between runs: end the batch cleanly
    try:
        for item in batch.get('runs') or []:
            if stop_file and os.path.exists(stop_file):   # the controller went away: the rest is not run
                results.append(dict(failed=True, msg='not run: the controller that ran the batch went away'))
                continue
            _spool_line(spool, {'start': len(results)})
            results.append(_one(module, validator, item, run, shared, stop_file, table))
            _spool_line(spool, {'done': len(results) - 1, 'result': results[-1]})
    except Interrupted as e:
        results.append(dict(failed=True, msg='stopped between runs: %s' % e))
    finally:
        signal.signal(signal.SIGTERM, previous)
        for cleanup in shared['cleanup']:
            cleanup()
    module.exit_json(changed=any(r.get('changed') for r in results), runs=results)


def _communicate_observed(proc, data, others=None, check_stop=None):
    """proc.communicate(data), except that the tool is waited for without being reaped first
    (waitid WNOWAIT), so its totals (CPU and I/O, its reaped children's included) can be read from
    its zombie: (stdout, stderr, exited_totals or None). The caller reaps it (proc.wait()). With
    `others` (guards.OtherRuns), other benchlab runs' tools are looked for every WATCH_INTERVAL_S
    seconds while the tool runs (a thread), and once at its end. `check_stop` (a batch's run: its
    deadline, the batch's stop file) is called every STOP_CHECK_S seconds from the same thread; it
    stops the tool itself when it must."""
    chunks = {}
    done = threading.Event()

    def watch():
        watched = time.monotonic()
        while not done.wait(STOP_CHECK_S if check_stop is not None else WATCH_INTERVAL_S):
            if others is not None and time.monotonic() - watched >= WATCH_INTERVAL_S - 0.001:
                others.watch()
                watched = time.monotonic()
            if check_stop is not None:
                check_stop()

    def drain(name, stream):
        chunks[name] = stream.read()
        stream.close()

    def feed():
        try:
            if data:
                proc.stdin.write(data)
        except (IOError, OSError):
            pass
        finally:
            try:
                proc.stdin.close()
            except (IOError, OSError):
                pass

    threads = [threading.Thread(target=drain, args=('out', proc.stdout)),
               threading.Thread(target=drain, args=('err', proc.stderr))]
    if proc.stdin is not None:
        threads.append(threading.Thread(target=feed))
    watcher = threading.Thread(target=watch) if others is not None or check_stop is not None else None
    for t in threads + ([watcher] if watcher else []):
        t.daemon = True
        t.start()
    tool = None
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        tool = exited_totals(proc.pid)
    except (AttributeError, OSError):
        pass                              # no waitid (not Linux): the totals stay unknown
    finally:
        done.set()
    if watcher is not None:
        watcher.join()
        if others is not None:
            others.watch()
    for t in threads:
        t.join()
    return chunks.get('out', b''), chunks.get('err', b''), tool
