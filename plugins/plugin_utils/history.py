# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The history store: every finished run's results document, in one store with two backends.

Location: the callback option ``history_db`` (env ``BENCHLAB_HISTORY_DB``, ini
``[callback_benchlab_report] history_db``):

- a path ending in a file name: an embedded SQLite file (``history_sqlite.py``); by default
  ``$XDG_DATA_HOME/benchlab/history.sqlite`` (``~/.local/share/benchlab/history.sqlite``);
- ``postgresql://user@host:port/dbname`` (or ``postgres://``), or a libpq connection string
  (``host=db port=5432 dbname=bench``; the rest from libpq's ``PG*`` variables): a PostgreSQL
  database shared by a team (``history_pg.py``, psycopg 3). The password never goes into the value
  (refused there, never repeated: the value is shown in messages and logs); libpq finds it in
  ``PGPASSWORD``, ``~/.pgpass`` or a service file (``?service=name``);
- ``off`` (or ``none``, ``false``, ``no``): no history.

Anything else, or a value that could be either a connection string or a path, is refused without
being repeated (resolve_db_path).

One interface (``Store``), the same semantics on both backends:

A run is found by a *reference*: its run id, a unique prefix of it, ``latest``, or a *label*.
``latest`` is the newest stored run whatever its status (a run that was interrupted or failed is
the latest run, never skipped for an older complete one). A label is either the run label the user
gave (callback option ``run_label``, env ``BENCHLAB_RUN_LABEL``) or the matrix name; a label stands
for the newest complete run carrying it (the newest of any status when none completed), explicit
run labels before matrix names.

A run id is owned by the controller that stored it first: every run is stored with a
*fingerprint* of the controller (host name and run directory, see ``controller_fingerprint``).
Storing the same run id again is allowed only from the same controller, and only to extend it (a
resume of that run, or the same run stored again with at least its records); a second controller
reusing a run id, or a new run under an old id, is a HistoryError and the stored run stays as it
was. Each store is one transaction, serialised per run id, so many controllers may store at once.

Tables: ``runs`` (one row per run: meta columns + the whole results document, zlib-compressed JSON)
and ``metrics`` (one row per record x metric, for SQL dashboards); on PostgreSQL in the schema
``benchlab`` (``benchlab.runs``, ``benchlab.metrics``, ``benchlab.meta``). The schema is versioned
(``SCHEMA_VERSION``) and carries benchlab's mark; an older history is upgraded when opened, a
newer one or a database without the mark is refused untouched.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shlex
import socket
import zlib

SCHEMA_VERSION = 3
OFF = ('off', 'none', 'false', 'no', 'disabled')
PG_SCHEMES = ('postgresql', 'postgres')
_URL = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*://')
PG_HINT = ('history_db=postgresql://USER@HOST:5432/DBNAME (BENCHLAB_HISTORY_DB; the password from '
           'PGPASSWORD, ~/.pgpass or a service file)')

# The columns of a run's row besides the document, in the order of both backends' tables.
RUN_COLUMNS = ('run_id', 'label', 'matrix', 'status', 'started', 'finished', 'stored', 'user', 'inventory',
               'playbook', 'collection_version', 'n_records', 'digest', 'fingerprint', 'controller')
METRIC_COLUMNS = ('run_id', 'record', 'host', 'benchmark', 'cell', 'tool', 'test', 'started', 'metric', 'value',
                  'unit', 'better')
_LIST_COLUMNS = ('run_id', 'label', 'matrix', 'status', 'started', 'finished', 'stored', 'user', 'inventory',
                 'playbook', 'collection_version', 'n_records')


class HistoryError(Exception):
    """A history database that cannot be used, or a run that is not in it; the message says which."""


class MissingHistory(HistoryError):
    """open_store(create=False) of a history that does not exist yet."""


# -- where ---------------------------------------------------------------------------------------

def default_db_path(environ=None):
    """$XDG_DATA_HOME/benchlab/history.sqlite, ~/.local/share/benchlab/history.sqlite without it."""
    environ = os.environ if environ is None else environ
    base = environ.get('XDG_DATA_HOME') or ''
    if not os.path.isabs(base):  # the XDG spec: a relative value is invalid and ignored
        base = os.path.join(os.path.expanduser('~'), '.local', 'share')
    return os.path.join(base, 'benchlab', 'history.sqlite')


# libpq's connection parameter keywords (PostgreSQL 17 docs, "Parameter Key Words"): a value made of
# `keyword=value` pairs of these, and nothing else, is a libpq connection string.
LIBPQ_KEYWORDS = frozenset((
    'host', 'hostaddr', 'port', 'dbname', 'user', 'password', 'passfile', 'require_auth', 'channel_binding',
    'connect_timeout', 'client_encoding', 'options', 'application_name', 'fallback_application_name', 'keepalives',
    'keepalives_idle', 'keepalives_interval', 'keepalives_count', 'tcp_user_timeout', 'replication', 'gssencmode',
    'sslmode', 'requiressl', 'sslnegotiation', 'sslcompression', 'sslcert', 'sslkey', 'sslpassword', 'sslcertmode',
    'sslrootcert', 'sslcrl', 'sslcrldir', 'sslsni', 'requirepeer', 'ssl_min_protocol_version',
    'ssl_max_protocol_version', 'krbsrvname', 'gsslib', 'gssdelegation', 'service', 'target_session_attrs',
    'load_balance_hosts'))
SECRET_KEYWORDS = ('password', 'sslpassword')
# one `keyword = value` pair of a libpq connection string: the value bare (no space, no quote) or
# single-quoted with \' and \\ escapes
_PAIR = re.compile(r"\s*([A-Za-z_]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|([^\s']*))")
# a libpq keyword followed by '=' in a value: a connection string, or a path that holds one
_KEYWORD_AT = re.compile(r'(?i)(?:^|[\s;,&?/])(%s)\s*=' % '|'.join(sorted(LIBPQ_KEYWORDS, key=len, reverse=True)))


def conninfo_keywords(value):
    """The keywords of `value` when it is a whole libpq connection string ("host=db port=5432
    dbname=bench"), else None. Only the keywords: no caller needs (or may show) the values."""
    if not isinstance(value, str) or '=' not in value:
        return None
    keys, pos, text = [], 0, value.rstrip()
    while pos < len(text):
        m = _PAIR.match(text, pos)
        if not m or m.end() == pos:
            return None
        keys.append(m.group(1).lower())
        pos = m.end()
        if pos < len(text) and not text[pos].isspace():
            return None
    if not keys or any(k not in LIBPQ_KEYWORDS for k in keys):
        return None
    return keys


def is_postgres(location):
    """True when the location is a PostgreSQL URL (postgresql:// or postgres://) or a libpq
    connection string."""
    if not isinstance(location, str):
        return False
    if location.split(':', 1)[0].lower() in PG_SCHEMES and '://' in location:
        return True
    return conninfo_keywords(location) is not None


def check_conninfo(value, keys):
    """A libpq connection string without a password (HistoryError naming the keyword, never its value)."""
    if len(_KEYWORD_AT.findall(value)) != len(keys):  # 'host=db,password=...': a keyword inside a value
        raise HistoryError('history_db looks like a PostgreSQL connection string with a keyword inside a value (%s); '
                           'the value is not repeated here, as it may hold a password: separate keyword=value pairs '
                           'with spaces and quote values that hold one' % ', '.join(
                               sorted(set('%s=' % k.lower() for k in _KEYWORD_AT.findall(value)))))
    secret = [k for k in keys if k in SECRET_KEYWORDS]
    if secret:
        raise HistoryError('history_db is a PostgreSQL connection string (%s) with %s in it: refused (history_db is '
                           'shown in messages, logs and job output; the value is not repeated here). Give the '
                           'password to libpq instead: PGPASSWORD, ~/.pgpass, or a service file (PGSERVICEFILE and '
                           'service=NAME)' % (' '.join('%s=...' % k for k in keys), ' and '.join(secret)))
    return value


def _check_path(value):
    """The absolute path of a SQLite history, when `value` looks like one: a path ending in a file
    name that holds no connection keyword (a mistyped connection string would otherwise become a
    file whose name carries a password). HistoryError that does not repeat the value otherwise."""
    if _KEYWORD_AT.search(value):
        found = sorted(set(k.lower() for k in _KEYWORD_AT.findall(value)))
        raise HistoryError('history_db is neither a PostgreSQL location nor a file path: it holds %s like a libpq '
                           'connection string but is not one (an unknown keyword, or a quote or a space out of '
                           'place); the value is not repeated here, as it may hold a password. A shared history is '
                           '%s, or "host=HOST port=5432 dbname=DBNAME"; a SQLite history is a path ending in a file '
                           'name' % (', '.join('%s=' % k for k in found), PG_HINT))
    path = os.path.abspath(os.path.expanduser(os.path.expandvars(value)))
    name = os.path.basename(value.rstrip())
    if value.endswith(os.sep) or name in ('', '.', '..', '~'):
        raise HistoryError('history_db %s: not a file name (a SQLite history is a file, e.g. %s)'
                           % (path, os.path.join(path, 'history.sqlite')))
    return path


def resolve_db_path(value, environ=None):
    """The history's location for an option value, parsed, never guessed: None/'' -> the default
    SQLite file, 'off' -> None (no history); a PostgreSQL URL or a libpq connection string (libpq
    takes what they leave out from the PG* environment variables) -> itself, checked to hold no
    password; a path ending in a file name -> its absolute path. Anything else, or a value that
    could be either, is a HistoryError that never repeats a password."""
    if value is None or str(value).strip() == '':
        return default_db_path(environ)
    value = str(value).strip()
    if value.lower() in OFF:
        return None
    keys = conninfo_keywords(value)
    if keys is not None:
        return check_conninfo(value, keys)
    if is_postgres(value):
        from ansible_collections.benchlab.bench.plugins.plugin_utils.history_pg import check_url
        return check_url(value)
    if _URL.match(value):  # any other URL: never taken for a relative path
        raise HistoryError('history_db %r: not a path and not a PostgreSQL URL; a shared history is %s'
                           % (value.split(':', 1)[0] + '://...', PG_HINT))
    return _check_path(value)


def shown(location):
    """The location as messages show it (a URL never carries a password: check_url refuses one)."""
    return str(location)


def open_store(location, create=True):
    """The Store of a location (see resolve_db_path). create=False: the history must exist already."""
    if not location:
        raise HistoryError('no history database: history_db is off')
    if is_postgres(location):
        from ansible_collections.benchlab.bench.plugins.plugin_utils.history_pg import PostgresStore
        return PostgresStore(location, create=create)
    from ansible_collections.benchlab.bench.plugins.plugin_utils.history_sqlite import SqliteStore
    return SqliteStore(location, create=create)


# -- what is stored ------------------------------------------------------------------------------

def encode(doc):
    """(sha256 of the canonical JSON, zlib-compressed JSON) of a results document."""
    text = json.dumps(doc, sort_keys=True, separators=(',', ':'))
    return hashlib.sha256(text.encode('utf-8')).hexdigest(), zlib.compress(text.encode('utf-8'), 6)


def decode(blob, where, run_id):
    try:
        return json.loads(zlib.decompress(bytes(blob)).decode('utf-8'))
    except (zlib.error, ValueError, TypeError) as e:
        raise HistoryError('history database %s: the document of run %s is damaged: %s' % (where, run_id, e))


def metric_rows(run_id, records):
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


def owner_problem(row, run_id, fingerprint, extends, n_records, where):
    """Why a stored run must not be replaced by this document (None when it may be).
    row: (fingerprint, controller, stored, n_records) of the stored run."""
    old_fp, old_controller, old_stored, old_n = row
    if not fingerprint or not old_fp:  # a run stored without a fingerprint (schema 1): as before
        return None
    if old_fp != fingerprint:
        return ('run id %s is already in the history %s, stored %s by another controller (%s): it is not replaced. '
                'Give this run its own run id (unset BENCHLAB_RUN_ID, or choose a new one)'
                % (run_id, where, old_stored, old_controller or 'unknown'))
    if not extends and n_records < (old_n or 0):
        return ('run id %s is already in the history %s with %d records (stored %s) and this run has %d: a new run '
                'under an old run id does not replace it. Resume it (the same BENCHLAB_RUN_ID with playbooks/bench.yml, '
                'or -e bench_resume=%s) or give this run its own run id' % (
                    run_id, where, old_n, old_stored, n_records, run_id))
    return None


def cols(names):
    """A column list for SQL: ``user`` is a reserved word in PostgreSQL (quoted, it is the same
    column in SQLite)."""
    return ', '.join('"%s"' % n if n == 'user' else n for n in names)


def _text(value):
    return None if value is None else str(value)


def _now_text(now=None):
    return (now or datetime.datetime.now(datetime.timezone.utc)).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


# -- the interface -------------------------------------------------------------------------------

class Store(object):
    """One history, whatever holds it. A backend gives the connection and these hooks:

    - ``errors``: the driver's exception classes (turned into HistoryError with the location);
    - ``runs_table``, ``metrics_table``: the table names; ``tiebreak``: the column that orders runs
      stored in the same instant (SQLite's rowid, PostgreSQL's identity column);
    - ``_sql(text)``: the statement in the driver's parameter style (written with ``?``);
    - ``_begin(run_id)``: start a write transaction that holds the run id against other writers;
      ``_commit()``, ``_rollback()``; ``close()``.
    """

    backend = None
    errors = ()
    runs_table = 'runs'
    metrics_table = 'metrics'
    tiebreak = 'rowid'

    def __init__(self, location):
        self.location = location
        self.conn = None

    # context manager: close on every way out
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # pylint: disable=broad-except
                pass
            self.conn = None

    def _sql(self, text):
        return text

    def _all(self, text, args=()):
        return self.conn.execute(self._sql(text), args).fetchall()

    def _one(self, text, args=()):
        return self.conn.execute(self._sql(text), args).fetchone()

    def _many(self, text, rows):
        self.conn.executemany(self._sql(text), rows)

    def _problem(self, what, e):
        return HistoryError('history database %s: %s%s' % (shown(self.location), ('%s: ' % what) if what else '',
                                                           self.describe_error(e)))

    def describe_error(self, e):
        return str(e).strip()

    @property
    def newest(self):
        return 'ORDER BY started DESC, stored DESC, %s DESC' % self.tiebreak

    # -- writing ----------------------------------------------------------------------------------

    def store(self, doc, label=None, now=None, fingerprint=None, controller=None, extends=False, stored=None):
        """Store (or extend) one run's results document; idempotent by run_id.

        `fingerprint`/`controller` name who stores it (controller_fingerprint()). A run id already
        stored under another fingerprint is refused (HistoryError); under the same one it is
        replaced only when `extends` (a resume of it) or the document holds at least the stored
        records (the same run stored again, interrupted then complete). Runs stored without a
        fingerprint are replaced as before. `stored`: the time it was first stored (a copy keeps
        it), else now.

        Returns 'stored' (new), 'replaced' (the run id was there with another document, e.g. an
        interrupted run stored again) or 'unchanged' (the same document was already there)."""
        run_id = doc.get('run_id') if isinstance(doc, dict) else None
        if not run_id:
            raise HistoryError('cannot store a run without a run_id')
        digest, blob = encode(doc)
        stored = stored or _now_text(now)
        records = doc.get('records') or []
        try:
            self._begin(run_id)
            try:
                row = self._one('SELECT digest, label, fingerprint, controller, stored, n_records FROM %s '
                                'WHERE run_id = ?' % self.runs_table, (run_id,))
                if row and row[0] == digest and row[1] == (label or None):
                    self._rollback()
                    return 'unchanged'
                problem = row and owner_problem(tuple(row[2:]), run_id, fingerprint, extends, len(records),
                                                shown(self.location))
                if problem:
                    self._rollback()
                    raise HistoryError(problem)
                if row:
                    self.conn.execute(self._sql('DELETE FROM %s WHERE run_id = ?' % self.metrics_table), (run_id,))
                    self.conn.execute(self._sql('DELETE FROM %s WHERE run_id = ?' % self.runs_table), (run_id,))
                values = (run_id, label or None, doc.get('matrix'), doc.get('status'), doc.get('started'),
                          doc.get('finished'), stored, doc.get('user'), _text(doc.get('inventory')),
                          _text(doc.get('playbook')), doc.get('collection_version'), len(records), digest,
                          fingerprint or None, controller or None, blob)
                self.conn.execute(self._sql('INSERT INTO %s (%s, doc) VALUES (%s)' % (
                    self.runs_table, cols(RUN_COLUMNS), ', '.join('?' * len(values)))), values)
                self._many('INSERT INTO %s (%s) VALUES (%s)' % (
                    self.metrics_table, cols(METRIC_COLUMNS), ', '.join('?' * len(METRIC_COLUMNS))),
                    metric_rows(run_id, records))
                self._commit()
            except HistoryError:
                raise
            except BaseException:
                self._rollback()
                raise
            return 'replaced' if row else 'stored'
        except self.errors as e:
            raise self._problem('cannot store run %s' % run_id, e)

    def check_run_id(self, run_id, fingerprint):
        """Raise HistoryError when `run_id` is stored by another controller (see store)."""
        try:
            row = self._one('SELECT fingerprint, controller, stored, n_records FROM %s WHERE run_id = ?'
                            % self.runs_table, (run_id,))
        except self.errors as e:
            raise self._problem('', e)
        if row:
            problem = owner_problem(tuple(row), run_id, fingerprint, True, 0, shown(self.location))
            if problem:
                raise HistoryError(problem)

    # -- reading ----------------------------------------------------------------------------------

    def _newest_of(self, where, args):
        """The newest complete run matching, else the newest of any status."""
        row = self._one("SELECT run_id FROM %s WHERE %s AND status = 'complete' %s LIMIT 1"
                        % (self.runs_table, where, self.newest), args)
        if not row:
            row = self._one('SELECT run_id FROM %s WHERE %s %s LIMIT 1' % (self.runs_table, where, self.newest), args)
        return row[0] if row else None

    def find(self, ref):
        """The run id a reference stands for (see the module docstring for the order), or HistoryError."""
        ref = str(ref or '').strip()
        if not ref:
            raise HistoryError('an empty run reference: give a run id or a label')
        try:
            return self._find(ref)
        except self.errors as e:
            raise self._problem('cannot find run %r' % ref, e)

    def _find(self, ref):
        where = shown(self.location)
        if self._one('SELECT 1 FROM %s WHERE run_id = ?' % self.runs_table, (ref,)):
            return ref
        if ref == 'latest':     # the newest run whatever its status: a run that broke off is never skipped
            row = self._one('SELECT run_id FROM %s %s LIMIT 1' % (self.runs_table, self.newest), ())
            if row:
                return row[0]
        for column in ('label', 'matrix'):
            found = self._newest_of('%s = ?' % column, (ref,))
            if found:
                return found
        prefix = [r[0] for r in self._all('SELECT run_id FROM %s WHERE substr(run_id, 1, ?) = ? ORDER BY run_id'
                                          % self.runs_table, (len(ref), ref))]
        if len(prefix) == 1:
            return prefix[0]
        if len(prefix) > 1:
            raise HistoryError('run reference %r is ambiguous in %s: it begins %d run ids (%s)'
                               % (ref, where, len(prefix), ', '.join(prefix[:5])))
        newest = self._all('SELECT run_id, label, matrix FROM %s %s LIMIT 5' % (self.runs_table, self.newest))
        known = '; '.join('%s (%s)' % (r[0], ', '.join(x for x in (r[1], r[2]) if x) or 'no label') for r in newest)
        raise HistoryError('no run %r in %s: it is not a run id, a run label or a matrix name there. %s' % (
            ref, where, ('Newest runs: %s' % known) if known else 'The history is empty.'))

    def load(self, ref):
        """The results document of the run `ref` stands for (run id, id prefix, 'latest' or a label)."""
        run_id = self.find(ref)
        try:
            row = self._one('SELECT doc FROM %s WHERE run_id = ?' % self.runs_table, (run_id,))
        except self.errors as e:
            raise self._problem('cannot load run %r' % ref, e)
        if row is None:
            raise HistoryError('history database %s: run %s went away while it was read' % (shown(self.location), run_id))
        return decode(row[0], shown(self.location), run_id)

    def entry(self, run_id):
        """Everything stored of one run: its row (RUN_COLUMNS) and 'doc' (the results document)."""
        try:
            row = self._one('SELECT %s, doc FROM %s WHERE run_id = ?' % (cols(RUN_COLUMNS), self.runs_table),
                            (run_id,))
        except self.errors as e:
            raise self._problem('cannot load run %r' % run_id, e)
        if row is None:
            raise HistoryError('no run %r in %s' % (run_id, shown(self.location)))
        out = dict(zip(RUN_COLUMNS, row[:-1]))
        out['doc'] = decode(row[-1], shown(self.location), run_id)
        return out

    def list(self):
        """Every stored run, newest first: dicts of the meta columns (no records)."""
        try:
            rows = self._all('SELECT %s FROM %s %s' % (cols(_LIST_COLUMNS), self.runs_table, self.newest))
        except self.errors as e:
            raise self._problem('', e)
        return [dict(zip(_LIST_COLUMNS, r)) for r in rows]

    def run_ids(self, label=None, matrix=None):
        """The run ids carrying a run label and/or matrix name, oldest first (by start, then store)."""
        where, args = [], []
        for column, value in (('label', label), ('matrix', matrix)):
            if value is not None:
                where.append('%s = ?' % column)
                args.append(value)
        try:
            rows = self._all('SELECT run_id FROM %s WHERE %s ORDER BY started, stored, %s' % (
                self.runs_table, ' AND '.join(where) or '1 = 1', self.tiebreak), tuple(args))
        except self.errors as e:
            raise self._problem('', e)
        return [r[0] for r in rows]

    def metric_values(self, run_ids, benchmark, cell, metric):
        """{run_id: (started, [values...], unit, better)} of one metric of one cell's benchmark in
        the given runs (from the metrics table; runs without it are left out)."""
        out = {}
        wanted = set(run_ids)
        try:
            rows = self._all('SELECT m.run_id, r.started, m.value, m.unit, m.better FROM %s m JOIN %s r ON r.run_id = '
                             'm.run_id WHERE m.benchmark = ? AND m.cell = ? AND m.metric = ? ORDER BY m.run_id, m.record'
                             % (self.metrics_table, self.runs_table), (benchmark, cell, metric))
        except self.errors as e:
            raise self._problem('', e)
        for run_id, started, value, unit, better in rows:
            if run_id in wanted:
                item = out.setdefault(run_id, (started, [], unit, better))
                item[1].append(value)
        return out

    def series_names(self, run_ids):
        """(benchmark, cell, metric) triples stored for these runs, sorted (for a message)."""
        wanted = set(run_ids)
        try:
            rows = self._all('SELECT DISTINCT run_id, benchmark, cell, metric FROM %s' % self.metrics_table)
        except self.errors as e:
            raise self._problem('', e)
        return sorted(set((b, c, m) for r, b, c, m in rows if r in wanted))

    def dump(self):
        """Everything in the history as plain data, backend-independent and sorted: [(row, doc)]
        per run and the metric rows. Two histories holding the same runs dump equal."""
        try:
            runs = self._all('SELECT %s, doc FROM %s ORDER BY run_id' % (cols(RUN_COLUMNS), self.runs_table))
            metrics = self._all('SELECT %s FROM %s ORDER BY run_id, record, metric' % (
                cols(METRIC_COLUMNS), self.metrics_table))
        except self.errors as e:
            raise self._problem('', e)
        return dict(runs=[(dict(zip(RUN_COLUMNS, r[:-1])), decode(r[-1], shown(self.location), r[0])) for r in runs],
                    metrics=[tuple(r) for r in metrics])


# -- the functions every caller uses (a location in, a store opened and closed) -------------------------

def store_run(location, doc, label=None, now=None, fingerprint=None, controller=None, extends=False):
    """Store one run in the history at `location` (see Store.store)."""
    with open_store(location) as store:
        return store.store(doc, label=label, now=now, fingerprint=fingerprint, controller=controller, extends=extends)


def check_run_id(location, run_id, fingerprint):
    """Raise HistoryError when `run_id` is stored by another controller; nothing when it is free,
    stored by this one, or the history does not exist yet. Opening the history checks it (a
    symlink, a foreign database, a network file system, an unreachable server are refused here,
    before any host is touched)."""
    if not location:
        return
    try:
        store = open_store(location, create=False)
    except MissingHistory:
        return
    with store:
        store.check_run_id(run_id, fingerprint)


def list_runs(location):
    """Every stored run, newest first: dicts of the meta columns (no records)."""
    with open_store(location, create=False) as store:
        return store.list()


def load_run(location, ref):
    """The results document of the run `ref` stands for (run id, id prefix, 'latest' or a label)."""
    with open_store(location, create=False) as store:
        return store.load(ref)


# -- moving runs between stores -------------------------------------------------------------------

def copy_history(source, dest):
    """Copy every run of the store `source` into the store `dest`, oldest first, each with its
    label, owner and store time; the ownership rules of Store.store hold (a run id another
    controller owns in `dest` is refused, not replaced). Returns {'stored': [...], 'replaced':
    [...], 'unchanged': [...], 'refused': [(run_id, why)]}."""
    out = dict(stored=[], replaced=[], unchanged=[], refused=[])
    for run_id in source.run_ids():
        entry = source.entry(run_id)
        try:
            what = dest.store(entry['doc'], label=entry['label'], fingerprint=entry['fingerprint'],
                              controller=entry['controller'], stored=entry['stored'])
        except HistoryError as e:
            out['refused'].append((run_id, str(e)))
            continue
        out[what].append(run_id)
    return out


# -- for the report callback ----------------------------------------------------------------------

def preflight(location, run_id, run_dir, min_free):
    """The history's part of the checks before any host is touched: a SQLite history's directory
    takes files and has `min_free` bytes (rundir.OutputDirError otherwise); the history opens (a
    symlink, a foreign database, a network file system, an unreachable server are HistoryError);
    `run_id` is not another controller's."""
    if not location:
        return
    if not is_postgres(location):
        from ansible_collections.benchlab.bench.plugins.plugin_utils.rundir import check_output_dir
        check_output_dir(os.path.dirname(location), 'benchlab history directory', min_free, 'BENCHLAB_HISTORY_DB')
    check_run_id(location, run_id, controller_fingerprint(run_dir)[0])


def store_later(run_dir, location, label=None):
    """The command that stores a run directory in the history afterwards (when storing failed)."""
    argv = ['ansible-playbook', 'benchlab.bench.history', '-e', 'history_action=import',
            '-e', 'history_run_dir=%s' % run_dir, '-e', 'history_db=%s' % shown(location)]
    if label:
        argv += ['-e', 'history_label=%s' % label]
    return ' '.join(_quote(a) for a in argv)


def _quote(arg):
    return shlex.quote(arg)
