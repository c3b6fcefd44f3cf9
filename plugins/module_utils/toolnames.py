# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise. Used by bonnie, sysbench (parsers, modules, filters),
# guards (the competing processes), record (the record schema's tool names) and the callback.
"""The one registry of the benchmark tools, for the code that runs on targets too: a benchmark's
name in the matrix (= its module's name: ``bonnie``, ``sysbench_fileio``), the tool names its
records carry (``bonnie++``, ``sysbench``) and the names of the processes it starts (what the
quiesce guard counts as a competing benchmark). A new benchmark adds one line to TOOLS; the record
schema's ``tool`` names (record.load_schema) and guards.BENCH_PROCESSES come from it, and
tests/unit/plugins/module_utils/test_toolnames.py holds the matrix schema's tools to it.
"""

# matrix tool -> (the record tool names it produces: the first is the usual one; iperf's records
# say which iperf ran, iperf3 or iperf for iperf2), (the process names it runs: dd is left out, a
# dd of anything else on the host is no benchmark))
TOOLS = {
    'dd': (('dd',), ()),
    'fio': (('fio',), ('fio',)),
    'bonnie': (('bonnie++',), ('bonnie++',)),
    'dbench': (('dbench',), ('dbench',)),
    'sysbench_fileio': (('sysbench',), ('sysbench',)),
    'iperf': (('iperf3', 'iperf'), ('iperf3', 'iperf')),
    'compress': (('compress',), ('bzip2', 'xz', 'zstd')),
}

RECORD_TOOLS = dict((mat, recs) for mat, (recs, _procs) in TOOLS.items())

_MATRIX_TOOL = dict((rec, mat) for mat, recs in RECORD_TOOLS.items() for rec in recs)


def record_tool(matrix_tool):
    """'bonnie' -> 'bonnie++', 'sysbench_fileio' -> 'sysbench'; any other name unchanged."""
    names = RECORD_TOOLS.get(matrix_tool)
    return names[0] if names else matrix_tool


def matrix_tool(record_tool_name):
    """'bonnie++' -> 'bonnie', 'sysbench' -> 'sysbench_fileio', 'iperf3' -> 'iperf'; any other
    name unchanged."""
    return _MATRIX_TOOL.get(record_tool_name, record_tool_name)


def record_names():
    """Every tool name a record may carry, in TOOLS order."""
    return [rec for recs in RECORD_TOOLS.values() for rec in recs]


def process_names():
    """The process names of every benchmark in TOOLS, in TOOLS order, each once."""
    names = []
    for _recs, procs in TOOLS.values():
        names.extend(p for p in procs if p not in names)
    return tuple(names)
