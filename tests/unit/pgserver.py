# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real, private PostgreSQL server for the tests and `make perf` (Debian's `postgresql` package).

PgServer().start() runs initdb into a new temporary directory (as the unprivileged user
`postgres` when we are root: PostgreSQL refuses to run as root), starts the server on a free port of
127.0.0.1 only (its Unix socket in that directory), and makes a login role with a password (SCRAM)
and a database for it: url() is the history_db URL (no password in it), env() the environment
with PGPASSWORD that a controller needs. stop() stops the server and removes the directory; the
pytest fixtures call it also when a test fails. pause()/resume() stop and start the same server
(a database lost mid-run). Nothing outside its own directory is touched, so runs of several
checkouts at once cannot collide (own port, own directory)."""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time


def pg_bindir():
    """The newest /usr/lib/postgresql/<v>/bin with initdb, or None."""
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'), key=lambda p: int(p.split('/')[4]))
    return os.path.dirname(found[-1]) if found else None


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class PgServer(object):
    user = 'benchlab_team'
    dbname = 'benchlab_history'

    def __init__(self):
        self.bindir = pg_bindir()
        self.dir = None
        self.port = None
        self.password = 'pw-' + secrets.token_hex(12)
        self.running = False

    def _as_owner(self, argv):
        if os.geteuid() == 0:
            return ['runuser', '-u', 'postgres', '--'] + argv
        return argv

    def _run(self, argv, **kw):
        return subprocess.run(self._as_owner(argv), capture_output=True, text=True, timeout=120, check=False, **kw)

    def start(self):
        if not self.bindir:
            raise RuntimeError('PostgreSQL is not installed (Debian package postgresql: .ci/run installs it)')
        self.dir = tempfile.mkdtemp(prefix='benchlab-pg-')
        if os.geteuid() == 0:
            pw = pwd.getpwnam('postgres')
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.dir, 0o700)
        data = os.path.join(self.dir, 'data')
        proc = self._run([os.path.join(self.bindir, 'initdb'), '-D', data, '-U', 'postgres', '-A', 'trust',
                          '--no-sync', '--locale=C', '-E', 'UTF8'])
        if proc.returncode:
            raise RuntimeError('initdb failed: %s' % (proc.stdout + proc.stderr)[-2000:])
        with open(os.path.join(data, 'pg_hba.conf'), 'w') as f:
            # the socket (setup) trusts the owner; TCP wants the password, as a team server would
            f.write('local all postgres trust\nhost all all 127.0.0.1/32 scram-sha-256\n')
        for _attempt in range(5):
            self.port = free_port()
            if self._start_server():
                break
        else:
            raise RuntimeError('PostgreSQL did not start: %s' % self.log()[-2000:])
        self.psql("CREATE ROLE %s LOGIN PASSWORD '%s'" % (self.user, self.password))
        self.psql('CREATE DATABASE %s OWNER %s' % (self.dbname, self.user))
        return self

    def _start_server(self):
        opts = ('-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s -c fsync=off '
                '-c synchronous_commit=off -c full_page_writes=off -c max_connections=60 -c shared_buffers=32MB'
                % (self.port, self.dir))
        proc = self._run([os.path.join(self.bindir, 'pg_ctl'), '-D', os.path.join(self.dir, 'data'), '-o', opts,
                          '-l', os.path.join(self.dir, 'log'), '-w', '-t', '60', 'start'])
        self.running = proc.returncode == 0
        return self.running

    def log(self):
        try:
            with open(os.path.join(self.dir, 'log')) as f:
                return f.read()
        except (OSError, TypeError):
            return ''

    def psql(self, sql, db='postgres'):
        proc = self._run([os.path.join(self.bindir, 'psql'), '-h', self.dir, '-p', str(self.port), '-U', 'postgres',
                          '-d', db, '-v', 'ON_ERROR_STOP=1', '-Atc', sql])
        if proc.returncode:
            raise RuntimeError('psql %r: %s' % (sql, proc.stderr))
        return proc.stdout

    def url(self, dbname=None):
        return 'postgresql://%s@127.0.0.1:%d/%s' % (self.user, self.port, dbname or self.dbname)

    def env(self):
        return dict(PGPASSWORD=self.password, PGCONNECT_TIMEOUT='10')

    def new_database(self, name):
        """A fresh, empty database owned by the team role; its URL."""
        self.psql('CREATE DATABASE %s OWNER %s' % (name, self.user))
        return self.url(name)

    def drop_database(self, name):
        self.psql('DROP DATABASE IF EXISTS %s WITH (FORCE)' % name)

    def pause(self):
        """Stop the server (fast: connections are cut), keeping its data."""
        self._run([os.path.join(self.bindir, 'pg_ctl'), '-D', os.path.join(self.dir, 'data'), '-m', 'fast', '-w',
                   'stop'])
        self.running = False

    def resume(self):
        for _attempt in range(20):
            if self._start_server():
                return
            time.sleep(0.5)
        raise RuntimeError('PostgreSQL did not start again: %s' % self.log()[-2000:])

    def stop(self):
        if self.dir is None:
            return
        if self.running:
            self.pause()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
