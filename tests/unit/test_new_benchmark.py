# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a new benchmark touches (docs/development.md, "Adding a benchmark"): every matrix tool has
what each of those places needs, and a failure names the file to edit. Three files carry a
benchmark (parser, module, benchmark unit), the generated files follow from them
(tests/utils/benchmark_units.py), and meta/runtime.yml is read by Ansible itself, by name (its action
group and its action plugin). No task file: every run goes through the one run path."""

import json
import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils.common import toolinfo

REPO = Path(__file__).resolve().parents[2]
MATRIX = json.loads((REPO / 'plugins/plugin_utils/schemas/matrix-v1.json').read_text())
TOOLS = MATRIX['$defs']['benchmark']['properties']['tool']['enum']
ARGSPEC = yaml.safe_load((REPO / 'roles/bench_tools/meta/argument_specs.yml').read_text())
INSTALL_NAMES = ARGSPEC['argument_specs']['main']['options']['bench_tools_tools']


@pytest.mark.parametrize('tool', TOOLS)
def test_the_three_places(tool):
    """The parser, the module, the benchmark unit (and the schema entry generated from the module and
    the unit)."""
    assert (REPO / 'plugins/module_utils/tools' / (tool + '.py')).is_file() or tool == 'sysbench_fileio', \
        'plugins/module_utils/tools/%s.py (the parser) is missing' % tool
    assert (REPO / 'plugins/modules' / (tool + '.py')).is_file(), 'plugins/modules/%s.py is missing' % tool
    assert (REPO / 'plugins/plugin_utils/benchmarks' / (tool + '.py')).is_file(), \
        'plugins/plugin_utils/benchmarks/%s.py (the benchmark unit) is missing' % tool
    assert '%s_params' % tool in MATRIX['$defs'], \
        'plugins/plugin_utils/schemas/matrix-v1.json has no $defs/%s_params: run python tests/utils/benchmark_units.py' % tool
    branches = [b['if']['properties']['tool']['const'] for b in MATRIX['$defs']['benchmark']['allOf']]
    assert tool in branches, 'plugins/plugin_utils/schemas/matrix-v1.json: benchmark.allOf has no branch for %s' % tool
    problems = toolinfo.unit_problems(tool, toolinfo.unit(tool))
    assert not problems, problems


def test_one_run_path_and_no_tool_in_the_role():
    """Every run goes through benchlab.bench.run_benchmark (roles/bench_run/tasks/run.yml, the work
    on other hosts around it in phases_before.yml and phases_after.yml; resume.yml is planning, gate.yml and rounds.yml ask for
    more runs and send them through run.yml): no task
    file per tool, and no tool's name or parameter in the role's YAML (what a tool needs around its
    runs is its unit's phases)."""
    tasks = sorted(p.name for p in (REPO / 'roles/bench_run/tasks').glob('*.yml'))
    assert tasks == ['gate.yml', 'main.yml', 'phases_after.yml', 'phases_before.yml', 'plan.yml', 'resume.yml', 'rounds.yml',
                     'run.yml'], tasks
    words = set()
    for path in (REPO / 'roles/bench_run').rglob('*.yml'):   # the YAML itself, not its comments
        words |= set(re.findall(r'[a-z_0-9+]+', json.dumps(yaml.safe_load(path.read_text()))))
    names = set(TOOLS) | set(toolinfo.record_names()) | {'server_host', 'concurrent', 'job_file', 'drop_caches'}
    assert not words & names, sorted(words & names)
    run = yaml.safe_load((REPO / 'roles/bench_run/tasks/run.yml').read_text())
    phases = [t for name in ('phases_before.yml', 'phases_after.yml')
              for t in yaml.safe_load((REPO / 'roles/bench_run/tasks' / name).read_text())]
    modules = set(k for t in run[0]['block'] + run[0]['always'] + phases for k in t if k.startswith('benchlab.bench.'))
    assert modules == {'benchlab.bench.run_benchmark'}


# The files a new benchmark takes (docs/development.md, "Adding a benchmark"; ioping took exactly these).
NEW_BENCHMARK_FILES = [
    'plugins/module_utils/tools/{tool}.py', 'plugins/modules/{tool}.py', 'plugins/plugin_utils/benchmarks/{tool}.py',
    'plugins/filter/parse_{tool}.py', 'meta/runtime.yml',
    'tests/unit/fixtures/{tool}/', 'tests/unit/plugins/module_utils/test_{tool}.py', 'tests/unit/plugins/modules/{tool}.yaml',
    'tests/unit/plugins/modules/test_{tool}.py', 'tests/unit/plugins/plugin_utils/test_{tool}_unit.py',
    'tests/unit/plugins/filter/test_parse_filters_fuzz.py', 'tests/compat/files/every_module.yml',
    'tests/compat/test_target_python.py', 'tests/integration/test_{tool}_module.py', 'docs/support.md',
    'changelogs/fragments/<name>.yml', 'inventories/local/group_vars/all/lab_matrix.yml',
]
# ... and what tests/utils/benchmark_units.py generates from them.
GENERATED_FILES = ['plugins/plugin_utils/schemas/matrix-v1.json', 'plugins/plugin_utils/schemas/import-manifest-v1.json',
                   'docs/usage.md']


def _development_md_files():
    """The numbered files of docs/development.md's "Adding a benchmark" section, in order."""
    text = (REPO / 'docs/development.md').read_text().split('## Adding a benchmark', 1)[1]
    text = text.split('Generated, never edited by hand', 1)[0] + text.split('What proves it:', 1)[1].split('Sanity:', 1)[0]
    found = []
    for m in re.finditer(r'(?:^|\s)\d+\. `([^`]+)`', text):
        found.append(m.group(1).replace('<tool>', '{tool}'))
    return found


def test_development_md_lists_exactly_the_files_a_new_benchmark_takes():
    assert _development_md_files() == NEW_BENCHMARK_FILES
    generated = (REPO / 'docs/development.md').read_text().split('Generated, never edited by hand', 1)[1].split('What proves', 1)[0]
    for path in GENERATED_FILES:
        assert '`%s`' % path in generated or '`%s`' % path.rsplit('/', maxsplit=1)[-1] in generated, path


@pytest.mark.skipif(Path(__file__).resolve().parents[4].name == 'ansible_collections',
                    reason='the checkout holds them, not a copy of its plugins')
def test_ioping_took_exactly_those_files():
    """Every file of the list holds ioping (the benchmark issue 29 added through the unit), and so do
    the generated ones; the sanity ignore files stay empty."""
    for pattern in NEW_BENCHMARK_FILES + GENERATED_FILES:
        if pattern.startswith('changelogs/'):
            texts = [p.read_text() for p in (REPO / 'changelogs/fragments').glob('*.yml')]
            texts.append((REPO / 'changelogs/changelog.yaml').read_text())
            assert any('ioping' in t for t in texts), 'no changelog fragment (or folded entry) names ioping'
            continue
        path = REPO / pattern.format(tool='ioping')
        if pattern.endswith('/'):
            assert (path / 'README.md').is_file() and len(list(path.glob('*.txt'))) >= 3, path
            continue
        assert path.is_file() and 'ioping' in path.read_text(), '%s does not name ioping' % path
    for ignore in sorted((REPO / 'tests/sanity').glob('ignore-*.txt')):
        assert ignore.read_text().strip() == '', '%s must stay empty' % ignore


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
def test_every_benchmark_can_be_installed_on_every_platform_of_the_role(tool):
    """Each platform file of roles/bench_tools takes its packages from the tool table by its keys; a
    tool's install entry answers for each (a package list, or null: none there)."""
    for vars_file in sorted((REPO / 'roles/bench_tools/vars').glob('*.yml')):
        keys = [vars_file.stem, vars_file.stem.split('-')[0]] if '-' in vars_file.stem else [vars_file.stem]
        for name, spec in toolinfo.unit(tool).INSTALL.items():
            assert set(keys) & set(spec['packages']), (
                'plugins/plugin_utils/benchmarks/%s.py INSTALL.%s.packages: '
                'no entry for %s (roles/bench_tools/vars/%s)' % (tool, name, ' or '.join(keys), vars_file.name))


def test_no_install_list_names_the_tools():
    """The role and bench.yml take the tools from the table: no list of names to extend."""
    assert 'choices' not in INSTALL_NAMES and 'default' not in INSTALL_NAMES, \
        'roles/bench_tools/meta/argument_specs.yml: bench_tools_tools is checked against the tool table (tasks/resolve.yml)'
    defaults = yaml.safe_load((REPO / 'roles/bench_tools/defaults/main.yml').read_text())
    assert defaults['bench_tools_tools'] == "{{ [] | benchlab.bench.tool_install('programs') | list }}"
    play = yaml.safe_load((REPO / 'playbooks/bench.yml').read_text())
    programs = [p['vars']['__bench_install_programs'] for p in play if '__bench_install_programs' in p.get('vars', {})]
    assert programs == ["{{ [] | benchlab.bench.tool_install('programs') }}"]


# -- a throwaway benchmark, in a copy of the collection ---------------------------------------------

FAKE_PARSER = '''# -*- coding: utf-8 -*-
# Private to benchlab.bench: no API promise. Used by the sleepbench module.
"""sleepbench's output -> a record (a throwaway benchmark of tests/unit/test_new_benchmark.py)."""
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record


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
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS
from ansible_collections.benchlab.bench.plugins.module_utils.run.options import argument_spec
from ansible_collections.benchlab.bench.plugins.module_utils.tools.sleepbench import sleepbench_record

OPTIONS = dict(path=dict(type='path', required=True), seconds=dict(type='int', default=1),
               size=dict(type='str', default='1M'), mode=dict(type='str', default='plain'),
               sync=dict(type='bool', default=False))
OPTIONS.update(COMMON_ARGS)


def main():
    module = AnsibleModule(argument_spec=argument_spec(OPTIONS), supports_check_mode=True)
    module.exit_json(changed=True, bench_result=sleepbench_record(str(module.params['seconds'])))


if __name__ == '__main__':
    main()
"""

FAKE_UNIT = '''# -*- coding: utf-8 -*-
"""sleepbench, as a benchmark unit (a throwaway benchmark of tests/unit/test_new_benchmark.py)."""
ORDER = 900
RECORDS = ('sleepbench',)
PROCESSES = ('sleepbenchd',)
INSTALL = {'sleepbench': {'programs': ['sleep'], 'packages': {'Debian': ['coreutils'], 'RedHat': ['coreutils']}}}
METRICS = [('duration', 's', 'lower', 'how long it slept')]
NOT_PARAMS = {'path': "the cell's path"}
PARAMS = {'size': {'$ref': '#/$defs/size'}, 'mode': {'enum': ['plain', 'deep']}}
'''

FAKE_CHECK = r'''
import sys
from ansible_collections.benchlab.bench.plugins.module_utils.run import guards, record
from ansible_collections.benchlab.bench.plugins.plugin_utils.common import compat, toolinfo
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan import matrix, runargs
from ansible_collections.benchlab.bench.plugins.filter.tool_install import tool_install
assert 'sleepbench' in runargs.MODULES
rec = record.new_record('sleepbench', 'sleep', {'duration': record.metric(1.0, 's', 'lower')})
assert record.validate_record(rec) == [], record.validate_record(rec)
# the quiesce guard of every benchmark module call counts its process (the controller passes the names)
assert 'sleepbenchd' in compat.benchmark_args('benchlab.bench.fio', {})['guards']['processes']
assert 'sleepbenchd' in compat.benchmark_args('benchlab.bench.sleepbench', {})['guards']['processes']
assert 'sleepbenchd' in guards.competing_names(compat.benchmark_args('benchlab.bench.dd', {})['guards'])
m = {'name': 'm', 'benchmarks': [{'name': 'nap', 'tool': 'sleepbench', 'params': {'seconds': 2, 'sync': True}}],
     'cells': [{'name': 'c1', 'host': 'h1', 'path': '/srv'}]}
assert matrix.validate_matrix(m, inventory_hosts=['h1'])
args = runargs.module_args({'tool': 'sleepbench', 'benchmark': 'nap', 'cell': 'c1', 'path': '/srv',
                            'params': {'seconds': 2, 'sync': True}}, {'labels': {}, 'guards': {}, 'run_id': 'r', 'run_key': 'k'})
assert args['seconds'] == 2 and args['sync'] is True and args['path'] == '/srv'
assert 'sleepbenchd' in args['guards']['processes']
# what bench_tools installs and bench.yml checks
assert tool_install([], 'programs')['sleepbench'] == ['sleep']
assert tool_install(['RedHat-9', 'RedHat'], 'packages')['sleepbench'] == ['coreutils']
print(matrix.estimate_s('sleepbench', {}))
'''

# The role's own resolution (roles/bench_tools/tasks/resolve.yml, after the platform's vars file) with the
# new tool: its package is installed, an unknown name fails naming it.
FAKE_ROLE = '''
- name: Resolve the tools of the copy
  hosts: localhost
  gather_facts: false
  tasks:
    - name: EL 9's package map
      ansible.builtin.include_vars: "{{ root }}/roles/bench_tools/vars/RedHat-9.yml"
    - name: Resolve
      ansible.builtin.include_role:
        name: benchlab.bench.bench_tools
        tasks_from: resolve
      vars:
        bench_tools_tools: [sleepbench, dbench, dd]
        bench_tools_missing: warn
        bench_tools_extra_packages: []
    - name: The new tool's package, dbench left out on EL 9
      ansible.builtin.assert:
        that:
          - __bench_tools_packages == ['coreutils']
          - bench_tools_skipped == ['dbench']
    - name: The role's default
      ansible.builtin.include_role:
        name: benchlab.bench.bench_tools
        tasks_from: resolve
        public: true
    - name: The role's default is every tool of the table, the new one too
      ansible.builtin.assert:
        that:
          - "'sleepbench' in bench_tools_tools and 'fio' in bench_tools_tools"
          - "'fio' in __bench_tools_packages and bench_tools_skipped == ['dbench']"
    - name: An unknown name
      ansible.builtin.include_role:
        name: benchlab.bench.bench_tools
        tasks_from: resolve
      vars:
        bench_tools_tools: [sleepbench, nosuchbench]
'''


def _copy(dst):
    import shutil
    root = dst / 'ansible_collections' / 'benchlab' / 'bench'
    for part in ('plugins', 'meta', 'roles', 'playbooks', 'tests/unit', 'tests/utils', 'docs'):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns('__pycache__', '.pytest_cache'))
    shutil.copy(REPO / 'galaxy.yml', root / 'galaxy.yml')
    return root


def _add_fake_benchmark(root, runtime=True):
    """The three places (parser, module, unit), the files generated from them, and (runtime) the two
    lines of meta/runtime.yml Ansible reads by name."""
    import subprocess
    import sys
    (root / 'plugins/module_utils/tools/sleepbench.py').write_text(FAKE_PARSER)
    (root / 'plugins/modules/sleepbench.py').write_text(FAKE_MODULE)
    (root / 'plugins/plugin_utils/benchmarks/sleepbench.py').write_text(FAKE_UNIT)
    gen = subprocess.run([sys.executable, str(root / 'tests/utils/benchmark_units.py')], capture_output=True, text=True,
                         check=False)
    assert gen.returncode == 0 and 'written: plugins/plugin_utils/schemas/matrix-v1.json' in gen.stdout, gen.stdout + gen.stderr
    if not runtime:
        return
    runtime_yml = root / 'meta/runtime.yml'
    text = runtime_yml.read_text().replace('    - compress\n', '    - compress\n    - sleepbench\n', 1)
    runtime_yml.write_text(text + '    sleepbench: {action_plugin: benchlab.bench.sysinfo}\n')


CHECKS = ('tests/unit/test_new_benchmark.py', 'tests/unit/plugins/plugin_utils/test_toolinfo.py',
          'tests/unit/plugins/filter/test_tool_install.py', 'tests/unit/plugins/module_utils/test_guards.py',
          'tests/unit/plugins/plugin_utils/test_option_sources.py', 'tests/unit/plugins/plugin_utils/test_compat.py')


def _pytest(root, *args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-rf', '-v'] + list(args),
                          cwd=str(root), capture_output=True, text=True, check=False)


@pytest.mark.skipif(Path(__file__).resolve().parents[4].name == 'ansible_collections',
                    reason='runs once, from the checkout (not again inside its own copy)')
def test_a_new_benchmark_touches_the_three_places_and_runtime_yml(tmp_path):
    """docs/development.md's claim, proven: a throwaway benchmark (sleepbench) added in a copy of
    the collection by its parser, module and unit (the generated files made by the generator), plus
    its two lines of meta/runtime.yml, is planned, forwarded, validated, guarded and installed, and
    every contract test holds; without the runtime.yml lines exactly the tests naming that file fail."""
    import os
    import subprocess
    import sys
    root = _copy(tmp_path)
    _add_fake_benchmark(root, runtime=False)
    proc = _pytest(root, *CHECKS)
    failed = sorted(set(line.split('::')[0] for line in proc.stdout.splitlines() if line.startswith('FAILED')))
    # without the runtime.yml lines, exactly the tests that name that file fail, with the line to add
    assert proc.returncode != 0 and 'add sleepbench to action_groups.benchmarks in meta/runtime.yml' in proc.stdout
    assert '"sleepbench: {action_plugin: benchlab.bench.sysinfo}" under plugin_routing.modules in meta/runtime.yml' in proc.stdout
    assert failed == ['FAILED tests/unit/plugins/plugin_utils/test_compat.py',
                      'FAILED tests/unit/test_new_benchmark.py'], failed
    # the node ids only: whether pytest appends " - <message>" depends on the terminal (CI has none)
    summary = [line.split(' - ')[0] for line in proc.stdout.splitlines() if line.startswith('FAILED ')]
    assert summary == ['FAILED tests/unit/test_new_benchmark.py::test_runtime_yml_names_every_benchmark[sleepbench]',
                       'FAILED tests/unit/plugins/plugin_utils/test_compat.py::test_every_target_module_runs_through_the_check'
                       '[sleepbench]'], proc.stdout[-3000:]

    root = _copy(tmp_path / 'with-runtime')
    _add_fake_benchmark(root)
    proc = _pytest(root, *CHECKS)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    # the parametrized contract tests ran for it: the three places, runtime.yml, install, the option
    # sources (type, argspec or left out, forwarded by the run path), the action plugin
    assert proc.stdout.count('[sleepbench] PASSED') == 7, proc.stdout[-4000:]
    check = subprocess.run([sys.executable, '-c', 'import sys; sys.path.insert(0, %r)\n' % str(root.parents[2]) + FAKE_CHECK],
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr[-3000:]
    # no estimate of its own in matrix.py: its module's default size at the default 50 MB/s
    assert float(check.stdout.strip()) == pytest.approx(1.048576 / 50.0)
    play = tmp_path / 'role.yml'
    play.write_text(FAKE_ROLE)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(root.parents[2]), ANSIBLE_NOCOLOR='1')
    run = subprocess.run([str(Path(sys.executable).parent / 'ansible-playbook'), str(play), '-e', 'root=%s' % root],
                         capture_output=True, text=True, check=False, env=env, cwd=str(tmp_path))
    out = run.stdout + run.stderr
    assert run.returncode == 2 and 'failed=1' in out, out[-3000:]
    known = ', '.join(list(toolinfo.install_table()) + ['sleepbench'])
    assert 'bench_tools_tools: unknown tool nosuchbench (known: %s;' % known in ' '.join(out.split()), out[-3000:]
    for task in ("The new tool's package, dbench left out on EL 9", "The role's default is every tool of the table, the new one too"):
        assert re.search(r'TASK \[%s\] \**\s+ok: \[localhost\]' % re.escape(task), out), out[-3000:]
