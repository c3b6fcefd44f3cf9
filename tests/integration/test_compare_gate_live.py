"""The regression gate fails when it cannot judge, for real: runs stored by the report callback
(hand-run dd outputs imported through import.yml, and bench.yml interrupted by SIGTERM), then
compare.yml with fail_on_regression=true through ansible-playbook.

Each case passed the gate before (rc 0, "no regression"):
- a candidate 16x slower with one repetition (too little data);
- a baseline cell missing from the candidate;
- candidate=latest after an interrupted run: latest took the newest *complete* run, the baseline
  itself, and compared it with itself.
The imported runs also carry the verdicts of any run (the import goes through the same analysis).
About 40 s."""

import json
import signal

import pytest
import yaml

from conftest import BIN, FILES, ansible_env, interrupted, run

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import list_runs
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_problems

GATE = FILES / 'gate'


def _import(tmp, manifest, run_id, **env):
    proc = run([BIN / 'ansible-playbook', 'playbooks/import.yml', '-e', 'import_manifest=%s' % (GATE / manifest)],
               ansible_env(tmp, BENCHLAB_RUN_ID=run_id, **env))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return run_id


def _compare(tmp, *extra):
    argv = [BIN / 'ansible-playbook', 'playbooks/compare.yml', '-e', 'fail_on_regression=true',
            '-e', 'output_dir=%s' % (tmp / 'compare')]
    for e in extra:
        argv += ['-e', e]
    return run(argv, ansible_env(tmp))


@pytest.fixture(scope='module')
def imported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('gate')
    ids = dict((name, _import(tmp, '%s.yml' % name, 'gate-%s' % name)) for name in ('base', 'cand-slow', 'cand-missing'))
    return tmp, ids


def test_imported_runs_carry_the_verdicts_of_any_run(imported):
    tmp, ids = imported
    doc = json.loads((tmp / 'runs' / ids['base'] / 'results.json').read_text())
    assert results_problems(doc) == []
    (row,) = doc['analysis']['overview']
    assert row['cell'] == 'other' and row['verdict'] in ('better', 'worse', 'equivalent', 'inconclusive')
    assert row['mde_pct'] is not None and row['test'] == 'welch' and row['p_adjusted'] is not None
    assert doc['analysis']['correction']['method'] == 'holm'
    md = (tmp / 'runs' / ids['base'] / 'report.md').read_text()
    assert 'verdict' in md and 'detectable' in md


def test_one_repetition_ten_times_slower_fails_the_gate(imported):
    tmp, ids = imported
    proc = _compare(tmp, 'baseline=%s' % ids['base'], 'candidate=%s' % ids['cand-slow'])
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert 'benchlab regression gate: ' in proc.stdout and 'could not be judged' in proc.stdout
    for metric in ('throughput', 'elapsed', 'bytes'):
        assert 'CANNOT JUDGE dd-write [rootfs] rootfs %s: too little data: n=1 vs n=3' % metric in proc.stdout
    # the report was written before the play failed, and it says the same
    (out,) = (tmp / 'compare').glob('compare-%s-vs-%s' % (ids['cand-slow'], ids['base']))
    comparison = json.loads((out / 'results.json').read_text())['comparison']
    assert comparison['regressions'] == []
    assert sorted(u['metric'] for u in comparison['too_little_data']) == ['bytes', 'elapsed', 'throughput']


def test_a_baseline_cell_missing_from_the_candidate_fails_the_gate(imported):
    tmp, ids = imported
    proc = _compare(tmp, 'baseline=%s' % ids['base'], 'candidate=%s' % ids['cand-missing'])
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert 'benchlab regression gate: 1 could not be judged' in proc.stdout
    assert 'CANNOT JUDGE dd-write [other] other: not in the candidate run' in proc.stdout


def test_the_same_run_is_never_compared_with_itself(imported):
    tmp, ids = imported
    proc = _compare(tmp, 'baseline=%s' % ids['base'], 'candidate=%s' % ids['base'])
    assert proc.returncode != 0
    assert 'the baseline and the candidate are the same run (%s)' % ids['base'] in proc.stdout


def test_latest_after_an_interrupted_run_is_that_run(tmp_path):
    """The baseline is imported (complete, labelled); bench.yml is then interrupted by SIGTERM after its
    first record. latest is the interrupted run: the gate fails on what that run lacks."""
    base = _import(tmp_path, 'base.yml', 'gate-label-base', BENCHLAB_RUN_LABEL='gate-release')
    data = tmp_path / 'data'
    data.mkdir()
    matrix = tmp_path / 'matrix.yml'
    matrix.write_text(yaml.safe_dump({'bench_matrix': {
        'name': 'gate-it', 'repetitions': 6, 'baseline': 'rootfs', 'methodology': {'cooldown_s': 1, 'quiesce': False},
        'cells': [{'name': 'rootfs', 'host': 'localhost', 'path': str(data)}],
        'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]}}))
    rc, out = interrupted([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                           '-e', '@%s' % matrix, '-e', 'bench_install_tools=false'],
                          ansible_env(tmp_path, BENCHLAB_RUN_ID='gate-interrupted'),
                          tmp_path / 'runs' / 'gate-interrupted' / 'results.jsonl', 1, signal.SIGTERM)
    assert rc != 0, out[-3000:]
    runs = dict((r['run_id'], r) for r in list_runs(str(tmp_path / 'history.sqlite')))
    assert runs['gate-interrupted']['status'] == 'interrupted' and runs[base]['status'] == 'complete'
    cmp = _compare(tmp_path, 'baseline=gate-release', 'candidate=latest')
    assert cmp.returncode != 0, cmp.stdout[-3000:]
    assert 'candidate gate-interrupted (interrupted) vs baseline %s (complete)' % base in cmp.stdout
    assert 'CANNOT JUDGE dd-write [other] other: not in the candidate run' in cmp.stdout
