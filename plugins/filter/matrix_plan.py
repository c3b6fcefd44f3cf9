# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: matrix_plan
short_description: Validate a benchmark matrix and expand it into the plan of runs
version_added: 0.1.0
description:
  - Validates C(bench_matrix) against the collection's matrix schema and the checks a schema cannot
    express (unique names, an existing baseline, hosts present in the inventory), before any host is
    touched. Every problem is reported with the field that causes it, such as
    C(bench_matrix.cells[1].path).
  - Returns the plan the C(benchlab.bench.bench_run) role executes and the C(benchlab.bench.report)
    callback reads (cells, hosts, baseline and the ordered runs, repetitions interleaved).
options:
  _input:
    description: The matrix (C(bench_matrix)).
    type: dict
    required: true
  inventory_hosts:
    description: Host names of the inventory (C(groups['all'])); each cell's host must be one of them.
    type: list
    elements: str
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Validate the matrix and expand it
  ansible.builtin.set_fact:
    bench_plan: "{{ bench_matrix | benchlab.bench.matrix_plan(inventory_hosts=groups['all']) }}"
'''

RETURN = r'''
_value:
  description: The plan.
  type: dict
  contains:
    runs:
      description: One entry per run (host, cell, path, tool, benchmark, params, repetition, labels).
      type: list
    hosts:
      description: The inventory hosts the matrix uses.
      type: list
    baseline:
      description: The baseline cell (the first cell when the matrix names none).
      type: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.plugin_utils.matrix import MatrixError, expand_plan


def matrix_plan(matrix, inventory_hosts=None):
    try:
        return expand_plan(matrix, inventory_hosts=list(inventory_hosts) if inventory_hosts is not None else None)
    except MatrixError as e:
        raise AnsibleFilterError(str(e))


class FilterModule(object):
    def filters(self):
        return {'matrix_plan': matrix_plan}
