# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: tool_install
short_description: What installs the benchmark tools, from the collection's tool table
version_added: 0.1.0
description:
  - Reads the install table of the benchmark tools (each benchmark unit's C(INSTALL),
    C(plugins/plugin_utils/benchmarks/<tool>.py)), the one list of the tools the role
    C(benchlab.bench.bench_tools) installs and C(playbooks/bench.yml) checks.
  - With O(what=packages), the distribution packages of every install name on the platform named by
    the input (its keys, the most specific first, such as V([RedHat-9, RedHat])); C(null) where the
    platform has no package for it.
  - With O(what=programs), the programs of every install name (the input is not used), the names
    C(command -v) looks for before the package manager runs.
options:
  _input:
    description: The platform keys, most specific first (V(what=packages)); anything for V(what=programs).
    type: list
    elements: str
    required: true
  what:
    description: Packages per install name, or programs per install name.
    type: str
    choices: [packages, programs]
    required: true
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: The packages of every tool on EL 9
  ansible.builtin.debug:
    msg: "{{ ['RedHat-9', 'RedHat'] | benchlab.bench.tool_install('packages') }}"

- name: Every tool's install name
  ansible.builtin.debug:
    msg: "{{ [] | benchlab.bench.tool_install('programs') | list }}"
'''

RETURN = r'''
_value:
  description: Install name -> list of packages (or null) or list of programs, in the table's order.
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import ToolTableError, packages_for, programs_for


def tool_install(platforms, what):
    try:
        if what == 'programs':
            return programs_for()
        if what != 'packages':
            raise AnsibleFilterError("tool_install: what must be 'packages' or 'programs', got %r" % (what,))
        if not isinstance(platforms, (list, tuple)) or not all(isinstance(p, str) for p in platforms):
            raise AnsibleFilterError('tool_install: the input must be a list of platform keys (such as '
                                     "['RedHat-9', 'RedHat']), got %r" % (platforms,))
        return packages_for(list(platforms))
    except ToolTableError as e:
        raise AnsibleFilterError('tool_install: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'tool_install': tool_install}
