"""perf/perf.py judges each goal on the figures of one `make perf` run; a goal with a floor is held to
that floor (measured in the same run) plus its margin, so a goal below what any playbook reaches
cannot be set again by accident."""
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location('perf_perf', os.path.join(HERE, '..', '..', 'perf', 'perf.py'))
perf = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(perf)


def test_fixed_cost_is_held_to_the_one_task_play_plus_half_a_second():
    v = perf.judge({'fixed_cost_s': 2.0, 'fixed_cost_floor_s': 1.5})['fixed_cost_s']
    assert v['target'] == 2.0 and v['met'] is True and v['floor'] == 1.5
    assert perf.judge({'fixed_cost_s': 2.01, 'fixed_cost_floor_s': 1.5})['fixed_cost_s']['met'] is False
    assert perf.goal_text('fixed_cost_s') == '<= fixed_cost_floor_s + 0.5'


def test_a_goal_whose_floor_was_not_measured_is_not_judged():
    v = perf.judge({'fixed_cost_s': 0.1})['fixed_cost_s']
    assert v['met'] is None and v['target'] is None


def test_plain_goals():
    v = perf.judge({'time_to_result_vs_bench_fio': 1.12, 'fidelity_dd': 0.99, 'overhead_per_cell_s': 0.2})
    assert v['time_to_result_vs_bench_fio']['met'] is False
    assert v['fidelity_dd']['met'] is True and v['overhead_per_cell_s']['met'] is True
    assert v['report_100k_s']['met'] is None
