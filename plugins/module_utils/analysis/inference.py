# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""A comparison that concludes: the tests behind a verdict, pure Python (no numpy/scipy anywhere).

compare() compares a candidate with its baseline and gives the verdict the reports print.

conclude() compares a candidate with its baseline and gives everything a verdict needs before the
correction across a report: the p of the test that decides (Welch's t-test; Mann-Whitney for skewed
data when the sample sizes let a rank test decide at all), the p of the two one-sided tests (TOST)
against +-equivalence_margin_pct, the smallest difference the run could detect (mde_pct: alpha 0.05,
power 0.8, from both sides' n and spread) and a seeded bootstrap interval of the ratio of medians
beside it for skewed data. adjust() corrects a family of p-values (Holm, Benjamini-Hochberg, none);
finish() turns one comparison and its corrected p-values into the verdict: better, worse (a
difference significant after the correction), equivalent (TOST within the margin after the
correction) or inconclusive, then with repetitions_needed (per side, at the observed spread).

The noncentral t distribution (for the power of the t-test) is Lenth's algorithm AS 243; the
normal quantile is Acklam's rational approximation refined by Newton steps on erfc. The unit tests
check every function against statsmodels and SciPy (tests/unit/plugins/module_utils/test_inference.py).
"""

import math
import random

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import (
    ALPHA, StatsError, as_summary, betainc, delta_pct, slower_pct, t_cdf, t_ppf, welch)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number

POWER = 0.8
MARGIN_PCT = 5.0
CORRECTIONS = ('holm', 'bh', 'none')
VERDICTS = ('better', 'worse', 'equivalent', 'inconclusive')
TESTS = ('welch', 'mann-whitney')
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261204
# Beyond this many values a side the bootstrap is left out (the rank test and the TOST decide alone):
# it would cost resamples x values, and with that many values the interval adds nothing.
BOOTSTRAP_MAX_N = 50
# The exact null distribution of U is built for at most this many pairs (n1 x n2); SciPy builds it
# whenever a side has at most 8 values, which with a large other side costs far too much here.
EXACT_MAX_PAIRS = 400
# Above this many repetitions per side a comparison is not worth settling: repetitions_needed is None.
MAX_REPETITIONS_NEEDED = 100000
_LN_SQRT_PI = 0.5 * math.log(math.pi)


# -- distributions ----------------------------------------------------------------------------

def norm_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def norm_ppf(p):
    """The standard normal quantile (Acklam's approximation, then Newton steps: ~1e-15)."""
    if not 0.0 < p < 1.0:
        raise StatsError('probability must be between 0 and 1, got %r' % (p,))
    a = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
         -3.066479806614716e+01, 2.506628277459239e+00)
    b = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
         -1.328068155288572e+01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
         4.374664141464968e+00, 2.938163982698783e+00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    elif p > 1 - 0.02425:
        q = math.sqrt(-2 * math.log(1 - p))
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    else:
        q = p - 0.5
        r = q * q
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / \
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    for _step in range(3):
        err = norm_cdf(x) - p
        x -= err * math.sqrt(2 * math.pi) * math.exp(x * x / 2.0)
    return x


def nct_cdf(t, df, nc):
    """P(T <= t) for the noncentral t distribution with df degrees of freedom and noncentrality nc
    (Lenth 1989, AS 243, with R's guards against cancellation)."""
    if df <= 0:
        raise StatsError('degrees of freedom must be positive, got %r' % (df,))
    if t >= 0:
        tt, d, negative = t, nc, False
    else:
        tt, d, negative = -t, -nc, True
    total = 0.0
    x = tt * tt / (tt * tt + df)
    if x > 0:
        lam = d * d
        p = 0.5 * math.exp(-0.5 * lam)
        q = math.sqrt(2.0 / math.pi) * p * d
        s = 0.5 - p
        if s < 1e-7:
            s = -0.5 * math.expm1(-0.5 * lam)
        a, b = 0.5, 0.5 * df
        rxb = math.exp(b * math.log1p(-x))
        albeta = _LN_SQRT_PI + math.lgamma(b) - math.lgamma(0.5 + b)
        xodd = betainc(a, b, x)
        godd = 2.0 * rxb * math.exp(a * math.log(x) - albeta)
        xeven = -math.expm1(b * math.log1p(-x)) if b * x <= 1e-7 else 1.0 - rxb
        geven = b * x * rxb
        total = p * xodd + q * xeven
        for it in range(1, 2000):
            a += 1.0
            xodd -= godd
            xeven -= geven
            godd *= x * (a + b - 1.0) / a
            geven *= x * (a + b - 0.5) / (a + 0.5)
            p *= lam / (2.0 * it)
            q *= lam / (2.0 * it + 1.0)
            s -= p
            total += p * xodd + q * xeven
            if abs(2.0 * s * (xodd - godd)) < 1e-14:
                break
    total += norm_cdf(-d)
    total = min(1.0, max(0.0, total))
    return 1.0 - total if negative else total


# -- power and the detectable effect -----------------------------------------------------------

def ttest_power(effect, n1, n2, alpha=ALPHA):
    """The power of the two-sided two-sample t-test (pooled df = n1 + n2 - 2) for a standardized
    effect (Cohen's d), as statsmodels' TTestIndPower computes it."""
    df = n1 + n2 - 2.0
    nc = effect * math.sqrt(1.0 / (1.0 / n1 + 1.0 / n2))
    crit = t_ppf(1.0 - alpha / 2.0, df)
    return (1.0 - nct_cdf(crit, df, nc)) + nct_cdf(-crit, df, nc)


def detectable_effect(n1, n2, alpha=ALPHA, power=POWER):
    """The standardized effect (Cohen's d) the two-sided t-test detects with `power` at `alpha` with
    n1 and n2 values (both >= 2): the root of ttest_power(d) = power."""
    if n1 < 2 or n2 < 2:
        raise StatsError('a detectable effect needs at least 2 values on each side, got %s and %s' % (n1, n2))

    def f(d):
        return ttest_power(d, n1, n2, alpha) - power
    lo, hi = 0.0, 1.0
    f_lo, f_hi = f(lo), f(hi)
    while f_hi < 0:
        lo, f_lo, hi = hi, f_hi, hi * 2.0
        if hi > 1e6:
            return float('inf')
        f_hi = f(hi)
    # the Illinois variant of regula falsi: a handful of power evaluations to 1e-13
    side = 0
    for _step in range(200):
        d = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        f_d = f(d)
        if f_d == 0 or hi - lo < 1e-13 * max(1.0, hi):
            return d
        if f_d < 0:
            lo, f_lo = d, f_d
            if side == -1:
                f_hi /= 2.0
            side = -1
        else:
            hi, f_hi = d, f_d
            if side == 1:
                f_lo /= 2.0
            side = 1
        if abs(f_d) < 1e-15:
            return d
    return (lo + hi) / 2.0


def pooled_sd(a, b):
    """The pooled standard deviation of two summaries (n >= 2 on both sides), or None."""
    if a['n'] < 2 or b['n'] < 2 or a.get('stdev') is None or b.get('stdev') is None:
        return None
    return math.sqrt(((a['n'] - 1) * a['stdev'] ** 2 + (b['n'] - 1) * b['stdev'] ** 2) / (a['n'] + b['n'] - 2.0))


def mde_pct(a, b, alpha=ALPHA, power=POWER):
    """The smallest difference, in % of the baseline b's mean, the run could detect (two-sided
    t-test, alpha, power) from both sides' n and spread; None without a spread on both sides or
    with a baseline mean of 0."""
    sd = pooled_sd(a, b)
    if sd is None or not b.get('mean'):
        return None
    return detectable_effect(a['n'], b['n'], alpha, power) * sd / abs(b['mean']) * 100.0


# -- two one-sided tests -----------------------------------------------------------------------

def _welch_se_df(a, b):
    va, vb = a['stdev'] ** 2 / a['n'], b['stdev'] ** 2 / b['n']
    se = math.sqrt(va + vb)
    if se == 0:
        return 0.0, float(a['n'] + b['n'] - 2)
    return se, (va + vb) ** 2 / (va ** 2 / (a['n'] - 1) + vb ** 2 / (b['n'] - 1))


def tost(a, b, low, upp):
    """Two one-sided Welch tests of mean(a) - mean(b) against the equivalence interval (low, upp),
    as statsmodels' ttost_ind(usevar='unequal'): {p, p_low, p_upp, t_low, t_upp, df}; p (the larger
    of the two) below alpha places the difference inside the interval. None without a spread."""
    if a['n'] < 2 or b['n'] < 2 or a.get('stdev') is None or b.get('stdev') is None:
        return None
    diff = a['mean'] - b['mean']
    se, df = _welch_se_df(a, b)
    if se == 0:
        p_low = 0.0 if diff > low else 1.0
        p_upp = 0.0 if diff < upp else 1.0
        return dict(p=max(p_low, p_upp), p_low=p_low, p_upp=p_upp, t_low=None, t_upp=None, df=df)
    t_low, t_upp = (diff - low) / se, (diff - upp) / se
    p_low, p_upp = 1.0 - t_cdf(t_low, df), t_cdf(t_upp, df)
    return dict(p=max(p_low, p_upp), p_low=p_low, p_upp=p_upp, t_low=t_low, t_upp=t_upp, df=df)


# -- the rank test and the bootstrap -----------------------------------------------------------

def _ranks(values):
    """Average ranks (1-based) of values, and the sizes of the groups of ties."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


def _u_counts(n1, n2):
    """The number of arrangements giving each value of U (0 .. n1*n2) under the null hypothesis."""
    # counts[i][j] = the distribution of U for samples of sizes i and j, built up one value at a time
    prev = [[1] for _j in range(n2 + 1)]
    for i in range(1, n1 + 1):
        cur = [[1]]
        for j in range(1, n2 + 1):
            # U(i, j) = U(i - 1, j) + j (the i-th x above every y) or U(i, j - 1) (the j-th y above every x)
            size = i * j + 1
            row = [0] * size
            for u, c in enumerate(prev[j]):
                row[u + j] += c
            for u, c in enumerate(cur[j - 1]):
                row[u] += c
            cur.append(row)
        prev = cur
    return prev[n2]


def mann_whitney(x, y):
    """The two-sided Mann-Whitney U test of samples x and y as SciPy's mannwhitneyu(method='auto')
    computes it: the exact null distribution when either sample has at most 8 values and there are
    no ties (and n1 x n2 <= EXACT_MAX_PAIRS), else the normal approximation with the tie and
    continuity corrections. Returns {u (x's U), p, method}."""
    n1, n2 = len(x), len(y)
    if not n1 or not n2:
        raise StatsError('the rank test needs a value on each side')
    ranks, ties = _ranks(list(x) + list(y))
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2.0
    u = max(u1, n1 * n2 - u1)
    tied = any(t > 1 for t in ties)
    if (n1 <= 8 or n2 <= 8) and not tied and n1 * n2 <= EXACT_MAX_PAIRS:
        counts = _u_counts(n1, n2)
        total = float(sum(counts))
        k = int(round(u))
        p = 2.0 * sum(counts[k:]) / total
        method = 'exact'
    else:
        n = n1 + n2
        tie_term = sum(t ** 3 - t for t in ties)
        s = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - tie_term / float(n * (n - 1))))
        z = (u - n1 * n2 / 2.0 - 0.5) / s if s > 0 else float('inf')
        p = 2.0 * (1.0 - norm_cdf(z)) if z != float('inf') else 0.0
        method = 'asymptotic'
    return dict(u=u1, p=min(1.0, max(0.0, p)), method=method)


def rank_test_floor(n1, n2):
    """The smallest two-sided p the exact rank test can give with these sample sizes: 2 / C(n1 + n2,
    n1) (3 vs 3: 0.1; 5 vs 5: 0.0079), through log-gamma for large samples."""
    if n1 < 1 or n2 < 1:
        return 1.0
    log_c = math.lgamma(n1 + n2 + 1) - math.lgamma(n1 + 1) - math.lgamma(n2 + 1)
    return min(1.0, 2.0 * math.exp(-log_c))


def rank_test_can_decide(n1, n2, alpha=ALPHA, family=1):
    """Whether the exact rank test can reach p < alpha at all with these sample sizes among `family`
    comparisons corrected together (3 vs 3 cannot: its smallest two-sided p is 0.1)."""
    return rank_test_floor(n1, n2) * max(family, 1) < alpha


def _median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def bootstrap_median_ratio(x, y, margin_pct=MARGIN_PCT, confidence=0.95, resamples=BOOTSTRAP_RESAMPLES,
                           seed=BOOTSTRAP_SEED):
    """A seeded percentile bootstrap of median(x) / median(y) - 1, in %: {delta_pct, ci_pct,
    p_equivalence} where p_equivalence is the bootstrap's two one-sided tests against +-margin_pct
    (the larger share of resampled ratios at or beyond either margin). None when a median of y is 0."""
    if not x or not y:
        return None
    base = _median(y)
    if base == 0:
        return None
    rng = random.Random(seed)
    n1, n2 = len(x), len(y)
    deltas = []
    for _i in range(resamples):
        mx = _median([x[int(rng.random() * n1)] for _k in range(n1)])
        my = _median([y[int(rng.random() * n2)] for _k in range(n2)])
        if my == 0:
            continue
        deltas.append((mx / my - 1.0) * 100.0)
    if not deltas:
        return None
    deltas.sort()
    tail = (1.0 - confidence) / 2.0
    lo = deltas[int(math.floor(tail * (len(deltas) - 1)))]
    hi = deltas[int(math.ceil((1.0 - tail) * (len(deltas) - 1)))]
    below = sum(1 for d in deltas if d <= -margin_pct) / float(len(deltas))
    above = sum(1 for d in deltas if d >= margin_pct) / float(len(deltas))
    return dict(delta_pct=(_median(x) / base - 1.0) * 100.0, ci_pct=[lo, hi], p_equivalence=max(below, above))


def skewed(metric_unit, x, y):
    """Whether a comparison calls for the rank test: a latency (unit ms: a tail, not a bell), or a
    sample with a value beyond Tukey's far-out fences (3 IQR beyond the quartiles, n >= 4)."""
    if metric_unit == 'ms':
        return True
    return _far_out(x) or _far_out(y)


def _far_out(values):
    if len(values) < 4:
        return False
    s = sorted(values)
    n = len(s)

    def quantile(q):
        pos = q * (n - 1)
        i = int(math.floor(pos))
        return s[i] + (s[min(i + 1, n - 1)] - s[i]) * (pos - i)
    q1, q3 = quantile(0.25), quantile(0.75)
    iqr = q3 - q1
    return any(v < q1 - 3 * iqr or v > q3 + 3 * iqr for v in s) and iqr > 0


# -- the correction across a family ------------------------------------------------------------

def adjust(pvalues, method='holm'):
    """p-values corrected for their number (None stays None and is no member of the family):
    'holm' (Holm's step-down, family-wise error), 'bh' (Benjamini-Hochberg, false discovery
    rate) or 'none', as statsmodels' multipletests(method='holm' / 'fdr_bh') corrects them."""
    if method not in CORRECTIONS:
        raise StatsError('correction must be one of %s, got %r' % (', '.join(CORRECTIONS), method))
    members = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    out = list(pvalues)
    if method == 'none' or not members:
        return out
    members.sort()
    m = len(members)
    if method == 'holm':
        running = 0.0
        for k, (p, i) in enumerate(members):
            running = max(running, min(1.0, (m - k) * p))
            out[i] = running
    else:
        running = 1.0
        for k in range(m - 1, -1, -1):
            p, i = members[k]
            running = min(running, 1.0, p * m / float(k + 1))
            out[i] = running
    return out


# -- one comparison ----------------------------------------------------------------------------

def _values(s):
    return [v for v in (s.get('values') or []) if v is not None]


def conclude(c, b, better, margin_pct=MARGIN_PCT, alpha=ALPHA, robust=True):
    """The tests of candidate summary c against baseline summary b (summaries as stats.summarize
    gives them, with 'values' for the rank test) before any correction:
    {test, p, p_equivalence, mde_pct, equivalence_margin_pct, robust, reason}; p is Welch's (None
    with fewer than two values on a side), p_equivalence the TOST's. For skewed data `robust` holds
    the rank test and the bootstrap; select_test() lets them decide when they can, finish() adds the
    verdict. robust=False leaves them out (a sequential comparison: Welch and the TOST decide)."""
    if margin_pct is None or not is_number(margin_pct) or margin_pct < 0:
        raise StatsError('equivalence_margin_pct must be a number >= 0, got %r' % (margin_pct,))
    out = dict(test='welch', p=None, p_equivalence=None, mde_pct=None, equivalence_margin_pct=float(margin_pct),
               robust=None, reason=None, n_pair=(c['n'], b['n']))
    if c['n'] < 2 or b['n'] < 2 or c.get('stdev') is None or b.get('stdev') is None:
        out['reason'] = 'too little data: n=%d vs n=%d (a spread needs 2 values on each side)' % (c['n'], b['n'])
        return out
    out['p'], out['p_equivalence'], reason = _welch_tost(c, b, margin_pct)
    out['mde_pct'] = mde_pct(c, b, alpha)
    if reason:
        out['reason'] = reason
    bm = b['mean']
    x, y = _values(c), _values(b)
    if robust and len(x) == c['n'] and len(y) == b['n'] and skewed(c.get('unit'), x, y):
        mw = mann_whitney(x, y)
        boot = bootstrap_median_ratio(x, y, margin_pct) if max(len(x), len(y)) <= BOOTSTRAP_MAX_N else None
        out['robust'] = dict(test='mann-whitney', p=mw['p'], u=mw['u'], method=mw['method'], decided=False,
                             floor_p=rank_test_floor(len(x), len(y)),
                             median_delta_pct=boot['delta_pct'] if boot else None,
                             ci_pct=boot['ci_pct'] if boot else None,
                             p_equivalence=boot['p_equivalence'] if (boot and bm) else None)
        out['welch'] = dict(p=out['p'], p_equivalence=out['p_equivalence'])
    return out


def _welch_tost(c, b, margin_pct):
    """(Welch's p, the TOST's p against +-margin_pct of the baseline mean, why the TOST has none)
    of two summaries with a spread each."""
    p = welch(c, b)['p']
    bm = b['mean']
    if bm:
        margin = abs(bm) * margin_pct / 100.0
        eq = tost(c, b, -margin, margin)
        return p, (eq['p'] if eq else None), None
    if c['mean'] == bm and c['stdev'] == 0 and b['stdev'] == 0:
        return p, 0.0, None     # the same constant on both sides
    return p, None, 'the baseline mean is 0: no margin in % of it'


def select_test(cmp, family=1, alpha=ALPHA):
    """Let the rank test decide a skewed comparison (conclude's `robust`) when it can: when its
    smallest possible p times the number of comparisons corrected together (the Bonferroni bound of
    any correction) is below alpha. 3 vs 3 never can (its smallest two-sided p is 0.1), 5 vs 5 can
    alone but not among 24 comparisons (0.0079 x 24), 7 vs 7 can among 24. Otherwise Welch decides
    and robust.note says why. Updates and returns cmp."""
    robust = cmp.get('robust')
    if not robust:
        return cmp
    if robust['floor_p'] * max(family, 1) < alpha:
        robust['decided'] = True
        robust.pop('note', None)
        cmp.update(test='mann-whitney', p=robust['p'])
        if robust.get('p_equivalence') is not None:
            cmp['p_equivalence'] = robust['p_equivalence']
    else:
        robust['decided'] = False
        welch_parts = cmp.get('welch') or {}
        cmp.update(test='welch', p=welch_parts.get('p', cmp['p']),
                   p_equivalence=welch_parts.get('p_equivalence', cmp['p_equivalence']))
        level = ('p < %.2g' % alpha) if family <= 1 else ('p < %.2g / %d (the level %d comparisons corrected together '
                                                          'need)' % (alpha, family, family))
        robust['note'] = 'the rank test cannot reach %s with n=%d vs n=%d: Welch decides' % (
            level, cmp['n_pair'][0], cmp['n_pair'][1])
    return cmp


def repetitions_needed(delta, sd, margin, alpha_difference=ALPHA, alpha_equivalence=ALPHA, power=POWER):
    """Repetitions per side that would settle a comparison at the observed difference `delta` and
    spread `sd` (pooled; all in the metric's unit): the fewer of those that would make the difference
    detectable (the two-sided t-test's power at alpha_difference, in the usual approximation: the
    noncentrality reaches the critical t plus the power's normal quantile) and those that would place
    it inside +-margin (TOST, the same approximation). An estimate; None when neither is in reach (no
    spread known, or more than MAX_REPETITIONS_NEEDED)."""
    if sd is None:
        return None
    if sd == 0:
        return 2
    delta = abs(delta)
    found = []
    if delta > 0:
        z_power = norm_ppf(power)

        def detects(n):
            return delta / (sd * math.sqrt(2.0 / n)) >= t_ppf(1.0 - alpha_difference / 2.0, 2 * n - 2) + z_power
        found.append(_smallest_n(detects))
    if margin is not None and delta < margin:
        beta = (1.0 - power) / (2.0 if delta == 0 else 1.0)

        def settles(n):
            se = sd * math.sqrt(2.0 / n)
            return (margin - delta) / se >= t_ppf(1.0 - alpha_equivalence, 2 * n - 2) + norm_ppf(1.0 - beta)
        found.append(_smallest_n(settles))
    found = [n for n in found if n is not None]
    return min(found) if found else None


def _smallest_n(ok):
    """The smallest n >= 2 with ok(n) (ok is monotone in n), or None beyond MAX_REPETITIONS_NEEDED."""
    if ok(2):
        return 2
    lo, hi = 2, 4
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > MAX_REPETITIONS_NEEDED:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


# -- looking again: a sequential test ------------------------------------------------------------

SEQUENTIAL_METHOD = ('group-sequential: a comparison is tested at fixed looks (the planned repetitions, then '
                     'twice as many, and so on, and the cap), each look may spend a share of alpha fixed in advance '
                     '(half at the first, the rest evenly over the others), and its p is its smallest p over the '
                     'looks it reached divided by that look\'s share (a union bound: valid whatever decided to run '
                     'more)')


def look_weights(first, last):
    """{n: the share of alpha the look at n repetitions per side may spend}. The looks: `first` (the
    planned repetitions), then doubling while below `last` (the cap), and `last`; half of alpha at
    the first look, the other half evenly over the others; all of it at `first` when no further
    look is possible. The shares add up to 1."""
    first = max(int(first), 2)
    last = int(last)
    if last <= first:
        return {first: 1.0}
    later, n = [], first
    while n * 2 < last:
        n *= 2
        later.append(n)
    later.append(last)
    out = dict((k, 0.5 / len(later)) for k in later)
    out[first] = 0.5
    return out


def sequential(x, y, margin_pct, first, last):
    """The tests of candidate values x against baseline values y (each in repetition order) when
    the number of repetitions was decided by looking at the data (more rounds for comparisons not
    yet settled). At each look n (look_weights(first, last); a side with fewer values than `first`
    is looked at once, at what it has) the first n values of each side are tested (Welch, TOST);
    p and p_equivalence are the smallest of p_n / weight_n over the looks (capped at 1), looking
    only at looks whose difference has the sign of all the data's. However often a run looks and
    whatever makes it stop, the chance that p (or p_equivalence) falls below a level by chance is at
    most that level: {p, p_equivalence, looks, look_n, next_look, weight_next, first, last, method}.
    next_look, weight_next: the next look's n and share (None at the cap); repetitions_needed is
    computed at that share."""
    weights = look_weights(first, last)
    have = min(len(x), len(y))
    looks = sorted(n for n in weights if n <= have) or ([have] if have >= 2 else [])
    full = as_summary(list(x), 'candidate')['mean'] - as_summary(list(y), 'baseline')['mean'] if have else None
    best_p = best_eq = None
    look_n = None
    for n in looks:
        w = weights.get(n, weights[min(weights)])
        c, b = as_summary(list(x[:n]), 'candidate'), as_summary(list(y[:n]), 'baseline')
        if c.get('stdev') is None or b.get('stdev') is None:
            continue
        p, p_eq, _reason = _welch_tost(c, b, margin_pct)
        diff = c['mean'] - b['mean']
        if p is not None and diff != 0 and (diff > 0) == (full > 0):
            if best_p is None or min(1.0, p / w) < best_p:
                best_p, look_n = min(1.0, p / w), n
        if p_eq is not None:
            best_eq = min(1.0, p_eq / w) if best_eq is None else min(best_eq, p_eq / w)
    later = [n for n in sorted(weights) if n > (looks[-1] if looks else 0)]
    return dict(p=best_p, p_equivalence=best_eq, looks=len(looks), look_n=look_n,
                next_look=later[0] if later else None, weight_next=weights[later[0]] if later else None, first=max(int(first), 2), last=int(last),
                method=SEQUENTIAL_METHOD)


def finish(cmp, c, b, better, p_adjusted=None, p_equivalence_adjusted=None, alpha=ALPHA):
    """The verdict of one comparison (conclude's result `cmp`, updated and returned) from its
    p-values after the correction across the report (the raw ones for a family of one):
    better/worse when the difference is significant, equivalent when the TOST places it within the
    margin, else inconclusive with repetitions_needed and the reason."""
    p_adj = cmp['p'] if p_adjusted is None else p_adjusted
    eq_adj = cmp['p_equivalence'] if p_equivalence_adjusted is None else p_equivalence_adjusted
    cmp.update(p_adjusted=p_adj, p_equivalence_adjusted=eq_adj, repetitions_needed=None)
    diff = c['mean'] - b['mean'] if c.get('mean') is not None and b.get('mean') is not None else None
    if p_adj is not None and p_adj < alpha and diff:
        up = diff > 0
        cmp['verdict'] = 'better' if up == (better == 'higher') else 'worse'
        cmp['reason'] = None
    elif eq_adj is not None and eq_adj < alpha:
        cmp['verdict'] = 'equivalent'
        cmp['reason'] = None
    else:
        cmp['verdict'] = 'inconclusive'
        sd = pooled_sd(c, b)
        if sd is None:   # one side has a spread: its spread stands for both
            known = [s for s in (c, b) if s['n'] >= 2 and s.get('stdev') is not None]
            sd = known[0]['stdev'] if known else None
        margin = abs(b['mean']) * cmp['equivalence_margin_pct'] / 100.0 if b.get('mean') else None
        factor = (p_adj / cmp['p']) if (cmp.get('p') and p_adj) else 1.0
        eq_factor = (eq_adj / cmp['p_equivalence']) if (cmp.get('p_equivalence') and eq_adj) else 1.0
        # a sequential comparison's next look may spend only its share of alpha
        share = (cmp.get('sequential') or {}).get('weight_next') or 1.0
        if diff is not None:
            need = repetitions_needed(diff, sd, margin, share * alpha / max(factor, 1.0), share * alpha / max(eq_factor, 1.0))
            # what did not settle it at this n will not at this n: at least one more on each side
            cmp['repetitions_needed'] = None if need is None else max(need, c['n'] + 1, b['n'] + 1)
        if not cmp.get('reason'):
            cmp['reason'] = ('neither a difference nor equivalence within +-%.4g%% is shown at this n and spread'
                             % cmp['equivalence_margin_pct'])
    return cmp


def compare(candidate, baseline, better='higher', alpha=ALPHA, margin_pct=5.0, conclude_now=True, robust=True):
    """Compare a candidate with its baseline (numbers, lists of repetitions or summaries).

    Returns delta_pct (candidate vs baseline, in % of the baseline mean), ci_pct ([low, high] of
    that difference, Welch), slower_pct (the field reports' column), both summaries, and the
    conclusion (a family of one: no correction): verdict (better, worse,
    equivalent within +-margin_pct, inconclusive), test, p, p_adjusted, p_equivalence, mde_pct,
    equivalence_margin_pct, repetitions_needed (for inconclusive) and reason; significant
    (p < alpha; None when there is too little data to tell) and worse (True/False/None).
    conclude_now=False leaves the verdict out (None): a report concludes after its correction.
    robust=False: no rank test or bootstrap for skewed data (conclude()).
    """
    c, b = as_summary(candidate, 'candidate'), as_summary(baseline, 'baseline')
    if better not in ('higher', 'lower'):
        raise StatsError("better must be 'higher' or 'lower', got %r" % (better,))
    w = welch(c, b)
    bm = b['mean']
    ci_pct = [x / abs(bm) * 100.0 for x in w['ci']] if (w['ci'] and bm) else None
    out = conclude(c, b, better, margin_pct, alpha, robust)
    if conclude_now:
        select_test(out, 1, alpha)
        finish(out, c, b, better, alpha=alpha)
        out.pop('n_pair', None)
        out.pop('welch', None)
    else:
        out.update(verdict=None, p_adjusted=None, p_equivalence_adjusted=None, repetitions_needed=None)
    significant = None if out['p'] is None or out['verdict'] is None else out['verdict'] in ('better', 'worse')
    out.update({
        'delta_pct': delta_pct(c['mean'], bm),
        'ci_pct': ci_pct,
        'df': w['df'],
        'significant': significant,
        'worse': None if significant is None else out['verdict'] == 'worse',
        'slower_pct': slower_pct(c['mean'], bm, better),
        'better': better,
        'candidate': c,
        'baseline': b,
    })
    return out
