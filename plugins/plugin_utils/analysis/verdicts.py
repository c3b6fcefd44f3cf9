# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every comparison of a report concludes: the verdicts of one analysis, corrected across it. Pure functions.

The analysis compares each cell's metrics with its baseline cell's (inference.compare: the tests of
module_utils/analysis/inference.py, before any correction) and the aggregates of runs started together with
their cells' baseline; conclude_report() then corrects the p-values of the report's comparisons for
their number and gives each its verdict (better, worse, equivalent, inconclusive with
repetitions_needed).

The families corrected together (Holm by default; `correction: bh` or `none` in the matrix, the
import manifest or compare_runs' option):
- the headline: per benchmark and cell that is no baseline, the benchmark's charted metric (the
  overview's rows, which the pivots show too), and the aggregates of runs started together;
- the detail: every other metric of the side-by-side tables.
A report with 24 overview rows corrects 24 comparisons there, however many further metrics its
tables hold; the report says how many each family had and which method corrected them.
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import (
    CORRECTIONS, MARGIN_PCT, VERDICTS, adjust, compare, finish, select_test, sequential)
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import ALPHA

# What a concluded comparison carries (the metric's summary, an overview row, a pivot entry, a step).
FIELDS = ('verdict', 'test', 'p', 'p_adjusted', 'p_equivalence', 'p_equivalence_adjusted', 'mde_pct',
          'equivalence_margin_pct', 'repetitions_needed', 'reason', 'robust', 'sequential')
CORRECTION_DEFAULT = 'holm'
FAMILIES = (('headline', 'the overview: each cell\'s main metric vs its baseline, and the aggregates of runs '
                         'started together'),
            ('detail', 'the other metrics of the side-by-side tables'))


class VerdictError(ValueError):
    """A correction or margin the analysis cannot use; the message names it."""


def correction_method(value):
    """The correction named by a matrix, manifest or option (None: the default, Holm)."""
    if value in (None, ''):
        return CORRECTION_DEFAULT
    method = str(value).strip().lower()
    if method not in CORRECTIONS:
        raise VerdictError('correction must be one of %s, got %r' % (', '.join(CORRECTIONS), value))
    return method


def margin_of(plan, benchmark):
    """The equivalence margin (in %) of a matrix benchmark: its own equivalence_margin_pct, else the
    plan's, else 5."""
    plan = plan or {}
    for b in plan.get('benchmarks') or []:
        if isinstance(b, dict) and b.get('name') == benchmark and b.get('equivalence_margin_pct') is not None:
            return float(b['equivalence_margin_pct'])
    if plan.get('equivalence_margin_pct') is not None:
        return float(plan['equivalence_margin_pct'])
    return MARGIN_PCT


def compared(s, ref, margin, looks=None):
    """The fields a metric summary takes from its comparison with the baseline's summary `ref`
    (before the correction across the report: the verdict comes with conclude_report).

    looks: (first, last) when the run decided how many repetitions to make by looking at the
    comparisons (the rounds of plugin_utils/plan/rounds.py): then p and p_equivalence are the
    sequential test's (inference.sequential over the values in repetition order), Welch and TOST
    alone, and `sequential` says how."""
    cmp = compare(s, ref, better=s['better'], margin_pct=margin, conclude_now=False, robust=not looks)
    out = dict((k, cmp.get(k)) for k in ('delta_pct', 'ci_pct', 'slower_pct') + FIELDS)
    out['significant'] = cmp['significant']
    out.update(n_pair=cmp['n_pair'], welch=cmp.get('welch'), sequential=None)
    if looks and out['p'] is not None:
        seq = sequential(s.get('values') or [], ref.get('values') or [], margin, looks[0], looks[1])
        out.update(p=seq['p'], p_equivalence=seq['p_equivalence'], sequential=seq)
    return out


def uncompared():
    """The comparison fields of a summary compared with nothing (a baseline, or no data)."""
    return dict(dict.fromkeys(('delta_pct', 'ci_pct', 'significant', 'slower_pct') + FIELDS))


def compare_steps(steps, benchmarks, margins):
    """Each aggregate of runs started together compared with the baseline its cells share (the
    figure of one run alone there): adds baseline and the comparison fields. An aggregate whose
    cells have different baselines, or none with data, compares with nothing (baseline null)."""
    by_name = dict((b['name'], b) for b in benchmarks)
    for st in steps:
        st.update(uncompared(), baseline=None)
        b = by_name.get(st['benchmark'])
        agg = st.get('aggregate')
        if b is None or not agg or not agg.get('n'):
            continue
        cells = dict((c['cell'], c) for c in b['cells'])
        bases = set((cells[n]['cell'] if cells[n]['baseline'] else cells[n]['baseline_cell']) for n in st['cells'] if n in cells)
        if len(bases) != 1:
            continue
        base = cells.get(bases.pop())
        ref = (base or {}).get('metrics', {}).get(st['metric'])
        if not ref or not ref.get('n'):
            continue
        s = dict(agg, unit=ref['unit'], better=ref['better'])
        st['baseline'] = base['cell']
        st.update(compared(s, ref, margins.get(b['name'], MARGIN_PCT)))
        st['_pair'] = (s, ref)


def conclude_report(benchmarks, steps, charted, method=CORRECTION_DEFAULT, alpha=ALPHA):
    """Correct the report's comparisons family by family (see the module docstring) and give each
    its verdict. charted(bench) -> the benchmark's charted metric. Returns the analysis' `correction`
    part: {method, alpha, families: [{name, what, comparisons, tested (those with a p-value: the
    number the correction divides by), verdicts: {verdict: count}}]}."""
    method = correction_method(method)
    members = dict((name, []) for name, _what in FAMILIES)
    for b in benchmarks:
        m = charted(b)
        by_name = dict((c['cell'], c) for c in b['cells'])
        for c in b['cells']:
            if c['baseline']:
                continue
            base = by_name.get(c['baseline_cell'])
            for metric, s in c['metrics'].items():
                ref = (base or {}).get('metrics', {}).get(metric)
                if s.get('test') is None or ref is None:       # compared with nothing
                    continue
                members['headline' if metric == m else 'detail'].append((s, s, ref))
    for st in steps:
        pair = st.pop('_pair', None)
        if pair and st.get('test') is not None:
            members['headline'].append((st, pair[0], pair[1]))
    families = []
    for name, what in FAMILIES:
        group = members[name]
        tested = sum(1 for target, _s, _r in group if target['p'] is not None)
        for target, _s, _r in group:
            # the rank test decides a skewed comparison only where it can reach the corrected level
            select_test(target, tested if method != 'none' else 1, alpha)
            target.pop('n_pair', None)
            target.pop('welch', None)
        p_adj = adjust([target['p'] for target, _s, _r in group], method)
        eq_adj = adjust([target['p_equivalence'] for target, _s, _r in group], method)
        for (target, s, ref), p, eq in zip(group, p_adj, eq_adj):
            finish(target, s, ref, ref['better'], p, eq, alpha)
            target['significant'] = None if target['p'] is None else target['verdict'] in ('better', 'worse')
        families.append(dict(name=name, what=what, comparisons=len(group), tested=tested,
                             verdicts=count_verdicts(t for t, _s, _r in group)))
    return dict(method=method, alpha=alpha, families=families)


def count_verdicts(items):
    """{verdict: how many} over items carrying a verdict (every verdict listed, 0 included)."""
    counts = dict((v, 0) for v in VERDICTS)
    for item in items:
        if item.get('verdict') in counts:
            counts[item['verdict']] += 1
    return counts


def brief_verdict(s):
    """The part of a comparison a pivot entry carries beside mean, ci95 and n."""
    if not s or s.get('verdict') is None:
        return {}
    return dict((k, s.get(k)) for k in ('verdict', 'delta_pct', 'mde_pct', 'p_adjusted', 'repetitions_needed', 'test'))
