# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every role has a README.md whose variables section is generated from meta/argument_specs.yml
and up to date (tests/utils/role_readme.py), names every option with its default, and carries the
hand-written parts: purpose, an example that sets only variables the role has, and what it changes
on the host. (A test of the collection's roles, not of a plugin: it sits in tests/unit itself.)"""

import re

import pytest
import yaml

from ansible_collections.benchlab.bench.tests.utils import role_readme

ROLES = role_readme.roles()


def specs_of(role):
    return yaml.safe_load((role / 'meta' / 'argument_specs.yml').read_text())['argument_specs']


def test_every_role_is_covered():
    names = sorted(p.name for p in ROLES)
    assert names == sorted(p.parent.parent.name for p in role_readme.REPO.glob('roles/*/meta/argument_specs.yml'))
    assert len(names) >= 6


def test_the_variables_sections_are_up_to_date():
    assert role_readme.problems(write=False) == []


@pytest.mark.parametrize('role', ROLES, ids=[r.name for r in ROLES])
def test_every_option_is_named_with_its_default(role):
    text = (role / 'README.md').read_text()
    for entry, spec in specs_of(role).items():
        for name, opt in (spec.get('options') or {}).items():
            row = [line for line in text.splitlines() if line.startswith('| `%s` |' % name)]
            assert row, '%s: option %s (entry point %s) is not in README.md' % (role.name, name, entry)
            assert role_readme.default_of(opt) in row[0], (role.name, name, row[0])


@pytest.mark.parametrize('role', ROLES, ids=[r.name for r in ROLES])
def test_purpose_example_and_host_changes_are_written(role):
    text = (role / 'README.md').read_text()
    assert text.startswith('# benchlab.bench.%s\n\n' % role.name)
    purpose = text.split('\n\n', 2)[1]
    assert len(purpose.split()) >= 20, 'the purpose paragraph is missing'
    for heading in ('## Variables', '## Example', '## What it changes on the host'):
        assert '\n%s\n' % heading in text, '%s: no %r section' % (role.name, heading)
    changes = text.split('## What it changes on the host', 1)[1].strip()
    assert len(changes.split()) >= 10


def _set_vars(node, found):
    """The variables an example sets: vars of include_role tasks and of roles entries."""
    if isinstance(node, list):
        for item in node:
            _set_vars(item, found)
    elif isinstance(node, dict):
        if isinstance(node.get('vars'), dict) and ('ansible.builtin.include_role' in node or 'role' in node):
            found.update(node['vars'])
        for value in node.values():
            _set_vars(value, found)
    return found


@pytest.mark.parametrize('role', ROLES, ids=[r.name for r in ROLES])
def test_the_example_sets_only_options_the_role_has(role):
    text = (role / 'README.md').read_text()
    blocks = re.findall(r'```yaml\n(.*?)```', text, re.S)
    assert blocks, '%s: no YAML example' % role.name
    doc = yaml.safe_load(blocks[0])
    assert 'benchlab.bench.%s' % role.name in blocks[0]
    options = {}
    for spec in specs_of(role).values():
        options.update(spec.get('options') or {})
    for name, value in _set_vars(doc, {}).items():
        assert name in options, '%s: the example sets %s, which is not an option of the role' % (role.name, name)
        sub = options[name].get('options')
        if sub and isinstance(value, list):
            for item in value:
                unknown = sorted(set(item) - set(sub))
                assert not unknown, '%s: %s entries have no %s' % (role.name, name, unknown)
