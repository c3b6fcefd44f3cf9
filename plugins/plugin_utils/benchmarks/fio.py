# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fio, as a benchmark unit: what the controller knows about it beside its module
(plugins/modules/fio.py: the options) and its parser (plugins/module_utils/tools/fio.py). The parts and
their meaning: plugin_utils/common/toolinfo.py. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from ansible.utils.unsafe_proxy import wrap_var

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import fio_records, job_file_in_workdir, job_file_text, parse_only_problem
from ansible_collections.benchlab.bench.plugins.module_utils.tools.fiojob import (
    FioJobError, check_fio_job, engine_problem, options_to_sections, parse_job_file)

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
    'ioengine': {'pattern': '^[a-z0-9_]+$'},
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
    checked on the controller, check_params below) and its name."""
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


# fio job files and job options named by a matrix (``params: {job_file: <file on the controller>}``,
# ``params: {options: {...}}``), checked on the controller before any host is touched: each job file
# is read, parsed and checked the way the fio module will check it on the target (module_utils/tools/fiojob:
# [global] inheritance, options that run programs, devices), and, when fio is installed on the
# controller, by ``fio --parse-only`` too; a problem names the matrix field, the file and the line.
# Its text then travels in the run's params as ``job_file_content`` (the module runs a copy in its
# work directory), so the content is part of the run key: a changed file is a new cell for resume.
MAX_JOB_FILE_BYTES = 1024 * 1024
# Where the check pretends the work directory is (nothing is created there).
_CHECK_WORKDIR = '/nonexistent/benchlab-fio-check'


def _parse_only(text, sections, origin):
    """fio --parse-only on the controller (when fio is installed here), or None."""
    fio = shutil.which('fio')
    if not fio:
        return None
    fd, path = tempfile.mkstemp(prefix='benchlab-jobcheck-', suffix='.fio')
    try:
        with os.fdopen(fd, 'w') as f:
            f.write(text)
        proc = subprocess.run([fio, '--parse-only', path], capture_output=True, text=True, check=False, timeout=60,
                              cwd=tempfile.gettempdir(), env=dict(os.environ, LC_ALL='C'))
    except (OSError, subprocess.SubprocessError) as e:
        return None if isinstance(e, OSError) else '%s: fio --parse-only did not finish: %s' % (origin, e)
    finally:
        os.unlink(path)
    if proc.returncode == 0:
        return None
    return parse_only_problem(proc.stdout + proc.stderr, sections, origin)


def check_job_file(path):
    """(text, problem or None) of one job file; the problem names the file and the line."""
    origin = path
    try:
        with open(path, 'rb') as f:
            raw = f.read(MAX_JOB_FILE_BYTES + 1)
    except OSError as e:
        return None, 'cannot read the fio job file %s: %s' % (path, e.strerror or e)
    if len(raw) > MAX_JOB_FILE_BYTES:
        return None, '%s is larger than %d bytes: not a fio job file?' % (path, MAX_JOB_FILE_BYTES)
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as e:
        return None, '%s is not UTF-8 text (byte %d)' % (path, e.start)
    try:
        sections = parse_job_file(text, name=origin)
        if not any(not s.startswith('global') for s, _v, _l in sections):
            return None, '%s has no job section (only [global]): fio would run nothing' % path
        moved, _notes = job_file_in_workdir(sections, _CHECK_WORKDIR, origin=origin)
        found = check_fio_job(moved, _CHECK_WORKDIR, origin=origin)
    except FioJobError as e:
        return None, str(e)
    if found.get('devices'):
        return None, ('%s names block device(s) %s: a matrix runs job files on files in the cell\'s path; '
                      'run device benchmarks with the fio module and destructive: true' % (path, ', '.join(found['devices'])))
    if found.get('outside'):
        return None, ('%s writes outside the work directory (%s): benchlab writes only in its own work directory; '
                      'remove or make these paths relative' % (path, ', '.join('[%s] %s=%s' % o for o in found['outside'])))
    problem = _parse_only(job_file_text(moved), moved, origin)
    if problem:
        return None, problem
    return text, None


def options_problem(options):
    """Why a fio benchmark's `options` (the fio module's option: further job options) would be
    refused on the target, or None: the fio module's own check (module_utils/tools/fiojob), with the same
    rules as a job file of the matrix (no block device, nothing outside the work directory)."""
    try:
        sections = options_to_sections(options, name='options', base={'name': 'check', 'directory': _CHECK_WORKDIR})
        found = check_fio_job(sections, _CHECK_WORKDIR, origin='options')
    except FioJobError as e:
        return str(e).replace('(allow_unsafe)', '(not from a matrix: the fio module with allow_unsafe_options: true)')
    if found.get('devices'):
        return ('names block device(s) %s: a matrix runs fio on files in the cell\'s path; run device benchmarks '
                'with the fio module and destructive: true' % ', '.join(found['devices']))
    if found.get('outside'):
        return ('writes outside the work directory (%s): benchlab writes only in its own work directory; remove or '
                'make these paths relative' % ', '.join('%s=%s' % (k, v) for _s, k, v in found['outside']))
    return None


def check_params(params, where, cache):
    """(params, problems) of one fio params mapping of a matrix (a benchmark's, or a cell's
    ``params.fio``) at `where`: its options and engine as the fio module would check them, and its job
    file read and checked here; a job file's params come back as a new mapping with the absolute
    ``job_file`` and its text, ``job_file_content``. `cache`: {path: (text, problem)} of this matrix's
    job files (each read once). Relative paths are taken from the current directory (where
    ansible-playbook runs)."""
    problems = []
    if params.get('options'):
        problem = options_problem(params['options'])
        if problem:
            problems.append('%s.options: %s' % (where, problem))
    if isinstance(params.get('ioengine'), str):
        problem = engine_problem(params['ioengine'])
        if problem:
            problems.append('%s.ioengine: %s is refused: %s; a matrix cannot allow it (the fio module can, with '
                            'allow_unsafe_options: true)' % (where, params['ioengine'], problem))
    if not params.get('job_file'):
        return params, problems
    path = os.path.abspath(os.path.expanduser(str(params['job_file'])))
    if path not in cache:
        cache[path] = check_job_file(path)
    text, problem = cache[path]
    if problem:
        return params, problems + ['%s.job_file: %s' % (where, problem)]
    # data, never a template: a job file's `{{` must reach fio as written (ansible-core < 2.19 would
    # otherwise template the plan's strings again)
    return dict(params, job_file=path, job_file_content=wrap_var(text)), problems
