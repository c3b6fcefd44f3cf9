# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fio, as a benchmark unit: what the controller knows about it beside its module
(plugins/modules/fio.py: the options) and its parser (plugins/module_utils/fio.py). The parts and
their meaning: plugin_utils/toolinfo.py. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.fio import fio_records

ORDER = 20
RECORDS = ('fio',)
PROCESSES = ('fio',)
INSTALL = {'fio': {'programs': ['fio'], 'packages': {'Debian': ['fio'], 'RedHat': ['fio']}}}
METRICS = [
    ('*_iops', 'ops/s', 'higher', 'I/O operations per second, read_ and write_ (one record per job, its workers summed)'),
    ('*_throughput', 'MB/s', 'higher', 'read_ and write_ throughput'),
    ('*_lat_mean', 'ms', 'lower', 'mean completion latency, read_ and write_'),
    ('*_lat_p99', 'ms', 'lower', "99th percentile of the completion latency (fio's json+ percentiles), read_ and write_"),
]
NOT_PARAMS = {
    'path': "the cell's path",
    'name': "the benchmark's name (the run path gives it)",
    'job_file': 'a file on the target; a matrix names a job file on the controller (PLAN_PARAMS job_file)',
    'job_file_content': "the run path's: the text of the matrix's job_file",
    'job_file_name': "the run path's: the name of the matrix's job_file",
    'allow_unsafe_options': 'never from a matrix: a job that runs programs or writes outside its work directory is run by hand',
    'destructive': "a matrix's fio runs write files in the cell's path only (devices: the dd benchmark)",
    'force': "a matrix's fio runs write files in the cell's path only",
}
PARAMS = {
    # the matrix leaves out the trim patterns (they discard blocks of a device)
    'rw': {'enum': ['read', 'write', 'randread', 'randwrite', 'rw', 'readwrite', 'randrw']},
    'bs': {'$ref': '#/$defs/size'},
    'size': {'$ref': '#/$defs/size'},
    'runtime': {'minimum': 1, 'maximum': 86400},
    'ioengine': {'pattern': '^[a-z0-9_]+$'},
    'iodepth': {'minimum': 1, 'maximum': 65536},
    'numjobs': {'minimum': 1, 'maximum': 1024},
    'rwmixread': {'minimum': 0, 'maximum': 100},
    'options': {'propertyNames': {'pattern': '^[A-Za-z0-9_]+$'},
                'additionalProperties': {'type': ['string', 'number', 'boolean']}},
}
PLAN_PARAMS = {
    'job_file': {
        'type': 'string', 'minLength': 1,
        'description': 'A fio job file on the controller (absolute, or relative to where ansible-playbook runs), run '
                       'instead of the job the other params describe: read and checked before any host is touched, '
                       'copied to the target\'s work directory; its content is part of the run key. One record per job '
                       '(name within its stonewall group), aggregated over numjobs.'},
}


def module_args(run):
    """The job's name is the benchmark's; a job file of the matrix travels as its text (read and
    checked on the controller, plugin_utils/jobfiles.py) and its name."""
    params = run.get('params') or {}
    args = {'name': run['benchmark']}
    if params.get('job_file'):
        args['job_file_name'] = params['job_file']
    if params.get('job_file_content') is not None:
        args['job_file_content'] = params['job_file_content']
    return args


def estimate_s(params, opt, mb):
    """A job file's length is its own (unknown here); a timed job its runtime plus laying out its
    file at 200 MB/s; otherwise the size at 50 MB/s."""
    if params.get('job_file'):
        return None
    if params.get('runtime'):
        return float(params['runtime']) + (mb('size') or 0) / 200.0
    size = mb('size')
    return None if size is None else size / 50.0


IMPORTS = {'fio': {'parse': lambda entry, text: fio_records(text), 'keys': ()}}


def direction(record):
    """'read' or 'write' when the job only reads or only writes (its rw; a job file's from its
    job_options; fio lays out a read job's file first, which is not the job's work), None for a
    mixed or trim job or one whose rw the record does not carry."""
    params = record.get('params') or {}
    rw = params.get('rw') or (params.get('job_options') or {}).get('rw')
    rw = str(rw).split(':', maxsplit=1)[0] if rw else None
    return 'read' if rw in ('read', 'randread') else 'write' if rw in ('write', 'randwrite') else None


SYNC_OPTIONS = ('end_fsync', 'fsync', 'fdatasync', 'fsync_on_close')


def synced(record):
    """A write job that fsyncs what it wrote before it ends (end_fsync, the module's default; fsync,
    fdatasync or fsync_on_close in its options or its job file's)."""
    params = record.get('params') or {}
    if direction(record) != 'write':
        return False
    given = dict(params.get('job_options') or {}, **(params.get('options') or {}))
    if params.get('end_fsync'):
        given['end_fsync'] = 1
    return any(str(given.get(k, '0')).strip().lower() not in ('0', 'false', 'no', 'off', '') for k in SYNC_OPTIONS)
