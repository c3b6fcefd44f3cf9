"""perf/settle.py: how many overview rows a budget could settle, by simulation through the real
verdicts and rounds. Fixed seeds; the model is built from records made by the record helpers."""
import importlib.util
import os

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location('perf_settle', os.path.join(HERE, '..', '..', 'perf', 'settle.py'))
settle = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(settle)


def _run(values, **bench):
    """plan and records of a dd-write matrix: base, far (30 % slower), near (within 1 %)."""
    matrix = dict(name='m', repetitions=3, baseline='base', methodology=dict(budget_s=60, max_repetitions=12),
                  cells=[dict(name=n, host='h1', path='/var/tmp') for n in ('base', 'far', 'near')],
                  benchmarks=[dict(name='dd-write', tool='dd', params=dict(test='write', size='16M'), **bench)])
    records = []
    for cell, vals in values.items():
        for rep, v in enumerate(vals, 1):
            r = new_record('dd', 'write', labels={'benchmark': 'dd-write', 'cell': cell},
                           metrics={'throughput': metric(v, 'MB/s', 'higher')})
            r.update(repetition=rep, duration_s=1.0, host='h1')
            records.append(r)
    return expand_plan(matrix), records


def test_the_model_is_what_the_run_measured():
    plan, records = _run({'base': [100, 102, 98], 'far': [70, 71, 69], 'near': [99, 101, 100]})
    model, cost = settle.model_of(records, plan)
    cells = dict((c['cell'], c) for c in model[0]['cells'])
    assert cells['base']['baseline'] and cells['far']['baseline_cell'] == 'base'
    assert cells['far']['mean'] == 70 and abs(cells['base']['sd'] - 2.0) < 1e-9
    assert cost[('dd-write', 'far')] > 1.0
    assert model[0]['margin'] == 5.0 and model[0]['looks'] == (3, 12)


def test_the_margin_and_the_repetitions_are_each_benchmarks_own():
    """A benchmark's own equivalence margin and max_repetitions reach the simulated verdicts: equal
    cells within 1 % end equivalent under a 20 % margin far more often than under the default 5 %."""
    values = {'base': [100, 103, 97], 'far': [70, 71, 69], 'near': [100, 104, 96]}
    plan, records = _run(values, equivalence_margin_pct=20, repetitions=4, methodology=dict(max_repetitions=6))
    model, cost = settle.model_of(records, plan)
    assert model[0]['margin'] == 20.0 and model[0]['looks'] == (4, 6)
    wide = [settle.simulate(model, cost, 60, None, seed)[0]['dd-write near vs base'] for seed in range(10)]
    plan5, records5 = _run(values)
    model5, cost5 = settle.model_of(records5, plan5)
    narrow = [settle.simulate(model5, cost5, 60, None, seed)[0]['dd-write near vs base'] for seed in range(10)]
    assert wide.count('equivalent') > narrow.count('equivalent')


def test_a_large_difference_is_settled_and_a_tighter_spread_settles_more():
    plan, records = _run({'base': [100, 105, 95], 'far': [60, 63, 57], 'near': [97, 107, 87]})
    model, cost = settle.model_of(records, plan)
    runs = [settle.simulate(model, cost, 60, 12, seed) for seed in range(10)]
    assert all(verdicts['dd-write far vs base'] == 'worse' for verdicts, _spent in runs)
    assert all(spent <= 60 for _v, spent in runs)
    wide = sum(v['dd-write near vs base'] != 'inconclusive' for v, _s in runs)
    tight = sum(settle.simulate(model, cost, 60, 12, seed, sd_scale=0.1)[0]['dd-write near vs base'] != 'inconclusive'
                for seed in range(10))
    assert wide < tight


def test_the_command_prints_a_line_per_setting_and_a_row_per_comparison(tmp_path, capsys):
    import json
    plan, records = _run({'base': [100, 110, 90], 'far': [70, 77, 63], 'near': [97, 107, 87]})
    (tmp_path / 'plan.json').write_text(json.dumps(plan))
    (tmp_path / 'results.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in records))
    assert settle.main([str(tmp_path), '--budget', '0', '60', '--sims', '3']) == 0
    out = capsys.readouterr().out
    assert '2 overview rows, 3 repetitions first' in out
    assert len([line for line in out.splitlines() if line.strip().startswith(('0 ', '60 '))]) == 2
    assert 'dd-write far vs base' in out and '-30.0 %' in out
