# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What both history backends share: the schema's version and columns, the errors, the libpq
connection string's keywords, the stored document's encoding and the interface (``Store``) with
everything a backend does not do itself. history.py finds a location's backend (history_sqlite.py,
history_pg.py); the backends build on this file, so neither imports history.py."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import socket
import zlib

SCHEMA_VERSION = 3
PG_SCHEMES = ('postgresql', 'postgres')
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


def keywords_at(value):
    """The libpq connection keywords written as `keyword=` anywhere in value, lower-cased and sorted
    ([] when none): a path holding one is a mistyped connection string, never a file name."""
    return sorted(set(k.lower() for k in _KEYWORD_AT.findall(value)))


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
                           'with spaces and quote values that hold one' % ', '.join('%s=' % k for k in keywords_at(value)))
    secret = [k for k in keys if k in SECRET_KEYWORDS]
    if secret:
        raise HistoryError('history_db is a PostgreSQL connection string (%s) with %s in it: refused (history_db is '
                           'shown in messages, logs and job output; the value is not repeated here). Give the '
                           'password to libpq instead: PGPASSWORD, ~/.pgpass, or a service file (PGSERVICEFILE and '
                           'service=NAME)' % (' '.join('%s=...' % k for k in keys), ' and '.join(secret)))
    return value


# -- what is stored ------------------------------------------------------------------------------

def shown(location):
    """The location as messages show it (a URL never carries a password: check_url refuses one)."""
    return str(location)


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
