#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: sysbench_fileio
short_description: File I/O with sysbench fileio (prepare, run, cleanup), measured soundly
version_added: 0.1.0
description:
  - Runs C(sysbench fileio prepare), then C(run), then always C(cleanup), inside a private work
    directory the module creates in O(path) (sysbench writes its C(test_file.N) files into its
    current directory, so it runs with that directory as its working directory). The directory is
    removed afterwards, also on failure.
  - Returns a result record (C(bench_result)) with the metrics C(reads_per_s), C(writes_per_s),
    C(fsyncs_per_s) (ops/s), C(read_throughput), C(write_throughput) (MB/s, 10^6 bytes/s; sysbench
    prints MiB/s, converted here), C(latency_avg) and C(latency_p95) (ms). Read metrics come with
    the modes that read, write and fsync metrics with the modes that write.
  - Every record warns that sysbench writes buffers of zero bytes, so storage that skips,
    compresses or deduplicates zero blocks inflates the write results.
  - A C(FATAL) message from sysbench (such as a missing prepare step, an unwritable directory or
    O_DIRECT refused) fails the task with that message.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description: Directory on the storage under test. The files are created in a private directory inside it.
    type: path
    required: true
  mode:
    description: The test (C(--file-test-mode)).
    type: str
    choices: [seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw]
    default: rndrw
  size:
    description:
      - Total size of the file set (C(--file-total-size)), such as V(1G) (powers of 1024).
      - Below twice the target's RAM the record carries a warning, because the page cache may
        serve what should come from the storage.
    type: str
    default: 1G
  files:
    description: Number of files the size is spread over (C(--file-num)). From 1 to 100000.
    type: int
    default: 128
  bs:
    description: Block size of every I/O (C(--file-block-size)), such as V(16K) or V(4K).
    type: str
    default: 16K
  threads:
    description: Number of threads (C(--threads)). From 1 to 4096.
    type: int
    default: 1
  direct:
    description: Open the files with O_DIRECT (C(--file-extra-flags=direct)).
    type: bool
    default: false
  fsync_freq:
    description: Call fsync() after this many requests, V(0) for never (C(--file-fsync-freq)). At least 0.
    type: int
    default: 100
  fsync_end:
    description: Call fsync() at the end of the test (C(--file-fsync-end)).
    type: bool
    default: true
  io_mode:
    description: I/O mode (C(--file-io-mode)).
    type: str
    choices: [sync, async, mmap]
    default: sync
  rw_ratio:
    description: Reads per write in V(rndrw) (C(--file-rw-ratio)); sysbench's default is 1.5. Greater than 0.
    type: float
  time:
    description: Run time in seconds (C(--time)); V(0) for no limit (then O(events) must be set).
      From 0 to 86400.
    type: int
    default: 60
  events:
    description: Stop after this many requests (C(--events)); V(0) for no limit. At least 0.
    type: int
    default: 0
  drop_caches:
    description:
      - Drop the page cache between C(prepare) and C(run) for the modes that read, unless
        O(direct) is set. If that is not allowed the record says so in a warning.
    type: bool
    default: true
notes:
  - Needs root to drop caches.
  - Check mode returns the commands that would run (C(cmd) is the C(run) command), without writing anything.
seealso:
  - module: benchlab.bench.dbench
  - module: benchlab.bench.fio
  - plugin: benchlab.bench.parse_sysbench
    plugin_type: filter
extends_documentation_fragment:
  - benchlab.bench.common
'''

EXAMPLES = r'''
- name: Random read/write on 4 GiB, 16 KiB blocks, 60 s
  benchlab.bench.sysbench_fileio:
    path: /srv/bench
    mode: rndrw
    size: 4G
  register: sb

- name: Direct-I/O random reads, 4 threads, 4 KiB blocks
  benchlab.bench.sysbench_fileio:
    path: /srv/bench
    mode: rndrd
    size: 4G
    bs: 4K
    threads: 4
    direct: true
    labels:
      platform: kvm

- name: Show the read throughput
  ansible.builtin.debug:
    msg: "{{ sb.bench_result.metrics.read_throughput.value }} MB/s"
'''

RETURN = r'''
bench_result:
  description: The result record (schema version 1, see the record schema, plugins/module_utils/schemas/record-v1.json).
  returned: success, not in check mode
  type: dict
  contains:
    tool:
      description: Always V(sysbench).
      type: str
      returned: always
      sample: sysbench
    test:
      description: The mode, such as V(rndrw).
      type: str
      returned: always
      sample: rndrw
    metrics:
      description: reads_per_s, writes_per_s, fsyncs_per_s (ops/s), read_throughput, write_throughput (MB/s), latency_avg, latency_p95 (ms).
      type: dict
      returned: always
      sample: {"read_throughput": {"value": 85.36, "unit": "MB/s", "better": "higher"}}
cmd:
  description: The C(run) argv (or the one that would run, in check mode).
  returned: always
  type: list
  elements: str
cmds:
  description: The C(prepare), C(run) and C(cleanup) argvs, in that order.
  returned: always
  type: list
  elements: list
bench_dry_run:
  description:
    - What the run would do, in check mode - C(tool), C(argv), C(writes), C(creates), C(removes),
      C(refused) (see the C(check_mode) attribute); C(argvs) lists every command when it runs several.
  returned: check mode
  type: dict
'''

import os


from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun, run_module
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS, drop_caches, ram_warning
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import BELOW_2X_RAM
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import utc_now
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import run
from ansible_collections.benchlab.bench.plugins.module_utils.tools.sysbench import MODES, READ_MODES, sysbench_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, parse_size


def sysbench_argv(sysbench_bin, p, size, bs, verb):
    argv = [sysbench_bin, 'fileio', '--file-total-size=%d' % size, '--file-num=%d' % p['files'],
            '--file-block-size=%d' % bs, '--file-test-mode=%s' % p['mode'], '--file-io-mode=%s' % p['io_mode'],
            '--file-fsync-freq=%d' % p['fsync_freq'], '--file-fsync-end=%s' % ('on' if p['fsync_end'] else 'off'),
            '--threads=%d' % p['threads'], '--time=%d' % p['time'], '--events=%d' % p['events']]
    if p['direct']:
        argv.append('--file-extra-flags=direct')
    if p['rw_ratio'] is not None:
        argv.append('--file-rw-ratio=%s' % p['rw_ratio'])
    argv.append(verb)
    return argv


def fatal_lines(text):
    return [ln.strip() for ln in (text or '').splitlines() if ln.strip().startswith('FATAL:')]


def record_params(p, size, bs):
    params = dict(mode=p['mode'], size=p['size'], bytes=size, files=p['files'], bs=p['bs'], block_bytes=bs,
                  threads=p['threads'], direct=p['direct'], fsync_freq=p['fsync_freq'], fsync_end=p['fsync_end'],
                  io_mode=p['io_mode'], time=p['time'], events=p['events'], drop_caches=False)
    if p['rw_ratio'] is not None:
        params['rw_ratio'] = p['rw_ratio']
    return params


def validate(module, p):
    """(size, bs) in bytes, or a failure naming the option."""
    try:
        size = parse_size(p['size'])
        bs = parse_size(p['bs'])
    except UnitError as e:
        module.fail_json(msg='size/bs: %s' % e)
    if p['time'] == 0 and p['events'] == 0:
        module.fail_json(msg='time and events are both 0: the run would never end; set one of them')
    if bs <= 0 or size <= 0:
        module.fail_json(msg='size and bs must be greater than zero (size=%s, bs=%s)' % (p['size'], p['bs']))
    if size // p['files'] < bs:
        module.fail_json(msg='size %s over %d files leaves less than one block (bs=%s) per file'
                             % (p['size'], p['files'], p['bs']))
    if not os.path.isdir(p['path']):
        module.fail_json(msg='path %s does not exist or is not a directory' % p['path'])
    return size, bs


# The options, once (module_utils/run/options.py): the argument spec and the bounds the module
# checks; the matrix schema's params and the plan's option names are read from here too.
OPTIONS = dict(
    path=dict(type='path', required=True),
    mode=dict(type='str', choices=list(MODES), default='rndrw'),
    size=dict(type='str', default='1G'),
    files=dict(type='int', default=128, minimum=1, maximum=100000),
    bs=dict(type='str', default='16K'),
    threads=dict(type='int', default=1, minimum=1, maximum=4096),
    direct=dict(type='bool', default=False),
    fsync_freq=dict(type='int', default=100, minimum=0),
    fsync_end=dict(type='bool', default=True),
    io_mode=dict(type='str', choices=['sync', 'async', 'mmap'], default='sync'),
    rw_ratio=dict(type='float', exclusiveMinimum=0),
    time=dict(type='int', default=60, minimum=0, maximum=86400),
    events=dict(type='int', default=0, minimum=0),
    drop_caches=dict(type='bool', default=True),
)
OPTIONS.update(COMMON_ARGS)


def main():
    run_module(OPTIONS, one_run)


def one_run(module):
    """One run of the module (module_utils/run/benchrun.py run_module: alone, or one of a batch)."""
    p = module.params

    size, bs = validate(module, p)
    sysbench_bin = module.get_bin_path('sysbench', required=True)
    argvs = dict((verb, sysbench_argv(sysbench_bin, p, size, bs, verb)) for verb in ('prepare', 'run', 'cleanup'))
    cmds = [argvs['prepare'], argvs['run'], argvs['cleanup']]
    params = record_params(p, size, bs)
    with BenchRun(module, 'sysbench', what='sysbench fileio') as br:
        br.result['cmds'] = cmds
        workdir = br.workdir_in(p['path'])
        br.dry_run(argvs['run'], writes=[workdir], argvs=cmds)
        br.warn(ram_warning(size, 'file set'), BELOW_2X_RAM)
        try:
            prep = br.run(argvs['prepare'], cwd=workdir)
            if not prep.ok or fatal_lines(prep.stdout):
                br.fail('sysbench fileio prepare', prep, extra='; '.join(fatal_lines(prep.stdout)) or None)
            if p['mode'] in READ_MODES and p['drop_caches'] and not p['direct']:
                reason = drop_caches()
                if reason:
                    br.warnings.append('%s: the files written by prepare may still be in the page cache' % reason)
                params['drop_caches'] = not reason
            version = run(module, [sysbench_bin, '--version'])
            tool_version = version.stdout.split()[-1] if version.ok and version.stdout.strip() else None
            br.measure(params)
            started = utc_now()
            res = br.run(argvs['run'], cwd=workdir)
            if not res.ok or fatal_lines(res.stdout):
                br.fail('sysbench fileio run', res, extra='; '.join(fatal_lines(res.stdout)) or None)
            rec = br.parse('sysbench fileio run', res, sysbench_record, res.stdout, tool_version=tool_version,
                           labels=p['labels'], params=params, warnings=br.warnings, cmd=argvs['run'],
                           started=started, duration_s=res.duration_s)
        finally:
            # sysbench's own cleanup ALWAYS, in the benchmark's own directory; the skeleton then
            # removes that directory.
            br.stop_tool()
            run(module, argvs['cleanup'], cwd=workdir)
        br.exit(bench_result=rec)


if __name__ == '__main__':
    main()
