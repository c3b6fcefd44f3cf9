# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter tool_install: the bench_tools role's package map and bench.yml's program list, from
the tool table; the role's vars files name the platform keys and nothing else."""

from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.filter.tool_install import tool_install
from ansible_collections.benchlab.bench.plugins.plugin_utils.common import toolinfo

REPO = Path(__file__).resolve().parents[4]


def test_packages_and_programs():
    assert tool_install(['RedHat-9', 'RedHat'], 'packages')['dbench'] is None
    assert tool_install(['Debian'], 'packages')['bonnie'] == ['bonnie++']
    assert tool_install([], 'programs')['bonnie'] == ['bonnie++']
    assert list(tool_install([], 'programs')) == list(toolinfo.install_table())


@pytest.mark.parametrize('platforms, what, msg', [
    ('Debian', 'packages', 'the input must be a list of platform keys'),
    (['Debian'], 'package', "what must be 'packages' or 'programs'"),
])
def test_bad_arguments_are_named(platforms, what, msg):
    with pytest.raises(AnsibleFilterError, match=msg):
        tool_install(platforms, what)


def test_the_role_vars_take_the_map_from_the_table():
    """Each platform file of roles/bench_tools names its platform keys; the packages come from the table."""
    for path in sorted((REPO / 'roles/bench_tools/vars').glob('*.yml')):
        value = yaml.safe_load(path.read_text())['__bench_tools_package_map']
        keys = [path.stem, path.stem.split('-')[0]] if '-' in path.stem else [path.stem]
        assert value == "{{ %r | benchlab.bench.tool_install('packages') }}" % keys, path.name
        assert all(v is None or v for v in tool_install(keys, 'packages').values())
        assert any(tool_install(keys, 'packages').values()), '%s: the table has no package for this platform' % path.name
