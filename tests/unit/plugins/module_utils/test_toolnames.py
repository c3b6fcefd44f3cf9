# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/toolnames.py, the registry of the tools: every matrix tool is in it, the parsers'
records carry its names, and the record schema and the quiesce guard take their names from it."""

import json
from pathlib import Path

from ansible_collections.benchlab.bench.plugins.module_utils import bonnie, guards, record, toolnames
from ansible_collections.benchlab.bench.plugins.module_utils.sysbench import sysbench_record
from ansible_collections.benchlab.bench.plugins.module_utils.toolnames import matrix_tool, record_tool

MATRIX_SCHEMA = Path(__file__).resolve().parents[4] / 'plugins' / 'plugin_utils' / 'schemas' / 'matrix-v1.json'


def test_every_matrix_tool_is_mapped():
    tools = json.loads(MATRIX_SCHEMA.read_text())['$defs']['benchmark']['properties']['tool']['enum']
    missing = sorted(set(tools) - set(toolnames.TOOLS))
    assert not missing, ('the matrix schema names %s: add a line to TOOLS in plugins/module_utils/toolnames.py '
                         '(its record names and process names)' % missing)
    assert sorted(tools) == sorted(toolnames.TOOLS), 'TOOLS in toolnames.py has a tool the matrix schema does not name'
    for tool in tools:
        assert matrix_tool(record_tool(tool)) == tool


def test_names_both_ways():
    assert record_tool('bonnie') == 'bonnie++'
    assert record_tool('sysbench_fileio') == 'sysbench'
    assert matrix_tool('iperf3') == matrix_tool('iperf') == 'iperf'
    assert record_tool('time') == matrix_tool('time') == 'time'


def test_parsers_use_the_mapping(read_fixture):
    assert bonnie.TOOL == 'bonnie++'
    rec = sysbench_record(read_fixture('sysbench/' + _first_fixture('sysbench')))
    assert matrix_tool(rec['tool']) == 'sysbench_fileio'


def _first_fixture(tool):
    base = Path(__file__).resolve().parents[2] / 'fixtures' / tool
    return sorted(p.name for p in base.iterdir() if p.suffix == '.txt' and 'seqwr' in p.name)[0]


def test_record_schema_takes_the_tool_names_from_the_registry():
    schema = record.load_schema()
    assert schema['properties']['tool']['enum'] == toolnames.record_names()
    assert set(toolnames.record_names()) >= {'dd', 'bonnie++', 'sysbench', 'iperf3', 'iperf', 'compress', 'fio'}
    rec = record.new_record('nosuchtool', 'write', {'throughput': record.metric(1.0, 'MB/s')})
    assert [p.split(':')[0] for p in record.validate_record(rec)] == ['tool']
    rec['tool'] = 'bonnie++'
    assert record.validate_record(rec) == []


def test_guards_count_every_registered_process_as_competing():
    assert set(toolnames.process_names()) <= set(guards.BENCH_PROCESSES)
    assert {'bonnie++', 'sysbench', 'iperf3', 'zstd', 'stress'} <= set(guards.BENCH_PROCESSES)
    assert 'dd' not in guards.BENCH_PROCESSES    # any dd on the host is no benchmark of ours


def test_a_tool_added_to_the_registry_reaches_schema_and_guards(monkeypatch):
    """One line in TOOLS is all the record schema and the guard need for a new benchmark."""
    monkeypatch.setitem(toolnames.TOOLS, 'newbench', (('newbench',), ('newbenchd',)))
    monkeypatch.setitem(toolnames.RECORD_TOOLS, 'newbench', ('newbench',))
    assert record.load_schema()['properties']['tool']['enum'][-1] == 'newbench'
    assert toolnames.process_names()[-1] == 'newbenchd'
