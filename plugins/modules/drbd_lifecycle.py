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
  - The shared secrets of the configuration (read from O(config_file) and the files it includes,
    also when drbdadm cannot parse them) are registered as no_log values before any command runs,
    so they are masked in the result and in every failure (with the first characters drbdadm quotes
    of a rejected value).
  - O(state=mounted) makes the benchmark filesystem on the resource's DRBD device (volume 0) when
    it has none and mounts it on O(mount). mkfs goes through the collection's device guard (a
    device that is mounted, held, swap or busy is refused). O(state=unmounted) unmounts it; with
    nothing mounted on O(mount) it does nothing, without asking drbdadm (a second teardown, after
    the resource file was removed, is a no-op).
    Both act only when what is mounted on O(mount) is the resource's DRBD device (compared by
    major:minor from mountinfo, never by name); anything else mounted there is refused, never
    benchmarked or unmounted.
  - Needs the DRBD kernel module for everything except check mode (and O(state=unmounted) when
    nothing of the resource is mounted).
author:
  - benchlab.bench maintainers (@benchlab)
options:
  name:
    description:
      - The resource. Not C(all) or another drbdadm keyword (drbdadm would act on every resource).
    type: str
    required: true
  state:
    description:
      - V(up) attaches and connects; V(primary) / V(secondary) set the role (bringing it up first);
        V(disconnected) leaves it up but StandAlone (the no-replication baseline); V(connected)
        reconnects a StandAlone resource; V(down) takes it down.
      - V(mounted) / V(unmounted) make and mount / unmount the filesystem on O(mount) (see above);
        they do not change the DRBD state (promote first).
    type: str
    choices: [up, primary, secondary, disconnected, connected, down, mounted, unmounted]
    required: true
  mount:
    description: The mount point, for O(state=mounted) and O(state=unmounted).
    type: path
  fstype:
    description: The filesystem O(state=mounted) makes on a DRBD device that has none (C(mkfs.<fstype>)).
    type: str
    default: ext4
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

- name: Make the benchmark filesystem and mount it (refused if something else is mounted there)
  benchlab.bench.drbd_lifecycle:
    name: drbd0
    state: mounted
    mount: /srv/bench-drbd
    fstype: ext4
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
planned_cmd:
  description: On a failed step, every planned argv (C(cmd) is then the argv that failed).
  returned: on failure of a step
  type: list
  elements: list
device:
  description: The resource's DRBD device (volume 0) for O(state=mounted) / O(state=unmounted);
    null for O(state=unmounted) when nothing is mounted on O(mount).
  returned: when state is mounted or unmounted
  type: str
mounted:
  description: What was mounted on O(mount) before (C(source), C(fstype), C(major_minor)), null when nothing.
  returned: when state is mounted or unmounted
  type: dict
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import read_text
from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import DeviceGuardError, check_device_writable
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_lifecycle import (
    lifecycle_plan, mount_verdict, step_argv)
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_secrets import (
    config_files_secrets, drbdadm_secrets, redact_output, secret_forms)
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_status import status_argv
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import (
    DRBD_MAJOR, DrbdConfigError, DrbdParseError, check_name)
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import CommandResult, fail, run
from ansible_collections.benchlab.bench.plugins.module_utils.observe.sysinfo import parse_mountinfo

MAIN_CONFIG = '/etc/drbd.conf'


def kernel_module_loaded():
    return os.path.exists('/proc/drbd') or os.path.isdir('/sys/module/drbd')


class Secrets(object):
    """The shared secrets, registered with Ansible's no_log values as soon as they are known; every
    command result passes through masked() before any part of it is returned."""

    def __init__(self, module, config_file):
        self.module = module
        self.values = config_files_secrets(config_file or MAIN_CONFIG)
        module.no_log_values.update(secret_forms(self.values))

    def learn(self, text):
        new = [s for s in drbdadm_secrets(text) if s not in self.values]
        self.values += new
        self.module.no_log_values.update(secret_forms(new))

    def masked(self, res):
        self.learn(res.stdout)
        self.learn(res.stderr)
        return CommandResult(res.argv, res.rc, redact_output(res.stdout, self.values),
                             redact_output(res.stderr, self.values), res.duration_s)


def fail_step(module, what, res, **result):
    """fail() with the result so far: its `cmd` (every planned argv) becomes `planned_cmd`, since
    `cmd` is the failed command's argv."""
    extra = dict(result)
    if 'cmd' in extra:
        extra['planned_cmd'] = extra.pop('cmd')
    fail(module, what, res, **extra)


def _read_proc_drbd():
    try:
        with open('/proc/drbd') as f:
            return f.readline()
    except (IOError, OSError):
        return ''


def read_state(module, drbdsetup, name):
    """The resource's entries, [] when it is not up or the module is not loaded."""
    if not drbdsetup or not kernel_module_loaded():
        return []
    argv, parse = status_argv(drbdsetup, name, _read_proc_drbd())
    res = run(module, argv)
    if res.rc != 0:
        return []
    try:
        return [e for e in parse(res.stdout) if e['name'] == name]
    except DrbdParseError as e:
        module.fail_json(msg=str(e))


def resource_minor(module, p, drbdadm, secrets):
    """The minor of the resource's DRBD device on this host (drbdadm sh-minor)."""
    name = p['name']
    base = [drbdadm] + (['-c', p['config_file']] if p['config_file'] else [])
    res = secrets.masked(run(module, base + ['sh-minor', name]))
    minors = [ln.strip() for ln in res.stdout.splitlines() if ln.strip()]
    if res.rc != 0 or not minors or not minors[0].isdigit():
        fail(module, 'drbdadm sh-minor (is resource %s defined for this host, `uname -n` = %s?)'
             % (name, os.uname()[1]), res)
    return int(minors[0])


def filesystem(module, p, drbdadm, secrets, loaded):
    """state mounted / unmounted: act only on the resource's own DRBD device at the mount point."""
    name, state = p['name'], p['state']
    if not p['mount']:
        module.fail_json(msg='state %s needs mount (the mount point of resource %s)' % (state, name))
    mount = os.path.normpath(p['mount'])
    mountpoint = os.path.realpath(mount) if os.path.exists(mount) else mount
    mounts = parse_mountinfo(read_text('/proc/self/mountinfo'))
    if state == 'unmounted' and mount_verdict(mounts, mountpoint, -1)[0] == 'none':
        # nothing mounted there: nothing to do, also when the resource is no longer defined (a second
        # teardown after its file was removed)
        module.exit_json(changed=False, plan=[], cmd=[], dry_run=[], before=[], kernel_module=loaded, device=None,
                         mounted=None)
    minor = resource_minor(module, p, drbdadm, secrets)
    device = '/dev/drbd%d' % minor
    verdict, entry = mount_verdict(mounts, mountpoint, minor)
    shown = dict(source=entry['source'], fstype=entry['fstype'], major_minor=entry['major_minor']) if entry else None
    result = dict(plan=[], cmd=[], dry_run=[], before=[], kernel_module=loaded, device=device, mounted=shown)
    if verdict == 'foreign':
        module.fail_json(msg=('refusing to %s %s for resource %s: %s (%s, device %s) is mounted there, not the '
                              "resource's DRBD device %s (%d:%d). benchlab neither benchmarks nor unmounts a "
                              'filesystem it did not make: unmount it yourself, or give the resource another mount.'
                              % ('use' if state == 'mounted' else 'unmount', mount, name, entry['source'],
                                 entry['fstype'], entry['major_minor'], device, DRBD_MAJOR, minor)), **result)
    if state == 'unmounted':
        return unmount(module, mountpoint, verdict, secrets, result)
    if verdict == 'ours':
        module.exit_json(changed=False, **result)
    return mount_new(module, p, device, mountpoint, secrets, result)


def unmount(module, mountpoint, verdict, secrets, result):
    """state unmounted: umount the resource's own filesystem (verdict 'ours'), or nothing ('none')."""
    if verdict == 'none':
        module.exit_json(changed=False, **result)
    argv = [module.get_bin_path('umount', required=True), mountpoint]
    result.update(plan=['umount'], cmd=[argv])
    if module.check_mode:
        module.exit_json(changed=True, **result)
    res = secrets.masked(run(module, argv))
    if res.rc != 0:
        fail_step(module, 'umount %s' % mountpoint, res, **result)
    module.exit_json(changed=True, **result)


def mount_new(module, p, device, mountpoint, secrets, result):
    """state mounted with nothing mounted there: mkfs when the device has no filesystem, then mount."""
    name = p['name']
    if not os.path.exists(device):
        if module.check_mode:
            module.warn('%s does not exist yet (the resource is not up): the plan assumes it holds no filesystem'
                        % device)
            result.update(plan=['mkfs', 'mount'], cmd=[['mkfs.%s' % p['fstype'], device], ['mount', device, mountpoint]])
            module.exit_json(changed=True, **result)
        module.fail_json(msg='%s does not exist: bring resource %s up and promote it first' % (device, name), **result)
    blkid = run(module, [module.get_bin_path('blkid', required=True), '-p', '-o', 'value', '-s', 'TYPE', device])
    if blkid.rc not in (0, 2):
        fail_step(module, 'blkid', secrets.masked(blkid), **result)
    if not blkid.stdout.strip():
        try:
            check_device_writable(device, destructive=True, force=False,
                                  what='make a %s filesystem on' % p['fstype'])
        except DeviceGuardError as e:
            module.fail_json(msg=str(e), **result)
        mkfs = module.get_bin_path('mkfs.%s' % p['fstype'])
        if not mkfs:
            module.fail_json(msg='mkfs.%s not found: install the tools of fstype %s' % (p['fstype'], p['fstype']),
                             **result)
        result['plan'].append('mkfs')
        result['cmd'].append([mkfs, device])
    result['plan'].append('mount')
    result['cmd'].append([module.get_bin_path('mount', required=True), device, mountpoint])
    if module.check_mode:
        module.exit_json(changed=True, **result)
    if not os.path.isdir(mountpoint):
        os.makedirs(mountpoint, 0o755)
    for step, argv in zip(result['plan'], result['cmd']):
        res = secrets.masked(run(module, argv, data=''))
        if res.rc != 0:
            fail_step(module, '%s (step %s)' % (' '.join(argv), step), res, **result)
    module.exit_json(changed=True, **result)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', required=True,
                       choices=['up', 'primary', 'secondary', 'disconnected', 'connected', 'down', 'mounted',
                                'unmounted']),
            initial_sync=dict(type='str', choices=['none', 'full', 'skip'], default='none'),
            config_file=dict(type='path'),
            drbdadm=dict(type='path'),
            drbdsetup=dict(type='path'),
            mount=dict(type='path'),
            fstype=dict(type='str', default='ext4'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    # first of all: the secrets of the configuration, masked in everything returned from here on
    secrets = Secrets(module, p['config_file'])
    try:
        # `all` would make drbdadm act on every resource of the host, `-x` would be an option
        check_name(p['name'], 'name')
    except DrbdConfigError as e:
        module.fail_json(msg=str(e))
    drbdadm = p['drbdadm'] or module.get_bin_path('drbdadm', required=True)
    drbdsetup = p['drbdsetup'] or module.get_bin_path('drbdsetup')
    loaded = kernel_module_loaded()
    if p['state'] in ('mounted', 'unmounted'):
        filesystem(module, p, drbdadm, secrets, loaded)
    before = read_state(module, drbdsetup, p['name'])
    current = before[0] if before else None
    plan = lifecycle_plan(p['state'], current, p['initial_sync'])
    cmds = [step_argv(s, p['name'], drbdadm, p['config_file']) for s in plan]

    dry = []
    for argv in cmds:
        res = secrets.masked(run(module, [argv[0], '-d'] + argv[1:]))
        if res.rc != 0:
            fail_step(module, 'drbdadm -d %s' % ' '.join(argv[1:]), res, plan=plan, cmd=cmds)
        dry += [line for line in res.stdout.splitlines() if line.strip()]
    result = dict(plan=plan, cmd=cmds, dry_run=dry, before=before, kernel_module=loaded)
    if module.check_mode or not plan:
        if module.check_mode and plan and not loaded:
            module.warn('the DRBD kernel module is not loaded here: a real run would fail')
        module.exit_json(changed=bool(plan), **result)
    for step, argv in zip(plan, cmds):
        res = secrets.masked(run(module, argv, data=''))
        if res.rc != 0:
            fail_step(module, 'drbdadm %s (step %s)' % (' '.join(argv[1:]), step), res, **result)
    result['after'] = read_state(module, drbdsetup, p['name'])
    module.exit_json(changed=True, **result)


if __name__ == '__main__':
    main()
