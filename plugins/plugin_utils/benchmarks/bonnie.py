# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bonnie++, as a benchmark unit: what the controller knows about it beside its module
(plugins/modules/bonnie.py: the options) and its parser (plugins/module_utils/tools/bonnie.py). The parts
and their meaning: plugin_utils/common/toolinfo.py. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.tools.bonnie import THROUGHPUT_TESTS, TOOL_UNIT, bonnie_records, tool_units
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import ordered_cells

ORDER = 30
RECORDS = ('bonnie++',)
PROCESSES = ('bonnie++',)
INSTALL = {'bonnie': {'programs': ['bonnie++'], 'packages': {'Debian': ['bonnie++'], 'RedHat': ['bonnie++']}}}
METRICS = [
    ('seq_output_char', 'MB/s', 'higher', 'sequential output per character'),
    ('seq_output_block', 'MB/s', 'higher', 'sequential output per block'),
    ('seq_rewrite', 'MB/s', 'higher', 'sequential rewrite'),
    ('seq_input_char', 'MB/s', 'higher', 'sequential input per character'),
    ('seq_input_block', 'MB/s', 'higher', 'sequential input per block'),
    ('random_seeks', 'seeks/s', 'higher', 'random seeks'),
    ('seq_create', 'files/s', 'higher', 'files created in sequence'),
    ('seq_read', 'files/s', 'higher', 'files read (stat) in sequence'),
    ('seq_delete', 'files/s', 'higher', 'files deleted in sequence'),
    ('random_create', 'files/s', 'higher', 'files created at random'),
    ('random_read', 'files/s', 'higher', 'files read (stat) at random'),
    ('random_delete', 'files/s', 'higher', 'files deleted at random'),
    ('*_cpu', '%', 'lower', 'the CPU bonnie++ used in each of the tests above'),
    ('*_latency', 'ms', 'lower', 'the latency of each of the tests above, where bonnie++ prints it'),
]
NOT_PARAMS = {'path': "the cell's path"}
PARAMS = {
    'size': {'$ref': '#/$defs/size'},
    'ram': {'$ref': '#/$defs/size'},
    'files': {'type': ['string', 'integer'], 'pattern': '^[0-9]+(:[0-9]+(:[0-9]+(:[0-9]+)?)?)?$'},
    'machine': {'pattern': '^[A-Za-z0-9_.:-]+$'},
    'user': {'pattern': '^[a-z_][a-z0-9_-]{0,31}$'},
}


def estimate_s(params, opt, mb):
    """Unknown at bonnie++'s default of twice the RAM; else three passes over the size at 30 MB/s."""
    if 'size' not in params:
        return None
    size = mb('size')
    return None if size is None else size / 30.0 * 3.0


IMPORTS = {'bonnie++': {'parse': lambda entry, text: bonnie_records(text, tool_version=entry.get('tool_version')),
                        'keys': ()}}


def tool_value(metric, value):
    """A record's value in the unit bonnie++ prints, (value, unit), where that differs from the
    record's (its throughputs: MB/s -> K/sec); None otherwise (results.csv's tool_value, tool_unit)."""
    native = tool_units(metric, value)
    return None if native is None else (native, TOOL_UNIT)


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
             '%d' % r['n'] if r['n'] is not None else 'n/a'] for r in data]
    return dict(title='bonnie++, in the units it prints', note='%s = KiB/s as bonnie++ prints it; MB/s = 10^6 bytes/s' % TOOL_UNIT,
                columns=[('cell', False), ('test', False), (TOOL_UNIT, True), ('MB/s', True), ('n', True)],
                rows=rows, data=data)


TABLES = (bonnie_table,)
