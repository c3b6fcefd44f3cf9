"""Statistics against known values.

t quantiles: the textbook two-sided 95% table (e.g. Montgomery & Runger, Table V).
Welch's test and the fractional-df quantiles were checked once against SciPy 1.17.1
(scipy.stats.ttest_ind(a, b, equal_var=False), its confidence_interval(0.95), scipy.stats.t.ppf/cdf);
the numbers below are the values SciPy printed.
"""

import math

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import compare
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import (
    StatsError, slower_pct, summarize, t_cdf, t_ppf, welch)

TEXTBOOK_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 20: 2.086, 30: 2.042}
SCIPY_T975 = {1: 12.706204736174694, 2: 4.302652729749462, 5: 2.5705818356363146, 30: 2.0422724563012378,
              2.5: 3.5746548420036817, 7.3: 2.345066736547703}
SCIPY_CDF_1_5 = {1: 0.8128329581890011, 4: 0.896, 10: 0.9177463367772799, 7.3: 0.912218453598457}


@pytest.mark.parametrize('df,expected', sorted(TEXTBOOK_T975.items()))
def test_t_quantiles_match_the_textbook_table(df, expected):
    assert round(t_ppf(0.975, df), 3) == expected


@pytest.mark.parametrize('df,expected', sorted(SCIPY_T975.items()))
def test_t_quantiles_match_scipy(df, expected):
    assert t_ppf(0.975, df) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize('df,expected', sorted(SCIPY_CDF_1_5.items()))
def test_t_cdf_matches_scipy(df, expected):
    assert t_cdf(1.5, df) == pytest.approx(expected, rel=1e-9)
    assert t_cdf(-1.5, df) == pytest.approx(1 - expected, rel=1e-9)


def test_t_quantile_symmetry_and_large_df_tends_to_normal():
    assert t_ppf(0.025, 7) == pytest.approx(-t_ppf(0.975, 7))
    assert t_ppf(0.975, 1e6) == pytest.approx(1.959964, abs=1e-5)
    with pytest.raises(StatsError):
        t_ppf(1.0, 3)


def test_summarize_known_values():
    s = summarize([2, 4, 4, 4, 5, 5, 7, 9])
    assert s['n'] == 8 and s['mean'] == 5 and s['median'] == 4.5
    assert s['stdev'] == pytest.approx(math.sqrt(32 / 7))
    assert s['cv'] == pytest.approx(math.sqrt(32 / 7) / 5)
    half = 2.364624251592785 * math.sqrt(32 / 7) / math.sqrt(8)  # t(0.975, 7) from SciPy
    assert s['ci95'] == pytest.approx([5 - half, 5 + half])


def test_summarize_rejects_what_is_not_a_number():
    for bad in (['a'], [float('nan')], [True], 'text', 3):
        with pytest.raises(StatsError):
            summarize(bad)


def test_welch_matches_scipy():
    a, b = summarize([10, 11, 12, 10.5]), summarize([12, 13, 12.5, 13.5])
    w = welch(a, b)
    assert w['t'] == pytest.approx(-3.5032452487268535, rel=1e-9)
    assert w['df'] == pytest.approx(5.584615384615386, rel=1e-9)
    assert w['p'] == pytest.approx(0.01436652279126352, rel=1e-7)
    assert w['ci'] == pytest.approx([-3.2086103112370017, -0.5413896887629981], rel=1e-8)
    a, b = summarize([361.2, 330.2, 409.2]), summarize([1079, 567.4, 1509])
    w = welch(a, b)
    assert w['p'] == pytest.approx(0.1272175383793836, rel=1e-7)
    assert w['ci'] == pytest.approx([-1844.404394569658, 474.53772790299126], rel=1e-8)


def test_reference_000_slower_than_test_1():
    """The dd table of ../shared/reference/000: durations incl. sync, "slower than Test 1 (in %)"."""
    durations = {1: 4720.096, 2: 5015.390, 3: 5187.163, 4: 5481.256}
    expected = {2: 5.888, 3: 9.004, 4: 13.887}
    for test, pct in expected.items():
        assert compare(durations[test], durations[1], better='lower')['slower_pct'] == pytest.approx(pct, abs=0.001)
        assert slower_pct(durations[test], durations[1], 'lower') == pytest.approx(pct, abs=0.001)
    # the same from MB/s (higher is better): 200 GB / duration
    mbs = {k: 200000.0 / v for k, v in durations.items()}
    assert slower_pct(mbs[2], mbs[1], 'higher') == pytest.approx((1 - 4720.096 / 5015.390) * 100, abs=1e-9)


def test_compare_verdicts():
    noisy = compare([100, 140, 80, 120], [110, 90, 130, 100], better='higher')
    assert noisy['significant'] is False and noisy['verdict'] == 'inconclusive' and noisy['worse'] is False
    assert noisy['repetitions_needed'] > 4 and noisy['mde_pct'] > 30
    slower = compare([80, 81, 79, 80], [100, 101, 99, 100], better='higher')
    assert slower['significant'] is True and slower['worse'] is True and slower['verdict'] == 'worse'
    assert slower['delta_pct'] == pytest.approx(-20.0)
    assert slower['ci_pct'][0] < -20 < slower['ci_pct'][1]
    faster_time = compare([8, 8.1, 7.9], [10, 10.1, 9.9], better='lower')
    assert faster_time['significant'] is True and faster_time['worse'] is False and faster_time['verdict'] == 'better'
    single = compare(5.0, 4.0)
    assert single['significant'] is None and single['verdict'] == 'inconclusive' and single['p'] is None
    assert single['reason'].startswith('too little data')
    same = compare([100, 100.5, 99.5, 100.2], [100.1, 99.8, 100.3, 99.9])
    assert same['verdict'] == 'equivalent' and same['equivalence_margin_pct'] == 5.0
    from_summaries = compare(summarize([80, 81, 79, 80]), summarize([100, 101, 99, 100]))
    assert from_summaries['p'] == pytest.approx(slower['p'])


def test_compare_rejects_bad_input():
    for cand, base, better in (([], [1, 2], 'higher'), ('x', [1], 'higher'), ([1, 2], [1, 2], 'sideways'),
                               ({'n': 2}, [1, 2], 'higher')):
        with pytest.raises(StatsError):
            compare(cand, base, better=better)
