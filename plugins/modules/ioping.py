#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: ioping
short_description: The latency of single disk requests with ioping
version_added: 0.2.0
description:
  - Runs C(ioping) once on the target, in a private work directory created inside O(path) and
    removed afterwards (ioping makes its request file there), and returns one result record.
  - What one I/O request costs through a layer (DRBD protocol C, a guest's virtual disk, a container's
    file system), not how much data flows - the latency the field reports' throughput tests hide.
  - The record's metrics are of the requests ioping counted (never its warm-up request) -
    C(latency_min), C(latency_avg), C(latency_max), C(latency_mdev) (ms), C(iops) and C(throughput)
    (MB/s, 10^6 bytes/s).
  - ioping's exit code and its own errors are checked before anything is parsed; a run in which no
    request counted is a failure, never a number.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description: Directory on the storage under test. A private work directory is created inside it.
    type: path
    required: true
  mode:
    description:
      - V(read) requests, or V(write) requests (C(ioping -W)) into ioping's own file in the work directory.
    type: str
    choices: [read, write]
    default: read
  count:
    description: The number of requests (C(ioping -c)); the first is the warm-up and not counted.
      From 2 to 10000000.
    type: int
    default: 100
  interval:
    description:
      - The time between requests (C(ioping -i)), such as V(0) (none, as fast as they complete), V(10ms) or V(1s).
    type: str
    default: '0'
  size:
    description: The request size (C(ioping -s)), such as V(4k) or V(64k).
    type: str
    default: 4k
  work_size:
    description: The working set the requests fall in (C(ioping -S)), such as V(1m) or V(64m).
    type: str
    default: 1m
  direct:
    description: Direct I/O (C(ioping -D), O_DIRECT), past the page cache.
    type: bool
    default: true
  sync:
    description: Synchronous I/O (C(ioping -Y), O_SYNC); for writes, each request waits for the storage.
    type: bool
    default: false
  dsync:
    description: Data-synchronous I/O (C(ioping -y), O_DSYNC).
    type: bool
    default: false
  linear:
    description: Sequential requests (C(ioping -L)) instead of random ones in the working set.
    type: bool
    default: false
  time:
    description: Stop after this many seconds (C(ioping -w)) even when O(count) requests were not made yet.
      From 1 to 86400.
    type: int
notes:
  - The record's C(test) is O(mode); its C(params) say the request size, the working set, the options
    and C(requests), the number of requests counted.
  - Check mode returns the command that would run, without running or writing anything.
seealso:
  - module: benchlab.bench.fio
  - plugin: benchlab.bench.parse_ioping
    plugin_type: filter
extends_documentation_fragment:
  - benchlab.bench.common
'''

EXAMPLES = r'''
- name: The latency of 4 KiB O_DIRECT writes with O_SYNC on the DRBD device's file system
  benchlab.bench.ioping:
    path: /mnt/drbd0
    mode: write
    sync: true
    count: 200
  register: lat

- name: Mean latency per request
  ansible.builtin.debug:
    msg: "{{ lat.bench_result.metrics.latency_avg.value }} ms"
'''

RETURN = r'''
bench_result:
  description: The result record (schema version 1).
  returned: success, not in check mode
  type: dict
  sample:
    tool: ioping
    test: write
    params: {size: 4k, work_size: 1m, count: 20, direct: true, requests: 19}
    metrics:
      latency_min: {value: 0.061209, unit: ms, better: lower}
      latency_avg: {value: 0.114209, unit: ms, better: lower}
      latency_max: {value: 0.158385, unit: ms, better: lower}
      latency_mdev: {value: 0.025688, unit: ms, better: lower}
      iops: {value: 8756.0, unit: ops/s, better: higher}
      throughput: {value: 35.863991, unit: MB/s, better: higher}
cmd:
  description: The argv that ran (or would run, in check mode).
  returned: always
  type: list
  elements: str
bench_dry_run:
  description:
    - What the run would do, in check mode - C(tool), C(argv), C(writes), C(creates), C(removes),
      C(refused) (see the C(check_mode) attribute).
  returned: check mode
  type: dict
'''

import os
import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun, run_module
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS
from ansible_collections.benchlab.bench.plugins.module_utils.tools.ioping import ioping_argv, ioping_record, version_from_output
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import utc_now
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import run
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, parse_size

# ioping's own time values: a number and an optional unit (ioping.c parse_time).
INTERVAL_RE = re.compile(r'^[0-9]+(?:\.[0-9]+)?(?:ns|us|ms|s|m|min|h|hour)?$')
OPTIONS = ('mode', 'count', 'interval', 'size', 'work_size', 'direct', 'sync', 'dsync', 'linear', 'time')


def validate(module, p):
    """A failure naming the option, or nothing."""
    if not INTERVAL_RE.match(p['interval'].strip()):
        module.fail_json(msg='interval: %r is not a time ioping reads (e.g. 0, 10ms, 1s)' % p['interval'])
    for key in ('size', 'work_size'):
        try:
            if parse_size(p[key]) < 512:
                raise UnitError('less than 512 bytes')
        except UnitError as e:
            module.fail_json(msg='%s: %r is not a request size (e.g. 4k, 1m): %s' % (key, p[key], e))
    if parse_size(p['work_size']) < parse_size(p['size']):
        module.fail_json(msg='work_size (%s) must hold at least one request of size %s' % (p['work_size'], p['size']))
    if not os.path.isdir(p['path']):
        module.fail_json(msg='path %s does not exist or is not a directory' % p['path'])


# The options, once (module_utils/run/options.py): the argument spec and the bounds the module
# checks; the matrix schema's params and the plan's option names are read from here too.
OPTIONS = dict(
    path=dict(type='path', required=True),
    mode=dict(type='str', choices=['read', 'write'], default='read'),
    count=dict(type='int', default=100, minimum=2, maximum=10000000),
    interval=dict(type='str', default='0'),
    size=dict(type='str', default='4k'),
    work_size=dict(type='str', default='1m'),
    direct=dict(type='bool', default=True),
    sync=dict(type='bool', default=False),
    dsync=dict(type='bool', default=False),
    linear=dict(type='bool', default=False),
    time=dict(type='int', minimum=1, maximum=86400),
)
OPTIONS.update(COMMON_ARGS)


def main():
    run_module(OPTIONS, one_run)


def one_run(module):
    """One run of the module (module_utils/run/benchrun.py run_module: alone, or one of a batch)."""
    p = module.params
    validate(module, p)
    ioping_bin = module.get_bin_path('ioping', required=True)
    with BenchRun(module, 'ioping') as br:
        workdir = br.workdir_in(p['path'])
        argv = ioping_argv(ioping_bin, workdir, p['count'], interval=p['interval'].strip(), size=p['size'],
                           work_size=p['work_size'], write=p['mode'] == 'write', direct=p['direct'], sync=p['sync'],
                           dsync=p['dsync'], linear=p['linear'], work_time=p['time'])
        br.dry_run(argv, writes=[workdir])
        version = version_from_output(run(module, [ioping_bin, '-v']).stdout)
        params = dict((k, p[k]) for k in OPTIONS if p[k] is not None)
        br.measure(params)
        started = utc_now()
        res = br.run(argv, cwd=workdir)
        if not res.ok:
            br.fail('ioping', res)
        record = br.parse('ioping', res, ioping_record, res.stdout, res.stderr, test=p['mode'], tool_version=version,
                          labels=p['labels'], params=params, warnings=br.warnings, cmd=argv, started=started,
                          duration_s=res.duration_s)
        br.exit(bench_result=record)


if __name__ == '__main__':
    main()
