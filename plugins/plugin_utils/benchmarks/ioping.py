# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ioping, as a benchmark unit: what the controller knows about it beside its module
(plugins/modules/ioping.py: the options) and its parser (plugins/module_utils/tools/ioping.py). The parts
and their meaning: plugin_utils/common/toolinfo.py. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.tools.ioping import ioping_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import ordered_cells

ORDER = 80
RECORDS = ('ioping',)
PROCESSES = ('ioping',)
# EPEL on EL (bench_tools' repositories)
INSTALL = {'ioping': {'programs': ['ioping'], 'packages': {'Debian': ['ioping'], 'RedHat': ['ioping']}}}
METRICS = [
    ('latency_min', 'ms', 'lower', 'the fastest request ioping counted (never its warm-up request)'),
    ('latency_avg', 'ms', 'lower', 'the mean time of a request'),
    ('latency_max', 'ms', 'lower', 'the slowest request'),
    ('latency_mdev', 'ms', 'lower', "the requests' standard deviation"),
    ('iops', 'ops/s', 'higher', 'requests per second of request time'),
    ('throughput', 'MB/s', 'higher', 'bytes per second of request time'),
]
NOT_PARAMS = {'path': "the cell's path"}
PARAMS = {
    'interval': {'pattern': '^[0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|min|h|hour)?$'},
    'size': {'$ref': '#/$defs/size'},
    'work_size': {'$ref': '#/$defs/size'},
}


def estimate_s(params, opt, mb):
    """Its time limit, else count requests at 10 ms each plus the intervals (ioping's own time units
    are not parsed here: an interval of a second or more is taken as a second)."""
    if opt('time'):
        return float(opt('time')) + 1
    interval = str(opt('interval') or '0').strip()
    if interval in ('0', '0s'):
        per = 0.0
    elif interval.endswith('s') and not interval.endswith(('ms', 'us', 'ns')):
        per = 1.0
    else:
        per = 0.01
    return int(opt('count')) * (0.01 + per) + 1


IMPORTS = {'ioping': {'parse': lambda entry, text: [ioping_record(text, test=entry.get('test'),
                                                                  tool_version=entry.get('tool_version'))],
                      'keys': ()}}


def direction(record):
    """ioping's requests: reads, or writes (its write mode, ioping -W)."""
    return 'write' if (record.get('params') or {}).get('write') or record.get('test') == 'write' else 'read'


def _ms(value):
    return 'n/a' if value is None else '%.3f' % value


def ioping_table(b):
    """What one request costs per cell: the requests' latencies (the means over the runs) and, beside
    the baseline's, the time each request adds (mean request time minus the baseline's): what a
    layer (DRBD protocol C, a guest's disk) costs per I/O."""
    by_name = dict((c['cell'], c) for c in b['cells'])
    data = []
    for c in ordered_cells(b):
        mean = dict((k, (c['metrics'].get(k) or {}).get('mean')) for k in
                    ('latency_min', 'latency_avg', 'latency_max', 'latency_mdev', 'iops'))
        base = by_name.get(c.get('baseline_cell')) if not c['baseline'] else None
        base_avg = ((base or {}).get('metrics', {}).get('latency_avg') or {}).get('mean')
        added = None if mean['latency_avg'] is None or base_avg is None else mean['latency_avg'] - base_avg
        data.append(dict(cell=c['cell'], baseline=c['baseline'], n=(c['metrics'].get('latency_avg') or {}).get('n'),
                         added_ms=added, **mean))
    if not any(r['latency_avg'] is not None for r in data):
        return None
    rows = [[r['cell'] + (' (baseline)' if r['baseline'] else ''), _ms(r['latency_min']), _ms(r['latency_avg']),
             _ms(r['latency_max']), _ms(r['latency_mdev']), 'n/a' if r['iops'] is None else '%.0f' % r['iops'],
             '' if r['baseline'] else ('n/a' if r['added_ms'] is None else '%+.3f' % r['added_ms']),
             'n/a' if r['n'] is None else '%d' % r['n']] for r in data]
    return dict(title='ioping, what one request costs',
                note='ms, the means over the runs; added = the mean request time minus its baseline\'s',
                columns=[('cell', False), ('min', True), ('avg', True), ('max', True), ('mdev', True), ('iops', True),
                         ('added per request', True), ('n', True)],
                rows=rows, data=data)


TABLES = (ioping_table,)
