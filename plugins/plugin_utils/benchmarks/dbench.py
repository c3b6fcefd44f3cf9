# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dbench, as a benchmark unit: what the controller knows about it beside its module
(plugins/modules/dbench.py: the options) and its parser (plugins/module_utils/dbench.py). The parts
and their meaning: plugin_utils/toolinfo.py. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.dbench import dbench_record

ORDER = 40
RECORDS = ('dbench',)
PROCESSES = ('dbench',)
# EL 9 has no dbench package
INSTALL = {'dbench': {'programs': ['dbench'], 'packages': {'Debian': ['dbench'], 'RedHat': ['dbench'], 'RedHat-9': None}}}
METRICS = [
    ('throughput', 'MB/s', 'higher', 'the throughput dbench reports for all its clients'),
    ('max_latency', 'ms', 'lower', 'the largest latency of any operation'),
    ('op_*_avg_latency', 'ms', 'lower', 'per operation (op_readx, op_writex, ...): the mean latency'),
]
NOT_PARAMS = {'path': "the cell's path"}
PARAMS = {
    'clients': {'minItems': 1, 'items': {'type': 'integer', 'minimum': 1, 'maximum': 4096}},
    'time': {'minimum': 2, 'maximum': 86400},
    'loadfile': {'$ref': '#/$defs/path'},
    'timeout': {'minimum': 1, 'maximum': 172800},
}


def estimate_s(params, opt, mb):
    """Its time (plus 2 s to start) for each client count."""
    return (float(opt('time')) + 2) * max(len(params.get('clients') or [1]), 1)


IMPORTS = {'dbench': {'parse': lambda entry, text: [dbench_record(text, test=entry.get('test'),
                                                                  tool_version=entry.get('tool_version'))],
                      'keys': ()}}
