# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: resume_plan
short_description: Leave out of a plan the runs an earlier attempt already measured
version_added: 0.1.0
description:
  - For a plan from M(benchlab.bench.matrix_plan) and the plan and records of an earlier attempt
    of the same run (see the C(benchlab.bench.run_state) lookup), returns the plan without the runs
    already measured.
  - Each (benchmark, cell) has a stable key (the cell's host, path and labels; the benchmark's tool,
    parameters and methodology). Earlier records count only where the key is unchanged; a pair whose
    definition changed is measured again from its first repetition.
options:
  _input:
    description: The plan.
    type: dict
    required: true
  previous_plan:
    description: The plan of the earlier attempt (its C(plan.json)); null counts every pair as changed.
    type: dict
  records:
    description: The records of the earlier attempt (its C(results.jsonl)).
    type: list
    elements: dict
    required: true
  run_id:
    description: The run id being resumed, recorded in the plan.
    type: str
  set_aside:
    description:
      - The lines of the earlier attempt's C(results.jsonl) that were not valid records (the
        C(benchlab.bench.run_state) lookup's C(set_aside)); carried in C(resume.set_aside) so the
        report callback lists them as invalid (never rendered as results).
    type: list
    elements: dict
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Resume a run
  ansible.builtin.set_fact:
    bench_plan: "{{ bench_plan | benchlab.bench.resume_plan(state.plan, state.records, state.run_id, state.set_aside) }}"
  vars:
    state: "{{ lookup('benchlab.bench.run_state', bench_resume) }}"
'''

RETURN = r'''
_value:
  description:
    - The plan with the runs still to do, and C(resume) = C(run_id), C(skipped) (runs left out),
      C(done) (runs found per benchmark and cell), C(changed) (pairs measured again because their
      definition changed), C(records) (the earlier records that still count) and C(set_aside)
      (the lines that were not valid records).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import resume_plan as _resume_plan


def resume_plan(plan, previous_plan, records, run_id=None, set_aside=None):
    if not isinstance(plan, dict) or 'runs' not in plan:
        raise AnsibleFilterError('resume_plan: the input must be a plan from benchlab.bench.matrix_plan')
    if previous_plan is not None and not isinstance(previous_plan, dict):
        raise AnsibleFilterError('resume_plan: previous_plan must be a plan (dict) or null')
    if not isinstance(records, list):
        raise AnsibleFilterError('resume_plan: records must be a list, got %s' % type(records).__name__)
    if set_aside is not None and not isinstance(set_aside, list):
        raise AnsibleFilterError('resume_plan: set_aside must be a list, got %s' % type(set_aside).__name__)
    try:
        return _resume_plan(plan, previous_plan, records, run_id, set_aside=set_aside)
    except (KeyError, TypeError, AttributeError) as e:
        raise AnsibleFilterError('resume_plan: malformed plan or record: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'resume_plan': resume_plan}
