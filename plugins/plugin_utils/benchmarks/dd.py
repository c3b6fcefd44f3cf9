# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dd, as a benchmark unit: what the controller knows about it beside its module
(plugins/modules/dd.py: the options) and its parser (plugins/module_utils/tools/dd.py). The parts and
their meaning: plugin_utils/common/toolinfo.py. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import dd_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import ordered_cells

ORDER = 10
RECORDS = ('dd',)
PROCESSES = ()   # a dd of anything else is no benchmark
INSTALL = {'dd': {'programs': ['dd'], 'packages': {'Debian': ['coreutils'], 'RedHat': ['coreutils']}}}
METRICS = [
    ('throughput', 'MB/s', 'higher', 'bytes written (or read, copied) per second, the final sync included'),
    ('bytes', 'bytes', 'higher', 'bytes dd transferred'),
    ('elapsed', 's', 'lower', 'the time dd took, the final sync included'),
]
NOT_PARAMS = {'path': "the cell's path", 'keep': 'a debugging aid: a matrix leaves nothing behind'}
PARAMS = {
    'size': {'$ref': '#/$defs/size'},
    'bs': {'$ref': '#/$defs/size'},
    'input': {'$ref': '#/$defs/path'},
    'data_dir': {'$ref': '#/$defs/path'},
}
# dd keeps its random source in an owned directory of its own there.
CLEANUP_PATHS = ('/dev/shm',)


def estimate_s(params, opt, mb):
    """The size at 50 MB/s (twice for a copy: read and written)."""
    size = mb('size')
    return None if size is None else size / 50.0 * (2.0 if params.get('test') == 'copy' else 1.0)


def _import(entry, text):
    return [dd_record(text, test=entry.get('test') or 'write', bs=entry.get('bs'), tool_version=entry.get('tool_version'),
                      sync_after=entry.get('sync_after', False))]


IMPORTS = {'dd': {'parse': _import, 'keys': ('bs', 'sync_after')}}


def direction(record):
    """dd's read test reads the storage, its write test writes it; a copy does both."""
    return {'read': 'read', 'write': 'write'}.get(record.get('test'))


def synced(record):
    """A write or copy ends with the fdatasync dd waits for (conv=fdatasync, the default)."""
    params = record.get('params') or {}
    return record.get('test') in ('write', 'copy') and params.get('fdatasync', True) is not False


def _fmt(value, pattern):
    return 'n/a' if value is None else pattern % value


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


TABLES = (dd_table,)
