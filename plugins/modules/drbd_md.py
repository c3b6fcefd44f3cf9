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
  - Finds every backing disk and meta-data disk of the resource on this host, for every volume
    (C(drbdadm sh-ll-dev) / C(sh-md-dev) print one line per volume), probes each with C(blkid -p)
    and C(wipefs), and only then runs C(drbdadm create-md).
  - Safe mode (the default) refuses a disk that carries a filesystem, partition table, LVM, RAID,
    swap or any other signature, unless O(force=true).
  - Before it writes (create-md, wipe-md) every disk it would write goes through the collection's
    device guard (module_utils/run/devguard.py). A disk that is mounted, has a mounted partition, has
    holders (device-mapper, md, a DRBD device that is up), is active swap or is busy (O_EXCL) is
    always refused, naming the disk, what holds it and how to release it; no option overrides that.
  - Meta-data that already exists on every volume (C(drbdadm get-gi) reads it) is left alone, so a
    second run changes nothing; meta-data on some volumes only is refused unless O(force=true).
  - "O(state=absent) wipes the meta-data (C(drbdadm -- --force wipe-md); drbdadm-84 has no C(wipe-md --force)); the resource must be down."
  - Works without the DRBD kernel module (drbdmeta writes the disk directly).
author:
  - benchlab.bench maintainers (@benchlab)
options:
  name:
    description:
      - The resource. Not C(all) or another drbdadm keyword (drbdadm would act on every resource).
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
  description:
    - The probed devices (the backing disks and meta-data disks of every volume, each once) with
      C(device), C(role) (V(disk), V(meta-disk) or V(disk+meta-disk)), C(verdict) (V(empty),
      V(drbd), V(other)), C(description), C(signatures).
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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import (
    DRBD_MAGIC_OFFSET, DRBD_MAGICS, DeviceGuardError, check_device_writable)
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_lifecycle import step_argv
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_signature import (
    parse_blkid_export, parse_wipefs_json, signature_verdict)
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import (
    DrbdConfigError, DrbdParseError, check_name)
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import fail, run


def probe(module, dev, role):
    """blkid + wipefs verdict for one device."""
    if not os.path.exists(dev):
        module.fail_json(msg='%s %s of the resource does not exist on this host' % (role, dev))
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
    if verdict == 'empty' and role == 'meta-disk':
        # external meta-data starts at the device's first byte, where blkid does not look for it
        found = external_md(dev)
        if found:
            verdict, desc = 'drbd', 'DRBD meta-data (external, %s)' % found
    return dict(device=dev, role=role, verdict=verdict, description=desc, signatures=sigs, blkid=blkid)


def external_md(dev):
    """The DRBD meta-data magic at the start of an external meta-data device, or None."""
    try:
        with open(dev, 'rb') as f:
            head = f.read(DRBD_MAGIC_OFFSET + 4)
    except (IOError, OSError):
        return None
    if len(head) < DRBD_MAGIC_OFFSET + 4:
        return None
    return DRBD_MAGICS.get(int.from_bytes(head[DRBD_MAGIC_OFFSET:DRBD_MAGIC_OFFSET + 4], 'big'))


def lines(text):
    return [ln.strip() for ln in (text or '').splitlines() if ln.strip()]


def guard(module, probes, what, **result):
    """Every device through the device guard (in use: mounted, holders, swap, busy). The signature
    check is this module's own safe mode (force=True here), which knows DRBD meta-data is expected."""
    for pr in probes:
        try:
            check_device_writable(pr['device'], destructive=True, force=True, what=what)
        except DeviceGuardError as e:
            module.fail_json(msg=str(e), devices=probes, **result)


def probe_resource(module, base, name):
    """(probes, md_probes, md_all, md_any): a probe of every backing and meta-data device of the
    resource, and whether DRBD meta-data is on all / any of its meta-data devices."""
    ll = run(module, base + ['sh-ll-dev', name])
    if ll.rc != 0 or not ll.stdout.strip():
        fail(module, 'drbdadm sh-ll-dev (is resource %s defined for this host, `uname -n` = %s?)'
             % (name, os.uname()[1]), ll)
    md = run(module, base + ['sh-md-dev', name])
    if md.rc != 0:
        fail(module, 'drbdadm sh-md-dev', md)
    # one line per volume: the backing disks, and where each volume's meta-data lives (the backing
    # disk itself for internal meta-data)
    disks = lines(ll.stdout)
    md_devs = [d for d in lines(md.stdout) if d != 'internal'] or list(disks)
    roles = {}
    for d in disks:
        roles[d] = 'disk'
    for d in md_devs:
        roles[d] = 'disk+meta-disk' if roles.get(d) == 'disk' else 'meta-disk'
    probes = [probe(module, d, r) for d, r in roles.items()]
    md_probes = [pr for pr in probes if 'meta-disk' in pr['role']]
    gi = run(module, base + ['get-gi', name])
    md_all = gi.rc == 0 or all(pr['verdict'] == 'drbd' for pr in md_probes)
    md_any = gi.rc == 0 or any(pr['verdict'] == 'drbd' for pr in md_probes)
    return probes, md_probes, md_all, md_any


def create_cmd(module, p, drbdadm, probes, md_probes, md_all, md_any):
    """state present: the create-md argv, or exit when the meta-data is there; refuses partial
    meta-data and disks that carry data unless force."""
    name, md_exists = p['name'], md_any
    if md_all and not p['force']:
        module.exit_json(changed=False, devices=probes, md_exists=True, cmd=[])
    if md_any and not p['force']:
        have = [pr['device'] for pr in md_probes if pr['verdict'] == 'drbd']
        lack = [pr['device'] for pr in md_probes if pr['verdict'] != 'drbd']
        module.fail_json(msg=('refusing create-md for %s: DRBD meta-data is on %s but not on %s (a volume was '
                              'added or wiped by hand?). Create it for that volume yourself (drbdadm create-md '
                              '%s/<volume>) or set force: true to create it for every volume again.'
                              % (name, ', '.join(have), ', '.join(lack), name)),
                         devices=probes, md_exists=True, cmd=[])
    dirty = [pr for pr in probes if pr['verdict'] == 'other']
    if dirty and not p['force']:
        module.fail_json(
            msg=('safe mode: refusing create-md for %s: %s carries %s. create-md would overwrite the end of '
                 'the disk and DRBD would expose the old data as the replicated device. Wipe it yourself '
                 '(wipefs -a) or set force: true if this data is really disposable.'
                 % (name, ', '.join(pr['device'] for pr in dirty),
                    '; '.join('%s (%s)' % (pr['description'], pr['device']) if len(dirty) > 1 else
                              pr['description'] for pr in dirty))),
            devices=probes, md_exists=md_exists, cmd=[])
    guard(module, probes, 'create DRBD meta-data of resource %s on' % name, md_exists=md_exists, cmd=[])
    return step_argv('force-create-md' if p['force'] else 'create-md', name, drbdadm, p['config_file'])


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
    try:
        # `all` would make drbdadm act on every resource of the host, `-x` would be an option
        check_name(name, 'name')
    except DrbdConfigError as e:
        module.fail_json(msg=str(e), devices=[], md_exists=False, cmd=[])
    probes, md_probes, md_all, md_any = probe_resource(module, base, name)
    md_exists = md_any

    cmd = []
    if p['state'] == 'absent':
        if md_any:
            # wipe-md writes the meta-data areas only; none may be in use (a resource that is up
            # holds them)
            guard(module, md_probes, 'wipe the DRBD meta-data of resource %s on' % name, md_exists=md_exists, cmd=[])
            cmd = step_argv('wipe-md', name, drbdadm, p['config_file'])
    else:
        cmd = create_cmd(module, p, drbdadm, probes, md_probes, md_all, md_any)

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
