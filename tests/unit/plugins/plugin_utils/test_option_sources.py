# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 15 §1 Options: the module's argument_spec is the source of every benchmark option.

Per tool: the matrix schema's params (plugin_utils/schemas/matrix-v1.json) are a subset of the
module's argument_spec with the same types and no default of their own; the one-task path
(plugin_utils/runargs.py, used by benchlab.bench.run_benchmark) and the tool's task file in
roles/bench_run forward every one of them; matrix.py takes the module's defaults from the module.
The argument_spec is the real one: each module's main() runs until it builds its AnsibleModule.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils import matrix, runargs

REPO = Path(__file__).resolve().parents[4]
SCHEMA = json.loads((REPO / 'plugins/plugin_utils/schemas/matrix-v1.json').read_text())
# JSON Schema type -> the argument_spec types a value of it is accepted as
TYPES = {'boolean': {'bool'}, 'integer': {'int', 'str'}, 'string': {'str', 'path', 'raw'}, 'array': {'list'},
         'number': {'float', 'int'}}
SHARED = {'labels', 'guards', 'run_id', 'run_key'}


class _Captured(Exception):
    pass


def argspec(tool, monkeypatch):
    """The argument_spec benchlab.bench.<tool>'s main() gives AnsibleModule."""
    mod = importlib.import_module('ansible_collections.benchlab.bench.plugins.modules.%s' % tool)
    seen = {}

    def fake(*args, **kwargs):
        seen.update(kwargs.get('argument_spec') or args[0])
        raise _Captured()

    monkeypatch.setattr(mod, 'AnsibleModule', fake)
    with pytest.raises(_Captured):
        mod.main()
    return seen


def schema_types(prop):
    """The JSON types a schema property admits (a $ref to a size or a string-like def is a string)."""
    if '$ref' in prop:
        return schema_types(SCHEMA['$defs'][prop['$ref'].rsplit('/', 1)[1]])
    if 'type' in prop:
        return set(prop['type'] if isinstance(prop['type'], list) else [prop['type']])
    if 'enum' in prop:
        return set('string' if isinstance(v, str) else 'integer' for v in prop['enum'])
    kinds = set()
    for alt in prop.get('anyOf', []) + prop.get('oneOf', []):
        kinds |= schema_types(alt)
    return kinds


@pytest.mark.parametrize('tool', runargs.MODULES)
def test_schema_params_are_module_options_of_the_same_type(tool, monkeypatch):
    spec = argspec(tool, monkeypatch)
    assert SHARED <= set(spec), tool  # the options module_defaults gives every benchmark
    props = SCHEMA['$defs']['%s_params' % tool]['properties']
    renames = runargs.RENAMES.get(tool, {})
    checked = 0
    for name, prop in props.items():
        option = renames.get(name, name)
        if tool == 'iperf' and name in ('server_host', 'server_address', 'concurrent', 'start_delay_s'):
            continue  # iperf.yml's own: where the server runs, and the pairs started together (and when)
        assert option in spec, '%s: matrix param %s is no option of the module' % (tool, name)
        kinds = schema_types(prop)
        assert kinds, '%s.%s: the schema gives no type' % (tool, name)
        want = spec[option].get('type', 'str')
        for kind in kinds:
            assert want in TYPES[kind], '%s.%s: schema %s, argspec %s' % (tool, name, kind, want)
        assert 'default' not in prop, '%s.%s: the default belongs to the module' % (tool, name)
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize('tool', [t for t in runargs.MODULES if t != 'iperf'])
def test_the_one_task_path_forwards_every_param(tool):
    props = SCHEMA['$defs']['%s_params' % tool]['properties']
    params = dict((name, 'v-%s' % name) for name in props)
    run = {'tool': tool, 'benchmark': 'b', 'cell': 'c', 'path': '/srv', 'params': params}
    args = runargs.module_args(run, {'labels': {'cell': 'c'}, 'guards': {}, 'run_id': 'r', 'run_key': 'k'})
    renames = runargs.RENAMES.get(tool, {})
    for name in props:
        assert args[renames.get(name, name)] == 'v-%s' % name
    assert args['labels'] == {'cell': 'c'} and args['run_id'] == 'r' and args['run_key'] == 'k'
    assert args['path'] == '/srv' and 'describe' not in args
    # the cell's first run describes the environment (plan_schedule's describe, run.yml)
    assert runargs.module_args(dict(run, describe=True), {})['describe'] is True
    assert 'describe' not in runargs.module_args(dict(run, describe=False), {})


@pytest.mark.parametrize('tool', runargs.MODULES)
def test_the_task_file_forwards_every_param(tool):
    text = (REPO / 'roles' / 'bench_run' / 'tasks' / ('%s.yml' % tool)).read_text()
    props = SCHEMA['$defs']['%s_params' % tool]['properties']
    for name in props:
        assert re.search(r'bench_run_item\.params\.%s\b' % name, text), '%s.yml does not forward %s' % (tool, name)
    if tool != 'iperf':  # labels and guards come from module_defaults (run_tasks.yml), not the file
        task = yaml.safe_load(text)[0]
        assert not SHARED & set(task['benchlab.bench.%s' % tool])


def test_unknown_tool_is_a_clear_error():
    with pytest.raises(runargs.RunArgsError, match="unknown tool 'nope'"):
        runargs.tool_args({'tool': 'nope', 'params': {}})


@pytest.mark.parametrize('tool,name', [('dd', 'size'), ('fio', 'size'), ('sysbench_fileio', 'size'),
                                       ('sysbench_fileio', 'time'), ('dbench', 'time'), ('iperf', 'time'),
                                       ('compress', 'size'), ('compress', 'compressors')])
def test_matrix_estimates_use_the_module_default(tool, name, monkeypatch):
    assert runargs.option_default(tool, name) == argspec(tool, monkeypatch)[name]['default']
    assert 'DEFAULT_SIZE' not in dir(matrix) and '_DEFAULT_SIZE' not in dir(matrix)


def test_estimate_follows_the_default():
    # dd at the module's default size (256M = 268 MB) at the conservative 50 MB/s
    assert matrix.estimate_s('dd', {}) == pytest.approx(268.435456 / 50.0)
    assert matrix.estimate_s('sysbench_fileio', {'time': 10}) == pytest.approx(10 + 1073.741824 / 100.0)
