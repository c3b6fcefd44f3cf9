#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: compare_runs
short_description: Compare two stored benchmark runs and gate on regressions
version_added: 0.1.0
description:
  - Loads two runs from the history database the C(benchlab.bench.report) callback fills at the end
    of every run, compares them metric by metric and writes the same report files a run has
    (C(results.json), C(report.md) and the other formats) into a new run directory
    C(<output_dir>/compare-<candidate run id>-vs-<baseline run id>). Nothing is re-run.
  - Each table holds one benchmark in one cell, with the cell of the baseline run as the baseline
    column (C(<cell> @ baseline)) and the same cell of the candidate run next to it
    (C(<cell> @ candidate)); each metric's comparison concludes as in any report - C(better),
    C(worse), C(equivalent) or C(inconclusive), with the detectable effect and the p-value corrected
    across the comparison (O(correction)).
  - A metric is a B(regression) when its verdict is C(worse) (significant after the correction, in
    the direction the metric's C(better) says) B(and) the candidate is worse by more than
    O(regression_threshold) percent of the baseline mean. It B(passes) when its verdict is C(better) or a
    one-sided test shows it is not worse by the threshold or more. Anything else B(cannot be judged)
    and is listed in C(cannot_judge) with its reason - fewer than two repetitions on a side (also in
    C(too_little_data)), data that can neither show nor rule out a regression beyond the threshold, a
    cell or benchmark in one run only (C(missing), C(new)), a metric the candidate lacks.
  - A run is never compared with itself - the same run as baseline and candidate fails.
  - The action runs on the controller; C(benchlab.bench.compare) (C(playbooks/compare.yml)) wraps it.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  baseline:
    description:
      - The baseline run - a run id, a unique prefix of one, V(latest), or a label - the run label
        given with the callback option C(run_label) (env C(BENCHLAB_RUN_LABEL)) or the matrix name. A
        label means the newest complete run carrying it.
      - V(latest) is the newest stored run whatever its status (complete, interrupted or failed), so a
        run that broke off is compared as it is, never skipped for an older one.
    type: str
    required: true
  candidate:
    description: The candidate run, referenced like O(baseline); by default the newest stored run, whatever its status.
    type: str
    default: latest
  history_db:
    description:
      - The history - a SQLite file or a PostgreSQL URL C(postgresql://USER@HOST:PORT/DBNAME) (the
        password from C(PGPASSWORD), C(~/.pgpass) or a service file). By default the callback's
        C(history_db) setting (env C(BENCHLAB_HISTORY_DB), ini C([callback_benchlab_report] history_db)),
        else C($XDG_DATA_HOME/benchlab/history.sqlite) (C(~/.local/share/benchlab/history.sqlite)).
    type: str
  output_dir:
    description:
      - Directory that receives the comparison's run directory. By default the callback's
        C(output_dir) (env C(BENCHLAB_REPORT_DIR)), else C(benchlab-runs) in the current directory.
    type: path
  regression_threshold:
    description: How much worse than the baseline, in percent of its mean, a significant change must be to count as a regression.
    type: float
    default: 5.0
  fail_on_regression:
    description:
      - Fail (after writing the report) when any metric regressed, or when any could not be judged (see
        C(cannot_judge)) - the CI gate. A gate that cannot judge does not pass.
    type: bool
    default: false
  correction:
    description: How the comparison's p-values are corrected for their number - Holm, Benjamini-Hochberg or none.
    type: str
    choices: [holm, bh, none]
    default: holm
  equivalence_margin_pct:
    description: Two values whose difference two one-sided tests place within this percent of the baseline mean are C(equivalent).
    type: float
    default: 5.0
  ignore_params:
    description:
      - The two runs are the same experiment although the parameters of a benchmark differ (or the tool's version).
      - By default a benchmark whose parameters differ between the runs (block size, size, job options; not the
        tool version) is not the same experiment; every metric of it is listed in RV(cannot_judge) and the gate
        calls no regression there. The differences are always shown (RV(params_differ), beside the verdicts
        of every report format).
    type: bool
    default: false
  metrics:
    description: Judge only these metric names (for example V(throughput)); all metrics by default.
    type: list
    elements: str
attributes:
  check_mode:
    support: full
    description: Compares and returns the regressions without writing the report files.
  diff_mode:
    support: none
    description: Nothing to diff.
  action:
    support: full
    description: An action plugin of the same name does the work on the controller.
notes:
  - The report files are written again (same directory) when the same two runs are compared again;
    C(changed) is true only when their content changed.
seealso:
  - plugin: benchlab.bench.report
    plugin_type: callback
'''

EXAMPLES = r'''
- name: Compare tonight's run with the last run labelled "release-1.2" and fail on a >5 % regression
  benchlab.bench.compare_runs:
    baseline: release-1.2
    candidate: latest
    regression_threshold: 5
    fail_on_regression: true

- name: Compare two run ids of the team's PostgreSQL history, judging only the throughput
  benchlab.bench.compare_runs:
    baseline: 20261201T220000Z-4f2a1c
    candidate: 20261202T220000Z-9b0e33
    history_db: postgresql://bench@db.example.com:5432/benchlab
    metrics: [throughput]
  register: cmp
'''

RETURN = r'''
report_dir:
  description: The comparison's run directory.
  returned: always
  type: str
  sample: /home/me/proj/benchlab-runs/compare-20261202T220000Z-9b0e33-vs-20261201T220000Z-4f2a1c
files:
  description: The report files written, by name (empty in check mode).
  returned: always
  type: dict
  sample: {"report.md": "/home/me/proj/benchlab-runs/compare-.../report.md"}
baseline_run:
  description: The baseline run id the reference resolved to.
  returned: always
  type: str
candidate_run:
  description: The candidate run id the reference resolved to.
  returned: always
  type: str
regressions:
  description: The regressed metrics, worst first.
  returned: always
  type: list
  elements: dict
  sample:
    - {benchmark: dd-write, cell: host-rootfs, metric: throughput, unit: MB/s, better: higher,
       baseline_mean: 180.2, candidate_mean: 2.1, delta_pct: -98.8, ci_pct: [-99.1, -98.5], p: 0.0001,
       baseline_n: 3, candidate_n: 3, threshold_pct: 5.0}
too_little_data:
  description: Metrics that could not be judged for too little data (fewer than two values on a side).
  returned: always
  type: list
  elements: dict
missing:
  description: Benchmarks, cells or metrics of the baseline run that the candidate run lacks.
  returned: always
  type: list
  elements: dict
new:
  description: Benchmarks or cells of the candidate run that the baseline run lacks.
  returned: always
  type: list
  elements: dict
cannot_judge:
  description:
    - Everything the gate could not judge, each with its reason - too little data, an inconclusive
      comparison that can neither show nor rule out a regression beyond the threshold, a cell or
      benchmark in one run only, a metric the candidate lacks, a benchmark whose parameters differ
      between the runs (unless O(ignore_params)). With O(fail_on_regression) any entry
      fails the task.
  returned: always
  type: list
  elements: dict
  sample:
    - {benchmark: dd-write, cell: host-rootfs, metric: throughput,
       reason: "too little data: n=1 vs n=3 (needs 2 on each side)"}
params_differ:
  description:
    - Per benchmark and cell whose runs differ in their parameters or the tool's version - C(params)
      (C(param), C(baseline), C(candidate)), C(tool_version) (C(baseline), C(candidate) lists, or null),
      and C(text), the line the reports show beside the verdicts. A parameter that varies between one
      run's own repetitions is not listed.
  returned: always
  type: list
  elements: dict
  sample:
    - {benchmark: fio-randread, cell: host-rootfs, params: [{param: bs, baseline: 1M, candidate: 4k}],
       tool_version: null, text: "bs 1M vs 4k"}
'''
