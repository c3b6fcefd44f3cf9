# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The history store on both backends (one suite, parametrised by `location`: a SQLite file and a
database of a real PostgreSQL server, conftest.py): round trip, idempotence, references, owners,
schema versions, concurrent writers, copies between stores; then what only one backend has (the
SQLite file's safety: links, marks, modes, network file systems; the PostgreSQL URL's password)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading

import pytest

from ansible_collections.benchlab.bench.tests.unit.helpers import FIXTURES, collections_root

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record, validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.history import history, history_pg, history_sqlite, history_store
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import (
    HistoryError, copy_history, list_runs, load_run, open_store, store_run)


def make_doc(run_id, started, matrix='nightly-matrix', status='complete', values=(100.0, 101.0, 99.0), env=None,
             cell='host-rootfs'):
    records = []
    for v in values:
        rec = new_record('dd', 'write', {'throughput': metric(v, 'MB/s'), 'elapsed': metric(1.0 / v, 's', 'lower')},
                         tool_version='9.1', labels={'benchmark': 'dd-write', 'cell': cell},
                         params={'size': '8M'})
        assert validate_record(rec) == []
        records.append(dict(rec, host='localhost'))
    return dict(run_id=run_id, started=started, finished=started, user='me', inventory='inventories/local',
                playbook='bench.yml', matrix=matrix, collection_version='0.1.0', status=status, invalid=[], failed=[],
                records=records, environment=env or {}, plan=None, analysis={'benchmarks': []})


def sha(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


# -- both backends ---------------------------------------------------------------------------------

def test_round_trip_and_list(location):
    a = make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z')
    b = make_doc('20261202T220000Z-bbbbbb', '2026-12-02T22:00:00Z', values=(50.0, 51.0))
    assert store_run(location, a) == 'stored'
    assert store_run(location, b, label='release-1.2') == 'stored'
    assert load_run(location, a['run_id']) == a
    assert load_run(location, b['run_id']) == b
    runs = list_runs(location)
    assert [r['run_id'] for r in runs] == [b['run_id'], a['run_id']]  # newest first
    assert runs[0]['label'] == 'release-1.2' and runs[1]['label'] is None
    assert runs[0]['n_records'] == 2 and runs[0]['matrix'] == 'nightly-matrix' and runs[0]['user'] == 'me'
    # the tidy metrics table is there for SQL dashboards
    with open_store(location) as store:
        rows = [m for m in store.dump()['metrics'] if m[0] == a['run_id'] and m[8] == 'throughput']
    assert [m[9] for m in rows] == [100.0, 101.0, 99.0]


def test_store_is_idempotent_by_run_id(location):
    doc = make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z')
    assert store_run(location, doc) == 'stored'
    assert store_run(location, doc) == 'unchanged'
    interrupted_then_complete = dict(doc, status='complete', records=doc['records'][:2])
    assert store_run(location, interrupted_then_complete) == 'replaced'
    assert len(list_runs(location)) == 1
    assert load_run(location, doc['run_id'])['records'] == doc['records'][:2]
    with open_store(location) as store:
        assert len(store.dump()['metrics']) == 2 * 2  # the old rows are gone


def test_label_lookup_takes_the_newest_complete_run(location):
    old = make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z')
    new = make_doc('20261202T220000Z-bbbbbb', '2026-12-02T22:00:00Z')
    broken = make_doc('20261203T220000Z-cccccc', '2026-12-03T22:00:00Z', status='interrupted')
    other = make_doc('20261204T220000Z-dddddd', '2026-12-04T22:00:00Z', matrix='other')
    for d in (new, old, broken):  # stored out of order on purpose
        store_run(location, d, label='nightly')
    store_run(location, other)
    assert load_run(location, 'nightly')['run_id'] == new['run_id']          # complete beats newer interrupted
    assert load_run(location, 'nightly-matrix')['run_id'] == new['run_id']   # the matrix name is a label too
    assert load_run(location, 'other')['run_id'] == other['run_id']
    assert load_run(location, 'latest')['run_id'] == other['run_id']
    assert load_run(location, '20261203T')['run_id'] == broken['run_id']     # a unique run id prefix
    # a run label wins over a matrix name
    store_run(location, make_doc('20261130T220000Z-eeeeee', '2026-11-30T22:00:00Z', matrix='x'), label='other')
    assert load_run(location, 'other')['run_id'] == '20261130T220000Z-eeeeee'
    # runs started in the same second: the one stored last is the newest
    store_run(location, make_doc('20261204T220000Z-ffffff', '2026-12-04T22:00:00Z', matrix='other'))
    assert load_run(location, 'latest')['run_id'] == '20261204T220000Z-ffffff'


def test_missing_ref_names_it(location):
    store_run(location, make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'), label='nightly')
    with pytest.raises(HistoryError) as e:
        load_run(location, 'release-9')
    msg = str(e.value)
    assert "'release-9'" in msg and location in msg and '20261201T220000Z-aaaaaa (nightly, nightly-matrix)' in msg
    store_run(location, make_doc('20261201T230000Z-bbbbbb', '2026-12-01T23:00:00Z'))
    with pytest.raises(HistoryError, match="'20261201T2' is ambiguous"):
        load_run(location, '20261201T2')
    with pytest.raises(HistoryError, match='empty run reference'):
        load_run(location, '')


def test_an_absent_history_is_named_and_not_made_by_reading(location):
    with pytest.raises(history.MissingHistory) as e:
        list_runs(location)
    assert location in str(e.value) and ('does not exist' in str(e.value) or 'no benchlab history yet' in str(e.value))
    history.check_run_id(location, 'r1', 'fp')  # nothing stored: every id is free
    if not history.is_postgres(location):
        assert not os.path.exists(location)


def test_owner_rules(location):
    mine = history.controller_fingerprint('/a/runs/r1', host='ctl-a')
    theirs = history.controller_fingerprint('/b/runs/r1', host='ctl-b')
    doc = make_doc('r1', '2026-12-01T22:00:00Z')
    assert store_run(location, doc, fingerprint=mine[0], controller=mine[1]) == 'stored'
    with pytest.raises(HistoryError) as e:
        store_run(location, dict(doc, status='other'), fingerprint=theirs[0], controller=theirs[1])
    assert 'already in the history' in str(e.value) and 'another controller (ctl-a:/a/runs/r1)' in str(e.value)
    with pytest.raises(HistoryError, match='another controller'):
        history.check_run_id(location, 'r1', theirs[0])
    history.check_run_id(location, 'r1', mine[0])
    # a new run under an old id (fewer records, no resume) does not replace it; a resume does
    with pytest.raises(HistoryError, match='a new run under an old run id'):
        store_run(location, dict(doc, records=doc['records'][:1]), fingerprint=mine[0], controller=mine[1])
    assert store_run(location, dict(doc, records=doc['records'][:1]), fingerprint=mine[0], controller=mine[1],
                     extends=True) == 'replaced'
    assert load_run(location, 'r1')['records'] == doc['records'][:1]


def test_newer_schema_is_refused(location):
    store_run(location, make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'))
    if history.is_postgres(location):
        with open_store(location) as store:
            store.conn.execute("UPDATE benchlab.meta SET value = '99' WHERE key = 'schema_version'")
    else:
        conn = sqlite3.connect(location)
        conn.execute('PRAGMA user_version = 99')
        conn.close()
    with pytest.raises(HistoryError, match='schema version 99; this collection knows up to 3'):
        list_runs(location)


def test_trend_queries(location):
    for i, v in enumerate((100.0, 90.0, 80.0)):
        store_run(location, make_doc('2026120%dT220000Z-r' % (i + 1), '2026-12-0%dT22:00:00Z' % (i + 1),
                                     values=(v, v + 1)), label='nightly' if i else None)
    store_run(location, make_doc('20261209T220000Z-x', '2026-12-09T22:00:00Z', matrix='other'))
    with open_store(location) as store:
        ids = store.run_ids(matrix='nightly-matrix')
        assert ids == ['20261201T220000Z-r', '20261202T220000Z-r', '20261203T220000Z-r']  # oldest first
        assert store.run_ids(label='nightly') == ids[1:]
        values = store.metric_values(ids, 'dd-write', 'host-rootfs', 'throughput')
        assert values['20261202T220000Z-r'] == ('2026-12-02T22:00:00Z', [90.0, 91.0], 'MB/s', 'higher')
        assert store.metric_values(ids, 'dd-write', 'nowhere', 'throughput') == {}
        assert ('dd-write', 'host-rootfs', 'elapsed') in store.series_names(ids)


WRITER = textwrap.dedent('''
    import sys
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[2])
    from test_history import make_doc
    from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import store_run
    db, who, n = sys.argv[3], sys.argv[4], int(sys.argv[5])
    for i in range(n):
        doc = make_doc('2026120%sT22%04dZ-%s' % (who, i, who * 6), '2026-12-0%sT22:00:00Z' % who,
                       values=[float(v) for v in range(1, 40)])
        assert store_run(db, doc, label='w' + who) == 'stored'
''')


def test_concurrent_writers_in_two_processes(location, tmp_path):
    """Two processes store 25 runs each into one fresh history at the same time: none is lost, no
    'locked', the schema made once."""
    script = tmp_path / 'writer.py'
    script.write_text(WRITER)
    here = os.path.dirname(os.path.abspath(__file__))
    procs = [subprocess.Popen([sys.executable, str(script), str(collections_root()), here, location, who, '25'],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in ('1', '2')]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    runs = list_runs(location)
    assert len(runs) == 50
    assert sorted(set(r['label'] for r in runs)) == ['w1', 'w2']
    with open_store(location) as store:
        assert len(store.dump()['metrics']) == 50 * 39 * 2
    assert load_run(location, 'w2')['records'][0]['metrics']['throughput']['value'] == 1.0


def _another_controller_makes_it_after_the_first_read(location, monkeypatch):
    """Arm a hook: right after the first statement that reads what the history is (SQLite: PRAGMA
    application_id; PostgreSQL: the store's first query), another controller makes the history in a
    thread; the reader waits for it up to 3 s (it may be held by the reader's own read lock)."""
    state = dict(armed=True)
    done = []

    def other():
        with open_store(location) as store:
            done.append(store.backend)

    def fire():
        if state['armed']:
            state['armed'] = False
            t = threading.Thread(target=other)
            t.start()
            t.join(3)
            state['thread'] = t

    if location.startswith('postgresql://'):
        for name in ('_one', '_all'):
            real = getattr(history_pg.PostgresStore, name)

            def hooked(self, text, args=(), _real=real):
                out = _real(self, text, args)
                fire()
                return out
            monkeypatch.setattr(history_pg.PostgresStore, name, hooked)
    else:
        class Hooked(sqlite3.Connection):
            def execute(self, sql, *args):
                out = sqlite3.Connection.execute(self, sql, *args)
                if sql == 'PRAGMA application_id':
                    fire()
                return out
        real_connect = sqlite3.connect
        monkeypatch.setattr(history_sqlite.sqlite3, 'connect', lambda *a, **kw: real_connect(*a, factory=Hooked, **kw))
    return state, done


def test_a_history_another_controller_makes_while_this_one_opens_it_is_recognised(location, monkeypatch):
    """Two controllers store their first runs into a new history at once: the one whose reads of
    the mark and the tables straddle the other's creation took it for a foreign database and lost
    its run (CI, 2026-12-05: one of 8 import.yml runs into a fresh PostgreSQL not stored). The mark
    and the tables are read in one snapshot: this one sees none of it, or all of it."""
    state, done = _another_controller_makes_it_after_the_first_read(location, monkeypatch)
    assert store_run(location, make_doc('r1', '2026-12-01T22:00:00Z')) == 'stored'
    state['thread'].join(60)
    assert not state['armed'] and done  # the other controller did make it meanwhile
    assert [r['run_id'] for r in list_runs(location)] == ['r1']


# -- between the backends ----------------------------------------------------------------------------

def _old_history(tmp_path):
    """A copy of the real schema-2 history file (tests/unit/fixtures/history/README.md)."""
    path = str(tmp_path / 'old' / 'history.sqlite')
    os.makedirs(os.path.dirname(path))
    shutil.copyfile(os.path.join(FIXTURES, 'history', 'history-v2.sqlite'), path)
    return path


def test_an_old_sqlite_history_opens_and_upgrades(tmp_path):
    path = _old_history(tmp_path)
    conn = sqlite3.connect(path)
    assert conn.execute('PRAGMA user_version').fetchone()[0] == 2
    assert conn.execute('PRAGMA application_id').fetchone()[0] == 0
    before = conn.execute('SELECT run_id, label, digest, fingerprint, controller FROM runs ORDER BY run_id').fetchall()
    n_metrics = conn.execute('SELECT COUNT(*) FROM metrics').fetchone()[0]
    conn.close()
    runs = list_runs(path)
    assert [(r['run_id'], r['label'], r['n_records']) for r in runs] == [
        ('20261202T220000Z-fx0002', None, 6), ('20261201T220000Z-fx0001', 'hand-2006', 4)]
    assert load_run(path, 'hand-2006')['matrix'] == 'reference-000-dd-drbd-vps'
    conn = sqlite3.connect(path)
    assert conn.execute('PRAGMA user_version').fetchone()[0] == history_store.SCHEMA_VERSION
    assert conn.execute('PRAGMA application_id').fetchone()[0] == history_sqlite.APPLICATION_ID
    assert conn.execute('SELECT run_id, label, digest, fingerprint, controller FROM runs ORDER BY run_id'
                        ).fetchall() == before
    assert conn.execute('SELECT COUNT(*) FROM metrics').fetchone()[0] == n_metrics == 156
    conn.close()
    # the owner stays the owner after the upgrade
    with pytest.raises(HistoryError, match='another controller'):
        history.check_run_id(path, '20261201T220000Z-fx0001', 'someone-else')


def test_copy_sqlite_to_postgresql_and_back_compares_equal(tmp_path, pg_url):
    """The real old history, upgraded, copied into PostgreSQL with two more runs, then back into a
    new SQLite file: the three dumps (rows with labels, owners and store times, documents, metric
    rows) are equal; copying again changes nothing; another controller's run id is refused."""
    source = _old_history(tmp_path)
    fp, ctl = history.controller_fingerprint('/ci/runs/x', host='ci-1')
    store_run(source, make_doc('20261203T220000Z-cccccc', '2026-12-03T22:00:00Z'), label='nightly', fingerprint=fp,
              controller=ctl)
    store_run(source, make_doc('20261204T220000Z-dddddd', '2026-12-04T22:00:00Z', status='interrupted'))
    back = str(tmp_path / 'back' / 'history.sqlite')
    with open_store(source) as a, open_store(pg_url) as b:
        done = copy_history(a, b)
        assert sorted(done['stored']) == sorted(a.run_ids()) and not done['refused']
        dump_a, dump_b = a.dump(), b.dump()
    with open_store(pg_url) as b, open_store(back) as c:
        copy_history(b, c)
        dump_c = c.dump()
        assert copy_history(b, c)['unchanged'] == b.run_ids()  # idempotent
    assert dump_a == dump_b == dump_c
    assert len(dump_a['runs']) == 4 and len(dump_a['metrics']) == 156 + 2 * 3 * 2
    assert load_run(pg_url, 'nightly')['run_id'] == '20261203T220000Z-cccccc'
    # a run id owned by another controller in the destination is refused, not replaced
    other = make_doc('20261205T220000Z-eeeeee', '2026-12-05T22:00:00Z')
    fp2, ctl2 = history.controller_fingerprint('/elsewhere', host='ci-2')
    store_run(back, other, fingerprint=fp2, controller=ctl2)
    store_run(pg_url, dict(other, status='interrupted'), fingerprint=fp, controller=ctl)
    with open_store(pg_url) as b, open_store(back) as c:
        result = copy_history(b, c)
    assert [r for r, _why in result['refused']] == ['20261205T220000Z-eeeeee']
    assert load_run(back, '20261205T220000Z-eeeeee')['status'] == 'complete'


# -- SQLite: the file is benchlab's own -------------------------------------------------------------

def test_new_file_is_private_and_existing_modes_are_kept(tmp_path):
    db = str(tmp_path / 'share' / 'benchlab' / 'history.sqlite')
    store_run(db, make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'))
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(db)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / 'share').st_mode) == 0o700
    conn = sqlite3.connect(db)
    # rollback journal, not WAL; the mark in the header
    assert conn.execute('PRAGMA journal_mode').fetchone()[0] == 'delete'
    assert conn.execute('PRAGMA application_id').fetchone()[0] == history_sqlite.APPLICATION_ID
    conn.close()
    team = tmp_path / 'team'
    team.mkdir(mode=0o2770)
    os.chmod(team, 0o2770)
    shared = team / 'history.sqlite'
    shared.touch()  # an empty file an administrator made for the team: taken as it is
    os.chmod(shared, 0o660)
    store_run(str(shared), make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'))
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o660
    assert stat.S_IMODE(os.stat(team).st_mode) == 0o2770


def test_a_symlink_is_refused_naming_its_target(tmp_path):
    """Issue 27 finding 6: a link to another application's database is refused and the database
    is unchanged (sha256); a dangling link does not create its target."""
    other = tmp_path / 'app.db'
    conn = sqlite3.connect(str(other))
    conn.execute('CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)')
    conn.execute("INSERT INTO accounts (name) VALUES ('alice')")
    conn.execute('PRAGMA user_version = 7')
    conn.commit()
    conn.close()
    before = sha(other)
    link = tmp_path / 'history.sqlite'
    link.symlink_to(other)
    for call in (lambda: store_run(str(link), make_doc('r1', '2026-12-01T22:00:00Z')),
                 lambda: list_runs(str(link)), lambda: history.check_run_id(str(link), 'r1', 'fp')):
        with pytest.raises(HistoryError) as e:
            call()
        assert 'is a symbolic link (to %s)' % other in str(e.value)
    assert sha(other) == before
    dangling = tmp_path / 'dangling.sqlite'
    target = tmp_path / 'nowhere' / 'made-by-root.sqlite'
    dangling.symlink_to(target)
    with pytest.raises(HistoryError, match='which does not exist'):
        store_run(str(dangling), make_doc('r1', '2026-12-01T22:00:00Z'))
    assert not target.exists() and not target.parent.exists()


def test_a_database_without_the_mark_is_left_untouched(tmp_path):
    other = tmp_path / 'app.db'
    conn = sqlite3.connect(str(other))
    conn.execute('CREATE TABLE accounts (id INTEGER PRIMARY KEY)')
    conn.commit()
    conn.close()
    before = sha(other)
    with pytest.raises(HistoryError) as e:
        store_run(str(other), make_doc('r1', '2026-12-01T22:00:00Z'))
    assert 'is a SQLite database that is not a benchlab history' in str(e.value) and 'tables: accounts' in str(e.value)
    assert sha(other) == before
    # another application's own mark is not ours either
    conn = sqlite3.connect(str(tmp_path / 'marked.db'))
    conn.execute('PRAGMA application_id = 1234')
    conn.execute('CREATE TABLE runs (x)')
    conn.commit()
    conn.close()
    with pytest.raises(HistoryError, match='application_id 0x4d2'):
        list_runs(str(tmp_path / 'marked.db'))


def test_not_a_database_or_not_a_file(tmp_path):
    bad = tmp_path / 'junk.sqlite'
    bad.write_text('this is not sqlite\n' * 100)
    with pytest.raises(HistoryError, match=str(bad)):
        store_run(str(bad), make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'))
    os.mkfifo(str(tmp_path / 'fifo'))
    with pytest.raises(HistoryError, match='not a regular file'):
        store_run(str(tmp_path / 'fifo'), make_doc('r1', '2026-12-01T22:00:00Z'))


def test_locations():
    assert history.default_db_path({'XDG_DATA_HOME': '/data'}) == '/data/benchlab/history.sqlite'
    home = os.path.expanduser('~')
    assert history.default_db_path({}) == home + '/.local/share/benchlab/history.sqlite'
    assert history.default_db_path({'XDG_DATA_HOME': 'relative'}) == home + '/.local/share/benchlab/history.sqlite'
    assert history.resolve_db_path(None, {'XDG_DATA_HOME': '/d'}) == '/d/benchlab/history.sqlite'
    for off in ('off', 'OFF', 'none', 'false', 'no'):
        assert history.resolve_db_path(off) is None
    assert history.resolve_db_path('~/h.sqlite') == home + '/h.sqlite'
    url = 'postgresql://team@db.example:5432/bench?sslmode=require'
    assert history.resolve_db_path(url) == url and history.resolve_db_path('postgres://u@h/d') == 'postgres://u@h/d'
    # a misspelt scheme is not taken for a relative path (the report of issue 32)
    for url in ('postgresq://u@h/d', 'mysql://u@h/d', 'sqlite:///tmp/h.sqlite'):
        with pytest.raises(HistoryError, match='not a path and not a PostgreSQL URL'):
            history.resolve_db_path(url)
    assert history.resolve_db_path('relative/h.sqlite') == os.path.abspath('relative/h.sqlite')


def test_libpq_connection_strings_go_to_postgresql():
    """libpq keyword strings are PostgreSQL locations, as given (libpq takes what they leave out from
    PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD...)."""
    for value in ('host=127.0.0.1 port=5999 dbname=bench', "host = db  dbname='bench lab' sslmode=require",
                  'service=team', 'dbname=bench'):
        assert history.is_postgres(value) and history.resolve_db_path(value) == value


def test_a_connection_string_with_a_password_is_refused_without_repeating_it(tmp_path, monkeypatch):
    """The form of the report: taken for a relative SQLite path, it made a file whose name held the
    password in the working directory and printed it."""
    monkeypatch.chdir(tmp_path)
    for value in ('host=127.0.0.1 port=5999 password=s3cret-pw', "host=db password='s3cret pw' dbname=b",
                  'host=db sslpassword=s3cret-pw dbname=b', 'host=db PASSWORD=s3cret-pw'):
        with pytest.raises(HistoryError) as e:
            history.resolve_db_path(value)
        assert 's3cret' not in str(e.value) and 'PGPASSWORD' in str(e.value), str(e.value)
        with pytest.raises(HistoryError) as e:
            store_run(value, make_doc('r1', '2026-12-01T22:00:00Z'))
        assert 's3cret' not in str(e.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('value', [
    'host=db passwrd=s3cret-pw',            # a misspelt keyword: not a connection string
    "host=db password='s3cret-pw",          # an unclosed quote
    'host=db,password=s3cret-pw',           # a comma for a space
    'history password=s3cret-pw.sqlite',    # a file name holding a keyword
    '/srv/h/password=s3cret-pw',            # a path holding one
])
def test_a_value_that_could_be_either_is_refused_without_repeating_it(value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(HistoryError) as e:
        history.resolve_db_path(value)
    assert 's3cret' not in str(e.value) and 'not repeated here' in str(e.value), str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_a_sqlite_history_is_a_path_ending_in_a_file_name(tmp_path):
    for value in (str(tmp_path) + '/', '.', '..', '~', 'runs/..'):
        with pytest.raises(HistoryError, match='not a file name'):
            history.resolve_db_path(value)
    assert history.resolve_db_path(str(tmp_path / 'a=b.sqlite')) == str(tmp_path / 'a=b.sqlite')  # no libpq keyword


# -- SQLite on a network file system: refused, naming the PostgreSQL history --------------------------

@pytest.mark.parametrize('magic, mount_type, name', [
    (0x6969, 'nfs4', 'nfs4'), (0xFF534D42, 'cifs', 'cifs'), (0xFE534D42, 'smb3', 'smb3'),
    (0x01021997, '9p', '9p'), (0x65735546, 'fuse.sshfs', 'fuse.sshfs'), (0x00C36400, None, 'ceph'),
    (0x12345678, None, 'type 0x12345678')])
def test_network_file_systems_are_refused(magic, mount_type, name):
    """The statfs types of file systems that cannot be mounted here (NFS, SMB/CIFS, 9p, Ceph; sshfs
    is mounted for real in tests/integration/test_history_live.py): fs_problem refuses each, and
    anything not on the allow-list of local file systems."""
    problem = history_sqlite.fs_problem('/mnt/team/h.sqlite', magic, mount_type, '/mnt/team')
    assert problem.startswith('history_db /mnt/team/h.sqlite is on a ')
    assert '(%s, mounted at /mnt/team)' % name in problem
    assert 'postgresql://USER@HOST:5432/DBNAME' in problem and 'PGPASSWORD' in problem


def test_local_file_systems_pass():
    for magic in (0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x2FC12FC1, 0x794C7630):
        assert history_sqlite.fs_problem('/x', magic) is None
    assert history_sqlite.fs_problem('/x', 0x65735546, 'fuseblk') is None  # ntfs-3g on a local disk
    assert history_sqlite.fs_problem('/x', None) is None  # no statfs (not Linux): not checked
    assert history_sqlite.statfs_type('/proc') == 0x9FA0  # the real call (procfs)
    assert history_sqlite.statfs_type('/dev/shm') == 0x01021994
    assert history_sqlite.mount_of('/proc/self')[0] == 'proc'


def test_a_history_on_nfs_is_refused_before_anything_is_made(tmp_path, monkeypatch):
    """statfs stubbed to answer NFS (no NFS server can be run here): nothing is created."""
    monkeypatch.setattr(history_sqlite, 'statfs_type', lambda path: 0x6969)
    monkeypatch.setattr(history_sqlite, 'mount_of', lambda path: ('nfs4', str(tmp_path)))
    db = tmp_path / 'mnt' / 'history.sqlite'
    with pytest.raises(HistoryError, match=r'is on a network file system \(nfs4, mounted at ') as e:
        store_run(str(db), make_doc('r1', '2026-12-01T22:00:00Z'))
    assert 'postgresql://' in str(e.value)
    assert not db.parent.exists()


# -- PostgreSQL: the URL and the driver ---------------------------------------------------------------

def test_a_password_in_the_url_is_refused_and_never_shown():
    for url, shown in (('postgresql://team:s3cret-pw@db:5432/bench', 'postgresql://team:***@db:5432/bench'),
                       ('postgres://team@db/bench?sslmode=require&password=s3cret-pw',
                        'postgres://team@db/bench?sslmode=require&password=***')):
        with pytest.raises(HistoryError) as e:
            history.resolve_db_path(url)
        assert 's3cret-pw' not in str(e.value) and shown in str(e.value) and 'PGPASSWORD' in str(e.value)
        with pytest.raises(HistoryError) as e:
            store_run(url, make_doc('r1', '2026-12-01T22:00:00Z'))
        assert 's3cret-pw' not in str(e.value)


def test_without_psycopg_the_message_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, 'psycopg', None)  # import psycopg -> ImportError
    with pytest.raises(HistoryError) as e:
        list_runs('postgresql://team@127.0.0.1:1/bench')
    assert 'psycopg' in str(e.value) and 'pip install "psycopg[binary]"' in str(e.value)
    assert history.resolve_db_path('off') is None  # nothing else needs it


def test_an_unreachable_server_is_a_clear_error(pg_server, monkeypatch):
    monkeypatch.setenv('PGPASSWORD', pg_server.password)
    url = 'postgresql://%s@127.0.0.1:1/nothing' % pg_server.user
    with pytest.raises(HistoryError) as e:
        history.check_run_id(url, 'r1', 'fp')
    msg = str(e.value)
    assert msg.startswith('history database %s: cannot connect: ' % url) and 'refused' in msg
    assert pg_server.password not in msg and '\n' not in msg
    monkeypatch.setenv('PGPASSWORD', 'wrong-password')
    with pytest.raises(HistoryError, match='password authentication failed'):
        store_run(pg_server.url(), make_doc('r1', '2026-12-01T22:00:00Z'))


def test_a_foreign_benchlab_schema_is_left_untouched(pg_url):
    with open_store(pg_url) as store:  # make the history, then take its mark away
        store.conn.execute('DROP TABLE benchlab.meta')
    with pytest.raises(HistoryError, match='not benchlab\'s mark'):
        store_run(pg_url, make_doc('r1', '2026-12-01T22:00:00Z'))
    with _raw(pg_url) as conn:  # the tables are still there
        assert conn.execute("SELECT to_regclass('benchlab.runs')").fetchone()[0] is not None


def _raw(url):
    return history_pg.driver().connect(url, autocommit=True)


# -- the hostile corpus (issue 27 finding 6 and its kin): every case refused, nothing touched -----------

def _foreign_db(path, app_id=0):
    conn = sqlite3.connect(str(path))
    conn.execute('CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)')
    conn.execute("INSERT INTO accounts (name) VALUES ('alice')")
    if app_id:
        conn.execute('PRAGMA application_id = %d' % app_id)
    conn.commit()
    conn.close()
    return path


def _case(kind, tmp):
    """(history_db value, files that must stay as they were, paths that must not appear, expected message)."""
    if kind == 'symlink-to-another-apps-database':
        db = _foreign_db(tmp / 'app.db')
        (tmp / 'h.sqlite').symlink_to(db)
        return str(tmp / 'h.sqlite'), [db], [], 'is a symbolic link (to %s)' % db
    if kind == 'dangling-symlink':
        (tmp / 'h.sqlite').symlink_to(tmp / 'etc' / 'made.sqlite')
        return str(tmp / 'h.sqlite'), [], [tmp / 'etc'], 'which does not exist'
    if kind == 'symlink-to-a-benchlab-history':  # even our own file is not reached through a link
        store_run(str(tmp / 'real.sqlite'), make_doc('r0', '2026-12-01T22:00:00Z'))
        (tmp / 'h.sqlite').symlink_to(tmp / 'real.sqlite')
        return str(tmp / 'h.sqlite'), [tmp / 'real.sqlite'], [], 'is a symbolic link'
    if kind == 'another-apps-sqlite-database':
        return str(_foreign_db(tmp / 'h.sqlite')), [tmp / 'h.sqlite'], [], 'not a benchlab history'
    if kind == 'another-apps-application-id':
        return str(_foreign_db(tmp / 'h.sqlite', 0x4D2)), [tmp / 'h.sqlite'], [], 'application_id 0x4d2'
    if kind == 'a-fifo':
        os.mkfifo(str(tmp / 'h.sqlite'))
        return str(tmp / 'h.sqlite'), [], [], 'not a regular file'
    if kind == 'a-directory':
        (tmp / 'h.sqlite').mkdir()
        return str(tmp / 'h.sqlite'), [], [], 'not a regular file'
    if kind == 'password-in-the-url':
        return 'postgresql://team:hunter2-secret@db:5432/bench', [], [], 'team:***@db'
    if kind == 'password-in-the-query':
        return 'postgresql://team@db/bench?password=hunter2-secret', [], [], 'password=***'
    if kind == 'misspelt-scheme':
        return 'postgresq://team@db/bench', [], [tmp / 'postgresq:'], 'not a path and not a PostgreSQL URL'
    raise AssertionError(kind)


HOSTILE_HISTORY = ['symlink-to-another-apps-database', 'dangling-symlink', 'symlink-to-a-benchlab-history',
                   'another-apps-sqlite-database', 'another-apps-application-id', 'a-fifo', 'a-directory',
                   'password-in-the-url', 'password-in-the-query', 'misspelt-scheme']


@pytest.mark.parametrize('kind', HOSTILE_HISTORY)
def test_hostile_history_locations(kind, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    value, keep, absent, expected = _case(kind, tmp_path)
    before = dict((p, sha(p)) for p in keep)
    for call in (lambda loc: store_run(loc, make_doc('r1', '2026-12-01T22:00:00Z')), list_runs,
                 lambda loc: history.preflight(loc, 'r1', str(tmp_path / 'runs' / 'r1'), 0)):
        with pytest.raises(HistoryError) as e:
            call(history.resolve_db_path(value))
        assert expected in str(e.value) and 'hunter2' not in str(e.value)
    assert dict((p, sha(p)) for p in keep) == before
    for p in absent:
        assert not os.path.lexists(p)


def test_an_empty_file_of_another_program_is_not_made_a_world_readable_history(tmp_path):
    """Before: an existing empty 0644 file given as history_db became a SQLite history others could
    read. An empty file benchlab could have made (0600) is still taken."""
    theirs = tmp_path / 'app.lock'
    theirs.write_bytes(b'')
    theirs.chmod(0o644)
    with pytest.raises(HistoryError, match=r'is an empty file anyone may read \(mode 0644\): benchlab did not make'):
        store_run(str(theirs), make_doc('r1', '2026-12-01T22:00:00Z'))
    assert theirs.stat().st_size == 0 and stat.S_IMODE(theirs.stat().st_mode) == 0o644
    ours = tmp_path / 'h.sqlite'
    ours.write_bytes(b'')
    ours.chmod(0o600)
    store_run(str(ours), make_doc('r1', '2026-12-01T22:00:00Z'))
    assert [r['run_id'] for r in list_runs(str(ours))] == ['r1'] and stat.S_IMODE(ours.stat().st_mode) == 0o600
