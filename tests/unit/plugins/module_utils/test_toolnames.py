# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/toolnames.py: every matrix tool has a record name, and the parsers' records carry it."""

import json
from pathlib import Path

from ansible_collections.benchlab.bench.plugins.module_utils import bonnie, toolnames
from ansible_collections.benchlab.bench.plugins.module_utils.sysbench import sysbench_record
from ansible_collections.benchlab.bench.plugins.module_utils.toolnames import matrix_tool, record_tool

MATRIX_SCHEMA = Path(__file__).resolve().parents[4] / 'plugins' / 'plugin_utils' / 'schemas' / 'matrix-v1.json'


def test_every_matrix_tool_is_mapped():
    tools = json.loads(MATRIX_SCHEMA.read_text())['$defs']['benchmark']['properties']['tool']['enum']
    assert sorted(tools) == sorted(toolnames.RECORD_TOOLS)
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
