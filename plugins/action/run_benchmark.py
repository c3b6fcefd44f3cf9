# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchlab.bench.run_benchmark: one run of a plan in one task (documentation:
plugins/modules/run_benchmark.py). The tool's module runs through _execute_module with the options
plugin_utils/runargs.py builds; a failed run's work is cleaned up by benchlab.bench.work_cleanup in
the same task; a module that could not start is explained as for every target module
(plugin_utils/compat.py)."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.benchlab.bench.plugins.plugin_utils.compat import TargetModuleAction
from ansible_collections.benchlab.bench.plugins.plugin_utils.runargs import RunArgsError, module_args

ARGSPEC = dict(
    run=dict(type='dict', required=True),
    labels=dict(type='dict'),
    guards=dict(type='dict'),
    run_id=dict(type='str'),
    run_key=dict(type='str', no_log=False),
)
SHARED = ('labels', 'guards', 'run_id', 'run_key')


class ActionModule(TargetModuleAction):
    """The run's module, and on failure the cleanup of exactly this run's work."""

    _VALID_ARGS = frozenset(ARGSPEC)
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        ActionBase.run(self, tmp, task_vars)  # not NormalAction.run: this task's module is the tool's
        _valid, args = self.validate_argument_spec(argument_spec=ARGSPEC)
        run = args['run']
        try:
            margs = module_args(run, dict((k, args.get(k)) for k in SHARED))
        except RunArgsError as e:
            raise AnsibleActionFail(str(e))
        result = self._execute_module(module_name='benchlab.bench.%s' % run['tool'], module_args=margs,
                                      task_vars=task_vars)
        result = self._target_python_check(result, task_vars)
        if result.get('failed') and args.get('run_id') and args.get('run_key'):
            result['cleanup'] = self._cleanup(run, args, task_vars)
        result['ansible_facts'] = dict(result.get('ansible_facts') or {}, bench_run_item=run)
        return result

    def _cleanup(self, run, args, task_vars):
        """A tool stopped by a failure leaves its work directory (and dd its random source in
        /dev/shm): remove what this run id and key own there, and nothing else."""
        paths = [run['path']] + (['/dev/shm'] if run['tool'] == 'dd' else [])
        res = self._execute_module(module_name='benchlab.bench.work_cleanup', task_vars=task_vars,
                                   module_args=dict(path=paths, run_id=args['run_id'], run_key=args['run_key']))
        return dict((k, res[k]) for k in ('changed', 'failed', 'msg', 'removed', 'stopped') if k in res)
