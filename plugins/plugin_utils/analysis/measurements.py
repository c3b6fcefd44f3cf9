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
  only when they ran together (``together``): pairs that did not (a late start, a slow host) are no
  concurrent figure, and their sum would be a wrong number: the measurement then has no value and
  carries the trap code ``not_together`` (the pairs' own figures stay as detail);
- any other duplicate (which should not happen) is counted once, as the mean of the records, and
  flagged ``duplicate_runs`` in the report rather than silently inflating n.

Records without a repetition (a module run outside a plan) are each their own measurement, as
before.
"""

from __future__ import annotations

import calendar
import math
import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.grouping import benchmark_of, cell_of
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.traps import NOT_TOGETHER, record_codes

# Units whose values add up over workers running at once; the others (latency, %, time) do not.
ADDITIVE_UNITS = ('MB/s', 'Mbit/s', 'ops/s', 'files/s', 'seeks/s', 'bytes', 'count')
PAIR_LABELS = ('pair', 'client')
DUPLICATE_KEY = 'duplicates'


# Records meant to run at once are summed only when all of them ran for at least this fraction of
# the longest one's time (from each record's started and duration_s).
TOGETHER_MIN = 0.8
_STARTED = re.compile(r'^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?Z$')


def _start(rec):
    """(seconds since the epoch, precision in seconds) of a record's started, or None; on the
    controller's clock where the run path read the host's (params.guards.clock_offset_s: its clock
    less the controller's), so that runs on hosts whose clocks differ compare."""
    m = _STARTED.match(str(rec.get('started') or ''))
    if not m:
        return None
    frac = m.group(7)
    secs = calendar.timegm(tuple(int(x) for x in m.groups()[:6]) + (0, 0, 0))
    guards = (rec.get('params') or {}).get('guards') if isinstance(rec.get('params'), dict) else None
    offset = guards.get('clock_offset_s') if isinstance(guards, dict) else None
    if not is_number(offset) or not math.isfinite(offset):
        offset = 0.0
    return secs + (float(frac) if frac else 0.0) - offset, (10.0 ** -(len(frac) - 1) if frac else 1.0)


def together(recs):
    """How long records meant to run at once all ran together: {together_s, fraction, spread_s}:
    the common time, as a fraction of the longest record's duration (started is truncated to its
    precision, and a record from before millisecond times gets the benefit of that doubt), and how
    far apart they started. None when a record has no started or duration_s."""
    spans, precision = [], 0.0
    for r in recs:
        start, d = _start(r), r.get('duration_s')
        if start is None or not is_number(d) or d <= 0:
            return None
        spans.append((start[0], start[0] + d))
        precision = max(precision, start[1])
    longest = max(end - begin for begin, end in spans)
    common = min(end for _b, end in spans) - max(begin for begin, _e in spans)
    best = max(0.0, min(longest, common + precision))
    return {'together_s': round(max(common, 0.0), 3), 'fraction': round(best / longest, 3),
            'spread_s': round(max(b for b, _e in spans) - min(b for b, _e in spans), 3)}


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
    flags = _codes(recs)
    tog = together(recs) if len(recs) > 1 else None
    if tog is not None and tog['fraction'] < TOGETHER_MIN:
        # not a concurrent figure: no value rather than a wrong one (each pair's figures stay as detail)
        metrics = dict((m, dict(v, value=None)) for m, v in metrics.items())
        flags = sorted(set(flags) | {NOT_TOGETHER})
        warnings.append('the %d pairs ran together for %.1f s, %.0f%% of their time (they started %.1f s apart): '
                        'their sum is no concurrent figure and is left out' % (
                            len(recs), tog['together_s'], 100 * tog['fraction'], tog['spread_s']))
    out = dict(first, labels=labels, metrics=metrics, warnings=warnings, flags=flags)
    out['workers'] = {'count': len(recs), 'kind': 'concurrent pairs',
                      'aggregate': 'throughput and counts summed over the pairs; latency, jitter and loss the worst pair\'s',
                      'detail': detail}
    if tog is not None:
        out['workers']['together'] = tog
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
