# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""Process and socket state read from Linux /proc: a process's state and command line, and
whether it owns a listening socket on a port (/proc/<pid>/fd against /proc/net/{tcp,udp}[6]).
"""

import os
import re


def _socket_inodes(pid):
    inodes = set()
    fd_dir = '/proc/%d/fd' % pid
    try:
        names = os.listdir(fd_dir)
    except OSError:
        return inodes
    for name in names:
        try:
            link = os.readlink(os.path.join(fd_dir, name))
        except OSError:
            continue
        m = re.match(r'^socket:\[(\d+)\]$', link)
        if m:
            inodes.add(m.group(1))
    return inodes


def _proc_net_sockets(kind):
    """(local port, state, inode) of every socket in /proc/net/<kind> and <kind>6."""
    out = []
    for path in ('/proc/net/%s' % kind, '/proc/net/%s6' % kind):
        try:
            with open(path) as f:
                rows = f.read().splitlines()[1:]
        except (IOError, OSError):
            continue
        for row in rows:
            f = row.split()
            if len(f) < 10:
                continue
            out.append((int(f[1].rsplit(':', 1)[1], 16), f[3], f[9]))
    return out


def proc_state(pid):
    """The one-letter state of process `pid` (R, S, Z, ...) or None when it does not exist."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            data = f.read()
    except (IOError, OSError):
        return None
    return data.rsplit(')', 1)[1].split()[0]


def proc_cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return [a.decode('utf-8', 'replace') for a in f.read().split(b'\0') if a]
    except (IOError, OSError):
        return []


def is_listening(pid, port, udp_socket=False):
    """True when process `pid` owns a socket bound to `port` (a TCP listener, or a UDP socket)."""
    inodes = _socket_inodes(pid)
    if not inodes:
        return False
    for lport, state, inode in _proc_net_sockets('udp' if udp_socket else 'tcp'):
        if lport == int(port) and inode in inodes and (udp_socket or state == '0A'):
            return True
    return False
