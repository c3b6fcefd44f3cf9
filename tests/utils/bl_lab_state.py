# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A snapshot of what a local lab (benchlab.bench.local_lab) with a given prefix leaves on this
machine: containers (lxc-ls), links (ip link), routes (ip route), loop devices (losetup -a),
mounts (findmnt), processes (in the lab's cgroups, or naming the lab) and files. Other work runs
on this machine at the same time, so only what belongs to the prefix is compared."""

from __future__ import annotations

import os
import re
import subprocess


def _lines(argv):
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
    except FileNotFoundError:
        return []
    return proc.stdout.splitlines()


def snapshot(prefix, lab_net='198.1[89]\\.'):
    """Everything of the lab `prefix` that exists now, as a dict of sorted lists."""
    name = re.compile(r'(^|[^a-z0-9])%s(br0|-[a-z0-9]+)' % re.escape(prefix))
    labdir = '/var/lib/benchlab/%s/' % prefix
    lxcdir = '/var/lib/lxc/%s-' % prefix
    state = {
        'lxc-ls': [c for c in _lines(['lxc-ls', '-1']) if c.startswith(prefix + '-')],
        'ip link': [line.split(': ')[1].split('@')[0] for line in _lines(['ip', '-o', 'link', 'show'])
                    if name.search(line.split(': ')[1].split('@')[0] if ': ' in line else '')],
        'ip route': [line for line in _lines(['ip', '-o', 'route', 'show']) if name.search(line)],
        'ip route lab': [line for line in _lines(['ip', '-o', 'route', 'show']) if re.match(lab_net, line)
                         and name.search(line)],
        'losetup -a': [line for line in _lines(['losetup', '-a']) if labdir in line],
        'findmnt': [line for line in _lines(['findmnt', '-rn', '-o', 'TARGET,SOURCE'])
                    if line.startswith(lxcdir) or labdir in line],
        'processes': sorted(_lab_processes(prefix)),
        'files': sorted(p for p in ('/var/lib/benchlab/%s' % prefix, '/var/lib/benchlab/lab-%s.json' % prefix)
                        if os.path.exists(p))
        + sorted('/var/lib/lxc/' + d for d in _listdir('/var/lib/lxc') if d.startswith(prefix + '-')),
    }
    return {k: sorted(v) for k, v in state.items()}


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def _lab_processes(prefix):
    own = re.compile(r'lxc\.(payload|monitor)\.%s-|/lxc/%s-' % (re.escape(prefix), re.escape(prefix)))
    out = []
    for pid in _listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open('/proc/%s/cgroup' % pid) as f:
                cgroup = f.read()
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                cmd = f.read().replace(b'\0', b' ').decode('utf-8', 'replace').strip()
        except OSError:
            continue
        if own.search(cgroup) or re.search(r'lxc-start .*%s-' % re.escape(prefix), cmd):
            out.append('%s %s' % (pid, cmd))
    return out


def lab_is_gone(prefix):
    """The lab-related entries of a snapshot, empty when nothing of the lab is left."""
    return {k: v for k, v in snapshot(prefix).items() if v}
