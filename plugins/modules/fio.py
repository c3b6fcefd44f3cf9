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
  - Runs C(fio --output-format=json) once on the target, in a private work directory created inside
    O(path) and removed afterwards, and returns a result record per fio job with the metrics
    C(read_iops), C(read_throughput) (MB/s), C(read_lat_mean), C(read_lat_p99) (ms) and the same for
    C(write_).
  - The exit code is checked before anything is parsed; a failed job is a failure with fio's own
    message, never a number.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description: Directory on the storage under test. A private work directory is created inside it.
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
    description: Block size, such as V(4k) or V(1M).
    type: str
    default: 4k
  size:
    description: File size per job, such as V(256M).
    type: str
    default: 256M
  runtime:
    description: Run time limit in seconds; with O(time_based) the job runs for exactly this long.
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
    description: I/O depth for asynchronous engines.
    type: int
    default: 1
  numjobs:
    description: Number of clones of the job (reported together with C(group_reporting)).
    type: int
    default: 1
  direct:
    description:
      - Use O_DIRECT (non-buffered I/O). If the filesystem refuses O_DIRECT the job runs buffered and
        the record carries a warning.
    type: bool
    default: true
  rwmixread:
    description: Percentage of reads for mixed workloads.
    type: int
  end_fsync:
    description: fsync the file at the end of a write job (included in the result).
    type: bool
    default: true
  options:
    description:
      - Further fio job options as a mapping (C(--key=value) each). Values are passed as literal
        arguments, never through a shell.
    type: dict
    default: {}
  job_file:
    description:
      - A fio job file on the target to run instead of the job described by the options above. It
        runs with the work directory as current directory; jobs without a C(directory) write there.
    type: path
notes:
  - Check mode returns the command that would run.
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
  description: One result record per fio job (a job file may hold several).
  returned: success, not in check mode
  type: list
  elements: dict
cmd:
  description: The argv that ran (or would run, in check mode).
  returned: always
  type: list
  elements: str
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.common import COMMON_ARGS, make_workdir, remove_tree, start_measurement
from ansible_collections.benchlab.bench.plugins.module_utils.fio import FioParseError, fio_records
from ansible_collections.benchlab.bench.plugins.module_utils.record import utc_now
from ansible_collections.benchlab.bench.plugins.module_utils.runner import fail, run
from ansible_collections.benchlab.bench.plugins.module_utils.units import UnitError, parse_size

JOB_KEYS = ('rw', 'bs', 'size', 'runtime', 'ioengine', 'iodepth', 'numjobs', 'rwmixread')


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


def job_argv(fio_bin, p, workdir, direct):
    argv = [fio_bin, '--output-format=json', '--name=%s' % p['name'], '--directory=%s' % workdir]
    for key in JOB_KEYS:
        if p[key] is not None:
            argv.append('--%s=%s' % (key, p[key]))
    if p['time_based']:
        argv.append('--time_based')
    argv.append('--direct=%d' % (1 if direct else 0))
    if p['end_fsync'] and p['rw'] in ('write', 'randwrite', 'rw', 'readwrite', 'randrw'):
        argv.append('--end_fsync=1')
    if p['numjobs'] and p['numjobs'] > 1:
        argv.append('--group_reporting')
    for key, value in sorted(p['options'].items()):
        argv.append('--%s=%s' % (key, value) if value is not None else '--%s' % key)
    return argv


def main():
    argument_spec = dict(
        path=dict(type='path', required=True),
        name=dict(type='str', default='bench'),
        rw=dict(type='str', default='randread',
                choices=['read', 'write', 'randread', 'randwrite', 'rw', 'readwrite', 'randrw', 'trim', 'randtrim']),
        bs=dict(type='str', default='4k'),
        size=dict(type='str', default='256M'),
        runtime=dict(type='int'),
        time_based=dict(type='bool', default=False),
        ioengine=dict(type='str', default='psync'),
        iodepth=dict(type='int', default=1),
        numjobs=dict(type='int', default=1),
        direct=dict(type='bool', default=True),
        rwmixread=dict(type='int'),
        end_fsync=dict(type='bool', default=True),
        options=dict(type='dict', default={}),
        job_file=dict(type='path'),
    )
    argument_spec.update(COMMON_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params

    for key in ('bs', 'size'):
        try:
            if parse_size(p[key]) <= 0:
                raise UnitError('must be greater than zero')
        except UnitError as e:
            module.fail_json(msg='%s: %s' % (key, e))
    for key in ('runtime', 'iodepth', 'numjobs', 'rwmixread'):
        if p[key] is not None and p[key] < (0 if key == 'rwmixread' else 1):
            module.fail_json(msg='%s must be a positive number, got %s' % (key, p[key]))
    for key in p['options']:
        if not key.replace('_', '').isalnum():
            module.fail_json(msg='options: %r is not a fio option name' % key)
    if not os.path.isdir(p['path']):
        module.fail_json(msg='path %s does not exist or is not a directory' % p['path'])
    if p['job_file'] and not os.path.isfile(p['job_file']):
        module.fail_json(msg='job_file %s does not exist' % p['job_file'])

    fio_bin = module.get_bin_path('fio', required=True)
    warnings = []
    workdir = None
    result = dict(changed=False)
    try:
        workdir = os.path.join(p['path'], 'benchlab-fio-XXXXXX') if module.check_mode else make_workdir(p['path'], 'fio')
        direct = p['direct']
        if p['job_file']:
            argv = [fio_bin, '--output-format=json', p['job_file']]
            params = dict(job_file=p['job_file'])
        else:
            if direct and not module.check_mode and not supports_o_direct(workdir):
                direct = False
                warnings.append('the filesystem under %s refuses O_DIRECT: the job ran buffered (direct=0), '
                                'so the page cache is part of the result' % p['path'])
            argv = job_argv(fio_bin, p, workdir, direct)
            params = dict((k, p[k]) for k in JOB_KEYS + ('time_based', 'end_fsync') if p[k] is not None)
            params['direct'] = direct
            params['options'] = p['options']
        result['cmd'] = argv
        if module.check_mode:
            workdir = None
            module.exit_json(**result)
        start_measurement(module, params, warnings)
        started = utc_now()
        res = run(module, argv, cwd=workdir)
        if not res.ok:
            fail(module, 'fio', res)
        try:
            records = fio_records(res.stdout, labels=p['labels'], params=params,
                                  warnings=warnings, cmd=argv, started=started, duration_s=res.duration_s)
        except FioParseError as e:
            fail(module, 'fio', res, extra=str(e))
        # The work directory is removed again: the target is left as it was found.
        result.update(changed=False, bench_result=records[0], bench_results=records)
    except OSError as e:
        module.fail_json(msg='fio benchmark in %s failed: %s' % (p['path'], e), **result)
    finally:
        if workdir:
            remove_tree(workdir)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
