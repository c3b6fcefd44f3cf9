#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: run_benchmark
short_description: One run of a benchmark plan in one task
version_added: 0.2.0
description:
  - Runs one run of a plan made by the C(benchlab.bench.matrix_plan) filter with its tool's module
    (C(benchlab.bench.dd), C(fio), C(bonnie), C(dbench), C(sysbench_fileio), C(compress)); the
    matrix params of the run become the module's options under their own names, and the module's
    argument_spec gives every default. The module applies the methodology guards (quiescence,
    cool-down, the target's cache drop) itself.
  - When the tool fails, the work the run left in its cell (this run id and key only, see
    C(benchlab.bench.work_cleanup)) is stopped and removed in the same task, and the task fails with
    the tool's message.
  - Returns the module's result (C(bench_result) or C(bench_results)), and the run as the fact
    C(bench_run_item) (the report callback's progress line).
  - The C(benchlab.bench.bench_run) role uses it for every synchronous run on a host with nothing
    to prepare first, when the plan has no variance gate; iperf runs, async runs, gated plans and
    hosts with a hypervisor host or DRBD resources take the tool's task file instead.
  - This is an action plugin. It runs on the controller and calls the tool's module on the target.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  run:
    description:
      - One element of the plan's C(runs) (C(tool), C(benchmark), C(cell), C(repetition), C(path),
        C(params), C(labels), C(guards)).
    type: dict
    required: true
  labels:
    description: The run's labels (usually from module_defaults of the group C(benchlab.bench.benchmarks)).
    type: dict
  guards:
    description: The run's methodology guards (as the benchmark modules take them).
    type: dict
  run_id:
    description: The run id written into the owner marker of the work directory.
    type: str
  run_key:
    description: The plan's stable key of the run's (benchmark, cell).
    type: str
notes:
  - Part of the action group C(benchlab.bench.benchmarks), so C(module_defaults) of that group give
    it C(labels), C(guards), C(run_id) and C(run_key) like every benchmark module.
attributes:
  check_mode:
    support: full
    description: The tool's module runs in check mode and returns its plan (C(bench_dry_run)).
  diff_mode:
    support: none
    description: Nothing to diff.
  action:
    support: full
    description: Runs on the controller and calls the tool's module on the target.
'''

EXAMPLES = r'''
- name: Run the first run of a plan
  benchlab.bench.run_benchmark:
    run: "{{ bench_plan.runs[0] }}"
    run_id: "{{ my_run_id }}"
    run_key: "{{ (bench_plan | benchlab.bench.run_keys)[bench_plan.runs[0].benchmark][bench_plan.runs[0].cell] }}"
  register: one_run
'''

RETURN = r'''
bench_result:
  description: The record of the run, as the tool's module returns it.
  returned: when the tool's module returns one record
  type: dict
bench_results:
  description: The records of the run (fio job files with several jobs).
  returned: when the tool's module returns several records
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(
        run=dict(type='dict', required=True),
        labels=dict(type='dict'),
        guards=dict(type='dict'),
        run_id=dict(type='str'),
        run_key=dict(type='str', no_log=False),
    ), supports_check_mode=True)
    module.fail_json(msg='benchlab.bench.run_benchmark runs as an action plugin (on the controller)')


if __name__ == '__main__':
    main()
