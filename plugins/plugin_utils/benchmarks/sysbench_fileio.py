# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysbench fileio, as a benchmark unit: what the controller knows about it beside its module
(plugins/modules/sysbench_fileio.py: the options) and its parser (plugins/module_utils/tools/sysbench.py).
The parts and their meaning: plugin_utils/common/toolinfo.py. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.tools.sysbench import sysbench_record

ORDER = 50
RECORDS = ('sysbench',)
PROCESSES = ('sysbench',)
INSTALL = {'sysbench': {'programs': ['sysbench'], 'packages': {'Debian': ['sysbench'], 'RedHat': ['sysbench']}}}
METRICS = [
    ('reads_per_s', 'ops/s', 'higher', 'file reads per second'),
    ('writes_per_s', 'ops/s', 'higher', 'file writes per second'),
    ('fsyncs_per_s', 'ops/s', 'higher', 'fsync calls per second'),
    ('read_throughput', 'MB/s', 'higher', 'bytes read per second'),
    ('write_throughput', 'MB/s', 'higher', 'bytes written per second'),
    ('latency_avg', 'ms', 'lower', 'mean latency of a request'),
    ('latency_p95', 'ms', 'lower', '95th percentile of the latency'),
]
NOT_PARAMS = {'path': "the cell's path"}
PARAMS = {
    'size': {'$ref': '#/$defs/size'},
    'bs': {'$ref': '#/$defs/size'},
}


def estimate_s(params, opt, mb):
    """Its time, plus preparing the file set at 100 MB/s."""
    return float(opt('time')) + (mb('size') or 0) / 100.0


IMPORTS = {'sysbench': {'parse': lambda entry, text: [sysbench_record(text, test=entry.get('test'),
                                                                      tool_version=entry.get('tool_version'))],
                        'keys': ()}}


def direction(record):
    """'read' for the read modes (seqrd, rndrd: sysbench prepares the file set first, which is not
    the test's work), 'write' for the write modes, None for rndrw."""
    mode = (record.get('params') or {}).get('mode')
    return 'read' if mode in ('seqrd', 'rndrd') else 'write' if mode in ('seqwr', 'seqrewr', 'rndwr') else None


def synced(record):
    """A write mode that fsyncs at its end (--file-fsync-end, the module's default)."""
    params = record.get('params') or {}
    return direction(record) == 'write' and params.get('fsync_end', True) is not False
