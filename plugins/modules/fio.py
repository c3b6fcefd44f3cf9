#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: fio
short_description: Run one fio job (or a job file) and return result records
version_added: 0.1.0
description:
  - Runs C(fio --output-format=json+) once on the target, in a private work directory created inside
    O(path) and removed afterwards, and returns a result record per fio job with the metrics
    C(read_iops), C(read_throughput) (MB/s), C(read_lat_mean), C(read_lat_p99) (ms) and the same for
    C(write_).
  - The exit code is checked before anything is parsed; a failed job is a failure with fio's own
    message, never a number.
  - The job (O(options) and O(job_file)) is checked before fio runs, every option against fio's own
    option table (the options, aliases, engines and engine options C(fio --cmdhelp=all) and
    C(fio --enghelp) list, each classified by what it may touch). An option the table does not have is
    refused. Files a job names (targets, logs, I/O logs, C(mem=mmap:) files, pattern files,
    e4defrag's donor) must be inside the work directory. Engines other than those that write only the
    job's own files (C(psync), C(libaio), C(io_uring), C(sync), C(mmap), C(posixaio), C(null), ...),
    host objects (C(cgroup), C(ioscheduler)), C(exec_prerun)/C(exec_postrun) (run through a shell),
    C(allow_mounted_write), C(read_iolog) and C(profile) are refused unless O(allow_unsafe_options=true).
  - A job whose files need more than the free space of their file system, C(fill_device=1) on files,
    and trims (C(rw=trim)) on files (fio trims only block devices) are refused before fio runs.
  - In a batch (the option C(batch), the run path's), a read job of the module's options (no further
    O(options), one worker) reads the file the batch's previous read job of the same O(path) and
    O(size) laid out, instead of laying out one of its own (the same random contents; fio drops the
    file's cached pages before the job, its C(invalidate)); its record's C(params.layout) is
    V(reused). The file is kept between the runs in a directory of this run's (owner marker),
    removed when the batch ends.
  - A block device a job names (C(filename)/C(filename_format)) is written only with
    O(destructive=true), and never while it or a partition is mounted, has holders, is active swap or
    is open exclusively by another program.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description:
      - Directory on the storage under test. A private work directory is created inside it.
      - A block device is not a O(path) and is refused, saying so; a job on a device names it in
        O(options) as C(filename), with O(destructive=true).
    type: path
    required: true
  name:
    description: The job name; it becomes the record's C(test).
    type: str
    default: bench
  rw:
    description: fio's C(rw) (the I/O pattern).
    type: str
    choices: [read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim]
    default: randread
  bs:
    description:
      - Block size, such as V(4k) or V(1M).
      - For a read-only job (O(rw) V(read) or V(randread)) with a block size below 1 MiB and no block size
        among O(options), the module gives fio V(<bs>,1M). Reads still use O(bs), and fio writes the
        file it lays out before the job in 1 MiB blocks instead of O(bs) ones (the same random
        contents, one write system call per MiB; for 128 MiB at V(4k) that saves about 0.2 s here).
        The record's C(cmd) shows it, C(params.bs) stays O(bs).
    type: str
    default: 4k
  size:
    description: File size per job, such as V(256M).
    type: str
    default: 256M
  runtime:
    description: Run time limit in seconds; with O(time_based) the job runs for exactly this long.
      From 1 to 86400.
    type: int
  time_based:
    description: Keep running for O(runtime) seconds even after O(size) is done.
    type: bool
    default: false
  ioengine:
    description: fio's I/O engine.
    type: str
    default: psync
  iodepth:
    description: I/O depth for asynchronous engines. From 1 to 65536.
    type: int
    default: 1
  numjobs:
    description:
      - Number of workers (clones) of the job, run at once. They are one measurement - the record's
        metrics are their aggregate (fio's C(group_reporting) arithmetic), each worker's figures are in
        C(workers.detail) - never several repetitions.
      - From 1 to 1024.
    type: int
    default: 1
  direct:
    description:
      - Use O_DIRECT (non-buffered I/O). If the filesystem refuses O_DIRECT the job runs buffered and
        the record carries a warning.
    type: bool
    default: true
  rwmixread:
    description: Percentage of reads for mixed workloads. From 0 to 100.
    type: int
  end_fsync:
    description: fsync the file at the end of a write job (included in the result).
    type: bool
    default: true
  options:
    description:
      - Further fio job options as a mapping (C(--key=value) each), passed to fio as separate
        arguments (no shell on the benchlab side). They are checked like a job file, each name written
        out in full as fio spells it (fio's command line would take abbreviations) - see the description
        for what is refused unless O(allow_unsafe_options=true); a block device needs O(destructive=true).
    type: dict
    default: {}
  job_file:
    description:
      - A fio job file on the target to run instead of the job described by the options above. It
        runs with the work directory as current directory; jobs without a C(directory) write there.
      - It is read and checked like O(options) before fio runs, then checked by C(fio --parse-only); a
        refused option is named with its line.
      - C(directory=), C(filename=) and C(filename_format=) that point outside the work directory are
        moved into it (the record's warnings say so), unless O(allow_unsafe_options=true); block devices
        go through the device guard. The work directory, with everything the job created, is removed
        after the run.
      - One record per job (its name within its C(stonewall) group), aggregated over its C(numjobs)
        workers the way fio's C(group_reporting) does, each worker's figures in the record's
        C(workers.detail); the job's options, with the C([global]) ones it inherits, in the record's
        C(params.job_options).
    type: path
  job_file_content:
    description:
      - The text of a fio job file, run like O(job_file) (from a copy in the work directory). The matrix
        uses it for a C(job_file) on the controller. Mutually exclusive with O(job_file).
    type: str
  job_file_name:
    description:
      - The name O(job_file_content) is known by (its path on the controller), for messages and the
        record's C(params.job_file).
    type: str
  allow_unsafe_options:
    description:
      - Let O(options) and O(job_file) use what is refused by default - C(exec_prerun)/C(exec_postrun)
        (fio runs them through a shell), C(allow_mounted_write), C(read_iolog), C(profile), C(cgroup),
        C(ioscheduler), engines that act on other files (C(e4defrag)), on storage across the network
        (C(nbd), C(rbd), C(rados), C(gfapi), C(http), C(nfs), C(libiscsi), C(net), C(rdma), ...) or past
        the block layer (C(sg), C(io_uring_cmd), ...) or that run code (C(exec), C(external)), options fio's
        table does not have, paths outside the work directory. What it lets through is named in the
        record's warnings and flags it C(unsafe_options).
      - Block devices still need O(destructive=true) and pass the device guard; the free-space check,
        C(fill_device) and trims on files are refused even so.
    type: bool
    default: false
  destructive:
    description:
      - Required for a job that names a block device (C(filename=/dev/...)). A device in use is
        refused even then.
    type: bool
    default: false
  force:
    description:
      - With O(destructive=true), also write a block device that carries a filesystem, partition
        table, swap or DRBD signature.
    type: bool
    default: false
notes:
  - Check mode returns the command that would run and C(bench_dry_run), without writing anything.
seealso:
  - module: benchlab.bench.dd
  - plugin: benchlab.bench.parse_fio
    plugin_type: filter
extends_documentation_fragment:
  - benchlab.bench.common
'''

EXAMPLES = r'''
- name: 4k random reads for 30 seconds with O_DIRECT
  benchlab.bench.fio:
    path: /srv/bench
    name: randread
    rw: randread
    bs: 4k
    size: 1G
    runtime: 30
    time_based: true
    ioengine: libaio
    iodepth: 16

- name: A job file of your own
  benchlab.bench.fio:
    path: /srv/bench
    job_file: /etc/bench/mixed.fio
'''

RETURN = r'''
bench_result:
  description: The result record of the (first) job.
  returned: success, not in check mode
  type: dict
  sample: {"tool": "fio", "test": "randread", "metrics": {"read_iops": {"value": 26676.2, "unit": "ops/s", "better": "higher"}}}
bench_results:
  description:
    - One result record per fio job (a job file may hold several; a job is its name within its stonewall
      group), aggregated over the job's numjobs workers.
    - Each record keeps fio's completion-latency histogram per direction (C(distributions.read_clat),
      C(distributions.write_clat)) - fio's own buckets with a count, merged over the workers, in ns - from
      which the report computes p50/p90/p99/p99.9 over the repetitions of a cell.
  returned: success, not in check mode
  type: list
  elements: dict
cmd:
  description: The argv that ran (or would run, in check mode).
  returned: always
  type: list
  elements: str
bench_dry_run:
  description:
    - What the run would do, in check mode - C(tool), C(argv), C(writes), C(creates), C(removes),
      C(refused) (see the C(check_mode) attribute); C(argvs) lists every command when it runs several.
  returned: check mode
  type: dict
'''

import hashlib
import os


from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun, run_module, stop_deferred
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import UNSAFE_OPTIONS, ZERO_DATA
from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import (
    effective_job_options, fio_records, job_file_in_workdir, job_file_text, parse_only_problem)
from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import is_block_device
from ansible_collections.benchlab.bench.plugins.module_utils.tools.fiojob import (
    FioJobError, check_fio_job, fio_zero_warning, options_to_sections, parse_job_file, split_names)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import utc_now
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, format_bytes, parse_size
from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import create_workdir, free_space_problem, remove_tree

JOB_COPY = '.benchlab-job.fio'
JOB_KEYS = ('rw', 'bs', 'size', 'runtime', 'ioengine', 'iodepth', 'numjobs', 'rwmixread')
# A read-only job's file is laid out by fio before the job, in the job's write block size (fio
# filesetup.c extend_file; new random contents for every block): `bs=<read>,<write>` lets a read
# job of small blocks lay its file out in 1 MiB writes. No other use of the write size in such a job.
READ_ONLY = ('read', 'randread')
BS_OPTIONS = ('bs', 'blocksize', 'bsrange', 'blocksize_range', 'bssplit', 'ba', 'blockalign')
LAYOUT_BS = 1024 * 1024


# The options, once (module_utils/run/options.py): the argument spec and the bounds the module
# checks; the matrix schema's params and the plan's option names are read from here too.
OPTIONS = dict(
    path=dict(type='path', required=True),
    name=dict(type='str', default='bench'),
    rw=dict(type='str', default='randread',
            choices=['read', 'write', 'randread', 'randwrite', 'rw', 'readwrite', 'randrw', 'trim', 'randtrim']),
    bs=dict(type='str', default='4k'),
    size=dict(type='str', default='256M'),
    runtime=dict(type='int', minimum=1, maximum=86400),
    time_based=dict(type='bool', default=False),
    ioengine=dict(type='str', default='psync'),
    iodepth=dict(type='int', default=1, minimum=1, maximum=65536),
    numjobs=dict(type='int', default=1, minimum=1, maximum=1024),
    direct=dict(type='bool', default=True),
    rwmixread=dict(type='int', minimum=0, maximum=100),
    end_fsync=dict(type='bool', default=True),
    options=dict(type='dict', default={}),
    job_file=dict(type='path'),
    job_file_content=dict(type='str'),
    job_file_name=dict(type='str'),
    allow_unsafe_options=dict(type='bool', default=False),
    destructive=dict(type='bool', default=False),
    force=dict(type='bool', default=False),
)
OPTIONS.update(COMMON_ARGS)
CONSTRAINTS = dict(mutually_exclusive=[('job_file', 'job_file_content')])


def layout_key(p):
    """What makes the file a read job laid out reusable by the next read job of a batch in the same
    path: a job of the module's options (no job file, no further options), one worker, its size."""
    if (p['rw'] not in READ_ONLY or p['options'] or p['numjobs'] != 1 or p['job_file']
            or p['job_file_content'] is not None):
        return None
    return (os.path.realpath(p['path']), parse_size(p['size']))


def take_layout(module, p, workdir):
    """In a batch, the file the previous read job of this path laid out, moved into this run's work
    directory under the name fio gives this job's file: fio then reads it instead of laying out a new
    one (the same random contents; fio drops its pages from the cache before the job, invalidate=1).
    True when it did."""
    batch = getattr(module, 'batch', None)
    held = (batch or {}).get('fio_layout')
    if not held or held['key'] != layout_key(p) or not os.path.isfile(held['file']):
        return False
    os.rename(held['file'], os.path.join(workdir, '%s.0.0' % p['name']))
    batch.pop('fio_layout')
    return True


def keep_layout(module, p, workdir):
    """In a batch, keep the file this read job read for the next one (in a directory of this run's,
    with its owner marker, removed when the batch ends)."""
    batch = getattr(module, 'batch', None)
    key = layout_key(p)
    src = os.path.join(workdir, '%s.0.0' % p['name'])
    if batch is None or key is None or not os.path.isfile(src) or os.path.getsize(src) != key[1]:
        return
    hold = batch.get('fio_hold', {}).get(key[0])
    if hold is None:
        with stop_deferred():
            hold = create_workdir(p['path'], 'fio-layout', run_id=p['run_id'], run_key=p['run_key'])
            batch.setdefault('fio_hold', {})[key[0]] = hold
            batch['cleanup'].append(lambda: remove_tree(hold))
    dst = os.path.join(hold, 'layout')
    os.rename(src, dst)
    batch['fio_layout'] = {'key': key, 'file': dst}


def supports_o_direct(directory):
    """Whether files in `directory` can be opened with O_DIRECT."""
    probe = os.path.join(directory, '.benchlab-odirect-probe')
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | getattr(os, 'O_DIRECT', 0), 0o600)
        os.close(fd)
        return True
    except OSError:
        return False
    finally:
        if os.path.exists(probe):
            os.unlink(probe)


def layout_bs(p):
    """fio's bs for the module's options: `<bs>,1M` for a read-only job of blocks below 1 MiB (its
    file laid out in 1 MiB writes, READ_ONLY above), else bs as given (validate() has parsed it)."""
    if p['rw'] not in READ_ONLY or any(k in p['options'] for k in BS_OPTIONS) or parse_size(p['bs']) >= LAYOUT_BS:
        return p['bs']
    return '%s,1M' % p['bs']


def on_devices(options):
    """Whether the module's options name block devices as the job's files (filename=/dev/sdb:/dev/sdc):
    fio prefixes --directory to every name, absolute ones too, so such a job runs without it (fio runs
    in the work directory all the same) or it would write a file <work directory>/dev/sdb instead."""
    names = split_names(str(options.get('filename') or ''))
    return bool(names) and all(is_block_device(n) for n in names)


def job_argv(fio_bin, p, workdir, direct):
    # json+: each worker's latency histogram, merged into the job's p99 (module_utils/tools/fio.py)
    argv = [fio_bin, '--output-format=json+', '--name=%s' % p['name']]
    if not on_devices(p['options']):
        argv.append('--directory=%s' % workdir)
    for key in JOB_KEYS:
        if p[key] is not None:
            argv.append('--%s=%s' % (key, layout_bs(p) if key == 'bs' else p[key]))
    if p['time_based']:
        argv.append('--time_based')
    argv.append('--direct=%d' % (1 if direct else 0))
    if p['end_fsync'] and p['rw'] in ('write', 'randwrite', 'rw', 'readwrite', 'randrw'):
        argv.append('--end_fsync=1')
    # no --group_reporting: fio_records aggregates the numjobs workers itself and keeps their figures.
    # An engine among the options first: fio knows an engine's own options (cpuio's cpuload) only
    # once --ioengine has named it ("unrecognized option" otherwise).
    for key, value in sorted(p['options'].items(), key=lambda kv: (kv[0] != 'ioengine', kv[0])):
        argv.append('--%s=%s' % (key, value) if value is not None else '--%s' % key)
    return argv


def validate(module, p):
    for key in ('bs', 'size'):
        try:
            if parse_size(p[key]) <= 0:
                raise UnitError('must be greater than zero')
        except UnitError as e:
            module.fail_json(msg='%s: %s' % (key, e))
    for key in p['options']:
        if not key.replace('_', '').isalnum():
            module.fail_json(msg='options: %r is not a fio option name' % key)
    if is_block_device(p['path']):
        module.fail_json(msg='path %s is a block device: fio\'s path is the directory its work directory is made in. '
                             'To run fio on a device, give a directory as path and the device as options.filename '
                             '(with destructive: true; the device guard checks it first)' % p['path'])
    if not os.path.isdir(p['path']):
        module.fail_json(msg='path %s does not exist or is not a directory' % p['path'])
    if p['job_file'] and not os.path.isfile(p['job_file']):
        module.fail_json(msg='job_file %s does not exist' % p['job_file'])
    if p['job_file_content'] is not None and not p['job_file_content'].strip():
        module.fail_json(msg='job_file_content %sis empty' % ((p['job_file_name'] + ' ') if p['job_file_name'] else ''))


def job_origin(p):
    """How messages name the job: the job file, or the module's options."""
    if p['job_file']:
        return p['job_file']
    if p['job_file_content'] is not None:
        return p['job_file_name'] or 'job_file_content'
    return 'options'


def job_sections(br, p, workdir):
    """The job as fio job-file sections: the job file's (with what lands outside the work directory
    moved into it, unless allow_unsafe_options), or one section of the module's options over what the
    module puts on fio's command line itself. Returns (sections, notes, sha256 of the job file's text);
    refuses an unreadable file."""
    if p['job_file'] or p['job_file_content'] is not None:
        text = p['job_file_content']
        if text is None:
            with open(p['job_file']) as f:
                text = f.read()
        digest = hashlib.sha256(text.encode('utf-8')).hexdigest()
        try:
            sections = parse_job_file(text, name=job_origin(p))
        except FioJobError as e:
            br.refuse('fio job refused: %s' % e)
            return [], [], digest
        if p['allow_unsafe_options']:
            return sections, [], digest
        return job_file_in_workdir(sections, workdir, origin=job_origin(p)) + (digest,)
    base = dict((k, p[k]) for k in JOB_KEYS if p[k] is not None)
    base.update(name=p['name'])
    if not on_devices(p['options']):
        base.update(directory=workdir)
    return options_to_sections(p['options'], name='options', base=base), [], None


def check_job(br, p, workdir, sections):
    """fiojob's check of the job (fio's option table), the device guard for every device it names,
    and the free space for the files it lays out; what allow_unsafe_options let through is flagged."""
    origin = job_origin(p)
    try:
        found = check_fio_job(sections, workdir, allow_unsafe=p['allow_unsafe_options'], origin=origin)
    except FioJobError as e:
        br.refuse('fio job refused: %s' % str(e).replace('(allow_unsafe)', '(allow_unsafe_options: true)'))
        return
    outside = found.get('outside') or []
    if outside and not p['allow_unsafe_options']:
        br.refuse('fio job refused: %s names paths outside its work directory %s: %s; benchlab writes only in its '
                  'own work directory: use path, or set allow_unsafe_options: true' % (
                      origin, workdir, ', '.join('[%s] %s=%s' % item for item in outside)))
    br.dry['writes'].extend(v for _s, _k, v in outside if v not in br.dry['writes'])
    let_through = (found.get('unsafe') or []) + outside
    if p['allow_unsafe_options'] and let_through:
        br.flag(UNSAFE_OPTIONS, 'allow_unsafe_options let through what benchlab does not check: %s'
                % ', '.join('[%s] %s=%s' % (s, k, '' if v is None else v) for s, k, v in let_through))
    for dev in found.get('devices') or []:
        br.device(dev, p['destructive'], force=p['force'])
    problem = free_space_problem(space_needs(found.get('files') or {}, p['path']), writer='fio')
    if problem:
        br.refuse('fio job refused: %s (the files the job lays out: %s)' % (problem, job_file_sizes(found['files'])))


def space_needs(files, path):
    """[(directory, bytes)] of the files a job lays out ({path: bytes}), each directory the nearest
    one that exists (the work directory does not yet in check mode; `path` at the latest)."""
    needs = []
    for name, nbytes in sorted(files.items()):
        d = os.path.dirname(name)
        while d and not os.path.isdir(d) and d != os.path.dirname(d):
            d = os.path.dirname(d)
        needs.append((d if os.path.isdir(d) else path, nbytes))
    return needs


def job_file_sizes(files, limit=4):
    """'name 256 MiB, ...' of the largest files for a message."""
    top = sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ', '.join('%s %s' % (os.path.basename(n), format_bytes(b)) for n, b in top[:limit])
    return text + (' and %d more' % (len(top) - limit) if len(top) > limit else '')


def job_file_run(br, p, fio_bin, workdir, sections, notes, digest):
    """(argv, params, job_options) for a job file: the job file that runs is a copy in the work
    directory, with its paths moved into it; fio --parse-only checks it first."""
    job_path = os.path.join(workdir, JOB_COPY)
    argv = [fio_bin, '--output-format=json+', job_path]
    params = dict(job_file=p['job_file'] or p['job_file_name'] or 'job_file_content', job_file_sha256=digest)
    br.warnings.extend(notes)
    if not br.check_mode:
        with open(job_path, 'w') as f:
            f.write(job_file_text(sections))
        res = br.run([fio_bin, '--parse-only', job_path], cwd=workdir)
        if not res.ok:
            br.refuse('fio job refused: %s' % parse_only_problem(res.stderr + res.stdout, sections, job_origin(p)))
    return argv, params, effective_job_options(sections)


def options_run(br, p, fio_bin, workdir):
    """(argv, params, None) for a job made of the module's options; buffered when the file system
    refuses O_DIRECT, with a warning."""
    direct = p['direct']
    if direct and not br.check_mode and not supports_o_direct(workdir):
        direct = False
        br.warnings.append('the filesystem under %s refuses O_DIRECT: the job ran buffered (direct=0), '
                           'so the page cache is part of the result' % p['path'])
    params = dict((k, p[k]) for k in JOB_KEYS + ('time_based', 'end_fsync') if p[k] is not None)
    params.update(direct=direct, options=p['options'])
    return job_argv(fio_bin, p, workdir, direct), params, None


def main():
    run_module(OPTIONS, one_run, **CONSTRAINTS)


def one_run(module):
    """One run of the module (module_utils/run/benchrun.py run_module: alone, or one of a batch)."""
    p = module.params
    validate(module, p)
    fio_bin = module.get_bin_path('fio', required=True)
    with BenchRun(module, 'fio') as br:
        workdir = br.workdir_in(p['path'])
        sections, notes, digest = job_sections(br, p, workdir)
        check_job(br, p, workdir, sections)
        br.warn(fio_zero_warning(sections), ZERO_DATA)
        if p['job_file'] or p['job_file_content'] is not None:
            argv, params, job_options = job_file_run(br, p, fio_bin, workdir, sections, notes, digest)
        else:
            argv, params, job_options = options_run(br, p, fio_bin, workdir)
        br.dry_run(argv, writes=[workdir])
        if job_options is None and take_layout(module, p, workdir):
            params['layout'] = 'reused'   # the batch's previous read job of this path laid the file out
        br.measure(params)
        started = utc_now()
        res = br.run(argv, cwd=workdir)
        if not res.ok:
            br.fail('fio', res)
        records = br.parse('fio', res, fio_records, res.stdout, labels=p['labels'], params=params,
                           warnings=br.warnings, cmd=argv, started=started, duration_s=res.duration_s,
                           job_options=job_options)
        if job_options is None:
            keep_layout(module, p, workdir)
        # The work directory is removed again: the target is left as it was found.
        br.exit(bench_result=records[0], bench_results=records)


if __name__ == '__main__':
    main()
