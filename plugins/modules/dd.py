#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: dd
short_description: Sequential write, read or copy throughput with dd, measured soundly
version_added: 0.1.0
description:
  - Runs C(dd) once on the target and returns a result record (C(bench_result)) with the metrics
    C(throughput) (MB/s), C(bytes) and C(elapsed) (s).
  - Writes use a pre-generated file of non-zero, non-repeating data by default, so that storage that
    skips or compresses zero blocks (OpenVZ ploop, thin volumes, deduplication) cannot fake the
    result, and include the final C(fdatasync).
  - Reads happen after dropping the page cache, or with C(iflag=direct) when the cache cannot be
    dropped (the record says which).
  - Everything is written inside a private directory the module creates in O(path) (with an
    ownership marker, see M(benchlab.bench.work_cleanup)) and removes afterwards, also on failure.
  - A block device is written only with O(destructive=true), and never while it or any of its
    partitions is mounted, has holders (device-mapper, md, DRBD), is active swap or is open
    exclusively by another program.
  - Before writing, the free space of the target filesystem (and of the random source's directory)
    is checked against what dd will write; a block device must be at least O(size) large.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description:
      - Directory on the storage under test, or a block device.
      - For a directory, a private work directory is created inside it and removed afterwards.
    type: path
    required: true
  test:
    description:
      - V(write) writes O(size) bytes from the data source with C(conv=fdatasync).
      - V(read) writes a test file (not timed), drops caches and reads it back.
      - V(copy) writes a source file (not timed), drops caches and copies it to a second file on the
        same storage with C(conv=fdatasync), like a disk-to-disk copy inside a guest.
      - V(copy) with O(input) copies the first O(size) bytes of the block device O(input) onto the block
        device O(path) with C(conv=fdatasync), after dropping caches (C(dd if=/dev/vda of=/dev/vdb)).
        O(path) is written through the device guard (O(destructive), O(force)); the two devices must
        not share blocks. Afterwards the first MiB of O(path) (the copied partition table or
        superblock) is zeroed again unless O(keep=true), so a repetition finds no signature.
    type: str
    choices: [write, read, copy]
    default: write
  size:
    description:
      - Total amount of data, such as V(256M) or V(4G) (powers of 1024). Must be a multiple of O(bs).
    type: str
    default: 256M
  bs:
    description: Block size passed to C(dd), such as V(1M).
    type: str
    default: 1M
  input:
    description:
      - The block device a V(copy) reads, such as V(/dev/vda); O(path) is then the block device
        written (see O(destructive)). Only with O(test=copy); O(path) must be a block device, not the
        same device, a partition of it or its whole disk, and both must hold at least O(size).
      - Reading O(input) does not need it to be unused (a guest's running system disk is fine).
    type: path
  data:
    description:
      - V(random) writes a pre-generated file of random (non-zero, non-repeating) bytes.
      - V(zero) reads C(/dev/zero); the record then carries a warning, because zero-skipping storage
        measures nothing.
    type: str
    choices: [random, zero]
    default: random
  data_dir:
    description:
      - Where the pre-generated random source file is kept while C(dd) writes.
      - Default is C(/dev/shm) when it is a tmpfs with room (the source is then read from memory);
        otherwise the work directory, with a warning on the record.
    type: path
  drop_caches:
    description:
      - Drop the page cache (C(sync; echo 3 > /proc/sys/vm/drop_caches)) right before dd, after the
        guards. Reads then come from the storage, and a write does not pay for dirty data from
        before it. If that is not allowed, reads use C(iflag=direct) instead and the record says so,
        writes carry a warning.
    type: bool
    default: true
  direct:
    description: Use O_DIRECT (C(oflag=direct) for writes, C(iflag=direct) for reads).
    type: bool
    default: false
  fdatasync:
    description: Include the final C(fdatasync) in the timed write (C(conv=fdatasync)).
    type: bool
    default: true
  destructive:
    description:
      - Required to write to a block device given as O(path) (a V(write), or a V(copy) from O(input)). A device in use (mounted, a mounted
        partition, holders, swap, open exclusively) is refused even then.
    type: bool
    default: false
  force:
    description:
      - With O(destructive=true), also write a block device that carries a filesystem, partition
        table, swap or DRBD signature (its data is then destroyed). A device in use is refused even
        then.
    type: bool
    default: false
  keep:
    description:
      - Leave the work directory and the written file in place (its path is returned as C(workdir))
        for inspection. Off by default; the caller removes it.
    type: bool
    default: false
notes:
  - Needs root to drop caches and to write block devices.
  - Check mode returns the command that would run and C(bench_dry_run), without writing anything.
seealso:
  - module: benchlab.bench.fio
  - plugin: benchlab.bench.parse_dd
    plugin_type: filter
extends_documentation_fragment:
  - benchlab.bench.common
'''

EXAMPLES = r'''
- name: Sequential write of 1 GiB of random data, including the final fdatasync
  benchlab.bench.dd:
    path: /srv/bench
    test: write
    size: 1G
  register: dd_write

- name: Sequential read after dropping caches
  benchlab.bench.dd:
    path: /srv/bench
    test: read
    size: 1G
    labels:
      platform: host
      storage: drbd

- name: Show the throughput
  ansible.builtin.debug:
    msg: "{{ dd_write.bench_result.metrics.throughput.value }} MB/s"
'''

RETURN = r'''
bench_result:
  description: The result record (schema version 1, see the record schema, plugins/module_utils/schemas/record-v1.json).
  returned: success, not in check mode
  type: dict
  contains:
    tool:
      description: Always V(dd).
      type: str
      returned: always
      sample: dd
    metrics:
      description: C(throughput) (MB/s), C(bytes), C(elapsed) (s).
      type: dict
      returned: always
      sample: {"throughput": {"value": 350.2, "unit": "MB/s", "better": "higher"}}
cmd:
  description: The argv that ran (or would run, in check mode).
  returned: always
  type: list
  elements: str
  sample: ["dd", "if=/dev/shm/benchlab-src-x1", "of=/srv/bench/benchlab-dd-x/dd.bin", "bs=1M", "count=256", "conv=fdatasync"]
cleared_bytes:
  description:
    - After a copy onto a block device, how many bytes at its start were zeroed again (the copied
      partition table or superblock of O(input)), so that the next repetition passes the device guard
      without O(force). Not with O(keep=true).
  returned: test copy onto a block device
  type: int
  sample: 1048576
workdir:
  description: The work directory left in place when O(keep=true).
  returned: when keep is true
  type: str
bench_dry_run:
  description: What the run would do (check mode); see the C(check_mode) attribute.
  returned: check mode
  type: dict
  sample: {"tool": "dd", "argv": ["dd", "if=/dev/zero", "of=/dev/loop3", "bs=1048576", "count=8"],
           "writes": ["/dev/loop3"], "creates": [], "removes": [], "refused": null}
'''

import os
import tempfile


from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun, run_module
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS, drop_caches, ram_warning, read_text
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import BELOW_2X_RAM, SOURCE_ON_TEST_STORAGE
from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import copy_input_problem, dd_record, space_needed
from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import block_device_size, is_block_device, overlap
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import utc_now
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import run
from ansible_collections.benchlab.bench.plugins.module_utils.observe.sysinfo import parse_meminfo, parse_mountinfo
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, format_bytes, parse_size
from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import free_space_problem

CHUNK = 1024 * 1024
SCRUB_BYTES = 1024 * 1024
ZERO_WARNING = ('data: zero writes /dev/zero: storage that skips or compresses zero blocks (ploop, thin volumes, '
                'dedup) reports a speed it never achieved')


def write_random_file(path, size):
    """Fill `path` with `size` random bytes and fsync it (not part of any timing)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        left = size
        while left > 0:
            n = min(CHUNK, left)
            os.write(fd, os.urandom(n))
            left -= n
        os.fsync(fd)
    finally:
        os.close(fd)


def same_storage(a, b):
    """Whether two existing paths live on the same file system (device)."""
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


def choose_data_dir(size, workdir, requested):
    """Where the random source file goes, and a warning when it shares the storage under test."""
    if requested:
        if same_storage(requested, workdir):
            return requested, ('data_dir %s is on the storage under test: the random source data is read from '
                               'it while dd writes' % requested)
        return requested, None
    try:
        st = os.statvfs('/dev/shm')
        free = st.f_bavail * st.f_frsize
        fstype_tmpfs = any(m['mountpoint'] == '/dev/shm' and m['fstype'] == 'tmpfs'
                           for m in parse_mountinfo(read_text('/proc/self/mountinfo')))
        avail = parse_meminfo(read_text('/proc/meminfo')).get('mem_available_bytes', 0)
        if fstype_tmpfs and free > size + 64 * CHUNK and avail > 2 * size:
            return '/dev/shm', None
    except (OSError, ValueError):
        pass
    return workdir, ('the random source data (%s) does not fit in /dev/shm and is read from the storage '
                     'under test: set data_dir to a tmpfs with room' % format_bytes(size))


def sizes(module, p):
    """(size, bs, count) in bytes/blocks, or a failure naming the option."""
    try:
        size, bs = parse_size(p['size']), parse_size(p['bs'])
    except UnitError as e:
        module.fail_json(msg='size/bs: %s' % e)
    if bs <= 0 or size <= 0:
        module.fail_json(msg='size and bs must be greater than zero (size=%s, bs=%s)' % (p['size'], p['bs']))
    if size % bs:
        module.fail_json(msg='size (%s) must be a multiple of bs (%s)' % (p['size'], p['bs']))
    return size, bs, size // bs


def check_target(br, p, size, is_device):
    """The device guard for a device written (a write, or a copy from `input`); for a copy, also the
    input's size and that the two devices share no blocks."""
    if not is_device or p['test'] == 'read':
        return
    if p['test'] == 'copy':
        shared = overlap(p['input'], p['path'])
        if shared:
            br.refuse('input and path share blocks: %s; copy onto another device' % shared)
        in_size = block_device_size(p['input'])
        if in_size and size > in_size:
            br.refuse('size %s (%d bytes) is larger than the input device %s (%d bytes)'
                      % (p['size'], size, p['input'], in_size))
    info = br.device(p['path'], p['destructive'], force=p['force'])
    if info and info.get('size_bytes') and size > info['size_bytes']:
        br.refuse('size %s (%d bytes) is larger than the block device %s (%d bytes)'
                  % (p['size'], size, p['path'], info['size_bytes']))


def prepare_source(br, p, size, workdir, test):
    """The file dd reads: the random source of a write (in its own owned directory in /dev/shm, or
    in the work directory), the test file of a read or copy (written now, not timed) or /dev/zero.
    Checks the free space for everything dd writes first. Returns (source, data_source)."""
    target_dir = None if workdir is None else p['path']
    data_dir = None
    if test == 'write' and p['data'] == 'random':
        data_dir, w = choose_data_dir(size, target_dir or tempfile.gettempdir(), p['data_dir'])
        br.warn(w, SOURCE_ON_TEST_STORAGE)
    problem = free_space_problem(space_needed(test, size, target_dir, data_dir), 'dd')
    if problem:
        br.refuse(problem)
    if test == 'write' and data_dir is None:
        return '/dev/zero', '/dev/zero'
    if test == 'write':
        srcdir = workdir if data_dir == target_dir else br.workdir_in(data_dir, name='dd-src', keep=False)
        source = os.path.join(srcdir, 'src.bin')
    elif workdir is None:
        return p['input'] or p['path'], None  # reading a block device, or copying one onto another
    else:
        source = os.path.join(workdir, 'dd.bin' if test == 'read' else 'dd-src.bin')
    if not br.check_mode:
        write_random_file(source, size)
    return source, 'tmpfs' if data_dir == '/dev/shm' else data_dir


def drop_before(br, p, params):
    """Drop the caches right before dd: before reads, so they come from the storage; before writes
    too (the recipe's `sync; echo 3 > ...`), so dirty data from before is not flushed inside the
    timing. Returns whether dd uses O_DIRECT (a read that could not drop the caches does)."""
    direct, test = p['direct'], p['test']
    reason = drop_caches() if p['drop_caches'] else None
    if reason:
        params['drop_caches'] = False
        br.warnings.append('%s: %s' % (reason, 'the write may pay for dirty data written before it'
                                       if test == 'write' else 'reading with iflag=direct instead'))
        direct = direct or test != 'write'
    if test != 'write':
        params['direct'] = direct
    return direct


def dd_argv(dd_bin, source, dest, bs, count, test, p, direct):
    argv = [dd_bin, 'if=' + source, 'of=' + dest, 'bs=%d' % bs, 'count=%d' % count]
    if p['fdatasync'] and test != 'read':
        argv.append('conv=fdatasync')
    if direct:
        argv.append('oflag=direct' if test == 'write' else 'iflag=direct')
    return argv


# The options, once (module_utils/run/options.py): the argument spec and the bounds the module
# checks; the matrix schema's params and the plan's option names are read from here too.
OPTIONS = dict(
    path=dict(type='path', required=True),
    test=dict(type='str', choices=['write', 'read', 'copy'], default='write'),
    size=dict(type='str', default='256M'),
    bs=dict(type='str', default='1M'),
    input=dict(type='path'),
    data=dict(type='str', choices=['random', 'zero'], default='random'),
    data_dir=dict(type='path'),
    drop_caches=dict(type='bool', default=True),
    direct=dict(type='bool', default=False),
    fdatasync=dict(type='bool', default=True),
    destructive=dict(type='bool', default=False),
    force=dict(type='bool', default=False),
    keep=dict(type='bool', default=False),
)
OPTIONS.update(COMMON_ARGS)


def clear_copied_head(path, size):
    """After a block-device copy (not timed): zero the first min(size, 1 MiB) bytes of the device
    written, where the copy put the input's partition table or file-system superblock, so the next
    repetition finds no signature of this run's making (the device guard would want force).
    Only bytes this run wrote are touched."""
    n = min(size, SCRUB_BYTES)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, b'\0' * n)
        os.fsync(fd)
    finally:
        os.close(fd)
    return n


def main():
    run_module(OPTIONS, one_run)


def one_run(module):
    """One run of the module (module_utils/run/benchrun.py run_module: alone, or one of a batch)."""
    p = module.params
    test, path = p['test'], p['path']
    size, bs, count = sizes(module, p)
    if not os.path.exists(path):
        module.fail_json(msg='path %s does not exist' % path)
    is_device = is_block_device(path)
    problem = copy_input_problem(test, p['input'], p['input'] is not None and is_block_device(p['input']),
                                 is_device, path)
    if problem:
        module.fail_json(msg=problem)
    params = dict(test=test, size=p['size'], bytes=size, bs=p['bs'], count=count, data=p['data'],
                  direct=p['direct'], fdatasync=p['fdatasync'], drop_caches=p['drop_caches'])
    if p['input']:
        params['input'] = p['input']
    dd_bin = module.get_bin_path('dd', required=True)
    with BenchRun(module, 'dd') as br:
        if p['data'] == 'zero' and test != 'read':
            br.warnings.append(ZERO_WARNING)
        br.warn(ram_warning(size, 'data set'), BELOW_2X_RAM)
        check_target(br, p, size, is_device)
        workdir = None if is_device else br.workdir_in(path)
        target = path if is_device else os.path.join(workdir, 'dd.bin')
        # Ordered so nothing happens between the cache drop and dd: make the data, apply the
        # guards (cool-down, quiesce), then `sync; echo 3 > drop_caches` and dd at once.
        source, data_source = prepare_source(br, p, size, workdir, test)
        if test == 'write':
            params['data_source'] = data_source
        dest = '/dev/null' if test == 'read' else target
        br.dry_run(dd_argv(dd_bin, source, dest, bs, count, test, p, p['direct']), writes=[workdir] if workdir else [])
        version = run(module, [dd_bin, '--version'])
        tool_version = version.stdout.splitlines()[0].split()[-1] if version.ok and version.stdout else None
        br.measure(params)
        argv = dd_argv(dd_bin, source, dest, bs, count, test, p, drop_before(br, p, params))
        br.result['cmd'] = argv
        started = utc_now()
        res = br.run(argv)
        if not res.ok:
            br.fail('dd', res)
        rec = br.parse('dd', res, dd_record, res.stderr, test=test, bs=bs, tool_version=tool_version,
                       labels=p['labels'], params=params, warnings=br.warnings, cmd=argv, started=started,
                       duration_s=res.duration_s)
        if is_device and test == 'copy' and not p['keep']:
            br.result['cleared_bytes'] = clear_copied_head(path, size)
        # A benchmark leaves the target as it found it (its work directory is removed), so it
        # reports no change, unless keep leaves the written file behind.
        br.exit(changed=bool(p['keep']), bench_result=rec)


if __name__ == '__main__':
    main()
