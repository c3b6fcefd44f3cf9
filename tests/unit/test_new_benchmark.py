# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a new benchmark touches (docs/development.md, "Adding a benchmark"): every matrix tool has
what each of those places needs, and a failure names the file to edit. The places that are not the
four (parser, module, schema entry, task file) are the ones Ansible or the hosts' package managers
read: meta/runtime.yml and the install lists."""

import json
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.module_utils import toolnames

REPO = Path(__file__).resolve().parents[2]
MATRIX = json.loads((REPO / 'plugins/plugin_utils/schemas/matrix-v1.json').read_text())
TOOLS = MATRIX['$defs']['benchmark']['properties']['tool']['enum']
ARGSPEC = yaml.safe_load((REPO / 'roles/bench_tools/meta/argument_specs.yml').read_text())
INSTALL_NAMES = ARGSPEC['argument_specs']['main']['options']['bench_tools_tools']


@pytest.mark.parametrize('tool', TOOLS)
def test_the_four_places(tool):
    """The parser, the module, the schema entry and the task file."""
    assert (REPO / 'plugins/module_utils' / (tool + '.py')).is_file() or tool == 'sysbench_fileio', \
        'plugins/module_utils/%s.py (the parser) is missing' % tool
    assert (REPO / 'plugins/modules' / (tool + '.py')).is_file(), 'plugins/modules/%s.py is missing' % tool
    assert '%s_params' % tool in MATRIX['$defs'], \
        'plugins/plugin_utils/schemas/matrix-v1.json has no $defs/%s_params' % tool
    branches = [b['if']['properties']['tool']['const'] for b in MATRIX['$defs']['benchmark']['allOf']]
    assert tool in branches, 'plugins/plugin_utils/schemas/matrix-v1.json: benchmark.allOf has no branch for %s' % tool
    assert (REPO / 'roles/bench_run/tasks' / (tool + '.yml')).is_file(), 'roles/bench_run/tasks/%s.yml is missing' % tool


@pytest.mark.parametrize('tool', TOOLS)
def test_runtime_yml_names_every_benchmark(tool):
    """Ansible reads action groups (module_defaults) and a module's action plugin from
    meta/runtime.yml only, by name."""
    runtime = yaml.safe_load((REPO / 'meta/runtime.yml').read_text())
    assert tool in runtime['action_groups']['benchmarks'], \
        'add %s to action_groups.benchmarks in meta/runtime.yml (module_defaults give it labels, guards, run id and key)' % tool
    assert tool in runtime['plugin_routing']['modules'], \
        'add "%s: {action_plugin: benchlab.bench.sysinfo}" under plugin_routing.modules in meta/runtime.yml' % tool


@pytest.mark.parametrize('tool', TOOLS)
def test_every_benchmark_can_be_installed(tool):
    """bench_tools names a tool by its matrix name or its record name (sysbench, iperf3)."""
    names = {tool} | set(toolnames.RECORD_TOOLS.get(tool, ()))
    assert names & set(INSTALL_NAMES['choices']), (
        'roles/bench_tools: add %s to bench_tools_tools (choices and default) in meta/argument_specs.yml and its '
        'packages to vars/*.yml, then run tests/utils/role_readme.py' % tool)


def test_install_lists_agree():
    choices = INSTALL_NAMES['choices']
    assert sorted(INSTALL_NAMES['default']) == sorted(choices), 'roles/bench_tools/meta/argument_specs.yml: default != choices'
    for vars_file in sorted((REPO / 'roles/bench_tools/vars').glob('*.yml')):
        keys = yaml.safe_load(vars_file.read_text())['__bench_tools_package_map']
        assert sorted(keys) == sorted(choices), 'roles/bench_tools/vars/%s: one key per bench_tools_tools choice' % vars_file.name
    play = yaml.safe_load((REPO / 'playbooks/bench.yml').read_text())
    programs = [p['vars']['__bench_install_programs'] for p in play if '__bench_install_programs' in p.get('vars', {})]
    assert len(programs) == 1 and sorted(programs[0]) == sorted(choices), \
        'playbooks/bench.yml: __bench_install_programs needs the programs of every bench_tools_tools choice'


# -- a throwaway benchmark, in a copy of the collection ---------------------------------------------

FAKE_PARSER = '''# -*- coding: utf-8 -*-
# Private to benchlab.bench: no API promise. Used by the sleepbench module.
"""sleepbench's output -> a record (a throwaway benchmark of tests/unit/test_new_benchmark.py)."""
from ansible_collections.benchlab.bench.plugins.module_utils.record import metric, new_record


def sleepbench_record(text, labels=None):
    return new_record('sleepbench', 'sleep', {'duration': metric(float(text.strip()), 's', 'lower')}, labels=labels)
'''

FAKE_MODULE = """#!/usr/bin/python
DOCUMENTATION = r'''
module: sleepbench
short_description: A throwaway benchmark
description: [Sleeps.]
author: [x (@x)]
options:
  path: {description: Where., type: path, required: true}
  seconds: {description: How long., type: int, default: 1}
  size: {description: How much., type: str, default: 1M}
  mode: {description: How., type: str, default: plain}
  sync: {description: Sync., type: bool, default: false}
  labels: {description: Labels., type: dict, default: {}}
  guards: {description: Guards., type: dict, default: {}}
  run_id: {description: Run id., type: str}
  run_key: {description: Run key., type: str}
'''
from ansible.module_utils.basic import AnsibleModule
from ansible_collections.benchlab.bench.plugins.module_utils.common import COMMON_ARGS
from ansible_collections.benchlab.bench.plugins.module_utils.sleepbench import sleepbench_record


def main():
    spec = dict(path=dict(type='path', required=True), seconds=dict(type='int', default=1),
                size=dict(type='str', default='1M'), mode=dict(type='str', default='plain'),
                sync=dict(type='bool', default=False))
    spec.update(COMMON_ARGS)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    module.exit_json(changed=True, bench_result=sleepbench_record(str(module.params['seconds'])))


if __name__ == '__main__':
    main()
"""

FAKE_TASKS = '''---
- name: "Benchmark sleepbench {{ bench_run_item.benchmark }}"
  benchlab.bench.sleepbench:
    path: "{{ bench_run_item.path }}"
    seconds: "{{ bench_run_item.params.seconds | default(omit) }}"
    size: "{{ bench_run_item.params.size | default(omit) }}"
    mode: "{{ bench_run_item.params.mode | default(omit) }}"
    sync: "{{ bench_run_item.params.sync | default(omit) }}"
  register: __bench_run_last
'''

FAKE_CHECK = r'''
import sys
from ansible_collections.benchlab.bench.plugins.module_utils import guards, record
from ansible_collections.benchlab.bench.plugins.plugin_utils import matrix, runargs
assert 'sleepbench' in runargs.MODULES
rec = record.new_record('sleepbench', 'sleep', {'duration': record.metric(1.0, 's', 'lower')})
assert record.validate_record(rec) == [], record.validate_record(rec)
assert 'sleepbenchd' in guards.BENCH_PROCESSES
m = {'name': 'm', 'benchmarks': [{'name': 'nap', 'tool': 'sleepbench', 'params': {'seconds': 2, 'sync': True}}],
     'cells': [{'name': 'c1', 'host': 'h1', 'path': '/srv'}]}
assert matrix.validate_matrix(m, inventory_hosts=['h1'])
args = runargs.module_args({'tool': 'sleepbench', 'benchmark': 'nap', 'cell': 'c1', 'path': '/srv',
                            'params': {'seconds': 2, 'sync': True}}, {'labels': {}, 'guards': {}, 'run_id': 'r', 'run_key': 'k'})
assert args['seconds'] == 2 and args['sync'] is True and args['path'] == '/srv'
print(matrix.estimate_s('sleepbench', {}))
'''


def _copy(dst):
    import shutil
    root = dst / 'ansible_collections' / 'benchlab' / 'bench'
    for part in ('plugins', 'meta', 'roles', 'playbooks', 'tests/unit'):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns('__pycache__', '.pytest_cache'))
    shutil.copy(REPO / 'galaxy.yml', root / 'galaxy.yml')
    return root


def _add_fake_benchmark(root, extras=True):
    """The four places, and (extras) the lines Ansible and the package managers need."""
    (root / 'plugins/module_utils/sleepbench.py').write_text(FAKE_PARSER)
    (root / 'plugins/modules/sleepbench.py').write_text(FAKE_MODULE)
    path = root / 'plugins/plugin_utils/schemas/matrix-v1.json'
    schema = json.loads(path.read_text())
    bench = schema['$defs']['benchmark']
    bench['properties']['tool']['enum'].append('sleepbench')
    bench['allOf'].append({'if': {'properties': {'tool': {'const': 'sleepbench'}}},
                           'then': {'properties': {'params': {'$ref': '#/$defs/sleepbench_params'}}}})
    schema['$defs']['sleepbench_params'] = {'type': 'object', 'additionalProperties': False, 'properties': {
        'seconds': {'type': 'integer'}, 'size': {'$ref': '#/$defs/size'}, 'mode': {'enum': ['plain', 'deep']},
        'sync': {'type': 'boolean'}}}
    path.write_text(json.dumps(schema, indent=2))
    (root / 'roles/bench_run/tasks/sleepbench.yml').write_text(FAKE_TASKS)
    if not extras:
        return
    runtime = root / 'meta/runtime.yml'
    text = runtime.read_text().replace('    - compress\n', '    - compress\n    - sleepbench\n', 1)
    runtime.write_text(text + '    sleepbench: {action_plugin: benchlab.bench.sysinfo}\n')
    names = root / 'plugins/module_utils/toolnames.py'
    names.write_text(names.read_text().replace(
        "    'compress': (", "    'sleepbench': (('sleepbench',), ('sleepbenchd',)),\n    'compress': ("))
    spec = root / 'roles/bench_tools/meta/argument_specs.yml'
    spec.write_text(spec.read_text().replace('iperf, compress]', 'iperf, compress, sleepbench]'))
    for vars_file in (root / 'roles/bench_tools/vars').glob('*.yml'):
        vars_file.write_text(vars_file.read_text().replace('__bench_tools_package_map:\n',
                                                           '__bench_tools_package_map:\n  sleepbench: [coreutils]\n'))
    play = root / 'playbooks/bench.yml'
    play.write_text(play.read_text().replace('      dd: [dd]\n', '      dd: [dd]\n      sleepbench: [sleep]\n'))


CHECKS = ('tests/unit/test_new_benchmark.py', 'tests/unit/plugins/module_utils/test_toolnames.py',
          'tests/unit/plugins/plugin_utils/test_option_sources.py', 'tests/unit/plugins/plugin_utils/test_compat.py')


def _pytest(root, *args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-rf', '-v'] + list(args),
                          cwd=str(root), capture_output=True, text=True, check=False)


@pytest.mark.skipif(Path(__file__).resolve().parents[4].name == 'ansible_collections',
                    reason='runs once, from the checkout (not again inside its own copy)')
def test_a_new_benchmark_touches_the_four_places_and_the_listed_extras(tmp_path):
    """docs/development.md's claim, proven: a throwaway benchmark (sleepbench) added in a copy of
    the collection by its parser, module, schema entry and task file, plus the meta/runtime.yml and
    install lines, is planned, forwarded, validated and guarded, and every contract test holds."""
    import subprocess
    import sys
    root = _copy(tmp_path)
    _add_fake_benchmark(root, extras=False)
    proc = _pytest(root, *CHECKS)
    failed = sorted(set(line.split('::')[0] for line in proc.stdout.splitlines() if line.startswith('FAILED')))
    # without the extras, exactly the tests that name them fail, with the file to edit
    assert proc.returncode != 0 and 'meta/runtime.yml' in proc.stdout and 'module_utils/toolnames.py' in proc.stdout
    assert 'roles/bench_tools' in proc.stdout, proc.stdout[-3000:]
    assert failed == ['FAILED tests/unit/plugins/module_utils/test_toolnames.py',
                      'FAILED tests/unit/plugins/plugin_utils/test_compat.py',
                      'FAILED tests/unit/test_new_benchmark.py'], failed

    root = _copy(tmp_path / 'with-extras')
    _add_fake_benchmark(root)
    proc = _pytest(root, *CHECKS)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    # the parametrized contract tests ran for it: the four places, runtime.yml, install, the three option
    # sources, the action plugin
    assert proc.stdout.count('[sleepbench] PASSED') == 7, proc.stdout[-4000:]
    check = subprocess.run([sys.executable, '-c', 'import sys; sys.path.insert(0, %r)\n' % str(root.parents[2]) + FAKE_CHECK],
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr[-3000:]
    # no estimate of its own in matrix.py: its module's default size at the default 50 MB/s
    assert float(check.stdout.strip()) == pytest.approx(1.048576 / 50.0)
