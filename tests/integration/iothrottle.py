"""Throttling one block device for the live tests, with whatever the machine has: cgroup v1 blkio
(blkio.throttle.*_device) or cgroup v2 io.max. The tests that slow a device down on purpose (the
variance gate's noisy cell, the regression gate's slow run) use it.

Only I/O the throttled processes submit themselves is governed: direct I/O, reads. A buffered write
is written back later by the kernel's flusher threads, outside the cgroup (cgroup v1 never charges
them to it), so the tests write with O_DIRECT (dd `direct: true`, fio `direct: true`), and check the
cgroup's own statistics (`io_bytes`) that the bytes went through it.

A cgroup v2 hierarchy offers the io controller only when no cgroup v1 hierarchy holds it: on a
machine with the v1 blkio hierarchy mounted (this development machine) the v2 path cannot be
exercised, and on a cgroup v2 only host (Debian 12/13 with systemd) the v1 path cannot;
`unavailable()` says why, for the tests' skip reasons (tests/skips-allowed.yml lists both).
"""

import os
import re
import time
import uuid
from pathlib import Path

V1 = Path('/sys/fs/cgroup/blkio')
MECHANISMS = ('v1', 'v2')


def _read(path):
    try:
        return Path(path).read_text()
    except OSError:
        return ''


def cgroup2_mounts():
    """The mount points of cgroup2 file systems in this mount namespace."""
    found = []
    for line in _read('/proc/self/mountinfo').splitlines():
        fields = line.split(' - ', 1)
        if len(fields) == 2 and fields[1].split()[0] == 'cgroup2':
            found.append(Path(re.sub(r'\\([0-7]{3})', lambda m: chr(int(m.group(1), 8)), fields[0].split()[4])))
    return found


def v2_root():
    """The cgroup2 mount whose root offers the io controller, or None."""
    return next((m for m in cgroup2_mounts() if 'io' in _read(m / 'cgroup.controllers').split()), None)


def unavailable(mechanism):
    """None when `mechanism` ('v1' or 'v2') can throttle a device here, else why not (a skip reason)."""
    if mechanism == 'v1':
        if (V1 / 'blkio.throttle.write_bps_device').exists():
            return None
        return ('no cgroup v1 blkio hierarchy (%s/blkio.throttle.write_bps_device): a cgroup v2 only host; '
                'the cgroup v2 io.max path runs instead' % V1)
    if v2_root() is not None:
        return None
    mounts = cgroup2_mounts()
    offered = '; '.join('%s offers: %s' % (m, _read(m / 'cgroup.controllers').strip() or 'none') for m in mounts)
    bound = 'io is bound to the cgroup v1 blkio hierarchy (%s), and a new cgroup2 mount shows the same ' \
            'controllers' % V1 if V1.is_dir() else 'no hierarchy offers io'
    return 'no cgroup v2 io controller here (%s): %s; the cgroup v1 blkio path runs instead' % (
        offered or 'no cgroup2 mount', bound)


def default_mechanism():
    """v1 when the machine has it (the v2 io controller then cannot exist), else v2, else None."""
    return next((m for m in MECHANISMS if unavailable(m) is None), None)


class Throttle(object):
    """A cgroup of the test's own (named `<prefix>-<random>`) that limits I/O to block devices."""

    def __init__(self, prefix, mechanism=None):
        self.mechanism = mechanism or default_mechanism()
        if self.mechanism is None or unavailable(self.mechanism):
            raise RuntimeError(unavailable(mechanism or 'v1') if mechanism else
                               'no I/O throttle on this machine: %s; %s' % (unavailable('v1'), unavailable('v2')))
        self.enabled_io = False
        if self.mechanism == 'v1':
            self.root = V1
        else:
            self.root = v2_root()
            if 'io' not in _read(self.root / 'cgroup.subtree_control').split():
                (self.root / 'cgroup.subtree_control').write_text('+io\n')
                self.enabled_io = True
        self.path = self.root / ('%s-%s' % (prefix, uuid.uuid4().hex[:8]))
        self.path.mkdir()

    def limit(self, majmin, wbps=None, riops=None):
        """Limit writes (bytes/s) and/or reads (IOs/s) of device `majmin`; 0 lifts a limit."""
        if self.mechanism == 'v1':
            for name, value in (('blkio.throttle.write_bps_device', wbps), ('blkio.throttle.read_iops_device', riops)):
                if value is not None:
                    (self.path / name).write_text('%s %d\n' % (majmin, value))
        else:
            parts = ['%s=%s' % (key, value or 'max') for key, value in (('wbps', wbps), ('riops', riops))
                     if value is not None]
            (self.path / 'io.max').write_text('%s %s\n' % (majmin, ' '.join(parts)))

    def io_bytes(self, majmin):
        """(read, written) bytes the cgroup's processes did to device `majmin`, from the cgroup's own
        statistics: proof that I/O went through the throttle."""
        if self.mechanism == 'v1':
            read = written = 0
            for line in _read(self.path / 'blkio.throttle.io_service_bytes').splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[0] == majmin:
                    read += int(parts[2]) if parts[1] == 'Read' else 0
                    written += int(parts[2]) if parts[1] == 'Write' else 0
            return read, written
        for line in _read(self.path / 'io.stat').splitlines():
            parts = line.split()
            if parts and parts[0] == majmin:
                stat = dict(p.split('=', 1) for p in parts[1:])
                return int(stat.get('rbytes', 0)), int(stat.get('wbytes', 0))
        return 0, 0

    def wrap(self, argv):
        """argv run inside the cgroup (the shell moves itself in, then execs)."""
        return ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.path)] + [str(a) for a in argv]

    def remove(self):
        """The cgroup removed (its processes, if any are left, moved back to the root first)."""
        if self.path.exists():
            for pid in _read(self.path / 'cgroup.procs').split():
                try:
                    (self.root / 'cgroup.procs').write_text(pid + '\n')
                except OSError:
                    pass
            for _i in range(50):  # the processes have exited; the group empties
                try:
                    self.path.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
        if self.enabled_io and not [d for d in os.listdir(str(self.root)) if (self.root / d / 'io.max').exists()]:
            try:
                (self.root / 'cgroup.subtree_control').write_text('-io\n')
            except OSError:
                pass
        return not self.path.exists()
