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
  - At the end of the playbook writes C(results.json) (records, environment and analysis) and
    C(report.md) (per benchmark a table with one row per cell and one column per metric, giving the
    mean, min–max over the repetitions and the difference to the baseline cell) and prints a summary.
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
  summary:
    description: Print the summary table at the end of the play.
    type: bool
    default: true
    env:
      - name: BENCHLAB_REPORT_SUMMARY
    ini:
      - section: callback_benchlab_report
        key: summary
'''

import datetime
import getpass
import os

from ansible import constants as C
from ansible.plugins.callback import CallbackBase

from ansible_collections.benchlab.bench.plugins.module_utils.record import validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.render import render_terminal
from ansible_collections.benchlab.bench.plugins.plugin_utils.reports import write_reports
from ansible_collections.benchlab.bench.plugins.plugin_utils.rundir import RunDir, new_run_id

COLLECTION_VERSION = '0.1.0'


def _records_of(result):
    if isinstance(result.get('bench_results'), list):
        return [r for r in result['bench_results'] if isinstance(r, dict)]
    if isinstance(result.get('bench_result'), dict):
        return [result['bench_result']]
    return []


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

    def set_options(self, task_keys=None, var_options=None, direct=None):
        super(CallbackModule, self).set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        base = self.get_option('output_dir')
        artifacts = os.environ.get('AWX_ISOLATED_DATA_DIR')
        explicit = os.environ.get('BENCHLAB_REPORT_DIR') or base not in ('benchlab-runs', os.path.abspath('benchlab-runs'))
        if artifacts and not explicit:
            base = os.path.join(artifacts, 'benchlab')
        self.rundir = RunDir(os.path.abspath(base), self.get_option('run_id') or new_run_id(self.started))

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
            self.plan = facts['bench_plan']
            self.rundir.write_json('plan.json', self.plan)
        if isinstance(res.get('sysinfo'), dict):
            cell = (res.get('labels') or {}).get('cell') or host
            self.sysinfo['%s/%s' % (host, cell)] = dict(host=host, labels=res.get('labels') or {}, **res['sysinfo'])
        for rec in _records_of(res):
            errors = validate_record(rec)
            stored = dict(rec, host=host)
            if errors:
                self.invalid.append(dict(host=host, task=result._task.get_name(), errors=errors, record=rec))
                self.rundir.append_jsonl('invalid.jsonl', self.invalid[-1])
                self._display.warning('benchlab.bench.report: invalid record from %s: %s' % (host, '; '.join(errors)))
                continue
            self.records.append(stored)
            self.rundir.append_jsonl('results.jsonl', stored)

    def v2_runner_on_ok(self, result):
        self._collect(result)

    def v2_runner_item_on_ok(self, result):
        self._collect(result)

    def _failure(self, result):
        if result._task.ignore_errors:
            return
        if not str(result._task.resolved_action or result._task.action).startswith('benchlab.bench.'):
            return
        self.failed.append(dict(host=result._host.get_name(), task=result._task.get_name(),
                                msg=str(result._result.get('msg', ''))[:500]))

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._failure(result)

    def v2_runner_item_on_failed(self, result):
        self._failure(result)

    def v2_runner_on_unreachable(self, result):
        self.failed.append(dict(host=result._host.get_name(), task=result._task.get_name(),
                                msg='unreachable: %s' % result._result.get('msg', '')))

    # -- reporting --------------------------------------------------------------------------

    def v2_playbook_on_stats(self, stats):
        if not (self.records or self.invalid or self.plan):
            return
        self.write_report(status='complete')

    def write_report(self, status):
        finished = datetime.datetime.now(datetime.timezone.utc)
        analysis = analyze(self.records, self.plan, self.sysinfo)
        meta = dict(run_id=self.rundir.run_id, started=self.started.strftime('%Y-%m-%dT%H:%M:%SZ'),
                    finished=finished.strftime('%Y-%m-%dT%H:%M:%SZ'), user=getpass.getuser(),
                    inventory=self.inventory, playbook=self.playbook,
                    matrix=(self.plan or {}).get('name'), collection_version=COLLECTION_VERSION,
                    status=status, invalid=self.invalid, failed=self.failed)
        doc = dict(meta, records=self.records, environment=self.sysinfo, plan=self.plan, analysis=analysis)
        report = write_reports(self.rundir, doc)['report.md']
        self.rundir.link_latest()
        if self.get_option('summary') and analysis['benchmarks']:
            self._display.display('\nbenchlab summary (%d records, run %s)\n%s' % (
                len(self.records), self.rundir.run_id, render_terminal(analysis)), color=C.COLOR_OK)
        if self.invalid:
            self._display.display('benchlab: %d invalid record(s), listed in the report' % len(self.invalid),
                                  color=C.COLOR_WARN)
        self._display.display('benchlab report: %s' % report, color=C.COLOR_OK)
