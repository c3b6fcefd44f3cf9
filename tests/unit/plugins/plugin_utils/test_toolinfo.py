# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/common/toolinfo.py, the tool table made of the benchmark units (plugins/plugin_utils/benchmarks/<tool>.py):
every matrix tool has its unit, the parsers' records carry its names, the record schema, the quiesce
guard's process names, runargs.MODULES and the install lists all come from it."""

import json

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run import record

from ansible_collections.benchlab.bench.plugins.module_utils.tools import bonnie, sysbench
from ansible_collections.benchlab.bench.plugins.plugin_utils.common import compat, toolinfo, validation
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan import runargs
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import matrix_tool, record_tool


def test_every_matrix_tool_has_its_entry():
    with open(validation.MATRIX_SCHEMA_FILE) as f:
        tools = json.load(f)['$defs']['benchmark']['properties']['tool']['enum']
    assert list(toolinfo.table()) == tools == list(runargs.MODULES)
    for tool in tools:
        assert matrix_tool(record_tool(tool)) == tool


def test_names_both_ways():
    assert record_tool('bonnie') == 'bonnie++'
    assert record_tool('sysbench_fileio') == 'sysbench'
    assert matrix_tool('iperf3') == matrix_tool('iperf') == 'iperf'
    assert record_tool('time') == matrix_tool('time') == 'time'


def test_the_parsers_carry_the_tables_record_names():
    assert bonnie.TOOL == record_tool('bonnie') and sysbench.TOOL == record_tool('sysbench_fileio')


def test_the_record_schema_takes_the_tool_names_from_the_table():
    names = toolinfo.record_names()
    assert set(names) >= {'dd', 'bonnie++', 'sysbench', 'iperf3', 'iperf', 'compress', 'fio'}
    assert record.table_record_names() == names     # what module_utils/run/record.py reads as data
    assert record.load_schema()['properties']['tool']['enum'] == names
    assert validation.load_schema(validation.RECORD_SCHEMA_FILE)['properties']['tool']['enum'] == names
    rec = record.new_record('nosuchtool', 'write', {'throughput': record.metric(1.0, 'MB/s')})
    assert [p.split(':')[0] for p in record.validate_record(rec)] == ['tool']
    rec['tool'] = 'bonnie++'
    assert record.validate_record(rec) == []


def test_the_process_names_the_guard_gets():
    names = toolinfo.process_names()
    assert {'bonnie++', 'sysbench', 'iperf3', 'iperf', 'zstd', 'fio', 'dbench', 'stress', 'stress-ng'} <= set(names)
    assert 'dd' not in names    # any dd on the host is no benchmark of ours
    assert len(names) == len(set(names))
    assert toolinfo.with_processes({'quiesce': True}) == {'quiesce': True, 'processes': names}
    assert toolinfo.with_processes(None) == {'processes': names}
    assert toolinfo.with_processes({'processes': ['x']}) == {'processes': ['x']}    # the caller's own wins
    assert toolinfo.with_processes('bad') == 'bad'     # the module refuses it, naming it


def test_every_benchmark_module_call_gets_them_and_nothing_else_does():
    """The action plugin every target module runs through (compat.TargetModuleAction) and
    run_benchmark (runargs.module_args) add guards.processes; other modules' args are untouched."""
    names = toolinfo.process_names()
    for module in ('benchlab.bench.fio', 'fio', 'benchlab.bench.sysbench_fileio'):
        assert compat.benchmark_args(module, {'path': '/srv'}) == {'path': '/srv', 'guards': {'processes': names}}
    for module in ('benchlab.bench.drbd_md', 'benchlab.bench.work_cleanup', 'other.coll.fio', None):
        assert compat.benchmark_args(module, {'path': '/srv'}) == {'path': '/srv'}
    run = {'tool': 'dd', 'benchmark': 'b', 'cell': 'c', 'path': '/srv', 'params': {}}
    assert runargs.module_args(run, {'guards': {'warmup': True}})['guards'] == {'warmup': True, 'processes': names}


def test_install_lists():
    programs = toolinfo.programs_for()
    assert {'dd', 'fio', 'bonnie', 'dbench', 'sysbench', 'iperf3', 'iperf', 'compress'} <= set(programs)
    assert list(programs) == [n for e in toolinfo.table().values() for n in e['install']]
    assert programs['compress'] == ['bzip2', 'gzip', 'xz', 'zstd', '/usr/bin/time']
    assert toolinfo.programs_for(['iperf3', 'nosuch']) == {'iperf3': ['iperf3']}
    el9 = toolinfo.packages_for(['RedHat-9', 'RedHat'])
    assert el9['dbench'] is None and el9['compress'] == ['bzip2', 'gzip', 'xz', 'zstd', 'time']
    assert toolinfo.packages_for(['RedHat-8', 'RedHat'])['dbench'] == ['dbench']
    assert toolinfo.packages_for(['Debian'])['compress'][2] == 'xz-utils'
    assert set(toolinfo.packages_for(['Suse'])) == set(programs) and not any(toolinfo.packages_for(['Suse']).values())


@pytest.mark.parametrize('entry, where', [
    (None, ': missing'),
    ({'records': [], 'processes': [], 'install': {'t': {'programs': ['t'], 'packages': {'Debian': ['t']}}}}, ' RECORDS:'),
    ({'records': ['t'], 'processes': 'x', 'install': {'t': {'programs': ['t'], 'packages': {'Debian': ['t']}}}}, ' PROCESSES:'),
    ({'records': ['t'], 'processes': [], 'install': {}}, ' INSTALL:'),
    ({'records': ['t'], 'processes': [], 'install': {'t': {'programs': [], 'packages': {'Debian': ['t']}}}}, ' INSTALL.t.programs:'),
    ({'records': ['t'], 'processes': [], 'install': {'t': {'programs': ['t'], 'packages': {'Debian': 't'}}}}, ' INSTALL.t.packages:'),
])
def test_a_bad_entry_is_named(entry, where):
    problems = toolinfo.entry_problems('newbench', entry)
    assert len(problems) == 1 and 'plugins/plugin_utils/benchmarks/newbench.py' in problems[0] and where in problems[0], problems
    assert toolinfo.entry_problems('dd', toolinfo.table()['dd']) == []


def test_a_unit_that_misses_a_part_is_named():
    class Bare(object):
        ORDER = 1
    assert toolinfo.unit_problems('newbench', Bare) == [
        'plugins/plugin_utils/benchmarks/newbench.py: missing RECORDS, PROCESSES, INSTALL, METRICS, NOT_PARAMS']
    Bare.RECORDS, Bare.PROCESSES, Bare.INSTALL = ('t',), (), {'t': {'programs': ['t'], 'packages': {'Debian': ['t']}}}
    Bare.METRICS, Bare.NOT_PARAMS = [('t', 'ms', 'sideways', 'x')], {}
    assert toolinfo.unit_problems('newbench', Bare) == [
        'plugins/plugin_utils/benchmarks/newbench.py METRICS[0]: expected (name, unit, higher|lower, what it is)']
