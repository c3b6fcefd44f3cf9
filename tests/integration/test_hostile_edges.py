"""Hostile edges of the controller's writers and of the history, through the real playbooks (each
case is what a user did, and the harm it did before is what the test measures):

- export through a run directory that is a symbolic link, and into an existing directory of the
  same name: the files there (a user's own notes) keep their sha256, the play fails naming the
  directory; into an empty directory or a new one it writes the bundle, which imports again;
- the report callback's run directory a symbolic link: refused before any host, the link's target
  untouched;
- a libpq connection string with a password in BENCHLAB_HISTORY_DB: refused without repeating the
  password anywhere (stdout, stderr, file names, files), no file made in the working directory;
- a history that refuses the store when the run ends (the SQLite file replaced by a link to another
  application's database during the run): ansible-playbook exits 1 naming the run, the run
  directory holds every record, and the printed command stores it once the history is back.

The runs are real import.yml runs of real dd outputs (tests/unit/fixtures/dd); no host is touched.
About 40 s here."""

import hashlib
import json
import os
import shlex
import sqlite3
from pathlib import Path

import yaml

from conftest import BIN, REPO, ansible_env, run

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import list_runs

DD_OUTPUT = REPO / 'tests' / 'unit' / 'fixtures' / 'dd' / 'coreutils-9.1-write-fdatasync.txt'   # real dd output
SECRET = 's3cret-7f0c2e'
NOTES = '# my own notes\nnot benchlab\'s\n'


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def manifest(tmp):
    d = Path(tmp) / 'imports'
    d.mkdir()
    for i in (1, 2):
        (d / ('dd%d.txt' % i)).write_text(DD_OUTPUT.read_text())
    (d / 'manifest.yml').write_text(yaml.safe_dump({'name': 'edges', 'entries': [
        {'cell': 'a', 'tool': 'dd', 'file': 'dd1.txt'}, {'cell': 'a', 'tool': 'dd', 'file': 'dd2.txt'}]}))
    return d / 'manifest.yml'


def imported(tmp, run_id, **extra):
    """An import.yml run stored in tmp/history.sqlite; (env, process)."""
    env = ansible_env(tmp, BENCHLAB_RUN_ID=run_id, **extra)
    proc = run([BIN / 'ansible-playbook', 'benchlab.bench.import', '-e', 'import_manifest=%s' % manifest(tmp)], env)
    return env, proc


def export(env, dest):
    return run([BIN / 'ansible-playbook', 'benchlab.bench.history', '-e', 'history_action=export',
                '-e', 'history_run=latest', '-e', 'history_export_dir=%s' % dest], env)


def test_export_never_writes_through_a_link_or_over_files(tmp_path):
    env, proc = imported(tmp_path, 'edges-1')
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    (elsewhere / 'report.md').write_text(NOTES)
    (elsewhere / 'results.json').write_text('{"mine": true}\n')
    linked = tmp_path / 'linked'
    linked.mkdir()
    (linked / 'edges-1').symlink_to(elsewhere)
    existing = tmp_path / 'existing'
    (existing / 'edges-1').mkdir(parents=True)
    (existing / 'edges-1' / 'report.md').write_text(NOTES)
    kept = dict((p, sha256(p)) for p in (elsewhere / 'report.md', elsewhere / 'results.json',
                                         existing / 'edges-1' / 'report.md'))
    # before: rc 0, report.md replaced in both
    through = export(env, linked)
    assert through.returncode != 0 and 'is a symbolic link (to %s)' % elsewhere in through.stdout, through.stdout[-3000:]
    over = export(env, existing)
    assert over.returncode != 0, over.stdout[-3000:]
    assert '%s exists and is not empty' % (existing / 'edges-1') in over.stdout, over.stdout[-3000:]
    assert dict((p, sha256(p)) for p in kept) == kept
    assert sorted(os.listdir(elsewhere)) == ['report.md', 'results.json']
    assert sorted(os.listdir(existing / 'edges-1')) == ['report.md']
    # an empty directory of that name, or none: the bundle, which imports as it was
    (tmp_path / 'empty' / 'edges-1').mkdir(parents=True)
    for dest in (tmp_path / 'empty', tmp_path / 'new'):
        ok = export(env, dest)
        assert ok.returncode == 0, ok.stdout[-3000:]
        bundle = dest / 'edges-1'
        assert {'results.json', 'report.md', 'history.json'} <= set(os.listdir(bundle))
        assert not [n for n in os.listdir(bundle) if n.endswith('.tmp')]
        assert json.loads((bundle / 'results.json').read_text())['run_id'] == 'edges-1'
    again = run([BIN / 'ansible-playbook', 'benchlab.bench.history', '-e', 'history_action=import',
                 '-e', 'history_run_dir=%s' % (tmp_path / 'new' / 'edges-1')], env)
    assert again.returncode == 0 and 'run edges-1 already in' in again.stdout, again.stdout[-3000:]


def test_a_run_directory_that_is_a_link_is_refused_before_anything_is_written(tmp_path):
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    (elsewhere / 'report.md').write_text(NOTES)
    (tmp_path / 'runs').mkdir()
    (tmp_path / 'runs' / 'edges-2').symlink_to(elsewhere)
    before = sha256(elsewhere / 'report.md')
    _env, proc = imported(tmp_path, 'edges-2')
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and 'is a symbolic link (to %s)' % elsewhere in out, out[-3000:]
    assert 'nothing is run' in out
    assert sha256(elsewhere / 'report.md') == before and os.listdir(elsewhere) == ['report.md']
    assert not (tmp_path / 'history.sqlite').exists() or list_runs(str(tmp_path / 'history.sqlite')) == []


def test_a_connection_string_with_a_password_is_refused_and_never_repeated(tmp_path):
    """Before: taken for a relative SQLite path, a file named with the password was made in the
    working directory, the terminal printed it, the play said 'stored', rc 0."""
    cwd = tmp_path / 'cwd'
    cwd.mkdir()
    value = 'host=127.0.0.1 port=5999 password=%s' % SECRET
    env = ansible_env(tmp_path, BENCHLAB_HISTORY_DB=value, BENCHLAB_RUN_ID='edges-3')
    outs = []
    for argv in ([BIN / 'ansible-playbook', REPO / 'playbooks' / 'import.yml', '-e',
                  'import_manifest=%s' % manifest(tmp_path)],
                 [BIN / 'ansible-playbook', REPO / 'playbooks' / 'history.yml', '-e', 'history_action=list']):
        proc = run(argv, env, cwd=cwd)
        outs.append(proc.stdout + proc.stderr)
        assert proc.returncode != 0, outs[-1][-3000:]
        assert 'PostgreSQL connection string (host=... port=... password=...) with password in it' in outs[-1], \
            outs[-1][-3000:]
    assert all(SECRET not in out for out in outs)
    assert os.listdir(cwd) == []
    for path in tmp_path.rglob('*'):
        assert SECRET not in path.name, path
        if path.is_file() and not path.is_symlink():
            assert SECRET.encode() not in path.read_bytes(), path


FAILED_STORE_PLAYBOOK = """---
- name: Import (the run under test)
  ansible.builtin.import_playbook: {import_yml}
- name: Another application's database takes the history's place before the run ends
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Move the history away (when the preflight made it) and link the other database there
      ansible.builtin.shell: 'if [ -e {db} ]; then mv {db} {db}.away; fi; ln -s {other} {db}'
      changed_when: true
"""


def test_a_run_the_history_refuses_at_the_end_fails_and_is_stored_later(tmp_path):
    """Before: '[ERROR] ... not stored', rc 0: a CI job gating on the exit code saw success."""
    db = tmp_path / 'history.sqlite'
    other = tmp_path / 'app.db'
    with sqlite3.connect(str(other)) as conn:
        conn.execute('CREATE TABLE accounts (name TEXT)')
    before = sha256(other)
    playbook = tmp_path / 'refused.yml'
    playbook.write_text(FAILED_STORE_PLAYBOOK.format(import_yml=REPO / 'playbooks' / 'import.yml', db=db, other=other))
    env = ansible_env(tmp_path, BENCHLAB_RUN_ID='edges-4')
    run_dir = tmp_path / 'runs' / 'edges-4'
    proc = run([BIN / 'ansible-playbook', playbook, '-e', 'import_manifest=%s' % manifest(tmp_path)], env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]
    assert 'run edges-4 not stored in the history: history_db %s is a symbolic link' % db in out, out[-3000:]
    assert 'the run fails: run edges-4 not stored in the history' in out
    assert sha256(other) == before
    results = json.loads((run_dir / 'results.json').read_text())
    assert len(results['records']) == 2 and (run_dir / 'report.md').is_file()
    line = next(l for l in out.splitlines() if 'to store run edges-4 later: ' in l)
    command = shlex.split(line.split('later: ', 1)[1])
    db.unlink()   # the history is back
    if os.path.exists(str(db) + '.away'):
        os.rename(str(db) + '.away', str(db))
    later = run([BIN / 'ansible-playbook'] + command[1:], env)
    assert later.returncode == 0 and 'run edges-4 stored in %s' % db in later.stdout, later.stdout[-3000:]
    assert [r['run_id'] for r in list_runs(str(db))] == ['edges-4']


REFERENCE_000 = REPO / 'playbooks' / 'files' / 'imports' / 'reference-000'


def reference_run(tmp, run_id, files, bs):
    """An import.yml run of reference 000's real dd transcripts, one cell, the given block size."""
    d = Path(tmp) / ('manifest-' + run_id)
    d.mkdir()
    entries = []
    for f in files:
        (d / f).write_text((REFERENCE_000 / f).read_text())
        entries.append({'cell': 'node', 'tool': 'dd', 'test': 'write', 'bs': bs, 'sync_after': True,
                        'params': {'count': 200000, 'data': 'zero'}, 'file': f})
    (d / 'manifest.yml').write_text(yaml.safe_dump({'name': 'ref000', 'entries': entries}))
    env = ansible_env(tmp, BENCHLAB_RUN_ID=run_id)
    proc = run([BIN / 'ansible-playbook', 'benchlab.bench.import', '-e', 'import_manifest=%s' % (d / 'manifest.yml')],
               env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return env


def test_compare_never_calls_a_regression_between_different_parameters(tmp_path):
    """Two runs of one benchmark name whose block sizes differ: before, 'REGRESSION ... -45 %' and
    nothing saying so. Now the difference is printed and the gate cannot judge those cells; told
    they are the same experiment (compare_ignore_params), the same data is a regression."""
    reference_run(tmp_path, 'ref-1m', ['nohup-test1.out', 'nohup-test2.out'], 1000000)
    env = reference_run(tmp_path, 'ref-4k', ['nohup-test3.out', 'nohup-test4.out'], 4096)
    argv = [BIN / 'ansible-playbook', 'benchlab.bench.compare', '-e', 'baseline=ref-1m', '-e', 'candidate=ref-4k',
            '-e', 'fail_on_regression=true']
    gate = run(argv, env)
    out = gate.stdout
    assert gate.returncode != 0 and 'could not be judged' in out, out[-3000:]
    assert 'DIFFERENT dd write node: bs 1000000 vs 4096 (baseline vs candidate)' in out, out[-3000:]
    assert 'different parameters (bs 1000000 vs 4096): not the same experiment' in out
    assert 'REGRESSION' not in out and 'regressed' not in out
    report = (tmp_path / 'runs' / 'compare-ref-4k-vs-ref-1m' / 'report.md').read_text()
    assert 'parameters differ: bs 1000000 vs 4096' in report
    same = run(argv + ['-e', 'compare_ignore_params=true'], env)
    assert same.returncode != 0 and 'REGRESSION dd write node' in same.stdout, same.stdout[-3000:]
    assert 'compared as the same experiment (ignore_params)' in same.stdout


def test_a_bundle_with_impossible_numbers_is_refused_before_it_is_stored(tmp_path):
    """A bundle (history.yml export) whose results.json was edited: 1e308 MB/s (and a negative
    duration, which the schema refused already). Before: stored, and the analysis of the next report
    failed after the store. Now refused naming each field; the history holds nothing of it."""
    env, proc = imported(tmp_path, 'edges-5')
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert export(env, tmp_path / 'bundles').returncode == 0
    bundle = tmp_path / 'bundles' / 'edges-5'
    doc = json.loads((bundle / 'results.json').read_text())
    doc['run_id'] = 'edges-5-forged'
    doc['records'][0]['metrics']['throughput']['value'] = 1e308
    doc['records'][1]['duration_s'] = -2.0
    (bundle / 'results.json').write_text(json.dumps(doc))
    (bundle / 'history.json').unlink()
    other = dict(env, BENCHLAB_HISTORY_DB=str(tmp_path / 'other.sqlite'))
    refused = run([BIN / 'ansible-playbook', 'benchlab.bench.history', '-e', 'history_action=import',
                   '-e', 'history_run_dir=%s' % bundle], other)
    out = ' '.join(refused.stdout.split())
    assert refused.returncode != 0, out[-3000:]
    assert 'records[0].metrics.throughput.value: 1e+308 MB/s is beyond what any machine measures' in out, out[-3000:]
    assert 'records[1].duration_s: -2.0 is less than the minimum of 0' in out
    assert not (tmp_path / 'other.sqlite').exists() or list_runs(str(tmp_path / 'other.sqlite')) == []
