# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: run_state
short_description: The report callback's run, or what an earlier attempt of a run left in its run directory
version_added: 0.1.0
description:
  - Without a term, the run the report callback (C(benchlab.bench.report)) writes in this playbook, as
    data for the play - C(report) (whether the callback is enabled), C(run_id), C(path), C(preflight_error)
    (empty when the output directory, the history and the run id are fine; the plan play of
    C(playbooks/bench.yml) refuses to start otherwise) and C(requested_run_id) (the run id the user
    chose, E(BENCHLAB_RUN_ID), which a resume continues).
  - With run ids, reads C(plan.json) and C(results.jsonl) of the run directory C(<base>/<run id>) the
    report callback writes, for resuming that run with C(benchlab.bench.resume_plan).
  - A line of C(results.jsonl) that is not valid JSON (the last one, when the machine died while
    writing it), or JSON but not an object, is skipped, counted and named (file and line number) in
    a warning, never fatal. The report callback repairs a partial last line before it appends.
  - A run that a running play holds (its run directory's lock, which the report callback holds for
    the play's lifetime) is named in RV(_raw[].in_use) (the holder's pid, host and start, and the
    message); the plan of C(playbooks/bench.yml) refuses to resume it. The calling play's own lock
    does not count.
  - Every record read back goes through the validation of a new record (the record schema, every
    number finite, metric names, units and label names as names); one that fails is set aside
    (RV(_raw[].set_aside)), named with its line number and errors in a warning, and never counted,
    resumed or rendered.
options:
  _terms:
    description: The run id (one directory name); none for the report callback's current run.
    required: false
    type: list
    elements: str
  base:
    description:
      - The directory holding the run directories.
      - Default is the report callback's, E(BENCHLAB_REPORT_DIR) or C(./benchlab-runs).
    type: str
    env:
      - name: BENCHLAB_REPORT_DIR
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Refuse to start when the report callback could not keep the run's results
  ansible.builtin.assert:
    that: lookup('benchlab.bench.run_state').preflight_error | length == 0
    fail_msg: "{{ lookup('benchlab.bench.run_state').preflight_error }}"

- name: Resume run 20261202T101500Z-a1b2c3
  ansible.builtin.set_fact:
    bench_plan: "{{ bench_plan | benchlab.bench.resume_plan(state.plan, state.records, state.run_id) }}"
  vars:
    state: "{{ lookup('benchlab.bench.run_state', '20261202T101500Z-a1b2c3') }}"
'''

RETURN = r'''
_raw:
  description: One dict per run id (without a term, one dict, the current run).
  type: list
  elements: dict
  contains:
    report:
      description: Without a term, whether the report callback is enabled (when not, the other keys are empty).
      type: bool
    preflight_error:
      description: Without a term, the report callback's preflight verdict (empty when fine).
      type: str
    requested_run_id:
      description: Without a term, the run id the user chose (E(BENCHLAB_RUN_ID)), or null.
      type: str
    run_id:
      description: The run id.
      type: str
    path:
      description: The run directory.
      type: str
    found:
      description: Whether the run directory holds a C(results.jsonl).
      type: bool
    plan:
      description: The plan of the earlier attempt (C(plan.json)), or null.
      type: dict
    records:
      description: The valid records of C(results.jsonl).
      type: list
      elements: dict
    set_aside:
      description: The lines of C(results.jsonl) that are JSON objects but not valid records, each with its line number and errors.
      type: list
      elements: dict
    unreadable_lines:
      description: Lines of C(results.jsonl) that were not a JSON object and were skipped.
      type: int
    in_use:
      description:
        - Null, or the play that holds the run now (C(pid), C(host), C(since), C(message)).
      type: dict
    problems:
      description: One message per skipped or set-aside line (file, line number, why).
      type: list
      elements: str
'''

import json
import os

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase
from ansible.utils.display import Display

from ansible_collections.benchlab.bench.plugins.plugin_utils.run.locations import report_dir
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import printable
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import (
    RunDir, current_run, in_use_message, lock_holder, read_jsonl)
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.validation import checked_records

display = Display()


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        if not terms:
            # the report callback's run, as the callback set it in the controller's main process before
            # this task's worker was forked from it
            run = current_run()
            return [dict(report=bool(run), run_id=run.get('run_id'), path=run.get('path'),
                         preflight_error=run.get('preflight_error') or '', requested_run_id=run.get('requested_run_id'))]
        self.set_options(var_options=variables, direct=kwargs)
        base = report_dir(self.get_option('base'), from_callback=True)
        out = []
        for run_id in terms:
            try:
                path = RunDir(base, run_id).path
            except ValueError as e:
                raise AnsibleLookupError('run_state: %s' % e)
            state = dict(run_id=run_id, path=path, found=False, plan=None, records=[], set_aside=[], unreadable_lines=0,
                         problems=[], in_use=None)
            holder = lock_holder(path)
            if holder is not None:
                state['in_use'] = dict(holder, message=in_use_message(run_id, holder))
            jsonl = os.path.join(path, 'results.jsonl')
            if os.path.isfile(jsonl):
                state['found'] = True
                numbered, state['problems'] = read_jsonl(jsonl, numbered=True)
                state['unreadable_lines'] = len(state['problems'])
                state['records'], state['set_aside'], invalid = checked_records(numbered, jsonl)
                state['problems'].extend(invalid)
                for problem in state['problems']:
                    display.warning('benchlab.bench.run_state: %s' % printable(problem))
            plan = os.path.join(path, 'plan.json')
            if os.path.isfile(plan):
                try:
                    with open(plan, encoding='utf-8') as f:
                        state['plan'] = json.load(f)
                except ValueError as e:
                    raise AnsibleLookupError('run_state: %s is not valid JSON: %s' % (plan, e))
            out.append(state)
        return out
