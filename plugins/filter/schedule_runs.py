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
  - Each host's runs keep their plan order.
options:
  _input:
    description: The plan.
    type: dict
    required: true
  hostvars:
    description: The inventory's C(hostvars) (only C(bench_hypervisor_host), C(bench_contention) and C(drbd_resources) are read).
    type: dict
    required: true
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
  description: C(steps) (a list of mappings host -> index of the run in the plan's C(runs)) and
    C(contention) (host -> the resources it holds), and C(one_task) (per step, whether each of its
    runs is one C(benchlab.bench.run_benchmark) task, that is no iperf, no async run, no hypervisor
    host or DRBD resources to prepare).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.plugin_utils.schedule import HOST_VARS, ScheduleError, plan_schedule, run_hosts


def schedule_runs(plan, hostvars):
    if not isinstance(plan, dict) or not isinstance(plan.get('runs'), list):
        raise AnsibleFilterError('schedule_runs: the input must be a plan from benchlab.bench.matrix_plan')
    try:
        hosts = sorted(set(h for run in plan['runs'] for h in run_hosts(run)))
        known = {}
        for h in hosts:
            try:
                v = hostvars[h]
            except KeyError:  # a host outside the inventory holds only itself
                continue
            known[h] = dict((k, v.get(k)) for k in HOST_VARS)
        return plan_schedule(plan, known)
    except ScheduleError as e:
        raise AnsibleFilterError('schedule_runs: %s' % e)
    except (KeyError, TypeError, AttributeError) as e:
        raise AnsibleFilterError('schedule_runs: malformed plan: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'schedule_runs': schedule_runs}
