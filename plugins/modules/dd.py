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
  - Everything is written inside a private directory the module creates in O(path) and removes
    afterwards, also on failure. A block device is written only with O(destructive=true) and never
    while it is mounted.
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
      - Required to write to a block device given as O(path). A mounted device is never written.
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
  - Check mode returns the command that would run, without writing anything.
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
  description: The result record (schema version 1, see the collection's DESIGN and record schema).
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
workdir:
  description: The work directory left in place when O(keep=true).
  returned: when keep is true
  type: str
'''

import os
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.common import (
    COMMON_ARGS, drop_caches, make_workdir, ram_warning, read_text, remove_tree, start_measurement)
from ansible_collections.benchlab.bench.plugins.module_utils.dd import DdParseError, dd_record
from ansible_collections.benchlab.bench.plugins.module_utils.record import utc_now
from ansible_collections.benchlab.bench.plugins.module_utils.runner import fail, run
from ansible_collections.benchlab.bench.plugins.module_utils.sysinfo import is_mounted_device, parse_meminfo, parse_mountinfo
from ansible_collections.benchlab.bench.plugins.module_utils.units import UnitError, format_bytes, parse_size

CHUNK = 1024 * 1024


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


def choose_data_dir(size, workdir, requested):
    """Where the random source file goes, and a warning when it shares the storage under test."""
    if requested:
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


def block_device_checks(module, path, writes):
    st = os.stat(path)
    if not stat.S_ISBLK(st.st_mode):
        return False
    if writes:
        if not module.params['destructive']:
            module.fail_json(msg='%s is a block device: writing it destroys its data; set destructive: true '
                                 'to allow it' % path)
        mm = '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
        if is_mounted_device(mm, path, parse_mountinfo(read_text('/proc/self/mountinfo'))):
            module.fail_json(msg='%s is mounted: benchlab never writes a mounted device' % path)
    return True


def main():
    argument_spec = dict(
        path=dict(type='path', required=True),
        test=dict(type='str', choices=['write', 'read', 'copy'], default='write'),
        size=dict(type='str', default='256M'),
        bs=dict(type='str', default='1M'),
        data=dict(type='str', choices=['random', 'zero'], default='random'),
        data_dir=dict(type='path'),
        drop_caches=dict(type='bool', default=True),
        direct=dict(type='bool', default=False),
        fdatasync=dict(type='bool', default=True),
        destructive=dict(type='bool', default=False),
        keep=dict(type='bool', default=False),
    )
    argument_spec.update(COMMON_ARGS)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params
    test = p['test']

    try:
        size = parse_size(p['size'])
        bs = parse_size(p['bs'])
    except UnitError as e:
        module.fail_json(msg='size/bs: %s' % e)
    if bs <= 0 or size <= 0:
        module.fail_json(msg='size and bs must be greater than zero (size=%s, bs=%s)' % (p['size'], p['bs']))
    if size % bs:
        module.fail_json(msg='size (%s) must be a multiple of bs (%s)' % (p['size'], p['bs']))
    count = size // bs

    path = p['path']
    if not os.path.exists(path):
        module.fail_json(msg='path %s does not exist' % path)
    is_device = block_device_checks(module, path, writes=test in ('write', 'copy'))
    if is_device and test == 'copy':
        module.fail_json(msg='test copy works inside a directory; %s is a block device' % path)

    warnings = []
    params = dict(test=test, size=p['size'], bytes=size, bs=p['bs'], count=count, data=p['data'],
                  direct=p['direct'], fdatasync=p['fdatasync'], drop_caches=p['drop_caches'])
    if p['data'] == 'zero' and test != 'read':
        warnings.append('data: zero writes /dev/zero: storage that skips or compresses zero blocks (ploop, '
                        'thin volumes, dedup) reports a speed it never achieved')
    w = ram_warning(size, 'data set')
    if w:
        warnings.append(w)

    dd_bin = module.get_bin_path('dd', required=True)
    workdir = None if is_device else (os.path.join(path, 'benchlab-dd-XXXXXX') if module.check_mode else None)
    srcfile = None
    result = dict(changed=False)
    try:
        if not is_device and not module.check_mode:
            workdir = make_workdir(path, 'dd')
        target = path if is_device else os.path.join(workdir, 'dd.bin')
        # Ordered so nothing happens between the cache drop and dd: make the data, apply the
        # guards (cool-down, quiesce), then `sync; echo 3 > drop_caches` and dd at once.
        if test == 'write':
            if p['data'] == 'zero':
                source = '/dev/zero'
                params['data_source'] = '/dev/zero'
            else:
                data_dir, w = choose_data_dir(size, workdir, p['data_dir'])
                if w:
                    warnings.append(w)
                params['data_source'] = 'tmpfs' if data_dir == '/dev/shm' else data_dir
                if module.check_mode:
                    source = os.path.join(data_dir, 'benchlab-src-XXXXXX')
                else:
                    fd, source = tempfile.mkstemp(prefix='benchlab-src-', dir=data_dir)
                    os.close(fd)
                    os.unlink(source)
                    srcfile = source
                    write_random_file(source, size)
            dest = target
        elif test == 'read':
            source, dest = target, '/dev/null'
        else:
            source, dest = os.path.join(workdir, 'dd-src.bin'), target
        if test != 'write' and not module.check_mode and not is_device:
            write_random_file(source, size)

        tool_version = None
        if not module.check_mode:
            version = run(module, [dd_bin, '--version'])
            tool_version = version.stdout.splitlines()[0].split()[-1] if version.ok and version.stdout else None
            start_measurement(module, params, warnings)

        direct = p['direct']
        if p['drop_caches'] and not module.check_mode:
            # before reads, so they come from the storage; before writes too (the recipe's
            # `sync; echo 3 > ...`), so dirty data from before is not flushed inside the timing
            reason = drop_caches()
            if reason:
                params['drop_caches'] = False
                if test == 'write':
                    warnings.append('%s: the write may pay for dirty data written before it' % reason)
                else:
                    warnings.append('%s: reading with iflag=direct instead' % reason)
                    direct = True
        argv = [dd_bin, 'if=' + source, 'of=' + dest, 'bs=%d' % bs, 'count=%d' % count]
        if p['fdatasync'] and test != 'read':
            argv.append('conv=fdatasync')
        if test == 'write':
            if direct:
                argv.append('oflag=direct')
        else:
            params['direct'] = direct
            if direct:
                argv.append('iflag=direct')
        result['cmd'] = argv
        if module.check_mode:
            module.exit_json(**result)

        started = utc_now()
        res = run(module, argv)
        if not res.ok:
            fail(module, 'dd', res)
        try:
            rec = dd_record(res.stderr, test=test, bs=bs, tool_version=tool_version, labels=p['labels'],
                            params=params, warnings=warnings, cmd=argv, started=started,
                            duration_s=res.duration_s)
        except DdParseError as e:
            fail(module, 'dd', res, extra=str(e))
        # A benchmark leaves the target as it found it (its work directory is removed), so it
        # reports no change, unless keep leaves the written file behind.
        result['changed'] = bool(p['keep'])
        result['bench_result'] = rec
        if p['keep'] and workdir:
            result['workdir'] = workdir
    except OSError as e:
        module.fail_json(msg='dd benchmark in %s failed: %s' % (path, e), **result)
    finally:
        if srcfile and os.path.exists(srcfile):
            os.unlink(srcfile)
        if workdir and not module.check_mode and not p['keep']:
            remove_tree(workdir)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
