# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From result records to the analysis the renderers draw: per benchmark, per cell, per metric,
the statistics over repetitions and the difference to the baseline cell. Pure functions.

n is the number of repetitions (plugin_utils/measurements.py): the records of one repetition
(concurrent pairs, a duplicate) are one measurement, never several."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.stats import compare, summarize
from ansible_collections.benchlab.bench.plugins.plugin_utils.gate import gate_status
from ansible_collections.benchlab.bench.plugins.plugin_utils.measurements import duplicate_flag, measurements
from ansible_collections.benchlab.bench.plugins.plugin_utils.records import (
    SUBTEST_LABELS, benchmark_of, cell_of, counted, primary_metric, table_name)
from ansible_collections.benchlab.bench.plugins.plugin_utils.traps import cell_flags, trap_rates, zero_elision_flag

_ABSENT = object()


def analyze(records, plan=None, environment=None):
    """records: dicts with an optional 'host' key; plan: the matrix plan (cells, baseline, gates);
    environment: sysinfo results keyed freely, each with 'labels' (its cell) and 'host'.
    Returns the analysis dict the renderers draw. Warm-up records are counted apart."""
    plan_cells = dict((c['name'], c) for c in (plan or {}).get('cells', []))
    gates = (plan or {}).get('gates') or {}
    cell_order = list(plan_cells)
    plan_baseline = (plan or {}).get('baseline')
    benchmarks = []
    index = {}
    tests = {}
    placed = []
    where = {}
    for rec in records:
        # benchmark_of once per distinct (tool, test, benchmark label, sub-test labels): 100k records are common
        labels = rec.get('labels') or {}
        key = (rec['tool'], rec['test'], labels.get('benchmark'), *[labels.get(k, _ABSENT) for k in SUBTEST_LABELS])
        found = where.get(key)
        if found is None:
            found = where[key] = benchmark_of(rec)
        bench, series = found
        tests.setdefault(bench, set()).add(series[0])
        placed.append((rec, bench, series))
    names = {}
    for rec, bench, series in placed:
        key = (bench, series)
        if key not in names:
            names[key] = table_name(bench, series, len(tests[bench]) > 1)
        name = names[key]
        if name not in index:
            index[name] = dict(name=name, benchmark=bench, tool=rec['tool'], test=rec['test'], tool_versions=[],
                               cells={}, metrics=[])
            benchmarks.append(index[name])
        b = index[name]
        if rec.get('tool_version') and rec['tool_version'] not in b['tool_versions']:
            b['tool_versions'].append(rec['tool_version'])
        cell = cell_of(rec)
        c = b['cells'].get(cell)
        if c is None:
            c = b['cells'][cell] = dict(cell=cell, hosts=[], labels={}, records=[], warnings=[], seen=set(), warmups=0)
        if rec.get('host') and rec['host'] not in c['hosts']:
            c['hosts'].append(rec['host'])
        c['last_labels'] = rec.get('labels')
        if not counted(rec):
            c['warmups'] += 1
            continue
        c['records'].append(rec)
        for w in rec.get('warnings') or ():
            if w not in c['seen']:
                c['seen'].add(w)
                c['warnings'].append(w)
        for m in rec['metrics']:
            if m not in b['metrics']:
                b['metrics'].append(m)

    out, runs = [], []
    for b in benchmarks:
        seen = list(b['cells'])
        names = sorted(seen, key=lambda n: (cell_order.index(n) if n in cell_order else len(cell_order), seen.index(n)))
        baseline = plan_baseline if plan_baseline in names else names[0]
        cells = []
        for n in names:
            c = b['cells'][n]
            n_records = len(c['records'])
            c['records'] = measurements(c['records'])
            kinds = [r['workers'] for r in c['records'] if isinstance(r.get('workers'), dict)]
            workers = ({'count': max(w.get('count') or 1 for w in kinds), 'kind': kinds[0].get('kind')}
                       if kinds else None)
            c['labels'] = dict((k, v) for k, v in (c.pop('last_labels') or {}).items() if k not in ('cell', 'benchmark'))
            by_metric, firsts = {}, {}
            for r in c['records']:
                for m, v in r['metrics'].items():
                    if m not in by_metric:
                        by_metric[m], firsts[m] = [], v
                    by_metric[m].append(v['value'])
            metrics = {}
            for m in b['metrics']:
                if m not in by_metric:
                    continue
                values, first = by_metric[m], firsts[m]
                s = summarize(values)
                s.update(unit=first['unit'], better=first['better'], values=values)
                metrics[m] = s
            gate = None
            if b['benchmark'] in gates:
                g = gates[b['benchmark']]
                gate = gate_status(c['records'], g['max_cv'], g['max_repetitions'])
            cells.append(dict(cell=n, hosts=c['hosts'], labels=c['labels'], n=len(c['records']), warmups=c['warmups'],
                              metrics=metrics, warnings=c['warnings'], baseline=(n == baseline), gate=gate,
                              records=c['records'], n_records=n_records, workers=workers))
        base = next(c for c in cells if c['baseline'])
        for c in cells:
            for m, s in c['metrics'].items():
                ref = base['metrics'].get(m)
                s.update(delta_pct=None, ci_pct=None, p=None, significant=None, slower_pct=None)
                if c['baseline'] or not ref or not s['n'] or not ref['n']:
                    continue
                cmp = compare(s, ref, better=s['better'])
                s.update((k, cmp[k]) for k in ('delta_pct', 'ci_pct', 'p', 'significant', 'slower_pct'))
        primary = primary_metric(b['metrics'])
        ordered = [primary] + [m for m in b['metrics'] if m != primary]
        bench = dict(name=b['name'], benchmark=b['benchmark'], tool=b['tool'], test=b['test'], tool_versions=b['tool_versions'],
                     baseline=baseline, metrics=ordered, primary=primary, cells=cells)
        bench['same_but_data'] = _params_key(b['cells'])
        for c in cells:
            env = [e for e in (environment or {}).values() if (e.get('labels') or {}).get('cell') == c['cell']]
            dup = duplicate_flag(c['records'])
            runs.extend(c['records'])
            c['flags'] = cell_flags(bench, c, c.pop('records'), gate=c['gate'], environment=env,
                                    expected_faster=bool(plan_cells.get(c['cell'], {}).get('expected_faster')))
            if dup:
                c['flags'].append(dup)
        out.append(bench)
    for zero, real in zero_vs_real_pairs(out):
        for c in zero['cells']:
            other = next((o for o in real['cells'] if o['cell'] == c['cell']), None)
            flag = zero_elision_flag(c, other, zero['primary'], real['name']) if other else None
            if flag:
                c['flags'].append(flag)
    for bench in out:
        bench.pop('same_but_data')
    return dict(benchmarks=out, traps=trap_rates(runs))


# Params that differ between a zero-data and a real-data run of the same test without changing it.
_VOLATILE = ('data', 'data_source', 'guards')


def _params_key(cells):
    """(tool, test, params without the data source) of a benchmark, and its data kind."""
    for c in cells.values():
        for r in c['records']:
            params = r.get('params') or {}
            rest = tuple(sorted((k, repr(v)) for k, v in params.items() if k not in _VOLATILE))
            return (r['tool'], r['test'], rest), params.get('data')
    return None, None


def zero_vs_real_pairs(benchmarks):
    """(zero-data benchmark, real-data benchmark) pairs that are otherwise the same test."""
    pairs = []
    for z in benchmarks:
        key, data = z['same_but_data']
        if data != 'zero':
            continue
        for r in benchmarks:
            if r is not z and r['same_but_data'] == (key, 'random'):
                pairs.append((z, r))
                break
    return pairs
