# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dbench, as a benchmark unit: what the controller knows about it beside its module
(plugins/modules/dbench.py: the options) and its parser (plugins/module_utils/tools/dbench.py). The parts
and their meaning: plugin_utils/common/toolinfo.py. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

import os

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dbench import (
    MAX_LOADFILE_BYTES, TOO_LARGE, dbench_record, loadfile_problem, read_capped)

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
    'clients': {'minItems': 1},
    'loadfile': {'$ref': '#/$defs/path'},
}


def estimate_s(params, opt, mb):
    """Its time (plus 2 s to start) for each client count."""
    return (float(opt('time')) + 2) * max(len(params.get('clients') or [1]), 1)


IMPORTS = {'dbench': {'parse': lambda entry, text: [dbench_record(text, test=entry.get('test'),
                                                                  tool_version=entry.get('tool_version'))],
                      'keys': ()}}


def _load_file_problem(path):
    """The problem of one load file on the controller, or None (also when it is not here)."""
    if not os.path.isfile(path):
        return None         # not on the controller (or no regular file): the module judges it on the target
    try:
        data = read_capped(path, MAX_LOADFILE_BYTES)
    except OSError:
        return None
    if data is None:
        return '%s %s' % (path, TOO_LARGE % MAX_LOADFILE_BYTES)
    return loadfile_problem(data, name=path)


def check_params(params, where, cache):
    """(params, problems) of one dbench params mapping of a matrix at `where`: its load file
    (``loadfile``) read the way dbench reads it (module_utils/tools/dbench.loadfile_problem) where the
    controller has the file, a problem naming the field and the line; the module checks it again on
    the target, where it runs. `cache`: {path: problem} of this matrix's load files."""
    path = params.get('loadfile')
    if not isinstance(path, str):
        return params, []
    if path not in cache:
        cache[path] = _load_file_problem(path)
    return params, ['%s.loadfile: %s' % (where, cache[path])] if cache[path] else []
