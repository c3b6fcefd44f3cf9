# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchlab.bench.history: list, copy, export and import the runs of a history. Runs on the
controller only; the documentation is in plugins/modules/history.py, the logic in
plugins/plugin_utils/history/history.py and history_bundle.py."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import (
    HistoryError, copy_history, open_store, resolve_db_path, shown)
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history_bundle import export_run, import_run_dir
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.locations import history_db, report_dir

ARGUMENT_SPEC = dict(
    action=dict(type='str', default='list', choices=['list', 'copy', 'export', 'import']),
    history_db=dict(type='str'),
    copy_to=dict(type='str'),
    run=dict(type='str', default='latest'),
    export_dir=dict(type='path'),
    run_dir=dict(type='path'),
    label=dict(type='str'),
)
LIST_MAX = 50
REQUIRED = dict(copy='copy_to', **{'import': 'run_dir'})


def _run_line(r):
    return '  %s  %s  %s  %s  %s records%s' % (r['run_id'], r['started'], r['status'], r['matrix'] or '-',
                                               r['n_records'], ('  label %s' % r['label']) if r['label'] else '')


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        action = args['action']
        if REQUIRED.get(action) and not args[REQUIRED[action]]:
            raise AnsibleActionFail('history: action=%s needs %s' % (action, REQUIRED[action]))
        try:
            db = history_db(args['history_db'], from_callback=True)
            if db is None:
                raise HistoryError('the history is turned off (history_db=off): name the history (history_db)')
            result.update(changed=False, history_db=shown(db))
            if action == 'list' or self._task.check_mode:
                with open_store(db, create=False) as store:
                    result['runs'] = store.list()
                lines = ['%d run(s) in %s' % (len(result['runs']), shown(db))]
                lines += [_run_line(r) for r in result['runs'][:LIST_MAX]]
                if len(result['runs']) > LIST_MAX:
                    lines.append('  ... %d more (all in the result: runs)' % (len(result['runs']) - LIST_MAX))
                result['msg'] = '\n'.join(lines)
                return result
            getattr(self, '_' + action)(db, args, result)
        except HistoryError as e:
            raise AnsibleActionFail('history: %s' % e)
        return result

    @staticmethod
    def _copy(db, args, result):
        dest = resolve_db_path(args['copy_to'])
        if dest is None:
            raise HistoryError('copy_to is off: name the history to copy into')
        with open_store(db, create=False) as source, open_store(dest) as target:
            done = copy_history(source, target)
        result['copied'] = dict(done, refused=[dict(run_id=r, reason=why) for r, why in done['refused']])
        result['changed'] = bool(done['stored'] or done['replaced'])
        lines = ['copied %s -> %s: %d stored, %d replaced, %d unchanged, %d refused' % (
            shown(db), shown(dest), len(done['stored']), len(done['replaced']), len(done['unchanged']),
            len(done['refused']))]
        lines += ['  refused %s: %s' % (r, why) for r, why in done['refused']]
        result['msg'] = '\n'.join(lines)
        if done['refused']:
            result['failed'] = True

    @staticmethod
    def _export(db, args, result):
        dest = args['export_dir'] or report_dir(None, from_callback=True)
        with open_store(db, create=False) as store:
            run_id, files = export_run(store, args['run'], dest)
        result.update(run_id=run_id, files=files, changed=True,
                      msg='run %s exported from %s to %s' % (run_id, shown(db), files['results.json'].rsplit('/', 1)[0]))

    @staticmethod
    def _import(db, args, result):
        with open_store(db) as store:
            run_id, what = import_run_dir(store, args['run_dir'], label=args['label'])
        result.update(run_id=run_id, stored=what, changed=what != 'unchanged',
                      msg='run %s %s in %s' % (run_id, 'already' if what == 'unchanged' else what, shown(db)))
