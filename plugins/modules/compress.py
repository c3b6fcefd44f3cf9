#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: compress
short_description: CPU test - time bzip2 (and gzip, xz, zstd) compressing and decompressing text
version_added: 0.1.0
description:
  - The C(time bzip2 -9) / C(time bzip2 -d) CPU measure of the field reports, made reproducible.
  - Generates O(size) bytes of seeded pseudo-English text (not timed) in a private work directory
    inside O(path), then for each of O(compressors) times compressing it and decompressing it again,
    and checks that the decompressed file is identical to the input (SHA-256). A failed round trip
    fails the task.
  - The input compresses like real text (bzip2 -9 about 3.5x, gzip -6 about 2.5x), neither zeros nor
    random bytes; the same O(seed) and O(size) give the same bytes on every target, and the record
    carries their SHA-256 (C(params.input_sha256)).
  - Returns one result record per compressor and phase, with the tool C(compress), the test
    C(<compressor>-<level>-compress) or C(<compressor>-decompress) (such as C(bzip2-9-compress),
    C(bzip2-decompress)) and the metrics C(elapsed) (wall clock, s), C(user) and C(sys) (CPU seconds
    of the compressor process, from C(getrusage(RUSAGE_CHILDREN)) taken before and after it) and
    C(throughput) (uncompressed MB/s, 10^6 bytes/s, for both phases).
  - "The input is read from the page cache (it was just written) and the output goes to the page
    cache without a sync: this measures the CPU, not the storage."
  - The methodology guards (O(guards)) are applied once, after the input is generated and before the
    first timed run; what they did is in every record's C(params.guards).
  - With O(input), a file the user names (such as the C(data.zip) of the field report) is copied into
    the work directory (not timed) and compressed instead of generated text; O(size) and O(seed) are
    then ignored, and the record carries C(params.input=file), C(params.input_path) and its SHA-256.
  - The work directory is removed afterwards, also on failure.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description:
      - Directory in which the private work directory is created (and removed afterwards).
      - Default is the target's temporary directory (C(TMPDIR) or C(/tmp)).
    type: path
  size:
    description:
      - Size of the generated input, such as V(32M) or V(1G) (powers of 1024).
      - Small inputs finish in well under a second, where start-up and timer overhead weigh on the
        result; the record then carries a warning.
    type: str
    default: 32M
  seed:
    description: Seed of the text generator. The same seed and size give the same input everywhere.
    type: int
    default: 42
  input:
    description:
      - A regular file on the target to compress instead of generated text. It is copied into the work
        directory first (not timed) and never modified; O(size) and O(seed) are ignored.
      - Keep it off the storage under test when that matters (a tmpfs such as C(/dev/shm)); the copy
        is read from the page cache either way.
    type: path
  compressors:
    description:
      - The compressors to time, in this order.
    type: list
    elements: str
    choices: [bzip2, gzip, xz, zstd]
    default: [bzip2]
    aliases: [tools, algorithms]
  level:
    description:
      - Compression level passed as C(-<level>) to every compressor. Default is each tool's own
        default, passed explicitly (bzip2 9, gzip 6, xz 6, zstd 3).
      - Must be valid for every listed compressor (bzip2 and gzip 1-9, xz 0-9, zstd 1-19).
      - From 0 to 19.
    type: int
  threads:
    description:
      - Threads for xz and zstd (C(-T<n>); 0 means one per core), for both compression and
        decompression. bzip2 and gzip are single-threaded and ignore it (the record says so).
      - Default is 1 (passed explicitly, because xz 5.6 and later otherwise use every core).
      - From 0 to 1024.
    type: int
notes:
  - Check mode returns the commands that would run (C(cmd), C(cmds)) without writing anything.
  - Wall-clock time includes starting the compressor (a few milliseconds).
  - gzip is called with C(-f) on a hard link to the input, so gzip 1.5 (no C(-k)) works too.
seealso:
  - plugin: benchlab.bench.parse_time
    plugin_type: filter
extends_documentation_fragment:
  - benchlab.bench.common
'''

EXAMPLES = r'''
- name: bzip2 -9 and bzip2 -d on 64 MiB of text, like 'time bzip2 -9' by hand
  benchlab.bench.compress:
    size: 64M
    labels:
      platform: kvm
  register: cpu

- name: Compression throughput in MB/s
  ansible.builtin.debug:
    msg: "{{ cpu.bench_results | map(attribute='test') | zip(cpu.bench_results | map(attribute='metrics.throughput.value')) }}"

- name: Time bzip2 -9 and bzip2 -d of a file you name, as in the field report (data.zip)
  benchlab.bench.compress:
    input: /var/tmp/data.zip
    level: 9

- name: All four compressors, zstd and xz with two threads, in a directory on the storage under test
  benchlab.bench.compress:
    path: /srv/bench
    compressors: [bzip2, gzip, xz, zstd]
    threads: 2
'''

RETURN = r'''
bench_result:
  description: The first result record (the first compressor's compression run).
  returned: success, not in check mode
  type: dict
bench_results:
  description:
    - All result records, for each compressor its compression then its decompression run.
    - C(params) holds what was asked (C(size), C(bytes), C(seed), C(compressor), C(level),
      C(threads)) and what describes the input (C(input) generator version, C(input_sha256),
      C(compressed_bytes), C(ratio)) and C(cpu_time), how user and sys were measured.
  returned: success, not in check mode
  type: list
  elements: dict
  sample:
    - tool: compress
      tool_version: bzip2 1.0.8
      test: bzip2-9-compress
      metrics:
        elapsed: {value: 4.1, unit: s, better: lower}
        user: {value: 4.0, unit: s, better: lower}
        sys: {value: 0.05, unit: s, better: lower}
        throughput: {value: 8.2, unit: MB/s, better: higher}
cmd:
  description: The first command that ran (or would run, in check mode).
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/bzip2", "-9", "-f", "/tmp/benchlab-compress-x1/bzip2.data"]
cmds:
  description: Every timed command, in order.
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
import resource
import shutil
import tempfile


from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun, run_module
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS
from ansible_collections.benchlab.bench.plugins.module_utils.tools.compress import (
    COMPRESSORS, CompressError, check_options, compress_argv, compress_record, compressor_version, copy_input,
    decompress_argv, file_sha256, rusage_delta, threads_for, write_text)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import utc_now
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import run
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, parse_size

INPUT_GENERATOR = 'text-v1'
CPU_TIME = 'getrusage(RUSAGE_CHILDREN) delta around the compressor'
SHORT_RUN_S = 1.0


def timed_run(br, argv, cwd):
    """Run argv; return (result, user, sys) with the child's CPU seconds from getrusage deltas."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = br.run(argv, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, sys_ = rusage_delta(before, after)
    return res, user, sys_


def tool_version(module, binary, compressor):
    # bzip2 1.0.6 and older print their version for --version and then go on compressing stdin;
    # --help prints the same first line ("... Version 1.0.8, 13-Jul-2019.") and exits in every version.
    res = run(module, [binary, '--help' if compressor == 'bzip2' else '--version'])
    first, second = (res.stderr, res.stdout) if compressor == 'bzip2' else (res.stdout, res.stderr)
    return compressor_version(compressor, first) or compressor_version(compressor, second)


def link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def run_warnings(elapsed, user, sys_, threads):
    warnings = []
    if elapsed < SHORT_RUN_S:
        warnings.append('the run took %.3f s, under %.0f s: start-up and timer overhead weigh on the result; '
                        'use a larger size' % (elapsed, SHORT_RUN_S))
    if elapsed > 0 and (threads or 1) == 1 and (user + sys_) < 0.8 * elapsed:
        warnings.append('the compressor had the CPU only %.0f%% of the wall-clock time: other load on the '
                        'machine or slow storage is part of the result' % (100.0 * (user + sys_) / elapsed))
    return warnings


def round_trip(br, p, item, size, input_sha, level, version, guarded, warnings, path):
    """Compress then decompress one copy of the input; the two records."""
    c, data, packed, c_argv, d_argv = item
    threads = threads_for(c, p['threads'])
    params = dict(size=p['size'], bytes=size, seed=p['seed'], compressor=c, level=level,
                  threads=threads, input=INPUT_GENERATOR, input_sha256=input_sha, cpu_time=CPU_TIME)
    if p['input']:
        params.update(size=None, seed=None, input='file', input_path=p['input'])
    params.update(guarded)
    workdir = br.workdir
    link_or_copy(os.path.join(workdir, 'input.txt'), data)
    records = []
    for test, argv in (('compress', c_argv), ('decompress', d_argv)):
        started = utc_now()
        res, user, sys_ = timed_run(br, argv, workdir)
        if not res.ok:
            br.fail('%s %sion' % (c, test), res)
        if test == 'compress':
            if not os.path.isfile(packed) or os.path.exists(data):
                br.fail('%s compression' % c, res, extra='it did not replace %s by %s' % (data, packed))
            packed_bytes = os.path.getsize(packed)
            params.update(compressed_bytes=packed_bytes, ratio=round(float(size) / packed_bytes, 3) if packed_bytes else None)
        else:
            if not os.path.isfile(data):
                br.fail('%s decompression' % c, res, extra='it did not write %s' % data)
            out_sha = file_sha256(data)
            if out_sha != input_sha:
                br.fail('%s round trip' % c, res,
                        extra='the decompressed file differs from the input: sha256 %s, expected %s (%d bytes, got %d): '
                              'the compressor or the storage under %s corrupted the data'
                              % (out_sha, input_sha, size, os.path.getsize(data), path))
        records.append(compress_record(
            c, test, level, size, res.duration_s, user, sys_, tool_version=version, labels=p['labels'],
            params=dict(params), warnings=warnings + run_warnings(res.duration_s, user, sys_, threads),
            output=res.stderr + res.stdout, cmd=argv, started=started, duration_s=res.duration_s))
    os.unlink(data)
    return records


def validate(module, p):
    """(size, compressors, levels, path), or a failure naming the option."""
    try:
        size = parse_size(p['size'])
    except UnitError as e:
        module.fail_json(msg='size: %s' % e)
    if size <= 0:
        module.fail_json(msg='size must be greater than zero, got %s' % p['size'])
    compressors = []
    for c in p['compressors']:
        if c not in compressors:
            compressors.append(c)
    if not compressors:
        module.fail_json(msg='compressors: give at least one of %s' % ', '.join(sorted(COMPRESSORS)))
    levels = {}
    for c in compressors:
        try:
            levels[c] = check_options(c, p['level'], p['threads'])
        except CompressError as e:
            module.fail_json(msg=str(e))
    path = p['path'] or tempfile.gettempdir()
    if not os.path.isdir(path):
        module.fail_json(msg='path %s does not exist or is not a directory' % path)
    if p['input'] and not os.path.isfile(p['input']):
        module.fail_json(msg='input %s does not exist or is not a regular file' % p['input'])
    return size, compressors, levels, path


# The options, once (module_utils/run/options.py): the argument spec and the bounds the module
# checks; the matrix schema's params and the plan's option names are read from here too.
OPTIONS = dict(
    path=dict(type='path'),
    size=dict(type='str', default='32M'),
    seed=dict(type='int', default=42),
    input=dict(type='path'),
    compressors=dict(type='list', elements='str', default=['bzip2'], choices=sorted(COMPRESSORS),
                     aliases=['tools', 'algorithms']),
    level=dict(type='int', minimum=0, maximum=19),
    threads=dict(type='int', minimum=0, maximum=1024),
)
OPTIONS.update(COMMON_ARGS)


def main():
    run_module(OPTIONS, one_run)


def one_run(module):
    """One run of the module (module_utils/run/benchrun.py run_module: alone, or one of a batch)."""
    p = module.params
    size, compressors, levels, path = validate(module, p)
    binaries = dict((c, module.get_bin_path(c, required=True)) for c in compressors)
    common_warnings = []
    if p['threads'] is not None and not any(COMPRESSORS[c]['threads'] for c in compressors):
        common_warnings.append('threads applies to xz and zstd only: %s ran single-threaded' % ', '.join(compressors))
    with BenchRun(module, 'compress', errors=(CompressError,)) as br:
        workdir = br.workdir_in(path)
        plan = []
        for c in compressors:
            data = os.path.join(workdir, '%s.data' % c)
            packed = data + COMPRESSORS[c]['suffix']
            plan.append((c, data, packed,
                         compress_argv(binaries[c], c, levels[c], p['threads'], data),
                         decompress_argv(binaries[c], c, p['threads'], packed)))
        br.result['cmds'] = [argv for item in plan for argv in item[3:]]
        br.dry_run(br.result['cmds'][0], writes=[workdir], argvs=br.result['cmds'])
        if p['input']:
            input_sha, size = copy_input(p['input'], os.path.join(workdir, 'input.txt'))
        else:
            input_sha = write_text(os.path.join(workdir, 'input.txt'), size, p['seed'])
        versions = dict((c, tool_version(module, binaries[c], c)) for c in compressors)
        guarded, guard_warnings = {}, []
        br.measure(guarded, guard_warnings)
        records = []
        for item in plan:
            c = item[0]
            warnings = guard_warnings + (list(common_warnings) if not COMPRESSORS[c]['threads'] else [])
            records.extend(round_trip(br, p, item, size, input_sha, levels[c], versions[c], guarded, warnings, path))
        br.exit(bench_result=records[0], bench_results=records)


if __name__ == '__main__':
    main()
