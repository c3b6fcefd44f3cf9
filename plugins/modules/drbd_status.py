#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: drbd_status
short_description: Read DRBD state, optionally waiting until no resync runs
version_added: 0.1.0
description:
  - Runs C(drbdsetup status --json) (DRBD 9) or C(drbdsetup status --verbose --statistics) (an 8.4
    kernel module, whose drbdsetup-84 has no JSON) and returns one entry per resource volume in the shape
    C(benchlab.bench.sysinfo) reports as C(drbd) (name, disk_state, peer_disk_state, replication,
    connection, role, sync_percent, peers).
  - With O(wait=uptodate) it polls until every volume is UpToDate and no connected peer is
    resyncing or behind, and fails after O(timeout) seconds naming what is still moving; the
    C(benchlab.bench.drbd) role's C(wait_synced) tasks call it before a benchmark cell.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  names:
    description: The resources to read (default all; resource names only, not the keyword C(all)).
    type: list
    elements: str
    default: []
  wait:
    description: V(none) reads once; V(uptodate) waits as described above.
    type: str
    choices: [none, uptodate]
    default: none
  timeout:
    description: Seconds to wait for O(wait=uptodate).
    type: int
    default: 600
  interval:
    description: Seconds between polls.
    type: int
    default: 5
  missing_ok:
    description: Return an empty list instead of failing when the DRBD kernel module is not loaded.
    type: bool
    default: false
  drbdsetup:
    description: The drbdsetup executable (default found in PATH).
    type: path
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same in check mode.
  diff_mode:
    support: none
    description: Nothing to diff.
'''

EXAMPLES = r'''
- name: Do not start a cell while a resync runs
  benchlab.bench.drbd_status:
    names: [drbd0]
    wait: uptodate
    timeout: 1800
'''

RETURN = r'''
drbd:
  description: One entry per resource volume (see parse_status_json in module_utils/drbd/drbd_status.py).
  returned: always
  type: list
  elements: dict
settled:
  description: Whether every volume was UpToDate with no resync.
  returned: always
  type: bool
kernel_module:
  description: Whether the DRBD kernel module is loaded.
  returned: always
  type: bool
waited_s:
  description: Seconds spent waiting.
  returned: always
  type: float
'''

import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_status import settled, status_argv
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import (
    DrbdConfigError, DrbdParseError, check_name)
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import fail, run


def _read_proc_drbd():
    try:
        with open('/proc/drbd') as f:
            return f.readline()
    except (IOError, OSError):
        return ''


def main():
    module = AnsibleModule(
        argument_spec=dict(
            names=dict(type='list', elements='str', default=[]),
            wait=dict(type='str', choices=['none', 'uptodate'], default='none'),
            timeout=dict(type='int', default=600),
            interval=dict(type='int', default=5),
            missing_ok=dict(type='bool', default=False),
            drbdsetup=dict(type='path'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    for i, name in enumerate(p['names']):
        try:
            check_name(name, 'names[%d]' % i)
        except DrbdConfigError as e:
            module.fail_json(msg='%s (leave names empty to read every resource)' % e, drbd=[])
    loaded = os.path.exists('/proc/drbd') or os.path.isdir('/sys/module/drbd')
    if not loaded:
        if p['missing_ok']:
            module.exit_json(changed=False, drbd=[], settled=True, kernel_module=False, waited_s=0.0)
        module.fail_json(msg='the DRBD kernel module is not loaded on this host (no /proc/drbd)', drbd=[],
                         kernel_module=False)
    drbdsetup = p['drbdsetup'] or module.get_bin_path('drbdsetup', required=True)
    proc_drbd = _read_proc_drbd()
    start = time.monotonic()
    while True:
        entries = []
        for name in p['names'] or [None]:
            argv, parse = status_argv(drbdsetup, name, proc_drbd)
            res = run(module, argv)
            if res.rc != 0:
                fail(module, 'drbdsetup status', res, extra='is resource %s up?' % name if name else None)
            try:
                entries += parse(res.stdout)
            except DrbdParseError as e:
                module.fail_json(msg=str(e))
        ok, reason = settled(entries)
        waited = round(time.monotonic() - start, 1)
        if p['wait'] == 'none' or ok:
            module.exit_json(changed=False, drbd=entries, settled=ok, kernel_module=True, waited_s=waited)
        if waited >= p['timeout']:
            module.fail_json(msg='DRBD did not settle within %ds: %s' % (p['timeout'], reason), drbd=entries,
                             settled=False, kernel_module=True, waited_s=waited)
        time.sleep(max(1, p['interval']))


if __name__ == '__main__':
    main()
