# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The history store: round trip, idempotence, references, permissions, concurrent writers."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import textwrap

import pytest

from ansible_collections.benchlab.bench.tests.unit.helpers import collections_root

from ansible_collections.benchlab.bench.plugins.module_utils.record import metric, new_record, validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils import history
from ansible_collections.benchlab.bench.plugins.plugin_utils.history import HistoryError, list_runs, load_run, store_run


def make_doc(run_id, started, matrix='nightly-matrix', status='complete', values=(100.0, 101.0, 99.0)):
    records = []
    for v in values:
        rec = new_record('dd', 'write', {'throughput': metric(v, 'MB/s'), 'elapsed': metric(1.0 / v, 's', 'lower')},
                         tool_version='9.1', labels={'benchmark': 'dd-write', 'cell': 'host-rootfs'},
                         params={'size': '8M'})
        assert validate_record(rec) == []
        records.append(dict(rec, host='localhost'))
    return dict(run_id=run_id, started=started, finished=started, user='me', inventory='inventories/local',
                playbook='bench.yml', matrix=matrix, collection_version='0.1.0', status=status, invalid=[], failed=[],
                records=records, environment={}, plan=None, analysis={'benchmarks': []})


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / 'share' / 'benchlab' / 'history.sqlite')


def test_round_trip_and_list(db):
    a = make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z')
    b = make_doc('20261202T220000Z-bbbbbb', '2026-12-02T22:00:00Z', values=(50.0, 51.0))
    assert store_run(db, a) == 'stored'
    assert store_run(db, b, label='release-1.2') == 'stored'
    assert load_run(db, a['run_id']) == a
    assert load_run(db, b['run_id']) == b
    runs = list_runs(db)
    assert [r['run_id'] for r in runs] == [b['run_id'], a['run_id']]  # newest first
    assert runs[0]['label'] == 'release-1.2' and runs[1]['label'] is None
    assert runs[0]['n_records'] == 2 and runs[0]['matrix'] == 'nightly-matrix'
    # the tidy metrics table is there for SQL dashboards
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT value FROM metrics WHERE run_id = ? AND metric = 'throughput' ORDER BY record",
                        (a['run_id'],)).fetchall()
    assert [r[0] for r in rows] == [100.0, 101.0, 99.0]
    assert conn.execute('PRAGMA user_version').fetchone()[0] == history.SCHEMA_VERSION
    # rollback journal, not WAL: WAL needs shared memory a network share does not give
    assert conn.execute('PRAGMA journal_mode').fetchone()[0] == 'delete'
    conn.close()


def test_store_is_idempotent_by_run_id(db):
    doc = make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z')
    assert store_run(db, doc) == 'stored'
    assert store_run(db, doc) == 'unchanged'
    interrupted_then_complete = dict(doc, status='complete', records=doc['records'][:2])
    assert store_run(db, interrupted_then_complete) == 'replaced'
    assert len(list_runs(db)) == 1
    assert load_run(db, doc['run_id'])['records'] == doc['records'][:2]
    conn = sqlite3.connect(db)
    assert conn.execute('SELECT COUNT(*) FROM metrics').fetchone()[0] == 2 * 2  # old rows gone
    conn.close()


def test_label_lookup_takes_the_newest_complete_run(db):
    old = make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z')
    new = make_doc('20261202T220000Z-bbbbbb', '2026-12-02T22:00:00Z')
    broken = make_doc('20261203T220000Z-cccccc', '2026-12-03T22:00:00Z', status='interrupted')
    other = make_doc('20261204T220000Z-dddddd', '2026-12-04T22:00:00Z', matrix='other')
    for d in (new, old, broken):  # stored out of order on purpose
        store_run(db, d, label='nightly')
    store_run(db, other)
    assert load_run(db, 'nightly')['run_id'] == new['run_id']          # run label, complete beats newer interrupted
    assert load_run(db, 'nightly-matrix')['run_id'] == new['run_id']   # the matrix name is a label too
    assert load_run(db, 'other')['run_id'] == other['run_id']
    assert load_run(db, 'latest')['run_id'] == other['run_id']
    assert load_run(db, '20261203T')['run_id'] == broken['run_id']     # a unique run id prefix
    # a run label wins over a matrix name
    store_run(db, make_doc('20261130T220000Z-eeeeee', '2026-11-30T22:00:00Z', matrix='x'), label='other')
    assert load_run(db, 'other')['run_id'] == '20261130T220000Z-eeeeee'


def test_missing_ref_names_it(db):
    store_run(db, make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'), label='nightly')
    with pytest.raises(HistoryError) as e:
        load_run(db, 'release-9')
    msg = str(e.value)
    assert "'release-9'" in msg and db in msg and '20261201T220000Z-aaaaaa (nightly, nightly-matrix)' in msg
    store_run(db, make_doc('20261201T230000Z-bbbbbb', '2026-12-01T23:00:00Z'))
    with pytest.raises(HistoryError, match="'20261201T2' is ambiguous"):
        load_run(db, '20261201T2')
    with pytest.raises(HistoryError, match='does not exist'):
        load_run(db + '.nothere', 'nightly')
    with pytest.raises(HistoryError, match='empty run reference'):
        load_run(db, '')


def test_new_file_is_private_and_existing_modes_are_kept(tmp_path, db):
    store_run(db, make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'))
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(db)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / 'share').st_mode) == 0o700
    team = tmp_path / 'team'
    team.mkdir(mode=0o2770)
    os.chmod(team, 0o2770)
    shared = team / 'history.sqlite'
    shared.touch()
    os.chmod(shared, 0o660)
    store_run(str(shared), make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'))
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o660
    assert stat.S_IMODE(os.stat(team).st_mode) == 0o2770


def test_locations():
    assert history.default_db_path({'XDG_DATA_HOME': '/data'}) == '/data/benchlab/history.sqlite'
    home = os.path.expanduser('~')
    assert history.default_db_path({}) == home + '/.local/share/benchlab/history.sqlite'
    assert history.default_db_path({'XDG_DATA_HOME': 'relative'}) == home + '/.local/share/benchlab/history.sqlite'
    assert history.resolve_db_path(None, {'XDG_DATA_HOME': '/d'}) == '/d/benchlab/history.sqlite'
    for off in ('off', 'OFF', 'none', 'false', 'no'):
        assert history.resolve_db_path(off) is None
    assert history.resolve_db_path('~/h.sqlite') == home + '/h.sqlite'


def test_newer_schema_is_refused(db):
    store_run(db, make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'))
    conn = sqlite3.connect(db)
    conn.execute('PRAGMA user_version = 99')
    conn.close()
    with pytest.raises(HistoryError, match='schema version 99'):
        list_runs(db)


def test_not_a_database(tmp_path):
    bad = tmp_path / 'junk.sqlite'
    bad.write_text('this is not sqlite\n' * 100)
    with pytest.raises(HistoryError, match=str(bad)):
        store_run(str(bad), make_doc('20261201T220000Z-aaaaaa', '2026-12-01T22:00:00Z'))


WRITER = textwrap.dedent('''
    import sys
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[2])
    from test_history import make_doc
    from ansible_collections.benchlab.bench.plugins.plugin_utils.history import store_run
    db, who, n = sys.argv[3], sys.argv[4], int(sys.argv[5])
    for i in range(n):
        doc = make_doc('2026120%sT22%04dZ-%s' % (who, i, who * 6), '2026-12-0%sT22:00:00Z' % who,
                       values=[float(v) for v in range(1, 40)])
        assert store_run(db, doc, label='w' + who) == 'stored'
''')


def test_concurrent_writers_in_two_processes(db, tmp_path):
    """Two processes store 25 runs each into one fresh file at the same time: none is lost, no 'locked'."""
    script = tmp_path / 'writer.py'
    script.write_text(WRITER)
    here = os.path.dirname(os.path.abspath(__file__))
    procs = [subprocess.Popen([sys.executable, str(script), str(collections_root()), here, db, who, '25'],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in ('1', '2')]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    runs = list_runs(db)
    assert len(runs) == 50
    assert sorted(set(r['label'] for r in runs)) == ['w1', 'w2']
    conn = sqlite3.connect(db)
    assert conn.execute('SELECT COUNT(*) FROM metrics').fetchone()[0] == 50 * 39 * 2
    conn.close()
    assert load_run(db, 'w2')['records'][0]['metrics']['throughput']['value'] == 1.0
