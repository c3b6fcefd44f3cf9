"""Hostile input through the real playbook and modules (issue 9).

- A sample of the corpus (tests/unit/fixtures/hostile/matrices.yml) through `ansible-playbook
  bench.yml`: the play stops at the plan, names the field, and no target is touched (no facts
  gathered, no tool installed or run, no result written).
- Shell metacharacters in parameters reach the tool as literal argv: a cell directory whose name
  is a shell injection is benchmarked for real, and nothing it "asks" for happens. (Path options
  are Ansible `type: path`: `~` and `$VAR` are expanded by Ansible's convention, not by a shell.)
- What the run writes is private: the run directory 0700, its files 0600.
"""

import json
import os
import stat
from pathlib import Path

import pytest
import yaml

from conftest import BIN, REPO, load_run, run, run_dirs

CORPUS = {c['id']: c for c in yaml.safe_load(
    (REPO / 'tests' / 'unit' / 'fixtures' / 'hostile' / 'matrices.yml').read_text())['cases']}
SAMPLE = ['missing-baseline-cell', 'unknown-tool', 'negative-size', 'absurd-repetitions', 'path-traversal',
          'duplicate-cells', 'host-not-in-inventory', 'shell-in-size', 'not-a-mapping',
          'size-zero-string', 'size-fraction-of-a-byte', 'size-absurd']


@pytest.mark.parametrize('case_id', SAMPLE)
def test_hostile_matrix_stops_the_play_before_any_host(case_id, tmp_path, env):
    case = CORPUS[case_id]
    (tmp_path / 'matrix.yml').write_text(yaml.safe_dump({'bench_matrix': case['matrix']}))
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % (tmp_path / 'matrix.yml')], env, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    for part in case['expect']:
        assert part in out, out[-3000:]
    assert 'Traceback' not in out
    # nothing ran on a target: no facts gathered, no install, no benchmark task, no record
    assert 'TASK [Gathering Facts]' not in out and 'TASK [Install the tools' not in out, out[-3000:]
    # the plan is made by bench_run's plan tasks on localhost: those only, never a run's
    plan_tasks = set(t['name'] for t in yaml.safe_load((REPO / 'roles/bench_run/tasks/plan.yml').read_text()))
    role_tasks = [line.split(' : ', 1)[1].rstrip('* ')[:-1] for line in out.splitlines()
                  if line.startswith('TASK [benchlab.bench.bench_run : ')]
    assert [t for t in role_tasks if t not in plan_tasks and not t.startswith('Validating arguments')] == [], role_tasks
    assert 'included: benchlab.bench.bench_run for' not in out.replace(
        'included: benchlab.bench.bench_run for localhost', '')
    assert not any((d / 'results.jsonl').exists() for d in run_dirs(tmp_path / 'runs'))


INJECTIONS = ['x; touch {canary}', '$(touch {canary})', '`touch {canary}`', "a' && touch '{canary}", 'a" | touch "{canary}',
              '*', '-rf', '> {canary}', 'a\nb']


def test_shell_metacharacters_reach_the_tool_literally(tmp_path, env):
    canary = tmp_path / 'canary'
    cells = []
    for i, pattern in enumerate(INJECTIONS):
        cell = tmp_path / ('cell-%d' % i) / pattern.format(canary=canary).replace('/', '_')
        cell.mkdir(parents=True)
        cells.append(str(cell))
    playbook = [{'name': 'Injections', 'hosts': 'localhost', 'gather_facts': False, 'tasks': [
        {'name': 'dd in a directory named like a shell injection', 'benchlab.bench.dd': {
            'path': '{{ item }}', 'test': 'write', 'size': '1M'}, 'loop': cells, 'register': 'dd_out'},
        {'name': 'fio with an injection in its job name', 'benchlab.bench.fio': {
            'path': str(tmp_path), 'name': 'job;touch %s' % canary, 'rw': 'read', 'size': '1M'}, 'register': 'fio_out'},
        {'name': 'Save', 'ansible.builtin.copy': {
            'content': '{{ {"dd": dd_out.results | map(attribute="bench_result.cmd"), "fio": fio_out.bench_result.cmd} | to_json }}',
            'dest': str(tmp_path / 'argv.json'), 'mode': '0600'}}]}]
    (tmp_path / 'play.yml').write_text(yaml.safe_dump(playbook))
    proc = run([BIN / 'ansible-playbook', tmp_path / 'play.yml', '-i', 'inventories/local'], env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    argv = json.loads((tmp_path / 'argv.json').read_text())
    for cell, cmd in zip(cells, argv['dd']):
        assert any(cell in a for a in cmd), cmd  # the name arrived whole, inside one argument
        assert list(Path(cell).iterdir()) == []  # the module's work directory is gone
    assert '--name=job;touch %s' % canary in argv['fio']
    assert not canary.exists()


def test_run_directory_is_private(tmp_path, env):
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % (REPO / 'tests' / 'integration' / 'files' / 'matrix-tiny.yml'),
                '-e', 'bench_install_tools=false'], env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    assert stat.S_IMODE(os.stat(run_dir).st_mode) == 0o700
    files = [p for p in Path(run_dir).iterdir() if p.is_file()]
    assert len(files) >= 3
    for p in files:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    results, _jsonl = load_run(run_dir)
    assert results['records']
