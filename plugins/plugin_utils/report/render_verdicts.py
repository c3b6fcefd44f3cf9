# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How every report format says a comparison's conclusion (plugin_utils/analysis/verdicts.py): the verdict,
the detectable effect, the repetitions that would settle an inconclusive one, which test decided,
and how the report's comparisons were corrected. Pure functions over the analysis; render.py,
render_html.py and render_csv.py lay them out."""

from __future__ import annotations

CORRECTION_NAMES = {'holm': 'Holm', 'bh': 'Benjamini-Hochberg', 'none': 'no correction'}
TEST_NAMES = {'welch': 'Welch t-test', 'mann-whitney': 'Mann-Whitney U'}
FAMILY_NAMES = {'headline': 'the overview', 'detail': 'the other metrics of the tables'}
VERDICTS = ('better', 'worse', 'equivalent', 'inconclusive')


def fmt_pct(x):
    """12.3% / 150% (no sign)."""
    if x is None:
        return 'n/a'
    return '%.0f%%' % x if abs(x) >= 100 else '%.1f%%' % x


def verdict_text(s):
    """`worse`, `equivalent within ±5%`, `inconclusive, needs 8 per side`; '' without a comparison."""
    text = _verdict_only(s)
    if text and s.get('differs'):  # regress.py: inert text, the parameters of two runs that differ
        return '%s, parameters differ: %s' % (text, s['differs'])
    return text


def _verdict_only(s):
    v = s.get('verdict')
    if not v:
        return ''
    if v == 'equivalent':
        return 'equivalent within ±%s' % _margin(s)
    if v != 'inconclusive':
        return v
    need = s.get('repetitions_needed')
    head = 'inconclusive, too little data' if s.get('p') is None else 'inconclusive'
    if need:
        return '%s, needs %d per side' % (head, need)
    return head if s.get('p') is None else head + ', out of reach'


def settle_text(row):
    """What settling an inconclusive overview row would take: `settles with 14 per side, about 90 s of
    runs more` (noise.settle_s), or that no number of runs would at this spread."""
    need = row.get('repetitions_needed')
    cost = (row.get('noise') or {}).get('settle_s')
    if not need:
        return 'no number of repetitions would settle it at this spread'
    if cost is None:
        return 'settles with %d per side' % need
    return 'settles with %d per side, about %.0f s of runs more' % (need, cost)


def _margin(s):
    m = s.get('equivalence_margin_pct')
    return 'n/a' if m is None else '%.4g%%' % m


def detectable_text(s):
    """`detectable 11.6%` (the smallest difference the run could see), '' when unknown."""
    return '' if s.get('mde_pct') is None else 'detectable %s' % fmt_pct(s['mde_pct'])


def test_text(s):
    """Which test decided, and its corrected p: `Welch t-test, p 0.03 → 0.36 (Holm)`."""
    if s.get('p') is None:
        return ''
    name = TEST_NAMES.get(s.get('test'), s.get('test') or '?')
    if s.get('p_adjusted') is None or s['p_adjusted'] == s['p']:
        return '%s, p %s' % (name, fmt_p(s['p']))
    return '%s, p %s → %s corrected' % (name, fmt_p(s['p']), fmt_p(s['p_adjusted']))


def fmt_p(p):
    if p is None:
        return 'n/a'
    if p < 0.001:
        return '<0.001'
    return '%.3f' % p if p < 0.1 else '%.2f' % p


def verdict_kind(s):
    """better, worse, equivalent, inconclusive; unknown without a comparison (no delta)."""
    if s.get('delta_pct') is None or not s.get('verdict'):
        return 'unknown'
    return s['verdict']


def correction_lines(analysis):
    """One line per family of the report's comparisons: how many, the method, the verdict counts.
    [] for an analysis without verdicts."""
    part = analysis.get('correction') or {}
    method = CORRECTION_NAMES.get(part.get('method'), part.get('method'))
    out = []
    for fam in part.get('families') or []:
        if not fam.get('comparisons'):
            continue
        counts = fam.get('verdicts') or {}
        out.append('%s: %d comparison(s), %d with a p-value, corrected together (%s, α %.2g): %s' % (
            FAMILY_NAMES.get(fam['name'], fam['name']).capitalize(), fam['comparisons'], fam.get('tested', 0), method,
            part.get('alpha', 0.05), ', '.join('%d %s' % (counts.get(v, 0), v) for v in VERDICTS)))
    seq = part.get('sequential')
    if out and seq:
        out.append('Sequential test (extra rounds went where a comparison could still be settled, budget %.0f s): %s'
                   % (seq.get('budget_s') or 0, seq.get('method')))
    return out


LEGEND = ('Each entry is mean ± half-width of the 95% confidence interval of the mean (n measured runs), then the '
          'difference to the baseline cell in % and the verdict: better or worse (the difference is significant after '
          'the correction across the report), equivalent (two one-sided tests place it within the equivalence margin, '
          '±5% of the baseline unless the matrix says otherwise), inconclusive (neither: with the repetitions per side '
          'that would settle it at the spread seen). detectable: the smallest difference this run could detect '
          '(α 0.05, power 0.8, from both sides\' n and spread). Skewed data (latencies, outliers) are decided by the '
          'Mann-Whitney rank test where the sample sizes let it reach the corrected level.')
