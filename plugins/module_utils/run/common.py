# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""Target-side helpers the benchmark modules share: cache dropping, RAM size, the methodology
guards, the common module options (labels, guards, run_id, run_key) and the small text helpers
the parsers share (first_line, quote_line, version_tuple), and describe() (benchlab.bench.sysinfo, and
a run asked to describe its cell). Work directories: module_utils/run/workdir.py; the run skeleton:
module_utils/run/benchrun.py.
"""

import os
import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import GuardError, apply_guards
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import run
from ansible_collections.benchlab.bench.plugins.module_utils.observe.sysinfo import (
    detect_virtualization, mount_for, parse_cpuinfo, parse_meminfo, parse_mountinfo, parse_os_release)
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import format_bytes

# Options every benchmark module accepts; merged into each module's argument_spec and documented
# by the benchlab.bench.common doc fragment.
COMMON_ARGS = dict(
    labels=dict(type='dict', default={}),
    guards=dict(type='dict', default={}),
    run_id=dict(type='str'),
    run_key=dict(type='str', no_log=False),
    describe=dict(type='bool', default=False),
    batch=dict(type='dict'),
    observe_interval_s=dict(type='float', default=1.0),
)


def given_options(value, spec):
    """`value` (a dict, or a list of dicts, validated against the sub-options `spec`) as the user gave
    it: their keys in their order and spelling (an alias stays an alias), without what Ansible adds (None
    for every option not given, the canonical copy of an alias), the same for nested sub-options."""
    if isinstance(value, list):
        return [given_options(v, spec) for v in value]
    if not isinstance(value, dict):
        return value
    canonical = {}
    for name, opts in spec.items():
        canonical[name] = name
        for alias in opts.get('aliases') or ():
            canonical[alias] = name
    out, seen = {}, set()
    for key, v in value.items():
        name = canonical.get(key, key)
        if name in seen or v is None:
            continue
        seen.add(name)
        sub = (spec.get(name) or {}).get('options')
        out[key] = given_options(v, sub) if sub else v
    return out


def describe(module, path=None):
    """The environment as benchlab.bench.sysinfo returns it: CPU, RAM, kernel, distribution,
    virtualization, the mount under `path` (when given) and the DRBD resources (when DRBD is loaded).
    Reads /proc and /etc/os-release, asks systemd-detect-virt and drbdsetup when present."""
    cpuinfo = read_text('/proc/cpuinfo')
    uname = os.uname()
    detect = None
    dv = module.get_bin_path('systemd-detect-virt')
    if dv:
        res = run(module, [dv])
        detect = res.stdout.strip() or None
    info = dict(
        hostname=uname.nodename,
        cpu=parse_cpuinfo(cpuinfo),
        memory=parse_meminfo(read_text('/proc/meminfo')),
        kernel=dict(release=uname.release, version=uname.version, machine=uname.machine),
        distribution=parse_os_release(read_text('/etc/os-release')),
        virtualization=detect_virtualization(detect, cpuinfo, read_text('/proc/1/environ').replace('\0', '\n'),
                                             os.path.exists('/proc/vz'), os.path.exists('/.dockerenv')),
    )
    if path:
        m = mount_for(os.path.realpath(path), parse_mountinfo(read_text('/proc/self/mountinfo'))) or {}
        info['target'] = dict(path=path, mountpoint=m.get('mountpoint'), fstype=m.get('fstype'),
                              source=m.get('source'), options=m.get('options'))
    drbdsetup = module.get_bin_path('drbdsetup')
    if drbdsetup and (os.path.exists('/proc/drbd') or os.path.isdir('/sys/module/drbd')):
        # imported here: a benchmark run that describes nothing does not pay for the DRBD parsers
        from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_status import status_argv
        from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import DrbdParseError
        argv, parse = status_argv(drbdsetup, None, read_text('/proc/drbd') if os.path.exists('/proc/drbd') else '')
        res = run(module, argv)
        if res.rc == 0:
            try:
                info['drbd'] = parse(res.stdout)
            except DrbdParseError as e:
                module.warn(str(e))
    return info


def start_measurement(module, params, warnings, competing=None, others=None):
    """Apply the methodology guards (module_utils/run/guards.py) right before measuring: records what
    was done in params['guards'] and adds a warning for each problem. Fails on a bad guards option.
    `competing` replaces the scan for competing benchmark processes (iperf leaves out its own server);
    `others` (guards.OtherRuns) looks for other benchlab runs."""
    try:
        done, notes = apply_guards(module.params.get('guards'), competing=competing, others=others)
    except GuardError as e:
        module.fail_json(msg=str(e))
    params['guards'] = done
    warnings.extend(notes)
    return done


def read_text(path, default=''):
    try:
        with open(path) as f:
            return f.read()
    except (IOError, OSError):
        return default


def mem_total_bytes():
    return parse_meminfo(read_text('/proc/meminfo')).get('mem_total_bytes')


def drop_caches():
    """sync, then drop the page cache, dentries and inodes. Returns None or the reason it failed."""
    os.sync()
    try:
        with open('/proc/sys/vm/drop_caches', 'w') as f:
            f.write('3\n')
    except (IOError, OSError) as e:
        return 'cannot drop caches (%s)' % (e.strerror or e)
    return None


def ram_warning(size_bytes, what):
    """The methodology's warning (docs/usage.md) when a data set is below twice the target's RAM."""
    ram = mem_total_bytes()
    if ram and size_bytes < 2 * ram:
        return ('%s %s is below 2x RAM (%s): the page cache may inflate the result'
                % (what, format_bytes(size_bytes), format_bytes(ram)))
    return None


# ---------------------------------------------------------------------------------------------
# text helpers for parsers' error messages and version checks

def first_line(text, strip=True, default=None):
    """The first line of `text` that is not blank (stripped unless strip=False), else `default`."""
    for line in (text or '').splitlines():
        if line.strip():
            return line.strip() if strip else line
    return default


def quote_line(line, limit=200, mark=''):
    """A line quoted for an error message: repr() of at most `limit` characters (`mark` appended
    when it was cut); '(empty output)' for None."""
    if line is None:
        return '(empty output)'
    line = line.rstrip('\n')
    return repr(line if len(line) <= limit else line[:limit] + mark)


def version_tuple(version):
    """'2.1.8' -> (2, 1, 8), '1.03e' -> (1, 3): the leading number of each dotted part, up to the
    first part without one; () for None or text without a leading number."""
    parts = []
    for part in (version or '').split('.'):
        m = re.match(r'\d+', part)
        if not m:
            break
        parts.append(int(m.group(0)))
    return tuple(parts)
