# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchlab.bench.run_benchmark: the one run path (documentation: plugins/modules/run_benchmark.py;
the plan side: plugins/plugin_utils/plan/runpath.py).

With ``runs`` (or one ``run``): the runs of a batch on the task's host, in one module process (the
tool module's option ``batch``, module_utils/run/benchrun.py). A batch of one run without a timeout runs
as one module call; otherwise the module runs in the background (Ansible's async_wrapper, with the
batch's time limit) and a small waiter on the host (one command, WAITER below) returns each run's
result from the batch's spool file the moment the run ends: the record is stored in the run's
results.jsonl at once (plugin_utils/run/rundir.py), and a progress line is printed as each run starts.
A failed run's work is cleaned up (benchlab.bench.work_cleanup, this run id and key only).

With ``phase``: one phase of a run on the task's (delegated) host: its module, started in the
background (``at: start``), or the records of a phase started so (``collect``).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import OWNER_ENV, owner_mark
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.compat import TargetModuleAction, benchmark_args
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import fmt_duration, printable, progress_line
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runargs import RunArgsError, module_args
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir, current_run
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import (
    CLOCK_COMMAND, Outcome, amend_records, by_name, clock_reading, clocks_apart, failed_run, local_observers, observer_args,
    phase_args, phase_run_args, records_of, run_guards, run_title, stamp, with_clock)
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import unit
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.validation import record_problems

display = Display()

ARGSPEC = dict(
    run=dict(type='dict'),
    runs=dict(type='list', elements='dict'),
    phase=dict(type='dict'),
    done=dict(type='list', elements='dict', default=[]),
    start_at=dict(type='float'),
    labels=dict(type='dict'),
    guards=dict(type='dict'),
    run_id=dict(type='str'),
    run_key=dict(type='str', no_log=False),
    held=dict(type='list', elements='dict'),
    amend=dict(type='bool', default=False),
)
# The waiter: returns when the batch's spool (its argv[2]) has whole new lines after byte argv[3],
# when the async job's results file (argv[1]) says it finished, or after argv[4] seconds; it looks
# every 20 ms (two stat-sized reads: no process is started while a benchmark runs). Python 2.7+.
WAITER = r'''
import json, sys, time
status, spool, offset, wait = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
end = time.time() + wait
def job():
    try:
        with open(status) as f:
            doc = json.loads(f.read())
    except Exception:
        return None
    return doc if ('started' not in doc or doc.get('finished') or doc.get('failed')) else None
def lines():
    if not spool:
        return b''
    try:
        with open(spool, 'rb') as f:
            f.seek(offset)
            data = f.read()
    except (IOError, OSError):
        return b''
    return data[:data.rfind(b'\n') + 1]
while True:
    got, done = lines(), job()
    if got or done is not None or time.time() >= end:
        break
    time.sleep(0.02)
sys.stdout.write(json.dumps({'done': done, 'spool': got.decode('utf-8', 'replace'), 'offset': offset + len(got)}))
'''
# A waiter returns at the latest after this long, so that a controller that went away (its worker
# orphaned) is noticed and the batch stopped within it.
WAIT_S = 2
# Stops the batch's module process (argv[1]) with SIGTERM, only while it is the process that started
# at argv[2] (/proc/<pid>/stat field 22): a pid the kernel gave to another process is left alone.
# Then waits up to argv[3] seconds for it to end (its cleanup: the tool stopped, its work directory
# removed), so that a stopped playbook returns once nothing of its runs is left; prints "running"
# when it has not ended by then.
STOPPER = r'''
import os, signal, sys, time
pid, start, wait_s = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
def alive():
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return fields[19] == start and fields[0] not in ('Z', 'X')
    except (IOError, OSError, IndexError):
        return False
try:
    if alive():
        os.kill(pid, signal.SIGTERM)
except OSError:
    pass
end = time.time() + wait_s
while alive() and time.time() < end:
    time.sleep(0.05)
sys.stdout.write('running' if alive() else 'ended')
'''
# How long a stopped batch's module is waited for (the stop of its tool, SIGKILL after a grace
# period included, and a sync or cache drop under way that must end before it can act).
STOP_WAIT_S = 60
# How long a sampler stopped on this controller is waited for (its last snapshot, then its end).
OBSERVER_STOP_WAIT_S = 10


class ControllerGone(BaseException):
    """The controller is going away (SIGTERM to this worker, or its parent died)."""


def _gone(_signum, _frame):
    # Ansible sends a worker SIGINT and right after it SIGTERM: the second must not cut the stop short
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    raise ControllerGone()


def _parent_death_signal(signum):
    """Linux: this worker gets `signum` the moment the controller's main process dies (prctl
    PR_SET_PDEATHSIG; 0 turns it off). Elsewhere nothing: the follow loop notices a new parent."""
    if not sys.platform.startswith('linux'):
        return
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signum, 0, 0, 0)   # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


class ActionModule(TargetModuleAction):
    """The runs of a batch, or one phase of a run (see the module docstring)."""

    _VALID_ARGS = frozenset(ARGSPEC)
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        ActionBase.run(self, tmp, task_vars)  # not NormalAction.run: this task's module is the tool's
        _valid, args = self.validate_argument_spec(argument_spec=ARGSPEC,
                                                   mutually_exclusive=[('run', 'runs'), ('runs', 'phase')],
                                                   required_one_of=[('run', 'runs', 'phase', 'amend')])
        self._vars = task_vars or {}
        self._session = current_run()
        self._ppid = os.getppid()
        # the waiters this task starts on the host carry the run's mark (guards.OWNER_ENV): the batch's
        # quiet verdict counts them, and the Ansible processes above them, as the run's own
        run_id = args.get('run_id') or self._session.get('run_id')
        self._mark = owner_mark(run_id) if run_id else None
        if args.get('amend'):
            return self._amend(args)
        if args.get('phase'):
            return self._phase(args['phase'], args)
        runs = args.get('runs') or [dict(args['run'], key=args['run'].get('key') or args.get('run_key'))]
        return self._batch(runs, args)

    # -- the runs of a batch --------------------------------------------------------------------

    def _batch(self, runs, args):
        if len(set(r.get('tool') for r in runs)) != 1:
            raise AnsibleActionFail('run_benchmark: the runs of a batch are of one tool, got %s' % sorted(
                set(str(r.get('tool')) for r in runs)))
        results = by_name(args.get('done'))
        # the agreed start is the controller's moment: the host waits for it on its own clock, read now
        clock = self._clock() if args.get('start_at') is not None and not self._task.check_mode else None
        try:
            items = [dict(options=self._options(run, args, results, clock), timeout_s=run.get('timeout_s'))
                     for run in runs]
        except RunArgsError as e:
            raise AnsibleActionFail(str(e))
        run_id = args.get('run_id') or self._session.get('run_id')
        # a run observed on the hosts below it: its records wait for what they saw (held: stored with
        # observed.host by the amend task after the phases, or by the report callback at the end)
        held = any(ph.get('observes') for run in runs for ph in run.get('phases') or [])
        outcome = Outcome(runs, run_id, store=None if held else self._store, announce=self._announce,
                          store_series=self._store_series)
        module = 'benchlab.bench.%s' % runs[0]['tool']
        # a held run runs in the background too: stopped with the playbook, its observers are stopped as well
        self._observers = local_observers(results, self._vars.get('hostvars') or {}) if held else []
        if self._task.check_mode or (len(runs) == 1 and not runs[0].get('async_s') and not runs[0].get('timeout_s')
                                     and not held):
            outcome.start(0)
            res = self._execute_module(module_name=module, module_args={'batch': {'runs': items}}, task_vars=self._vars)
            outcome.finish_all(self._target_python_check(res, self._vars))
        else:
            self._background(module, items, runs, outcome)
        if held and not self._task.check_mode and any(clocks_apart(run) for run in runs):
            # the target's clock, for its observers below to carry its window onto theirs
            outcome.records[:] = with_clock(outcome.records, self._clock())
        cleaned = [self._cleanup(run, run_id) for run, res in zip(runs, outcome.results)
                   if res and res.get('failed') and not self._task.check_mode and run_id and run.get('key')]
        result = outcome.result()
        if held:
            result['bench_results_held'] = True
        if cleaned:
            result['bench_cleanup'] = cleaned
        if len(outcome.records) == 1:
            result['bench_result'] = outcome.records[0]
        return result

    def _options(self, run, args, results, clock=None):
        """The run's module options: its params, what its phases decided (run_args), and the options
        every benchmark shares (labels, its guards with what the phases found and the agreed start on
        the host's clock, run id and key)."""
        guards = run_guards(run, results, args.get('start_at'), clock)
        guards.update(args.get('guards') or {})
        shared = dict(labels=args.get('labels') or run.get('labels'), guards=guards,
                      run_id=args.get('run_id') or self._session.get('run_id'), run_key=run.get('key'))
        return dict(module_args(run, shared), **phase_run_args(run, results))

    def _background(self, module, items, runs, outcome):
        """The batch in the background on the host, each run's result followed from its spool."""
        tmpdir = self._make_tmp_path()
        spool = self._connection._shell.join_path(tmpdir, 'benchlab-batch.jsonl')
        limit = sum(int(r.get('limit_s') or r.get('timeout_s') or r.get('async_s') or 900) for r in runs) + 60
        started = self._start(module, {'batch': {'runs': items, 'spool': spool}}, limit)
        if not started.get('results_file'):
            outcome.finish_all(started)
            return
        # Ansible stops a task's worker with SIGINT or SIGTERM when the playbook is stopped (and the
        # worker gets SIGTERM when the controller's main process dies); the batch runs on in the
        # background on the host, so it is stopped (its stop file, its process), and nothing more is stored
        previous = dict((sig, signal.signal(sig, _gone)) for sig in (signal.SIGTERM, signal.SIGINT))
        _parent_death_signal(signal.SIGTERM)
        if os.getppid() != self._ppid:      # it died before that
            self._stop_batch(spool, {}, started)
            raise SystemExit(1)
        batch = {}

        def lines(docs):
            batch.update(next((d for d in docs if 'pid' in d), {}))
            outcome.spool_lines(docs)
        try:
            outcome.finish_all(self._follow(started['results_file'], spool, limit + 60, lines))
        except ControllerGone:
            for sig in previous:   # a second signal must not cut the stop short
                signal.signal(sig, signal.SIG_IGN)
            self._stop_batch(spool, batch, started)
            self._stop_observers()
            raise SystemExit(1)
        finally:
            _parent_death_signal(0)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        self._forget(started['results_file'])

    def _start(self, module, module_args_, limit):
        """Start a module in the background (async_wrapper, time limit `limit`): its start result, with
        the interpreter that runs it (the waiter's)."""
        saved = self._task.async_val
        self._task.async_val = int(limit)
        try:
            res = self._execute_module(module_name=module, module_args=module_args_, task_vars=self._vars, wrap_async=True)
        finally:
            self._task.async_val = saved
        res = self._target_python_check(res, self._vars)
        res['benchlab_interpreter'] = self._used_interpreter
        return res

    def _follow(self, results_file, spool, timeout, on_lines=None, interpreter=None):
        """The background module's final result; each whole line of its spool handed to on_lines as
        it appears."""
        offset, end = 0, time.monotonic() + timeout
        while True:
            out = self._wait(results_file, spool, offset, min(WAIT_S, max(end - time.monotonic(), 0.1)), interpreter)
            if os.getppid() != self._ppid:
                raise ControllerGone()
            if out is not None:
                offset = out['offset']
                docs = [json.loads(line) for line in out['spool'].splitlines() if line.strip()]
                if on_lines and docs:
                    on_lines(docs)
                if isinstance(out.get('done'), dict):
                    return out['done']
            elif time.monotonic() < end:
                time.sleep(1)
            if time.monotonic() >= end:
                return dict(failed=True, msg='no result within %d s (the time limit of the batch)' % timeout)

    def _wait(self, results_file, spool, offset, wait_s, interpreter=None):
        interp = shlex.split((interpreter or self._used_interpreter or '/usr/bin/python3').lstrip('#!').strip())
        argv = interp + ['-c', WAITER, results_file, spool or '', str(offset), '%.2f' % wait_s]
        if self._mark:
            argv = ['env', '%s=%s' % (OWNER_ENV, self._mark)] + argv
        res = self._low_level_execute_command(' '.join(shlex.quote(a) for a in argv), sudoable=True)
        text = (res.get('stdout') or '').strip()
        try:
            return json.loads(text[text.index('{'):]) if res.get('rc') == 0 else None
        except ValueError:
            return None

    def _stop_batch(self, spool, batch, started):
        """The controller is going away: the batch on the host stops its tool and runs nothing more
        (its stop file, and SIGTERM to the module's own process, which it reported)."""
        self._low_level_execute_command('touch -- %s' % shlex.quote(spool + '.stop'), sudoable=True)
        if batch.get('pid') and batch.get('pid_start') is not None:
            interp = shlex.split((started.get('benchlab_interpreter') or '/usr/bin/python3').lstrip('#!').strip())
            argv = interp + ['-c', STOPPER, str(batch['pid']), str(batch['pid_start']), str(STOP_WAIT_S)]
            res = self._low_level_execute_command(' '.join(shlex.quote(a) for a in argv), sudoable=True)
            if 'running' in (res.get('stdout') or ''):
                display.warning('benchlab.bench.run_benchmark: the batch on %s (pid %s) has not ended %d s after it was '
                                'stopped; its own cleanup removes its work directories when it ends'
                                % (self._vars.get('inventory_hostname'), batch['pid'], STOP_WAIT_S))

    def _stop_observers(self):
        """The playbook is stopped while a run observed on this machine ran: its samplers (started by
        this run's start phases on a host reached without SSH, this controller) are stopped by their
        recorded pid while it still has its recorded start time. One on another host ends at its own
        limit (the run's time limit and a minute)."""
        for pid, start, _state in self._observers:
            subprocess.run([sys.executable, '-c', STOPPER, str(pid), str(start), str(OBSERVER_STOP_WAIT_S)],
                           check=False, timeout=OBSERVER_STOP_WAIT_S + 20, stdout=subprocess.DEVNULL)

    def _forget(self, results_file):
        """Remove the async job's results file (this job's, by its exact path)."""
        self._low_level_execute_command('rm -f -- %s' % shlex.quote(results_file), sudoable=True)

    def _cleanup(self, run, run_id):
        """A tool stopped by a failure may leave its work directory (dd its random source in
        /dev/shm, CLEANUP_PATHS of its unit): remove what this run id and key own there, and nothing else."""
        mod = unit(run['tool'])
        paths = [run['path']] + list(getattr(mod, 'CLEANUP_PATHS', ()) or ())
        res = self._execute_module(module_name='benchlab.bench.work_cleanup', task_vars=self._vars,
                                   module_args=dict(path=paths, run_id=run_id, run_key=run['key']))
        out = dict((k, res[k]) for k in ('changed', 'failed', 'msg', 'removed', 'stopped') if k in res)
        display.display('Stop and remove exactly what the failed run left in its cell: %s in %s #%s: removed %s, '
                        'stopped %s' % (run.get('benchmark'), run.get('cell'), run.get('repetition'),
                                        len(out.get('removed') or []), len(out.get('stopped') or [])))
        return dict(out, benchmark=run.get('benchmark'), cell=run.get('cell'), repetition=run.get('repetition'))

    # -- as runs end: the record stored at once, a progress line as each starts -----------------------

    def _store(self, rec):
        """Store a valid record in the report callback's results.jsonl the moment its run ended (False:
        no callback, or the callback stores it when the task's result arrives)."""
        if not self._session.get('path') or record_problems(rec):
            return False
        try:
            written = RunDir(self._session['base'], self._session['run_id']).append_jsonl(
                'results.jsonl', dict(rec, host=self._vars.get('inventory_hostname')),
                still=lambda: os.getppid() == self._ppid)
        except (OSError, ValueError) as e:
            display.warning('benchlab.bench.run_benchmark: the record waits for the report callback (%s)' % e)
            return False
        if written is False:    # the controller went away while this waited: its report is written
            raise ControllerGone()
        if written:             # a partial last line (a crash) was repaired first: say what was dropped
            display.warning('benchlab.bench.run_benchmark: %s' % written)
        return True

    def _store_series(self, series_id, series):
        """Store a run's observed time series in the run directory (observed/<id>.json.gz) the moment the
        run ended, before its record (False: no callback, or it could not be written now: the report
        callback stores it from the task's result)."""
        if not self._session.get('path'):
            return False
        try:
            RunDir(self._session['base'], self._session['run_id']).write_series(series_id, series)
        except OSError as e:
            display.warning('benchlab.bench.run_benchmark: the observed series waits for the report callback (%s)' % e)
            return False
        except (ValueError, TypeError) as e:
            display.warning('benchlab.bench.run_benchmark: observed series %s not stored: %s' % (
                printable(str(series_id)[:40]), printable(str(e))))
        return True

    def _announce(self, run):
        """`[cell 3/24] fio randread #1 on guest-2 (loop, bridged) — elapsed 2m10s, ETA 6m`: the run's
        place in the plan, the time since the playbook started and what the plan's pace leaves."""
        if not self._session.get('progress', False) or self._task.check_mode:
            return
        if os.getppid() != self._ppid:   # the controller is gone: nobody to tell
            raise ControllerGone()
        total = int(self._session.get('total_runs') or 0)
        elapsed = time.monotonic() - float(self._session.get('clock') or time.monotonic())
        if isinstance(run.get('index'), int):
            index = run['index'] + 1
            eta = elapsed / run['index'] * (total - run['index']) if run['index'] else None
            line = progress_line(index, max(total, index), run_title(run), elapsed, eta)
        else:
            line = '[gate] %s — elapsed %s' % (run_title(run), fmt_duration(elapsed))
        try:
            display.display(line)
        except (BrokenPipeError, EOFError):   # the controller's main process is gone
            raise ControllerGone()

    # -- one phase on the (delegated) host ----------------------------------------------------------

    def _phase(self, phase, args):
        results = by_name(args.get('done'))
        if phase.get('collect'):
            return self._collect(phase, results.get(phase['collect']) or {}, args)
        clock = (self._clock() if phase.get('start_at') and args.get('start_at') is not None and not self._task.check_mode
                 else None)
        margs = phase_args(phase, results, args.get('start_at'), clock)
        if margs is None:
            return dict(changed=False, skipped=True, msg='%s: an earlier phase it needs did not run' % phase['name'])
        margs = benchmark_args(phase['module'], margs)
        if phase.get('observes'):   # its sampler runs on by itself: the module returns at once
            run = args.get('run') or {}
            clock = (self._clock() if phase.get('at') == 'after' and not self._task.check_mode and clocks_apart(run)
                     else None)
            margs = observer_args(phase, margs, run, args.get('held') or [],
                                  args.get('run_id') or self._session.get('run_id'), clock=clock)
            res = self._target_python_check(self._execute_module(module_name=phase['module'], module_args=margs,
                                                                 task_vars=self._vars), self._vars)
            if clock and isinstance(res.get('observed'), dict):
                res['observed']['clock'] = clock
            series = res.get('bench_observed') if isinstance(res.get('bench_observed'), dict) else {}
            stored = [self._store_series(k, v) for k, v in sorted(series.items())]    # each one, not the first only
            if series and all(stored):
                res.pop('bench_observed')
            return self._phase_result(phase, res, args)
        if phase.get('at') == 'start' and not self._task.check_mode:
            res = self._start(phase['module'], margs, int(phase.get('async_s') or 3600))
        else:
            res = self._target_python_check(self._execute_module(module_name=phase['module'], module_args=margs,
                                                                 task_vars=self._vars), self._vars)
        return self._phase_result(phase, res, args)

    def _clock(self):
        """This connection's host's clock less the controller's (runpath.clock_reading), or None
        where it cannot be read."""
        before = time.time()
        try:
            res = self._low_level_execute_command(CLOCK_COMMAND, sudoable=False)
        except AnsibleError:
            return None
        after = time.time()
        return clock_reading(before, res.get('stdout') if res.get('rc') == 0 else None, after)

    def _amend(self, args):
        """The held records of a run observed on the hosts below it, with what those saw (the after
        phases' results in done), stored now."""
        run = args.get('run') or {}
        records = amend_records(args.get('held') or [], run, args.get('done') or [],
                                self._task.delegate_to or self._vars.get('inventory_hostname'))
        records = stamp(records, run, args.get('run_id') or self._session.get('run_id'))
        return dict(changed=False, bench_results=records, bench_results_stored=[self._store(r) for r in records])

    def _collect(self, phase, started, args):
        """The result of a phase started in the background (its records), waiting for it to end."""
        if not started.get('results_file'):
            return dict(changed=False, skipped=True, msg='%s: nothing was started' % phase['name'])
        try:
            res = self._follow(started['results_file'], None, int(phase.get('async_s') or 3600),
                               interpreter=started.get('benchlab_interpreter'))
        finally:
            self._forget(started['results_file'])
        return self._phase_result(phase, res, args)

    def _phase_result(self, phase, res, args):
        """A phase's result: its records with the run's context, stored at once; its failure the run's
        (after the run: noted in bench_failed_runs, never a failed task), or none (ignore_errors)."""
        run = args.get('run') or {}
        if phase.get('records'):
            records = stamp(records_of(res), run, args.get('run_id') or self._session.get('run_id'))
            res['bench_results_stored'] = [self._store(rec) for rec in records]
            res['bench_results'] = records
            res.pop('bench_result', None)
        if not res.get('failed'):
            return res
        msg = '%s on %s: %s' % (phase['name'], self._task.delegate_to or self._vars.get('inventory_hostname'), res.get('msg'))
        if phase.get('ignore_errors') or phase.get('at') == 'after':
            res = dict(res, failed=False, phase_failed=True, msg=msg)
            if phase.get('at') == 'after' and run and not phase.get('observes'):   # an observer's is not the run's
                res['bench_failed_runs'] = [failed_run(run, msg)]
        elif run:   # the run cannot take place: it failed, with this phase's reason
            res = dict(res, msg=msg, bench_failed_runs=[failed_run(run, msg)])
        return res
