# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""Owned work directories (docs/architecture.md, "Safety").

Every benchmark work directory is ``<path>/benchlab-<tool>-<random>/`` and holds the marker
``.benchlab-owner.json`` (0600, written right after mkdtemp):
``{"benchlab": 1, "run_id", "run_key", "tool", "created", "pid", "pgid", "pid_start", "keep"}``.
While the tool runs, ``pgid``/``pid_start`` name its process group (the tool runs in a session
of its own) and the start time of its leader (``/proc/<pid>/stat`` field 22), so that a later
cleanup stops exactly that group, and only while that very process still exists.

Cleanup (``cleanup_owned``) removes only directories directly under a path whose marker is a
regular file owned by the cleaning user and names this run's id and key and ``keep: false``;
anything else is left alone and reported. Nothing is ever selected by a name pattern.
"""

import errno
import json
import os
import shutil
import signal
import stat
import tempfile
import time

from ansible_collections.benchlab.bench.plugins.module_utils.run.units import format_bytes

MARKER = '.benchlab-owner.json'
PREFIX = 'benchlab-'
MARKER_VERSION = 1

# Where a work directory may be made: anywhere but the operating system's own trees (and / itself),
# judged after symlinks are resolved. /dev/shm, the tmpfs for data, is the one place under them allowed.
SYSTEM_TREES = ('/etc', '/usr', '/boot', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/proc', '/sys',
                '/dev')
ALLOWED_UNDER_SYSTEM = ('/dev/shm',)
_TREE_NOTES = {
    '/proc': 'the kernel\'s process and settings interface, not storage',
    '/sys': 'the kernel\'s device and settings interface, not storage',
    '/dev': 'device nodes, not storage for files; give a block device itself as the path of dd or fio',
}


def _utc_now():
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())


def proc_start_time(pid, proc='/proc'):
    """The start time of process `pid` (clock ticks after boot, /proc/<pid>/stat field 22), or None."""
    try:
        with open(os.path.join(proc, str(int(pid)), 'stat')) as f:
            data = f.read()
        return int(data.rsplit(')', 1)[1].split()[19])
    except (OSError, IOError, ValueError, IndexError, TypeError):
        return None


def _live_start(pid, proc='/proc'):
    """The start time of `pid` while it runs; None when it is gone or a zombie (nothing to stop)."""
    try:
        with open(os.path.join(proc, str(int(pid)), 'stat')) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return None if fields[0] in ('Z', 'X') else int(fields[19])
    except (OSError, IOError, ValueError, IndexError, TypeError):
        return None


def _proc_stat(pid, proc='/proc'):
    """(ppid, pgid, start) of `pid`, or None when it is gone."""
    try:
        with open(os.path.join(proc, str(pid), 'stat')) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return int(fields[1]), int(fields[2]), int(fields[19])
    except (OSError, IOError, ValueError, IndexError):
        return None


def _write_marker(workdir, doc):
    """Write the marker atomically (temp file + rename), 0600, fsynced."""
    fd, tmp = tempfile.mkstemp(prefix='.benchlab-owner-', dir=workdir)
    try:
        os.fchmod(fd, 0o600)
        data = json.dumps(doc, sort_keys=True).encode('utf-8')
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, os.path.join(workdir, MARKER))


def _under(path, tree):
    return path == tree or path.startswith(tree.rstrip('/') + '/')


def system_directory_problem(path, resolve=True, device_paths=False):
    """None, or why `path` is no place for a work directory: it is / itself or lies in one of the
    operating system's trees (SYSTEM_TREES: /etc, /usr, /boot, /bin, /sbin, /lib*, /proc, /sys, /dev;
    /dev/shm excepted), after resolving symlinks (`resolve`; the controller, which cannot see the
    target, judges the name) and by its name too (a link under /proc such as /proc/self/cwd leads
    wherever the process runs). With `device_paths`, a name under /dev is left alone (it may be a
    block device, which the device guard judges); /dev itself is not."""
    named = os.path.normpath(path)
    real = os.path.realpath(path) if resolve else named
    shown = 'path %s' % path + (' resolves to %s, which' % real if real != named else '')
    # the place it resolves to, and the name itself: /proc/self/cwd resolves to wherever the module
    # runs, and the record would name the link
    for where, what in ((real, shown), (named, 'path %s' % path)):
        problem = _tree_problem(where, what, device_paths)
        if problem:
            return problem
    return None


def _tree_problem(real, shown, device_paths):
    if real == '/':
        return ('%s is the root directory /: benchlab makes its work directory only in a directory on the '
                'storage you measure (such as /srv/bench or /var/tmp), never in / itself' % shown)
    if any(_under(real, ok) for ok in ALLOWED_UNDER_SYSTEM):
        return None
    if device_paths and real.startswith('/dev/'):
        return None
    for tree in SYSTEM_TREES:
        if _under(real, tree):
            note = _TREE_NOTES.get(tree, 'part of the operating system')
            return ('%s is in %s (%s): benchlab makes no work directory in /, %s, nor under them (except %s): '
                    'give a directory on the storage you want to measure'
                    % (shown, tree, note, ', '.join(SYSTEM_TREES), ', '.join(ALLOWED_UNDER_SYSTEM)))
    return None


def create_workdir(parent, tool, run_id=None, run_key=None, keep=False):
    """Create ``<parent>/benchlab-<tool>-<random>/`` (0700) and its marker; return its path."""
    if not os.path.isdir(parent):
        raise OSError(errno.ENOENT, 'benchmark directory %s does not exist or is not a directory' % parent)
    workdir = tempfile.mkdtemp(prefix='%s%s-' % (PREFIX, tool), dir=parent)
    doc = {'benchlab': MARKER_VERSION, 'run_id': run_id, 'run_key': run_key, 'tool': tool, 'created': _utc_now(),
           'pid': os.getpid(), 'pgid': None, 'pid_start': None, 'keep': bool(keep)}
    try:
        _write_marker(workdir, doc)
    except BaseException:   # an I/O error, or a stop signal during its fsync: no directory without its marker
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    return workdir


def read_marker(workdir, uid=None):
    """(marker dict, None), or (None, the reason there is no usable marker).

    A marker counts only when it is a regular file (not a symlink) owned by `uid` (default: the
    effective uid), holding a JSON object with ``benchlab: 1``."""
    uid = os.geteuid() if uid is None else uid
    path = os.path.join(workdir, MARKER)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0))
    except OSError as e:
        return None, 'no marker (%s)' % (e.strerror or e)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, 'marker is not a regular file'
        if st.st_uid != uid:
            return None, 'marker is owned by uid %d, not %d' % (st.st_uid, uid)
        with os.fdopen(os.dup(fd), 'rb') as f:
            raw = f.read(65536)
    finally:
        os.close(fd)
    try:
        doc = json.loads(raw.decode('utf-8'))
    except ValueError:
        return None, 'marker is not valid JSON'
    if not isinstance(doc, dict) or doc.get('benchlab') != MARKER_VERSION:
        return None, 'marker is not a benchlab marker'
    return doc, None


def update_marker(workdir, **fields):
    doc, reason = read_marker(workdir)
    if doc is None:
        raise OSError(errno.EINVAL, 'cannot update the marker of %s: %s' % (workdir, reason))
    doc.update(fields)
    _write_marker(workdir, doc)
    return doc


def marker_matches(doc, run_id, run_key):
    return (isinstance(doc, dict) and run_id is not None and doc.get('run_id') == run_id
            and doc.get('run_key') == run_key)


def recorded_processes(pgid, pid_start, proc='/proc'):
    """[(pid, start)] of the processes a run recorded: the group `pgid` while its leader (pid
    `pgid`) still has the start time `pid_start`, and the leader's descendants (fio puts each job
    in a session of its own). A leader with another start time means the pid was reused: nothing
    is returned. Pure over /proc; never matches command lines, and never a working directory (a
    user's shell sitting in the work directory is not the run's)."""
    if not pgid or pid_start is None:
        return []
    pgid, pid_start = int(pgid), int(pid_start)
    table = {}
    for entry in os.listdir(proc):
        if entry.isdigit():
            st = _proc_stat(entry, proc)
            if st:
                table[int(entry)] = st
    leader = table.get(pgid)
    if leader is not None and leader[2] != pid_start:
        return []
    found = {}
    for pid, (ppid, group, start) in table.items():
        if group == pgid and start >= pid_start:
            found[pid] = start
    if leader is not None:
        children = {}
        for pid, (ppid, _group, start) in table.items():
            children.setdefault(ppid, []).append(pid)
        todo = [pgid]
        while todo:
            for child in children.get(todo.pop(), []):
                if child not in found and table[child][2] >= pid_start:
                    found[child] = table[child][2]
                    todo.append(child)
    return sorted(found.items())


def _signal_all(procs, sig, proc='/proc'):
    sent = []
    for pid, start in procs:
        if _live_start(pid, proc) != start:
            continue  # gone, or the pid now names another process
        try:
            os.kill(pid, sig)
            sent.append(pid)
        except OSError:
            pass
    return sent


def stop_recorded(pgid, pid_start, grace=3.0, proc='/proc'):
    """SIGTERM the recorded processes, wait up to `grace` seconds, SIGKILL the rest. The processes
    are listed once before the first signal, so a worker whose parent dies first is still stopped.
    Returns [{pid, signal}] of what was signalled."""
    procs = recorded_processes(pgid, pid_start, proc)
    if not procs:
        return []
    done = dict((pid, 'SIGTERM') for pid in _signal_all(procs, signal.SIGTERM, proc))
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not any(_live_start(pid, proc) == start for pid, start in procs):
            break
        time.sleep(0.1)
    left = [(pid, start) for pid, start in procs if _live_start(pid, proc) == start]
    # processes the group started meanwhile are ours too
    left += [p for p in recorded_processes(pgid, pid_start, proc) if p not in left]
    for pid in _signal_all(left, signal.SIGKILL, proc):
        done[pid] = 'SIGKILL'
    for _attempt in range(50):
        if not any(_live_start(pid, proc) == start for pid, start in left):
            break
        time.sleep(0.1)
    return [{'pid': pid, 'signal': sig} for pid, sig in sorted(done.items())]


def remove_tree(path):
    if path and os.path.lexists(path):
        shutil.rmtree(path, ignore_errors=True)


def cleanup_owned(paths, run_id, run_key, grace=3.0, check=False, proc='/proc'):
    """Stop the recorded processes of, and remove, the work directories directly under each of
    `paths` whose marker names `run_id` and `run_key` and keep false. Returns
    {removed: [dirs], stopped: [{dir, pid, signal}], kept: [{path, reason}]}. With `check`,
    nothing is signalled or removed: removed/stopped say what would be."""
    out = {'removed': [], 'stopped': [], 'kept': []}
    for parent in paths:
        if not os.path.isdir(parent) or os.path.islink(parent):
            out['kept'].append({'path': parent, 'reason': 'not a directory: nothing to clean'})
            continue
        for name in sorted(os.listdir(parent)):
            full = os.path.join(parent, name)
            if not name.startswith(PREFIX):
                continue  # not even a candidate; not reported
            if os.path.islink(full) or not os.path.isdir(full):
                out['kept'].append({'path': full, 'reason': 'not a directory'})
                continue
            doc, reason = read_marker(full)
            if doc is None:
                out['kept'].append({'path': full, 'reason': reason})
                continue
            if not marker_matches(doc, run_id, run_key):
                out['kept'].append({'path': full, 'reason': 'marker of another run (run_id %r, run_key %r)'
                                    % (doc.get('run_id'), doc.get('run_key'))})
                continue
            if doc.get('keep'):
                out['kept'].append({'path': full, 'reason': 'marker says keep: true'})
                continue
            if check:
                procs = recorded_processes(doc.get('pgid'), doc.get('pid_start'), proc)
                out['stopped'].extend({'dir': full, 'pid': pid, 'signal': None} for pid, _s in procs)
            else:
                for s in stop_recorded(doc.get('pgid'), doc.get('pid_start'), grace, proc):
                    out['stopped'].append(dict(s, dir=full))
                remove_tree(full)
            out['removed'].append(full)
    return out


def free_space_problem(needs, writer, statvfs=os.statvfs, stat=os.stat):
    """None, or a message naming the directory, the bytes needed and the bytes available, for the
    first filesystem that cannot hold what `needs` ([(directory, bytes)]) writes into it.
    Directories on the same filesystem add up. `writer` names the tool in the message."""
    per_fs = []
    for directory, nbytes in needs:
        dev = stat(directory).st_dev
        for entry in per_fs:
            if entry[0] == dev:
                entry[2] += nbytes
                break
        else:
            per_fs.append([dev, directory, nbytes])
    for _dev, directory, nbytes in per_fs:
        st = statvfs(directory)
        avail = st.f_bavail * st.f_frsize
        if nbytes > avail:
            return ('not enough free space in %s: %s would write %d bytes (%s) there and only %d bytes (%s) '
                    'are available: set a smaller size, or free space' % (
                        directory, writer, nbytes, format_bytes(nbytes), avail, format_bytes(avail)))
    return None
