# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Grouping records: where a record belongs (benchmark, cell), whether it counts, and a benchmark's
primary metric. (Building and validating one record is module_utils/run/record.py.)

Private to benchlab.bench (no API promise). Used by analysis, measurements, regress, render_csv,
gate and resume in plugin_utils."""

from __future__ import annotations

# The metric the one-line summaries show for each tool (the first one present).
PRIMARY = ('throughput', 'read_throughput', 'write_throughput', 'seq_output_block', 'read_iops', 'write_iops')


def counted(rec):
    """Whether a record counts in the statistics: warm-up runs are stored but not counted."""
    return not ((rec.get('params') or {}).get('guards') or {}).get('warmup')


# Labels a module adds to tell apart results of one run that belong in different tables (dbench's
# client sweep gives one record per client count).
SUBTEST_LABELS = ('clients',)


def benchmark_of(rec):
    """(matrix benchmark name or None, series): which table a record belongs in.

    A matrix benchmark may yield several tests (compress and decompress, fio job files) and
    sweeps (dbench clients): each (test, sweep point) is a series with its own table. Without a
    matrix benchmark label the table is "<tool> <test>"."""
    labels = rec.get('labels') or {}
    extras = tuple('%s=%s' % (k, labels[k]) for k in SUBTEST_LABELS if k in labels)
    bench = labels.get('benchmark')
    if not bench:
        return None, ('%s %s' % (rec['tool'], rec['test']),) + extras
    return bench, (rec['test'],) + extras


def table_name(bench, series, several_tests):
    """The table's title: the benchmark, its test when it has several, and the sweep point."""
    if bench is None:
        return ' '.join(series)
    return ' '.join(([bench, series[0]] if several_tests else [bench]) + list(series[1:]))


def cell_of(rec, host=None):
    labels = rec.get('labels') or {}
    if labels.get('cell'):
        return labels['cell']
    rest = ','.join('%s=%s' % (k, v) for k, v in sorted(labels.items()) if k != 'benchmark' and k not in SUBTEST_LABELS)
    return (host or rec.get('host') or 'host') + ((' ' + rest) if rest else '')


def primary_metric(metric_names):
    for name in PRIMARY:
        if name in metric_names:
            return name
    return metric_names[0] if metric_names else None
