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
  - Collects every C(bench_result) (and C(bench_results)) a task returns (with C(bench_result_hosts), the
    host of each of C(bench_results), from C(benchlab.bench.import_results)), validates it against the
    collection's record schema (and that every number is finite and every label name a name) and
    appends it to C(results.jsonl) in the run directory the moment it arrives.
  - At the end of the playbook writes, all from one analysis, C(results.json) (records, environment,
    plan and analysis; valid against the collection's C(results-v1.json) schema), C(results.csv) (one
    row per record and metric), C(summary.csv) (one row per benchmark, cell and metric with its
    comparison's verdict), C(report.md) and C(report.html) (one self-contained file with inline
    SVG charts). The reports show the header, the verdict counts per corrected family, the environment
    per cell with the keys that differ, per benchmark a side-by-side table (rows = metrics, columns =
    cells, baseline first, each entry C(mean ± CI95 (n)) with the delta to the baseline, its verdict -
    better, worse, equivalent or inconclusive with the repetitions it would need - the detectable
    effect and the min-max), the tool's own tables (dd's table of the field reports), latency
    percentiles and each cell's latency CDF over its baseline's, the trap flags, the variance gate and
    the failed or missing cells. Both open with the overview (per benchmark and cell the delta vs its
    baseline with its 95% CI and verdict, a forest plot), then the pivots (C(pivot)), the aggregates of
    runs started together in one step, and the environment keys that differ. With a pivot,
    C(pivot.csv) too; with latency histograms or iperf3 intervals, C(distributions.csv). It prints a
    summary that fits 100 columns.
  - The time series of each run's observation (C(bench_observed) in a benchmark module's result, with
    the devices of the layer stack, the CPUs, the tool's CPU, memory and links per interval) go to
    C(observed/<id>.json.gz) in the run directory, the id being the record's C(observed.series);
    report.html draws those of each cell's median repetition. The run path
    (C(benchlab.bench.run_benchmark)) stores them there itself as each run ends.
  - While the benchmarks run, C(benchlab.bench.run_benchmark) (the one run path of C(benchlab.bench.bench_run))
    prints one progress line per run started (its place in the plan, the total, elapsed time and an
    estimate of the time left; option O(progress)), and stores each record in C(results.jsonl) the
    moment its run ends, through the run this callback writes (its run directory, run id and
    preflight verdict are data for the play, from the lookup C(benchlab.bench.run_state) without a term).
  - The matrix (cells, baseline) is read from the C(bench_plan) fact set by C(benchlab.bench.bench);
    without it, records are grouped by tool and test and the first cell is the baseline.
  - A notification callback; enable it with C(callbacks_enabled = benchlab.bench.report). It works
    next to any stdout callback, including ansible-runner's.
  - Nothing is lost. At the start of the playbook, before any host is touched, the output directory
    and the history database's directory are checked (writable, with free space) and a run id that
    another controller already stored in the history is refused; the outcome is the C(preflight_error)
    of the lookup C(benchlab.bench.run_state) (empty when fine), which the plan play of
    C(playbooks/bench.yml) asserts. Every record is appended whole and fsynced the moment it arrives
    (by the run path's worker as its run ends, or here); a C(results.jsonl)
    whose last line was cut short is repaired (complete records kept, the dropped bytes named)
    before the next append; files are replaced by an fsynced rename; the history is stored before
    the reports are rendered, so a renderer that fails costs neither the history nor the other files;
    it fails the run (ansible-playbook exits 1 unless the play already failed).
  - One play writes a run. The callback holds a lock on the run directory (C(.benchlab-run.lock), an
    flock naming its pid, host and start) from the start of the play to its end; a play with a run
    id another running play holds is refused before any host is touched. A play that wrote nothing
    leaves no run directory.
  - Records of a resumed run (C(bench_plan.resume.records)) pass the checks of a new record (the
    record schema, finite numbers, label names as names); the lines the C(benchlab.bench.run_state)
    lookup set aside (C(resume.set_aside)) and any record failing them are listed in
    C(results.json) as invalid, never analysed or rendered.
  - A dry run (C(ansible-playbook --check)) is never taken for a run. The callback writes the plan
    instead (C(dry-run.json) and a C(report.md) headed DRY RUN, and a DRY RUN section on the
    terminal) with, per host and run, the command each benchmark would run, the paths and devices it
    would write, what it would create or remove and which guard would refuse it (the modules'
    C(bench_dry_run)), and every other task that reports a change in check mode (guests,
    containers, DRBD resources) as "would change". The status is C(dry run); nothing is stored in
    the history and C(results.jsonl) holds no record.
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
      - The history every finished run is stored in (by run id), for C(benchlab.bench.compare)
        (C(playbooks/compare.yml)) and C(benchlab.bench.trend) - a path ending in a file name (an embedded
        SQLite file), a PostgreSQL URL C(postgresql://USER@HOST:PORT/DBNAME) or libpq connection string
        C(host=HOST port=5432 dbname=DBNAME) for a history a team shares (psycopg 3; what they leave out
        from the C(PG*) environment variables; the password from C(PGPASSWORD), C(~/.pgpass) or a service
        file, never in the value, where it is refused without being repeated), or V(off). A value that
        is neither, or could be either, is refused without being repeated.
      - A SQLite file is benchlab's own, on a local file system. A network file system (NFS, SMB/CIFS,
        9p, sshfs and other FUSE) is refused, naming the PostgreSQL option; so are a symbolic link in its
        place and a SQLite database without the mark of benchlab. A new file is created 0600, missing parent
        directories 0700.
      - A run id belongs to the controller (host name and run directory) that stored it first; only a
        resume of that run on that controller may extend it; another controller reusing the run id is
        refused before any host is touched.
      - Default C($XDG_DATA_HOME/benchlab/history.sqlite), i.e. C(~/.local/share/benchlab/history.sqlite).
        V(off) turns the history off. A failure to store (a database lost mid-run, a run id another
        controller took meanwhile) is an error that names the command storing the run directory later
        (C(benchlab.bench.history)) and fails the run (ansible-playbook exits 1); the run's files are
        kept.
    type: str
    env:
      - name: BENCHLAB_HISTORY_DB
    ini:
      - section: callback_benchlab_report
        key: history_db
  pivot:
    description:
      - A label the report lays out as columns (the other labels varying between the cells as rows) for
        each benchmark's charted metric, in C(report.md), C(report.html), C(pivot.csv) and
        C(results.json) (C(analysis.pivots)). Overrides the matrix's C(pivot) (C(bench_plan.pivot)).
    type: str
    env:
      - name: BENCHLAB_REPORT_PIVOT
    ini:
      - section: callback_benchlab_report
        key: pivot
  baseline_by:
    description:
      - A label (or V(host)); each cell is compared with the baseline of its own group, the cells sharing
        that label's value (per-node baselines). A group's baseline is its cell whose other labels equal
        the global baseline's, else its first cell. Overrides the matrix's C(baseline_by).
    type: str
    env:
      - name: BENCHLAB_REPORT_BASELINE_BY
    ini:
      - section: callback_benchlab_report
        key: baseline_by
  run_label:
    description:
      - A label stored with the run in the history (for example V(nightly) or V(release-1.2)), so
        C(compare.yml -e baseline=<label>) finds the newest complete run carrying it. The matrix name
        is a label too. At most 256 characters (a longer one fails the preflight).
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
from ansible import context
from ansible.plugins.callback import CallbackBase

from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import printable
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.validation import matrix_problems, record_problems
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_terminal
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.callback_compat import (
    inventory_sources, playbook_file, result_data, result_host, result_task)
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.collection_info import collection_version
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.dryrun import DRY_RUN_STATUS, DryRun
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.dryrun import render_markdown as render_dry_run_md
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.dryrun import render_terminal as render_dry_run_terminal
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import (HistoryError, controller_fingerprint,
                                                                                     store_later, store_run)
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import preflight as history_preflight
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.locations import history_db, report_dir
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_json, write_reports
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import (OutputDirError, RunDir, RunLock,
                                                                                check_output_dir, new_run_id, read_jsonl,
                                                                                set_current_run)
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import local_observers, stop_left_observers
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import records_of as _records_of
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import units

HISTORY_MIN_FREE = 16 * 1024 * 1024
# A run label names a run in the history and heads comparisons: a name, not a text (label values: 256 too).
MAX_RUN_LABEL = 256


def _canonical(record):
    import json
    return json.dumps(record, sort_keys=True)


def _unamended(record):
    """A record's identity before the run path added what the hosts below it saw (observed)."""
    return _canonical(dict((k, v) for k, v in record.items() if k != 'observed'))


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'notification'
    CALLBACK_NAME = 'benchlab.bench.report'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.records = []
        self._held_records = {}    # records of a run observed on the hosts below it, until amended
        self.invalid = []
        self.failed = []
        self.observers = []     # observers of the hosts below the runs started on this controller (local_observers)
        self.sysinfo = {}
        self.plan = None
        self.rundir = None
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.inventory = None
        self.playbook = None
        self.clock = time.monotonic()
        self.current = {}  # host -> the run it announced last (a bench_run_item fact), for a dry run
        self.keys = {}
        self.reported = False
        self.dry_run = None  # a DryRun in check mode
        self.preflight_error = None
        self._jsonl_offset = None  # where this playbook's records start in results.jsonl (a resumed run's earlier ones before)
        self.unwritten = []  # report files the end of the play could not write (the run then fails)
        self.unstored = False  # the run could not be stored in the history (the run then fails too)
        self.lock = None  # the run directory's RunLock, held for the play's lifetime
        self._repaired = set()  # files of a run directory checked for a partial last line
        self._pending = []  # (name, obj) appends that failed, written again before the next one
        self._pid = os.getpid()
        self._chained = {}
        self._install_interrupt_handlers()

    def set_options(self, task_keys=None, var_options=None, direct=None):
        super(CallbackModule, self).set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        base = report_dir(self.get_option('output_dir'), runner_artifacts=True)
        run_id = self.get_option('run_id')
        try:
            if run_id is not None and run_id != run_id.strip():
                raise ValueError('run_id %r: leading or trailing white space (a newline?) is not part of a run id; '
                                 'remove it (BENCHLAB_RUN_ID)' % (run_id,))
            self.rundir = RunDir(base, run_id or new_run_id(self.started))
        except ValueError as e:
            # no run directory: the preflight fails the plan play with this message
            self.preflight_error = 'benchlab.bench.report: %s' % e
            self.rundir = RunDir(base, new_run_id(self.started))
        # The run, as data for the play (the lookup benchlab.bench.run_state) and for the run path's
        # workers, forked from this process (they store each record here as its run ends).
        set_current_run(run_id=self.rundir.run_id, base=self.rundir.base, path=self.rundir.path,
                        preflight_error=self.preflight_error or '', progress=bool(self.get_option('progress')),
                        clock=self.clock, total_runs=0, requested_run_id=run_id)

    # -- before any host ----------------------------------------------------------------------

    def _preflight(self):
        """The checks before any host is touched: a valid run id, an output directory and a
        history directory that take files and have free space, a run id no other controller owns
        and no other running play holds (the run directory's lock, held from here to the end).
        The first problem is the run's preflight_error (the lookup benchlab.bench.run_state gives it to
        the plan play, which asserts it is empty) and shown as an error."""
        label = self.get_option('run_label')
        if not self.preflight_error and label is not None and len(label) > MAX_RUN_LABEL:
            self.preflight_error = ('benchlab.bench.report: run_label is %d characters long: at most %d (it names the run '
                                    'in the history and heads every comparison; BENCHLAB_RUN_LABEL)'
                                    % (len(label), MAX_RUN_LABEL))
        if not self.preflight_error:
            try:
                check_output_dir(self.rundir.base, 'benchlab output directory')
                history = history_db(self.get_option('history_db'))
                if history and not self.dry_run:
                    history_preflight(history, self.rundir.run_id, self.rundir.path, HISTORY_MIN_FREE)
                self._lock_run()
            except (OutputDirError, HistoryError) as e:
                self.preflight_error = 'benchlab.bench.report: %s' % e
        set_current_run(preflight_error=self.preflight_error or '')
        if self.preflight_error:
            self._display.error('%s (nothing is run: fix it and start again)' % self.preflight_error)

    def _lock_run(self):
        """Hold the run directory's lock (plugin_utils/run/rundir.py RunLock) until the play ends: a
        second play with this run id is refused (RunInUse) before any host is touched."""
        if self.lock is None or self.lock.rundir is not self.rundir:
            self._unlock_run()
            self.lock = RunLock(self.rundir)
        self.lock.acquire()

    def _unlock_run(self):
        if self.lock is not None:
            self.lock.release()

    # -- collecting -------------------------------------------------------------------------

    def v2_playbook_on_start(self, playbook):
        self.playbook = playbook_file(playbook)
        if context.CLIARGS.get('check'):
            self.dry_run = DryRun()
        self._preflight()
        self._warm_validators()

    @staticmethod
    def _warm_validators():
        """Build the record and matrix schema validators and import the benchmark units in this
        process, before any task runs: this process validates every record anyway, and each task's
        worker (a fork of it) then finds them ready instead of importing jsonschema and building the
        validator again (~0.2 s of every play's fixed cost) and importing every unit again (~0.1 s
        in each of the plan, the install check, its role's condition and the schedule). A failure
        here is left to the real use."""
        try:
            validate_record({})
            matrix_problems({})
            units()
        except Exception:  # pylint: disable=broad-except
            pass

    def v2_playbook_on_play_start(self, play):
        if self.inventory is None:
            sources = inventory_sources(play)
            if sources is not None:
                self.inventory = ', '.join(str(s) for s in sources)

    def _append(self, name, obj):
        """Append a line to a file of the run directory; a file this process has not appended to
        yet is repaired first (a partial last line from a crash). A failed append (a full disk)
        is an error on the terminal and is tried again before the next one and at the end; the
        record is in results.json either way."""
        self._pending.append((name, obj))
        self._flush()

    def _flush(self):
        """Write the lines waiting to be appended, in order (a partial last line of the file, from a
        crash, is repaired first: RunDir.append_jsonl)."""
        while self._pending:
            name, obj = self._pending[0]
            try:
                message = self.rundir.append_jsonl(name, obj)
                if message:
                    self._display.warning('benchlab.bench.report: %s' % message)
            except OSError as e:
                self._display.error('benchlab.bench.report: cannot append to %s (%s): %d line(s) wait in memory and '
                                    'are written again with the next record and into results.json at the end' % (
                                        os.path.join(self.rundir.path, name), e, len(self._pending)))
                return
            self._pending.pop(0)

    def _dry_run_entry(self, result, res, host):
        """Check mode: a benchmark's plan (bench_dry_run, or the cmd it returns), or a task that
        would change something."""
        action = str(result_task(result).resolved_action or result_task(result).action)
        if isinstance(res.get('bench_dry_runs'), list):  # the run path: each run of a batch with its plan
            for entry in res['bench_dry_runs']:
                if isinstance(entry, dict):
                    self.current[host] = entry.get('run') if isinstance(entry.get('run'), dict) else {}
                    self.dry_run.add_run(host, result_task(result).get_name(), action, entry.get('plan'),
                                         self.current[host], self.dry_run.announce(host))
            return
        run, index = self.current.get(host), self.dry_run.runs_per_host.get(host)
        if isinstance(res.get('bench_dry_run'), dict):
            self.dry_run.add_run(host, result_task(result).get_name(), action, res['bench_dry_run'], run, index)
        elif action.startswith('benchlab.bench.') and isinstance(res.get('cmd'), list):
            self.dry_run.add_run(host, result_task(result).get_name(), action, dict(argv=res['cmd']), run, index)
        elif res.get('changed') and not isinstance(res.get('results'), list):  # a loop: its items count
            item = res.get('_ansible_item_label', res.get('item'))
            self.dry_run.add_change(host, result_task(result).get_name(), action, res.get('msg'),
                                    None if item is None else str(item), run, index)

    def _collect(self, result):
        res = result_data(result)
        host = result_host(result).get_name()
        facts = res.get('ansible_facts') or {}
        if isinstance(facts.get('bench_plan'), dict):
            self._set_plan(facts['bench_plan'])
        if isinstance(facts.get('bench_run_item'), dict):   # a playbook of the user's that announces its runs
            self.current[host] = facts['bench_run_item']
            if self.dry_run:
                self.dry_run.announce(host)
        if self.dry_run:
            self._dry_run_entry(result, res, host)
            return  # a dry run measures nothing: no record is kept, results.jsonl stays empty
        self._keep_sysinfo(res, host)
        self._keep_series(res)
        self._keep_records(result, res, host)
        self._note_observer(res)

    def _note_observer(self, res):
        """An observer of a host below a run, started on this controller by the run's start phase: if
        its run's target becomes unreachable before the phase that stops it, the end stops it."""
        item = res.get('item') if isinstance(res.get('item'), dict) else {}
        if item.get('observes') and item.get('at') == 'start':
            delegated = res.get('_ansible_delegated_vars') if isinstance(res.get('_ansible_delegated_vars'), dict) else {}
            self.observers.extend(local_observers({0: res}, {item.get('host'): delegated}))

    def _stop_left_observers(self):
        """Stop the observers whose stop never came (stop_left_observers), each said on the terminal."""
        if os.getpid() != self._pid or not self.observers:
            return
        observers, self.observers = self.observers, []
        try:
            stopped = stop_left_observers(observers)
        except Exception as e:  # pylint: disable=broad-except
            self._display.warning('benchlab.bench.report: the observers left running could not be stopped: %s' % e)
            return
        for path in stopped:
            self._display.warning('benchlab.bench.report: an observer of a host below a run was still running at the end '
                                  '(the run\'s target became unreachable before its stop): stopped, %s removed' % path)

    def _keep_records(self, result, res, host):
        """The records of a task result. Each carries its context (run id, repetition, step, cell key:
        the run path put them on); one the run path stored in results.jsonl the moment its run ended
        (bench_results_stored) is not appended again."""
        hosts = res.get('bench_result_hosts') if isinstance(res.get('bench_result_hosts'), list) else []
        stored = res.get('bench_results_stored') if isinstance(res.get('bench_results_stored'), list) else []
        for i, rec in enumerate(_records_of(res)):
            errors = record_problems(rec)   # the same checks as a resumed record's (plugin_utils/common/validation.py)
            # an import (benchlab.bench.import_results) names the host each record was measured on
            kept = dict(rec, host=hosts[i] if i < len(hosts) and isinstance(hosts[i], str) else host)
            labels = rec.get('labels') if isinstance(rec.get('labels'), dict) else {}
            key = self.keys.get((labels.get('benchmark'), labels.get('cell')))
            if key and 'cell_key' not in kept:   # a record made outside the run path (an import)
                kept['cell_key'] = key
            if errors:
                self.invalid.append(dict(host=host, task=result_task(result).get_name(), errors=errors, record=rec))
                self._append('invalid.jsonl', self.invalid[-1])
                self._display.warning('benchlab.bench.report: invalid record from %s: %s' % (
                    printable(host), printable('; '.join(errors))))
                continue
            if res.get('bench_results_held'):   # stored with what the hosts below saw (the amend task)
                self._held_records[_unamended(kept)] = kept
                continue
            self._held_records.pop(_unamended(kept), None)
            self.records.append(kept)
            if not (i < len(stored) and stored[i] is True):
                self._append('results.jsonl', kept)

    def _release_held(self):
        """Held records whose amended copy never came (the playbook stopped between the run and its
        observers' after phases): they were measured, so they count, as they are."""
        if not self._held_records:
            return
        self._adopt_stored()    # an amended copy the run path stored whose task never came back
        for rec in self.records:
            self._held_records.pop(_unamended(rec), None)
        for rec in self._held_records.values():
            self.records.append(rec)
            self._append('results.jsonl', rec)
        self._held_records = {}

    def _keep_series(self, res):
        """The observed time series a benchmark module returned (bench_observed {id: series}) go to
        observed/<id>.json.gz in the run directory; the records keep only their id (observed.series)."""
        series = res.get('bench_observed')
        if not isinstance(series, dict):
            return
        for series_id, data in series.items():
            try:
                self.rundir.write_series(series_id, data)
            except (OSError, ValueError, TypeError) as e:
                self._display.warning('benchlab.bench.report: observed series %s not stored: %s' % (
                    printable(str(series_id)[:40]), printable(str(e))))

    def _set_plan(self, plan):
        """The plan arrived (set_fact bench_plan). A resumed plan names the run it continues: write
        into that run's directory and start from the earlier records that still count."""
        resume = plan.get('resume') if isinstance(plan.get('resume'), dict) else None
        if resume and resume.get('run_id') and resume['run_id'] != self.rundir.run_id and not self.records:
            self._switch_run(resume['run_id'])
        if self._jsonl_offset is None:   # the first plan: what results.jsonl holds now is an earlier attempt's
            jsonl = os.path.join(self.rundir.path, 'results.jsonl')
            self._jsonl_offset = os.path.getsize(jsonl) if os.path.isfile(jsonl) and not self.records else 0
        if resume:  # records that arrived before the plan are new: never among the earlier ones
            self.records = self._resumed(resume) + self.records
            self._display.display('benchlab: resuming run %s: %d run(s) already measured, %d to go' % (
                self.rundir.run_id, resume.get('skipped', 0), len(plan.get('runs') or [])))
            plan = dict(plan, resume=dict((k, v) for k, v in resume.items() if k not in ('records', 'set_aside')))
            plan['resume']['set_aside_lines'] = [a.get('line') for a in self._set_aside_of(resume)]
        self.plan = plan
        self.keys = plan_keys(plan)
        set_current_run(run_id=self.rundir.run_id, path=self.rundir.path, total_runs=len(plan.get('runs') or []))
        if self.dry_run is None:  # a dry run's plan goes into dry-run.json, never over a run's plan.json
            self.rundir.write_json('plan.json', self.plan)

    def _switch_run(self, run_id):
        """Write into the resumed run's directory (bench_resume), holding its lock instead of this
        play's own. Another play holding it (the plan play's run_state check refuses that first)
        keeps this play in its own directory, saying so: two plays never write one run."""
        previous, lock = self.rundir, self.lock
        self.rundir, self.lock = RunDir(previous.base, run_id), None
        try:
            self._lock_run()
        except OutputDirError as e:
            self.rundir, self.lock = previous, lock
            self._display.error('benchlab.bench.report: %s; this play keeps writing run %s' % (e, previous.run_id))
            return
        if lock is not None:
            lock.release()

    @staticmethod
    def _set_aside_of(resume):
        return [a for a in resume.get('set_aside') or [] if isinstance(a, dict)]

    def _resumed(self, resume):
        """The earlier records of a resumed plan that pass the checks of a new record; the lines the
        run_state lookup set aside (resume.set_aside) and any record failing them here are listed as
        invalid (results.json, the report's invalid list), never analysed or rendered."""
        for item in self._set_aside_of(resume):
            errors = [str(e) for e in item.get('errors') or []] or ['not a valid record']
            self.invalid.append(dict(host=str((item.get('record') or {}).get('host') or '?') if isinstance(
                item.get('record'), dict) else '?', task='results.jsonl line %s (resumed)' % item.get('line'),
                errors=errors, record=item.get('record')))
        kept = []
        for rec in resume.get('records') or []:
            errors = record_problems(rec, stored=True)
            if errors:
                self.invalid.append(dict(host=str(rec.get('host') or '?') if isinstance(rec, dict) else '?',
                                         task='resumed record', errors=errors, record=rec))
                self._display.warning('benchlab.bench.report: resumed record set aside: %s' % printable('; '.join(errors)))
            else:
                kept.append(rec)
        return kept

    def _keep_sysinfo(self, res, host):
        """A cell's environment: benchlab.bench.sysinfo's, or a run's that described its cell
        (the option describe, also on a failed run; bench_sysinfo of the run path's batches)."""
        found = [dict(labels=res.get('labels') or {}, sysinfo=res['sysinfo'])] if isinstance(res.get('sysinfo'), dict) else []
        if isinstance(res.get('bench_sysinfo'), list):
            found.extend(x for x in res['bench_sysinfo'] if isinstance(x, dict) and isinstance(x.get('sysinfo'), dict))
        for x in found:
            labels = x['labels'] if isinstance(x.get('labels'), dict) else {}
            self.sysinfo['%s/%s' % (host, labels.get('cell') or host)] = dict(host=host, labels=labels, **x['sysinfo'])

    def v2_runner_on_ok(self, result):
        self._collect(result)
        self._after_phase_failures(result)

    def v2_runner_item_on_ok(self, result):
        self._collect(result)
        self._after_phase_failures(result)

    def _after_phase_failures(self, result):
        """Work after a run that failed (a concurrent pair's client, a server that would not stop) is
        the run's failure, although the task went on (benchlab.bench.run_benchmark's phases)."""
        res = result_data(result)
        if self.dry_run is None and res.get('phase_failed') and res.get('bench_failed_runs'):
            self._note_failed_runs(result, res, result_host(result).get_name())

    def _cell_of(self, result):
        """(cell, benchmark) of a failed benchmark task: from the labels it was called with, else
        from the run its host announced last (bench_run announces each run before it starts)."""
        args = (result_data(result).get('invocation') or {}).get('module_args') or {}
        labels = args.get('labels') if isinstance(args.get('labels'), dict) else {}
        if labels.get('cell') or labels.get('benchmark'):
            return labels.get('cell'), labels.get('benchmark')
        run = self.current.get(result_host(result).get_name()) or {}
        return run.get('cell'), run.get('benchmark')

    def _failure(self, result):
        if result_task(result).ignore_errors:
            return
        action = str(result_task(result).resolved_action or result_task(result).action)
        if self.dry_run is not None:  # a benchmark refused by a guard, or any task failing in check mode
            host = result_host(result).get_name()
            self.dry_run.add_refused(host, result_task(result).get_name(), action, str(result_data(result).get('msg', ''))[:500],
                                     self.current.get(host), self.dry_run.runs_per_host.get(host),
                                     kind='refused' if action.startswith('benchlab.bench.') else 'failed')
        if not action.startswith('benchlab.bench.'):
            return
        res, host = result_data(result), result_host(result).get_name()
        if self.dry_run is None:
            self._keep_sysinfo(res, host)
            self._keep_series(res)
            self._keep_records(result, res, host)   # the runs of a batch that did not fail
        self._note_failed_runs(result, res, host)

    def _note_failed_runs(self, result, res, host):
        """A failed benchlab task: one entry per failed run of the run path (bench_failed_runs), else
        one for the task (its cell and benchmark from the labels it was called with)."""
        runs = [f for f in res.get('bench_failed_runs') or [] if isinstance(f, dict)]
        if not runs:
            cell, bench = self._cell_of(result)
            runs = [dict(cell=cell, benchmark=bench, msg=res.get('msg', ''))]
        for f in runs:
            entry = dict(host=host, task=result_task(result).get_name(), cell=f.get('cell'), benchmark=f.get('benchmark'),
                         msg=str(f.get('msg', ''))[:500])
            if f.get('repetition') is not None:
                entry['repetition'] = f['repetition']
            self.failed.append(entry)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._failure(result)

    def v2_runner_item_on_failed(self, result):
        self._failure(result)

    def v2_runner_on_unreachable(self, result):
        cell, bench = self._cell_of(result)
        self.failed.append(dict(host=result_host(result).get_name(), task=result_task(result).get_name(), cell=cell, benchmark=bench,
                                msg='unreachable: %s' % result_data(result).get('msg', '')))

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
        # nothing measured and no plan (an import killed before its records arrived): nothing stored
        if os.getpid() == self._pid and not self.reported and (self.records or self.plan):
            self._display.display('benchlab: %s received, writing the report of what was measured' % (
                signal.Signals(signum).name), color=C.COLOR_WARN)
            self._write_safely('interrupted')
        if os.getpid() == self._pid:
            self._unlock_run()  # Ansible's handler (and the default action) end the process without atexit
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
        self._stop_left_observers()
        if os.getpid() == self._pid and not self.reported and (self.records or self.plan):
            self._write_safely('interrupted')
        if os.getpid() == self._pid:
            self._unlock_run()

    def _write_safely(self, status):
        try:
            self.write_report(status=status)
        except Exception as e:  # pylint: disable=broad-except
            self._display.warning('benchlab.bench.report: the report could not be written (%s); results.jsonl in %s '
                                  'holds every record' % (e, self.rundir.path))

    # -- reporting --------------------------------------------------------------------------

    def v2_playbook_on_stats(self, stats):
        self._stop_left_observers()
        if not (self.records or self.invalid or self.plan):
            self._unlock_run()
            return  # nothing ran (bench.yml stops at its first task when the preflight failed)
        if self.dry_run is not None:
            self.write_dry_run()
            self._unlock_run()
            return
        self.write_report(status='complete')
        self._unlock_run()
        self._fail_when_unwritten(stats)

    def _fail_when_unwritten(self, stats):
        """A report file that could not be written, or a run the history did not take, fails the run
        visibly: ansible-playbook exits 1 (after every file that could be written is written). A play that failed on
        its own already exits non-zero and is left to do so."""
        failed = any((getattr(stats, 'failures', None) or {}).values()) or any((getattr(stats, 'dark', None) or {}).values())
        missing = ['%s not written' % ', '.join(self.unwritten)] if self.unwritten else []
        if self.unstored:
            missing.append('run %s not stored in the history' % self.rundir.run_id)
        if not missing or failed:
            return
        self._display.error('benchlab.bench.report: the run fails: %s (see above); what was written is kept'
                            % '; '.join(missing))
        raise SystemExit(1)

    def _meta(self, status):
        finished = datetime.datetime.now(datetime.timezone.utc)
        return dict(run_id=self.rundir.run_id, started=self.started.strftime('%Y-%m-%dT%H:%M:%SZ'),
                    finished=finished.strftime('%Y-%m-%dT%H:%M:%SZ'), user=getpass.getuser(),
                    inventory=self.inventory, playbook=self.playbook,
                    matrix=(self.plan or {}).get('name'), collection_version=collection_version(),
                    status=status, invalid=self.invalid, failed=self.failed)

    def write_dry_run(self):
        """Check mode: dry-run.json and report.md (headed DRY RUN) and the terminal section; no
        record, no results.json, nothing in the history."""
        self.reported = True
        doc = self.dry_run.document(self._meta(DRY_RUN_STATUS))
        doc['plan'] = self.plan
        self.rundir.write_json('dry-run.json', doc)
        # a dry run of a run that exists (a resume) leaves that run's report alone
        measured = any(os.path.exists(os.path.join(self.rundir.path, n)) for n in ('results.jsonl', 'results.json'))
        report = self.rundir.write_text('dry-run.md' if measured else 'report.md', render_dry_run_md(doc))
        self._display.display('\n' + render_dry_run_terminal(doc), color=C.COLOR_WARN)
        self._display.display('benchlab dry run: %s (nothing stored in the history)' % report, color=C.COLOR_OK)

    def _store_history(self, doc):
        """Store the run in the history; failing to store, for whatever reason, is an error on the
        terminal with the command that stores the run directory later, fails the play (exit 1, once
        every file is written: _fail_when_unwritten) and never costs the run's files."""
        history = None
        try:
            history = history_db(self.get_option('history_db'))
            if history:
                fingerprint, controller = controller_fingerprint(self.rundir.path)
                resume = (self.plan or {}).get('resume') or {}
                store_run(history, doc, label=self.get_option('run_label'), fingerprint=fingerprint,
                          controller=controller, extends=resume.get('run_id') == self.rundir.run_id)
                self._display.display('benchlab history: run %s stored in %s' % (self.rundir.run_id, history))
            return
        except HistoryError as e:
            why = str(e)
        except Exception as e:  # pylint: disable=broad-except
            why = '%s: %s' % (type(e).__name__, e)
        self.unstored = True
        self._display.error('benchlab.bench.report: run %s not stored in the history: %s (the run directory %s '
                            'holds every record)' % (self.rundir.run_id, why, self.rundir.path))
        if history:
            self._display.display('benchlab history: to store run %s later: %s' % (
                self.rundir.run_id, store_later(self.rundir.path, history, self.get_option('run_label'))),
                color=C.COLOR_WARN)

    def _adopt_stored(self):
        """Records the run path stored in results.jsonl whose task never came back (the playbook was
        interrupted while a batch ran): they were measured, so they count."""
        if not self.plan or self._jsonl_offset is None:
            return
        try:
            found, _problems = read_jsonl(os.path.join(self.rundir.path, 'results.jsonl'), offset=self._jsonl_offset)
        except OSError:
            return
        known = set(_canonical(r) for r in self.records)
        for rec in found:
            if _canonical(rec) not in known and not record_problems(rec, stored=True):
                self.records.append(rec)
                known.add(_canonical(rec))

    def _analysis(self, errors):
        """(analysis, report files not to render). An analysis that fails is an error like a
        renderer's: results.json (with an empty analysis naming the error), results.csv and the
        history keep every record; report.md, report.html and pivot.csv, which would show nothing,
        are not written."""
        try:
            return analyze(self.records, self.plan, self.sysinfo, pivot=self.get_option('pivot'),
                           baseline_by=self.get_option('baseline_by')), ('results.json',)
        except Exception as e:  # pylint: disable=broad-except
            failed = ValueError('the analysis failed (%s: %s)' % (type(e).__name__, e))
            errors.extend((name, failed) for name in ('report.md', 'report.html'))
            return (dict(benchmarks=[], error=str(failed)), ('results.json', 'report.md', 'report.html', 'pivot.csv'))

    def write_report(self, status):
        """results.json first (with every record), then the history, then the other files: a
        renderer that fails costs neither the history nor the other files."""
        if self.dry_run is not None:
            return self.write_dry_run()
        self.reported = True
        self._release_held()
        self._flush()  # appends that failed earlier: one more try
        if status == 'interrupted' and self.plan and self._jsonl_offset is not None:
            try:   # no worker appends a record after the report has read them (held until this process ends)
                self._held = self.rundir.hold('results.jsonl')
            except OSError:
                pass
        self._adopt_stored()
        errors, paths = [], {}
        analysis, skip = self._analysis(errors)
        meta = self._meta(status)
        doc = dict(meta, records=self.records, environment=self.sysinfo, plan=self.plan, analysis=analysis)
        try:
            paths['results.json'] = self.rundir.write_text('results.json', results_json(doc))
        except Exception as e:  # pylint: disable=broad-except
            errors.append(('results.json', e))
        self._store_history(doc)
        paths.update(write_reports(self.rundir, doc, errors=errors, skip=skip))
        self.unwritten = [name for name, _e in errors]
        for name, e in errors:
            self._display.error('benchlab.bench.report: %s not written: %s: %s (results.jsonl and the history hold '
                                'the records)' % (os.path.join(self.rundir.path, name), type(e).__name__, e))
        report = paths.get('report.md') or paths.get('results.json') or self.rundir.path
        self.rundir.link_latest()
        if self.get_option('summary') and analysis['benchmarks']:
            summary = render_terminal(analysis, meta=meta, plan=self.plan)
            self._display.display('\nbenchlab summary (%d records, run %s)\n%s' % (
                len(self.records), self.rundir.run_id, summary), color=C.COLOR_OK)
        if self.invalid:
            self._display.display('benchlab: %d invalid record(s), listed in the report' % len(self.invalid),
                                  color=C.COLOR_WARN)
        self._display.display('benchlab report: %s' % report, color=C.COLOR_OK)
        if 'report.html' in paths:
            self._display.display('benchlab report (HTML): %s' % paths['report.html'], color=C.COLOR_OK)
        return paths
