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

import os
import re
import shlex

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history_pg import PostgresStore, check_url
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history_sqlite import SqliteStore
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history_store import (
    PG_HINT, HistoryError, MissingHistory, check_conninfo, conninfo_keywords, controller_fingerprint,
    is_postgres, keywords_at, shown)

# history_db values that mean "no history"
OFF = ('off', 'none', 'false', 'no', 'disabled')
_URL = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*://')


# -- where ---------------------------------------------------------------------------------------

def default_db_path(environ=None):
    """$XDG_DATA_HOME/benchlab/history.sqlite, ~/.local/share/benchlab/history.sqlite without it."""
    environ = os.environ if environ is None else environ
    base = environ.get('XDG_DATA_HOME') or ''
    if not os.path.isabs(base):  # the XDG spec: a relative value is invalid and ignored
        base = os.path.join(os.path.expanduser('~'), '.local', 'share')
    return os.path.join(base, 'benchlab', 'history.sqlite')


def _check_path(value):
    """The absolute path of a SQLite history, when `value` looks like one: a path ending in a file
    name that holds no connection keyword (a mistyped connection string would otherwise become a
    file whose name carries a password). HistoryError that does not repeat the value otherwise."""
    found = keywords_at(value)
    if found:
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
        return check_url(value)
    if _URL.match(value):  # any other URL: never taken for a relative path
        raise HistoryError('history_db %r: not a path and not a PostgreSQL URL; a shared history is %s'
                           % (value.split(':', 1)[0] + '://...', PG_HINT))
    return _check_path(value)


def open_store(location, create=True):
    """The Store of a location (see resolve_db_path). create=False: the history must exist already."""
    if not location:
        raise HistoryError('no history database: history_db is off')
    if is_postgres(location):
        return PostgresStore(location, create=create)
    return SqliteStore(location, create=create)


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
        from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import check_output_dir
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
