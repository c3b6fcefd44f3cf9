#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: dbench
short_description: File server load (netbench emulation) with dbench, one record per client count
version_added: 0.1.0
description:
  - Runs C(dbench) on the target once per client count in O(clients) (a sweep such as
    V([1, 2, 4, 8, 16, 32, 64]) gives one result record per count) and returns them as
    C(bench_results) (C(bench_result) is the first).
  - Each record has the metrics C(throughput) (MB/s, 10^6 bytes/s; dbench's own MB/sec is already
    10^6 bytes), C(max_latency) (ms) and one C(op_<name>_avg_latency) (ms) per operation of
    dbench's table, with the name lower-cased (C(op_ntcreatex_avg_latency), C(op_readx_avg_latency),
    ...). The client count is in the record's labels as C(clients).
  - Each run happens in its own private work directory inside O(path) (C(dbench -D)), removed
    afterwards, also on failure; dbench itself leaves a C(clients) directory tree behind.
  - The harmless C(failed to create barrier semaphore) message of dbench 4.0 is ignored; any other
    error dbench reports fails the task with dbench's message.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description: Directory on the storage under test. The runs happen in private directories inside it.
    type: path
    required: true
  clients:
    description:
      - The numbers of simulated clients, one run each, in this order.
      - Each from 1 to 4096.
    type: list
    elements: int
    default: [1]
  time:
    description: Run time of each run in seconds (C(dbench -t)). dbench needs at least 2 s to report anything.
      From 2 to 86400.
    type: int
    default: 60
  loadfile:
    description:
      - The load description file (C(dbench -c)). It is input and is checked before dbench runs, the way
        dbench reads it - every path it names (C(Deltree), C(Unlink), C(NTCreateX), C(Rename), ...) must stay
        inside the work directory once dbench has put its C(-D) directory in front and followed C(..); a line
        that leaves it, names benchlab's marker, or is longer than dbench's buffers is refused with its line
        number. dbench then reads a copy of the checked file (in C(/dev/shm) when it has room, else in
        O(path)), so what ran is what was checked.
      - Default is the first that exists of C(/usr/share/dbench/client.txt) (Debian, Ubuntu, Fedora),
        C(/usr/share/dbench/loadfiles/client.txt), C(/usr/local/share/dbench/client.txt),
        C(/usr/local/share/dbench/loadfiles/client.txt), C(/usr/share/doc/dbench/loadfiles/client.txt),
        C(/usr/share/dbench4/client.txt).
    type: path
  sync:
    description: Open files with O_SYNC (C(dbench -s)).
    type: bool
    default: false
  sync_dirs:
    description: Synchronous directory operations (C(dbench -S)).
    type: bool
    default: false
  fsync:
    description: fsync after every write (C(dbench -F)).
    type: bool
    default: false
  timeout:
    description:
      - Stop a run that has not finished after this many seconds (with C(timeout)), and fail.
        dbench never ends on its own with a loadfile it cannot use.
      - Default is twice O(time) plus 120 seconds (for dbench's cleanup phase).
      - From 1 to 172800.
    type: int
notes:
  - The records' C(test) is the loadfile's name without C(.txt) (V(client) for the standard load).
  - dbench's C(max_latency) is the worst of its once-a-second latency samples; the operation
    table's own C(MaxLat) column is not reported.
  - Check mode returns the commands that would run, without running or writing anything.
seealso:
  - module: benchlab.bench.sysbench_fileio
  - plugin: benchlab.bench.parse_dbench
    plugin_type: filter
extends_documentation_fragment:
  - benchlab.bench.common
'''

EXAMPLES = r'''
- name: The client sweep of the OpenVZ ploop thread, 60 s per count
  benchlab.bench.dbench:
    path: /srv/bench
    clients: [1, 2, 4, 8, 16, 32, 64]
    time: 60
    labels:
      platform: ploop-ct
  register: db

- name: Throughput per client count
  ansible.builtin.debug:
    msg: "{{ db.bench_results | map(attribute='labels.clients') | zip(db.bench_results | map(attribute='metrics.throughput.value')) }}"
'''

RETURN = r'''
bench_result:
  description: The first record (the first client count).
  returned: success, not in check mode
  type: dict
bench_results:
  description: One result record (schema version 1) per client count, in the order of O(clients).
  returned: success, not in check mode
  type: list
  elements: dict
  sample:
    - tool: dbench
      test: client
      labels: {clients: 4}
      metrics:
        throughput: {value: 364.116, unit: MB/s, better: higher}
        max_latency: {value: 20.22, unit: ms, better: lower}
        op_ntcreatex_avg_latency: {value: 0.035, unit: ms, better: lower}
cmd:
  description: The argv of the first run (or that would run, in check mode), C(timeout) wrapper included.
  returned: always
  type: list
  elements: str
cmds:
  description: The argv of every run, one per client count.
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
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS
from ansible_collections.benchlab.bench.plugins.module_utils.tools.dbench import (
    MAX_LOADFILE_BYTES, TOO_LARGE, dbench_record, loadfile_problem, read_capped)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import utc_now

LOADFILES = (
    '/usr/share/dbench/client.txt',
    '/usr/share/dbench/loadfiles/client.txt',
    '/usr/local/share/dbench/client.txt',
    '/usr/local/share/dbench/loadfiles/client.txt',
    '/usr/share/doc/dbench/loadfiles/client.txt',
    '/usr/share/dbench4/client.txt',
)
MIN_TIME = 2
# mkdtemp's random part of a work directory's name (benchlab-dbench-XXXXXXXX)
WORKDIR_RANDOM = 8


def find_loadfile(requested, candidates=LOADFILES):
    """The loadfile to use, or (None, message) when there is none."""
    if requested:
        if os.path.isfile(requested):
            return requested, None
        if os.path.exists(requested):
            return None, 'loadfile %s is not a regular file' % requested
        return None, 'loadfile %s does not exist' % requested
    for path in candidates:
        if os.path.isfile(path):
            return path, None
    return None, ('no dbench loadfile found in %s: install the dbench package or set loadfile'
                  % ', '.join(candidates))


def run_argv(dbench_bin, p, loadfile, workdir, clients, timeout_bin=None, limit=None):
    argv = [timeout_bin, '-k', '10', str(limit)] if timeout_bin else []
    argv += [dbench_bin, '-t', str(p['time']), '-D', workdir, '-c', loadfile]
    if p['sync']:
        argv.append('-s')
    if p['sync_dirs']:
        argv.append('-S')
    if p['fsync']:
        argv.append('-F')
    argv.append(str(clients))
    return argv


def validate(module, p):
    """(timeout limit, loadfile), or a failure naming the option."""
    if not p['clients']:
        module.fail_json(msg='clients: give at least one client count')
    limit = p['timeout'] if p['timeout'] is not None else 2 * p['time'] + 120
    if limit <= p['time']:
        module.fail_json(msg='timeout (%s s) must be longer than time (%s s)' % (limit, p['time']))
    if not os.path.isdir(p['path']):
        module.fail_json(msg='path %s does not exist or is not a directory' % p['path'])
    loadfile, problem = find_loadfile(p['loadfile'])
    if problem:
        module.fail_json(msg=problem)
    return limit, loadfile


def read_loadfile(module, loadfile):
    """The load file's bytes (at most MAX_LOADFILE_BYTES), or a failure naming it."""
    try:
        data = read_capped(loadfile, MAX_LOADFILE_BYTES)
    except (IOError, OSError) as e:
        module.fail_json(msg='loadfile %s cannot be read: %s' % (loadfile, e))
    if data is None:
        module.fail_json(msg='loadfile %s %s' % (loadfile, TOO_LARGE % MAX_LOADFILE_BYTES))
    return data


def copy_dir(path, size):
    """Where the checked copy of the load file goes: /dev/shm when it has room, else the cell's path."""
    try:
        st = os.statvfs('/dev/shm')
        if os.path.isdir('/dev/shm') and st.f_bavail * st.f_frsize > 2 * size + 64 * 1024 * 1024:
            return '/dev/shm'
    except OSError:
        pass
    return path


def checked_copy(br, p, loadfile, data):
    """The load file checked as dbench reads it (every path inside the work directory, whose name has
    the length of the real ones), then written to an owned directory for dbench to read. Returns its path."""
    stand_in = os.path.join(p['path'], 'benchlab-dbench-' + 'x' * WORKDIR_RANDOM)
    problem = loadfile_problem(data, name='loadfile %s' % loadfile, workdir=stand_in)
    if problem:
        br.refuse('dbench load file refused: %s' % problem)
    where = br.workdir_in(copy_dir(p['path'], len(data)), name='dbench-load')
    copy = os.path.join(where, os.path.basename(loadfile) or 'client.txt')
    if not br.check_mode:
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    return copy


# The options, once (module_utils/run/options.py): the argument spec and the bounds the module
# checks; the matrix schema's params and the plan's option names are read from here too.
OPTIONS = dict(
    path=dict(type='path', required=True),
    clients=dict(type='list', elements='int', default=[1], minimum=1, maximum=4096),
    time=dict(type='int', default=60, minimum=MIN_TIME, maximum=86400),
    loadfile=dict(type='path'),
    sync=dict(type='bool', default=False),
    sync_dirs=dict(type='bool', default=False),
    fsync=dict(type='bool', default=False),
    timeout=dict(type='int', minimum=1, maximum=172800),
)
OPTIONS.update(COMMON_ARGS)


def main():
    run_module(OPTIONS, one_run)


def one_run(module):
    """One run of the module (module_utils/run/benchrun.py run_module: alone, or one of a batch)."""
    p = module.params

    limit, loadfile = validate(module, p)

    dbench_bin = module.get_bin_path('dbench', required=True)
    timeout_bin = module.get_bin_path('timeout', required=True)
    data = read_loadfile(module, loadfile)
    with BenchRun(module, 'dbench') as br:
        copy = checked_copy(br, p, loadfile, data)
        if br.check_mode:
            placeholder = br.workdir_in(p['path'])
            cmds = [run_argv(dbench_bin, p, copy, placeholder, n, timeout_bin, limit) for n in p['clients']]
            br.dry_run(cmds[0], writes=[placeholder], argvs=cmds, cmds=cmds)
        records = []
        br.result['cmds'] = []
        for clients in p['clients']:
            workdir = br.workdir_in(p['path'])
            problem = loadfile_problem(b'', workdir=workdir)
            if problem:
                br.refuse('dbench refused: %s' % problem)
            argv = run_argv(dbench_bin, p, copy, workdir, clients, timeout_bin, limit)
            br.result['cmds'].append(argv)
            br.result.setdefault('cmd', argv)
            params = dict(clients=clients, time=p['time'], loadfile=loadfile, sync=p['sync'],
                          sync_dirs=p['sync_dirs'], fsync=p['fsync'])
            guard_warnings = []
            br.measure(params, guard_warnings)
            started = utc_now()
            # cwd is the work directory too: dbench looks for client.txt there when -c is missing.
            res = br.run(argv, cwd=workdir)
            what = 'dbench with %d client(s)' % clients
            br.result['bench_results'] = records
            if res.rc in (124, 137):
                br.fail(what, res, extra='dbench did not finish within %d s and was stopped (timeout); a loadfile '
                                         'dbench cannot use makes it run forever' % limit)
            if not res.ok:
                br.fail(what, res)
            records.append(br.parse(what, res, dbench_record, res.stdout + ('\n' + res.stderr if res.stderr else ''),
                                    labels=p['labels'], params=params, warnings=guard_warnings, cmd=argv,
                                    started=started, duration_s=res.duration_s))
            br.drop_workdir()
        br.exit(bench_result=records[0], bench_results=records)


if __name__ == '__main__':
    main()
