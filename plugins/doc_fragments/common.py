# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment(object):
    """Options and attributes every benchmark module shares."""

    DOCUMENTATION = r'''
options:
  labels:
    description:
      - Labels of the matrix cell (platform, storage, ...) copied into the result record. The
        C(benchlab.bench.bench_run) role also sets C(cell) and C(benchmark) here.
    type: dict
    default: {}
  guards:
    description:
      - Methodology guards applied right before the measurement, recorded in the record's
        C(params.guards); a problem becomes a warning on the record.
      - V(quiesce) (default V(true)) checks the 1-minute load average against V(max_load_per_cpu)
        (default V(0.75)) times the CPU count and looks for other benchmark processes; with
        V(quiesce_wait_s) (default V(0), warn only) it waits up to that long for a quiet machine.
      - V(cooldown_s) (default V(0)) sleeps before measuring; the bench_run role sets it between
        repetitions.
      - V(warmup) (default V(false)) marks a run that is stored but not counted by the analysis.
      - V(hypervisor_caches_dropped) is set by the bench_run role when it dropped the caches of the
        guest's hypervisor host before this run.
      - V(concurrency) is set by the bench_run role when the matrix let that many hosts sharing a
        hypervisor, disk or link run at once on purpose; it is recorded, nothing else.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    description: Returns C(cmd), the argv that would run, without running or writing anything.
  diff_mode:
    support: none
    description: Nothing to diff.
'''
