#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: drop_caches
short_description: Flush dirty data and drop the page cache, dentries and inodes
version_added: 0.1.0
description:
  - Runs C(sync) and writes C(3) to C(/proc/sys/vm/drop_caches), so that the next read comes from
    the storage and not from memory.
  - The bench_run role calls it on a guest's hypervisor host (inventory variable
    C(bench_hypervisor_host)) before each run, because a guest's reads can be served from the
    host's page cache.
author:
  - benchlab.bench maintainers (@benchlab)
options: {}
notes:
  - Needs root. Not allowed inside most containers; the module then fails with the reason.
attributes:
  check_mode:
    support: full
    description: Reports what it would do without dropping anything.
  diff_mode:
    support: none
    description: Nothing to diff.
'''

EXAMPLES = r'''
- name: Drop the hypervisor's caches before a guest reads
  benchlab.bench.drop_caches:
  delegate_to: kvm-host-1
'''

RETURN = r'''
dropped:
  description: Whether the caches were dropped.
  returned: always
  type: bool
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import drop_caches


def main():
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    if module.check_mode:
        module.exit_json(changed=False, dropped=False)
    reason = drop_caches()
    if reason:
        module.fail_json(msg=reason, dropped=False)
    # Dropping caches changes no configuration or data: it is not reported as a change.
    module.exit_json(changed=False, dropped=True)


if __name__ == '__main__':
    main()
