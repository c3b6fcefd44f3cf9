#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: drbd_md
short_description: Create or wipe DRBD meta-data, refusing a backing disk that holds data
version_added: 0.1.0
description:
  - Finds the resource's backing disk (and external meta-data disk) on this host with
    C(drbdadm sh-ll-dev) / C(sh-md-dev), probes them with C(blkid -p) and C(wipefs), and only then
    runs C(drbdadm create-md).
  - Safe mode (the default) refuses a disk that carries a filesystem, partition table, LVM, RAID,
    swap or any other signature, unless O(force=true). A mounted disk is always refused.
  - Meta-data that already exists (C(drbdadm get-gi) reads it) is left alone, so a second run
    changes nothing.
  - O(state=absent) wipes the meta-data (C(drbdadm wipe-md --force)); the resource must be down.
  - Works without the DRBD kernel module (drbdmeta writes the disk directly).
author:
  - benchlab.bench maintainers (@benchlab)
options:
  name:
    description: The resource.
    type: str
    required: true
  state:
    description: V(present) creates the meta-data, V(absent) wipes it.
    type: str
    choices: [present, absent]
    default: present
  force:
    description:
      - Create the meta-data even over existing signatures (DESTROYS the data on the disk) or
        over existing DRBD meta-data.
    type: bool
    default: false
  config_file:
    description: The drbd.conf to read (drbdadm -c); default drbdadm's own (/etc/drbd.conf).
    type: path
  drbdadm:
    description: The drbdadm executable (default found in PATH).
    type: path
attributes:
  check_mode:
    support: full
    description: Probes the disks and returns C(cmd) without writing.
  diff_mode:
    support: none
    description: Nothing to diff.
'''

EXAMPLES = r'''
- name: Create the meta-data on a brand-new backing disk (refuses a disk with a filesystem)
  benchlab.bench.drbd_md:
    name: drbd0
'''

RETURN = r'''
devices:
  description: The probed devices with C(device), C(verdict) (V(empty), V(drbd), V(other)), C(description), C(signatures).
  returned: always
  type: list
  elements: dict
md_exists:
  description: Whether DRBD meta-data was there before the run.
  returned: always
  type: bool
cmd:
  description: The drbdadm argv that ran (or would run in check mode); empty when nothing was needed.
  returned: always
  type: list
  elements: str
'''

import os
import stat

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.common import read_text
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import (
    DrbdParseError, parse_blkid_export, parse_wipefs_json, signature_verdict, step_argv)
from ansible_collections.benchlab.bench.plugins.module_utils.runner import fail, run
from ansible_collections.benchlab.bench.plugins.module_utils.sysinfo import is_mounted_device, parse_mountinfo


def probe(module, dev):
    """blkid + wipefs verdict for one device."""
    if not os.path.exists(dev):
        module.fail_json(msg='backing device %s does not exist on this host' % dev)
    st = os.stat(dev)
    majmin = '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev)) if stat.S_ISBLK(st.st_mode) else None
    if is_mounted_device(majmin, dev, parse_mountinfo(read_text('/proc/self/mountinfo'))):
        module.fail_json(msg='refusing to touch %s: it is mounted' % dev)
    blkid_bin = module.get_bin_path('blkid', required=True)
    wipefs_bin = module.get_bin_path('wipefs', required=True)
    b = run(module, [blkid_bin, '-p', '-o', 'export', dev])
    if b.rc not in (0, 2):
        fail(module, 'blkid', b)
    w = run(module, [wipefs_bin, '-J', dev])
    if w.rc != 0:
        fail(module, 'wipefs', w)
    try:
        blkid = parse_blkid_export(b.stdout if b.rc == 0 else '')
        sigs = parse_wipefs_json(w.stdout)
    except DrbdParseError as e:
        module.fail_json(msg=str(e))
    verdict, desc = signature_verdict(blkid, sigs)
    return dict(device=dev, verdict=verdict, description=desc, signatures=sigs, blkid=blkid)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            force=dict(type='bool', default=False),
            config_file=dict(type='path'),
            drbdadm=dict(type='path'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    drbdadm = p['drbdadm'] or module.get_bin_path('drbdadm', required=True)
    base = [drbdadm] + (['-c', p['config_file']] if p['config_file'] else [])
    name = p['name']

    ll = run(module, base + ['sh-ll-dev', name])
    if ll.rc != 0 or not ll.stdout.strip():
        fail(module, 'drbdadm sh-ll-dev (is resource %s defined for this host, `uname -n` = %s?)'
             % (name, os.uname()[1]), ll)
    md = run(module, base + ['sh-md-dev', name])
    devices = [ll.stdout.strip().splitlines()[0]]
    if md.rc == 0 and md.stdout.strip() and md.stdout.strip() not in ('internal', devices[0]):
        devices.append(md.stdout.strip().splitlines()[0])
    probes = [probe(module, d) for d in devices]
    gi = run(module, base + ['get-gi', name])
    md_exists = gi.rc == 0 or any(pr['verdict'] == 'drbd' for pr in probes)

    cmd = []
    if p['state'] == 'absent':
        if md_exists:
            cmd = step_argv('wipe-md', name, drbdadm, p['config_file'])
    else:
        if md_exists and not p['force']:
            module.exit_json(changed=False, devices=probes, md_exists=True, cmd=[])
        dirty = [pr for pr in probes if pr['verdict'] == 'other']
        if dirty and not p['force']:
            module.fail_json(
                msg=('safe mode: refusing create-md for %s: %s carries %s. create-md would overwrite the end of '
                     'the disk and DRBD would expose the old data as the replicated device. Wipe it yourself '
                     '(wipefs -a) or set force: true if this data is really disposable.'
                     % (name, dirty[0]['device'], dirty[0]['description'])),
                devices=probes, md_exists=md_exists, cmd=[])
        cmd = step_argv('force-create-md' if p['force'] else 'create-md', name, drbdadm, p['config_file'])

    if not cmd or module.check_mode:
        module.exit_json(changed=bool(cmd), devices=probes, md_exists=md_exists, cmd=cmd)
    # stdin is not a terminal: drbdmeta never waits for a confirmation.
    res = run(module, cmd, data='')
    if res.rc != 0:
        fail(module, 'drbdadm %s' % ('wipe-md' if p['state'] == 'absent' else 'create-md'), res,
             devices=probes, md_exists=md_exists)
    module.exit_json(changed=True, devices=probes, md_exists=md_exists, cmd=cmd,
                     stdout=res.stdout, stderr=res.stderr)


if __name__ == '__main__':
    main()
