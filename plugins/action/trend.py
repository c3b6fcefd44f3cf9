# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchlab.bench.trend: a metric across the stored runs and its change points. Runs on the
controller only; the documentation is in plugins/modules/trend.py, the logic in
plugins/plugin_utils/analysis/trend.py and render_trend.py."""

from __future__ import annotations

import datetime
import getpass

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.benchlab.bench.plugins.plugin_utils.common.collection_info import collection_version
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import HistoryError, open_store, shown
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.locations import history_db, report_dir
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_trend import trend_terminal, write_trend
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.trend import TrendError, trend_document

ARGUMENT_SPEC = dict(
    matrix=dict(type='str'),
    label=dict(type='str'),
    cell=dict(type='str', required=True),
    benchmark=dict(type='str', required=True),
    metric=dict(type='str', required=True),
    history_db=dict(type='str'),
    output_dir=dict(type='path'),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC,
                                                        required_one_of=[['matrix', 'label']])
        now = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
        meta = dict(started=now, finished=now, user=getpass.getuser(), inventory=None, playbook='trend.yml',
                    collection_version=collection_version())
        try:
            db = history_db(args['history_db'], from_callback=True)
            if db is None:
                raise HistoryError('the history is turned off (history_db=off): name the history the runs are in')
            with open_store(db, create=False) as store:
                doc = trend_document(store, args['benchmark'], args['cell'], args['metric'], matrix=args['matrix'],
                                     label=args['label'], meta=meta)
        except (HistoryError, TrendError) as e:
            raise AnsibleActionFail('trend: %s' % e)
        rundir = RunDir(report_dir(args['output_dir'], from_callback=True), doc['run_id'])
        files = {} if self._task.check_mode else write_trend(rundir, doc)
        lines = trend_terminal(doc)
        lines.append('  report: %s%s' % (files.get('report.md') or rundir.path,
                                         ' (check mode: not written)' if self._task.check_mode else ''))
        result.update(changed=bool(files), report_dir=rundir.path, files=files, series=doc['trend']['series'],
                      change_points=doc['trend']['change_points'], history_db=shown(db), msg='\n'.join(lines))
        return result
