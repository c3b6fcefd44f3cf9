#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: sysinfo
short_description: Describe the environment a benchmark runs in
version_added: 0.1.0
description:
  - Reports the CPU (model, logical CPUs, cores, MHz), RAM, kernel, distribution, virtualization
    type and, for O(path), the filesystem, mount options and backing device.
  - Reads C(/proc) and C(/etc/os-release) and asks C(systemd-detect-virt) when it exists; changes
    nothing.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description: The benchmark directory whose filesystem, mount options and device are reported.
    type: path
  labels:
    description: Labels of the matrix cell, returned unchanged next to the facts.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same in check mode.
  diff_mode:
    support: none
    description: Nothing to diff.
'''

EXAMPLES = r'''
- name: Describe the host and the benchmark directory
  benchlab.bench.sysinfo:
    path: /srv/bench
  register: env

- name: Show the filesystem under test
  ansible.builtin.debug:
    msg: "{{ env.sysinfo.target.fstype }} on {{ env.sysinfo.target.source }}"
'''

RETURN = r'''
sysinfo:
  description: The environment.
  returned: always
  type: dict
  contains:
    cpu:
      description: C(model), C(logical_cpus), C(sockets), C(cores), C(mhz).
      type: dict
      returned: always
    memory:
      description: C(mem_total_bytes), C(mem_available_bytes).
      type: dict
      returned: always
    kernel:
      description: C(release), C(version), C(machine) as printed by uname.
      type: dict
      returned: always
    distribution:
      description: C(id), C(version_id), C(pretty_name) from /etc/os-release.
      type: dict
      returned: always
    virtualization:
      description: C(type) (systemd-detect-virt's words, such as V(none), V(kvm), V(lxc), V(openvz)), C(role) and C(source).
      type: dict
      returned: always
    target:
      description: C(path), C(mountpoint), C(fstype), C(source) (backing device), C(options) for O(path).
      type: dict
      returned: when path is given
    hostname:
      description: The node name.
      type: str
      returned: always
    drbd:
      description:
        - DRBD volumes from C(drbdsetup status --json) (C(name), C(volume), C(minor), C(role), C(disk_state),
          C(peer_disk_state), C(replication), C(connection), C(sync_percent), C(peers)); the report flags a cell
          whose DRBD is not UpToDate or resyncing.
      type: list
      elements: dict
      returned: when the DRBD kernel module is loaded
labels:
  description: The labels given.
  returned: always
  type: dict
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.common import read_text
from ansible_collections.benchlab.bench.plugins.module_utils.drbd_status import status_argv
from ansible_collections.benchlab.bench.plugins.module_utils.drbd_values import DrbdParseError
from ansible_collections.benchlab.bench.plugins.module_utils.runner import run
from ansible_collections.benchlab.bench.plugins.module_utils.sysinfo import (
    detect_virtualization, mount_for, parse_cpuinfo, parse_meminfo, parse_mountinfo, parse_os_release)


def main():
    module = AnsibleModule(argument_spec=dict(path=dict(type='path'), labels=dict(type='dict', default={})),
                           supports_check_mode=True)
    path = module.params['path']
    cpuinfo = read_text('/proc/cpuinfo')
    uname = os.uname()
    detect = None
    dv = module.get_bin_path('systemd-detect-virt')
    if dv:
        res = run(module, [dv])
        detect = res.stdout.strip() or None
    info = dict(
        hostname=uname.nodename,
        cpu=parse_cpuinfo(cpuinfo),
        memory=parse_meminfo(read_text('/proc/meminfo')),
        kernel=dict(release=uname.release, version=uname.version, machine=uname.machine),
        distribution=parse_os_release(read_text('/etc/os-release')),
        virtualization=detect_virtualization(detect, cpuinfo, read_text('/proc/1/environ').replace('\0', '\n'),
                                             os.path.exists('/proc/vz'), os.path.exists('/.dockerenv')),
    )
    if path:
        if not os.path.exists(path):
            module.fail_json(msg='path %s does not exist' % path)
        m = mount_for(os.path.realpath(path), parse_mountinfo(read_text('/proc/self/mountinfo'))) or {}
        info['target'] = dict(path=path, mountpoint=m.get('mountpoint'), fstype=m.get('fstype'),
                              source=m.get('source'), options=m.get('options'))
    drbdsetup = module.get_bin_path('drbdsetup')
    if drbdsetup and (os.path.exists('/proc/drbd') or os.path.isdir('/sys/module/drbd')):
        argv, parse = status_argv(drbdsetup, None, read_text('/proc/drbd') if os.path.exists('/proc/drbd') else '')
        res = run(module, argv)
        if res.rc == 0:
            try:
                info['drbd'] = parse(res.stdout)
            except DrbdParseError as e:
                module.warn(str(e))
    module.exit_json(changed=False, sysinfo=info, labels=module.params['labels'])


if __name__ == '__main__':
    main()
