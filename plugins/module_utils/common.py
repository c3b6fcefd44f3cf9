# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Target-side helpers the benchmark modules share: private work directories, cache dropping,
RAM size, the methodology guards and the common module options (labels, guards)."""

import os
import shutil
import tempfile

from ansible_collections.benchlab.bench.plugins.module_utils.guards import GuardError, apply_guards, competing_processes
from ansible_collections.benchlab.bench.plugins.module_utils.sysinfo import parse_meminfo
from ansible_collections.benchlab.bench.plugins.module_utils.units import format_bytes

# Options every benchmark module accepts; merged into each module's argument_spec and documented
# by the benchlab.bench.common doc fragment.
COMMON_ARGS = dict(
    labels=dict(type='dict', default={}),
    guards=dict(type='dict', default={}),
)


def start_measurement(module, params, warnings, competing=None):
    """Apply the methodology guards (module_utils/guards.py) right before measuring: records what
    was done in params['guards'] and adds a warning for each problem. Fails on a bad guards option.
    `competing` replaces the scan for competing benchmark processes (iperf leaves out its own server)."""
    try:
        done, notes = apply_guards(module.params.get('guards'), competing=competing or competing_processes)
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


def make_workdir(parent, tool):
    """A private (0700) directory for one benchmark run inside `parent`; the caller removes it."""
    if not os.path.isdir(parent):
        raise OSError('benchmark directory %s does not exist or is not a directory' % parent)
    return tempfile.mkdtemp(prefix='benchlab-%s-' % tool, dir=parent)


def remove_tree(path):
    if path and os.path.lexists(path):
        shutil.rmtree(path, ignore_errors=True)


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
    """The DESIGN.md section 5 warning when a data set is below twice the target's RAM."""
    ram = mem_total_bytes()
    if ram and size_bytes < 2 * ram:
        return ('%s %s is below 2x RAM (%s): the page cache may inflate the result'
                % (what, format_bytes(size_bytes), format_bytes(ram)))
    return None
