# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets never appear in output, logs or reports (issue 9): a grep over everything a real play leaves.

Random secrets, one per place, are planted where users keep them: inventory host vars
(ansible_become_password, a custom token), inventory group_vars, a `-e @file` extra-vars file, an
environment variable of the controller (inherited by the modules on localhost), and the DRBD
shared_secret given to the real benchlab.bench.drbd role (inventory group vars, then `-e @file`
with --diff). The real playbooks run with -vvv and ANSIBLE_LOG_PATH; Ansible's local, remote and
async temp directories are redirected into the test's directory. Then every secret is searched
for in stdout, stderr, the log, every file under the test's directory (run directory, reports,
the history database: its raw bytes, every text column and every zlib-compressed document inside
it, the cell directory, Ansible's temp directories), except the inputs the secrets were planted
in and the DRBD config directory, where the secret must be. Positive controls: a non-secret
marker planted next to the secrets is found in each place searched, Ansible really loaded the
inventory secrets, and the DRBD secret reached the rendered resource that drbdadm accepted.
The module-level masking of the DRBD secret is tested in test_drbd.py.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sqlite3
import stat
import subprocess
import zlib
from pathlib import Path

import pytest
import yaml

from conftest import BIN, ansible_env, load_run, run, run_dirs


def plant(*places):
    """A distinct random secret for each place, so a hit says where it was planted."""
    return {place: 'sEcr3t-%s' % secrets.token_hex(16) for place in places}


def sqlite_values(path):
    """(where, bytes) for every value of every table of a SQLite file, zlib blobs also decompressed."""
    conn = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for i, row in enumerate(conn.execute('SELECT * FROM "%s"' % table)):
                for j, value in enumerate(row):
                    where = '%s[table %s row %d col %d]' % (path, table, i, j)
                    if isinstance(value, bytes):
                        yield where, value
                        try:
                            yield where + ' (zlib-decompressed)', zlib.decompress(value)
                        except zlib.error:
                            pass
                    elif isinstance(value, str):
                        yield where, value.encode('utf-8')
    finally:
        conn.close()


def left_behind(root, exclude=()):
    """(where, bytes) for every regular file under root (symlinks not followed), but the excluded
    paths; SQLite files also value by value."""
    exclude = [Path(e) for e in exclude]
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            if path.is_symlink() or any(path == e or e in path.parents for e in exclude):
                continue
            data = path.read_bytes()
            yield str(path), data
            if data.startswith(b'SQLite format 3\0'):
                yield from sqlite_values(path)


def hits(needles, blobs):
    """Every occurrence of each needle: (place, where, offset, context)."""
    found = []
    for where, data in blobs:
        for place, needle in needles.items():
            offset = data.find(needle.encode('utf-8'))
            while offset >= 0:
                found.append((place, where, offset, data[max(0, offset - 80):offset + len(needle) + 80]))
                offset = data.find(needle.encode('utf-8'), offset + 1)
    return found


def assert_no_leak(planted, blobs):
    leaks = hits(planted, blobs)
    assert not leaks, 'secret(s) leaked:\n' + '\n'.join(
        'the %s secret in %s at offset %d: %r' % (place, where, offset, ctx) for place, where, offset, ctx in leaks)


def write_yaml(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


def secret_env(tmp_path, planted):
    """The controller's environment: a cloud secret in it, the log and Ansible's temp dirs in tmp_path."""
    return ansible_env(tmp_path, AWS_SECRET_ACCESS_KEY=planted['controller env AWS_SECRET_ACCESS_KEY'],
                       ANSIBLE_LOG_PATH=str(tmp_path / 'ansible.log'),
                       ANSIBLE_LOCAL_TEMP=str(tmp_path / 'ansible-local'),
                       ANSIBLE_REMOTE_TEMP=str(tmp_path / 'ansible-remote'),
                       ANSIBLE_ASYNC_DIR=str(tmp_path / 'ansible-async'))


def inventory(tmp_path, planted, host_vars=None, groups=None):
    """An inventory directory: localhost on the venv's Python with secrets in its host and group vars."""
    inv = tmp_path / 'inventory'
    host = {'ansible_connection': 'local', 'ansible_python_interpreter': str(BIN / 'python'),
            'ansible_become_password': planted['host var ansible_become_password'],
            'bench_api_token': planted['host var bench_api_token']}
    host.update(host_vars or {})
    write_yaml(inv / 'hosts.yml', {'all': {'hosts': {'localhost': host},
                                           'children': dict((g, {'hosts': {'localhost': {}}}) for g in groups or [])}})
    write_yaml(inv / 'group_vars' / 'all.yml', {'db_password': planted['group_vars db_password']})
    return inv


def inventory_loaded(env, inv, planted):
    """Positive control: Ansible itself reads the inventory secrets as localhost's variables. (Printing
    them is what ansible-inventory is for: it runs without the log, outside what is searched.)"""
    env = dict((k, v) for k, v in env.items() if k != 'ANSIBLE_LOG_PATH')
    p = run([BIN / 'ansible-inventory', '-i', inv, '--host', 'localhost'], env)
    assert p.returncode == 0, p.stderr
    loaded = json.loads(p.stdout)
    for var, place in (('ansible_become_password', 'host var ansible_become_password'),
                       ('bench_api_token', 'host var bench_api_token'), ('db_password', 'group_vars db_password')):
        assert loaded[var] == planted[place], var


def env_reaches_modules(env, inv, planted):
    """Positive control: a module on localhost inherits the controller's environment, secret included."""
    env = dict((k, v) for k, v in env.items() if k != 'ANSIBLE_LOG_PATH')
    p = run([BIN / 'ansible', 'localhost', '-i', inv, '-m', 'ansible.builtin.command', '-a', 'printenv AWS_SECRET_ACCESS_KEY',
             '-o'], env)
    assert p.returncode == 0 and planted['controller env AWS_SECRET_ACCESS_KEY'] in p.stdout, p.stdout + p.stderr


def private(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_bench_play_leaves_no_secret_in_output_log_reports_or_history(tmp_path):
    planted = plant('host var ansible_become_password', 'host var bench_api_token', 'group_vars db_password',
                    'extra vars file bench_db_password', 'controller env AWS_SECRET_ACCESS_KEY')
    marker = secrets.token_hex(8)  # not a secret: must show up everywhere the grep looks
    env = secret_env(tmp_path, planted)
    env['BENCHLAB_RUN_LABEL'] = 'runlabel-' + marker
    inv = inventory(tmp_path, planted)
    cell = tmp_path / 'cell'
    cell.mkdir()
    matrix = write_yaml(tmp_path / 'matrix.yml', {'bench_matrix': {
        'name': 'secrets-' + marker, 'repetitions': 1, 'methodology': {'cooldown_s': 0, 'quiesce': False},
        'cells': [{'name': 'cell-' + marker, 'host': 'localhost', 'path': str(cell), 'labels': {'owner': 'label-' + marker}}],
        'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]}})
    secret_vars = write_yaml(tmp_path / 'secret-vars.yml', {'bench_db_password': planted['extra vars file bench_db_password']})
    inventory_loaded(env, inv, planted)
    env_reaches_modules(env, inv, planted)

    p = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', inv, '-e', '@%s' % matrix, '-e', '@%s' % secret_vars,
             '-e', 'bench_install_tools=false', '-vvv'], env, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results, jsonl = load_run(run_dir)
    assert results['status'] == 'complete' and len(results['records']) == len(jsonl) == 1
    assert jsonl[0]['metrics']['throughput']['value'] > 0

    outputs = [('stdout', p.stdout.encode()), ('stderr', p.stderr.encode())]
    everything = outputs + list(left_behind(tmp_path, exclude=[inv, secret_vars]))
    # positive controls: the search does see the marker in each place it looks (so it would see a secret there)
    seen = set(where for _place, where, _off, _ctx in hits({'marker': marker}, everything))
    expected = {'stdout', str(tmp_path / 'ansible.log'), str(tmp_path / 'history.sqlite')}
    expected |= set(str(run_dir / name) for name in ('results.jsonl', 'results.json', 'results.csv', 'report.md',
                                                     'report.html', 'plan.json'))
    assert expected <= seen, expected - seen
    assert any('zlib-decompressed' in where for _place, where, _off, _ctx in hits({'m': 'label-' + marker}, everything)), \
        'the label is not in the history documents: the search does not reach inside them'
    assert "'owner': 'label-%s'" % marker in p.stdout or '"owner": "label-%s"' % marker in p.stdout, \
        'the -vvv output does not show the module arguments'

    assert_no_leak(planted, everything)

    # nothing of the benchmark is left in the cell directory; what the run wrote is private
    assert list(cell.iterdir()) == []
    assert private(run_dir) == 0o700
    assert private(run_dir.parent) == 0o700  # the report directory it made: the run ids are private too
    files = [f for f in run_dir.iterdir() if f.is_file() and not f.is_symlink()]
    assert len(files) >= 6
    for f in files:
        assert private(f) == 0o600, f
    assert private(tmp_path / 'history.sqlite') == 0o600


DRBD = pytest.mark.skipif(not shutil.which('drbdadm'), reason='drbd-utils (drbdadm) is not installed')


def drbd_setup(tmp_path, planted):
    """A private drbd.conf + drbd.d and an inventory that puts localhost in drbd_pair (playbooks/drbd.yml)
    with a resource whose shared secret is in the inventory; returns (env, inventory, conf dir, main config)."""
    env = secret_env(tmp_path, planted)
    conf = tmp_path / 'drbd.d'
    conf.mkdir()
    main = tmp_path / 'drbd.conf'
    main.write_text('include "%s/*.res";\n' % conf)
    inv = inventory(tmp_path, planted, groups=['drbd_pair'], host_vars={
        'drbd_resources': [drbd_resource(planted['drbd shared_secret in inventory'])], 'drbd_install': False,
        'drbd_config_dir': str(conf), 'drbd_main_config': str(main)})
    inventory_loaded(env, inv, planted)
    return env, inv, conf, main


def drbd_resource(secret):
    return {'name': 'bench0', 'protocol': 'C', 'device': '/dev/drbd0', 'disk': '/dev/sdb1', 'meta_disk': 'internal',
            'shared_secret': secret, 'cram_hmac_alg': 'sha256',
            'nodes': [{'name': 'node1', 'address': '10.2.0.1:7788'}, {'name': 'node2', 'address': '10.2.0.2:7788'}]}


def drbd_play(env, inv, *extra):
    p = run([BIN / 'ansible-playbook', 'playbooks/drbd.yml', '-i', inv, '-vvv'] + list(extra), env, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p


def drbdadm_accepts(main):
    check = subprocess.run(['drbdadm', '-c', str(main), 'sh-nop'], capture_output=True, text=True, check=False)
    return check.returncode == 0, check.stderr


@DRBD
def test_drbd_play_leaves_no_secret_in_output_or_log(tmp_path):
    planted = plant('host var ansible_become_password', 'host var bench_api_token', 'group_vars db_password',
                    'controller env AWS_SECRET_ACCESS_KEY', 'drbd shared_secret in inventory')
    env, inv, conf, main = drbd_setup(tmp_path, planted)
    p = drbd_play(env, inv, '--diff')
    # positive controls: the secret reached the resource file the real drbdadm accepts; the log has the -vvv diff
    assert 'shared-secret %s;' % planted['drbd shared_secret in inventory'] in (conf / 'bench0.res').read_text()
    ok, err = drbdadm_accepts(main)
    assert ok, err
    assert 'Check the installed configuration with drbdadm' in p.stdout
    assert '+        shared-secret ********;' in p.stdout
    assert '+        shared-secret ********;' in (tmp_path / 'ansible.log').read_text()
    assert sorted(os.listdir(conf)) == ['bench0.res']
    everything = [('stdout', p.stdout.encode()), ('stderr', p.stderr.encode())]
    everything += list(left_behind(tmp_path, exclude=[inv, conf]))
    assert_no_leak(planted, everything)


@DRBD
def test_drbd_secret_rotation_with_diff_prints_neither_secret(tmp_path):
    """The installed file holds the old secret; a new one comes from `-e @file`, run with --diff."""
    planted = plant('host var ansible_become_password', 'host var bench_api_token', 'group_vars db_password',
                    'controller env AWS_SECRET_ACCESS_KEY', 'drbd shared_secret in inventory',
                    'drbd shared_secret in -e @file')
    env, inv, conf, main = drbd_setup(tmp_path, planted)
    p1 = drbd_play(env, inv)
    res_file = conf / 'bench0.res'
    assert 'shared-secret %s;' % planted['drbd shared_secret in inventory'] in res_file.read_text()
    secret_vars = write_yaml(tmp_path / 'drbd-secret.yml',
                             {'drbd_resources': [drbd_resource(planted['drbd shared_secret in -e @file'])]})
    p2 = drbd_play(env, inv, '-e', '@%s' % secret_vars, '--diff')
    # positive controls: the rotation happened (new secret installed, old one gone) and its diff is shown
    text = res_file.read_text()
    assert 'shared-secret %s;' % planted['drbd shared_secret in -e @file'] in text
    assert planted['drbd shared_secret in inventory'] not in text
    ok, err = drbdadm_accepts(main)
    assert ok, err
    assert '+        shared-secret ********;' in p2.stdout, 'the diff of the rotation is not shown'
    assert '-        shared-secret ******** (old);' in p2.stdout, 'the rotation is not visible in the diff'
    assert sorted(os.listdir(conf)) == ['bench0.res']
    everything = [('run 1 stdout', p1.stdout.encode()), ('run 1 stderr', p1.stderr.encode()),
                  ('run 2 stdout', p2.stdout.encode()), ('run 2 stderr', p2.stderr.encode())]
    everything += list(left_behind(tmp_path, exclude=[inv, secret_vars, conf]))
    assert_no_leak(planted, everything)
