# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fio job files and job options named by a matrix (``{tool: fio, params: {job_file: <file on the
controller>}}``, ``params: {options: {...}}``), on the controller, before any host is touched; and dbench
load files (``loadfile``), when the controller has the file (the module checks it again on the target,
where it runs).

Each job file is read, parsed and checked the way the fio module will check it on the target
(module_utils/fiojob: [global] inheritance, options that run programs, devices), and, when fio is
installed on the controller, by ``fio --parse-only`` too; a problem names the matrix field, the file
and the line. Its text then travels in the run's params as ``job_file_content`` (the module runs a
copy in its work directory), so the content is part of the run key: a changed file is a new cell
for resume (plugin_utils/resume.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from ansible.utils.unsafe_proxy import wrap_var

from ansible_collections.benchlab.bench.plugins.module_utils.dbench import loadfile_problem
from ansible_collections.benchlab.bench.plugins.module_utils.fio import job_file_in_workdir, job_file_text, parse_only_problem
from ansible_collections.benchlab.bench.plugins.module_utils.fiojob import (
    FioJobError, check_fio_job, engine_problem, options_to_sections, parse_job_file)

MAX_JOB_FILE_BYTES = 1024 * 1024
# The module's cap on a dbench load file (modules/dbench.py MAX_LOADFILE_BYTES)
MAX_LOAD_FILE_BYTES = 256 * 1024 * 1024
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
    refused on the target, or None: the fio module's own check (module_utils/fiojob), with the same
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


def _params_copy(matrix):
    """A copy of the matrix in which every dict with_job_files may change (the fio params of each
    benchmark and cell) is a new one; the rest is shared. Not copy.deepcopy: on ansible-core 2.19+
    the matrix is a lazy template container, and deep-copying one copies its templating context
    too (about a second for a three-run matrix)."""
    out = dict(matrix)
    if isinstance(out.get('benchmarks'), list):
        out['benchmarks'] = [dict(b, params=dict(b['params'])) if isinstance(b, dict) and isinstance(b.get('params'), dict)
                             else b for b in out['benchmarks']]
    if isinstance(out.get('cells'), list):
        cells = []
        for c in out['cells']:
            if isinstance(c, dict) and isinstance(c.get('params'), dict) and isinstance(c['params'].get('fio'), dict):
                c = dict(c, params=dict(c['params'], fio=dict(c['params']['fio'])))
            cells.append(c)
        out['cells'] = cells
    return out


def with_job_files(matrix):
    """(matrix copy with `job_file_content` next to every fio `job_file`, problems); the matrix itself
    when it names no job file. The problems name job files that do not pass the fio module's check and
    engines (`ioengine`) the module refuses. Relative paths are taken from the current directory (where
    ansible-playbook runs)."""
    out = _params_copy(matrix)
    problems = []
    cache = {}

    def load(where, params):
        if isinstance(params, dict) and params.get('options'):
            problem = options_problem(params['options'])
            if problem:
                problems.append('%s.options: %s' % (where, problem))
        if isinstance(params, dict) and isinstance(params.get('ioengine'), str):
            problem = engine_problem(params['ioengine'])
            if problem:
                problems.append('%s.ioengine: %s is refused: %s; a matrix cannot allow it (the fio module can, with '
                                'allow_unsafe_options: true)' % (where, params['ioengine'], problem))
        if not isinstance(params, dict) or not params.get('job_file'):
            return
        path = os.path.abspath(os.path.expanduser(str(params['job_file'])))
        if path not in cache:
            cache[path] = check_job_file(path)
        text, problem = cache[path]
        if problem:
            problems.append('%s.job_file: %s' % (where, problem))
            return
        params['job_file'] = path
        # data, never a template: a job file's `{{` must reach fio as written (ansible-core < 2.19
        # would otherwise template the plan's strings again)
        params['job_file_content'] = wrap_var(text)

    for i, b in enumerate(out.get('benchmarks') or []):
        if b.get('tool') == 'fio':
            load('bench_matrix.benchmarks[%d].params' % i, b.get('params'))
    for i, c in enumerate(out.get('cells') or []):
        load('bench_matrix.cells[%d].params.fio' % i, (c.get('params') or {}).get('fio'))
    return (out if cache else matrix), problems


def _load_file_problem(path):
    """The problem of one dbench load file on the controller, or None (also when it is not here)."""
    if not os.path.isfile(path):
        return None         # not on the controller (or no regular file): the module judges it on the target
    try:
        with open(path, 'rb') as f:
            data = f.read(MAX_LOAD_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_LOAD_FILE_BYTES:
        return '%s is larger than %d bytes: not a dbench load file?' % (path, MAX_LOAD_FILE_BYTES)
    return loadfile_problem(data, name=path)


def load_file_problems(matrix):
    """Problems of the dbench load files (`loadfile`) a matrix names, read the way dbench reads them
    (module_utils/dbench.loadfile_problem) where the controller has the file, each naming the field and
    the line."""
    problems, cache = [], {}

    def check(where, params):
        if not isinstance(params, dict) or not isinstance(params.get('loadfile'), str):
            return
        path = params['loadfile']
        if path not in cache:
            cache[path] = _load_file_problem(path)
        if cache[path]:
            problems.append('%s.loadfile: %s' % (where, cache[path]))

    for i, b in enumerate(matrix.get('benchmarks') or []):
        if isinstance(b, dict) and b.get('tool') == 'dbench':
            check('bench_matrix.benchmarks[%d].params' % i, b.get('params'))
    for i, c in enumerate(matrix.get('cells') or []):
        if isinstance(c, dict) and isinstance(c.get('params'), dict):
            check('bench_matrix.cells[%d].params.dbench' % i, c['params'].get('dbench'))
    return problems
