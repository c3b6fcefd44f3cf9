# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The history store: every finished run's results document in one SQLite file (stdlib sqlite3).

Location: the callback option ``history_db`` (env ``BENCHLAB_HISTORY_DB``, ini
``[callback_benchlab_report] history_db``); by default ``$XDG_DATA_HOME/benchlab/history.sqlite``
(``~/.local/share/benchlab/history.sqlite``). ``off`` (or ``none``, ``false``, ``no``) turns the
history off.

A run is found by a *reference*: its run id, a unique prefix of it, ``latest``, or a *label*.
``latest`` is the newest stored run whatever its status (a run that was interrupted or failed is
the latest run, never skipped for an older complete one). A label is either the run label the user
gave (callback option ``run_label``, env ``BENCHLAB_RUN_LABEL``) or the matrix name; a label stands
for the newest complete run carrying it (the newest of any status when none completed), explicit
run labels before matrix names.

The file may live on a team share written by several people at once: it uses SQLite's rollback
journal (WAL needs shared memory that network file systems do not give) with a busy timeout and
``BEGIN IMMEDIATE`` writes, so concurrent writers wait for each other instead of failing. A new
file is created 0600 and missing parent directories 0700; an existing file or directory keeps its
mode (give a team share group permissions yourself).

Tables: ``runs`` (one row per run: meta columns + the whole results document, zlib-compressed JSON)
and ``metrics`` (one row per record x metric, for SQL dashboards). ``PRAGMA user_version`` is the
schema version.

A run id is owned by the controller that stored it first: every run is stored with a
*fingerprint* of the controller (host name and run directory, see ``controller_fingerprint``).
Storing the same run id again is allowed only from the same controller, and only to extend it (a
resume of that run, or the same run stored again with at least its records); a second controller
reusing a run id, or a new run under an old id, is a HistoryError and the stored run stays as it
was.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import socket
import sqlite3
import zlib

SCHEMA_VERSION = 2
BUSY_TIMEOUT_S = 60.0
OFF = ('off', 'none', 'false', 'no', 'disabled')

_SCHEMA = (
    '''CREATE TABLE IF NOT EXISTS runs (
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
    'CREATE INDEX IF NOT EXISTS metrics_series ON metrics (benchmark, cell, metric)',
)
# Columns added after version 1 (ALTER TABLE on an older file): who stored the run.
_ADDED_COLUMNS = (('fingerprint', 'TEXT'), ('controller', 'TEXT'))


class HistoryError(Exception):
    """A history database that cannot be used, or a run that is not in it; the message says which."""


def default_db_path(environ=None):
    """$XDG_DATA_HOME/benchlab/history.sqlite, ~/.local/share/benchlab/history.sqlite without it."""
    environ = os.environ if environ is None else environ
    base = environ.get('XDG_DATA_HOME') or ''
    if not os.path.isabs(base):  # the XDG spec: a relative value is invalid and ignored
        base = os.path.join(os.path.expanduser('~'), '.local', 'share')
    return os.path.join(base, 'benchlab', 'history.sqlite')


def resolve_db_path(value, environ=None):
    """The database path for an option value: None/'' -> the default, 'off' -> None (no history)."""
    if value is None or str(value).strip() == '':
        return default_db_path(environ)
    value = str(value).strip()
    if value.lower() in OFF:
        return None
    return os.path.abspath(os.path.expanduser(os.path.expandvars(value)))


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


def connect(db_path, create=True):
    """An open connection with the schema in place. create=False: the file must already exist."""
    if not db_path:
        raise HistoryError('no history database: history_db is off')
    if not os.path.exists(db_path):
        if not create:
            raise HistoryError('history database %s does not exist (no run has been stored there yet)' % db_path)
        try:
            _make_parent(db_path)
            os.close(os.open(db_path, os.O_RDWR | os.O_CREAT, 0o600))
        except OSError as e:
            raise HistoryError('cannot create the history database %s: %s' % (db_path, e))
    try:
        conn = sqlite3.connect(db_path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.execute('PRAGMA busy_timeout = %d' % int(BUSY_TIMEOUT_S * 1000))
        conn.execute('PRAGMA foreign_keys = ON')
        _migrate(conn, db_path)
    except sqlite3.DatabaseError as e:
        raise HistoryError('history database %s: %s' % (db_path, e))
    return conn


def _migrate(conn, db_path):
    version = conn.execute('PRAGMA user_version').fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:
        raise HistoryError('history database %s has schema version %d; this collection knows up to %d: '
                           'upgrade benchlab.bench' % (db_path, version, SCHEMA_VERSION))
    conn.execute('BEGIN IMMEDIATE')
    try:
        # Another writer may have created it while we waited for the lock.
        if conn.execute('PRAGMA user_version').fetchone()[0] < SCHEMA_VERSION:
            for stmt in _SCHEMA:
                conn.execute(stmt)
            have = set(r[1] for r in conn.execute('PRAGMA table_info(runs)').fetchall())
            for name, kind in _ADDED_COLUMNS:
                if name not in have:
                    conn.execute('ALTER TABLE runs ADD COLUMN %s %s' % (name, kind))
            conn.execute('PRAGMA user_version = %d' % SCHEMA_VERSION)
        conn.execute('COMMIT')
    except BaseException:
        conn.execute('ROLLBACK')
        raise


def _encode(doc):
    text = json.dumps(doc, sort_keys=True, separators=(',', ':'))
    return hashlib.sha256(text.encode('utf-8')).hexdigest(), zlib.compress(text.encode('utf-8'), 6)


def _metric_rows(run_id, records):
    rows = []
    for i, rec in enumerate(records or []):
        labels = rec.get('labels') or {}
        for name, m in sorted((rec.get('metrics') or {}).items()):
            rows.append((run_id, i, rec.get('host'), labels.get('benchmark') or '%s %s' % (rec.get('tool'), rec.get('test')),
                         labels.get('cell') or rec.get('host'), rec.get('tool'), rec.get('test'), rec.get('started'),
                         name, m.get('value'), m.get('unit'), m.get('better')))
    return rows


def controller_fingerprint(run_dir, host=None):
    """(fingerprint, description) of the controller writing a run: its host name and the run's
    directory. A resume on the same controller has the same fingerprint; another controller (or
    another output directory) reusing the run id has another one."""
    host = host or socket.gethostname()
    description = '%s:%s' % (host, os.path.abspath(run_dir))
    return hashlib.sha256(description.encode('utf-8')).hexdigest()[:32], description


def _owner_problem(row, run_id, fingerprint, extends, n_records, db_path):
    """Why a stored run must not be replaced by this document (None when it may be)."""
    old_fp, old_controller, old_stored, old_n = row
    if not fingerprint or not old_fp:  # a run stored without a fingerprint (schema 1): as before
        return None
    if old_fp != fingerprint:
        return ('run id %s is already in the history %s, stored %s by another controller (%s): it is not replaced. '
                'Give this run its own run id (unset BENCHLAB_RUN_ID, or choose a new one)'
                % (run_id, db_path, old_stored, old_controller or 'unknown'))
    if not extends and n_records < (old_n or 0):
        return ('run id %s is already in the history %s with %d records (stored %s) and this run has %d: a new run '
                'under an old run id does not replace it. Resume it (the same BENCHLAB_RUN_ID with playbooks/bench.yml, '
                'or -e bench_resume=%s) or give this run its own run id' % (
                    run_id, db_path, old_n, old_stored, n_records, run_id))
    return None


def check_run_id(db_path, run_id, fingerprint):
    """Raise HistoryError when `run_id` is stored by another controller (see store_run); nothing
    when it is free, stored by this one, or the database does not exist yet."""
    if not db_path or not os.path.exists(db_path):
        return
    conn = connect(db_path, create=False)
    try:
        row = conn.execute('SELECT fingerprint, controller, stored, n_records FROM runs WHERE run_id = ?',
                           (run_id,)).fetchone()
    except sqlite3.DatabaseError as e:
        raise HistoryError('history database %s: %s' % (db_path, e))
    finally:
        conn.close()
    if row:
        problem = _owner_problem(row, run_id, fingerprint, True, 0, db_path)
        if problem:
            raise HistoryError(problem)


def store_run(db_path, doc, label=None, now=None, fingerprint=None, controller=None, extends=False):
    """Store (or extend) one run's results document; idempotent by run_id.

    `fingerprint`/`controller` name who stores it (controller_fingerprint()). A run id already
    stored under another fingerprint is refused (HistoryError); under the same one it is replaced
    only when `extends` (a resume of it) or the document holds at least the stored records (the
    same run stored again, interrupted then complete). Runs stored without a fingerprint are
    replaced as before.

    Returns 'stored' (new), 'replaced' (the run id was there with another document, e.g. an
    interrupted run stored again) or 'unchanged' (the same document was already there)."""
    run_id = doc.get('run_id')
    if not run_id:
        raise HistoryError('cannot store a run without a run_id')
    digest, blob = _encode(doc)
    stored = (now or datetime.datetime.now(datetime.timezone.utc)).strftime('%Y-%m-%dT%H:%M:%S.%fZ')
    records = doc.get('records') or []
    conn = connect(db_path)
    try:
        conn.execute('BEGIN IMMEDIATE')
        try:
            row = conn.execute('SELECT digest, label, fingerprint, controller, stored, n_records FROM runs '
                               'WHERE run_id = ?', (run_id,)).fetchone()
            if row and row[0] == digest and row[1] == (label or None):
                conn.execute('ROLLBACK')
                return 'unchanged'
            problem = row and _owner_problem(row[2:], run_id, fingerprint, extends, len(records), db_path)
            if problem:
                conn.execute('ROLLBACK')
                raise HistoryError(problem)
            if row:
                conn.execute('DELETE FROM metrics WHERE run_id = ?', (run_id,))
                conn.execute('DELETE FROM runs WHERE run_id = ?', (run_id,))
            conn.execute('INSERT INTO runs (run_id, label, matrix, status, started, finished, stored, user, inventory, '
                         'playbook, collection_version, n_records, digest, doc, fingerprint, controller) '
                         'VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)',
                         (run_id, label or None, doc.get('matrix'), doc.get('status'), doc.get('started'),
                          doc.get('finished'), stored, doc.get('user'), _text(doc.get('inventory')),
                          _text(doc.get('playbook')), doc.get('collection_version'), len(records), digest, blob,
                          fingerprint or None, controller or None))
            conn.executemany('INSERT INTO metrics VALUES (?,?,?,?,?,?,?,?,?,?,?,?)', _metric_rows(run_id, records))
            conn.execute('COMMIT')
        except HistoryError:
            raise
        except BaseException:
            conn.execute('ROLLBACK')
            raise
        return 'replaced' if row else 'stored'
    except sqlite3.DatabaseError as e:
        raise HistoryError('history database %s: cannot store run %s: %s' % (db_path, run_id, e))
    finally:
        conn.close()


def _text(value):
    return None if value is None else str(value)


_LIST_COLUMNS = ('run_id', 'label', 'matrix', 'status', 'started', 'finished', 'stored', 'user', 'inventory',
                 'playbook', 'collection_version', 'n_records')
_NEWEST = 'ORDER BY started DESC, stored DESC, rowid DESC'


def list_runs(db_path):
    """Every stored run, newest first: dicts of the meta columns (no records)."""
    conn = connect(db_path, create=False)
    try:
        rows = conn.execute('SELECT %s FROM runs %s' % (', '.join(_LIST_COLUMNS), _NEWEST)).fetchall()
    except sqlite3.DatabaseError as e:
        raise HistoryError('history database %s: %s' % (db_path, e))
    finally:
        conn.close()
    return [dict(zip(_LIST_COLUMNS, r)) for r in rows]


def _newest(conn, where, args):
    """The newest complete run matching, else the newest of any status."""
    row = conn.execute("SELECT run_id FROM runs WHERE %s AND status = 'complete' %s LIMIT 1" % (where, _NEWEST),
                       args).fetchone()
    if not row:
        row = conn.execute('SELECT run_id FROM runs WHERE %s %s LIMIT 1' % (where, _NEWEST), args).fetchone()
    return row[0] if row else None


def find_run(conn, ref, db_path='history'):
    """The run id a reference stands for (see the module docstring for the order), or HistoryError."""
    ref = str(ref or '').strip()
    if not ref:
        raise HistoryError('an empty run reference: give a run id or a label')
    if conn.execute('SELECT 1 FROM runs WHERE run_id = ?', (ref,)).fetchone():
        return ref
    if ref == 'latest':
        row = conn.execute('SELECT run_id FROM runs %s LIMIT 1' % _NEWEST).fetchone()
        if row:
            return row[0]
    for column in ('label', 'matrix'):
        found = _newest(conn, '%s = ?' % column, (ref,))
        if found:
            return found
    prefix = [r[0] for r in conn.execute("SELECT run_id FROM runs WHERE substr(run_id, 1, ?) = ? ORDER BY run_id",
                                         (len(ref), ref)).fetchall()]
    if len(prefix) == 1:
        return prefix[0]
    if len(prefix) > 1:
        raise HistoryError('run reference %r is ambiguous in %s: it begins %d run ids (%s)'
                           % (ref, db_path, len(prefix), ', '.join(prefix[:5])))
    newest = conn.execute('SELECT run_id, label, matrix FROM runs %s LIMIT 5' % _NEWEST).fetchall()
    known = '; '.join('%s (%s)' % (r[0], ', '.join(x for x in (r[1], r[2]) if x) or 'no label') for r in newest)
    raise HistoryError('no run %r in %s: it is not a run id, a run label or a matrix name there. %s' % (
        ref, db_path, ('Newest runs: %s' % known) if known else 'The history is empty.'))


def load_run(db_path, ref):
    """The results document of the run `ref` stands for (run id, id prefix, 'latest' or a label)."""
    conn = connect(db_path, create=False)
    try:
        run_id = find_run(conn, ref, db_path)
        blob = conn.execute('SELECT doc FROM runs WHERE run_id = ?', (run_id,)).fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise HistoryError('history database %s: cannot load run %r: %s' % (db_path, ref, e))
    finally:
        conn.close()
    try:
        doc = json.loads(zlib.decompress(blob).decode('utf-8'))
    except (zlib.error, ValueError) as e:
        raise HistoryError('history database %s: the document of run %s is damaged: %s' % (db_path, run_id, e))
    return doc
