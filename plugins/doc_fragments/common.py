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
      - V(quiesce) (default V(true)) looks for other benchmark processes before the run and measures
        the CPU time other processes used while the tool ran (leaving out the run's own tool, the
        module, its ancestors and process group, the Ansible workers of a local connection, and
        kernel threads); above V(max_other_cpu_pct) (default V(10), percent of all CPUs) the record's
        C(params.guards.quiet) is false and it carries the trap code C(not_quiet). With
        V(quiesce_wait_s) (default V(0)) it first waits up to that long for the 1-minute load average
        to drop below V(max_load_per_cpu) (default V(0.75)) times the CPU count; the load average
        itself is recorded (C(load_before)), never the verdict.
      - With V(quiesce), another benchlab run measuring on the same host also makes the record not
        quiet (C(not_quiet)), its run id listed in C(params.guards.other_runs). Every tool a benchmark
        module starts carries its run id in the environment variable C(BENCHLAB_OWNER_RUN), and the
        module looks for tools carrying another run id before the measurement (waiting for them like
        for other benchmarks) and every second while its tool runs. The run's own tools never count,
        nor does a process only named like a benchmark tool. Other users' processes are seen only
        when the module runs as root.
      - V(cooldown_s) (default V(0)) sleeps before measuring; the bench_run role sets it between
        repetitions.
      - V(warmup) (default V(false)) marks a run that is stored but not counted by the analysis.
      - V(hypervisor_caches_dropped) is set by the bench_run role when it dropped the caches of the
        guest's hypervisor host before this run.
      - V(concurrency) is set by the bench_run role when the matrix let that many hosts sharing a
        hypervisor, disk or link run at once on purpose; it is recorded, nothing else.
      - V(start_at) (Unix time in seconds) makes the module wait until then, right before it measures,
        so that runs on several hosts start together; the bench_run role sets it for the concurrent
        pairs of an iperf run. How late the start was is recorded (C(params.guards.start_late_s)).
      - V(clock_offset_s) comes with V(start_at) from the bench_run role. It is this host's clock less the
        controller's, read right before the run; the module waits for V(start_at) plus it on its own
        clock, and records it (C(params.guards.clock_offset_s)). The analysis carries the run's start
        onto the controller's clock with it.
      - V(drbd) is set by the bench_run role on a DRBD host, the state of its resources right before
        this run (after it waited for UpToDate), recorded in C(params.guards.drbd); the analysis
        flags the cell (C(drbd_not_uptodate)) when a run started with a resource not UpToDate or
        resyncing.
      - V(observe_interval_s) is set by the bench_run role from the matrix's
        C(methodology.observe_interval_s); it overrides O(observe_interval_s).
      - V(processes) names the processes that count as another benchmark for V(quiesce), besides
        C(stress) and C(stress-ng) (always counted). The collection's action plugin sets it to every
        benchmark's own process names (the collection's tool table) on each call of a benchmark
        module that does not set it itself; it is not recorded.
    type: dict
    default: {}
  run_id:
    description:
      - The id of the run this benchmark belongs to, written into the ownership marker
        C(.benchlab-owner.json) of its work directory. M(benchlab.bench.work_cleanup) removes only
        work directories (and stops only the processes recorded in them) whose marker names the
        same O(run_id) and O(run_key). The C(benchlab.bench.bench_run) role sets it.
    type: str
  run_key:
    description:
      - The key of the (benchmark, cell) pair of the plan this run belongs to, written into the
        marker next to O(run_id). The C(benchlab.bench.bench_run) role sets it.
    type: str
  describe:
    description:
      - Describe the environment first, as M(benchlab.bench.sysinfo) does for the run's C(path) (CPU, RAM,
        kernel, distribution, virtualization, the filesystem under C(path) when the module has one, DRBD), and return it as
        C(sysinfo) next to C(labels), also when the run fails. The C(benchlab.bench.bench_run) role
        sets it on the first run of each cell, instead of a separate sysinfo task (one module run less
        per cell). Read-only, also in check mode.
    type: bool
    default: false
  batch:
    description:
      - Several runs of this module in one call, one after the other in one module process (the
        batches of the C(benchlab.bench.run_benchmark) action, one module start for a host's
        consecutive runs). With it, every other option is given per run and checked per run.
      - C(runs) is a list of C({options, timeout_s}), C(options) the module's options of that run
        (C(path) included), C(timeout_s) (optional) the seconds after which the run's tool is stopped
        and the run fails. C(spool) (optional) names a file each run's result is appended to the
        moment it ends, as JSON lines (a C(start) line with the run's index as the run starts, then a
        C(done) line with its index and its C(result)).
      - Returns C(runs), the result of every run in order (each as the module returns it for one run);
        a failed run fails only itself.
    type: dict
  observe_interval_s:
    description:
      - Seconds between the samples of the run's observation on the target, from right before the tool
        starts to right after it exited. Observed are the block devices of the layer stack under the run's
        path (or the devices it writes) down to the disks (from C(/proc/diskstats) their bytes, I/Os,
        utilisation, average wait and queue), the CPUs (user, system, iowait, steal, irq), the tool's own process tree, memory (Dirty,
        Writeback, Cached), pressure (C(/proc/pressure), where the kernel has it) and the network
        interfaces in the path. Each record gets the summary as C(observed) and the resource that
        limited the run as C(limited_by); the module's result gets the time series as
        C(bench_observed) (the report callback stores them in the run directory). What the machine
        hides (no C(/proc/pressure), a virtualised C(/proc) in a container) is listed in
        C(observed.missing).
      - V(0) turns the observation off.
    type: float
    default: 1.0
attributes:
  check_mode:
    support: full
    description:
      - Runs nothing and writes nothing. Returns C(cmd) and C(bench_dry_run) = C(tool), C(argv)
        (the command that would run), C(writes) (paths and devices it would write), C(creates),
        C(removes) and C(refused) (null, or the message of the guard that would refuse the run).
  diff_mode:
    support: none
    description: Nothing to diff.
'''
