# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Contention-aware scheduling of a plan's runs. Pure functions.

Two runs contend when their hosts share a resource: the machine they run on (a guest's
``bench_hypervisor_host``, else the host itself), or anything the inventory names in
``bench_contention`` (a disk, a SAN LUN, a link, a switch). An iperf run also holds the resources
of its server host(s). The schedule is a list of steps; a step maps host -> the index of the run
it does in that step. The bench_run role runs the steps in order and, in a step, every host's
run at once (the linear strategy's lock-step): runs that contend are never in the same step,
unless the matrix's ``concurrency`` allows up to that many at once on purpose (N guests on one
hypervisor). Runs that contend keep the plan's order (repetitions stay interleaved across hosts)."""

from __future__ import annotations

HOST_VARS = ('bench_hypervisor_host', 'bench_contention', 'drbd_resources', 'drbd_wait_timeout', 'drbd_wait_interval',
             'drbd_wait_missing_ok', 'bench_hypervisor_disk', 'bench_hypervisor_guest', 'drbd_node_name')


class ScheduleError(ValueError):
    """A contention variable of the wrong type; the message names the host and the variable."""


def host_resources(host, hostvars):
    """The resources `host` occupies while it benchmarks; hostvars: {host: {var: value}} (only
    HOST_VARS are read)."""
    v = hostvars.get(host) or {}
    machine = v.get('bench_hypervisor_host') or host
    if not isinstance(machine, str):
        raise ScheduleError('%s: bench_hypervisor_host must be a host name, got %r' % (host, machine))
    declared = v.get('bench_contention')
    if declared is None:
        declared = []
    if isinstance(declared, str):
        declared = [declared]
    if not isinstance(declared, (list, tuple)) or not all(isinstance(r, str) and r for r in declared):
        raise ScheduleError('%s: bench_contention must be a list of resource names (a disk, a link, ...), got %r'
                            % (host, declared))
    return ['machine:%s' % machine] + sorted(set(declared))


def run_hosts(run):
    """Every host a run occupies: its own and the others its unit names (iperf: its servers and the
    concurrent pairs' clients)."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import unit
    hosts = [run['host']]
    mod = unit(run.get('tool')) if isinstance(run.get('tool'), str) else None
    if mod is not None and hasattr(mod, 'hosts'):
        for _field, h in mod.hosts(run.get('params') or {}):
            if h and h not in hosts:
                hosts.append(h)
    return hosts


def contention(plan, hostvars):
    """{host: [resources]} for every host a run of the plan occupies."""
    out = {}
    for run in plan['runs']:
        for h in run_hosts(run):
            if h not in out:
                out[h] = host_resources(h, hostvars)
    return out


def schedule_runs(runs, resources, concurrency=1):
    """The steps: a list of {host: run index}. In each step a resource is held by at most
    `concurrency` runs. The host whose next run comes first in the plan goes first, so runs that
    contend keep the plan's order (the cells of one benchmark's repetition run one right after the
    other: a comparison's two sides see the machine as it is at that moment, and a slow drift of
    its speed falls on all of them alike) and hosts that contend with none of them fill the steps
    beside them."""
    queues = {}
    order = []
    for i, run in enumerate(runs):
        if run['host'] not in queues:
            queues[run['host']] = []
            order.append(run['host'])
        queues[run['host']].append(i)
    held = [frozenset(r for h in run_hosts(run) for r in resources.get(h, ['machine:%s' % h])) for run in runs]
    heads = dict((h, 0) for h in order)
    steps = []
    left = len(runs)
    while left:
        used = {}
        step = {}
        for h in sorted((h for h in order if heads[h] < len(queues[h])), key=lambda h: queues[h][heads[h]]):
            i = queues[h][heads[h]]
            if any(used.get(r, 0) >= concurrency for r in held[i]):
                continue
            for r in held[i]:
                used[r] = used.get(r, 0) + 1
            step[h] = i
            heads[h] += 1
            left -= 1
        steps.append(step)
    return steps


def plan_schedule(plan, hostvars):
    """{'steps': schedule_runs(...), 'contention': {host: resources}, 'together': [bool per step],
    'describe': [run index], 'described_cells': [cell], 'batches': [...]} for a plan (its
    `concurrency`, default 1). A step of several hosts in a plan that runs contending hosts at once on
    purpose (concurrency > 1: "N guests at once") is `together`: its runs start on one agreed moment
    (guards.start_at), so that the step's aggregate sums runs that really ran at once. The batches
    (plugin_utils/plan/runpath.py) are what roles/bench_run runs, one call of benchlab.bench.run_benchmark
    per host and batch."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys
    from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import plan_batches
    res = contention(plan, hostvars)
    concurrency = int(plan.get('concurrency') or 1)
    steps = schedule_runs(plan['runs'], res, concurrency)
    together = [concurrency > 1 and len(step) > 1 for step in steps]
    describe = describing_runs(plan, steps, hostvars)
    return {'steps': steps, 'contention': res, 'together': together, 'describe': describe,
            'described_cells': sorted(set(plan['runs'][i]['cell'] for i in describe)),
            'batches': plan_batches(plan, steps, together, plan_keys(plan), set(describe), hostvars)}


def round_batches(plan, runs, hostvars):
    """The batches of a round of extra repetitions (`runs`: every host's, in the round's order, from
    rounds.next_round) as the bench_run role runs them: scheduled like the plan's runs (contending
    runs never in one step, and in the round's order, so a comparison's two sides run one right
    after the other), one at a time on purpose (a round's runs are never started together). Each
    run is carried without a plan index or step (a round's run is none of the plan's)."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys
    from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import plan_batches
    sub = dict(plan, runs=runs)
    steps = schedule_runs(runs, contention(sub, hostvars), 1)
    batches = plan_batches(sub, steps, [False] * len(steps), plan_keys(plan), set(), hostvars)
    for b in batches:
        for part in b['hosts'].values():
            for r in part['runs']:
                r['index'] = None
                r.pop('step', None)
    return batches


def describing_runs(plan, steps, hostvars=None):
    """The runs that describe their cell's environment themselves (the modules' option describe):
    each cell's first run in the schedule (one module run less per cell than a sysinfo task), unless
    that run has phases (work on other hosts first: a DRBD host's wait for UpToDate, a hypervisor's
    cache drop): such a cell is described by the sysinfo task, before any of its runs, as it was found.
    Sorted indices."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import run_phases
    seen, out = set(), []
    for step in steps:
        for i in sorted(step.values()):
            cell = plan['runs'][i]['cell']
            if cell not in seen:
                seen.add(cell)
                if not run_phases(plan['runs'][i], hostvars or {}):
                    out.append(i)
    return sorted(out)
