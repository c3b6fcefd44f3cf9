# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/compat.py: the target Python check, and that every target module runs through it.
(The real runs on Python 2.7 / 3.6 / 3.13 targets under ansible-core 2.16 are in tests/compat.)"""

import importlib
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils import compat

REPO = Path(__file__).resolve().parents[4]
# Modules that run on the controller only (their own action plugin does the work).
CONTROLLER_ONLY = {'compare_runs', 'import_results'}


def test_core_version_and_floor():
    assert compat.core_version('2.19.14') == (2, 19)
    assert compat.core_version('2.20.0rc1') == (2, 20)
    assert compat.core_target_min((2, 16)) == (2, 7)
    assert compat.core_target_min((2, 19)) == (3, 8)
    assert compat.core_target_min((2, 20)) == (3, 9)
    assert compat.core_target_min((2, 23)) == (3, 9)  # newer than the table: the newest line's floor


@pytest.mark.parametrize('version', [(3, 6), (3, 8), (3, 13)])
def test_supported_python_under_216_is_fine(version):
    assert compat.target_python_problem('h1', '/usr/bin/python3', version, core=(2, 16)) is None


def test_python27_names_host_and_how_to_install_python3():
    msg = compat.target_python_problem('ovz7-node', '/usr/bin/python', (2, 7), core=(2, 16))
    assert 'host ovz7-node' in msg and '/usr/bin/python is 2.7' in msg
    assert 'needs Python 3.6 or newer' in msg and '`yum install python3`' in msg
    assert 'ansible_python_interpreter' in msg and 'ansible-core' not in msg
    # under a core that cannot drive EL7's python3 (3.6) the message says which core can
    msg = compat.target_python_problem('ovz7-node', '/usr/bin/python', (2, 7), core=(2, 19))
    assert '`yum install python3`' in msg and 'ansible-core 2.19 drives Python 3.8' in msg and '2.16' in msg


def test_python36_under_a_newer_core_names_the_core_to_use():
    msg = compat.target_python_problem('el8', '/usr/libexec/platform-python', (3, 6), core=(2, 19))
    assert 'host el8' in msg and 'is 3.6' in msg and 'ansible-core 2.19 drives Python 3.8 or newer only' in msg
    assert 'Run the playbook from ansible-core 2.16' in msg and 'Python 3.8 or newer on the host' in msg
    assert compat.target_python_problem('el8', '/usr/bin/python3.8', (3, 8), core=(2, 20)).count('2.19') == 1


def test_missing_interpreter():
    msg = compat.target_python_problem('bare', '/usr/bin/python3', None, core=(2, 19))
    assert msg.startswith('host bare has no Python at /usr/bin/python3') and 'apt-get install python3' in msg


def target_modules():
    return sorted(p.stem for p in (REPO / 'plugins/modules').glob('*.py')
                  if p.stem != '__init__' and p.stem not in CONTROLLER_ONLY)


@pytest.mark.parametrize('name', target_modules())
def test_every_target_module_runs_through_the_check(name):
    """A new module needs plugins/action/<name>.py (a subclass of TargetModuleAction, as the others):
    without it a host with a too-old Python gets the module wrapper's traceback."""
    path = REPO / 'plugins/action' / (name + '.py')
    assert path.is_file(), 'plugins/action/%s.py is missing: copy plugins/action/sysinfo.py' % name
    mod = importlib.import_module('ansible_collections.benchlab.bench.plugins.action.' + name)
    assert issubclass(mod.ActionModule, compat.TargetModuleAction)


def test_requires_ansible_admits_216_to_220():
    runtime = yaml.safe_load((REPO / 'meta/runtime.yml').read_text())
    assert runtime['requires_ansible'] == '>=2.16.0'
