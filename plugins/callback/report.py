# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: report
type: notification
short_description: Collect benchlab result records and write the comparison report
version_added: 0.1.0
description:
  - Collects every C(bench_result) (and C(bench_results)) a task returns, validates it against the
    collection's record schema and appends it to C(results.jsonl) in the run directory the moment it
    arrives.
  - At the end of the playbook writes, all from one analysis, C(results.json) (records, environment,
    plan and analysis; valid against the collection's C(results-v1.json) schema), C(results.csv) (one
    row per record and metric), C(report.md) and C(report.html) (one self-contained file with inline
    SVG charts). The reports show the header, the environment per cell with the keys that differ, per
    benchmark a side-by-side table (rows = metrics, columns = cells, baseline first, each entry
    C(mean ± CI95 (n)) with the delta to the baseline and a significance mark), the dd table of the
    field reports, the trap flags, the variance gate and the failed or missing cells. It prints a
    summary that fits 100 columns.
  - While the benchmarks run, prints one progress line per run started (index, total, elapsed time
    and an estimate of the time left), from the C(bench_run_item) fact C(benchlab.bench.bench_run) sets as each run starts.
  - The matrix (cells, baseline) is read from the C(bench_plan) fact set by C(benchlab.bench.bench);
    without it, records are grouped by tool and test and the first cell is the baseline.
  - A notification callback; enable it with C(callbacks_enabled = benchlab.bench.report). It works
    next to any stdout callback, including ansible-runner's.
requirements:
  - jsonschema (on the controller)
options:
  output_dir:
    description:
      - Directory that receives one sub-directory per run. A relative path is taken from the current
        directory (your project). Under ansible-runner, when not set, the run directory goes into
        the runner's artifact directory (C(<artifacts>/<ident>/benchlab/<run id>)).
    type: path
    default: benchlab-runs
    env:
      - name: BENCHLAB_REPORT_DIR
    ini:
      - section: callback_benchlab_report
        key: output_dir
  run_id:
    description: Name of the run directory; a UTC timestamp with a random suffix by default.
    type: str
    env:
      - name: BENCHLAB_RUN_ID
    ini:
      - section: callback_benchlab_report
        key: run_id
  progress:
    description: Print a progress line for each benchmark run started.
    type: bool
    default: true
    env:
      - name: BENCHLAB_REPORT_PROGRESS
    ini:
      - section: callback_benchlab_report
        key: progress
  summary:
    description: Print the summary table at the end of the play.
    type: bool
    default: true
    env:
      - name: BENCHLAB_REPORT_SUMMARY
    ini:
      - section: callback_benchlab_report
        key: summary
  history_db:
    description:
      - The SQLite history every finished run is stored in (by run id; storing again replaces it), for
        C(benchlab.bench.compare) (C(playbooks/compare.yml)). A team share works (rollback journal and
        a busy timeout, no WAL); a new file is created 0600, missing parent directories 0700.
      - Default C($XDG_DATA_HOME/benchlab/history.sqlite), i.e. C(~/.local/share/benchlab/history.sqlite).
        V(off) turns the history off. A failure to store is a warning; the run's files are kept.
    type: str
    env:
      - name: BENCHLAB_HISTORY_DB
    ini:
      - section: callback_benchlab_report
        key: history_db
  run_label:
    description:
      - A label stored with the run in the history (for example V(nightly) or V(release-1.2)), so
        C(compare.yml -e baseline=<label>) finds the newest complete run carrying it. The matrix name
        is a label too.
    type: str
    env:
      - name: BENCHLAB_RUN_LABEL
    ini:
      - section: callback_benchlab_report
        key: run_label
'''

import atexit
import datetime
import getpass
import os
import signal
import time

from ansible import constants as C
from ansible.plugins.callback import CallbackBase

from ansible_collections.benchlab.bench.plugins.plugin_utils.render import printable
from ansible_collections.benchlab.bench.plugins.module_utils.record import validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.render import progress_line, render_terminal
from ansible_collections.benchlab.bench.plugins.plugin_utils.history import resolve_db_path, store_run
from ansible_collections.benchlab.bench.plugins.plugin_utils.reports import write_reports
from ansible_collections.benchlab.bench.plugins.plugin_utils.resume import plan_keys
from ansible_collections.benchlab.bench.plugins.plugin_utils.rundir import RunDir, new_run_id

COLLECTION_VERSION = '0.1.0'


def _records_of(result):
    if isinstance(result.get('bench_results'), list):
        return [r for r in result['bench_results'] if isinstance(r, dict)]
    if isinstance(result.get('bench_result'), dict):
        return [result['bench_result']]
    return []


def _repetition(run, labels):
    """The repetition of the plan's run a record belongs to (the run its host announced last, when the
    record's cell and benchmark are that run's), or None."""
    if not isinstance(run, dict) or (labels.get('cell'), labels.get('benchmark')) != (run.get('cell'), run.get('benchmark')):
        return None
    rep = run.get('repetition')
    if isinstance(rep, str) and rep.isdigit():
        rep = int(rep)
    return rep if isinstance(rep, int) and not isinstance(rep, bool) and rep >= 0 else None


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'notification'
    CALLBACK_NAME = 'benchlab.bench.report'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.records = []
        self.invalid = []
        self.failed = []
        self.sysinfo = {}
        self.plan = None
        self.rundir = None
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.inventory = None
        self.playbook = None
        self.clock = time.monotonic()
        self.run_starts = []
        self.current = {}  # host -> the run it started last (bench_run's bench_run_item)
        self.keys = {}
        self.reported = False
        self._pid = os.getpid()
        self._chained = {}
        self._install_interrupt_handlers()

    def set_options(self, task_keys=None, var_options=None, direct=None):
        super(CallbackModule, self).set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        base = self.get_option('output_dir')
        artifacts = os.environ.get('AWX_ISOLATED_DATA_DIR')
        explicit = os.environ.get('BENCHLAB_REPORT_DIR') or base not in ('benchlab-runs', os.path.abspath('benchlab-runs'))
        if artifacts and not explicit:
            base = os.path.join(artifacts, 'benchlab')
        self.rundir = RunDir(os.path.abspath(base), self.get_option('run_id') or new_run_id(self.started))
        # Export the run id (unless already set) so that the bench_run role names it in the owner
        # marker of every work directory; its failed-run cleanup removes only this run's work.
        os.environ.setdefault('BENCHLAB_RUN_ID', self.rundir.run_id)

    # -- collecting -------------------------------------------------------------------------

    def v2_playbook_on_start(self, playbook):
        self.playbook = getattr(playbook, '_file_name', None)

    def v2_playbook_on_play_start(self, play):
        if self.inventory is None:
            try:
                sources = play.get_variable_manager()._inventory._sources
                self.inventory = ', '.join(str(s) for s in sources)
            except AttributeError:
                pass

    def _collect(self, result):
        res = result._result
        host = result._host.get_name()
        facts = res.get('ansible_facts') or {}
        if isinstance(facts.get('bench_plan'), dict):
            self._set_plan(facts['bench_plan'])
        if isinstance(facts.get('bench_run_item'), dict):
            self.current[host] = facts['bench_run_item']
            self._progress(facts['bench_run_item'])
        if isinstance(res.get('sysinfo'), dict):
            cell = (res.get('labels') or {}).get('cell') or host
            self.sysinfo['%s/%s' % (host, cell)] = dict(host=host, labels=res.get('labels') or {}, **res['sysinfo'])
        for rec in _records_of(res):
            errors = validate_record(rec)
            stored = dict(rec, host=host)
            labels = rec.get('labels') if isinstance(rec.get('labels'), dict) else {}
            rep = _repetition(self.current.get(host), labels)
            if rep is not None and 'repetition' not in rec:
                stored['repetition'] = rep      # n counts repetitions (plugin_utils/measurements.py)
            key = self.keys.get((labels.get('benchmark'), labels.get('cell')))
            if key:
                stored['cell_key'] = key
            if errors:
                self.invalid.append(dict(host=host, task=result._task.get_name(), errors=errors, record=rec))
                self.rundir.append_jsonl('invalid.jsonl', self.invalid[-1])
                self._display.warning('benchlab.bench.report: invalid record from %s: %s' % (
                    printable(host), printable('; '.join(errors))))
                continue
            self.records.append(stored)
            self.rundir.append_jsonl('results.jsonl', stored)

    def _set_plan(self, plan):
        """The plan arrived (set_fact bench_plan). A resumed plan names the run it continues: write
        into that run's directory and start from the earlier records that still count."""
        resume = plan.get('resume') if isinstance(plan.get('resume'), dict) else None
        if resume and resume.get('run_id') and resume['run_id'] != self.rundir.run_id and not self.records:
            self.rundir = RunDir(self.rundir.base, resume['run_id'])
        if resume:  # records that arrived before the plan are new: never among the earlier ones
            self.records = [r for r in resume.get('records') or [] if isinstance(r, dict)] + self.records
            self._display.display('benchlab: resuming run %s: %d run(s) already measured, %d to go' % (
                self.rundir.run_id, resume.get('skipped', 0), len(plan.get('runs') or [])))
            plan = dict(plan, resume=dict((k, v) for k, v in resume.items() if k != 'records'))
        self.plan = plan
        self.keys = plan_keys(plan)
        self.rundir.write_json('plan.json', self.plan)

    def _progress(self, run):
        """One line per run started: `[cell 3/24] fio randread on guest-2 (loop, bridged) — elapsed
        2m10s, ETA 6m`. The ETA is the mean time per run so far times the runs left."""
        now = time.monotonic()
        self.run_starts.append(now)
        if not self.get_option('progress'):
            return
        index = len(self.run_starts)
        total = max(len((self.plan or {}).get('runs') or []), index)
        eta = None
        if index > 1:
            eta = (now - self.run_starts[0]) / (index - 1) * (total - index + 1)
        labels = run.get('labels') if isinstance(run.get('labels'), dict) else {}
        labels = dict((k, v) for k, v in labels.items() if k not in ('cell', 'benchmark'))
        params = run.get('params') if isinstance(run.get('params'), dict) else {}
        test = params.get('test') or params.get('rw') or params.get('mode')
        tool, bench = str(run.get('tool') or ''), str(run.get('benchmark') or '')
        what = bench if bench.startswith(tool) else ('%s %s' % (tool, bench)).strip()
        if test and str(test) not in what:
            what += ' ' + str(test)
        what += ' #%s%s on %s' % (run.get('repetition'), ' (gate)' if str(run.get('gate')) == 'True' else '',
                                  run.get('cell'))
        if labels:
            what += ' (%s)' % ', '.join(str(v) for v in labels.values())
        self._display.display(progress_line(index, total, what, now - self.clock, eta))

    def v2_runner_on_ok(self, result):
        self._collect(result)

    def v2_runner_item_on_ok(self, result):
        self._collect(result)

    def _cell_of(self, result):
        """(cell, benchmark) of a failed benchmark task: from the labels it was called with, else
        from the run its host announced last (bench_run announces each run before it starts)."""
        args = (result._result.get('invocation') or {}).get('module_args') or {}
        labels = args.get('labels') if isinstance(args.get('labels'), dict) else {}
        if labels.get('cell') or labels.get('benchmark'):
            return labels.get('cell'), labels.get('benchmark')
        run = self.current.get(result._host.get_name()) or {}
        return run.get('cell'), run.get('benchmark')

    def _failure(self, result):
        if result._task.ignore_errors:
            return
        if not str(result._task.resolved_action or result._task.action).startswith('benchlab.bench.'):
            return
        cell, bench = self._cell_of(result)
        self.failed.append(dict(host=result._host.get_name(), task=result._task.get_name(), cell=cell, benchmark=bench,
                                msg=str(result._result.get('msg', ''))[:500]))

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._failure(result)

    def v2_runner_item_on_failed(self, result):
        self._failure(result)

    def v2_runner_on_unreachable(self, result):
        cell, bench = self._cell_of(result)
        self.failed.append(dict(host=result._host.get_name(), task=result._task.get_name(), cell=cell, benchmark=bench,
                                msg='unreachable: %s' % result._result.get('msg', '')))

    # -- interruption -----------------------------------------------------------------------

    def _install_interrupt_handlers(self):
        """SIGINT/SIGTERM to ansible-playbook: write the report (marked interrupted) from what
        results.jsonl already holds, then let Ansible's own handler go on (it stops the workers).
        atexit covers any other way out of the main process before the stats."""
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                self._chained[signum] = signal.getsignal(signum)
                signal.signal(signum, self._on_signal)
            except (ValueError, OSError):  # not the main thread: leave the signals alone
                self._chained.pop(signum, None)
        atexit.register(self._at_exit)

    def _on_signal(self, signum, frame):
        if os.getpid() == self._pid and not self.reported:
            self._display.display('benchlab: %s received, writing the report of what was measured' % (
                signal.Signals(signum).name), color=C.COLOR_WARN)
            self._write_safely('interrupted')
        previous = self._chained.get(signum)
        if callable(previous):
            return previous(signum, frame)
        if previous == signal.SIG_IGN:
            return None
        if signum == signal.SIGINT:
            raise KeyboardInterrupt()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return None

    def _at_exit(self):
        if os.getpid() == self._pid and not self.reported and (self.records or self.plan):
            self._write_safely('interrupted')

    def _write_safely(self, status):
        try:
            self.write_report(status=status)
        except Exception as e:  # pylint: disable=broad-except
            self._display.warning('benchlab.bench.report: the report could not be written (%s); results.jsonl in %s '
                                  'holds every record' % (e, self.rundir.path))

    # -- reporting --------------------------------------------------------------------------

    def v2_playbook_on_stats(self, stats):
        if not (self.records or self.invalid or self.plan):
            return
        self.write_report(status='complete')

    def write_report(self, status):
        self.reported = True
        finished = datetime.datetime.now(datetime.timezone.utc)
        analysis = analyze(self.records, self.plan, self.sysinfo)
        meta = dict(run_id=self.rundir.run_id, started=self.started.strftime('%Y-%m-%dT%H:%M:%SZ'),
                    finished=finished.strftime('%Y-%m-%dT%H:%M:%SZ'), user=getpass.getuser(),
                    inventory=self.inventory, playbook=self.playbook,
                    matrix=(self.plan or {}).get('name'), collection_version=COLLECTION_VERSION,
                    status=status, invalid=self.invalid, failed=self.failed)
        doc = dict(meta, records=self.records, environment=self.sysinfo, plan=self.plan, analysis=analysis)
        paths = write_reports(self.rundir, doc)
        try:  # the history is a copy: failing to store warns and never costs the run's files
            history = resolve_db_path(self.get_option('history_db'))
            if history:
                store_run(history, doc, label=self.get_option('run_label'))
                self._display.display('benchlab history: run %s stored in %s' % (self.rundir.run_id, history))
        except Exception as e:  # pylint: disable=broad-except
            self._display.warning('benchlab.bench.report: run %s not stored in the history: %s' % (self.rundir.run_id, e))
        report = paths['report.md']
        self.rundir.link_latest()
        if self.get_option('summary') and analysis['benchmarks']:
            summary = render_terminal(analysis, meta=meta, plan=self.plan)
            self._display.display('\nbenchlab summary (%d records, run %s)\n%s' % (
                len(self.records), self.rundir.run_id, summary), color=C.COLOR_OK)
        if self.invalid:
            self._display.display('benchlab: %d invalid record(s), listed in the report' % len(self.invalid),
                                  color=C.COLOR_WARN)
        self._display.display('benchlab report: %s' % report, color=C.COLOR_OK)
        self._display.display('benchlab report (HTML): %s' % paths['report.html'], color=C.COLOR_OK)
