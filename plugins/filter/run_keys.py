# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: run_keys
short_description: The stable key of every (benchmark, cell) pair of a plan
version_added: 0.1.0
description:
  - For a plan from M(benchlab.bench.matrix_plan), returns a mapping benchmark name -> cell name ->
    key, with the same stable key the report callback stamps on every record (C(cell_key)) and a
    resume compares - a hash of the cell (host, path, labels) and of the benchmark (tool,
    parameters, methodology).
  - The C(benchlab.bench.bench_run) role passes it to the benchmark modules as C(run_key), so each
    work directory's ownership marker names the pair it belongs to, and
    M(benchlab.bench.work_cleanup) removes only that pair's work.
options:
  _input:
    description: The plan.
    type: dict
    required: true
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: The key of the current run
  ansible.builtin.debug:
    msg: "{{ (bench_run_plan | benchlab.bench.run_keys)[bench_run_item.benchmark][bench_run_item.cell] }}"
'''

RETURN = r'''
_value:
  description: The key of every pair the plan runs, by benchmark name, then cell name.
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys


def run_keys(plan):
    if not isinstance(plan, dict) or not isinstance(plan.get('benchmarks'), list):
        raise AnsibleFilterError('run_keys: the input must be a plan from benchlab.bench.matrix_plan')
    try:
        keys = plan_keys(plan)
    except (KeyError, TypeError, AttributeError) as e:
        raise AnsibleFilterError('run_keys: malformed plan: %s' % e)
    out = {}
    for (benchmark, cell), key in keys.items():
        out.setdefault(benchmark, {})[cell] = key
    return out


class FilterModule(object):
    def filters(self):
        return {'run_keys': run_keys}
