# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tests behind a verdict (module_utils/analysis/inference.py) against their reference implementations,
run here: statsmodels (the power solver, ttost_ind, multipletests) and SciPy (the noncentral t,
mannwhitneyu), test-only dependencies (tests/requirements.txt; the runtime needs neither); and by
simulation: identical cells are rarely called different, cells 10 % apart are called worse."""

import math
import random

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import (
    adjust, bootstrap_median_ratio, compare, conclude, detectable_effect, finish, mann_whitney, mde_pct, nct_cdf,
    norm_ppf, rank_test_can_decide, repetitions_needed, select_test, tost, ttest_power)
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import StatsError, summarize

REASON = 'statsmodels and scipy are in tests/requirements.txt (the default venv; no wheel for every Python)'
TOL = 1e-6


@pytest.fixture(scope='module')
def sm_power():
    power = pytest.importorskip('statsmodels.stats.power', reason=REASON)
    return power.TTestIndPower()


@pytest.fixture(scope='module')
def scipy_stats():
    return pytest.importorskip('scipy.stats', reason=REASON)


# -- against the references --------------------------------------------------------------------

def test_noncentral_t_matches_scipy(scipy_stats):
    worst = 0.0
    for df in (1, 2, 3, 4.5, 8, 20, 100):
        for nc in (-3, -1, 0, 0.5, 1, 2.5, 5, 8):
            for t in (-5, -2, -0.5, 0, 0.3, 1, 2, 4, 10):
                worst = max(worst, abs(nct_cdf(t, df, nc) - float(scipy_stats.nct.cdf(t, df, nc))))
    assert worst < TOL


def test_normal_quantile_matches_scipy(scipy_stats):
    for p in (1e-10, 0.001, 0.025, 0.3, 0.5, 0.8, 0.975, 0.999999):
        assert norm_ppf(p) == pytest.approx(float(scipy_stats.norm.ppf(p)), abs=TOL)


@pytest.mark.parametrize('n1,n2', [(2, 2), (3, 3), (3, 5), (5, 5), (10, 7), (30, 30)])
def test_detectable_effect_is_the_root_of_statsmodels_power_equation(sm_power, n1, n2):
    """The effect size solves statsmodels' power equation to 1e-6 (its power at our effect is 0.8),
    and equals statsmodels' own solve_power within that solver's tolerance (brentq_expanding's
    xtol is 1e-5: its answer for 30 vs 30 is 1.2e-6 off the root, ours is not)."""
    d = detectable_effect(n1, n2)
    assert float(sm_power.power(effect_size=d, nobs1=n1, alpha=0.05, ratio=n2 / n1)) == pytest.approx(0.8, abs=TOL)
    solved = float(sm_power.solve_power(effect_size=None, nobs1=n1, alpha=0.05, power=0.8, ratio=n2 / n1))
    assert d == pytest.approx(solved, abs=1e-5)
    assert ttest_power(d, n1, n2) == pytest.approx(
        float(sm_power.power(effect_size=d, nobs1=n1, alpha=0.05, ratio=n2 / n1)), abs=TOL)


def test_mde_pct_from_both_sides_spread(sm_power):
    a, b = summarize([98.0, 101.0, 103.0, 99.5, 100.2]), summarize([100.0, 102.0, 97.0, 101.0])
    sd = math.sqrt((4 * a['stdev'] ** 2 + 3 * b['stdev'] ** 2) / 7.0)
    solved = float(sm_power.solve_power(effect_size=None, nobs1=5, alpha=0.05, power=0.8, ratio=4 / 5.0))
    assert mde_pct(a, b) == pytest.approx(solved * sd / b['mean'] * 100, rel=1e-5)
    assert mde_pct(summarize([1.0]), b) is None


def test_tost_matches_statsmodels_ttost_ind():
    weightstats = pytest.importorskip('statsmodels.stats.weightstats', reason=REASON)
    np = pytest.importorskip('numpy', reason=REASON)
    rng = random.Random(1)
    for _i in range(200):
        x = [rng.gauss(100, rng.uniform(1, 10)) for _k in range(rng.randint(2, 9))]
        y = [rng.gauss(100 + rng.uniform(-8, 8), rng.uniform(1, 10)) for _k in range(rng.randint(2, 9))]
        m = rng.uniform(1, 10)
        ours = tost(summarize(x), summarize(y), -m, m)
        p, low, upp = weightstats.ttost_ind(np.array(x), np.array(y), -m, m, usevar='unequal')
        assert ours['p'] == pytest.approx(float(p), abs=TOL)
        assert ours['p_low'] == pytest.approx(float(low[1]), abs=TOL)
        assert ours['p_upp'] == pytest.approx(float(upp[1]), abs=TOL)
        assert ours['df'] == pytest.approx(float(low[2]), rel=TOL)


def test_holm_and_bh_match_statsmodels_multipletests():
    multitest = pytest.importorskip('statsmodels.stats.multitest', reason=REASON)
    rng = random.Random(2)
    for _i in range(200):
        ps = [rng.random() ** 3 for _k in range(rng.randint(1, 30))]
        if rng.random() < 0.3:
            ps[0] = ps[-1]      # ties
        for ours, theirs in (('holm', 'holm'), ('bh', 'fdr_bh')):
            expected = multitest.multipletests(ps, method=theirs)[1]
            assert adjust(ps, ours) == pytest.approx([float(v) for v in expected], abs=TOL)
    assert adjust([0.01, None, 0.04], 'holm') == pytest.approx([0.02, None, 0.04])
    assert adjust([0.01, 0.5], 'none') == [0.01, 0.5]
    with pytest.raises(StatsError, match='correction must be one of holm, bh, none'):
        adjust([0.1], 'bonferroni')


def test_mann_whitney_matches_scipy_exact_and_asymptotic(scipy_stats):
    rng = random.Random(3)
    seen = set()
    for _i in range(300):
        n1, n2 = rng.randint(1, 12), rng.randint(1, 12)
        if rng.random() < 0.3:     # ties: the normal approximation with the tie correction
            x, y = [rng.randint(0, 5) for _k in range(n1)], [rng.randint(0, 6) for _k in range(n2)]
        else:
            x, y = [rng.expovariate(1) for _k in range(n1)], [rng.expovariate(0.7) for _k in range(n2)]
        ours = mann_whitney(x, y)
        theirs = scipy_stats.mannwhitneyu(x, y, alternative='two-sided')
        assert ours['p'] == pytest.approx(float(theirs.pvalue), abs=TOL)
        assert ours['u'] == pytest.approx(float(theirs.statistic), abs=TOL)
        seen.add(ours['method'])
    assert seen == {'exact', 'asymptotic'}


def test_rank_test_reach():
    """3 vs 3 can never give p < 0.05 (smallest two-sided p 2/20); 4 vs 4 can (2/70); among 24
    comparisons corrected together 5 vs 5 cannot (2/252 x 24), 7 vs 7 can."""
    assert not rank_test_can_decide(3, 3) and not rank_test_can_decide(3, 4)
    assert rank_test_can_decide(4, 4) and rank_test_can_decide(3, 5)
    assert not rank_test_can_decide(5, 5, family=24) and rank_test_can_decide(7, 7, family=24)
    assert rank_test_can_decide(500, 400, family=1000)
    assert mann_whitney([1, 2, 3], [4, 5, 6])['p'] == pytest.approx(0.1)


def test_bootstrap_is_seeded_and_brackets_the_median_ratio():
    x, y = [10.0, 11.0, 12.0, 30.0, 10.5], [20.0, 21.0, 19.0, 22.0, 60.0]
    one, two = bootstrap_median_ratio(x, y), bootstrap_median_ratio(x, y)
    assert one == two
    assert one['delta_pct'] == pytest.approx((11.0 / 21.0 - 1) * 100)
    assert one['ci_pct'][0] < one['delta_pct'] < one['ci_pct'][1] and one['ci_pct'][0] < -40
    assert one['p_equivalence'] > 0.5      # about -48 %: nowhere near +-5 %
    assert bootstrap_median_ratio(x, [0.0, 0.0, 0.0]) is None


# -- the verdicts ------------------------------------------------------------------------------

def _cells(rng, mean_c, mean_b, spread_pct, n):
    return ([rng.gauss(mean_c, mean_c * spread_pct / 100.0) for _k in range(n)],
            [rng.gauss(mean_b, mean_b * spread_pct / 100.0) for _k in range(n)])


def test_identical_cells_are_rarely_called_different():
    """1,000 pairs of cells drawn from the same distribution (spread 2 %, n=5): at most 5 % better
    or worse (a family of one each: alpha 0.05), most of the rest equivalent within +-5 %."""
    rng = random.Random(31)
    verdicts = {'better': 0, 'worse': 0, 'equivalent': 0, 'inconclusive': 0}
    for _i in range(1000):
        c, b = _cells(rng, 100.0, 100.0, 2.0, 5)
        verdicts[compare(c, b, better='higher')['verdict']] += 1
    assert verdicts['better'] + verdicts['worse'] <= 50
    assert verdicts['equivalent'] >= 850     # TOST's power here is about 0.9


def test_cells_ten_percent_apart_are_worse():
    """A candidate 10 % below its baseline, spread 2 %, n=5 on each side: worse, for higher-is-better
    throughput and (the mirror) for lower-is-better durations."""
    rng = random.Random(32)
    for _i in range(200):
        c, b = _cells(rng, 90.0, 100.0, 2.0, 5)
        assert compare(c, b, better='higher')['verdict'] == 'worse'
        c, b = _cells(rng, 110.0, 100.0, 2.0, 5)
        assert compare(c, b, better='lower')['verdict'] == 'worse'


def test_inconclusive_says_how_many_repetitions_would_settle_it():
    c, b = [100.0, 80.0, 120.0], [100.0, 110.0, 90.0]
    out = compare(c, b)
    assert out['verdict'] == 'inconclusive' and out['repetitions_needed'] > 3
    # at that many repetitions, the same spread and delta settle it (equivalence or a difference)
    n = out['repetitions_needed']
    sd = math.sqrt((summarize(c)['stdev'] ** 2 + summarize(b)['stdev'] ** 2) / 2)
    assert repetitions_needed(summarize(c)['mean'] - summarize(b)['mean'], sd, 5.0) == n


def test_too_little_data_is_inconclusive_never_a_pass():
    out = compare([10.0], [100.0, 101.0, 99.0])
    assert out['verdict'] == 'inconclusive' and out['p'] is None and out['significant'] is None
    assert 'too little data' in out['reason']
    assert out['repetitions_needed'] >= 2


def test_the_correction_can_turn_a_difference_inconclusive():
    c, b = summarize([95.0, 96.0, 94.0]), summarize([100.0, 99.0, 101.5])
    c.update(unit='MB/s')
    raw = conclude(c, b, 'higher')
    assert raw['p'] < 0.05
    assert finish(dict(raw), c, b, 'higher')['verdict'] == 'worse'
    corrected = finish(dict(raw), c, b, 'higher', p_adjusted=min(1.0, raw['p'] * 24),
                       p_equivalence_adjusted=min(1.0, raw['p_equivalence'] * 24))
    assert corrected['verdict'] == 'inconclusive' and corrected['p_adjusted'] > raw['p']


def test_skewed_latencies_are_decided_by_the_rank_test_when_it_can_decide():
    c = dict(summarize([5.0, 5.2, 5.1, 5.3, 40.0, 5.2]), values=[5.0, 5.2, 5.1, 5.3, 40.0, 5.2], unit='ms')
    b = dict(summarize([2.0, 2.1, 2.2, 2.05, 2.15, 2.1]), values=[2.0, 2.1, 2.2, 2.05, 2.15, 2.1], unit='ms')
    out = select_test(conclude(c, b, 'lower'))
    assert out['test'] == 'mann-whitney' and out['robust']['decided']
    assert out['p'] == pytest.approx(mann_whitney(c['values'], b['values'])['p'])
    assert finish(out, c, b, 'lower')['verdict'] == 'worse'
    # 6 vs 6 can reach 0.05 alone (its smallest p is 2/924) but not among 24 comparisons: Welch decides there
    among = select_test(conclude(c, b, 'lower'), family=24)
    assert among['test'] == 'welch' and not among['robust']['decided']
    assert among['robust']['note'] == ('the rank test cannot reach p < 0.05 / 24 (the level 24 comparisons corrected '
                                       'together need) with n=6 vs n=6: Welch decides')
    small = select_test(conclude(dict(summarize([5.0, 5.1, 5.2]), values=[5.0, 5.1, 5.2], unit='ms'),
                                 dict(summarize([2.0, 2.1, 2.2]), values=[2.0, 2.1, 2.2], unit='ms'), 'lower'))
    assert small['test'] == 'welch' and 'cannot reach p < 0.05 with n=3 vs n=3' in small['robust']['note']


def test_equivalence_margin_is_validated():
    with pytest.raises(StatsError, match='equivalence_margin_pct'):
        compare([1.0, 2.0], [1.0, 2.0], margin_pct=-1)
