# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: schedule_runs
short_description: Order a plan's runs into steps in which no two contending hosts run at once
version_added: 0.1.0
description:
  - For a plan from M(benchlab.bench.matrix_plan) and the inventory's C(hostvars), returns the
    steps the C(benchlab.bench.bench_run) role runs in order. In a step every host with a run does
    it at the same time; hosts that share a resource never run in the same step.
  - A host holds the machine it runs on (its C(bench_hypervisor_host), else itself) and every
    resource its C(bench_contention) host variable names (a disk, a SAN LUN, a link, a switch; any
    string). An iperf run also holds the resources of its server host(s).
  - The matrix's C(concurrency) (default V(1)) lets that many runs share a resource on purpose,
    e.g. N guests of one hypervisor at once; their records carry C(params.guards.concurrency).
  - Runs that contend keep the plan's order (the host whose next run comes first in the plan goes first).
options:
  _input:
    description: The plan.
    type: dict
    required: true
  hostvars:
    description:
      - The inventory's C(hostvars) (only C(bench_hypervisor_host), C(bench_hypervisor_disk), C(bench_hypervisor_guest),
        C(bench_contention), C(drbd_resources), C(drbd_node_name) and the C(drbd_wait_*) variables are read; a
        DRBD host's peers are looked up by their node names).
    type: dict
    required: true
  gate:
    description:
      - Runs a variance gate asks for on one host (M(benchlab.bench.gate_runs)); only their batches are
        returned (C(gate_batches)), in order.
    type: list
    elements: dict
  extra:
    description:
      - The runs of a round of extra repetitions on every host (M(benchlab.bench.round_runs)), in the round's
        order; only their batches are returned (C(batches)), scheduled as the plan's runs are, so that runs
        that contend keep that order across hosts.
    type: list
    elements: dict
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Schedule the runs
  ansible.builtin.set_fact:
    schedule: "{{ bench_plan | benchlab.bench.schedule_runs(hostvars) }}"
  run_once: true

- name: Two guests on one hypervisor take turns; this one shares a SAN LUN with guest-3
  # inventory host vars
  ansible.builtin.debug:
    msg: "guest-1: bench_hypervisor_host=hv1, bench_contention=[lun-7]"
'''

RETURN = r'''
_value:
  description:
    - C(steps) (a list of mappings host -> index of the run in the plan's C(runs)), C(contention) (host -> the
      resources it holds), C(together) (per step, whether its runs start on one agreed moment), C(describe) (the
      runs that describe their cell's environment) and C(batches) (what the C(benchlab.bench.bench_run) role runs,
      per batch and host one call of C(benchlab.bench.run_benchmark) with C(runs), the C(phases) on other hosts
      around them and the agreed start; see C(plugins/plugin_utils/plan/runpath.py)).
    - With O(gate), C(gate_batches) only; with O(extra), C(batches) only.
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import PhaseError, gate_batches
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.schedule import HOST_VARS, ScheduleError, plan_schedule, round_batches, run_hosts


def _known(runs, hostvars):
    known = {}
    for h in sorted(set(h for run in runs for h in run_hosts(run))):
        try:
            v = hostvars[h]
        except KeyError:  # a host outside the inventory holds only itself
            continue
        known[h] = dict((k, v.get(k)) for k in HOST_VARS)
    # a DRBD host's peers the inventory names (their observers: plugin_utils/plan/runpath.py drbd_peers)
    for v in list(known.values()):
        for res in v.get('drbd_resources') or []:
            for node in (res.get('nodes') or []) if isinstance(res, dict) else []:
                name = node.get('name') if isinstance(node, dict) else None
                if isinstance(name, str) and name not in known and name in hostvars:
                    known[name] = {}
    return known


def schedule_runs(plan, hostvars, gate=None, extra=None):
    if not isinstance(plan, dict) or not isinstance(plan.get('runs'), list):
        raise AnsibleFilterError('schedule_runs: the input must be a plan from benchlab.bench.matrix_plan')
    try:
        if extra is not None:
            return {'batches': round_batches(plan, list(extra), _known(extra, hostvars))}
        if gate is not None:
            return {'gate_batches': gate_batches(plan, list(gate), plan_keys(plan), _known(gate, hostvars))}
        return plan_schedule(plan, _known(plan['runs'], hostvars))
    except (ScheduleError, PhaseError) as e:
        raise AnsibleFilterError('schedule_runs: %s' % e)
    except (KeyError, TypeError, AttributeError) as e:
        raise AnsibleFilterError('schedule_runs: malformed plan: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'schedule_runs': schedule_runs}
