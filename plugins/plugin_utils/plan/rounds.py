# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rounds driven by the comparisons: where the next repetitions go. Pure functions.

A matrix whose methodology sets budget_s (wall seconds for extra rounds) and max_repetitions gets
`rounds` in its plan. After the planned repetitions (and any variance gate), the bench_run role asks
next_round() again and again: it analyses every record so far as the report would (the overview's
comparisons, corrected across the report, each with the sequential test of inference.sequential,
valid however often it is looked at) and brings both sides of the comparisons closest to a verdict
per second of machine time to their test's next look (nothing is decided between looks), until
every comparison has concluded, none can within what is left of the budget or the cap, or the
budget is spent. Each round is printed: which comparison, why, the budget left; the comparisons it
stops, with their reason.
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import look_weights
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze, charted_metric
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.spread import run_costs, settle_s


def at_look(need, looks):
    """The repetitions per side a comparison needs, rounded up to the sequential test's next look at
    or beyond them (it is tested there only; `looks`: its looks, sorted); `need` beyond the last look,
    or without looks, stays as it is."""
    if need is None:
        return need
    return next((n for n in looks if n >= need), need)


def comparisons(analysis, caps):
    """The overview's comparisons as decide() takes them: {key, bench, cell, baseline, verdict, need,
    n: (candidate, baseline), cap, looks} per benchmark and cell that is no baseline (its charted
    metric); need is repetitions_needed at the sequential test's next look (at_look), looks the
    test's looks.
    caps: {plan benchmark name: max_repetitions}."""
    out = []
    for b in analysis['benchmarks']:
        m = charted_metric(b)
        by_name = dict((c['cell'], c) for c in b['cells'])
        for c in b['cells'] if m else ():
            s = c['metrics'].get(m)
            base = by_name.get(c['baseline_cell'] or '')
            ref = (base or {}).get('metrics', {}).get(m) if base else None
            if c['baseline'] or s is None or ref is None or s.get('verdict') is None:
                continue
            seq = s.get('sequential')
            looks = sorted(look_weights(seq['first'], seq['last'])) if seq else []
            out.append(dict(key='%s %s vs %s' % (b['name'], c['cell'], base['cell']), bench=b['benchmark'],
                            cell=c['cell'], baseline=base['cell'], verdict=s['verdict'],
                            need=at_look(s.get('repetitions_needed'), looks), n=(s['n'], ref['n']),
                            cap=caps.get(b['benchmark']), looks=looks))
    return out


def _target(it):
    """The repetitions per side a round brings a comparison to: its sequential test's next look
    (nothing is decided between looks), one more without looks; never beyond the cap."""
    low = min(it['n'])
    later = [n for n in it.get('looks') or () if n > low]
    target = later[0] if later else low + 1
    return min(target, it['cap']) if it['cap'] is not None else target


def decide(items, cost, budget_left_s):
    """One round. items: comparisons(); cost: {(bench, cell): seconds one run costs}. Returns
    (runs: [(bench, cell, how many runs to add)], lines: what the round does and why, in order).

    A concluded comparison is done. One whose repetitions_needed is unknown, above its cap, or would
    cost more than the budget left stops with that reason. The others are ranked by the seconds
    still needed to settle them (the runs short of repetitions_needed on each side times that
    side's cost), cheapest first, and each is brought to its next look on both sides (the side
    that is ahead waits), as long as the round fits in the budget left."""
    lines, ranked = [], []
    for it in items:
        if it['verdict'] != 'inconclusive':
            continue
        need, (nc, nb), cap = it['need'], it['n'], it['cap']
        if need is None:
            lines.append('stop %s: no number of repetitions would settle it at this spread' % it['key'])
            continue
        if cap is not None and need > cap:
            lines.append('stop %s: needs %d per side, the cap (max_repetitions) is %d' % (it['key'], need, cap))
            continue
        seconds = settle_s(need, nc, nb, cost[(it['bench'], it['cell'])], cost[(it['bench'], it['baseline'])])
        if seconds > budget_left_s:
            lines.append('stop %s: needs %d per side, about %.0f s; %.0f s of the budget left'
                         % (it['key'], need, seconds, budget_left_s))
            continue
        ranked.append((seconds, it))
    ranked.sort(key=lambda pair: pair[0])
    planned, order, spent = {}, [], 0.0
    for seconds, it in ranked:
        nc, nb = it['n']
        target = _target(it)
        if target <= min(nc, nb):
            lines.append('stop %s: at the cap (max_repetitions %d)' % (it['key'], it['cap']))
            continue
        adds = {}
        for cell, n in ((it['cell'], nc), (it['baseline'], nb)):
            have = n + planned.get((it['bench'], cell), 0)
            if have < target:
                adds[cell] = target - have
        add = sum(k * cost[(it['bench'], cell)] for cell, k in adds.items())
        if spent + add > budget_left_s:
            lines.append('wait %s: its runs to the next look (%.0f s) do not fit in what is left of the budget'
                         % (it['key'], add))
            continue
        for cell, k in adds.items():
            if (it['bench'], cell) not in planned:
                order.append((it['bench'], cell))
            planned[(it['bench'], cell)] = planned.get((it['bench'], cell), 0) + k
        spent += add
        what = ', '.join('%d more of %s' % (k, cell) for cell, k in adds.items()) or 'its runs are in this round already'
        lines.append('run  %s: n %d vs %d, needs %d per side (about %.0f s more); to the look at %d: %s'
                     % (it['key'], nc, nb, it['need'], seconds, target, what))
    runs = [(bench, cell, planned[(bench, cell)]) for bench, cell in order]
    if runs:
        lines.append('this round: %d run(s), about %.0f s; %.0f s of the budget left before it'
                     % (sum(k for _b, _c, k in runs), spent, budget_left_s))
    return runs, lines


def next_round(plan, records, budget_left_s, spent_s=0.0, runs_done=0, exclude=()):
    """The runs of the next round ({runs: in the plan's run format, with gate=true and the next
    repetition number; lines: the round's plan, printed as it goes}) for the records of every host
    so far. exclude: (benchmark, cell) pairs never to repeat (a run of theirs failed)."""
    rounds = plan.get('rounds') or {}
    if not rounds:
        return dict(runs=[], lines=[])
    if budget_left_s <= 0:     # (before the analysis: the last round's would be thrown away)
        return dict(runs=[], lines=['the budget of %s s for extra rounds is spent' % rounds.get('budget_s')])
    caps = dict((b['name'], int(b['methodology'].get('max_repetitions') or b['repetitions'])) for b in plan['benchmarks'])
    analysis = analyze(records, plan)
    items = [it for it in comparisons(analysis, caps)
             if (it['bench'], it['cell']) not in exclude and (it['bench'], it['baseline']) not in exclude]
    chosen, lines = decide(items, run_costs(plan, records, spent_s, runs_done), budget_left_s)
    last, reps = {}, {}
    for run in plan['runs']:
        last[(run['benchmark'], run['cell'])] = run
    for r in records:
        labels = r.get('labels') or {}
        key = (labels.get('benchmark'), labels.get('cell'))
        if isinstance(r.get('repetition'), int):
            reps[key] = max(reps.get(key, 0), r['repetition'])
    by_name = dict((b['name'], b) for b in plan['benchmarks'])
    runs = []
    for i in range(max([k for _b, _c, k in chosen] or [0])):     # interleaved: one run of each cell, then the next
        for bench, cell, k in chosen:
            if i < k:
                run = last[(bench, cell)]
                guards = dict(run['guards'], warmup=False, cooldown_s=by_name[bench]['methodology']['cooldown_s'])
                runs.append(dict(run, repetition=reps.get((bench, cell), run['repetition']) + 1 + i, guards=guards,
                                 gate=True))
    if not runs:
        settled = sum(1 for it in items if it['verdict'] != 'inconclusive')
        lines.append('no further round: %d of %d comparisons concluded' % (settled, len(items)))
    return dict(runs=runs, lines=lines)
