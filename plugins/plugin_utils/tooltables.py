# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tables a tool adds to its benchmark's section of the report, beside the generic side-by-side
table: a small registry keyed by the record's tool. Pure functions.

A table function takes one benchmark of the analysis (analysis.py) and returns None (nothing to
add) or a table as plain data every renderer draws the same way (report.md, report.html):

    {'title': str, 'note': str, 'columns': [(heading, numeric)], 'rows': [[text, ...]],
     'data': [{...}]}

`rows` hold the texts shown, already formatted (renderers escape them); `data` the numbers behind
them for results consumers and tests. A new tool's table is one function here, registered with
@tool_table('<tool>'); no renderer changes."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.bonnie import TOOL as BONNIE, THROUGHPUT_TESTS, TOOL_UNIT, tool_units
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis import ordered_cells

_REGISTRY = {}


def tool_table(tool):
    """Register a table function for the records of `tool` (several per tool keep their order)."""
    def register(fn):
        _REGISTRY.setdefault(tool, []).append(fn)
        return fn
    return register


def tool_tables(bench):
    """The extra tables of one benchmark, in registration order."""
    tables = (fn(bench) for fn in _REGISTRY.get(bench['tool'], ()))
    return [t for t in tables if t]


def _fmt(value, pattern):
    return 'n/a' if value is None else pattern % value


@tool_table('dd')
def dd_table(b):
    """The first field report's table for a dd benchmark: per cell the duration (incl. the final sync),
    MB/s and "slower than baseline (in %)" = 1 - baseline_duration / duration (the throughput's
    1 - MB/s / baseline MB/s when no duration was recorded), each cell against its own baseline."""
    data = []
    for i, c in enumerate(ordered_cells(b), 1):
        el, tp = c['metrics'].get('elapsed'), c['metrics'].get('throughput')
        if c['baseline']:
            slower = 0.0
        else:
            ref = el if (el and el.get('slower_pct') is not None) else tp
            slower = ref.get('slower_pct') if ref else None
        label = ', '.join('%s' % v for v in (c.get('labels') or {}).values())
        data.append(dict(test=i, cell=c['cell'], description=label, baseline=c['baseline'],
                         duration=el['mean'] if el else None, mb_s=tp['mean'] if tp else None, slower_pct=slower))
    rows = [['%d' % r['test'], r['cell'], r['description'], _fmt(r['duration'], '%.3f'), _fmt(r['mb_s'], '%.2f'),
             _fmt(r['slower_pct'], '%.3f %%') + (' (baseline)' if r['baseline'] else '')] for r in data]
    return dict(title='dd, as in the field reports', note='duration includes the final sync',
                columns=[('test', True), ('cell', False), ('description', False), ('duration (s)', True),
                         ('MB/s', True), ('slower than baseline (%)', True)],
                rows=rows, data=data)


@tool_table(BONNIE)
def bonnie_table(b):
    """bonnie++'s throughputs in the unit it prints (K/sec, KiB/s) beside the record's MB/s (10^6
    bytes/s), per cell and test: the mean over the counted runs, as the field reports printed them."""
    data = []
    for c in ordered_cells(b):
        for test in THROUGHPUT_TESTS:
            m = c['metrics'].get(test)
            if not m or (m.get('mean') is None and not m.get('too_fast')):
                continue
            data.append(dict(cell=c['cell'], test=test, k_sec=tool_units(test, m['mean']), mb_s=m['mean'], n=m.get('n'),
                             too_fast=m.get('too_fast') or 0, baseline=c['baseline']))
    if not data:
        return None
    # a test bonnie++ printed as +++++ in every run stays a row, as bonnie++ printed it
    rows = [[r['cell'] + (' (baseline)' if r['baseline'] else ''), r['test'],
             '+++++' if r['k_sec'] is None else '%.0f' % r['k_sec'], '+++++' if r['mb_s'] is None else '%.2f' % r['mb_s'],
             _fmt(r['n'], '%d')] for r in data]
    return dict(title='bonnie++, in the units it prints', note='%s = KiB/s as bonnie++ prints it; MB/s = 10^6 bytes/s' % TOOL_UNIT,
                columns=[('cell', False), ('test', False), (TOOL_UNIT, True), ('MB/s', True), ('n', True)],
                rows=rows, data=data)
