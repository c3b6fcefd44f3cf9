# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""Statistics over repetitions, pure Python (no numpy/scipy on targets or controllers).

summarize() gives n, mean, median, stdev, CV, min, max and the 95% confidence interval of the mean
(Student t); welch() compares two samples (difference, its CI, p-value); inference.compare() turns that into
the verdict the reports print (better, worse, equivalent, inconclusive), with the field reports'
"slower than Test 1 (in %)".
The Student t distribution comes from the regularized incomplete beta function (Lentz's continued
fraction, as in Numerical Recipes 6.4); quantiles are found by Newton steps on the CDF, bracketed.
"""

import functools
import math

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number

ALPHA = 0.05


class StatsError(ValueError):
    """Input the statistics cannot use; the message says which."""


# -- the Student t distribution ---------------------------------------------------------------

def _betacf(a, b, x):
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1.0 - x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbeta) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbeta) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with df (> 0, may be fractional) degrees of freedom."""
    if df <= 0:
        raise StatsError('degrees of freedom must be positive, got %r' % (df,))
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@functools.lru_cache(maxsize=4096)  # pure; the same (p, df) comes back for every cell of a run
def t_ppf(p, df):
    """The quantile of Student's t: the t with P(T <= t) = p (0 < p < 1)."""
    if not 0.0 < p < 1.0:
        raise StatsError('probability must be between 0 and 1, got %r' % (p,))
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
        if hi > 1e12:
            return float('inf')
    # Newton steps on the CDF (its derivative is the density), kept inside the bracket [lo, hi]
    # by a bisection step whenever Newton would leave it; a few steps reach 1e-12
    log_norm = math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
    t = (lo + hi) / 2.0
    for _step in range(200):
        err = t_cdf(t, df) - p
        if err < 0:
            lo = t
        else:
            hi = t
        density = math.exp(log_norm - (df + 1.0) / 2.0 * math.log1p(t * t / df))
        step = err / density if density > 0 else 0.0
        nxt = t - step
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2.0
        if abs(nxt - t) < 1e-13 * max(1.0, abs(t)) or hi - lo < 1e-12 * max(1.0, hi):
            return nxt
        t = nxt
    return t


# -- one sample ------------------------------------------------------------------------------

def _numbers(values):
    # fast path: plain floats, all finite (the sum of finite floats is finite unless it overflows,
    # and NaN/inf make it NaN/inf); anything else goes through the value-by-value check
    if all(isinstance(v, float) for v in values) and math.isfinite(math.fsum(values)):
        return list(values)
    out = []
    for v in values:
        if v is None:
            continue
        if not is_number(v) or math.isnan(v) or math.isinf(v):
            raise StatsError('not a finite number: %r' % (v,))
        out.append(float(v))
    return out


def summarize(values, confidence=0.95):
    """n, mean, median, stdev (sample), cv, min, max and the CI of the mean (ci95: [low, high]).

    None values ("too fast to measure") are not numbers: they are counted in too_fast.
    """
    if isinstance(values, (str, bytes)) or not hasattr(values, '__iter__'):
        raise StatsError('summarize needs a list of numbers, got %s' % type(values).__name__)
    values = list(values)
    nums = _numbers(values)
    n = len(nums)
    out = {'n': n, 'too_fast': len(values) - n, 'mean': None, 'median': None, 'stdev': None, 'cv': None,
           'min': None, 'max': None, 'ci95': None}
    if not n:
        return out
    mean = sum(nums) / n
    s = sorted(nums)
    median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0
    out.update(mean=mean, median=median, min=s[0], max=s[-1])
    if n > 1:
        stdev = math.sqrt(sum((x - mean) ** 2 for x in nums) / (n - 1))
        half = t_ppf(0.5 + confidence / 2.0, n - 1) * stdev / math.sqrt(n)
        out.update(stdev=stdev, cv=(stdev / abs(mean)) if mean else None, ci95=[mean - half, mean + half])
    return out


def histogram_percentile(bins, pct):
    """A percentile of a record's histogram {bucket value: count}: the first bucket value at which the
    running count reaches pct % of all samples (the nearest-rank rule on buckets; fio's own
    calc_clat_percentiles, fio 3.x stat.c, so fio's printed percentiles come out the same). None when
    empty."""
    items = sorted((float(k), int(v)) for k, v in bins.items() if int(v) > 0)
    total = sum(v for _skip, v in items)
    if not total:
        return None
    threshold = pct / 100.0 * total
    running = 0
    for value, count in items:
        running += count
        if running >= threshold:
            return value
    return items[-1][0]


def delta_pct(value, baseline):
    """(value - baseline) / baseline in %; None when either is unknown or the baseline is 0."""
    if value is None or baseline in (None, 0):
        return None
    return (float(value) - float(baseline)) / float(baseline) * 100.0


def slower_pct(candidate, baseline, better):
    """The field reports' "slower than Test 1 (in %)".

    For lower-is-better values such as durations: 1 - baseline/candidate; for higher-is-better
    values such as MB/s: 1 - candidate/baseline. In %; positive means slower (worse).
    """
    if candidate in (None, 0) or baseline in (None, 0):
        return None
    if better == 'lower':
        return (1.0 - float(baseline) / float(candidate)) * 100.0
    if better == 'higher':
        return (1.0 - float(candidate) / float(baseline)) * 100.0
    raise StatsError("better must be 'higher' or 'lower', got %r" % (better,))


# -- two samples -----------------------------------------------------------------------------

def as_summary(x, what):
    """A number, a list of repetitions or a summary dict -> a summary dict."""
    if isinstance(x, dict):
        if x.get('mean') is None or 'n' not in x:
            raise StatsError('%s: a summary needs n and mean' % what)
        return x
    if isinstance(x, bool):
        raise StatsError('%s: not a number: %r' % (what, x))
    if isinstance(x, (int, float)):
        return summarize([x])
    if isinstance(x, (list, tuple)):
        s = summarize(x)
        if not s['n']:
            raise StatsError('%s: no measured value' % what)
        s['values'] = [float(v) for v in x if v is not None]
        return s
    raise StatsError('%s: expected a number, a list of numbers or a summary, got %s' % (what, type(x).__name__))


def welch(a, b, confidence=0.95):
    """Welch's t-test of mean(a) - mean(b) from two summaries (n, mean, stdev).

    Returns diff, its CI [low, high], t, df and the two-sided p-value; p, t, df and the CI are None
    when either side has fewer than two values (no spread to judge noise by).
    """
    out = {'diff': a['mean'] - b['mean'], 'ci': None, 't': None, 'df': None, 'p': None}
    if a['n'] < 2 or b['n'] < 2 or a.get('stdev') is None or b.get('stdev') is None:
        return out
    va, vb = a['stdev'] ** 2 / a['n'], b['stdev'] ** 2 / b['n']
    se = math.sqrt(va + vb)
    if se == 0:
        out.update(ci=[out['diff'], out['diff']], p=0.0 if out['diff'] else 1.0,
                   t=float('inf') if out['diff'] else 0.0, df=float(a['n'] + b['n'] - 2))
        return out
    df = (va + vb) ** 2 / (va ** 2 / (a['n'] - 1) + vb ** 2 / (b['n'] - 1))
    t = out['diff'] / se
    half = t_ppf(0.5 + confidence / 2.0, df) * se
    out.update(ci=[out['diff'] - half, out['diff'] + half], t=t, df=df, p=2.0 * (1.0 - t_cdf(abs(t), df)))
    return out
