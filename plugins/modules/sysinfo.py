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

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import describe


def main():
    module = AnsibleModule(argument_spec=dict(path=dict(type='path'), labels=dict(type='dict', default={})),
                           supports_check_mode=True)
    path = module.params['path']
    if path and not os.path.exists(path):
        module.fail_json(msg='path %s does not exist' % path)
    module.exit_json(changed=False, sysinfo=describe(module, path), labels=module.params['labels'])


if __name__ == '__main__':
    main()
