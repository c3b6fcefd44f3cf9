#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: trend
short_description: A metric across the stored runs, the points where it changed and what changed there
version_added: 0.1.0
description:
  - Reads the runs of a matrix (O(matrix)) or of a run label (O(label)) from the history, takes one
    metric of one benchmark in one cell from each run that measured it (oldest first, by start) and
    writes a report - C(results.json), C(results.csv), C(report.md) and C(report.html) (a line chart of
    the means with their 95% intervals as a band, the change points marked) - into the run directory
    C(<output_dir>/trend-<benchmark>-<cell>-<metric>-<digest>/).
  - "C(results.json) holds C(trend: {series: [{run_id, started, mean, ci95, n}], change_points: [{index,
    run_id, delta_pct, changed_environment: {key: [before, after]}}]}), C(index) counting the series
    from 0, oldest first, and C(trend_query) (the selection, the unit, the method)."
  - Change points are found with E-divisive means (Matteson and James 2014), the method MongoDB runs on
    its CI performance results (a permutation test, p <= 0.05, 100 permutations, seeded - the same
    series gives the same points). C(delta_pct) is the mean of the segment a change point starts
    against the mean of the segment before it; C(changed_environment) the keys of the stored
    environment (sysinfo - kernel, mount options, file system ...), the tool's version and the
    collection's version that differ between the run before and the run at the change point.
  - The action runs on the controller; C(benchlab.bench.trend) (C(playbooks/trend.yml)) wraps it.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  matrix:
    description: The matrix name of the runs (O(matrix) or O(label), or both).
    type: str
  label:
    description: The run label of the runs (the callback's C(run_label)).
    type: str
  cell:
    description: The cell.
    type: str
    required: true
  benchmark:
    description: The benchmark (its name in the matrix).
    type: str
    required: true
  metric:
    description: The metric (for example V(throughput)).
    type: str
    required: true
  history_db:
    description:
      - The history - a SQLite file or a PostgreSQL URL. By default the callback's C(history_db) setting
        (env C(BENCHLAB_HISTORY_DB)), else C($XDG_DATA_HOME/benchlab/history.sqlite).
    type: str
  output_dir:
    description: Directory that receives the report's run directory. By default the callback's C(output_dir).
    type: path
attributes:
  check_mode:
    support: full
    description: Computes the trend without writing the report files.
  diff_mode:
    support: none
    description: Nothing to diff.
  action:
    support: full
    description: An action plugin of the same name does the work on the controller.
seealso:
  - module: benchlab.bench.compare_runs
  - module: benchlab.bench.history
'''

EXAMPLES = r'''
- name: Since when is the nightly dd write on the DRBD cell slower, and what changed then?
  benchlab.bench.trend:
    matrix: nightly
    cell: drbd-c
    benchmark: dd-write
    metric: throughput
  register: trend

- name: Fail when the last change point made it more than 10 % slower
  ansible.builtin.assert:
    that: trend.change_points | length == 0 or trend.change_points[-1].delta_pct > -10
'''

RETURN = r'''
report_dir:
  description: The report's run directory.
  returned: always
  type: str
files:
  description: The report files written, by name (empty in check mode).
  returned: always
  type: dict
series:
  description: The series, oldest first (run_id, started, mean, ci95, n).
  returned: always
  type: list
  elements: dict
change_points:
  description: The change points (index, run_id, delta_pct, changed_environment).
  returned: always
  type: list
  elements: dict
  sample:
    - {index: 12, run_id: 20261114T220000Z-77aa01, delta_pct: -23.4,
       changed_environment: {kernel.release: ["6.1.0-26-amd64", "6.1.0-27-amd64"]}}
'''
