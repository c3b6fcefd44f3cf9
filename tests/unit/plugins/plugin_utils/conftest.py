# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real PostgreSQL server for the history store's tests (tests/unit/pgserver.py): started once
per test session on a free port of 127.0.0.1 in a directory of its own, stopped and removed at the
end, also when a test fails. No mock database: without PostgreSQL installed (Debian package
`postgresql`, which .ci/run installs) the PostgreSQL half of the suite fails, it is not skipped."""

import itertools
import os

import pytest

from ansible_collections.benchlab.bench.tests.unit.pgserver import PgServer

_NAMES = itertools.count()


@pytest.fixture(scope='session')
def pg_server():
    server = PgServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server, monkeypatch):
    """A fresh empty database of the session's server (its URL); PGPASSWORD set as a controller's."""
    name = 'h%d_%d' % (os.getpid(), next(_NAMES))
    url = pg_server.new_database(name)
    for key, value in pg_server.env().items():
        monkeypatch.setenv(key, value)
    yield url
    pg_server.drop_database(name)


@pytest.fixture(params=['sqlite', 'postgresql'])
def location(request, tmp_path):
    """The history's location on each backend: a SQLite file that does not exist yet, or a fresh
    PostgreSQL database."""
    if request.param == 'sqlite':
        return str(tmp_path / 'share' / 'benchlab' / 'history.sqlite')
    return request.getfixturevalue('pg_url')
