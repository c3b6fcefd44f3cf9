# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From result records to the analysis the renderers draw: per benchmark, per cell, per metric,
the statistics over repetitions and the difference to the baseline cell. Pure functions.

n is the number of repetitions (plugin_utils/analysis/measurements.py): the records of one repetition
(concurrent pairs, a duplicate) are one measurement, never several."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import SEQUENTIAL_METHOD
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import summarize
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.distributions import cell_distributions
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.explain import (
    evidence_denies_elision, evidence_rates, explain_cell, merge_flags)
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.gate import status_of
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.measurements import (
    ADDITIVE_UNITS, TOGETHER_MIN, duplicate_flag, measurements, together)
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.grouping import (
    SUBTEST_LABELS, benchmark_of, cell_of, counted, primary_metric, table_name)
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.spread import RUN_OVERHEAD_S, noise_of, run_costs, settle_s
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.traps import NOT_TOGETHER, cell_flags, trap_rates, zero_elision_flag
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.verdicts import (
    FIELDS as VERDICT_FIELDS, brief_verdict, compare_steps, compared, conclude_report, margin_of, uncompared)

_ABSENT = object()
# The labels a pivot or baseline_by may name besides the cells' own labels.
PSEUDO_LABELS = ('host', 'cell')


def analyze(records, plan=None, environment=None, pivot=None, baseline_by=None, correction=None):
    """records: dicts with an optional 'host' key; plan: the matrix plan (cells, baseline, gates, and
    the optional pivot / baseline_by labels, correction and equivalence_margin_pct); environment:
    sysinfo results keyed freely, each with 'labels' (its cell) and 'host'; pivot, baseline_by,
    correction: the report options, which override the plan's. Returns the analysis dict the
    renderers draw. Warm-up records are counted apart. Every comparison concludes (verdicts.py)."""
    plan = plan or {}
    pivot = pivot or plan.get('pivot')
    baseline_by = baseline_by or plan.get('baseline_by')
    plan_cells = dict((c['name'], c) for c in plan.get('cells', []))
    out, keys, steps, runs, margins, all_measured = [], [], [], [], {}, []
    for b in _collect(records):
        margins[b['name']] = margin_of(plan, b['benchmark'])
        bench, measured = _analyze_benchmark(b, list(plan_cells), plan.get('baseline'), plan.get('gates') or {},
                                             baseline_by, margins[b['name']], looks_of(plan, b['benchmark']))
        runs.extend(r for recs in measured.values() for r in recs)
        out.append(bench)
        all_measured.append(measured)
        keys.append(_params_key(bench, measured))
        steps.extend(step_aggregates(bench, measured))
    compare_steps(steps, out, margins)
    correction_part = conclude_report(out, steps, charted_metric, correction or plan.get('correction'))
    if plan.get('rounds'):
        correction_part['sequential'] = dict(budget_s=plan['rounds'].get('budget_s'), method=SEQUENTIAL_METHOD)
    # the traps read the verdicts: a cell "faster than its baseline" is one the corrected comparison calls better
    for bench, measured in zip(out, all_measured):
        _flag_cells(bench, measured, plan_cells, environment)
    _flag_zero_elision(out, keys)
    rows = overview(out)
    name_noise(rows, out, all_measured, plan)
    return dict(benchmarks=out, baseline_by=baseline_by or None, overview=rows, steps=steps,
                pivots=(pivots(out, pivot) if pivot else []) + sweeps(out), traps=trap_rates(runs) + evidence_rates(runs),
                correction=correction_part)


def _collect(records):
    """The records sorted into benchmarks (tables) and cells, in the order they first appear."""
    tests, placed, where = {}, [], {}
    for rec in records:
        # benchmark_of once per distinct (tool, test, benchmark label, sub-test labels): 100k records are common
        labels = rec.get('labels') or {}
        key = (rec['tool'], rec['test'], labels.get('benchmark'), *[labels.get(k, _ABSENT) for k in SUBTEST_LABELS])
        found = where.get(key)
        if found is None:
            found = where[key] = benchmark_of(rec)
        tests.setdefault(found[0], set()).add(found[1][0])
        placed.append((rec, found[0], found[1]))
    index, names = {}, {}
    for rec, bench, series in placed:
        if (bench, series) not in names:
            names[bench, series] = table_name(bench, series, len(tests[bench]) > 1)
        name = names[bench, series]
        if name not in index:
            index[name] = dict(name=name, benchmark=bench, tool=rec['tool'], test=rec['test'], tool_versions=[],
                               cells={}, metrics=[])
        _add_record(index[name], rec)
    return list(index.values())


def _add_record(b, rec):
    if rec.get('tool_version') and rec['tool_version'] not in b['tool_versions']:
        b['tool_versions'].append(rec['tool_version'])
    cell = cell_of(rec)
    c = b['cells'].get(cell)
    if c is None:
        c = b['cells'][cell] = dict(cell=cell, hosts=[], records=[], warnings=[], warmups=0, labels=None)
    if rec.get('host') and rec['host'] not in c['hosts']:
        c['hosts'].append(rec['host'])
    c['labels'] = rec.get('labels')
    if not counted(rec):
        c['warmups'] += 1
        return
    c['records'].append(rec)
    c['warnings'].extend(w for w in rec.get('warnings') or () if w not in c['warnings'])
    b['metrics'].extend(m for m in rec['metrics'] if m not in b['metrics'])


def looks_of(plan, benchmark):
    """(first, last) repetitions of a benchmark whose run looked at its comparisons to decide on
    more rounds (the plan has `rounds`), else None: its comparisons take the sequential test."""
    if not (plan or {}).get('rounds'):
        return None
    for b in plan.get('benchmarks') or []:
        if isinstance(b, dict) and b.get('name') == benchmark:
            reps = int(b.get('repetitions') or 1)
            return reps, int((b.get('methodology') or {}).get('max_repetitions') or reps)
    return None


def _analyze_benchmark(b, cell_order, plan_baseline, gates, baseline_by, margin, looks=None):
    """(the benchmark's analysis, {cell: its measurements}): statistics per cell and metric, each
    cell compared with its baseline."""
    seen = list(b['cells'])
    names = sorted(seen, key=lambda n: (cell_order.index(n) if n in cell_order else len(cell_order), seen.index(n)))
    baseline = plan_baseline if plan_baseline in names else names[0]
    gate = gates.get(b['benchmark']) if b['benchmark'] is not None else None
    cells, measured = [], {}
    for n in names:
        cells.append(_cell(b, b['cells'][n], gate, looks))
        measured[n] = cells[-1].pop('records')
    bases = baselines(cells, baseline, baseline_by)
    _compare_cells(cells, bases, margin, looks)
    primary = primary_metric(b['metrics'])
    bench = dict(name=b['name'], benchmark=b['benchmark'], tool=b['tool'], test=b['test'], tool_versions=b['tool_versions'],
                 baseline=baseline, metrics=[primary] + [m for m in b['metrics'] if m != primary], primary=primary,
                 cells=cells)
    if baseline_by:
        bench['baseline_by'] = baseline_by
    return bench, measured


def _cell(b, c, gate, looks=None):
    """One cell's statistics over its measurements (records of one repetition are one measurement)."""
    recs = measurements(c['records'])
    kinds = [r['workers'] for r in recs if isinstance(r.get('workers'), dict)]
    workers = {'count': max(w.get('count') or 1 for w in kinds), 'kind': kinds[0].get('kind')} if kinds else None
    labels = dict((k, v) for k, v in (c['labels'] or {}).items() if k not in ('cell', 'benchmark'))
    metrics = {}
    for m in b['metrics']:
        # a measurement whose concurrent runs did not run together has no value (not "too fast")
        have = [r for r in recs if m in r['metrics'] and NOT_TOGETHER not in (r.get('flags') or ())]
        if looks:   # values in repetition order: a sequential comparison looks at the first n of each side
            have.sort(key=lambda r: r['repetition'] if isinstance(r.get('repetition'), int) else 0)
        if not have:
            continue
        first = have[0]['metrics'][m]
        values = [r['metrics'][m]['value'] for r in have]
        s = summarize(values)
        s.update(unit=first['unit'], better=first['better'], values=values, by_design=_by_design(have, m))
        metrics[m] = s
    out = dict(cell=c['cell'], hosts=c['hosts'], labels=labels, n=len(recs), warmups=c['warmups'], metrics=metrics,
               warnings=c['warnings'], baseline=False, baseline_cell=None,
               gate=status_of(recs, gate) if gate else None,
               records=recs, n_records=len(c['records']), workers=workers)
    dists = cell_distributions(c['records'])
    if dists:
        out['distributions'] = dists
    return out


def _by_design(records, metric):
    """Whether a metric only repeats what the run was asked (dd's bytes = its size parameter): a
    number the layer under test cannot change, so it is never charted. True when every record
    carries a parameter of the metric's name with the measured value."""
    for r in records:
        asked = (r.get('params') or {}).get(metric)
        value = r['metrics'][metric]['value']
        if not is_number(asked) or value is None or float(asked) != value:
            return False
    return True


def label_value(cell, label):
    """A cell's value of `label`: its own label, else the pseudo-labels host (its hosts) and cell."""
    labels = cell.get('labels') or {}
    if label in labels:
        return labels[label]
    if label == 'host' and cell.get('hosts'):
        return ','.join(cell['hosts'])
    if label == 'cell':
        return cell['cell']
    return None


def baselines(cells, baseline, baseline_by=None):
    """{cell name: the name of the cell it is compared with} (a baseline maps to itself).

    Without baseline_by, every cell is compared with `baseline` (the matrix's, else the first cell).
    With baseline_by: <label>, a group is the cells that share that label's value; the group's
    baseline is the cell of the group whose other labels equal those of the global baseline (so with
    baseline: host-a-plain and baseline_by: host, host B's baseline is its own "plain" cell), else the
    group's first cell in plan order. The global baseline's group keeps it; cells without the label
    are compared with the global baseline."""
    by_name = dict((c['cell'], c) for c in cells)
    if not baseline_by:
        return dict((c['cell'], baseline) for c in cells)
    ref = dict((k, v) for k, v in (by_name[baseline]['labels'] or {}).items() if k != baseline_by)
    groups = {}
    for c in cells:
        value = label_value(c, baseline_by)
        if value is not None:
            groups.setdefault(repr(value), []).append(c)
    out = dict((c['cell'], baseline) for c in cells)
    for members in groups.values():
        if any(c['cell'] == baseline for c in members):
            base = baseline
        else:
            same = [c for c in members if dict((k, v) for k, v in c['labels'].items() if k != baseline_by) == ref]
            base = (same or members)[0]['cell']
        out.update((c['cell'], base) for c in members)
    return out


def _compare_cells(cells, bases, margin, looks=None):
    """Each cell's metrics compared with its own baseline's (delta, CI, the tests of the verdict;
    the verdict itself comes after the correction across the report, verdicts.conclude_report)."""
    by_name = dict((c['cell'], c) for c in cells)
    for c in cells:
        c['baseline'] = bases[c['cell']] == c['cell']
        c['baseline_cell'] = None if c['baseline'] else bases[c['cell']]
        base = by_name[bases[c['cell']]]
        for m, s in c['metrics'].items():
            ref = base['metrics'].get(m)
            s.update(uncompared())
            if c['baseline'] or not ref or not s['n'] or not ref['n']:
                continue
            s.update(compared(s, ref, margin, looks))


def _flag_cells(bench, measured, plan_cells, environment):
    for c in bench['cells']:
        env = [e for e in (environment or {}).values() if (e.get('labels') or {}).get('cell') == c['cell']]
        recs = measured[c['cell']]
        c['flags'] = cell_flags(bench, c, recs, gate=c['gate'], environment=env,
                                expected_faster=bool(plan_cells.get(c['cell'], {}).get('expected_faster')))
        dup = duplicate_flag(recs)
        if dup:
            c['flags'].append(dup)
        # every number explained: the evidence of the runs' observations (plugin_utils/explain/explain.py)
        c['explained'], evidence = explain_cell(recs)
        merge_flags(c['flags'], evidence)


def _flag_zero_elision(benchmarks, keys):
    for zero, real in zero_vs_real_pairs(benchmarks, keys):
        for c in zero['cells']:
            other = next((o for o in real['cells'] if o['cell'] == c['cell']), None)
            flag = zero_elision_flag(c, other, zero['primary'], real['name']) if other else None
            if flag and not evidence_denies_elision(c.get('explained')):   # the evidence decides first
                c['flags'].append(flag)


def ordered_cells(bench):
    """The cells as the tables show them: the global baseline first, each baseline followed by the
    cells compared with it, then the rest in the analysis order."""
    cells = bench['cells']
    bases = sorted((c for c in cells if c['baseline']), key=lambda c: c['cell'] != bench['baseline'])
    out = []
    for base in bases:
        out.append(base)
        out.extend(c for c in cells if c.get('baseline_cell') == base['cell'])
    return out + [c for c in cells if c not in out]


# -- what the report shows first and the views across cells -----------------------------------

def charted_metric(bench):
    """The metric the overview, the pivots and the step aggregates show: the primary one, unless it
    only repeats a parameter (by_design), then the first metric that can differ; None when none can."""
    if bench['primary'] and _charted(bench, bench['primary']):
        return bench['primary']
    return next((m for m in bench['metrics'] if _charted(bench, m)), None)


def _charted(bench, metric):
    return any(metric in c['metrics'] and not c['metrics'][metric].get('by_design') for c in bench['cells'])


def overview(benchmarks):
    """The "cost of each layer" figure: per benchmark and cell that is no baseline, the delta of the
    charted metric vs the cell's own baseline with its 95% CI (a forest plot's rows) and the
    comparison's conclusion (verdict, mde_pct, p, p_adjusted, test, repetitions_needed, ...).
    worse: the verdict is worse."""
    rows = []
    for b in benchmarks:
        m = charted_metric(b)
        for c in b['cells'] if m else ():
            s = c['metrics'].get(m)
            if c['baseline'] or s is None:
                continue
            row = dict(benchmark=b['name'], cell=c['cell'], baseline=c['baseline_cell'], metric=m, unit=s['unit'],
                       better=s['better'], delta_pct=s.get('delta_pct'), ci_pct=s.get('ci_pct'),
                       significant=s.get('significant'), worse=s.get('verdict') == 'worse', n=s['n'],
                       explained=(c.get('explained') or {}).get('line'))
            row.update((k, s.get(k)) for k in VERDICT_FIELDS)
            rows.append(row)
    return rows


def name_noise(rows, benchmarks, measured, plan):
    """Each inconclusive overview row gets `noise`: where its spread comes from (spread.noise_of) and
    settle_s, what the repetitions it needs would cost (runs of each side at their measured
    duration, cooldown and the usual overhead; None when out of reach)."""
    by_name = dict((b['name'], (b, m)) for b, m in zip(benchmarks, measured))
    records = [r for m in measured for recs in m.values() for r in recs]
    cost = run_costs(plan, records) if (plan or {}).get('benchmarks') else {}
    for row in rows:
        row['noise'] = None
        if row.get('verdict') != 'inconclusive' or row['benchmark'] not in by_name:
            continue
        b, m = by_name[row['benchmark']]
        noise = noise_of(row['cell'], m.get(row['cell']) or [], row['baseline'], m.get(row['baseline']) or [], row['metric'])
        if noise is None:
            continue
        bench = b['benchmark']
        n_base = next((c['metrics'][row['metric']]['n'] for c in b['cells'] if c['cell'] == row['baseline']), row['n'])
        noise['settle_s'] = settle_s(row.get('repetitions_needed'), row['n'], n_base,
                                     cost.get((bench, row['cell']), _run_s(m.get(row['cell']))),
                                     cost.get((bench, row['baseline']), _run_s(m.get(row['baseline']))))
        row['noise'] = noise


def _run_s(records):
    """What one more run costs without a plan: the records' mean duration and the usual overhead."""
    durations = [float(r.get('duration_s') or 0.0) for r in records or []]
    return (sum(durations) / len(durations) if durations else 0.0) + RUN_OVERHEAD_S


def _brief(s):
    if s is None or not s.get('n'):
        return None
    return dict(brief_verdict(s), mean=s['mean'], ci95=s['ci95'], n=s['n'])


def pivots(benchmarks, factor):
    """Per benchmark with cells carrying the label `factor`: its charted metric with the factor's
    values as columns and as rows the other labels that vary between the cells, less those that
    only follow the factor (_follows) or tell no two cells of a column apart (_row_labels):
    {factor, benchmark, metric, unit, better, rows: [{label: value}], columns: [values],
    cells: rows x columns of {mean, ci95, n} or null}. Two cells with the same row and column
    (they differ in nothing but the host) keep the first in plan order."""
    out = []
    for b in benchmarks:
        m = charted_metric(b)
        have = [c for c in b['cells'] if label_value(c, factor) is not None]
        if not have or m is None:
            continue
        keys = sorted(set(k for c in have for k in c['labels'] if k != factor))
        varying = _row_labels(have, [k for k in keys if len(set(repr(c['labels'].get(k)) for c in have)) > 1
                                     and not _follows(have, k, factor)], factor)
        rows, columns, at = [], [], {}
        for c in have:
            row = dict((k, c['labels'].get(k)) for k in varying)
            col = label_value(c, factor)
            if row not in rows:
                rows.append(row)
            if col not in columns:
                columns.append(col)
            at.setdefault((rows.index(row), columns.index(col)), c['metrics'].get(m))
        cells = [[_brief(at.get((i, j))) for j in range(len(columns))] for i in range(len(rows))]
        unit = next((c['metrics'][m]['unit'] for c in have if m in c['metrics']), '')
        out.append(dict(factor=factor, benchmark=b['name'], metric=m, unit=unit, better=_better_of(have, m),
                        rows=rows, columns=columns, cells=cells))
    return out


def _sweep_point(b):
    """(label, value) when every cell of benchmark b is one point of a sweep (dbench's clients)."""
    for k in SUBTEST_LABELS:
        values = set(repr((c.get('labels') or {}).get(k)) for c in b['cells'])
        if len(values) == 1 and b['cells'] and (b['cells'][0].get('labels') or {}).get(k) is not None:
            return k, b['cells'][0]['labels'][k]
    return None


def sweeps(benchmarks):
    """A sweep (dbench over 1..64 clients) as one pivot: per matrix benchmark and test whose tables
    differ only in the sweep label, its charted metric with the sweep's values as columns (in
    order) and the cells as rows, in the shape of pivots() (factor = the sweep label)."""
    groups = {}
    for b in benchmarks:
        point = _sweep_point(b)
        m = charted_metric(b)
        if point is None or m is None:
            continue
        key = (b['benchmark'] or b['tool'], b['test'], point[0], m)
        groups.setdefault(key, []).append((point[1], b))
    out = []
    for (bench, test, label, m), members in groups.items():
        if len(members) < 2:
            continue
        members.sort(key=lambda t: (not isinstance(t[0], (int, float)), t[0] if isinstance(t[0], (int, float)) else 0,
                                    repr(t[0])))
        names = []
        for _v, b in members:
            names.extend(c['cell'] for c in ordered_cells(b) if c['cell'] not in names)
        at = dict(((c['cell'], j), c['metrics'].get(m)) for j, (_v, b) in enumerate(members) for c in b['cells'])
        cells = [[_brief(at.get((n, j))) for j in range(len(members))] for n in names]
        have = [c for _v, b in members for c in b['cells']]
        unit = next((c['metrics'][m]['unit'] for c in have if m in c['metrics']), '')
        title = members[0][1]['name'].rsplit(' %s=' % label, 1)[0]
        out.append(dict(factor=label, benchmark=title, metric=m, unit=unit, better=_better_of(have, m),
                        rows=[dict(cell=n) for n in names], columns=[v for v, _b in members], cells=cells))
    return out


def _follows(cells, key, factor):
    """Whether label `key` is the same for every cell of each value of `factor` (a machine's own
    storage or network when the factor is the machine): it says nothing a column does not, so it is
    no row (a row per such value would put each cell on a line of its own, a diagonal). Leaving it
    out never puts two cells in one place: cells of one column share its value."""
    seen = {}
    for c in cells:
        value = repr(c['labels'].get(key))
        if seen.setdefault(repr(label_value(c, factor)), value) != value:
            return False
    return True


def _row_labels(cells, keys, factor):
    """The labels a pivot's rows need: `keys` less those that tell no two cells of one column apart
    (a client guest's own storage when its direction already places it). One label at a time, the
    one whose removal leaves the fewest rows (the densest table); never two cells in one place. Where
    the choice would be arbitrary, the table says so instead: labels that vary together in these cells
    are shown together, and of two that would each place the cells in rows of their own, neither goes."""
    def places(labels):
        return set((tuple(repr(c['labels'].get(k)) for k in labels), repr(label_value(c, factor))) for c in cells)

    def split(labels):
        """The cells (their indices) grouped into rows by `labels`."""
        groups = {}
        for i, c in enumerate(cells):
            groups.setdefault(tuple(repr(c['labels'].get(k)) for k in labels), []).append(i)
        return frozenset(frozenset(g) for g in groups.values())

    def rows(labels):
        return len(split(labels))

    n = len(places(keys))
    kept = list(keys)
    while True:
        fits = [[x for x in kept if x != k] for k in kept]
        fits = [t for t in fits if len(places(t)) == n]
        if not fits:
            break
        fewest = min(rows(t) for t in fits)
        # two labels that each place the cells but group them differently (two factors crossed in
        # half of their combinations): rows by either would credit it with what the other did; both stay
        if len(set(split(t) for t in fits if rows(t) == fewest)) > 1:
            break
        kept = min(fits, key=lambda t: (rows(t), -len(t), [k for k in kept if k not in t]))
    # a label left out that splits the rows exactly as the kept ones do (two factors that vary
    # together in these cells: cache mode and network, say) is shown beside them: which of the two
    # made the difference cannot be told here, and the table must not credit one of them alone
    if kept:
        kept = [k for k in keys if k in kept or rows(kept + [k]) == rows(kept)]
    return kept


def _better_of(cells, metric):
    return next((c['metrics'][metric]['better'] for c in cells if metric in c['metrics']), None)


def step_aggregates(bench, measured):
    """Runs started together in one step (several guests at once; the record's `step`, stamped by the
    report callback from the plan's run) as one figure: per set of cells that ran together, each
    step's sum of the charted metric over those cells (a rate or a count: only additive units), then
    mean and CI over the steps (n = steps, i.e. repetitions), next to the per-guest mean."""
    m = charted_metric(bench)
    by_step, step_recs = {}, {}
    for cell, recs in measured.items():
        for r in recs:
            step, value = r.get('step'), (r['metrics'].get(m) or {}).get('value')
            if isinstance(step, int) and not isinstance(step, bool) and value is not None:
                by_step.setdefault(step, {})[cell] = (value, r['metrics'][m]['unit'])
                step_recs.setdefault(step, []).append(r)
    groups, apart = {}, {}
    for step in sorted(by_step):
        ran = by_step[step]
        units = set(u for _v, u in ran.values())
        if len(ran) > 1 and len(units) == 1 and units <= set(ADDITIVE_UNITS):
            cells = tuple(c['cell'] for c in bench['cells'] if c['cell'] in ran)
            tog = together(step_recs[step])
            if tog is not None and tog['fraction'] < TOGETHER_MIN:
                # no concurrent figure: not summed, counted
                apart.setdefault(cells, {'steps': 0, 'unit': next(iter(units))})['steps'] += 1
                continue
            groups.setdefault(cells, []).append(ran)
    out = []
    for cells, steps in groups.items():
        totals = [sum(v for v, _u in ran.values()) for ran in steps]
        sums = dict(summarize(totals), values=totals)
        per = summarize([v for ran in steps for v, _u in ran.values()])
        out.append(dict(benchmark=bench['name'], metric=m, unit=next(iter(steps[0].values()))[1], cells=list(cells),
                        guests=len(cells), n=len(steps), aggregate=sums, per_guest=_brief(per),
                        not_together=apart.get(cells, {}).get('steps', 0)))
    # cells that ran together in no step at all: said, with no figure (not silently missing)
    for cells, left in apart.items():
        if cells not in groups:
            out.append(dict(benchmark=bench['name'], metric=m, unit=left['unit'], cells=list(cells), guests=len(cells), n=0,
                            aggregate=None, per_guest=None, not_together=left['steps']))
    return out


# Params that differ between a zero-data and a real-data run of the same test without changing it.
_VOLATILE = ('data', 'data_source', 'guards')


def _params_key(bench, measured):
    """((tool, test, params without the data source), data kind) of a benchmark's first measurement."""
    for c in bench['cells']:
        for r in measured[c['cell']]:
            params = r.get('params') or {}
            rest = tuple(sorted((k, repr(v)) for k, v in params.items() if k not in _VOLATILE))
            return (r['tool'], r['test'], rest), params.get('data')
    return None, None


def zero_vs_real_pairs(benchmarks, keys):
    """(zero-data benchmark, real-data benchmark) pairs that are otherwise the same test; keys: one
    _params_key per benchmark, in the same order."""
    pairs = []
    for z, (key, data) in zip(benchmarks, keys):
        if data != 'zero':
            continue
        for r, other in zip(benchmarks, keys):
            if r is not z and other == (key, 'random'):
                pairs.append((z, r))
                break
    return pairs
