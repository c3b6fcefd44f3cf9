# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/common/compat.py: the target Python check, and that every target module runs through it.
(The real runs on Python 2.7 / 3.6 / 3.13 targets under ansible-core 2.16 are in tests/compat.)"""

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils.common import compat

REPO = Path(__file__).resolve().parents[4]
# Modules that run on the controller only (their own action plugin does the work).
CONTROLLER_ONLY = {'compare_runs', 'import_results', 'history', 'trend'}


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


# Resolves each module's action plugin as a task would (TaskExecutor._get_action_handler_with_module_context):
# the module's plugin_routing action_plugin (meta/runtime.yml), else an action plugin of the module's
# own name, else ansible.legacy.normal. In a child process: the collection loader it installs is
# process-wide, and the other tests import the collection through sys.path.
_RESOLVE = r"""
import json, sys
from ansible.plugins.loader import action_loader, init_plugin_loader, module_loader
init_plugin_loader([sys.argv[1]])
out = {}
for name in sys.argv[2:]:
    fqcn = 'benchlab.bench.' + name
    module = module_loader.find_plugin_with_context(fqcn)
    if not module.resolved:
        out[name] = [None, []]
        continue
    handler = module.action_plugin or (fqcn if action_loader.has_plugin(fqcn) else 'ansible.legacy.normal')
    cls = action_loader.get(handler, class_only=True)
    out[name] = [handler, [c.__name__ for c in cls.__mro__]]
print(json.dumps(out))
"""


@pytest.fixture(scope='module')
def handlers():
    root = Path(compat.__file__).parents[5]     # the directory holding ansible_collections/benchlab/bench
    proc = subprocess.run([sys.executable, '-c', _RESOLVE, str(root)] + target_modules(),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize('name', target_modules())
def test_every_target_module_runs_through_the_check(name, handlers):
    """Resolved by the running ansible-core as a task would be: every target module's action plugin
    is TargetModuleAction. A new module needs one line in meta/runtime.yml's plugin_routing (as dd);
    without it a host with a too-old Python gets the module wrapper's traceback."""
    handler, mro = handlers[name]
    assert handler is not None, 'ansible-core does not find the module benchlab.bench.%s' % name
    assert handler != 'ansible.legacy.normal', (
        'benchlab.bench.%s has no action plugin: add "%s: {action_plugin: benchlab.bench.sysinfo}" under '
        'plugin_routing.modules in meta/runtime.yml' % (name, name))
    assert 'TargetModuleAction' in mro, (handler, mro)


def test_the_shared_action_plugin_adds_nothing():
    """meta/runtime.yml routes every plain target module to benchlab.bench.sysinfo's action plugin:
    that must stay TargetModuleAction itself, or whatever sysinfo needed would run for every module."""
    mod = importlib.import_module('ansible_collections.benchlab.bench.plugins.action.sysinfo')
    own = [k for k, v in vars(mod.ActionModule).items() if not k.startswith('__') and (callable(v) or not k.startswith('_'))]
    assert mod.ActionModule.__bases__ == (compat.TargetModuleAction,) and not own, \
        'plugins/action/sysinfo.py must stay a bare subclass of TargetModuleAction, it has %s' % own
    routing = yaml.safe_load((REPO / 'meta/runtime.yml').read_text())['plugin_routing']['modules']
    own = sorted(p.stem for p in (REPO / 'plugins/action').glob('*.py') if p.stem != '__init__')
    # a module routed here has no action plugin file of its own that would look like it counts
    assert not set(routing) & set(own)


def test_requires_ansible_admits_216_to_220():
    runtime = yaml.safe_load((REPO / 'meta/runtime.yml').read_text())
    assert runtime['requires_ansible'] == '>=2.16.0'


def test_drbd_resource_gets_its_keys_spelled_as_it_declares_them():
    """drbd.conf's dashes become the underscores drbd_resource declares (so its no_log covers the
    secret whichever way it is spelled); nothing else changes, no other module's args are touched."""
    args = {'config_dir': '/etc/drbd.d', 'resources': [
        {'name': 'r0', 'incon-degr-cmd': 'halt -f', 'disk_options': {'on-io-error': 'detach'},
         'net': {'shared-secret': 's3cret', 'max-buffers': 8000, 'cram_hmac_alg': 'sha1'},
         'nodes': [{'name': 'a', 'node-id': 0}]},
        'not a mapping']}
    out, problem = compat.drbd_resource_args('benchlab.bench.drbd_resource', args)
    assert problem is None
    assert out['resources'][0] == {'name': 'r0', 'incon_degr_cmd': 'halt -f', 'disk_options': {'on-io-error': 'detach'},
                                   'net': {'shared_secret': 's3cret', 'max_buffers': 8000, 'cram_hmac_alg': 'sha1'},
                                   'nodes': [{'name': 'a', 'node-id': 0}]}
    assert out['resources'][1] == 'not a mapping' and out['config_dir'] == '/etc/drbd.d'
    assert args['resources'][0]['net'] == {'shared-secret': 's3cret', 'max-buffers': 8000, 'cram_hmac_alg': 'sha1'}
    assert compat.drbd_resource_args('benchlab.bench.drbd_md', args) == (args, None)
    assert compat.drbd_resource_args('drbd_resource', {'resources': 'x'}) == ({'resources': 'x'}, None)


def test_both_spellings_of_a_key_are_refused_without_the_values():
    args = {'resources': [{'name': 'r0'}, {'name': 'r1', 'net': {'shared_secret': 'AAA', 'shared-secret': 'BBB'}}]}
    out, problem = compat.drbd_resource_args('drbd_resource', args)
    assert problem == 'resources[1].net: shared_secret given twice (shared_secret and shared-secret): keep one'
    assert 'AAA' not in problem and 'BBB' not in problem and out is args
