"""The hostile-input corpus (issue 9): malformed matrix definitions are rejected with a message
naming the field, before a plan exists (so before any host is touched)."""

from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import MatrixError, expand_plan

CORPUS = yaml.safe_load((Path(__file__).resolve().parents[2] / 'fixtures' / 'hostile' / 'matrices.yml').read_text())['cases']


def test_the_corpus_is_large_and_unique():
    ids = [c['id'] for c in CORPUS]
    assert len(ids) >= 30 and len(set(ids)) == len(ids)


@pytest.mark.parametrize('case', CORPUS, ids=[c['id'] for c in CORPUS])
def test_hostile_matrix_is_rejected_naming_the_field(case):
    with pytest.raises(MatrixError) as e:
        expand_plan(case['matrix'], inventory_hosts=case.get('inventory', ['localhost']))
    msg = str(e.value)
    for part in case['expect']:
        assert part in msg, msg
    # every problem line names a field of bench_matrix
    assert all(p.startswith('bench_matrix') for p in e.value.problems), e.value.problems


@pytest.mark.parametrize('run_id', ['../../etc', '..', 'a/b', '/abs', '', 'x' * 200, 'a..b', '.hidden', 'id;rm -rf ~', 'é', None])
def test_run_id_cannot_leave_the_output_directory(run_id, tmp_path):
    from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir
    with pytest.raises(ValueError) as e:
        RunDir(str(tmp_path), run_id)
    assert 'run_id' in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_generated_run_ids_are_accepted(tmp_path):
    from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir, new_run_id
    d = RunDir(str(tmp_path), new_run_id())
    d.write_text('x.txt', 'x')
    assert (tmp_path / d.run_id / 'x.txt').read_text() == 'x'
