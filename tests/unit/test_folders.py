# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils and plugin_utils are grouped by what their files do (docs/architecture.md, "Floors"):
no file lies loose beside the folders, and every folder is one the architecture names, so the tree
and its description stay the same picture."""

import re

import pytest

from ansible_collections.benchlab.bench.tests.unit.test_import_cycles import REPO

FLOORS = ('module_utils', 'plugin_utils')


def described(text, floor):
    """The folders the Floors block of docs/architecture.md lists under plugins/<floor>/."""
    block = text.split('## Floors', 1)[1].split('```')[1]
    part = block.split('plugins/%s/' % floor, 1)[1]
    names = []
    for line in part.splitlines()[1:]:
        m = re.match(r'^  ([a-z_]+)/\s', line)
        if not m:
            if line.startswith('plugins/'):
                break
            continue
        names.append(m.group(1))
    return set(names)


def layout(root, floor):
    """(loose .py files, folders) of plugins/<floor>/ under root."""
    base = root / 'plugins' / floor
    return (sorted(p.name for p in base.glob('*.py')),
            set(p.name for p in base.iterdir() if p.is_dir() and p.name != '__pycache__'))


@pytest.mark.parametrize('floor', FLOORS)
def test_every_file_sits_in_a_folder_the_architecture_names(floor):
    loose, folders = layout(REPO, floor)
    assert loose == [], 'plugins/%s: put %s into the folder of what it does (docs/architecture.md, Floors)' % (floor, loose)
    names = described((REPO / 'docs' / 'architecture.md').read_text(encoding='utf-8'), floor)
    assert folders == names, 'plugins/%s has %s, docs/architecture.md describes %s' % (floor, sorted(folders), sorted(names))


def test_a_loose_file_and_an_undescribed_folder_are_found(tmp_path):
    base = tmp_path / 'plugins' / 'plugin_utils'
    (base / 'plan').mkdir(parents=True)
    (base / 'plan' / 'matrix.py').write_text('')
    (base / 'stray.py').write_text('')
    (base / 'misc').mkdir()
    loose, folders = layout(tmp_path, 'plugin_utils')
    assert loose == ['stray.py']
    text = '## Floors\n\n```\nplugins/plugin_utils/   controller\n  plan/                 the plan\nplugins/callback/ x\n```\n'
    assert described(text, 'plugin_utils') == {'plan'}
    assert folders - described(text, 'plugin_utils') == {'misc'}
