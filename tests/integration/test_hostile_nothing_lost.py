"""Hostile corpus, nothing lost (issue 14 sections 5, 8, 9), through the real playbook.

Each case is a playbook run on this machine that must end with a clear error before any host is
touched (no facts, no install, no benchmark task, no record), or with the safe outcome, and with
nothing of an earlier run lost:

- a read-only output directory, a read-only history directory (real read-only tmpfs mounts: root
  writes a chmod 0500 directory), a full output file system (a 4 MiB tmpfs), an output path that
  is a file;
- a run id with a trailing newline;
- a second controller (another output directory) reusing a run id already in the history;
- a resumed run whose results.jsonl ends in a partial line, or holds a line that is JSON but not
  an object;
- a cell whose path is the project directory (where benchlab-runs lives), with a run that fails;
- `--check`: a dry run is never taken for a run (no record, nothing in the history).
"""

import json
import os
import subprocess
import sqlite3
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from conftest import BIN, REPO, FILES, load_run, run, run_dirs

TINY = FILES / 'matrix-tiny.yml'


def playbook(*extra, matrix=TINY):
    return [BIN / 'ansible-playbook', REPO / 'playbooks' / 'bench.yml', '-i', REPO / 'inventories' / 'local',
            '-e', '@%s' % matrix, '-e', 'bench_install_tools=false'] + list(extra)


def assert_no_host_touched(out):
    assert 'Traceback' not in out, out[-3000:]
    assert 'TASK [Gathering Facts]' not in out and 'TASK [Install the tools' not in out, out[-3000:]
    assert 'TASK [benchlab.bench.bench_run' not in out, out[-3000:]
    assert 'PLAY [Run the benchmark matrix]' not in out, out[-3000:]


@contextmanager
def tmpfs(path, size='1m', readonly=False):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=%s,mode=0755' % size, 'tmpfs', str(path)], check=True)
    try:
        if readonly:
            subprocess.run(['mount', '-o', 'remount,ro', str(path)], check=True)
        yield path
    finally:
        subprocess.run(['umount', '-l', str(path)], check=True)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason='mounting a tmpfs needs root')

# (case id, the output directory's set-up, the message the play must stop with)
OUTPUT_CASES = [
    ('readonly-output-dir', 'ro', 'benchlab output directory {runs} is not writable (Read-only file system in {mnt})'),
    ('readonly-history-dir', 'history-ro', 'benchlab history directory {mnt} is not writable (Read-only file system'),
    ('full-output-dir', 'full', 'benchlab output directory {runs}: only 0 MiB free on its file system ({mnt}), at '
                                'least 64 MiB needed'),
    ('output-dir-is-a-file', 'file', 'benchlab output directory {runs} is not a directory'),
]


@needs_root
@pytest.mark.parametrize('case_id,setup,expect', OUTPUT_CASES, ids=[c[0] for c in OUTPUT_CASES])
def test_an_output_directory_that_cannot_keep_the_results_stops_the_play_before_any_host(
        case_id, setup, expect, tmp_path, env):
    mnt = tmp_path / 'mnt'
    runs = mnt / 'runs'
    with tmpfs(mnt, size='4m' if setup == 'full' else '1m', readonly=setup in ('ro', 'history-ro')):
        if setup == 'file':
            runs.write_text('not a directory\n')
        if setup == 'full':  # a 4 MiB file system with 64 KiB left
            (mnt / 'filler').write_bytes(b'x' * (4 * 1024 * 1024 - 64 * 1024))
        if setup == 'history-ro':
            env = dict(env, BENCHLAB_HISTORY_DB=str(mnt / 'history.sqlite'))
        else:
            env = dict(env, BENCHLAB_REPORT_DIR=str(runs))
        proc = run(playbook(), env, timeout=300)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out[-3000:]
        assert expect.format(runs=runs, mnt=mnt) in out, out[-3000:]
        assert 'TASK [Refuse to start when the run' in out
        assert_no_host_touched(out)
        assert sorted(p.name for p in mnt.iterdir()) == {'file': ['runs'], 'full': ['filler']}.get(setup, [])
    assert not (tmp_path / 'runs').exists() or run_dirs(tmp_path / 'runs') == []


def test_a_run_id_with_a_trailing_newline_stops_the_play_before_any_host(tmp_path, env):
    proc = run(playbook(), dict(env, BENCHLAB_RUN_ID='nightly-1\n'), timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "run_id 'nightly-1\\n': leading or trailing white space (a newline?) is not part of a run id" in out, out[-3000:]
    assert_no_host_touched(out)
    assert not (tmp_path / 'runs').exists()


def test_a_second_controller_reusing_a_run_id_is_refused_and_the_first_run_kept(tmp_path, env):
    env = dict(env, BENCHLAB_RUN_ID='shared-id')
    first = run(playbook(), env, timeout=600)
    assert first.returncode == 0, first.stdout[-3000:]
    db = env['BENCHLAB_HISTORY_DB']
    before = sqlite3.connect(db).execute('SELECT run_id, n_records, digest, controller FROM runs').fetchall()
    assert [r[:2] for r in before] == [('shared-id', 1)]
    # another controller: its own output directory, the same team history
    other = dict(env, BENCHLAB_REPORT_DIR=str(tmp_path / 'other-controller' / 'runs'))
    second = run(playbook(), other, timeout=300)
    out = second.stdout + second.stderr
    assert second.returncode != 0, out[-3000:]
    assert 'run id shared-id is already in the history %s, stored' % db in out, out[-3000:]
    assert 'by another controller (%s' % before[0][3] in out
    assert_no_host_touched(out)
    assert sqlite3.connect(db).execute('SELECT run_id, n_records, digest, controller FROM runs').fetchall() == before
    # the first controller resumes its own run: allowed (nothing left to measure)
    again = run(playbook(), env, timeout=600)
    assert again.returncode == 0, again.stdout[-3000:]
    assert 'benchlab history: run shared-id stored' in again.stdout


def test_resume_repairs_a_partial_last_line_and_keeps_every_complete_record(tmp_path, env):
    matrix = tmp_path / 'matrix.yml'
    m = yaml.safe_load(TINY.read_text())
    m['bench_matrix']['repetitions'] = 2
    matrix.write_text(yaml.safe_dump(m))
    env = dict(env, BENCHLAB_RUN_ID='cut-short')
    first = run(playbook(matrix=matrix), env, timeout=600)
    assert first.returncode == 0, first.stdout[-3000:]
    run_dir = tmp_path / 'runs' / 'cut-short'
    jsonl = run_dir / 'results.jsonl'
    lines = jsonl.read_text().splitlines(True)
    assert len(lines) == 2
    # the machine died while writing the second record: half of it is on disk
    jsonl.write_text(lines[0] + lines[1][:40])
    proc = run(playbook(matrix=matrix), env, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert 'Traceback' not in out
    assert '%s: dropped a partial last line of 40 bytes' % jsonl in ' '.join(out.split()), out[-3000:]
    results, records = load_run(run_dir)
    assert len(records) == 2 and records[0] == json.loads(lines[0])  # the complete one kept, one measured again
    assert results['status'] == 'complete' and len(results['records']) == 2


def test_resume_skips_a_line_that_is_json_but_not_an_object_naming_its_line(tmp_path, env):
    env = dict(env, BENCHLAB_RUN_ID='odd-lines')
    first = run(playbook(), env, timeout=600)
    assert first.returncode == 0, first.stdout[-3000:]
    run_dir = tmp_path / 'runs' / 'odd-lines'
    jsonl = run_dir / 'results.jsonl'
    good = jsonl.read_text()
    jsonl.write_text('[1, 2, 3]\n' + good + '"a string"\n')
    proc = run(playbook(), env, timeout=600)
    out = ' '.join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 0, out[-3000:]
    assert 'Traceback' not in out
    assert '%s line 1: JSON but not an object (list), skipped' % jsonl in out, out[-3000:]
    assert '%s line 3: JSON but not an object (str), skipped' % jsonl in out
    results = json.loads((run_dir / 'results.json').read_text())
    assert len(results['records']) == 1 and results['plan']['resume']['skipped'] == 1  # the record still counts
    assert jsonl.read_text() == '[1, 2, 3]\n' + good + '"a string"\n'  # nothing dropped from the file


def test_a_failing_run_in_the_project_directory_keeps_the_runs_and_the_user_s_files(tmp_path, env):
    """The cell path is the project directory: benchlab-runs (the default output directory) and a
    user's benchlab-notes live there. A run that fails (fio outliving its timeout) must not take
    them with its cleanup: the report of the run is written and both directories are intact."""
    project = tmp_path / 'project'
    (project / 'benchlab-notes').mkdir(parents=True)
    (project / 'benchlab-notes' / 'todo.txt').write_text('keep me\n')
    matrix = tmp_path / 'matrix.yml'
    matrix.write_text(yaml.safe_dump({'bench_matrix': {
        'name': 'project-cell', 'repetitions': 1, 'methodology': {'cooldown_s': 0, 'quiesce': False},
        'cells': [{'name': 'project', 'host': 'localhost', 'path': str(project)}],
        'benchmarks': [{'name': 'fio-long', 'tool': 'fio', 'methodology': {'timeout_s': 3},
                        'params': {'rw': 'read', 'bs': '64k', 'size': '4M', 'runtime': 60, 'time_based': True}}]}}))
    env = dict(env, TMPDIR=str(tmp_path))
    env.pop('BENCHLAB_REPORT_DIR')  # the default: ./benchlab-runs in the project directory
    proc = run(playbook(matrix=matrix), env, cwd=project, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert 'Traceback' not in out
    (run_dir,) = run_dirs(project / 'benchlab-runs')
    results = json.loads((run_dir / 'results.json').read_text())
    assert [f['benchmark'] for f in results['failed']] == ['fio-long'], results['failed']
    assert (project / 'benchlab-notes' / 'todo.txt').read_text() == 'keep me\n'
    assert sorted(p.name for p in project.iterdir()) == ['benchlab-notes', 'benchlab-runs']


def test_a_dry_run_is_never_taken_for_a_run(tmp_path, env):
    proc = run(playbook('--check'), env, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert 'DRY RUN: nothing run or stored. 1 run(s) on 1 host(s)' in out, out[-3000:]
    assert 'status: complete' not in out and 'benchlab history: run' not in out
    (run_dir,) = run_dirs(tmp_path / 'runs')
    assert sorted(p.name for p in run_dir.iterdir()) == ['dry-run.json', 'report.md']
    doc = json.loads((run_dir / 'dry-run.json').read_text())
    assert doc['status'] == 'dry run'
    (entry,) = doc['hosts']['localhost']
    assert entry['kind'] == 'run' and entry['benchmark'] == 'dd-write' and entry['cell'] == 'host-rootfs'
    assert any(a.startswith('of=/var/tmp/benchlab-dd-') for a in entry['argv']), entry
    report = (run_dir / 'report.md').read_text()
    assert report.startswith('# DRY RUN') and 'status: dry run' in report
    assert not Path(env['BENCHLAB_HISTORY_DB']).exists()
