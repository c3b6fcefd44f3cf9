#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: openvz_ct
short_description: Create, start, stop or destroy an OpenVZ / Virtuozzo container (ploop or simfs)
version_added: 0.1.0
description:
  - Manages one container on an OpenVZ host with legacy C(vzctl) (layouts V(ploop) and V(simfs)) or
    on Virtuozzo 7 / OpenVZ 7 with C(prlctl) (always ploop).
  - The command lines are built by pure functions (module_utils C(openvz.plan)) from what is asked and
    what exists (C(vzctl status) and the container's config file, or C(prlctl list --json)); an
    existing container only gets the settings that differ, so a second run changes nothing.
  - In check mode nothing runs but the status query; the result's C(cmds) lists the argv that would
    run. Without the tool installed, check mode plans as if the container did not exist (with a warning).
  - Every container it creates carries the description C(benchlab.bench:<ctid>) (C(vzctl set --description),
    C(DESCRIPTION) in the container's config; C(prlctl set --description)). An existing container without that
    mark is refused (destroy, reconfiguration such as C(--ipdel all), start, stop) unless O(adopt=true), which
    marks it first.
  - A new container's SSH host key (ed25519) is generated on the host under O(host_key_dir)C(/<ctid>/) and
    installed into the container's file system (mounted) before its first start; RV(host_public_key) returns it
    for pinning in a known_hosts file (the role does that).
  - Ploop skips all-zero blocks, so C(dd if=/dev/zero) inside a ploop container measures nothing (the
    reference thread saw a ploop container "5x faster" than its host); benchlab writes random data by
    default and its report flags zero-data writes (traps C(zero_data) and C(zero_elision)).
author:
  - benchlab.bench maintainers (@benchlab)
options:
  ctid:
    description: Numeric container ID (above 100) for vzctl, container name for prlctl.
    type: str
    required: true
  tool:
    description: V(vzctl) (legacy OpenVZ) or V(prlctl) (Virtuozzo/OpenVZ 7).
    type: str
    choices: [vzctl, prlctl]
    default: vzctl
  state:
    description: V(started) creates (if needed) and starts; V(present) creates; V(stopped); V(absent) stops and destroys.
    type: str
    choices: [present, started, stopped, absent]
    default: started
  ostemplate:
    description: OS template cache name (for example V(centos-6-x86_64), V(debian-7.0-x86_64-minimal)).
    type: str
  layout:
    description: V(ploop) (image file with its own ext4, default since vzctl 4) or V(simfs) (a directory on the host file system).
    type: str
    choices: [ploop, simfs]
    default: ploop
  diskspace:
    description: Disk space (whole MiB or GiB, for example V(10G)).
    type: str
  ram:
    description: RAM (VSwap C(--ram); prlctl C(--memsize)).
    type: str
  swap:
    description: Swap (VSwap C(--swap)).
    type: str
  cpus:
    description: Number of CPUs.
    type: int
  hostname:
    description: Container hostname.
    type: str
  network:
    description: V(venet) (routed through the host, host routes per address) or V(veth) (an Ethernet pair in O(bridge)).
    type: str
    choices: [venet, veth]
    default: venet
  ip_address:
    description: Addresses of the container (venet without prefix; veth may carry one, default /24).
    type: list
    elements: str
    default: []
  gateway:
    description: Default gateway inside the container (veth).
    type: str
  bridge:
    description: Host bridge for veth.
    type: str
  ifname:
    description: Interface name inside the container (veth).
    type: str
    default: eth0
  nameserver:
    description: DNS server for the container.
    type: str
  config:
    description: vzctl sample config to create from (C(--config), for example V(vswap-1g)).
    type: str
  private_dir:
    description:
      - Where the container's private area (its files, or its ploop image) is made, so that a
        container can live on a given volume, such as a DRBD-backed C(/vz) or an equal plain volume.
      - vzctl gets C(--private <private_dir>/<ctid>), prlctl C(--dst <private_dir>). Used when the
        container is created; an existing container is not moved.
      - Default is the host's own (C(VE_PRIVATE) of C(vz.conf), usually C(/vz/private)).
    type: path
  conf_dir:
    description: Where vzctl keeps the container configs.
    type: path
    default: /etc/vz/conf
  ve_root:
    description: Where running containers are mounted on the host (C(VE_ROOT) without the CTID).
    type: path
    default: /vz/root
  adopt:
    description:
      - Act on an existing container that does not carry the benchlab mark (its description is not
        C(benchlab.bench:<ctid>)); it is marked first. Off, such a container is refused with a message naming it.
    type: bool
    default: false
  host_key_dir:
    description: Directory on the host where benchlab keeps the containers' SSH host keys (C(<dir>/<ctid>/)).
    type: path
    default: /var/lib/benchlab/openvz
attributes:
  check_mode:
    support: full
    description: Returns C(cmds), the argv lists that would run, without running them.
  diff_mode:
    support: none
    description: Nothing to diff.
notes:
  - Untested against a real OpenVZ kernel; the command lines follow the vzctl 4.x and prlctl manuals.
'''

EXAMPLES = r'''
- name: A ploop container for the ploop-vs-simfs matrix
  benchlab.bench.openvz_ct:
    ctid: "101"
    ostemplate: centos-6-x86_64
    layout: ploop
    diskspace: 10G
    ram: 1G
    cpus: 2
    network: venet
    ip_address: [198.18.10.101]

- name: Show what would run, without running it
  benchlab.bench.openvz_ct:
    ctid: "102"
    ostemplate: centos-6-x86_64
    layout: simfs
  check_mode: true
  register: plan
'''

RETURN = r'''
cmds:
  description: The argv lists run (or, in check mode, that would run), in order.
  returned: always
  type: list
  elements: list
  sample: [["vzctl", "create", "101", "--ostemplate", "centos-6-x86_64", "--layout", "ploop"], ["vzctl", "start", "101"]]
ct_root:
  description: Where the running container's files are on the host (vzctl).
  returned: always
  type: str
  sample: /vz/root/101
labels:
  description: Labels for the container's benchmark records.
  returned: always
  type: dict
  sample: {platform: openvz, layout: ploop, net: venet, openvz_tool: vzctl}
marked:
  description: Whether the container carries (or, after this run, will carry) the benchlab mark.
  returned: always
  type: bool
host_public_key:
  description:
    - The container's SSH host public key (C(ssh-ed25519 AAAA...)) that benchlab generated and installed, to pin in
      a known_hosts file; null when there is none (check mode before creation, an adopted running container).
  returned: always
  type: str
  sample: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI...
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.guests import openvz
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import fail, run


def prlctl_description(module, s):
    """The description of an existing prlctl container (the benchlab mark when benchlab made it)."""
    argv = ['prlctl', 'list', '--info', '--json', s['ctid']]
    result = run(module, argv)
    if result.rc != 0:
        fail(module, 'prlctl list --info', result)
    try:
        return openvz.parse_prlctl_info(result.stdout, s['ctid'])
    except openvz.OpenVZError as exc:
        module.fail_json(msg=str(exc), cmd=argv)


def current_state(module, s, warnings):
    """What exists: (status dict, parsed config or None)."""
    if not module.get_bin_path(s['tool']):
        if module.check_mode:
            warnings.append('%s is not installed here: planned as if container %s did not exist' % (s['tool'], s['ctid']))
            return {'exists': False, 'running': False}, None
        module.fail_json(msg='%s is not installed on this host (OpenVZ tools needed)' % s['tool'])
    if s['tool'] == 'vzctl':
        argv = ['vzctl', 'status', s['ctid']]
        result = run(module, argv)
        if result.rc != 0:
            fail(module, 'vzctl status', result)
        try:
            status = openvz.parse_vzctl_status(result.stdout)
        except openvz.OpenVZError as exc:
            module.fail_json(msg=str(exc), cmd=argv)
        conf = None
        path = os.path.join(module.params['conf_dir'], '%s.conf' % s['ctid'])
        if status['exists'] and os.path.exists(path):
            with open(path) as f:
                try:
                    conf = openvz.parse_vz_conf(f.read())
                except openvz.OpenVZError as exc:
                    module.fail_json(msg='%s: %s' % (path, exc))
        return status, conf
    argv = ['prlctl', 'list', '--all', '--json']
    result = run(module, argv)
    if result.rc != 0:
        fail(module, 'prlctl list', result)
    try:
        return openvz.parse_prlctl_list(result.stdout, s['ctid']), None
    except openvz.OpenVZError as exc:
        module.fail_json(msg=str(exc), cmd=argv)


def existing_description(module, s, status, conf):
    """The existing container's description (where benchlab's mark is), or None."""
    if s['tool'] == 'prlctl' and status['exists']:
        return prlctl_description(module, s)
    if status['exists']:
        return (conf or {}).get('DESCRIPTION', '')
    return None


def run_commands(module, cmds):
    """Run the planned commands in order; a failure names what was done before it."""
    for argv in cmds:
        out = run(module, argv)
        if out.rc != 0:
            fail(module, ' '.join(argv[:2]), out, done=cmds[:cmds.index(argv)])


def host_public_key(module, s, public):
    """The container's SSH host key benchlab generated ('type base64'), or None (with a warning
    for a started container: its host key cannot be pinned)."""
    key = None
    if s['state'] != 'absent' and os.path.exists(public):
        with open(public) as f:
            key = ' '.join(f.read().split()[:2]) or None
    if s['state'] == 'started' and key is None and not module.check_mode:
        module.warn('container %s has no SSH host key generated by benchlab (adopted while running?): '
                    'its host key cannot be pinned' % s['ctid'])
    return key


def main():
    module = AnsibleModule(
        argument_spec=dict(
            ctid=dict(type='str', required=True),
            tool=dict(type='str', choices=list(openvz.TOOLS), default='vzctl'),
            state=dict(type='str', choices=list(openvz.STATES), default='started'),
            ostemplate=dict(type='str'),
            layout=dict(type='str', choices=list(openvz.LAYOUTS), default='ploop'),
            diskspace=dict(type='str'),
            ram=dict(type='str'),
            swap=dict(type='str'),
            cpus=dict(type='int'),
            hostname=dict(type='str'),
            network=dict(type='str', choices=list(openvz.NETWORKS), default='venet'),
            ip_address=dict(type='list', elements='str', default=[]),
            gateway=dict(type='str'),
            bridge=dict(type='str'),
            ifname=dict(type='str', default='eth0'),
            nameserver=dict(type='str'),
            config=dict(type='str'),
            private_dir=dict(type='path'),
            conf_dir=dict(type='path', default='/etc/vz/conf'),
            ve_root=dict(type='path', default='/vz/root'),
            adopt=dict(type='bool', default=False),
            host_key_dir=dict(type='path', default='/var/lib/benchlab/openvz', no_log=False),
        ),
        supports_check_mode=True,
    )
    spec = {k: v for k, v in module.params.items() if k not in ('conf_dir', 've_root', 'adopt', 'host_key_dir')}
    try:
        s = openvz.normalize(spec)
    except openvz.OpenVZError as exc:
        module.fail_json(msg=str(exc))
    warnings = []
    status, conf = current_state(module, s, warnings)
    description = existing_description(module, s, status, conf)
    if conf is not None and s['state'] != 'absent':
        problem = openvz.layout_mismatch(s, conf)
        if problem:
            module.fail_json(msg=problem)
    private, public = openvz.host_key_paths(s, module.params['host_key_dir'])
    host_key = {'dir': module.params['host_key_dir'], 'exists': os.path.exists(private) and os.path.exists(public),
                've_root': module.params['ve_root']}
    try:
        cmds = openvz.plan(s, status, conf, description=description, adopt=module.params['adopt'], host_key=host_key)
    except openvz.OpenVZError as exc:
        module.fail_json(msg=str(exc), existed=status['exists'], marked=False)
    marked = s['state'] != 'absent'
    result = dict(changed=bool(cmds), cmds=cmds, ct_root=openvz.container_root(s, module.params['ve_root']),
                  labels=openvz.labels(s), existed=status['exists'], marked=marked, host_public_key=None)
    for w in warnings:
        module.warn(w)
    if not module.check_mode:
        run_commands(module, cmds)
    result['host_public_key'] = host_public_key(module, s, public)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
