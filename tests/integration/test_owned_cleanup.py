"""Issue 14 section 2: a failed run cleans up exactly what it made, through the real playbook.

A cell path holds a user's `benchlab-keepme/` with a file, a process whose argv names
`<cell>/benchlab-keepme`, the work directory of a second, concurrent run (another run id in its
marker) with that run's tool process recorded in it, and a `keep: true` work directory of this very
run. A fio run in that cell outlives its timeout and is killed. Afterwards the user's directory and
process, the other run's directory and process and the kept directory are all there; this run's
own work directory and its fio processes are gone. A second localhost cell is the "project
directory" itself, holding the report directory `benchlab-runs/`: it survives a failed run too.
"""

import json
import os
import subprocess
import sys
import time

import yaml

from conftest import BIN, processes_with, run, run_dirs

from ansible_collections.benchlab.bench.plugins.module_utils.run import workdir as wd
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys

RUN_ID = 'owned-cleanup-test-%d' % os.getpid()


def sleeper(*argv, **kwargs):
    return subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'] + list(argv), **kwargs)


def test_a_failed_run_removes_only_its_own_work(tmp_path, env):
    data = tmp_path / 'data'
    project = tmp_path / 'project'
    data.mkdir()
    project.mkdir()
    matrix = {
        'name': 'owned', 'repetitions': 1, 'methodology': {'cooldown_s': 0, 'quiesce': False},
        'cells': [{'name': 'data', 'host': 'localhost', 'path': str(data)},
                  {'name': 'project', 'host': 'localhost', 'path': str(project)}],
        'benchmarks': [{'name': 'fio-long', 'tool': 'fio', 'methodology': {'timeout_s': 4},
                        'params': {'rw': 'read', 'bs': '64k', 'size': '8M', 'runtime': 60, 'time_based': True}}]}
    matrix_file = tmp_path / 'matrix.yml'
    matrix_file.write_text(yaml.safe_dump({'bench_matrix': matrix}))
    key = plan_keys(expand_plan(matrix, ['localhost']))[('fio-long', 'data')]

    # what must survive
    keepme = data / 'benchlab-keepme'
    keepme.mkdir()
    (keepme / 'notes.txt').write_text('precious')
    other = wd.create_workdir(str(data), 'fio', run_id='another-run', run_key=key)
    kept = wd.create_workdir(str(data), 'dd', run_id=RUN_ID, run_key=key, keep=True)
    (project / 'benchlab-runs').mkdir()
    (project / 'benchlab-runs' / 'earlier.json').write_text('{}')
    procs = []
    try:
        procs.append(sleeper(str(keepme)))
        procs.append(sleeper(os.path.join(other, 'job'), start_new_session=True, cwd=other))
        wd.update_marker(other, pgid=procs[1].pid, pid_start=wd.proc_start_time(procs[1].pid))

        (tmp_path / 'tmp').mkdir()
        env = dict(env, TMPDIR=str(tmp_path / 'tmp'), BENCHLAB_RUN_ID=RUN_ID,
                   BENCHLAB_REPORT_DIR=str(project / 'benchlab-runs'))
        argv = [str(BIN / 'ansible-playbook'), 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % matrix_file, '-e', 'bench_install_tools=false']
        proc = run(argv, env, timeout=600)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out[-3000:]
        time.sleep(1)

        run_dir = [d for d in run_dirs(project / 'benchlab-runs') if d.name == RUN_ID]
        assert run_dir, out[-3000:]
        results = json.loads((run_dir[0] / 'results.json').read_text())
        failed = sorted((f['cell'], 'timeout' in f['msg'].lower()) for f in results['failed'])
        assert failed == [('data', True), ('project', True)], results['failed']

        # this run's own work and processes are gone
        assert processes_with(data, 'fio') == [] and processes_with(project, 'fio') == []
        assert sorted(os.listdir(data)) == sorted(['benchlab-keepme', os.path.basename(other),
                                                   os.path.basename(kept)])
        assert sorted(os.listdir(project)) == ['benchlab-runs']
        # everything else is untouched
        assert (keepme / 'notes.txt').read_text() == 'precious'
        assert all(p.poll() is None for p in procs), 'a process this run did not start was stopped'
        assert wd.read_marker(other)[0]['run_id'] == 'another-run'
        assert wd.read_marker(kept)[0]['keep'] is True
        assert (project / 'benchlab-runs' / 'earlier.json').read_text() == '{}'
        assert 'Stop and remove exactly what the failed run left' in out
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
