# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rounds driven by the comparisons (plugin_utils/plan/rounds.py) and the sequential test that keeps
their verdicts valid (module_utils/analysis/inference.sequential).

The simulations run the real code: each comparison is concluded by verdicts.compared and
verdicts.conclude_report (what analyze() calls), the stopping rule is rounds.decide, and a round
adds the values decide() asks for. Fixed seeds: the same draws on every run."""

from __future__ import annotations

import random

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import look_weights, sequential
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import summarize
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.rounds import at_look, comparisons, decide, next_round, run_costs
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.verdicts import compared, conclude_report

FIRST, CAP = 3, 10      # the planned repetitions and max_repetitions of the simulated matrix
SIMS = 1000


def _summary(values):
    s = summarize(values)
    s.update(unit='MB/s', better='higher', values=list(values))
    return s


def conclude_pair(x, y, looks=(FIRST, CAP)):
    """The candidate x's comparison with the baseline y as a report concludes it: (the candidate's
    summary, the analysis part rounds.comparisons reads)."""
    s, ref = _summary(x), _summary(y)
    s.update(compared(s, ref, 5.0, looks))
    bench = dict(name='b', benchmark='b', primary='m', metrics=['m'],
                 cells=[dict(cell='base', baseline=True, baseline_cell=None, metrics={'m': ref}),
                        dict(cell='cand', baseline=False, baseline_cell='base', metrics={'m': s})])
    conclude_report([bench], [], lambda b: 'm')
    return s, dict(benchmarks=[bench])


def simulate(seed, cand_mean, spread_pct=2.0, cap=CAP):
    """One comparison through the real stopping rule, with a budget of `cap` runs per side: (verdict,
    runs per side at the end)."""
    rng = random.Random(seed)

    def draw(mean):
        return rng.gauss(mean, mean * spread_pct / 100.0)
    x = [draw(cand_mean) for _i in range(FIRST)]
    y = [draw(100.0) for _i in range(FIRST)]
    cost = {('b', 'cand'): 1.0, ('b', 'base'): 1.0}
    left = 2.0 * (cap - FIRST)
    while True:
        s, analysis = conclude_pair(x, y, (FIRST, cap))
        runs, _lines = decide(comparisons(analysis, {'b': cap}), cost, left)
        if not runs:
            return s['verdict'], (len(x), len(y))
        for _bench, cell, k in runs:
            for _i in range(k):
                (x if cell == 'cand' else y).append(draw(cand_mean if cell == 'cand' else 100.0))
            left -= k


def _rates(cand_mean, seed0, cap=CAP):
    verdicts = [simulate(seed0 + i, cand_mean, cap=cap)[0] for i in range(SIMS)]
    return dict((v, verdicts.count(v) / float(SIMS)) for v in ('better', 'worse', 'equivalent', 'inconclusive'))


def test_look_weights_spend_alpha_once():
    for first, last in ((3, 10), (2, 3), (5, 5), (3, 100)):
        w = look_weights(first, last)
        assert abs(sum(w.values()) - 1.0) < 1e-12
        assert min(w) == max(first, 2)
    assert look_weights(3, 10)[3] == 0.5 and look_weights(5, 5) == {5: 1.0}


def test_identical_cells_rarely_differ_however_often_the_rounds_look():
    rates = _rates(100.0, 1000)
    assert rates['better'] + rates['worse'] <= 0.05, rates


def test_identical_cells_would_differ_too_often_without_the_sequential_test():
    """The same stopping rule judged by the fixed-n test at every look: the false verdicts the
    sequential test prevents (this is why it is there)."""
    rng = random.Random(7)
    false, sims = 0, 200
    for _sim in range(sims):
        x = [rng.gauss(100, 2) for _i in range(FIRST)]
        y = [rng.gauss(100, 2) for _i in range(FIRST)]
        for _look in range(FIRST, CAP + 1):
            if conclude_pair(x, y, looks=None)[0]['verdict'] in ('better', 'worse'):
                false += 1
                break
            x.append(rng.gauss(100, 2))
            y.append(rng.gauss(100, 2))
    assert false / float(sims) > 0.05


def test_cells_ten_percent_apart_end_worse():
    rates = _rates(90.0, 5000)
    assert rates['worse'] >= 0.8, rates
    assert rates['better'] == 0.0


def test_equal_cells_end_equivalent_when_the_budget_reaches_the_margin():
    # 2 % spread against a 5 % margin: about 8 runs a side at a late look's share of alpha
    rates = _rates(100.0, 9000, cap=20)
    assert rates['equivalent'] >= 0.8, rates


def test_a_comparison_out_of_reach_stops_with_its_reason():
    item = dict(key='k', bench='b', cell='c', baseline='base', verdict='inconclusive', need=400, n=(3, 3), cap=10)
    runs, lines = decide([item], {('b', 'c'): 1.0, ('b', 'base'): 1.0}, 100.0)
    assert runs == [] and 'needs 400 per side, the cap (max_repetitions) is 10' in lines[0]
    item.update(need=8, cap=100)
    runs, lines = decide([item], {('b', 'c'): 30.0, ('b', 'base'): 30.0}, 100.0)
    assert runs == [] and 'about 300 s; 100 s of the budget left' in lines[0]
    item.update(need=None)
    assert 'no number of repetitions would settle it' in decide([item], {}, 100.0)[1][0]


def test_the_round_goes_to_the_cheapest_to_settle_first_up_to_its_next_look():
    cost = {('b', 'near'): 1.0, ('b', 'far'): 1.0, ('b', 'base'): 1.0, ('b', 'other'): 1.0, ('b', 'base2'): 1.0}
    far = dict(key='far', bench='b', cell='far', baseline='base', verdict='inconclusive', need=6, n=(3, 3), cap=10,
               looks=[3, 6, 10])
    near = dict(far, key='near', cell='near', need=5)
    done = dict(far, key='done', cell='done', verdict='worse')
    runs, lines = decide([far, near, done], cost, 10.0)
    # near first (4 s to settle): both sides to the look at 6; far's own three runs still fit (9 s)
    assert runs == [('b', 'near', 3), ('b', 'base', 3), ('b', 'far', 3)]
    assert lines[0] == 'run  near: n 3 vs 3, needs 5 per side (about 4 s more); to the look at 6: 3 more of near, 3 more of base'
    assert lines[1].startswith('run  far') and lines[2] == 'this round: 9 run(s), about 9 s; 10 s of the budget left before it'
    # a comparison on another baseline that cannot take its turn this round waits
    other = dict(near, key='other', cell='other', baseline='base2')
    runs, lines = decide([near, other], cost, 8.0)
    assert runs == [('b', 'near', 3), ('b', 'base', 3)] and lines[1].startswith('wait other')
    # a comparison that would cost more than the budget left stops
    runs, lines = decide([far], cost, 5.0)
    assert runs == [] and lines[0].startswith('stop far: needs 6 per side, about 6 s; 5 s of the budget left')
    # the side that is ahead waits for the other; the cap bounds the last look; no looks: one run
    assert decide([dict(near, n=(3, 6))], cost, 10.0)[0] == [('b', 'near', 3)]
    assert decide([dict(near, n=(6, 6), need=8, cap=8)], cost, 10.0)[0] == [('b', 'near', 2), ('b', 'base', 2)]
    assert decide([dict(near, looks=[])], cost, 10.0)[0] == [('b', 'near', 1), ('b', 'base', 1)]


def test_sequential_p_is_the_smallest_over_looks_divided_by_its_share():
    assert look_weights(3, 10) == {3: 0.5, 6: 0.25, 10: 0.25}
    assert sorted(look_weights(3, 100)) == [3, 6, 12, 24, 48, 96, 100]
    x = [90.0, 91.0, 89.0, 90.5, 89.5, 90.2, 95.0]
    y = [100.0, 101.0, 99.0, 100.5, 99.5, 100.1, 96.0]
    seq = sequential(x, y, 5.0, 3, 10)
    assert (seq['looks'], seq['next_look'], seq['weight_next']) == (2, 10, 0.25)
    fixed = [conclude_pair(x[:n], y[:n], looks=None)[0]['p'] for n in (3, 6)]
    assert abs(seq['p'] - min(min(1.0, p / w) for p, w in zip(fixed, (0.5, 0.25)))) < 1e-12
    # the 7th values are no look: the p is the same without them
    assert sequential(x[:6], y[:6], 5.0, 3, 10)['p'] == seq['p']
    looks = sorted(look_weights(seq['first'], seq['last']))
    assert at_look(4, looks) == 6 and at_look(7, looks) == 10 and at_look(11, looks) == 11 and at_look(4, []) == 4


def _lab_records(values):
    out = []
    for (cell, rep), v in values.items():
        r = new_record('dd', 'write', labels={'benchmark': 'dd-write', 'cell': cell},
                       metrics={'throughput': metric(v, 'MB/s', 'higher')})
        r.update(repetition=rep, duration_s=2.0, host='h1')
        out.append(r)
    return out


def test_next_round_plans_runs_in_the_plans_format_and_the_report_says_sequential():
    matrix = dict(name='m', repetitions=3, baseline='base', methodology=dict(budget_s=60, max_repetitions=12, cooldown_s=1),
                  cells=[dict(name='base', host='h1', path='/var/tmp'), dict(name='loop', host='h1', path='/var/tmp')],
                  benchmarks=[dict(name='dd-write', tool='dd', params=dict(test='write', size='16M'))])
    plan = expand_plan(matrix)
    assert plan['rounds'] == {'budget_s': 60.0}
    values = {('base', 1): 100.0, ('base', 2): 104.0, ('base', 3): 97.0,
              ('loop', 1): 93.0, ('loop', 2): 97.0, ('loop', 3): 91.0}
    recs = _lab_records(values)
    cost = run_costs(plan, recs)
    assert cost[('dd-write', 'base')] == 2.0 + 1.0 + 3.5
    rnd = next_round(plan, recs, 200.0)
    # to the next look (6), the two cells interleaved
    assert [(r['cell'], r['repetition'], r['gate']) for r in rnd['runs']] == [
        ('loop', 4, True), ('base', 4, True), ('loop', 5, True), ('base', 5, True), ('loop', 6, True), ('base', 6, True)]
    assert rnd['runs'][0]['guards']['warmup'] is False
    assert rnd['lines'][0].startswith('run  dd-write loop vs base: n 3 vs 3')
    assert next_round(plan, recs, 0.0)['runs'] == []
    # a spent budget is said before any analysis (records it could not analyse are never read)
    assert next_round(plan, [{'labels': None, 'metrics': 'x'}], 0.0) == dict(
        runs=[], lines=['the budget of %s s for extra rounds is spent' % plan['rounds']['budget_s']])
    assert next_round(plan, recs, 200.0, exclude={('dd-write', 'base')})['runs'] == []
    analysis = analyze(recs, plan)
    row = analysis['overview'][0]
    assert row['sequential']['looks'] == 1 and row['sequential']['last'] == 12
    items = comparisons(analysis, {'dd-write': 12})
    assert [(i['cell'], i['baseline'], i['n']) for i in items] == [('loop', 'base', (3, 3))]
    without = dict(plan)
    without.pop('rounds')
    assert analyze(recs, without)['overview'][0]['sequential'] is None


def test_the_filters_name_what_is_wrong():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.benchlab.bench.plugins.filter.gate_runs import gate_runs
    from ansible_collections.benchlab.bench.plugins.filter.round_runs import round_runs
    plan = dict(runs=[], benchmarks=[], rounds={'budget_s': 10})
    for call, name in ((lambda p, r: round_runs(p, r, 10), 'round_runs'), (lambda p, r: gate_runs(p, r, 'h1'), 'gate_runs')):
        with pytest.raises(AnsibleFilterError, match='^%s: the input must be a plan' % name):
            call('not a plan', [])
        with pytest.raises(AnsibleFilterError, match='^%s: records must be a list, got dict' % name):
            call(plan, {})
    with pytest.raises(AnsibleFilterError, match="^round_runs: malformed plan or record: 'benchmarks'"):
        round_runs(dict(runs=[], rounds={'budget_s': 10}), [], 10)
    assert round_runs(plan, [], 10) == {'runs': [], 'lines': ['no further round: 0 of 0 comparisons concluded']}
