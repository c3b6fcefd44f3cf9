# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options: the module's option table (``OPTIONS``, module_utils/run/options.py) is the source of every
benchmark option, default and bound; its argument spec is the table without the bounds.

Per tool: the matrix schema's params (plugin_utils/schemas/matrix-v1.json) are generated from the
module's options and its benchmark unit (plugins/plugin_utils/benchmarks/<tool>.py: NOT_PARAMS,
PARAMS, PLAN_PARAMS) by tests/utils/benchmark_units.py; the drift test names every option the
schema lacks or has too much, and a stale generated file. The params are a subset of the module's
argument_spec with the same types and no default of their own; the run path (plugin_utils/plan/runargs.py,
used by benchlab.bench.run_benchmark) forwards every one of them; matrix.py takes the module's
defaults from the module. The argument_spec is the real one: each module's main() runs until it
builds its AnsibleModule.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.plugin_utils.common import toolinfo


from ansible_collections.benchlab.bench.plugins.plugin_utils.plan import matrix, runargs
REPO = Path(__file__).resolve().parents[4]
SCHEMA = json.loads((REPO / 'plugins/plugin_utils/schemas/matrix-v1.json').read_text())
# JSON Schema type -> the argument_spec types a value of it is accepted as
TYPES = {'boolean': {'bool'}, 'integer': {'int', 'str'}, 'string': {'str', 'path', 'raw'}, 'array': {'list'},
         'number': {'float', 'int'}, 'object': {'dict'}}
SHARED = {'labels', 'guards', 'run_id', 'run_key'}
sys.path.insert(0, str(REPO / 'tests' / 'utils'))
import benchmark_units  # noqa: E402  pylint: disable=wrong-import-position


class _Captured(Exception):
    pass


def argspec(tool, monkeypatch):
    """The argument_spec benchlab.bench.<tool>'s main() gives AnsibleModule (through
    module_utils/run/benchrun.py run_module, or directly)."""
    from ansible.module_utils import basic
    mod = importlib.import_module('ansible_collections.benchlab.bench.plugins.modules.%s' % tool)
    seen = {}

    def fake(*args, **kwargs):
        seen.update(kwargs.get('argument_spec') or args[0])
        raise _Captured()

    monkeypatch.setattr(basic, '_load_params', lambda: {})   # no module args: as ansible-test's validate-modules
    monkeypatch.setattr(basic, 'AnsibleModule', fake)
    if hasattr(mod, 'AnsibleModule'):
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
    plan_params = getattr(toolinfo.unit(tool), 'PLAN_PARAMS', {})
    checked = 0
    for name, prop in props.items():
        option = name
        if name in plan_params:
            continue  # the run path's own (iperf: where the server runs, the pairs; fio: a job file on the controller)
        assert option in spec, '%s: matrix param %s is no option of the module' % (tool, name)
        kinds = schema_types(prop)
        assert kinds, '%s.%s: the schema gives no type' % (tool, name)
        want = spec[option].get('type', 'str')
        for kind in kinds:
            assert want in TYPES[kind], '%s.%s: schema %s, argspec %s' % (tool, name, kind, want)
        assert 'default' not in prop, '%s.%s: the default belongs to the module' % (tool, name)
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize('tool', runargs.MODULES)
def test_every_argspec_option_is_a_param_or_left_out_by_name(tool, monkeypatch):
    """The drift test's first half: an option added to a module's argument spec is a matrix param,
    unless its unit names it in NOT_PARAMS (with the reason); the unit names no option the module
    does not have."""
    spec = argspec(tool, monkeypatch)
    mod = toolinfo.unit(tool)
    props = SCHEMA['$defs']['%s_params' % tool]['properties']
    for option in sorted(set(spec) - set(toolinfo.SHARED_OPTIONS)):
        assert option in props or option in mod.NOT_PARAMS, (
            '%s: option %s of plugins/modules/%s.py is not in matrix-v1.json $defs.%s_params (run python '
            'tests/utils/benchmark_units.py) nor in NOT_PARAMS of plugins/plugin_utils/benchmarks/%s.py'
            % (tool, option, tool, tool, tool))
    for option in list(mod.NOT_PARAMS) + list(getattr(mod, 'PARAMS', {})):
        assert option in spec, '%s: %s in plugins/plugin_utils/benchmarks/%s.py is no option of the module' % (
            tool, option, tool)
        assert not (option in mod.NOT_PARAMS and option in props and option not in getattr(mod, 'PLAN_PARAMS', {})), \
            '%s.%s: left out, yet in the schema' % (tool, option)


def test_the_generated_parts_are_up_to_date():
    """The drift test's second half: the matrix schema's per-tool params, its tool enum, the import
    manifest's tool enum and the metrics table of docs/usage.md are what the units and the modules'
    documentation generate; each difference is named."""
    assert benchmark_units.drift() == []


def test_the_drift_is_named(tmp_path, monkeypatch):
    """An option the schema lacks, one it has too much, and a stale file are named."""
    schema = json.loads(json.dumps(SCHEMA))
    del schema['$defs']['fio_params']['properties']['options']
    schema['$defs']['dd_params']['properties']['colour'] = {'type': 'string'}
    path = tmp_path / 'matrix-v1.json'
    path.write_text(json.dumps(schema, indent=2) + '\n')
    monkeypatch.setattr(benchmark_units, 'MATRIX', path)
    monkeypatch.setattr(benchmark_units, 'REPO', tmp_path.parent)
    problems = benchmark_units.drift()
    assert any('$defs.fio_params lacks options (an option of plugins/modules/fio.py' in p for p in problems), problems
    assert any('$defs.dd_params.properties.colour is no option of plugins/modules/dd.py' in p for p in problems), problems
    assert any('matrix-v1.json is not what the units and modules generate' in p for p in problems), problems
    assert problems[-1] == 'run: python tests/utils/benchmark_units.py'


@pytest.mark.parametrize('tool', runargs.MODULES)
def test_the_one_task_path_forwards_every_param(tool):
    props = SCHEMA['$defs']['%s_params' % tool]['properties']
    plan_params = getattr(toolinfo.unit(tool), 'PLAN_PARAMS', {})
    params = dict((name, 'v-%s' % name) for name in props if name not in plan_params)
    run = {'tool': tool, 'benchmark': 'b', 'cell': 'c', 'path': '/srv', 'params': params}
    args = runargs.module_args(run, {'labels': {'cell': 'c'}, 'guards': {}, 'run_id': 'r', 'run_key': 'k'})
    for name in params:
        assert args[name] == 'v-%s' % name
    for name in plan_params:
        assert name not in args   # the run path's own, never a module option
    # the cell's path goes to a module that has the option (iperf's client has none)
    assert ('path' in args) == ('path' in runargs.module_options(tool)) and args.get('path', '/srv') == '/srv'
    assert args['labels'].get('cell') == 'c' and args['run_id'] == 'r' and args['run_key'] == 'k'
    assert args.get('path') == ('/srv' if 'path' in runargs.module_options(tool) else None) and 'describe' not in args
    # the cell's first run describes the environment (plan_schedule's describe, run.yml)
    assert runargs.module_args(dict(run, describe=True), {})['describe'] is True
    assert 'describe' not in runargs.module_args(dict(run, describe=False), {})


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


# -- one table per option (module_utils/run/options.py): bounds declared once, refused alike ----------

def _bounded():
    """(tool, option, bound, value just beyond it) for every bound of every benchmark module's table."""
    from ansible_collections.benchlab.bench.plugins.module_utils.run.options import bounds
    out = []
    for tool in runargs.MODULES:
        table = importlib.import_module('ansible_collections.benchlab.bench.plugins.modules.%s' % tool).OPTIONS
        for name, limits in sorted(bounds(table).items()):
            for bound, limit in sorted(limits.items()):
                beyond = limit + 1 if bound == 'maximum' else limit if bound == 'exclusiveMinimum' else limit - 1
                value = [beyond] if table[name].get('type') == 'list' else beyond
                out.append(pytest.param(tool, name, value, id='%s-%s-%s' % (tool, name, bound)))
    return out


def _module_failure(tool, args, capsys):
    from ansible_collections.benchlab.bench.tests.unit.plugins.modules.helper import patch_module_args
    mod = importlib.import_module('ansible_collections.benchlab.bench.plugins.modules.%s' % tool)
    with patch_module_args(dict(args, guards={'quiesce': False}, observe_interval_s=0)):
        with pytest.raises(SystemExit):
            mod.main()
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize('tool,name,value', _bounded())
def test_the_matrix_and_the_module_refuse_a_value_beyond_a_bound_with_the_same_message(tool, name, value, tmp_path, capsys):
    """The bound is the module's table's; the matrix schema has it from there (generated), and both
    say the validator's words: 'numjobs: 5000 is greater than the maximum of 1024'."""
    bench = {'name': 'b', 'tool': tool, 'params': {name: value}}
    if tool == 'iperf':
        bench['params']['server_host'] = 'h'
    with pytest.raises(matrix.MatrixError) as refused:
        matrix.validate_matrix({'name': 'm', 'cells': [{'name': 'c', 'host': 'h', 'path': str(tmp_path)}],
                                'benchmarks': [bench]})
    said = [p.split('.params.', 1)[1] for p in refused.value.problems if '.params.' in p]
    assert len(said) == 1, refused.value.problems
    args = dict({'path': str(tmp_path)} if 'path' in runargs.module_options(tool) else {}, **{name: value})
    result = _module_failure(tool, args, capsys)
    assert result.get('failed') and result['msg'] == said[0], (result, said)
    assert list(tmp_path.iterdir()) == []   # refused before anything was made


def test_the_module_checks_the_bounds_of_each_run_of_a_batch(tmp_path, capsys):
    spool = tmp_path / 'spool'
    result = _module_failure('fio', {'batch': {'spool': str(spool), 'runs': [
        {'options': {'path': str(tmp_path), 'numjobs': 5000}, 'timeout_s': 60}]}}, capsys)
    assert result['runs'][0]['failed'] and result['runs'][0]['msg'] == 'numjobs: 5000 is greater than the maximum of 1024'


def test_bounds_belong_in_the_table_not_in_a_unit(monkeypatch):
    """A bound written into a unit's PARAMS again (a second source) is named, with where it belongs."""
    unit = toolinfo.unit('fio')
    monkeypatch.setitem(unit.PARAMS, 'numjobs', {'maximum': 64})
    where = r'benchmarks/fio.py PARAMS.numjobs: maximum belong in the option table of plugins/modules/fio.py'
    with pytest.raises(benchmark_units.DriftError, match=where):
        benchmark_units.tool_params('fio')


def test_a_changed_bound_and_a_doc_that_does_not_state_it_are_named(monkeypatch):
    """The drift test on a broken copy of the table: the schema no longer matches, and the module's
    DOCUMENTATION no longer states the bound."""
    table = importlib.import_module('ansible_collections.benchlab.bench.plugins.modules.fio').OPTIONS
    monkeypatch.setitem(table, 'numjobs', dict(table['numjobs'], maximum=2048))
    runargs.module_options.cache_clear()
    try:
        problems = benchmark_units.drift()
    finally:
        runargs.module_options.cache_clear()
    assert 'plugins/modules/fio.py DOCUMENTATION: numjobs does not say "From 1 to 2048." (its bounds in OPTIONS)' in problems
    assert any('$defs.fio_params.properties.numjobs differs from what the module and its unit say' in p for p in problems)


def test_the_argument_spec_is_the_table_without_its_bounds(monkeypatch):
    from ansible_collections.benchlab.bench.plugins.module_utils.run.options import BOUND_KEYS, bound_problems
    for tool in runargs.MODULES:
        table = importlib.import_module('ansible_collections.benchlab.bench.plugins.modules.%s' % tool).OPTIONS
        spec = argspec(tool, monkeypatch)
        assert set(spec) == set(table)
        for name, entry in table.items():
            assert spec[name] == dict((k, v) for k, v in entry.items() if k not in BOUND_KEYS), (tool, name)
    table = {'n': {'type': 'int', 'minimum': 1}, 'f': {'type': 'str', 'minimum': 0}, 'c': {'type': 'list', 'maximum': 4}}
    assert bound_problems(table, {'n': True, 'f': '64:4096', 'c': [1, 5, 4]}) == ['c[1]: 5 is greater than the maximum of 4']
    assert bound_problems(table, {'n': 0, 'f': '-1', 'c': None}) == [
        'f: -1 is less than the minimum of 0', 'n: 0 is less than the minimum of 1']
