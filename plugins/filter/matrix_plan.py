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
  hostvars:
    description:
      - The inventory's C(hostvars); with O(labels_var), a cell takes the labels its host carries in
        that host variable (the cell's own labels win).
    type: dict
  labels_var:
    description:
      - The host variable with a host's labels (the local lab's guests carry C(bench_lab_labels)).
        Empty or unset, cells keep their own labels only.
    type: str
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

from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import MatrixError, expand_plan


def host_labels(matrix, hostvars, labels_var):
    """{host: labels} of the matrix's cell hosts that carry `labels_var`."""
    out = {}
    for cell in (matrix.get('cells') or []) if isinstance(matrix, dict) else []:
        host = cell.get('host') if isinstance(cell, dict) else None
        # a host not in the inventory is left to validate_matrix, which names it (HostVars gives an
        # undefined value for an unknown host on ansible-core 2.19+, a KeyError before)
        if not isinstance(host, str) or host not in hostvars:
            continue
        labels = hostvars[host].get(labels_var)
        if isinstance(labels, dict):
            out[host] = dict(labels)
    return out


def matrix_plan(matrix, inventory_hosts=None, hostvars=None, labels_var=None):
    try:
        labels = host_labels(matrix, hostvars, labels_var) if hostvars is not None and labels_var else None
        return expand_plan(matrix, inventory_hosts=list(inventory_hosts) if inventory_hosts is not None else None,
                           host_labels=labels)
    except MatrixError as e:
        raise AnsibleFilterError(str(e))


class FilterModule(object):
    def filters(self):
        return {'matrix_plan': matrix_plan}
