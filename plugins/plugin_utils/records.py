# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a record belongs (benchmark, cell), whether it counts, and a benchmark's primary metric."""

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
    """(matrix benchmark name or None, the table this record belongs in).

    A matrix benchmark may yield several tests (compress and decompress, fio job files, bonnie's
    runs) and sweeps (dbench clients): each gets its own table, named after the benchmark."""
    labels = rec.get('labels') or {}
    bench = labels.get('benchmark')
    if not bench:
        return None, '%s %s' % (rec['tool'], rec['test'])
    name = bench if rec['test'] in bench else '%s %s' % (bench, rec['test'])
    extras = ['%s=%s' % (k, labels[k]) for k in SUBTEST_LABELS if k in labels]
    return bench, ' '.join([name] + extras)


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
