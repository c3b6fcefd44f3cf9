# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchlab.bench.compare_runs: two stored runs -> the comparison report and the regression gate.

Runs on the controller only (the history and the report files are the controller's); the
documentation is in plugins/modules/compare_runs.py."""

from __future__ import annotations

import json
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import HistoryError, load_run
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.locations import history_db, report_dir
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.regress import CompareError, compare_runs, describe, describe_unjudged
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import write_reports
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir

ARGUMENT_SPEC = dict(
    baseline=dict(type='str', required=True),
    candidate=dict(type='str', default='latest'),
    history_db=dict(type='str'),
    output_dir=dict(type='path'),
    regression_threshold=dict(type='float', default=5.0),
    fail_on_regression=dict(type='bool', default=False),
    metrics=dict(type='list', elements='str'),
    correction=dict(type='str', default='holm', choices=['holm', 'bh', 'none']),
    equivalence_margin_pct=dict(type='float', default=5.0),
    ignore_params=dict(type='bool', default=False),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        for key in ('regression_threshold', 'equivalence_margin_pct'):
            if args[key] < 0:
                raise AnsibleActionFail('%s must be >= 0 (percent), got %s' % (key, args[key]))
        try:
            db = history_db(args['history_db'], from_callback=True)
        except HistoryError as e:
            raise AnsibleActionFail('compare_runs: %s' % e)
        if db is None:
            raise AnsibleActionFail('the history is turned off (history_db=off): set history_db to the database '
                                    'the runs were stored in')
        try:
            docs = dict((side, load_run(db, args[side])) for side in ('baseline', 'candidate'))
            labels = dict((side, args[side]) for side in docs if args[side] != docs[side]['run_id'])
            doc = compare_runs(docs['baseline'], docs['candidate'], args['regression_threshold'],
                               metrics=args['metrics'], labels=labels, correction=args['correction'],
                               margin=args['equivalence_margin_pct'], ignore_params=args['ignore_params'])
        except (HistoryError, CompareError) as e:
            raise AnsibleActionFail('compare_runs: %s' % e)
        rundir = RunDir(report_dir(args['output_dir'], from_callback=True), doc['run_id'])
        comparison = doc['comparison']
        files = {}
        changed = False
        if not self._task.check_mode:
            before = _read(os.path.join(rundir.path, 'results.json'))
            files = write_reports(rundir, doc)
            changed = before != _read(os.path.join(rundir.path, 'results.json'))
        regressions, unjudged = comparison['regressions'], comparison['cannot_judge']
        verdict = ('%d regression(s)' % len(regressions)) if regressions else 'no regression'
        if unjudged:
            verdict += ', %d not judged' % len(unjudged)
        lines = ['benchlab compare: candidate %s (%s) vs baseline %s (%s), threshold %.4g%%: %s' % (
            docs['candidate']['run_id'], docs['candidate'].get('status') or '?', docs['baseline']['run_id'],
            docs['baseline'].get('status') or '?', args['regression_threshold'], verdict)]
        lines += ['  REGRESSION %s' % describe(r) for r in regressions]
        lines += ['  CANNOT JUDGE %s' % describe_unjudged(u) for u in unjudged]
        lines += ['  DIFFERENT %s %s: %s (baseline vs candidate)%s' % (
            d['benchmark'], d['cell'], d['text'], ': compared as the same experiment (ignore_params)'
            if args['ignore_params'] and d['params'] else '') for d in comparison['params_differ']]
        where = files.get('report.md') or rundir.path
        lines.append('  report: %s%s' % (where, ' (check mode: not written)' if self._task.check_mode else ''))
        result.update(changed=changed, report_dir=rundir.path, files=files, baseline_run=docs['baseline']['run_id'],
                      candidate_run=docs['candidate']['run_id'], regressions=regressions,
                      too_little_data=comparison['too_little_data'], missing=comparison['missing'],
                      new=comparison['new'], cannot_judge=unjudged, params_differ=comparison['params_differ'],
                      history_db=db, msg='\n'.join(lines))
        if args['fail_on_regression'] and (regressions or unjudged):
            # a gate that cannot judge does not pass: too little data, a cell or metric on one side only
            result['failed'] = True
            why = []
            if regressions:
                why.append('%d metric(s) regressed beyond %.4g%%' % (len(regressions), args['regression_threshold']))
            if unjudged:
                why.append('%d could not be judged' % len(unjudged))
            result['msg'] = 'benchlab regression gate: %s:\n%s' % (' and '.join(why), result['msg'])
        return result


def _read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
