# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Capture what module_utils/observe/observe.py reads, around one real command, for the unit tests'
fixtures (tests/unit/fixtures/observe/<name>/): the /proc files before and after the command, and
the exited command's /proc/<pid>/stat and /proc/<pid>/io read from its zombie (waitid WNOWAIT),
as the observer does. Stdlib only, so it runs inside a container or a guest as it is.

    capture_observe.py OUTDIR [--path PATH] [--skip NAME,...] -- COMMAND...

Writes OUTDIR/before/<file>, OUTDIR/after/<file> (diskstats, stat, meminfo, net_dev, mountinfo,
pressure_cpu, pressure_io, pressure_memory where the files exist), OUTDIR/tool.stat, OUTDIR/tool.io,
OUTDIR/tool.schedstat and OUTDIR/meta.json (the command, its exit code, the monotonic seconds between the two snapshots,
SC_CLK_TCK, the kernel, the path's st_dev and the files that were missing).
"""

import json
import os
import subprocess
import sys
import time

FILES = (('diskstats', '/proc/diskstats'), ('stat', '/proc/stat'), ('meminfo', '/proc/meminfo'),
         ('net_dev', '/proc/net/dev'), ('mountinfo', '/proc/self/mountinfo'),
         ('pressure_cpu', '/proc/pressure/cpu'), ('pressure_io', '/proc/pressure/io'),
         ('pressure_memory', '/proc/pressure/memory'))


def snapshot(outdir, which, skip=()):
    os.makedirs(os.path.join(outdir, which), exist_ok=True)
    missing = []
    for name, path in FILES:
        if name in skip:
            continue
        try:
            with open(path) as f:
                text = f.read()
        except OSError as e:
            missing.append('%s: %s' % (path, e.strerror))
            continue
        with open(os.path.join(outdir, which, name), 'w') as f:
            f.write(text)
    return missing


def main(argv):
    if '--' not in argv:
        sys.exit(__doc__)
    sep = argv.index('--')
    opts, command = argv[:sep], argv[sep + 1:]
    outdir = opts[0]
    path = opts[opts.index('--path') + 1] if '--path' in opts else None
    skip = opts[opts.index('--skip') + 1].split(',') if '--skip' in opts else []
    os.makedirs(outdir, exist_ok=True)
    t0 = time.monotonic()
    missing = snapshot(outdir, 'before', skip)
    proc = subprocess.Popen(command, start_new_session=True)
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    for name in ('stat', 'io', 'schedstat'):
        with open('/proc/%d/%s' % (proc.pid, name)) as f:
            text = f.read()
        with open(os.path.join(outdir, 'tool.%s' % name), 'w') as f:
            f.write(text)
    snapshot(outdir, 'after', skip)
    t1 = time.monotonic()
    rc = proc.wait()
    st = os.stat(path) if path else None
    meta = {'command': command, 'rc': rc, 'window_s': round(t1 - t0, 6), 'clk_tck': os.sysconf('SC_CLK_TCK'),
            'kernel': os.uname().release, 'path': path,
            'path_st_dev': '%d:%d' % (os.major(st.st_dev), os.minor(st.st_dev)) if st else None,
            'missing': missing, 'skipped': skip}
    with open(os.path.join(outdir, 'meta.json'), 'w') as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write('\n')
    return rc


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
