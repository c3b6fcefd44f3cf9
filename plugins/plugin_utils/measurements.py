# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Workers are not repetitions: from records to measurements. Pure functions.

A measurement is one repetition of one (benchmark, cell, test). n in every table, CI and gate is the
number of measurements. A record carries its repetition (the report callback stamps it from the
plan's run); several records of the same (benchmark, cell, test, repetition) are ONE measurement:

- records of concurrent workers that each report their own figures (the iperf pairs of a
  ``concurrent`` step, labelled ``pair``/``pairs``) are combined into their aggregate: rates and
  counts summed (throughput, IOPS, retransmits), latencies, jitter and loss the worst pair's; each
  pair's figures stay as ``workers.detail``;
- any other duplicate (which should not happen) is counted once, as the mean of the records, and
  flagged ``duplicate_runs`` in the report rather than silently inflating n.

Records without a repetition (a module run outside a plan) are each their own measurement, as
before.
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.plugin_utils.grouping import benchmark_of, cell_of
from ansible_collections.benchlab.bench.plugins.plugin_utils.traps import record_codes

# Units whose values add up over workers running at once; the others (latency, %, time) do not.
ADDITIVE_UNITS = ('MB/s', 'Mbit/s', 'ops/s', 'files/s', 'seeks/s', 'bytes', 'count')
PAIR_LABELS = ('pair', 'client')
DUPLICATE_KEY = 'duplicates'


def run_key(rec):
    """(series, cell, repetition) of a record, or None when it carries no repetition."""
    rep = rec.get('repetition')
    if isinstance(rep, bool) or not isinstance(rep, int):
        return None
    return (benchmark_of(rec), cell_of(rec), rep)


def _is_pair(rec):
    labels = rec.get('labels') or {}
    return 'pair' in labels and 'pairs' in labels


def _sum_or_worst(values, unit, better):
    """Workers at once: rates and counts add up; latency, jitter, loss: the worst worker's."""
    if unit in ADDITIVE_UNITS:
        return float(sum(values))
    return float(max(values) if better == 'lower' else min(values))


def _mean(values, _unit, _better):
    return sum(values) / len(values)


def _combined(recs, reduce):
    """(metrics, warnings) of several records: each metric's non-null values reduced by `reduce`
    (a metric no record measured stays null, too_fast), the distinct warnings of all."""
    names, warnings = [], []
    for r in recs:
        names.extend(m for m in r['metrics'] if m not in names)
        warnings.extend(w for w in r.get('warnings') or [] if w not in warnings)
    metrics = {}
    for m in names:
        have = [r['metrics'][m] for r in recs if m in r['metrics']]
        unit, better = have[0]['unit'], have[0]['better']
        values = [h['value'] for h in have if h['value'] is not None]
        metrics[m] = {'value': reduce(values, unit, better) if values else None, 'unit': unit, 'better': better}
        if not values:
            metrics[m]['too_fast'] = True
    return metrics, warnings


def _codes(recs):
    """The trap codes of a measurement: those of any of its records."""
    return sorted(set(c for r in recs for c in record_codes(r)))


def combine_pairs(recs):
    """One measurement of concurrent pairs: the step's aggregate, each pair's figures as detail."""
    recs = sorted(recs, key=lambda r: (r.get('labels') or {}).get('pair', 0))
    first = recs[0]
    metrics, warnings = _combined(recs, _sum_or_worst)
    labels = dict((k, v) for k, v in (first.get('labels') or {}).items() if k not in PAIR_LABELS)
    expected = (first.get('labels') or {}).get('pairs')
    if isinstance(expected, int) and len(recs) < expected:
        warnings.append('only %d of the %d concurrent pairs reported: the aggregate is theirs only'
                        % (len(recs), expected))
    detail = []
    for r in recs:
        lab = r.get('labels') or {}
        detail.append({'name': 'pair %s' % lab.get('pair'),
                       'metrics': dict((k, v['value']) for k, v in sorted(r['metrics'].items())),
                       'labels': dict((k, lab[k]) for k in PAIR_LABELS if k in lab)})
    out = dict(first, labels=labels, metrics=metrics, warnings=warnings, flags=_codes(recs))
    out['workers'] = {'count': len(recs), 'kind': 'concurrent pairs',
                      'aggregate': 'throughput and counts summed over the pairs; latency, jitter and loss the worst pair\'s',
                      'detail': detail}
    if first.get('host'):
        out['hosts'] = sorted(set(r.get('host') for r in recs if r.get('host')))
    return out


def combine_duplicates(recs):
    """Several records for one repetition that are no concurrent workers: counted once (their mean)
    and marked, so the report flags them instead of counting them as repetitions."""
    metrics, warnings = _combined(recs, _mean)
    out = dict(recs[0], metrics=metrics, warnings=warnings, flags=_codes(recs))
    out[DUPLICATE_KEY] = len(recs)
    return out


def measurements(records):
    """Records (of one or many benchmarks and cells) -> measurements, in the order of their first record."""
    groups = []
    index = {}
    for rec in records:
        key = run_key(rec)
        if key is None:
            groups.append([rec])
            continue
        if key not in index:
            index[key] = len(groups)
            groups.append([])
        groups[index[key]].append(rec)
    out = []
    for recs in groups:
        if len(recs) == 1 and not (run_key(recs[0]) and _is_pair(recs[0])):
            out.append(recs[0])
        elif all(_is_pair(r) for r in recs):
            pairs = {}
            for r in recs:      # a pair reported twice is a duplicate of itself
                pairs.setdefault(r['labels']['pair'], []).append(r)
            merged = [v[0] if len(v) == 1 else combine_duplicates(v) for _skip, v in sorted(pairs.items(), key=lambda kv: str(kv[0]))]
            combined = combine_pairs(merged)
            dups = sum(1 for v in pairs.values() if len(v) > 1)
            if dups:
                combined[DUPLICATE_KEY] = max(len(v) for v in pairs.values())
            out.append(combined)
        else:
            out.append(combine_duplicates(recs))
    return out


def duplicate_flag(records):
    """The report's flag for a cell whose measurements hid duplicate records, or None."""
    dups = [r for r in records if r.get(DUPLICATE_KEY)]
    if not dups:
        return None
    return {'code': 'duplicate_runs',
            'message': '%d repetition(s) arrived as several records (up to %d): each counted once, as their mean '
                       '(a re-run of the same repetition, or workers the tool did not aggregate)'
                       % (len(dups), max(r[DUPLICATE_KEY] for r in dups))}
