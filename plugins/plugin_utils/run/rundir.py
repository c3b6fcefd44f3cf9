# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run directory: results.jsonl appended as records arrive, results.json and report.md at the end.

Nothing is lost, whatever the disk does: the directory is checked for writability and free space
before any host is touched (check_output_dir), every append writes the whole line (os.write may
write less than asked) and fsyncs it, files replaced by rename are fsynced (the file, then the
directory) and a results.jsonl whose last line was cut short by a crash is repaired before the
next append (repair_jsonl), keeping every complete record and saying what it dropped.

One play at a time writes a run: the report callback holds RunLock (an flock on the run
directory's .benchlab-run.lock, naming the holder) for the play's lifetime, so a second play with
the same run id is refused before any host is touched (RunInUse); a finished or killed play holds
nothing (the kernel drops the lock with the process), so its run can be resumed."""

from __future__ import annotations

import datetime
import errno
import fcntl
import gzip
import json
import os
import socket
import re
import secrets
import tempfile

# A run id is one path component: no separators, no '..', nothing a shell or a URL would mangle.
RUN_ID_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$')


# Free space the output directory needs at the start of a run: the reports of a large run are
# tens of MB, results.jsonl grows with every record.
MIN_FREE_BYTES = 64 * 1024 * 1024


class OutputDirError(Exception):
    """An output directory (or the history database's directory) that cannot take the run's files."""


class RunInUse(OutputDirError):
    """A run id that a running play holds (its run directory's lock)."""


LOCK_NAME = '.benchlab-run.lock'


def write_all(fd, data):
    """Write every byte of `data` to fd: os.write may write less than asked (a full disk, a signal,
    a pipe); an error raises OSError instead of a silently short file."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:  # never seen from a regular file, but a loop must not spin on it
            raise OSError(errno.EIO, 'short write (0 bytes written)')
        view = view[n:]


def fsync_dir(path):
    """fsync a directory, so a rename or a new file in it survives a crash."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a directory; the data itself is synced
        pass
    finally:
        os.close(fd)


def _existing_parent(path):
    path = os.path.abspath(path)
    while not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def check_output_dir(path, what='output directory', min_free=MIN_FREE_BYTES, setting='BENCHLAB_REPORT_DIR'):
    """Raise OutputDirError unless `path` (created later if missing) can take files: the directory
    or its nearest existing parent must let us create, write, fsync and remove a file (a read-only
    mount, a full disk or a missing permission all fail here, for root too), and hold `min_free`
    bytes. Creates nothing it leaves behind."""
    path = os.path.abspath(path)
    probe_dir = _existing_parent(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise OutputDirError('%s %s is not a directory' % (what, path))
    fix = 'choose another one (%s) or make it writable' % setting
    try:
        fd, probe = tempfile.mkstemp(prefix='.benchlab-write-probe-', dir=probe_dir)
    except OSError as e:
        raise OutputDirError('%s %s is not writable (%s in %s): %s' % (what, path, e.strerror or e, probe_dir, fix))
    try:
        write_all(fd, b'benchlab\n')
        os.fsync(fd)
    except OSError as e:
        raise OutputDirError('%s %s cannot take data (%s): %s' % (what, path, e.strerror or e, fix))
    finally:
        os.close(fd)
        try:
            os.unlink(probe)
        except OSError:
            pass
    st = os.statvfs(probe_dir)
    free = st.f_bavail * st.f_frsize
    if free < min_free:
        raise OutputDirError('%s %s: only %d MiB free on its file system (%s), at least %d MiB needed: free some '
                             'space or %s' % (what, path, free // 2 ** 20, probe_dir, min_free // 2 ** 20, fix))
    return dict(path=path, checked=probe_dir, free_bytes=free)


def read_jsonl(path, numbered=False, offset=0):
    """(records, problems) of a JSON-lines file (from byte `offset`, the start of a line): every line
    that is a JSON object is a record; a line that is not JSON, or JSON but not an object, is skipped
    and named (file and line number, counted from `offset`) in `problems`. A missing file is ([], []).
    With `numbered`, records are (line number, record)."""
    records, problems = [], []
    if not os.path.isfile(path):
        return records, problems
    with open(path, 'rb') as f:
        f.seek(offset)
        data = f.read()
    lines = data.split(b'\n')
    last = len(lines) - 1
    for i, raw in enumerate(lines):
        if i == last and raw == b'':
            break
        if not raw.strip():
            problems.append('%s line %d: empty line, skipped' % (path, i + 1))
            continue
        try:
            obj = json.loads(raw.decode('utf-8'))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            what = 'an incomplete last line' if i == last else 'not valid JSON'
            problems.append('%s line %d: %s (%d bytes), skipped: %s' % (path, i + 1, what, len(raw), e))
            continue
        if not isinstance(obj, dict):
            problems.append('%s line %d: JSON but not an object (%s), skipped' % (path, i + 1, type(obj).__name__))
            continue
        records.append((i + 1, obj) if numbered else obj)
    return records, problems


def repair_jsonl(path):
    """Make a JSON-lines file end with a whole line before anything is appended to it.

    A last line without its newline (the machine died while writing it) is completed when it is a
    whole JSON object, otherwise cut off. Returns None when the file was fine (or missing), else a
    message naming the file and what was dropped or completed. Complete lines are never touched."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return None
        os.lseek(fd, size - 1, os.SEEK_SET)
        if os.read(fd, 1) == b'\n':
            return None
        # find the start of the last line: read backwards in blocks
        pos, tail = size, b''
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            os.lseek(fd, pos, os.SEEK_SET)
            tail = os.read(fd, step) + tail
            cut = tail.rfind(b'\n')
            if cut >= 0:
                start = pos + cut + 1
                break
        else:
            start = 0
        os.lseek(fd, start, os.SEEK_SET)
        partial = os.read(fd, size - start)
        try:
            whole = isinstance(json.loads(partial.decode('utf-8')), dict)
        except (ValueError, UnicodeDecodeError, RecursionError):
            whole = False
        if whole:
            os.lseek(fd, size, os.SEEK_SET)
            write_all(fd, b'\n')
            os.fsync(fd)
            return '%s: the last record had no newline; completed it (%d bytes kept)' % (path, len(partial))
        os.ftruncate(fd, start)
        os.fsync(fd)
        return ('%s: dropped a partial last line of %d bytes (a write cut short by a crash); %s' % (
            path, len(partial), 'every complete line before it is kept' if start else 'there was no complete line'))
    finally:
        os.close(fd)


# The run the report callback (benchlab.bench.report) writes, as the rest of the playbook sees it: the
# callback sets it in the controller's main process (run_id, base, path, preflight_error, progress,
# clock, total_runs, requested_run_id); every task's worker is forked from that process and sees it
# as it was when its task started. The lookup benchlab.bench.run_state (no term) gives it to the play
# as data; benchlab.bench.run_benchmark stores each record in its results.jsonl the moment its run
# ends. Empty without the callback.
CURRENT_RUN = {}


def set_current_run(**values):
    CURRENT_RUN.update(values)


def current_run():
    """The report callback's run (a copy), or {} without the callback."""
    return dict(CURRENT_RUN)


def new_run_id(now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime('%Y%m%dT%H%M%SZ') + '-' + secrets.token_hex(3)


OBSERVED_DIR = 'observed'
SERIES_ID_RE = re.compile(r'[0-9a-f]{12}')
MAX_SERIES_BYTES = 32 * 1024 * 1024


class RunDir(object):
    """One run's directory, created (0700) on first use: the one writer of every file the controller
    writes (run reports, comparisons, trends, exported bundles).

    Never through a symbolic link, never outside the directory: the directory is opened with
    O_NOFOLLOW (a link in its place is an OutputDirError naming its target) and every file is
    written relative to that open directory as a new temporary file (O_EXCL, O_NOFOLLOW), then
    renamed into place (a link named like the file is replaced, never followed). `fresh` (an export):
    the directory must be one this writer creates, or an empty one, and no file is ever replaced
    (a file that appeared meanwhile is an OutputDirError, the new one left under its temporary
    name)."""

    def __init__(self, base, run_id, fresh=False):
        if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id) or '..' in run_id:
            raise ValueError('run_id %r: use letters, digits, ".", "_" and "-" only (one directory name, at most 128 '
                             'characters, no "..")' % (run_id,))
        self.base = base
        self.run_id = run_id
        self.path = os.path.join(base, run_id)
        self.fresh = fresh
        self._created = False

    def ensure(self):
        # made again when something removed it during the run: results.json then still holds
        # every record the callback kept
        if not self._created or not os.path.isdir(self.path):
            # every directory made here is private, the report base too (makedirs applies `mode`
            # to the last one only); an existing base keeps its mode (a team share, say)
            os.makedirs(self.base, mode=0o700, exist_ok=True)
            try:
                os.mkdir(self.path, 0o700)
            except FileExistsError:
                os.close(self._open_dir(self.path))
                if self.fresh and not self._created and os.listdir(self.path):
                    raise OutputDirError('%s exists and is not empty: an export writes only into a directory it '
                                         'creates or an empty one, never over files (choose another export_dir)'
                                         % self.path)
            self._created = True
        return self.path

    @staticmethod
    def _open_dir(path):
        """An O_NOFOLLOW descriptor of a directory; OutputDirError for a link or anything else."""
        try:
            return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, 'O_CLOEXEC', 0))
        except OSError as e:
            if os.path.islink(path):
                raise OutputDirError('%s is a symbolic link (to %s): benchlab writes only into a directory itself, '
                                     'never through a link; remove the link or choose another directory'
                                     % (path, os.readlink(path)))
            raise OutputDirError('%s is not a directory benchlab can write into: %s' % (path, e.strerror or e))

    def _write_file(self, directory, name, data):
        """Write `data` as `name` in `directory` (see the class): a new temporary file written whole
        and fsynced, renamed into place, the directory fsynced. Returns the path."""
        dfd = self._open_dir(directory)
        try:
            tmp = '.%s.%s.tmp' % (name, secrets.token_hex(4))
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, 'O_CLOEXEC', 0),
                         0o600, dir_fd=dfd)
            written = False
            try:
                write_all(fd, data)
                os.fsync(fd)
                written = True
            finally:
                os.close(fd)
                if not written:   # a full disk, an I/O error: no half-written temporary file is left
                    try:
                        os.unlink(tmp, dir_fd=dfd)
                    except OSError:
                        pass
            if self.fresh:
                try:
                    os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
                except FileExistsError:
                    raise OutputDirError('%s appeared while it was being written: left alone (the new one is %s)'
                                         % (os.path.join(directory, name), os.path.join(directory, tmp)))
                os.unlink(tmp, dir_fd=dfd)
            else:
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            os.fsync(dfd)
        finally:
            os.close(dfd)
        return os.path.join(directory, name)

    def file(self, name):
        return os.path.join(self.ensure(), name)

    def repair_jsonl(self, name):
        """repair_jsonl() of a file of this run directory (None when fine or missing)."""
        return repair_jsonl(os.path.join(self.path, name))

    def append_jsonl(self, name, obj, still=None):
        """Append one whole JSON line and fsync it at once: a crash later loses nothing. The report
        callback and the run path's workers (benchlab.bench.run_benchmark, storing each record the
        moment its run ends) append to the same results.jsonl: under an exclusive lock, a last line
        cut short by a crash is repaired first (repair_jsonl). Returns the repair's message or None;
        False when `still()`, asked once the lock is held, says the line is no longer wanted (the
        report callback holds the lock while it writes an interrupted run's report: a worker that
        waited for it finds its controller gone)."""
        path = self.file(name)
        new = not os.path.exists(path)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if still is not None and not still():
                return False
            message = repair_jsonl(path)
            write_all(fd, (json.dumps(obj, sort_keys=True) + '\n').encode('utf-8'))
            os.fsync(fd)
        finally:
            os.close(fd)
        if new:
            fsync_dir(self.path)
        return message

    def hold(self, name):
        """Hold the exclusive lock of a file of this run directory until this process ends (the report
        callback, writing an interrupted run's report: no worker appends after it read the file)."""
        path = self.file(name)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def write_text(self, name, text):
        """Write a file atomically (a crash leaves the old file or the new one, never half), never
        through a link (see the class)."""
        return self._write_file(self.ensure(), name, text.encode('utf-8'))

    def write_json(self, name, obj):
        return self.write_text(name, json.dumps(obj, indent=2, sort_keys=True) + '\n')

    def write_series(self, series_id, series):
        """A run's observed time series (module_utils/observe/observe.py series) as observed/<id>.json.gz,
        written whole (temp file, fsync, rename). The id is the record's observed.series: 12 hex
        digits, anything else is refused (ValueError), so a target cannot name a path."""
        if not isinstance(series_id, str) or not SERIES_ID_RE.fullmatch(series_id):
            raise ValueError('observed series id %r: expected 12 hex digits' % (series_id,))
        directory = os.path.join(self.ensure(), OBSERVED_DIR)
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass  # _write_file refuses it when it is not a directory of its own
        data = gzip.compress(json.dumps(series, sort_keys=True, separators=(',', ':')).encode('utf-8'))
        return self._write_file(directory, '%s.json.gz' % series_id, data)

    def read_series(self, series_id, limit=MAX_SERIES_BYTES):
        """The series stored by write_series, or None (missing, unreadable, too large)."""
        if not isinstance(series_id, str) or not SERIES_ID_RE.fullmatch(series_id):
            return None
        path = os.path.join(self.path, OBSERVED_DIR, '%s.json.gz' % series_id)
        try:
            with gzip.open(path, 'rb') as f:
                data = f.read(limit + 1)
            if len(data) > limit:
                return None
            return json.loads(data.decode('utf-8'))
        except (OSError, IOError, ValueError, EOFError):
            return None

    def link_latest(self):
        link = os.path.join(self.base, 'latest')
        try:
            if os.path.islink(link):
                os.unlink(link)
            if not os.path.exists(link):
                os.symlink(self.run_id, link)
        except OSError:
            pass


def _holder_text(holder):
    return 'pid %s on %s, since %s' % (holder.get('pid', '?'), holder.get('host', '?'), holder.get('since', '?'))


def _read_holder(fd):
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        doc = json.loads(os.read(fd, 4096).decode('utf-8'))
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError, UnicodeDecodeError):
        return {}


def in_use_message(run_id, holder):
    return ('run id %s is in use by a running play (%s): two plays must not write one run; wait until it ends (then '
            'this run id resumes it), or choose another run id (BENCHLAB_RUN_ID)' % (run_id, _holder_text(holder)))


def lock_holder(path, own_pids=None):
    """The holder ({pid, host, since}) of the lock of the run directory `path` while a play other than
    `own_pids` (default: this process and its parent, an Ansible worker's ansible-playbook) holds
    it; None when nobody (or we) hold it. Creates nothing."""
    own = set(own_pids if own_pids is not None else (os.getpid(), os.getppid()))
    try:
        fd = os.open(os.path.join(path, LOCK_NAME), os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_CLOEXEC', 0))
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return None
            holder = _read_holder(fd)
            return None if holder.get('pid') in own else holder
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class RunLock(object):
    """The lock of one run directory, held by the play that writes the run (the report callback, from
    the start of the play to its end). acquire() raises RunInUse naming the play that holds it;
    release() removes the lock file (and the run directory and report base when it made them and
    they are empty: a play that wrote nothing leaves nothing)."""

    def __init__(self, rundir):
        self.rundir = rundir
        self.fd = None
        self._made = []

    @property
    def held(self):
        return self.fd is not None

    def acquire(self):
        """Hold the lock; RunInUse when a running play holds it, OutputDirError when the lock file
        cannot be made (a symlink in its place, a run directory that takes no files)."""
        if self.fd is not None:
            return
        try:
            self._acquire()
        except OSError as e:
            raise OutputDirError('run directory %s: cannot take its lock %s (%s): remove what is in the way or '
                                 'choose another run id (BENCHLAB_RUN_ID)' % (
                                     self.rundir.path, LOCK_NAME, e.strerror or e))

    def _acquire(self):
        made = [p for p in (self.rundir.base, self.rundir.path) if not os.path.isdir(p)]
        self.rundir.ensure()
        path = os.path.join(self.rundir.path, LOCK_NAME)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_CLOEXEC', 0)
        while True:
            fd = os.open(path, flags, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                holder = _read_holder(fd)
                os.close(fd)
                if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise RunInUse(in_use_message(self.rundir.run_id, holder))
                raise
            st = os.fstat(fd)
            try:
                now = os.lstat(path)
            except OSError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                break
            os.close(fd)   # its holder removed it while we waited for it: take the new one
        holder = dict(pid=os.getpid(), host=socket.gethostname(),
                      since=datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'))
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        write_all(fd, (json.dumps(holder, sort_keys=True) + '\n').encode('utf-8'))
        self.fd, self._made = fd, made

    def release(self):
        """Remove the lock file while holding it, then let it go (a play that opened the old file in
        between sees it gone and takes a new one)."""
        if self.fd is None:
            return
        try:
            os.unlink(os.path.join(self.rundir.path, LOCK_NAME))
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None
        for path in reversed(self._made):   # the run directory, then the base, when empty
            try:
                os.rmdir(path)
            except OSError:
                break
        self._made = []
