# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SQLite backend of the history store (history.py): one local file, the embedded default.

The file is benchlab's own:
- it is opened only directly: a symbolic link in its place is refused, naming its target (it could
  be another application's database; a dangling link's target is never created);
- it carries benchlab's mark, ``PRAGMA application_id`` = APPLICATION_ID; a SQLite database without
  it is refused untouched, unless it is empty or a benchlab history from before the mark (schema
  1 or 2: ``runs`` and ``metrics`` tables), which is upgraded; an empty file is taken only when
  not everyone may read it (0600 as benchlab creates it, or 0660 for a team), else it is another
  program's;
- it is created 0600 (missing parent directories 0700) only when absent; an existing file or
  directory keeps its mode (give a team directory group permissions yourself);
- it lives on a local file system. SQLite's locking is not reliable on network file systems
  (NFS, SMB/CIFS, 9p, sshfs and other FUSE file systems, cluster file systems): the file system
  type comes from statfs(2) (and the mount's type from /proc/self/mountinfo), and anything not
  known to be local is refused with a message naming the PostgreSQL history, which is what a
  shared history is for. On controllers other than Linux the check is not made.

It uses SQLite's rollback journal (no WAL) with a busy timeout and ``BEGIN IMMEDIATE`` writes, so
several writers on one machine wait for each other instead of failing. ``PRAGMA user_version`` is
the schema version.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sqlite3
import stat
import sys

from ansible_collections.benchlab.bench.plugins.module_utils.observe.sysinfo import mount_for, parse_mountinfo
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history_store import (
    PG_HINT, SCHEMA_VERSION, HistoryError, MissingHistory, Store)

BUSY_TIMEOUT_S = 60.0
APPLICATION_ID = 0x626E6368  # 'bnch': benchlab's mark in the SQLite header
_V1_RUN_COLUMNS = frozenset(('run_id', 'label', 'matrix', 'status', 'started', 'finished', 'stored', 'user',
                             'inventory', 'playbook', 'collection_version', 'n_records', 'digest', 'doc'))

# Each version's statements; a file at version v gets every step above v, in one transaction.
MIGRATIONS = (
    (1, ('''CREATE TABLE IF NOT EXISTS runs (
            run_id TEXT PRIMARY KEY,
            label TEXT,
            matrix TEXT,
            status TEXT,
            started TEXT,
            finished TEXT,
            stored TEXT NOT NULL,
            user TEXT,
            inventory TEXT,
            playbook TEXT,
            collection_version TEXT,
            n_records INTEGER NOT NULL,
            digest TEXT NOT NULL,
            doc BLOB NOT NULL)''',
         'CREATE INDEX IF NOT EXISTS runs_label ON runs (label, started)',
         'CREATE INDEX IF NOT EXISTS runs_matrix ON runs (matrix, started)',
         '''CREATE TABLE IF NOT EXISTS metrics (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            record INTEGER NOT NULL,
            host TEXT,
            benchmark TEXT,
            cell TEXT,
            tool TEXT,
            test TEXT,
            started TEXT,
            metric TEXT NOT NULL,
            value REAL,
            unit TEXT,
            better TEXT)''',
         'CREATE INDEX IF NOT EXISTS metrics_run ON metrics (run_id)',
         'CREATE INDEX IF NOT EXISTS metrics_series ON metrics (benchmark, cell, metric)')),
    # who stored the run (the run id's owner)
    (2, ('ALTER TABLE runs ADD COLUMN fingerprint TEXT', 'ALTER TABLE runs ADD COLUMN controller TEXT')),
    # benchlab's mark
    (3, ('PRAGMA application_id = %d' % APPLICATION_ID,)),
)

# statfs(2) f_type of the file systems SQLite's locking works on (linux/magic.h): the allow-list.
LOCAL_FS = {
    0xEF53: 'ext2/ext3/ext4', 0x58465342: 'xfs', 0x9123683E: 'btrfs', 0x01021994: 'tmpfs', 0x2FC12FC1: 'zfs',
    0xF2F52010: 'f2fs', 0x794C7630: 'overlay', 0x52654973: 'reiserfs', 0x3153464A: 'jfs', 0xCA451A4E: 'bcachefs',
    0x3434: 'nilfs2', 0x858458F6: 'ramfs', 0x4D44: 'vfat', 0x2011BAB0: 'exfat', 0x7366746E: 'ntfs3',
    0x5346544E: 'ntfs', 0x482B: 'hfsplus', 0xF15F: 'ecryptfs', 0x15013346: 'udf',
}
FUSE_MAGIC = 0x65735546
# Named in the message (anything else off the allow-list is refused too, by its number).
NETWORK_FS = {
    0x6969: 'nfs', 0x517B: 'smb', 0xFF534D42: 'cifs', 0xFE534D42: 'smb2', 0x01021997: '9p', FUSE_MAGIC: 'fuse',
    0x00C36400: 'ceph', 0x5346414F: 'afs', 0x6B414653: 'afs', 0x73757245: 'coda', 0x564C: 'ncp',
    0x01161970: 'gfs2', 0x7461636F: 'ocfs2', 0x0BD00BD0: 'lustre', 0x47504653: 'gpfs', 0x786F4256: 'vboxsf',
}


class _StatFs(ctypes.Structure):
    # struct statfs on Linux begins with f_type (__fsword_t: a long); the rest is room enough
    _fields_ = [('f_type', ctypes.c_long), ('_rest', ctypes.c_char * 256)]


def statfs_type(path):
    """statfs(2)'s f_type of the file system holding `path` (or its nearest existing parent), or
    None where it cannot be had (not Linux)."""
    if not sys.platform.startswith('linux'):
        return None
    while path and not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    try:
        libc = ctypes.CDLL(ctypes.util.find_library('c') or None, use_errno=True)
        buf = _StatFs()
        if libc.statfs(os.fsencode(path), ctypes.byref(buf)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return buf.f_type & 0xFFFFFFFF


def mount_of(path, mountinfo='/proc/self/mountinfo'):
    """(mount type, mount point) of the mount holding `path` (its real path), or (None, None)."""
    try:
        with open(mountinfo) as f:
            mount = mount_for(os.path.realpath(path), parse_mountinfo(f.read()))
    except OSError:
        return None, None
    return (mount['fstype'], mount['mountpoint']) if mount else (None, None)


def fs_problem(path, magic, mount_type=None, mount_point=None):
    """Why the SQLite history `path` must not live on this file system (statfs f_type `magic`,
    the mount's type and point), or None. Pure: the tests give it any file system."""
    if magic is None:
        return None
    if magic in LOCAL_FS or (magic == FUSE_MAGIC and mount_type == 'fuseblk'):
        return None  # fuseblk: a FUSE driver of a local block device (ntfs-3g, exfat-fuse)
    name = mount_type or NETWORK_FS.get(magic) or 'type %#x' % magic
    kind = 'a network file system' if magic in NETWORK_FS else 'a file system not known to be local'
    return ('history_db %s is on %s (%s%s): SQLite\'s file locking is not reliable there, and a history several '
            'controllers write that way loses or corrupts runs. Keep the SQLite history on a local disk, or share a '
            'PostgreSQL history: %s' % (path, kind, name, (', mounted at %s' % mount_point) if mount_point else '',
                                        PG_HINT))


def check_local_fs(path):
    """HistoryError (fs_problem) when `path` is on a file system SQLite cannot lock reliably."""
    magic = statfs_type(path)
    if magic is None or magic in LOCAL_FS:
        return
    mount_type, point = mount_of(path)
    problem = fs_problem(path, magic, mount_type, point)
    if problem:
        raise HistoryError(problem)


def _link_problem(path):
    try:
        target = os.readlink(path)
    except OSError:
        target = '?'
    return ('history_db %s is a symbolic link (to %s%s): the history file is opened only directly, never through '
            'a link (it could be another application\'s database). Point history_db at the file itself, or remove '
            'the link' % (path, target, '' if os.path.exists(path) else ', which does not exist'))


def _make_parent(path):
    parent = os.path.dirname(path)
    missing = []
    while parent and not os.path.isdir(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass


def _place(path, create):
    """lstat the history file: refuse a link or anything but a regular file; create it (0600,
    never through a link) when absent and `create`. Returns its (st_dev, st_ino)."""
    nofollow = getattr(os, 'O_NOFOLLOW', 0)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        check_local_fs(path)  # also for a history not made yet: the preflight refuses a network file system
        if not create:
            raise MissingHistory('history database %s does not exist (no run has been stored there yet)' % path)
        try:
            _make_parent(path)
            os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | nofollow, 0o600))
        except FileExistsError:
            pass  # another writer made it a moment ago: checked like any existing file below
        except OSError as e:
            raise HistoryError('cannot create the history database %s: %s' % (path, e))
        st = os.lstat(path)
    except OSError as e:
        raise HistoryError('history database %s: %s' % (path, e))
    if stat.S_ISLNK(st.st_mode):
        raise HistoryError(_link_problem(path))
    if not stat.S_ISREG(st.st_mode):
        raise HistoryError('history database %s is not a regular file: it is left alone' % path)
    if st.st_size == 0 and st.st_mode & 0o007:
        # benchlab makes a history 0600 (an administrator may make an empty one 0660 for a team): an
        # empty file anyone may read is another program's (a lock file, a placeholder), which SQLite
        # would turn into a history everyone on the machine can read
        raise HistoryError('history database %s is an empty file anyone may read (mode %04o): benchlab did not make '
                           'it (it creates its history 0600; a team history is 0660): it is left untouched. Point '
                           'history_db at a new file, or remove this one if it is yours'
                           % (path, stat.S_IMODE(st.st_mode)))
    check_local_fs(path)
    return st.st_dev, st.st_ino


def _recognise(conn, path):
    """The schema version of a benchlab history (0: an empty database); HistoryError for any
    other SQLite database."""
    app = conn.execute('PRAGMA application_id').fetchone()[0]
    version = conn.execute('PRAGMA user_version').fetchone()[0]
    tables = set(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall())
    if app == APPLICATION_ID:
        return version
    if app == 0 and version == 0 and not tables:
        return 0
    if app == 0 and version in (1, 2) and {'runs', 'metrics'} <= tables:
        have = set(r[1] for r in conn.execute('PRAGMA table_info(runs)').fetchall())
        if _V1_RUN_COLUMNS <= have:
            return version  # a benchlab history from before the mark
    raise HistoryError('history database %s is a SQLite database that is not a benchlab history (application_id %#x, '
                       'user_version %d, tables: %s): it is left untouched. Point history_db at a file of its own'
                       % (path, app, version, ', '.join(sorted(tables)) or 'none'))


def migrate(conn, version, path):
    """Bring a benchlab history at `version` to SCHEMA_VERSION (one transaction)."""
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:
        raise HistoryError('history database %s has schema version %d; this collection knows up to %d: '
                           'upgrade benchlab.bench' % (path, version, SCHEMA_VERSION))
    conn.execute('BEGIN IMMEDIATE')
    try:
        # Another writer may have upgraded it while we waited for the lock.
        version = _recognise(conn, path)
        for step, statements in MIGRATIONS:
            if step > version:
                have = set(r[1] for r in conn.execute('PRAGMA table_info(runs)').fetchall())
                for statement in statements:
                    if statement.startswith('ALTER TABLE runs ADD COLUMN') and statement.split()[5] in have:
                        continue
                    conn.execute(statement)
        conn.execute('PRAGMA user_version = %d' % SCHEMA_VERSION)
        conn.execute('COMMIT')
    except BaseException:
        conn.execute('ROLLBACK')
        raise


class SqliteStore(Store):
    """The history in one SQLite file (see the module docstring)."""

    backend = 'sqlite'
    errors = (sqlite3.Error,)

    def __init__(self, path, create=True):
        Store.__init__(self, path)
        ident = _place(path, create)
        nofollow = getattr(os, 'O_NOFOLLOW', 0)
        try:
            fd = os.open(path, os.O_RDONLY | nofollow)
        except OSError as e:
            raise HistoryError(_link_problem(path) if os.path.islink(path) else 'history database %s: %s' % (path, e))
        try:
            if (os.fstat(fd).st_dev, os.fstat(fd).st_ino) != ident:
                raise HistoryError('history database %s changed while it was opened: it is left alone' % path)
            self.conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self.conn.execute('PRAGMA busy_timeout = %d' % int(BUSY_TIMEOUT_S * 1000))
            self.conn.execute('PRAGMA foreign_keys = ON')
            # one read transaction: a writer creating the history at this moment is seen not at all
            # or complete with its mark (statements apart could see no mark, then its tables)
            self.conn.execute('BEGIN')
            try:
                version = _recognise(self.conn, path)
            finally:
                self.conn.execute('COMMIT')
            # SQLite opened the path itself: it must still be the file checked above
            after = os.lstat(path)
            if stat.S_ISLNK(after.st_mode) or (after.st_dev, after.st_ino) != ident:
                raise HistoryError('history database %s changed while it was opened: it is left alone' % path)
            migrate(self.conn, version, path)
        except sqlite3.Error as e:
            self.close()
            raise HistoryError('history database %s: %s' % (path, e))
        except BaseException:
            self.close()
            raise
        finally:
            os.close(fd)

    def _begin(self, run_id):
        self.conn.execute('BEGIN IMMEDIATE')

    def _commit(self):
        self.conn.execute('COMMIT')

    def _rollback(self):
        try:
            self.conn.execute('ROLLBACK')
        except sqlite3.Error:
            pass
