#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: drbd_lifecycle
short_description: Bring a DRBD resource up, promote, demote, disconnect or take it down
version_added: 0.1.0
description:
  - Reads the resource's state (C(drbdsetup status --json)), plans the drbdadm steps that take it
    to O(state) and runs them; a resource already there is left alone.
  - For a brand-new resource (both sides Inconsistent), O(initial_sync=full) promotes with
    C(primary --force) (full initial sync from this node) and O(initial_sync=skip) runs
    C(new-current-uuid --clear-bitmap) first (no initial sync; only for disks known identical,
    such as two unused, freshly created ones).
  - Returns C(cmd) (the drbdadm argv) and C(dry_run) (the drbdsetup/drbdmeta calls drbdadm would
    make, from C(drbdadm -d), with the shared secret masked), also in check mode.
  - Needs the DRBD kernel module for everything except check mode.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  name:
    description: The resource.
    type: str
    required: true
  state:
    description:
      - V(up) attaches and connects; V(primary) / V(secondary) set the role (bringing it up first);
        V(disconnected) leaves it up but StandAlone (the no-replication baseline); V(connected)
        reconnects a StandAlone resource; V(down) takes it down.
    type: str
    choices: [up, primary, secondary, disconnected, connected, down]
    required: true
  initial_sync:
    description: What a brand-new resource does when promoted (see above).
    type: str
    choices: [none, full, skip]
    default: none
  config_file:
    description: The drbd.conf to read (drbdadm -c); default drbdadm's own.
    type: path
  drbdadm:
    description: The drbdadm executable (default found in PATH).
    type: path
  drbdsetup:
    description: The drbdsetup executable (default found in PATH).
    type: path
attributes:
  check_mode:
    support: full
    description: Plans, returns C(cmd) and C(dry_run), runs nothing that changes state.
  diff_mode:
    support: none
    description: Nothing to diff.
'''

EXAMPLES = r'''
- name: Promote node1, with a full initial sync when the resource is brand new
  benchlab.bench.drbd_lifecycle:
    name: drbd0
    state: primary
    initial_sync: full
'''

RETURN = r'''
plan:
  description: The lifecycle steps (create-md, up, force-primary, ...) that ran or would run.
  returned: always
  type: list
  elements: str
cmd:
  description: One drbdadm argv per step.
  returned: always
  type: list
  elements: list
dry_run:
  description: What C(drbdadm -d) printed for the steps (drbdsetup/drbdmeta calls; secret masked).
  returned: always
  type: list
  elements: str
before:
  description: The resource's state before (entries of C(drbdsetup status --json)); empty when it was not up.
  returned: always
  type: list
  elements: dict
kernel_module:
  description: Whether the DRBD kernel module is loaded.
  returned: always
  type: bool
'''

import os
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.drbd import (
    DrbdParseError, lifecycle_plan, parse_status_json, step_argv)
from ansible_collections.benchlab.bench.plugins.module_utils.runner import fail, run

_SECRET_RE = re.compile(r'(--shared-secret=)(\S+)')


def kernel_module_loaded():
    return os.path.exists('/proc/drbd') or os.path.isdir('/sys/module/drbd')


def read_state(module, drbdsetup, name):
    """The resource's entries, [] when it is not up or the module is not loaded."""
    if not drbdsetup or not kernel_module_loaded():
        return []
    res = run(module, [drbdsetup, 'status', name, '--json'])
    if res.rc != 0:
        return []
    try:
        return [e for e in parse_status_json(res.stdout) if e['name'] == name]
    except DrbdParseError as e:
        module.fail_json(msg=str(e))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', required=True,
                       choices=['up', 'primary', 'secondary', 'disconnected', 'connected', 'down']),
            initial_sync=dict(type='str', choices=['none', 'full', 'skip'], default='none'),
            config_file=dict(type='path'),
            drbdadm=dict(type='path'),
            drbdsetup=dict(type='path'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    drbdadm = p['drbdadm'] or module.get_bin_path('drbdadm', required=True)
    drbdsetup = p['drbdsetup'] or module.get_bin_path('drbdsetup')
    loaded = kernel_module_loaded()
    before = read_state(module, drbdsetup, p['name'])
    current = before[0] if before else None
    plan = lifecycle_plan(p['state'], current, p['initial_sync'])
    cmds = [step_argv(s, p['name'], drbdadm, p['config_file']) for s in plan]

    dry = []
    for argv in cmds:
        res = run(module, [argv[0], '-d'] + argv[1:])
        if res.rc != 0:
            fail(module, 'drbdadm -d %s' % ' '.join(argv[1:]), res, plan=plan, cmd=cmds)
        dry += [_SECRET_RE.sub(r'\1********', line) for line in res.stdout.splitlines() if line.strip()]
    result = dict(plan=plan, cmd=cmds, dry_run=dry, before=before, kernel_module=loaded)
    if module.check_mode or not plan:
        if module.check_mode and plan and not loaded:
            module.warn('the DRBD kernel module is not loaded here: a real run would fail')
        module.exit_json(changed=bool(plan), **result)
    for step, argv in zip(plan, cmds):
        res = run(module, argv, data='')
        if res.rc != 0:
            fail(module, 'drbdadm %s (step %s)' % (' '.join(argv[1:]), step), res, **result)
    result['after'] = read_state(module, drbdsetup, p['name'])
    module.exit_json(changed=True, **result)


if __name__ == '__main__':
    main()
