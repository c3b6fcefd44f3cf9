# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: drbd_check
short_description: Check DRBD resource definitions before anything is installed or written
version_added: 0.1.0
description:
  - Runs the checks of the M(benchlab.bench.drbd_resource) module on the controller (missing C(on)
    sections, bad protocol, duplicate minor, address clash, secrets without C(cram_hmac_alg),
    refused legacy keys, values that would be drbd.conf syntax rather than data, names that are
    drbdadm keywords or C(all), handlers without O(allow_handlers), ...) and fails naming the field.
  - Returns a summary without the shared secret.
options:
  _input:
    description: The resources (the C(drbd_resources) variable of the C(benchlab.bench.drbd) role).
    type: list
    elements: dict
    required: true
  syntax:
    description: V(8.4) or V(9); V(auto) checks with the DRBD 9 rules (the module re-checks with the real syntax).
    type: str
    default: auto
  allow_handlers:
    description:
      - Accept C(handlers) and the legacy C(incon_degr_cmd) (shell commands DRBD runs as root); refused
        otherwise, naming the field and the role variable C(drbd_allow_handlers).
    type: bool
    default: false
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Fail early on a broken resource
  ansible.builtin.set_fact:
    checked: "{{ drbd_resources | benchlab.bench.drbd_check('9') }}"

- name: The same, with handler commands allowed
  ansible.builtin.set_fact:
    checked: "{{ drbd_resources | benchlab.bench.drbd_check('9', allow_handlers=true) }}"
'''

RETURN = r'''
_value:
  description: Per resource C(name), C(protocol), C(nodes) (names), C(minors), C(primary) and C(notes) (legacy key translations).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_config import check_resources
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_secrets import redact
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import DrbdConfigError


def drbd_check(resources, syntax='auto', allow_handlers=False):
    if not isinstance(resources, list):
        raise AnsibleFilterError('drbd_check: drbd_resources must be a list, got %s' % type(resources).__name__)
    secrets = [r.get('shared_secret') for r in resources if isinstance(r, dict) and r.get('shared_secret')]
    try:
        norms = check_resources(resources, '9' if syntax in (None, 'auto') else syntax, bool(allow_handlers))
    except DrbdConfigError as e:
        raise AnsibleFilterError('drbd_check: %s' % redact(str(e), [str(s) for s in secrets]))
    return [{'name': norm['name'], 'protocol': norm['protocol'], 'primary': norm['primary'],
             'nodes': [n['name'] for n in norm['nodes']],
             'minors': sorted(set(n['minor'] for n in norm['nodes'])),
             'mount': norm['mount'], 'fstype': norm['fstype'], 'notes': norm['notes']} for norm in norms]


class FilterModule(object):
    def filters(self):
        return {'drbd_check': drbd_check}
