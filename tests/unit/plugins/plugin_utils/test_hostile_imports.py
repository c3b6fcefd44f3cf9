# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile import manifests (issue 27, finding 5): import.yml reads only what the manifest may name.

Each case is a manifest whose entry names something outside the manifest's directory, or something
that is not a regular file: a secret made by the test outside the directory (by absolute path,
by `..`, through a symlink, through a symlinked directory), /dev/zero, /dev/null, /proc, a FIFO,
a socket, a directory, a file above the size cap. Every one is refused naming the entry and the
path; nothing of the secret appears in the problems, the secret's sha256 is unchanged, and nothing
hangs (a FIFO without a writer, under an alarm)."""

import hashlib
import os
import signal
import socket
from contextlib import contextmanager

import pytest
import yaml

from ansible_collections.benchlab.bench.tests.unit.helpers import fixture_text

from ansible_collections.benchlab.bench.plugins.plugin_utils.run import imports
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.imports import ImportProblem, import_manifest, read_confined

SECRET = 'root:$6$benchlab-test-secret-7f3a9c$not-a-real-hash:19000:0:99999:7:::\n'
TOKEN = 'benchlab-test-secret-7f3a9c'


def sha256(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


@contextmanager
def alarm(seconds=20):
    """Fail instead of hanging (a FIFO opened for reading blocks until a writer comes)."""
    def _timeout(_signum, _frame):
        raise AssertionError('the import hung (no answer within %d s)' % seconds)
    old = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def layout(tmp_path):
    """tmp/outside/shadow (the secret, 0600), tmp/m/ (the manifest's directory) with a good file."""
    outside = tmp_path / 'outside'
    outside.mkdir()
    secret = outside / 'shadow'
    secret.write_text(SECRET)
    secret.chmod(0o600)
    mdir = tmp_path / 'm'
    mdir.mkdir()
    (mdir / 'ok.txt').write_text(fixture_text('dd/coreutils-9.1-write-fdatasync.txt'))   # real dd output
    return tmp_path, mdir, secret


def _prepare(case, tmp, mdir, secret):
    """Make what `case` needs in the manifest's directory; return the entry's file name."""
    if case == 'absolute-path':
        return str(secret)
    if case == 'dotdot':
        return '../outside/shadow'
    if case == 'dotdot-inside-first':
        (mdir / 'sub').mkdir()
        return 'sub/../../outside/shadow'
    if case == 'symlink-to-secret':
        (mdir / 'out.txt').symlink_to(secret)
        return 'out.txt'
    if case == 'symlink-chain':
        (mdir / 'a.txt').symlink_to(mdir / 'b.txt')
        (mdir / 'b.txt').symlink_to('../outside/shadow')
        return 'a.txt'
    if case == 'symlinked-directory':
        (mdir / 'raw').symlink_to(tmp / 'outside')
        return 'raw/shadow'
    if case == 'dev-zero':
        return '/dev/zero'
    if case == 'dev-null':
        return '/dev/null'
    if case == 'symlink-to-dev-zero':
        (mdir / 'zero.txt').symlink_to('/dev/zero')
        return 'zero.txt'
    if case == 'proc-environ':
        return '/proc/self/environ'
    if case == 'proc-via-dotdot':
        return '../' * 12 + 'proc/self/environ'
    if case == 'fifo':
        os.mkfifo(str(mdir / 'pipe.txt'))
        return 'pipe.txt'
    if case == 'socket':
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(mdir / 'sock.txt'))
        sock.close()
        return 'sock.txt'
    if case == 'directory':
        (mdir / 'dir.txt').mkdir()
        return 'dir.txt'
    if case == 'above-the-cap':
        with open(str(mdir / 'big.txt'), 'wb') as f:   # sparse: costs no disk
            f.truncate(imports.MAX_FILE_BYTES + 1)
        return 'big.txt'
    raise AssertionError(case)


# (case id, what the problem says about it)
HOSTILE_ENTRIES = [
    ('absolute-path', "outside the manifest's directory"),
    ('dotdot', "outside the manifest's directory"),
    ('dotdot-inside-first', "outside the manifest's directory"),
    ('symlink-to-secret', "outside the manifest's directory"),
    ('symlink-chain', "outside the manifest's directory"),
    ('symlinked-directory', "outside the manifest's directory"),
    ('dev-zero', 'under /dev'),
    ('dev-null', 'under /dev'),
    ('symlink-to-dev-zero', 'under /dev'),
    ('proc-environ', 'under /proc'),
    ('proc-via-dotdot', 'under /proc'),
    ('fifo', 'not a regular file (a FIFO)'),
    ('socket', 'not a regular file (a socket)'),
    ('directory', 'not a regular file (a directory)'),
    ('above-the-cap', 'larger than %d bytes' % (16 * 1024 * 1024)),
]


@pytest.mark.parametrize('case, says', HOSTILE_ENTRIES, ids=[c[0] for c in HOSTILE_ENTRIES])
def test_an_entry_naming_what_the_manifest_may_not_name_is_refused_and_nothing_of_it_quoted(case, says, layout):
    tmp, mdir, secret = layout
    before = sha256(str(secret))
    name = _prepare(case, tmp, mdir, secret)
    manifest = mdir / 'manifest.yml'
    manifest.write_text(yaml.safe_dump({'name': 't', 'entries': [
        {'cell': 'good', 'tool': 'dd', 'file': 'ok.txt'}, {'cell': 'evil', 'tool': 'dd', 'file': name}]}))
    with alarm():
        with pytest.raises(ImportProblem) as e:
            import_manifest(str(manifest))
    text = str(e.value)
    assert e.value.problems[0].startswith("entries[1] (cell 'evil', tool dd): file %s" % name), e.value.problems
    assert says in e.value.problems[0], e.value.problems
    assert len(e.value.problems) == 1, e.value.problems   # the good entry imports (and nothing is returned)
    assert TOKEN not in text and 'root:' not in text and 'PATH=' not in text and 'first line' not in text
    assert sha256(str(secret)) == before


# manifests that are not a manifest (the user names the manifest; it still has to be a small regular file)
HOSTILE_MANIFESTS = [
    ('manifest-dev-zero', '/dev/zero', 'under /dev'),
    ('manifest-proc-environ', '/proc/self/environ', 'under /proc'),
    ('manifest-fifo', 'FIFO', 'not a regular file (a FIFO)'),
    ('manifest-a-secret-file', 'SECRET', 'the manifest must be a mapping with name and entries, got a mapping without'),
    ('manifest-broken-yaml-line', 'BROKEN', 'is not YAML: '),
]


@pytest.mark.parametrize('case, path, says', HOSTILE_MANIFESTS, ids=[c[0] for c in HOSTILE_MANIFESTS])
def test_a_manifest_that_is_not_a_small_regular_file_is_refused_without_quoting_it(case, path, says, layout):
    tmp, mdir, secret = layout
    before = sha256(str(secret))
    if path == 'FIFO':
        path = str(mdir / 'manifest.yml')
        os.mkfifo(path)
    elif path == 'SECRET':
        path = str(secret)
    elif path == 'BROKEN':   # a YAML error: its place, never PyYAML's quoted snippet of the text
        path = str(mdir / 'manifest.yml')
        (mdir / 'manifest.yml').write_text('name: t\nentries: [{cell: %s\n  - "x\n' % TOKEN)
    with alarm():
        with pytest.raises(ImportProblem) as e:
            import_manifest(path)
    assert says in str(e.value), str(e.value)
    assert TOKEN not in str(e.value) and 'root:' not in str(e.value) and 'PATH=' not in str(e.value)
    assert sha256(str(secret)) == before


def test_a_file_inside_the_directory_and_a_symlink_staying_inside_still_import(layout):
    """The shipped layout (files next to the manifest, in a sub-directory, a symlink among them)."""
    _tmp, mdir, _secret = layout
    (mdir / 'raw').mkdir()
    (mdir / 'raw' / 'b.txt').write_text((mdir / 'ok.txt').read_text())
    (mdir / 'link.txt').symlink_to('raw/b.txt')
    manifest = mdir / 'manifest.yml'
    manifest.write_text(yaml.safe_dump({'name': 't', 'entries': [
        {'cell': 'a', 'tool': 'dd', 'file': 'ok.txt'}, {'cell': 'b', 'tool': 'dd', 'file': 'raw/b.txt'},
        {'cell': 'c', 'tool': 'dd', 'file': 'link.txt'}, {'cell': 'd', 'tool': 'dd', 'file': './raw/../ok.txt'}]}))
    records, _hosts, _plan = import_manifest(str(manifest))
    # 268435456 bytes in 0.766629 s, as dd printed it: the same record from each path
    assert [round(r['metrics']['throughput']['value'], 2) for r in records] == [350.15] * 4


def test_a_file_whose_size_lies_is_read_no_further_than_the_cap(layout, monkeypatch):
    """Read in bounded chunks: a file that reports 0 bytes but holds more (as /proc files do) stops
    at the cap + 1 byte, never read to its end."""
    _tmp, mdir, _secret = layout
    big = mdir / 'grows.txt'
    big.write_bytes(b'x' * 5000)
    real_fstat, reads = os.fstat, []

    class Lying(object):
        def __init__(self, st):
            self.st_mode, self.st_size = st.st_mode, 0

    monkeypatch.setattr(imports.os, 'fstat', lambda fd: Lying(real_fstat(fd)))
    real_read = os.read
    monkeypatch.setattr(imports.os, 'read', lambda fd, n: reads.append(n) or real_read(fd, n))
    monkeypatch.setattr(imports, 'READ_CHUNK', 256)
    with pytest.raises(ValueError, match='larger than 1000 bytes'):
        read_confined('grows.txt', str(mdir), limit=1000)
    assert sum(reads) <= 1001 and max(reads) <= 256
