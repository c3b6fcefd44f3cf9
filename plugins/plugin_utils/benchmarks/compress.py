# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""compress (``time bzip2`` and friends), as a benchmark unit: what the controller knows about it
beside its module (plugins/modules/compress.py: the options) and its parsers
(plugins/module_utils/tools/compress.py, module_utils/tools/timeparse.py for hand-run ``time``). The parts and
their meaning: plugin_utils/common/toolinfo.py. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.tools.compress import compress_metrics
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import tail
from ansible_collections.benchlab.bench.plugins.module_utils.tools.timeparse import parse_time

ORDER = 70
RECORDS = ('compress',)
PROCESSES = ('bzip2', 'xz', 'zstd')
INSTALL = {'compress': {'programs': ['bzip2', 'gzip', 'xz', 'zstd', '/usr/bin/time'],
                        'packages': {'Debian': ['bzip2', 'gzip', 'xz-utils', 'zstd', 'time'],
                                     'RedHat': ['bzip2', 'gzip', 'xz', 'zstd', 'time']}}}
METRICS = [
    ('elapsed', 's', 'lower', 'wall time of one compress or decompress run (one record per compressor and direction)'),
    ('user', 's', 'lower', 'user CPU time of the compressor'),
    ('sys', 's', 'lower', 'system CPU time of the compressor'),
    ('throughput', 'MB/s', 'higher', 'uncompressed bytes per second of wall time'),
]
NOT_PARAMS = {'path': "the cell's path"}
PARAMS = {
    'size': {'$ref': '#/$defs/size'},
    'input': {'$ref': '#/$defs/path'},
    'compressors': {'minItems': 1, 'uniqueItems': True},
}


def estimate_s(params, opt, mb):
    """Each compressor compresses and decompresses the size at 5 MB/s."""
    size = mb('size')
    return None if size is None else size / 5.0 * 2.0 * max(len(opt('compressors') or ['bzip2']), 1)


def time_records(entry, text):
    """One compress-shaped record per `time` block (each block is a repetition of the entry's test)."""
    records = []
    for block in parse_time(text):
        if entry.get('bytes'):
            metrics = compress_metrics(entry['bytes'], block['real'], block['user'], block['sys'])
        else:
            metrics = dict(elapsed=metric(block['real'], 's', 'lower'), user=metric(block['user'], 's', 'lower'),
                           sys=metric(block['sys'], 's', 'lower'))
        records.append(new_record('compress', entry['test'], metrics, tool_version=entry.get('tool_version'),
                                  raw_tail=tail(text, 5)))
    return records


IMPORTS = {'time': {'parse': time_records, 'keys': ('bytes',)}}
