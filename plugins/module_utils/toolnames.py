# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise. Used by bonnie, sysbench (parsers, modules, filters).
"""The one mapping between a benchmark's name in the matrix (= its module's name: ``bonnie``,
``sysbench_fileio``) and the tool name its records carry (``bonnie++``, ``sysbench``).
"""

# matrix tool -> the record tool names it produces (the first is the usual one; iperf's records
# say which iperf ran: iperf3, or iperf for iperf2)
RECORD_TOOLS = {
    'dd': ('dd',),
    'fio': ('fio',),
    'bonnie': ('bonnie++',),
    'dbench': ('dbench',),
    'sysbench_fileio': ('sysbench',),
    'iperf': ('iperf3', 'iperf'),
    'compress': ('compress',),
}

_MATRIX_TOOL = dict((rec, mat) for mat, recs in RECORD_TOOLS.items() for rec in recs)


def record_tool(matrix_tool):
    """'bonnie' -> 'bonnie++', 'sysbench_fileio' -> 'sysbench'; any other name unchanged."""
    names = RECORD_TOOLS.get(matrix_tool)
    return names[0] if names else matrix_tool


def matrix_tool(record_tool_name):
    """'bonnie++' -> 'bonnie', 'sysbench' -> 'sysbench_fileio', 'iperf3' -> 'iperf'; any other
    name unchanged."""
    return _MATRIX_TOOL.get(record_tool_name, record_tool_name)
