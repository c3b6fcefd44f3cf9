"""Hostile input on the controller side (issue 27, findings 5, 7 and 9), through the real playbooks.

Each case reproduces what a hostile or unlucky user did, and checks the safe outcome:

- import.yml with a manifest naming a secret outside its directory (made by the test, 0600): refused
  naming the entry, nothing of the secret on stdout, stderr or the Ansible log (-vvv), the secret's
  sha256 unchanged, nothing stored; /dev/zero and a FIFO refused at once (no hang, no memory
  growth); an import killed while it parses stores nothing and leaves no directory;
- a resumed results.jsonl with forged records (an Infinity value, a metric name that is a
  spreadsheet formula, a unit with a CR LF): each line is named and set aside, the repetitions are
  measured again, results.json, results.csv, report.md and the history hold the valid records,
  results.jsonl keeps every line it had (sha256 of its old bytes unchanged);
- a report file that cannot be written: ansible-playbook exits 1, results.json and the history
  hold every record;
- two plays with one run id: the second is refused before any host is touched (also by
  bench_resume), the first completes with all its measurements;
- two runs measuring one cell at once: both records are not_quiet, each naming the other run.
"""

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import yaml

from conftest import BIN, REPO, load_run, run, run_dirs

from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import OWNER_ENV
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import list_runs

TOKEN = 'benchlab-secret-9d41c7'
DD_OUTPUT = REPO / 'tests' / 'unit' / 'fixtures' / 'dd' / 'coreutils-9.1-write-fdatasync.txt'   # real dd output


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def import_argv(manifest, *extra):
    return [BIN / 'ansible-playbook', 'benchlab.bench.import', '-e', 'import_manifest=%s' % manifest] + list(extra)


def bench_argv(matrix, *extra):
    return [BIN / 'ansible-playbook', REPO / 'playbooks' / 'bench.yml', '-i', REPO / 'inventories' / 'local',
            '-e', '@%s' % matrix, '-e', 'bench_install_tools=false'] + list(extra)


def stored_runs(env):
    db = env['BENCHLAB_HISTORY_DB']
    return list_runs(db) if os.path.exists(db) else []


def assert_no_host_touched(out):
    assert 'Traceback' not in out, out[-3000:]
    assert 'TASK [Gathering Facts]' not in out and 'PLAY [Run the benchmark matrix]' not in out, out[-3000:]


def write_matrix(path, name, benchmark, repetitions=1):
    path.write_text(yaml.safe_dump({'bench_matrix': {
        'name': name, 'repetitions': repetitions, 'methodology': {'cooldown_s': 0},
        'cells': [{'name': 'host-rootfs', 'host': 'localhost', 'path': '/var/tmp', 'labels': {'platform': 'host'}}],
        'benchmarks': [benchmark]}}))
    return path


DD_WRITE = {'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}


def fio_read(runtime):
    return {'name': 'fio-read', 'tool': 'fio',
            'params': {'rw': 'read', 'bs': '64k', 'size': '8M', 'runtime': runtime, 'time_based': True}}


# -- import.yml reads only what the manifest may name (finding 5) ---------------------------------

def test_an_import_naming_a_secret_outside_its_directory_quotes_nothing_of_it(tmp_path, env):
    secret = tmp_path / 'etc' / 'shadow'
    secret.parent.mkdir()
    secret.write_text('root:$6$%s$x:19000:0:99999:7:::\n' % TOKEN)
    secret.chmod(0o600)
    before = sha256(secret)
    mdir = tmp_path / 'imports'
    mdir.mkdir()
    (mdir / 'ok.txt').write_text(DD_OUTPUT.read_text())
    (mdir / 'link.txt').symlink_to(secret)
    manifest = mdir / 'manifest.yml'
    manifest.write_text(yaml.safe_dump({'name': 'evil', 'entries': [
        {'cell': 'a', 'tool': 'dd', 'file': 'ok.txt'},
        {'cell': 'b', 'tool': 'dd', 'file': str(secret)},
        {'cell': 'c', 'tool': 'dd', 'file': '../etc/shadow'},
        {'cell': 'd', 'tool': 'dd', 'file': 'link.txt'}]}))
    log = tmp_path / 'ansible.log'
    proc = run(import_argv(manifest, '-vvv'), dict(env, ANSIBLE_LOG_PATH=str(log)), timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "entries[1] (cell 'b', tool dd): file %s: outside the manifest's directory %s" % (secret, mdir) in out, out[-3000:]
    assert "entries[2] (cell 'c', tool dd): file ../etc/shadow (resolves to %s): outside" % secret in out
    assert "entries[3] (cell 'd', tool dd): file link.txt (resolves to %s): outside" % secret in out
    for text in (out, log.read_text()):
        assert TOKEN not in text and 'root:$6$' not in text
    assert sha256(secret) == before
    assert run_dirs(tmp_path / 'runs') == [] and stored_runs(env) == []


def test_an_import_of_dev_zero_and_a_fifo_is_refused_at_once(tmp_path, env):
    mdir = tmp_path / 'imports'
    mdir.mkdir()
    os.mkfifo(str(mdir / 'pipe.txt'))   # nobody ever writes it: reading it would wait forever
    (mdir / 'zero.txt').symlink_to('/dev/zero')
    manifest = mdir / 'manifest.yml'
    manifest.write_text(yaml.safe_dump({'name': 'endless', 'entries': [
        {'cell': 'a', 'tool': 'dd', 'file': '/dev/zero'}, {'cell': 'b', 'tool': 'dd', 'file': 'pipe.txt'},
        {'cell': 'c', 'tool': 'dd', 'file': 'zero.txt'}, {'cell': 'd', 'tool': 'dd', 'file': '/proc/self/environ'}]}))
    proc = run(import_argv(manifest), env, timeout=300)   # before: /dev/zero grew the controller to GBs, a FIFO hung
    out = ' '.join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0, out[-3000:]
    assert "entries[0] (cell 'a', tool dd): file /dev/zero: under /dev, not a tool's output: refused, nothing read" in out
    assert "entries[1] (cell 'b', tool dd): file pipe.txt: not a regular file (a FIFO), refused, nothing read" in out
    assert "entries[2] (cell 'c', tool dd): file zero.txt (resolves to /dev/zero): under /dev" in out
    assert "entries[3] (cell 'd', tool dd): file /proc/self/environ" in out and 'under /proc' in out
    assert 'PATH=' not in out
    assert run_dirs(tmp_path / 'runs') == [] and stored_runs(env) == []


def test_an_import_killed_while_it_parses_stores_nothing(tmp_path, env):
    """40 entries of 15 MiB outputs (symlinks inside the manifest's directory to one real file) keep
    the import task busy; SIGTERM then. Before: an empty run 'interrupted' was stored."""
    mdir = tmp_path / 'imports'
    mdir.mkdir()
    with open(str(mdir / 'big.txt'), 'w') as f:
        f.write(('x' * 70 + '\n') * (15 * 1024 * 1024 // 71))
        f.write(DD_OUTPUT.read_text())
    entries = []
    for i in range(40):
        (mdir / ('b%d.txt' % i)).symlink_to('big.txt')
        entries.append({'cell': 'c%d' % (i % 2), 'tool': 'dd', 'file': 'b%d.txt' % i})
    (mdir / 'manifest.yml').write_text(yaml.safe_dump({'name': 'slow', 'entries': entries}))
    env = dict(env, BENCHLAB_RUN_ID='killed-import')
    out_path = tmp_path / 'out.txt'
    with open(str(out_path), 'w') as out:
        proc = subprocess.Popen([str(a) for a in import_argv(mdir / 'manifest.yml')], cwd=str(REPO), env=env,
                                stdout=out, stderr=subprocess.STDOUT)
        try:
            for _i in range(1200):
                if 'TASK [Parse every entry' in out_path.read_text():
                    break
                time.sleep(0.1)
            time.sleep(1)
            assert proc.poll() is None, out_path.read_text()[-3000:]   # still parsing
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = out_path.read_text()
    assert 'Traceback' not in text and 'benchlab history: run' not in text, text[-3000:]
    assert not (tmp_path / 'runs').exists() or os.listdir(str(tmp_path / 'runs')) == [], text[-3000:]
    assert stored_runs(env) == []


# -- resumed records are validated (finding 7) ---------------------------------------------------

def test_forged_resumed_records_are_set_aside_and_the_report_completes(tmp_path, env):
    matrix = write_matrix(tmp_path / 'matrix.yml', 'forged', DD_WRITE, repetitions=3)
    env = dict(env, BENCHLAB_RUN_ID='forged')
    first = run(bench_argv(matrix), env, timeout=600)
    assert first.returncode == 0, first.stdout[-3000:]
    run_dir = tmp_path / 'runs' / 'forged'
    jsonl = run_dir / 'results.jsonl'
    recs = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [r['repetition'] for r in recs] == [1, 2, 3]
    recs[1]['metrics']['throughput']['value'] = float('inf')               # Infinity
    recs[2]['metrics']['=HYPERLINK("http://x","y")'] = dict(recs[2]['metrics']['throughput'])
    recs[2]['metrics']['throughput']['unit'] = 'MB/s\r\n=1+1'
    jsonl.write_text(''.join(json.dumps(r) + '\n' for r in recs))
    forged_bytes = jsonl.read_bytes()
    proc = run(bench_argv(matrix), env, timeout=600)
    out = ' '.join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 0, out[-3000:]    # before: rc 0 too, but a warning and no report of the resume
    assert 'Traceback' not in out and 'Callback dispatch' not in out and 'Failure using method' not in out
    assert '%s line 2: not a valid record, set aside (never rendered): metrics.throughput.value: not a finite number' % (
        jsonl) in out, out[-3000:]
    assert '%s line 3: not a valid record, set aside' % jsonl in out
    results, lines = load_run(run_dir)
    assert jsonl.read_bytes()[:len(forged_bytes)] == forged_bytes           # nothing dropped from the file
    assert [r['repetition'] for r in lines] == [1, 2, 3, 2, 3]              # the set-aside repetitions measured again
    assert sorted(r['repetition'] for r in results['records']) == [1, 2, 3]
    assert all(r['metrics']['throughput']['value'] < 1e12 for r in results['records'])
    assert [i['task'] for i in results['invalid']] == ['results.jsonl line 2 (resumed)', 'results.jsonl line 3 (resumed)']
    csv_text = (run_dir / 'results.csv').read_text()
    assert 'HYPERLINK' not in csv_text and '=1+1' not in csv_text and 'inf' not in csv_text.lower()
    assert 'HYPERLINK' not in (run_dir / 'report.md').read_text().split('## Invalid records')[0]
    assert [r['n_records'] for r in stored_runs(env)] == [3]


def test_a_report_file_that_cannot_be_written_fails_the_run_after_storing_the_rest(tmp_path, env):
    matrix = write_matrix(tmp_path / 'matrix.yml', 'unwritable', DD_WRITE)
    env = dict(env, BENCHLAB_RUN_ID='unwritable')
    run_dir = tmp_path / 'runs' / 'unwritable'
    (run_dir / 'report.html' / 'in-the-way').mkdir(parents=True)   # report.html cannot replace a directory
    proc = run(bench_argv(matrix), env, timeout=600)
    out = ' '.join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 1, out[-3000:]    # before: rc 0 with an error line
    assert 'benchlab.bench.report: %s not written: IsADirectoryError' % (run_dir / 'report.html') in out, out[-3000:]
    assert 'benchlab.bench.report: the run fails: report.html not written (see above); what was written is kept' in out
    results, lines = load_run(run_dir)
    assert len(results['records']) == 1 == len(lines)
    assert (run_dir / 'report.md').is_file() and (run_dir / 'results.csv').is_file()
    assert [r['n_records'] for r in stored_runs(env)] == [1]


# -- one play per run id; another run on the host is competition (finding 9) -----------------------

def _wait_for(predicate, what, proc, out_path, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        assert proc.poll() is None, '%s never happened: %s' % (what, Path(out_path).read_text()[-3000:])
        time.sleep(0.1)
    raise AssertionError('%s never happened' % what)


def _tool_of_run(run_id):
    """Whether a process carrying run_id's mark (a benchmark tool of that run) runs now."""
    needle = ('%s=%s' % (OWNER_ENV, run_id)).encode()
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/environ' % entry, 'rb') as f:
                    if needle in f.read().split(b'\0'):
                        return True
            except OSError:
                continue
    return False


def _start(argv, env, out_path):
    out = open(str(out_path), 'w')
    proc = subprocess.Popen([str(a) for a in argv], cwd=str(REPO), env=env, stdout=out, stderr=subprocess.STDOUT)
    out.close()
    return proc


def test_a_second_play_with_a_run_id_in_use_is_refused_before_any_host(tmp_path, env):
    matrix = write_matrix(tmp_path / 'matrix.yml', 'one-id', fio_read(8))
    first_env = dict(env, BENCHLAB_RUN_ID='one-id')
    first = _start(bench_argv(matrix), first_env, tmp_path / 'first.txt')
    try:
        _wait_for(lambda: _tool_of_run('one-id'), 'the first run\'s fio', first, tmp_path / 'first.txt')
        second = run(bench_argv(matrix), first_env, timeout=300)     # the same run id
        third = run(bench_argv(matrix, '-e', 'bench_resume=one-id'), dict(env, BENCHLAB_RUN_ID='other-id'), timeout=300)
        assert first.wait(timeout=600) == 0, (tmp_path / 'first.txt').read_text()[-3000:]
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    for proc in (second, third):
        out = ' '.join((proc.stdout + proc.stderr).split())
        assert proc.returncode != 0, out[-3000:]
        assert 'run id one-id is in use by a running play (pid %d on ' % first.pid in out, out[-3000:]
        assert_no_host_touched(out)
    assert 'benchlab history: run one-id stored' not in second.stdout + third.stdout
    results, lines = load_run(tmp_path / 'runs' / 'one-id')
    assert len(results['records']) == 1 == len(lines)        # the first run's measurement, whole
    assert [(r['run_id'], r['n_records']) for r in stored_runs(env)] == [('one-id', 1)]
    assert not (tmp_path / 'runs' / 'other-id').exists()


def test_two_runs_measuring_one_cell_at_once_are_both_not_quiet(tmp_path, env):
    """Run B measures for 25 s; run A starts once B's fio runs and measures for 3 s inside it. Before:
    neither record was flagged though both ran slower."""
    env_b = dict(env, BENCHLAB_RUN_ID='run-b')
    env_a = dict(env, BENCHLAB_RUN_ID='run-a')
    b = _start(bench_argv(write_matrix(tmp_path / 'b.yml', 'run-b', fio_read(25))), env_b, tmp_path / 'b.txt')
    try:
        _wait_for(lambda: _tool_of_run('run-b'), 'run B\'s fio', b, tmp_path / 'b.txt')
        a = run(bench_argv(write_matrix(tmp_path / 'a.yml', 'run-a', fio_read(3))), env_a, timeout=600)
        assert a.returncode == 0, a.stdout[-3000:]
        assert b.wait(timeout=600) == 0, (tmp_path / 'b.txt').read_text()[-3000:]
    finally:
        if b.poll() is None:
            b.kill()
            b.wait()
    for me, other in (('run-a', 'run-b'), ('run-b', 'run-a')):
        (rec,) = load_run(tmp_path / 'runs' / me)[0]['records']
        guards = rec['params']['guards']
        assert guards['quiet'] is False and guards['other_runs'] == [other], guards
        assert 'not_quiet' in rec['flags']
        assert any('another benchlab run (run id %s) measured on this host at the same time: fio[' % other in w
                   for w in rec['warnings']), rec['warnings']
