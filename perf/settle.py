"""How many of a run's overview rows a budget could settle, and at what spread: a simulation of the
rounds driven by the comparisons, fed by a run's own records.

Each overview cell is modelled by what the run measured (its mean, its standard deviation, what one
run of it cost), drawn again from a normal distribution with fixed seeds, and put through the real
code of a run: verdicts.compared with the sequential test, conclude_report (the correction across
the report), rounds.comparisons and rounds.decide (where the extra rounds go, until the budget is
spent). It answers "would a bigger budget or a higher cap settle more rows, or must each run be
steadier?" without spending the machine time to find out; `--sd-scale 0.5` asks what half of
today's spread would give. The measured means stand for the true ones (an estimate from 3 to 12
runs), so read the counts as the size of the effect of a setting, not as a promise.

    .venv/bin/python perf/settle.py benchlab-runs/<run>    # the run's own budget and cap
    .venv/bin/python perf/settle.py benchlab-runs/<run> --budget 330 600 --cap 12 24 --sd-scale 1 0.5 0.2
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / '.collections'))

# pylint: disable=wrong-import-position
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import summarize  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze, charted_metric, looks_of  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.rounds import comparisons, decide  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.spread import run_costs  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.verdicts import compared, conclude_report, margin_of  # noqa: E402


def model_of(records, plan):
    """The overview as the run measured it: [{name, benchmark, margin, looks, cells: [{cell, mean, sd,
    better, baseline, baseline_cell}]}] (the charted metric of each benchmark; margin and looks, the
    first and the most repetitions, as the plan gives them to the benchmark) and {(benchmark, cell):
    the seconds one run cost}."""
    analysis = analyze(records, plan)
    model = []
    for b in analysis['benchmarks']:
        m = charted_metric(b)
        cells = []
        for c in b['cells'] if m else ():
            s = c['metrics'].get(m)
            if s and s.get('mean') is not None:
                cells.append(dict(cell=c['cell'], mean=s['mean'], sd=s.get('stdev') or 0.0, better=s['better'], delta_pct=s.get('delta_pct'),
                                  baseline=c['baseline'], baseline_cell=c['baseline_cell']))
        if any(not c['baseline'] for c in cells):
            reps = int(next((p.get('repetitions') for p in plan.get('benchmarks') or []
                             if isinstance(p, dict) and p.get('name') == b['benchmark']), None) or 3)
            model.append(dict(name=b['name'], benchmark=b['benchmark'], cells=cells, margin=margin_of(plan, b['benchmark']),
                              looks=looks_of(plan, b['benchmark']) or (reps, reps)))
    return model, run_costs(plan, records)


def _analysis(model, values, looks):
    benches = []
    for b in model:
        sums = {}
        for c in b['cells']:
            s = summarize(values[(b['name'], c['cell'])])
            s.update(unit='', better=c['better'], values=list(values[(b['name'], c['cell'])]))
            sums[c['cell']] = s
        cells = []
        for c in b['cells']:
            s = sums[c['cell']]
            if not c['baseline'] and c['baseline_cell'] in sums:
                s.update(compared(s, sums[c['baseline_cell']], b['margin'], looks[b['name']]))
            cells.append(dict(cell=c['cell'], baseline=c['baseline'], baseline_cell=c['baseline_cell'], metrics={'m': s}))
        benches.append(dict(name=b['name'], benchmark=b['benchmark'], primary='m', metrics=['m'], cells=cells))
    conclude_report(benches, [], lambda _b: 'm')
    return dict(benchmarks=benches)


def simulate(model, cost, budget_s, cap, seed, sd_scale=1.0, baseline_sd_scale=None):
    """One run of the overview through the real verdicts and rounds: ({row: its verdict}, seconds of
    extra rounds spent). cap: every benchmark's max_repetitions (None: each its own, as planned);
    baseline_sd_scale: the baselines' spread times this instead of sd_scale."""
    rng = random.Random(seed)
    spec = dict(((b['name'], c['cell']), c) for b in model for c in b['cells'])

    def draw(key):
        scale = baseline_sd_scale if spec[key]['baseline'] and baseline_sd_scale is not None else sd_scale
        return max(1e-12, rng.gauss(spec[key]['mean'], spec[key]['sd'] * scale))
    looks = dict((b['name'], (b['looks'][0], b['looks'][1] if cap is None else cap)) for b in model)
    first = dict(((b['name'], c['cell']), looks[b['name']][0]) for b in model for c in b['cells'])
    values = dict((key, [draw(key) for _i in range(first[key])]) for key in sorted(spec))
    caps = dict((b['benchmark'], looks[b['name']][1]) for b in model)
    left = float(budget_s)
    while True:
        items = comparisons(_analysis(model, values, looks), caps)
        runs, _lines = decide(items, cost, left)
        if not runs:
            return dict((it['key'], it['verdict']) for it in items), budget_s - left
        for bench, cell, k in runs:
            for b in model:
                if b['benchmark'] == bench and (b['name'], cell) in values:
                    values[(b['name'], cell)].extend(draw((b['name'], cell)) for _i in range(k))
            left -= k * cost[(bench, cell)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    ap.add_argument('run_dir', type=Path, help='a run directory (results.jsonl and plan.json)')
    ap.add_argument('--budget', type=float, nargs='+', help="seconds of extra rounds (default: the run's budget_s)")
    ap.add_argument('--cap', type=int, nargs='+', help="every benchmark's max_repetitions (default: each its own, as the run planned)")
    ap.add_argument('--sd-scale', type=float, nargs='+', default=[1.0],
                    help="each cell's spread times this (1: the run's own)")
    ap.add_argument('--baseline-sd-scale', type=float, nargs='+', default=[None],
                    help="the baselines' spread times this (default: as --sd-scale)")
    ap.add_argument('--sims', type=int, default=30, help='simulated runs per setting (seeds 0..sims-1)')
    args = ap.parse_args(argv)
    records = [json.loads(line) for line in (args.run_dir / 'results.jsonl').read_text().splitlines() if line.strip()]
    plan = json.loads((args.run_dir / 'plan.json').read_text())
    budgets = args.budget or [float((plan.get('rounds') or {}).get('budget_s') or 0)]
    caps = args.cap or [None]
    model, cost = model_of(records, plan)
    print('%s: %d overview rows, %s repetitions first' % (args.run_dir.name, sum(
        1 for b in model for c in b['cells'] if not c['baseline']), '/'.join(sorted(set(str(b['looks'][0]) for b in model)))))
    print('%8s %5s %8s %9s  %s' % ('budget_s', 'cap', 'spread', 'baselines', 'rows concluded over %d simulated runs: mean (min-max)' % args.sims))
    settled = {}
    for budget, cap, scale, base in itertools.product(budgets, caps, args.sd_scale, args.baseline_sd_scale):
        sims = [simulate(model, cost, budget, cap, seed, scale, base)[0] for seed in range(args.sims)]
        got = [sum(1 for v in verdicts.values() if v != 'inconclusive') for verdicts in sims]
        print('%8.0f %5s %7.2fx %8.2fx  %.1f (%d-%d)' % (budget, 'own' if cap is None else cap, scale, scale if base is None else base,
                                                         statistics.mean(got), min(got), max(got)))
        for verdicts in sims:
            for key, v in verdicts.items():
                settled.setdefault(key, []).append(v != 'inconclusive')
    print('\nper row, as measured (difference and spread of each side), and how often it was settled over all'
          ' the settings above:')
    for b in model:
        by_name = dict((c['cell'], c) for c in b['cells'])
        for c in b['cells']:
            base = by_name.get(c['baseline_cell'])
            if c['baseline'] or not base:
                continue
            key = '%s %s vs %s' % (b['name'], c['cell'], base['cell'])
            got = settled.get(key) or [False]
            print('  %-48s %+7.1f %%  spread %5.1f %% / %5.1f %%  settled %3.0f %%' % (
                key, c['delta_pct'] or 0.0, c['sd'] / c['mean'] * 100.0,
                base['sd'] / base['mean'] * 100.0, 100.0 * sum(got) / len(got)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
