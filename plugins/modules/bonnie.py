#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: bonnie
short_description: Run bonnie++ as an unprivileged user and return one result record per run
version_added: 0.1.0
description:
  - Runs C(bonnie++) on the target in a private work directory created inside O(path), owned by the
    unprivileged user bonnie++ runs as, and removed afterwards (also on failure).
  - Returns a result record (C(bench_result)) per bonnie++ run with the metrics C(seq_output_char),
    C(seq_output_block), C(seq_rewrite), C(seq_input_char), C(seq_input_block) (MB/s),
    C(random_seeks) (seeks/s), C(seq_create), C(seq_read), C(seq_delete), C(random_create),
    C(random_read), C(random_delete) (files/s), each with C(<name>_cpu) (%) and C(<name>_latency) (ms)
    where bonnie++ prints them. A test bonnie++ shows as C(+++++) (under 500 ms) has value null and
    C(too_fast=true), with a warning on the record.
  - As root, bonnie++ runs as O(user) (C(-u uid:gid)). Without O(user) a system user C(benchlab) without
    a login shell is created when it does not exist; that is the only change the module makes.
    Run by an unprivileged account, bonnie++ runs as that account.
  - The file size defaults to twice the target's RAM, as bonnie++ wants for results the page cache
    cannot inflate. A smaller O(size) is used only when asked; the record then carries a warning and
    bonnie++ is told C(-r) = half the size, so that it accepts it.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description:
      - Directory on the storage under test. A private work directory is created inside it; the user
        bonnie++ runs as must be able to enter every directory above it.
    type: path
    required: true
  size:
    description:
      - File size of the I/O tests (C(-s)), such as V(8G) or V(512M); a plain number is MiB, as for
        bonnie++. V(0) skips the I/O tests.
      - Default is twice O(ram). Below that the record carries a warning and C(-r) is half the size.
    type: str
  ram:
    description:
      - RAM size bonnie++ is told (C(-r)), such as V(4G); a plain number is MiB. Default is the
        target's C(MemTotal).
    type: str
  files:
    description:
      - Number of files of the file tests (C(-n)) in multiples of 1024, or bonnie++'s
        C(number:max:min:dirs) form, such as V(16) or V(64:4096:1024:16). V(0) skips the file tests.
      - At least 0.
    type: str
    default: '16'
  runs:
    description: Number of bonnie++ runs in one call (C(-x)); each run gives its own record. From 1 to 100.
    type: int
    default: 1
  fast:
    description: Skip the per-character tests (C(-f)), which mostly measure the CPU.
    type: bool
    default: false
  sync:
    description: C(fsync) after every write (C(-b), no write buffering).
    type: bool
    default: false
  direct:
    description: Use O_DIRECT for the bulk I/O tests (C(-D)).
    type: bool
    default: false
  machine:
    description: Machine label bonnie++ prints (C(-m)); default is the host name.
    type: str
  user:
    description:
      - Existing unprivileged account to run bonnie++ as (when the module runs as root). Never root.
      - When not given, the system user C(benchlab) is used and created if needed.
    type: str
notes:
  - Check mode returns the command that would run and whether the user would be created.
  - C(duration_s) of each record is that of the whole bonnie++ call (all O(runs)).
seealso:
  - plugin: benchlab.bench.parse_bonnie
    plugin_type: filter
  - module: benchlab.bench.fio
extends_documentation_fragment:
  - benchlab.bench.common
'''

EXAMPLES = r'''
- name: bonnie++ with the default file size (twice the RAM), 16*1024 files
  benchlab.bench.bonnie:
    path: /srv/bench
    labels:
      platform: host
      storage: drbd
  register: bonnie

- name: Three quick runs without the per-character tests, as an existing user
  benchlab.bench.bonnie:
    path: /srv/bench
    size: 4G
    files: '64:4096:1024:16'
    runs: 3
    fast: true
    user: bench

- name: Block write throughput of the first run
  ansible.builtin.debug:
    msg: "{{ bonnie.bench_result.metrics.seq_output_block.value }} MB/s"
'''

RETURN = r'''
bench_result:
  description: The record of the first run (schema version 1).
  returned: success, not in check mode
  type: dict
  contains:
    tool:
      description: Always V(bonnie++).
      type: str
      returned: always
      sample: bonnie++
    test:
      description: V(all), V(io) (O(files=0)) or V(files) (O(size=0)).
      type: str
      returned: always
      sample: all
    metrics:
      description: The tests bonnie++ ran, with C(_cpu) and C(_latency) companions.
      type: dict
      returned: always
      sample: {"seq_output_block": {"value": 375.7, "unit": "MB/s", "better": "higher"}}
bench_results:
  description: One record per run (O(runs) of them).
  returned: success, not in check mode
  type: list
  elements: dict
cmd:
  description: The argv that ran (or would run, in check mode).
  returned: always
  type: list
  elements: str
  sample: ["/usr/sbin/bonnie++", "-d", "/srv/bench/benchlab-bonnie-x1", "-s", "8192", "-r", "4096", "-n", "16", "-u", "998:998", "-q"]
user_created:
  description: Whether the benchmark user was created (or would be, in check mode).
  returned: always
  type: bool
bench_dry_run:
  description:
    - What the run would do, in check mode - C(tool), C(argv), C(writes), C(creates), C(removes),
      C(refused) (see the C(check_mode) attribute); C(argvs) lists every command when it runs several.
  returned: check mode
  type: dict
'''

import os
import pwd
import re
import stat


from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun, run_module
from ansible_collections.benchlab.bench.plugins.module_utils.tools.bonnie import TOOL, bonnie_records
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS, mem_total_bytes
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import BELOW_2X_RAM
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import utc_now
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import fail, run
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, format_bytes, parse_size
from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import system_directory_problem

MIB = 1024 * 1024
DEFAULT_USER = 'benchlab'
FILES_RE = re.compile(r'^\d+(?::-?\d+[kmgKMG]?){0,4}$')
NOLOGIN = ('/usr/sbin/nologin', '/sbin/nologin', '/bin/false')


def to_mib(value, what):
    """'8G' -> 8192; a plain number is MiB, as bonnie++'s -s and -r read it."""
    text = str(value).strip()
    if text.isdigit():
        return int(text)
    try:
        return parse_size(text) // MIB
    except UnitError as e:
        raise UnitError('%s: %s' % (what, e))


def lookup_user(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def create_user(module, name):
    useradd = module.get_bin_path('useradd', required=True)
    shell = next((s for s in NOLOGIN if os.path.exists(s)), '/bin/false')
    res = run(module, [useradd, '--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent',
                       '--shell', shell, '--comment', 'benchlab.bench benchmark user', name])
    if not res.ok:
        fail(module, 'creating the benchmark user %s' % name, res)
    return pwd.getpwnam(name)


def unreachable_dir(path, uid, gids):
    """The first directory from / down to `path` that `uid` cannot enter, or None."""
    path = os.path.abspath(path)
    parts = [path]
    while os.path.dirname(parts[-1]) != parts[-1]:
        parts.append(os.path.dirname(parts[-1]))
    for d in reversed(parts):
        st = os.stat(d)
        if st.st_uid == uid:
            bit = stat.S_IXUSR
        elif st.st_gid in gids:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return d
    return None


def sizes(module, p, path, files):
    """(size_mib, ram_mib, r_mib, warnings), or a failure naming the option."""
    try:
        if p['ram'] is not None:
            ram_mib = to_mib(p['ram'], 'ram')
        else:
            total = mem_total_bytes()
            if not total:
                module.fail_json(msg='cannot read MemTotal from /proc/meminfo: set ram')
            ram_mib = total // MIB
        size_mib = to_mib(p['size'], 'size') if p['size'] is not None else 2 * ram_mib
    except UnitError as e:
        module.fail_json(msg=str(e))
    if ram_mib < 1:
        module.fail_json(msg='ram must be at least 1 MiB, got %s' % p['ram'])
    warnings = []
    r_mib = ram_mib
    if 0 < size_mib < 2 * ram_mib:
        r_mib = max(size_mib // 2, 1)
        warnings.append('file size %s is below 2x RAM (%s): the page cache may inflate the results; bonnie++ '
                        'was told -r %d (half the file size) so that it accepts it'
                        % (format_bytes(size_mib * MIB), format_bytes(ram_mib * MIB), r_mib))
    if size_mib == 0 and files.split(':', 1)[0] == '0':
        module.fail_json(msg='size 0 and files 0 skip both parts of bonnie++: nothing to measure')
    problem = system_directory_problem(path)    # before its free space: /proc has none, for another reason
    if problem:
        module.fail_json(msg=problem)
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    if size_mib * MIB > free:
        module.fail_json(msg='not enough free space in %s for a %s bonnie++ file set (%s free): set a smaller '
                             'size (the record then says the page cache may inflate it)'
                             % (path, format_bytes(size_mib * MIB), format_bytes(free)))
    return size_mib, ram_mib, r_mib, warnings


def bench_user(module, p, result):
    """(pwd entry or None in check mode before it is created, name): the unprivileged user bonnie++
    runs as; created (a system user) when it is the default one and missing."""
    if os.geteuid() == 0:
        name = p['user'] or DEFAULT_USER
        pw = lookup_user(name)
        if pw is None:
            if p['user']:
                module.fail_json(msg='user %s does not exist: create it, or leave user unset to let the module '
                                     'create the system user %s' % (name, DEFAULT_USER))
            result.update(changed=True, user_created=True)
            if module.check_mode:
                result.setdefault('would_create', []).append('user %s' % name)
            else:
                pw = create_user(module, name)
        if pw is not None and pw.pw_uid == 0:
            module.fail_json(msg='bonnie++ never runs as root (user %s has uid 0): give an unprivileged user' % name)
    else:
        pw = pwd.getpwuid(os.geteuid())
        name = pw.pw_name
        if p['user'] and p['user'] != name:
            module.fail_json(msg='running bonnie++ as %s needs root; the module runs as %s' % (p['user'], name))
    if pw is not None:
        blocked = unreachable_dir(p['path'], pw.pw_uid, os.getgrouplist(pw.pw_name, pw.pw_gid))
        if blocked:
            module.fail_json(msg='user %s cannot enter %s, so bonnie++ cannot write in %s: use a path under '
                                 'directories other users may enter (such as /var/tmp or /srv)' % (name, blocked, p['path']))
    return pw, name


def data_dir(br, pw):
    """bonnie++'s directory: `data` inside the (root-owned) work directory, owned by the benchmark
    user, so that the user cannot touch the work directory's ownership marker."""
    data = os.path.join(br.workdir, 'data')
    if not br.check_mode:
        os.chmod(br.workdir, 0o711)
        os.mkdir(data, 0o700)
        os.chown(data, pw.pw_uid, pw.pw_gid)
    return data


def bonnie_argv(bonnie_bin, p, data, size_mib, r_mib, files, pw, name):
    argv = [bonnie_bin, '-d', data, '-s', str(size_mib), '-r', str(r_mib), '-n', files]
    if os.geteuid() == 0:
        argv += ['-u', '%d:%d' % (pw.pw_uid, pw.pw_gid) if pw is not None else name]
    argv.append('-q')
    if p['runs'] > 1:
        argv += ['-x', str(p['runs'])]
    for key, flag in (('fast', '-f'), ('sync', '-b'), ('direct', '-D')):
        if p[key]:
            argv.append(flag)
    if p['machine']:
        argv += ['-m', p['machine']]
    return argv


# The options, once (module_utils/run/options.py): the argument spec and the bounds the module
# checks; the matrix schema's params and the plan's option names are read from here too.
OPTIONS = dict(
    path=dict(type='path', required=True),
    size=dict(type='str'),
    ram=dict(type='str'),
    files=dict(type='str', default='16', minimum=0),
    runs=dict(type='int', default=1, minimum=1, maximum=100),
    fast=dict(type='bool', default=False),
    sync=dict(type='bool', default=False),
    direct=dict(type='bool', default=False),
    machine=dict(type='str'),
    user=dict(type='str'),
)
OPTIONS.update(COMMON_ARGS)


def main():
    run_module(OPTIONS, one_run)


def one_run(module):
    """One run of the module (module_utils/run/benchrun.py run_module: alone, or one of a batch)."""
    p = module.params
    path = p['path']
    if not os.path.isdir(path):
        module.fail_json(msg='path %s does not exist or is not a directory' % path)
    files = str(p['files']).strip()
    if not FILES_RE.fullmatch(files):
        module.fail_json(msg="files: %r is not a file count or bonnie++'s number:max:min:dirs form "
                             "(e.g. 16 or 64:4096:1024:16)" % p['files'])
    size_mib, ram_mib, r_mib, warnings = sizes(module, p, path, files)
    with BenchRun(module, 'bonnie', what=TOOL) as br:
        br.warnings.extend(warnings)
        if 0 < size_mib < 2 * ram_mib:
            br.flag(BELOW_2X_RAM)
        br.result['user_created'] = False
        pw, name = bench_user(module, p, br.result)
        br.dry['creates'].extend(br.result.pop('would_create', []))
        bonnie_bin = module.get_bin_path('bonnie++', required=True)
        params = dict(size=p['size'], size_mib=size_mib, ram_mib=ram_mib, r_mib=r_mib, files=files, runs=p['runs'],
                      fast=p['fast'], sync=p['sync'], direct=p['direct'], user=name)
        if p['machine']:
            params['machine'] = p['machine']
        br.workdir_in(path)
        data = data_dir(br, pw)
        argv = bonnie_argv(bonnie_bin, p, data, size_mib, r_mib, files, pw, name)
        br.dry_run(argv, writes=[data])
        br.measure(params)
        started = utc_now()
        res = br.run(argv, cwd=data)
        if not res.ok:
            br.fail('bonnie++', res)
        # -q: the CSV line(s) on stdout, the text table (one run only) on stderr
        records = br.parse('bonnie++', res, bonnie_records, res.stdout + '\n' + res.stderr, labels=p['labels'],
                           params=params, warnings=br.warnings, cmd=argv, started=started, duration_s=res.duration_s)
        if len(records) != p['runs']:
            for rec in records:
                rec['warnings'].append('bonnie++ was asked for %d runs and printed %d results'
                                       % (p['runs'], len(records)))
        br.exit(bench_result=records[0], bench_results=records)


if __name__ == '__main__':
    main()
