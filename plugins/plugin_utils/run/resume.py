# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resuming a run: which runs of a plan are already in the run directory. Pure functions.

Every (benchmark, cell) of a plan has a stable key: a hash of the cell (host, path, labels) and
of the benchmark (tool, parameters, methodology). Records of an earlier attempt of the same run
count only where the key is unchanged, so a resumed run never mixes a cell measured one way
with the same cell measured another way. The tool version is not in the key (it is known only
after a run): it is recorded in every record and the report lists each version a benchmark ran
with.
"""

from __future__ import annotations

import hashlib
import json

from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.measurements import measurements, run_key
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.grouping import benchmark_of, counted

_CELL_KEYS = ('host', 'path', 'labels')
_BENCH_KEYS = ('tool', 'params', 'methodology')


def cell_key(cell, benchmark):
    """The stable key of one (benchmark, cell) of a plan."""
    doc = {'cell': dict((k, cell.get(k)) for k in _CELL_KEYS), 'benchmark': dict((k, benchmark.get(k)) for k in _BENCH_KEYS)}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode('utf-8')).hexdigest()[:16]


def plan_keys(plan):
    """{(benchmark name, cell name): key} for every pair the plan runs."""
    cells = dict((c['name'], c) for c in plan.get('cells') or [])
    keys = {}
    for b in plan.get('benchmarks') or []:
        for name in b.get('cells') or list(cells):
            if name in cells:
                keys[(b['name'], name)] = cell_key(cells[name], b)
    return keys


def pair_of(record):
    labels = record.get('labels') or {}
    return (labels.get('benchmark'), labels.get('cell'))


def still_counts(record, new_keys, old_keys):
    """Whether an earlier record was measured the way the plan measures its pair now: by the
    cell_key the report callback stamps on every stored record, or, for a record without one,
    by the earlier attempt's plan."""
    pair = pair_of(record)
    if pair not in new_keys:
        return False
    key = record.get('cell_key') or old_keys.get(pair)
    return key == new_keys[pair]


def runs_done(records):
    """{(benchmark, cell): counted runs in records}. A run that gave several series (dbench client
    counts, compress and decompress) counts once, and only when complete: the smallest series, so
    a run cut short between two series is measured again."""
    series = {}
    for r in measurements(records):     # the workers of one repetition are one run
        if counted(r):
            per = series.setdefault(pair_of(r), {})
            key = benchmark_of(r)
            per[key] = per.get(key, 0) + 1
    return dict((pair, min(per.values())) for pair, per in series.items())


def repetitions_done(records):
    """{(benchmark, cell): set of repetitions measured in every series} for the pairs whose counted
    records all carry their repetition (the report callback stamps it); pairs with a record without
    one are left out (runs_done counts them instead)."""
    series, unknown = {}, set()
    for r in records:
        if not counted(r):
            continue
        if run_key(r) is None:
            unknown.add(pair_of(r))
            continue
        series.setdefault(pair_of(r), {}).setdefault(benchmark_of(r), set()).add(r['repetition'])
    return dict((pair, set.intersection(*per.values())) for pair, per in series.items() if pair not in unknown)


def resume_plan(plan, previous_plan, records, run_id=None, set_aside=None):
    """The plan without the runs `records` (of an earlier attempt with `previous_plan`) already hold.

    Returns a copy of plan whose runs are the ones still to do, with `resume`: {run_id, skipped,
    done: [{benchmark, cell, runs}], changed: [pairs whose definition changed, measured again],
    records: the earlier records that still count (the variance gate needs them), set_aside: the
    earlier lines that were not valid records (the run_state lookup's), for the report}."""
    new_keys = plan_keys(plan)
    old_keys = plan_keys(previous_plan or {})
    kept = [r for r in records if still_counts(r, new_keys, old_keys)]
    done = runs_done(kept)
    changed = sorted(set(pair_of(r) for r in records if pair_of(r) in new_keys) - set(done))
    runs, skipped = [], 0
    reps = repetitions_done(kept)
    for run in plan['runs']:
        pair = (run['benchmark'], run['cell'])
        n = done.get(pair, 0)
        if pair in reps:    # exactly the repetitions measured: a failed repetition 2 is run again, not 4
            if run['repetition'] in reps[pair] or (reps[pair] and run['guards'].get('warmup')):
                skipped += 1
                continue
        elif n and (run['repetition'] <= n or run['guards'].get('warmup')):
            skipped += 1
            continue
        runs.append(run)
    out = dict(plan, runs=runs)
    out['resume'] = {'run_id': run_id, 'skipped': skipped, 'changed': [list(p) for p in changed],
                     'done': [{'benchmark': b, 'cell': c, 'runs': n} for (b, c), n in sorted(done.items())],
                     'records': kept, 'set_aside': list(set_aside or [])}
    return out
