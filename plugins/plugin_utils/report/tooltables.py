# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tables a tool adds to its benchmark's section of the report, beside the generic side-by-side
table. Pure functions.

A table function takes one benchmark of the analysis (analysis.py) and returns None (nothing to
add) or a table as plain data every renderer draws the same way (report.md, report.html):

    {'title': str, 'note': str, 'columns': [(heading, numeric)], 'rows': [[text, ...]],
     'data': [{...}]}

`rows` hold the texts shown, already formatted (renderers escape them); `data` the numbers behind
them for results consumers and tests. A tool's tables are its benchmark unit's ``TABLES``
(plugins/plugin_utils/benchmarks/<tool>.py); @tool_table('<record tool>') registers one more (for
code outside the units); no renderer changes."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import matrix_tool, unit

_REGISTRY = {}


def tool_table(tool):
    """Register a table function for the records of `tool` (several per tool keep their order)."""
    def register(fn):
        _REGISTRY.setdefault(tool, []).append(fn)
        return fn
    return register


def tool_tables(bench):
    """The extra tables of one benchmark: its unit's, then the registered ones, in order."""
    mod = unit(matrix_tool(bench['tool']))
    fns = list(getattr(mod, 'TABLES', ()) or ()) + list(_REGISTRY.get(bench['tool'], ()))
    tables = (fn(bench) for fn in fns)
    return [t for t in tables if t]
