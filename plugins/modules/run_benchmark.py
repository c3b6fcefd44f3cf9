#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: run_benchmark
short_description: The one run path of a benchmark plan
version_added: 0.2.0
description:
  - Every run of a plan made by the C(benchlab.bench.matrix_plan) filter goes through this action (the
    C(benchlab.bench.bench_run) role, C(roles/bench_run/tasks/run.yml)). With O(runs), the runs of a
    batch on the task's host, one after the other in one call of their tool's module (C(benchlab.bench.dd),
    C(fio), C(bonnie), C(dbench), C(sysbench_fileio), C(iperf), C(compress), ...; its option C(batch));
    the matrix params of a run become the module's options under their own names, the module's
    argument_spec gives every default, the module applies the methodology guards (quiescence,
    cool-down, the target's cache drop) before each run.
  - A batch of one run without a timeout is one module call. Otherwise the module runs in the
    background with the batch's time limit (the runs' timeouts, or their async limits, summed), each
    run's C(timeout_s) stopping its tool; each run's result is read from the batch's spool file
    on the host the moment the run ends (a small waiter process, no polling module runs).
  - As each run ends, its records get the run's context (C(run_id), C(repetition), C(step),
    C(cell_key)) and, with the report callback C(benchlab.bench.report) enabled, are stored in the
    run directory's C(results.jsonl) at once (a crash of the controller loses no record of a run
    that ended); a progress line is printed as each run starts.
  - When a run fails, the work it left in its cell (this run id and key only, see
    C(benchlab.bench.work_cleanup)) is stopped and removed, the other runs of the batch go on, and
    the task fails naming every failed run (C(bench_failed_runs)).
  - With O(phase), one phase of a run on the task's host (delegated with C(delegate_to)) - work a run
    needs on another host, declared by the plan (C(plugins/plugin_utils/plan/runpath.py)); a guest's
    hypervisor host drops its caches, a DRBD host waits for UpToDate, iperf's servers start and stop,
    concurrent pairs start in the background and their records are collected.
  - This is an action plugin. It runs on the controller and calls the modules on the target; this file is its
    documentation (the action validates the task's arguments - O(run), O(runs), O(phase) or O(amend), the first
    two not together, O(runs) not with O(phase)).
author:
  - benchlab.bench maintainers (@benchlab)
options:
  runs:
    description:
      - The runs of a batch, each as the C(benchlab.bench.schedule_runs) filter's C(batches) give it,
        an element of the plan's C(runs) (C(tool), C(benchmark), C(cell), C(repetition), C(path),
        C(params), C(labels), C(guards)) with its context (C(index), C(step), C(key), C(describe),
        C(limit_s), C(timeout_s), C(phases)). All of one tool.
    type: list
    elements: dict
  run:
    description:
      - One run, an element of the plan's C(runs) (the shared options below give its labels, guards,
        run id and key).
      - With O(phase), the run the phase belongs to (its records get the run's context, its failure is
        the run's).
    type: dict
  phase:
    description:
      - One phase of a run (a batch's C(phases)), carried out on the task's host.
    type: dict
  done:
    description:
      - The registered loop results of the phases before this task (C(args_from), C(guard), C(collect) read them).
    type: list
    elements: dict
    default: []
  start_at:
    description:
      - The agreed moment (Unix time) every run of a step, or every concurrent pair of a run, starts at (C(guards.start_at)).
      - It is the controller's moment. Each host's clock is read over its connection right before its run
        (C(date +%s.%N), bracketed by the controller's clock), and the host waits for the moment on its own
        clock (C(guards.clock_offset_s)).
    type: float
  labels:
    description: The run's labels (usually from module_defaults of the group C(benchlab.bench.benchmarks)).
    type: dict
  guards:
    description: Guards every run of the call gets on top of its own (as the benchmark modules take them).
    type: dict
  run_id:
    description: The run id written into the owner marker of the work directory and onto every record.
    type: str
  run_key:
    description: The plan's stable key of the run's (benchmark, cell), for O(run) (the runs of O(runs) carry their C(key)).
    type: str
  held:
    description:
      - The records of O(run) that were held back because the hosts below it observed the run (a run with an
        C(observes) phase, whose result says C(bench_results_held)), as that result returned them.
      - Used with O(amend) (and by the observer phases, which read the held records' window).
    type: list
    elements: dict
  amend:
    description:
      - Store the O(held) records of O(run) now, each with what the hosts below it observed (the after phases'
        results in O(done)), with the run's context. The C(benchlab.bench.bench_run) role does this after a
        run's phases.
    type: bool
    default: false
notes:
  - Part of the action group C(benchlab.bench.benchmarks), so C(module_defaults) of that group give
    it C(labels), C(guards), C(run_id) and C(run_key) like every benchmark module.
attributes:
  check_mode:
    support: full
    description: The tool's module runs each run in check mode and returns its plan (C(bench_dry_runs)).
  diff_mode:
    support: none
    description: Nothing to diff.
  action:
    support: full
    description: Runs on the controller and calls the modules on the target.
'''

EXAMPLES = r'''
- name: Run the first run of a plan
  benchlab.bench.run_benchmark:
    run: "{{ bench_plan.runs[0] }}"
    run_id: "{{ my_run_id }}"
    run_key: "{{ (bench_plan | benchlab.bench.run_keys)[bench_plan.runs[0].benchmark][bench_plan.runs[0].cell] }}"
  register: one_run

- name: Run this host's share of the first batch of a schedule
  benchlab.bench.run_benchmark:
    runs: "{{ (bench_plan | benchlab.bench.schedule_runs(hostvars)).batches[0].hosts[inventory_hostname].runs }}"
    run_id: "{{ my_run_id }}"
'''

RETURN = r'''
bench_result:
  description: The record of the run, when the call made exactly one.
  returned: when the runs made one record
  type: dict
bench_results:
  description: Every record the runs made, in order, each with its run's context (run_id, repetition, step, cell_key).
  returned: always
  type: list
  elements: dict
bench_results_stored:
  description: Per record, whether it is in the report callback's results.jsonl already.
  returned: always
  type: list
  elements: bool
bench_failed_runs:
  description: The runs that failed ({benchmark, cell, repetition, msg}).
  returned: always
  type: list
  elements: dict
bench_cleanup:
  description:
    - Per failed run, what C(benchlab.bench.work_cleanup) stopped and removed of that run's work
      ({benchmark, cell, repetition, removed, stopped}).
  returned: when a run failed
  type: list
  elements: dict
bench_sysinfo:
  description: The environments the runs described ({labels, sysinfo}; option describe).
  returned: always
  type: list
  elements: dict
bench_dry_runs:
  description: In check mode, each run's plan ({run, plan}, the modules' bench_dry_run).
  returned: in check mode
  type: list
  elements: dict
'''
