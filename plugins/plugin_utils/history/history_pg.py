# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PostgreSQL backend of the history store (history.py): a database a team shares.

``history_db=postgresql://user@host:5432/dbname`` (libpq's URL; ``postgres://`` too; query
parameters such as ``sslmode`` or ``service`` pass to libpq). The password is never part of the
URL: a URL with one is refused (URLs are shown in messages, logs and job output); libpq takes it
from ``PGPASSWORD``, ``~/.pgpass`` (``PGPASSFILE``) or a service file (``PGSERVICEFILE``,
``?service=name``). Nothing benchlab prints, logs or stores carries it.

The driver is psycopg 3, imported only when a PostgreSQL URL is used. The tables live in the
schema ``benchlab`` (``benchlab.runs``, ``benchlab.metrics``, and ``benchlab.meta``: benchlab's
mark and the schema version); the first controller to store creates them (it needs CREATE on the
database). A schema ``benchlab`` holding tables but no mark is refused untouched. Text columns use
the "C" collation, so runs sort the same as in SQLite whatever the database's locale.

Every store is one transaction holding a transaction-level advisory lock on its run id, so many
controllers store at once and two that store the same run id go one after the other (the
ownership rules of history.Store decide); the schema is created or upgraded under an advisory
lock of its own (a session lock, taken before that transaction begins).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from urllib.parse import parse_qsl, urlsplit

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history_store import (
    SCHEMA_VERSION, HistoryError, MissingHistory, Store, check_conninfo, conninfo_keywords)

CONNECT_TIMEOUT_S = 10
APPLICATION = 'benchlab.bench'
# pg_advisory_xact_lock(LOCK_CLASS, key): the class keeps benchlab's locks apart from other users'
LOCK_CLASS = 0x626E6368 - (1 << 32) if 0x626E6368 >= (1 << 31) else 0x626E6368
SCHEMA_LOCK = 0

_T = 'TEXT COLLATE "C"'
MIGRATIONS = (
    (3, ('CREATE SCHEMA IF NOT EXISTS benchlab',
         'CREATE TABLE benchlab.meta (key %s PRIMARY KEY, value %s NOT NULL)' % (_T, _T),
         '''CREATE TABLE benchlab.runs (
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            run_id {t} PRIMARY KEY,
            label {t},
            matrix {t},
            status {t},
            started {t},
            finished {t},
            stored {t} NOT NULL,
            "user" {t},
            inventory {t},
            playbook {t},
            collection_version {t},
            n_records INTEGER NOT NULL,
            digest {t} NOT NULL,
            doc BYTEA NOT NULL,
            fingerprint {t},
            controller {t})'''.format(t=_T),
         'CREATE INDEX runs_label ON benchlab.runs (label, started)',
         'CREATE INDEX runs_matrix ON benchlab.runs (matrix, started)',
         '''CREATE TABLE benchlab.metrics (
            run_id {t} NOT NULL REFERENCES benchlab.runs (run_id) ON DELETE CASCADE,
            record INTEGER NOT NULL,
            host {t},
            benchmark {t},
            cell {t},
            tool {t},
            test {t},
            started {t},
            metric {t} NOT NULL,
            value DOUBLE PRECISION,
            unit {t},
            better {t})'''.format(t=_T),
         'CREATE INDEX metrics_run ON benchlab.metrics (run_id)',
         'CREATE INDEX metrics_series ON benchlab.metrics (benchmark, cell, metric)',
         "INSERT INTO benchlab.meta (key, value) VALUES ('application', '%s')" % APPLICATION,
         "INSERT INTO benchlab.meta (key, value) VALUES ('schema_version', '0')")),
)


def mask_url(url):
    """The URL with any password replaced by ***: for the message that refuses it."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if '@' in netloc:
        userinfo, host = netloc.rsplit('@', 1)
        if ':' in userinfo:
            netloc = '%s:***@%s' % (userinfo.split(':', 1)[0], host)
    query = re.sub(r'(?i)(^|&)(password)=[^&]*', r'\1\2=***', parts.query)
    return parts._replace(netloc=netloc, query=query).geturl()


def check_url(url):
    """The URL when it carries no password, else HistoryError (showing it masked)."""
    try:
        parts = urlsplit(url)
        has_password = parts.password is not None or any(
            k.lower() == 'password' for k, _v in parse_qsl(parts.query, keep_blank_values=True))
    except ValueError as e:
        raise HistoryError('history_db is not a valid PostgreSQL URL (%s): postgresql://USER@HOST:PORT/DBNAME' % e)
    if has_password:
        raise HistoryError('history_db %s: a password in the URL is refused (the URL is shown in messages, logs and job '
                           'output). Give it to libpq instead: PGPASSWORD, ~/.pgpass, or a service file (PGSERVICEFILE '
                           'and ?service=NAME in the URL)' % mask_url(url))
    return url


def check_location(location):
    """A PostgreSQL URL or libpq connection string when it carries no password, else HistoryError."""
    keys = conninfo_keywords(location)
    return check_conninfo(location, keys) if keys is not None else check_url(location)


def driver():
    """psycopg 3, or HistoryError naming the package."""
    try:
        import psycopg  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        raise HistoryError('history_db is a PostgreSQL URL: that needs psycopg 3 (the Python package "psycopg") in the '
                           'controller\'s Python %s: pip install "psycopg[binary]" (or python3-psycopg from Debian 12 / '
                           'Ubuntu 23.04 and later); in an execution environment it comes with the collection\'s '
                           'requirements (%s)' % (sys.executable, e))
    return psycopg


def _lock_key(text):
    """A signed 32-bit advisory lock key for a run id."""
    n = int(hashlib.sha256(text.encode('utf-8')).hexdigest()[:8], 16)
    return n - (1 << 32) if n >= (1 << 31) else n


class PostgresStore(Store):
    """The history in a PostgreSQL database (see the module docstring)."""

    backend = 'postgresql'
    runs_table = 'benchlab.runs'
    metrics_table = 'benchlab.metrics'
    tiebreak = 'seq'

    def __init__(self, url, create=True):
        Store.__init__(self, check_location(url))
        psycopg = driver()
        self.errors = (psycopg.Error,)
        try:
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                        application_name=APPLICATION)
        except psycopg.Error as e:
            raise self._problem('cannot connect', e)
        try:
            self._open(create)
        except psycopg.Error as e:
            self.close()
            raise self._problem('', e)
        except BaseException:
            self.close()
            raise

    def describe_error(self, e):
        text = ' '.join(str(e).split())
        secret = os.environ.get('PGPASSWORD')
        if secret and len(secret) > 2:  # libpq never prints it; should a server echo it, it goes no further
            text = text.replace(secret, '***')
        return text

    def _sql(self, text):
        return text.replace('?', '%s')

    def _many(self, text, rows):
        with self.conn.cursor() as cur:
            cur.executemany(self._sql(text), rows)

    def _meta(self):
        """(the tables of the schema benchlab, benchlab.meta as a dict or None). The table list is
        one statement, so one snapshot: a controller creating the schema at this moment is seen not
        at all or complete with its mark (two statements could see no mark, then its tables). The
        catalog, not information_schema: tables this role may not read are listed too."""
        tables = [r[0] for r in self._all(
            "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'benchlab' AND c.relkind IN ('r', 'p', 'v', 'm', 'f')")]
        if 'meta' not in tables:
            return tables, None
        return tables, dict(self._all('SELECT key, value FROM benchlab.meta'))

    def _version(self, tables, meta):
        """The schema version of the benchlab history here (0: none yet), or HistoryError."""
        if meta is None:
            if tables:
                raise HistoryError('history database %s: the schema "benchlab" holds tables (%s) but not benchlab\'s mark '
                                   '(benchlab.meta): it is not a benchlab history and is left untouched'
                                   % (self.location, ', '.join(sorted(tables))))
            return 0
        if meta.get('application') != APPLICATION:
            raise HistoryError('history database %s: benchlab.meta names the application %r, not %s: it is left '
                               'untouched' % (self.location, meta.get('application'), APPLICATION))
        try:
            return int(meta.get('schema_version'))
        except (TypeError, ValueError):
            raise HistoryError('history database %s: benchlab.meta has no valid schema_version (%r)'
                               % (self.location, meta.get('schema_version')))

    def _open(self, create):
        version = self._version(*self._meta())
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise HistoryError('history database %s has schema version %d; this collection knows up to %d: upgrade '
                               'benchlab.bench' % (self.location, version, SCHEMA_VERSION))
        if version == 0 and not create:
            raise MissingHistory('history database %s holds no benchlab history yet (no run has been stored there)'
                                 % self.location)
        # A session lock taken before the transaction: the transaction then starts with the catalog
        # as the controller that held the lock left it (a transaction started before would look up
        # the schema in caches from before).
        self.conn.execute('SELECT pg_advisory_lock(%s::integer, %s::integer)', (LOCK_CLASS, SCHEMA_LOCK))
        try:
            self.conn.execute('BEGIN')
            try:
                version = self._version(*self._meta())  # another controller may have done it meanwhile
                for step, statements in MIGRATIONS:
                    if step > version:
                        for statement in statements:
                            self.conn.execute(statement)
                self.conn.execute("UPDATE benchlab.meta SET value = %s WHERE key = 'schema_version'",
                                  (str(SCHEMA_VERSION),))
                self.conn.execute('COMMIT')
            except BaseException:
                self._rollback()
                raise
        finally:
            try:
                self.conn.execute('SELECT pg_advisory_unlock(%s::integer, %s::integer)', (LOCK_CLASS, SCHEMA_LOCK))
            except Exception:  # pylint: disable=broad-except
                pass  # a lost connection: the server releases the lock with it

    def _begin(self, run_id):
        self.conn.execute('BEGIN')
        self.conn.execute('SELECT pg_advisory_xact_lock(%s::integer, %s::integer)', (LOCK_CLASS, _lock_key(run_id)))

    def _commit(self):
        self.conn.execute('COMMIT')

    def _rollback(self):
        try:
            self.conn.execute('ROLLBACK')
        except Exception:  # pylint: disable=broad-except
            pass  # a lost connection: the server rolls the transaction back itself
