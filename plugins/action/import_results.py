# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchlab.bench.import_results: a manifest of hand-run outputs -> records and a plan for the report
callback. Runs on the controller only (nothing runs on a host); the documentation is in
plugins/modules/import_results.py, the logic in plugins/plugin_utils/run/imports.py."""

from __future__ import annotations

import os

from ansible.plugins.action import ActionBase

from ansible_collections.benchlab.bench.plugins.plugin_utils.run.imports import ImportProblem, import_manifest

ARGUMENT_SPEC = dict(manifest=dict(type='path', required=True))


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        path = os.path.abspath(os.path.expanduser(args['manifest']))
        try:
            records, hosts, plan = import_manifest(path)
        except ImportProblem as e:  # every problem of every entry, one per line; nothing is stored
            result.update(failed=True, changed=False, msg='import_results: %s' % e, problems=e.problems)
            return result
        entries = plan['imported']['entries']
        result.update(changed=False, bench_results=records, bench_result_hosts=hosts,
                      ansible_facts=dict(bench_plan=plan),
                      msg='imported %d record(s) of %d cell(s) from %d entr%s of %s' % (
                          len(records), len(plan['cells']), entries, 'y' if entries == 1 else 'ies', path))
        return result
