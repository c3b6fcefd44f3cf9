# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 29 §7, loose ends held: every role's min_ansible_version is the collection's requires_ansible
floor; nothing the collection ships cites a design document it does not ship (docs/architecture.md is
the reference); a role that includes another declares it (meta dependencies, or its README names it)."""

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ROLES = sorted(p.parent.parent for p in REPO.glob('roles/*/meta/main.yml'))
SHIPPED = ('plugins', 'roles', 'playbooks', 'docs', 'meta', 'scenarios', 'inventories', 'README.md', 'galaxy.yml')


def _floor():
    runtime = yaml.safe_load((REPO / 'meta/runtime.yml').read_text())
    m = re.match(r'^>=\s*(\d+)\.(\d+)', runtime['requires_ansible'])
    return '%s.%s' % m.groups()


@pytest.mark.parametrize('role', ROLES, ids=[r.name for r in ROLES])
def test_min_ansible_version_is_the_collections_floor(role):
    meta = yaml.safe_load((role / 'meta/main.yml').read_text())
    assert str(meta['galaxy_info']['min_ansible_version']) == _floor(), (
        'roles/%s/meta/main.yml: min_ansible_version must be %s (meta/runtime.yml requires_ansible)' % (role.name, _floor()))


def test_nothing_shipped_cites_a_design_document_it_does_not_ship():
    found = []
    for part in SHIPPED:
        paths = [REPO / part] if (REPO / part).is_file() else sorted(p for p in (REPO / part).rglob('*') if p.is_file())
        for path in paths:
            try:
                text = path.read_text(encoding='utf-8')
            except (UnicodeDecodeError, OSError):
                continue
            if re.search(r'DESIGN(\.md|\b)', text):
                found.append(str(path.relative_to(REPO)))
    assert found == [], 'cite docs/architecture.md (or usage.md, safety.md) instead: %s' % found


@pytest.mark.parametrize('role', ROLES, ids=[r.name for r in ROLES])
def test_a_role_that_includes_another_declares_it(role):
    meta = yaml.safe_load((role / 'meta/main.yml').read_text())
    deps = [d if isinstance(d, str) else d.get('role') or d.get('name') for d in meta.get('dependencies') or []]
    readme = (role / 'README.md').read_text()
    for path in sorted((role / 'tasks').glob('*.yml')):
        for task in _tasks(yaml.safe_load(path.read_text()) or []):
            for key in ('ansible.builtin.include_role', 'ansible.builtin.import_role', 'include_role', 'import_role'):
                if isinstance(task.get(key), dict):
                    name = task[key]['name']
                    assert name in deps or name in readme, (
                        'roles/%s/tasks/%s includes %s: declare it in meta/main.yml dependencies or name it in the README'
                        % (role.name, path.name, name))


def _tasks(tasks):
    for task in tasks:
        if isinstance(task, dict):
            yield task
            for key in ('block', 'rescue', 'always'):
                yield from _tasks(task.get(key) or [])
