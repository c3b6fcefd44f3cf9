# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: gate_runs
short_description: The extra runs a variance gate asks for
version_added: 0.1.0
description:
  - For a plan from M(benchlab.bench.matrix_plan) and the records measured so far on a host,
    returns one more run of every gated (benchmark, cell) of that host whose coefficient of
    variation is still above C(max_cv) and whose count of runs is below C(max_repetitions).
    Warm-up runs do not count. The bench_run role calls it until it returns an empty list.
options:
  _input:
    description: The plan.
    type: dict
    required: true
  records:
    description: The result records measured so far.
    type: list
    elements: dict
    required: true
  host:
    description: The inventory host whose cells to look at.
    type: str
    required: true
  exclude:
    description:
      - Pairs C([benchmark, cell]) to leave alone, e.g. those with a failed run. A cell that fails
        is not repeated by the gate.
    type: list
    elements: list
    default: []
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Which cells need another run
  ansible.builtin.set_fact:
    more: "{{ bench_plan | benchlab.bench.gate_runs(records_so_far, inventory_hostname) }}"
'''

RETURN = r'''
_value:
  description: Runs in the plan's run format, with C(gate=true) and the next repetition number.
  type: list
  elements: dict
'''

from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import more_runs
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.gate import next_runs


def gate_runs(plan, records, host, exclude=None):
    return more_runs('gate_runs', plan, records, exclude, lambda skip: [
        r for r in next_runs(plan, records, host) if (r['benchmark'], r['cell']) not in skip])


class FilterModule(object):
    def filters(self):
        return {'gate_runs': gate_runs}
