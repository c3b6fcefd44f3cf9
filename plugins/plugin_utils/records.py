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


def benchmark_of(rec):
    labels = rec.get('labels') or {}
    return labels.get('benchmark') or '%s %s' % (rec['tool'], rec['test'])


def cell_of(rec, host=None):
    labels = rec.get('labels') or {}
    if labels.get('cell'):
        return labels['cell']
    rest = ','.join('%s=%s' % (k, v) for k, v in sorted(labels.items()) if k != 'benchmark')
    return (host or rec.get('host') or 'host') + ((' ' + rest) if rest else '')


def primary_metric(metric_names):
    for name in PRIMARY:
        if name in metric_names:
            return name
    return metric_names[0] if metric_names else None
