# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: summarize
short_description: Statistics of repeated measurements (n, mean, median, stdev, CV, min, max, 95% CI)
version_added: 0.1.0
description:
  - Summarizes a list of numbers, or a list of benchlab result records and a metric name, into
    C(n), C(mean), C(median), C(stdev) (sample), C(cv) (stdev/mean), C(min), C(max) and C(ci95), the
    95% confidence interval of the mean (Student t), as C([low, high]).
  - C(null) values (bonnie++ C(+++++), too fast to measure) are not numbers; they are counted in
    C(too_fast).
options:
  _input:
    description: Numbers, or result records (C(bench_result)).
    type: list
    elements: raw
    required: true
  metric:
    description: With records, the metric to summarize, such as V(throughput).
    type: str
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Mean and CI of three throughputs
  ansible.builtin.debug:
    msg: "{{ [350.1, 340.7, 361.2] | benchlab.bench.summarize }}"

- name: From registered results of a loop
  ansible.builtin.debug:
    msg: "{{ runs.results | map(attribute='bench_result') | benchlab.bench.summarize('throughput') }}"
'''

RETURN = r'''
_value:
  description: The summary. C(stdev), C(cv) and C(ci95) are null with fewer than two values.
  type: dict
  contains:
    n:
      description: Number of measured values.
      type: int
    mean:
      description: Arithmetic mean.
      type: float
    ci95:
      description: 95% confidence interval of the mean, C([low, high]).
      type: list
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import StatsError, summarize as _summarize


def metric_values(records, metric):
    """The values of `metric` in a list of records; an error names the record that lacks it."""
    values = []
    for i, rec in enumerate(records):
        try:
            values.append(rec['metrics'][metric]['value'])
        except (KeyError, TypeError):
            raise AnsibleFilterError('summarize: item %d is not a record with metric %r' % (i, metric))
    return values


def summarize(data, metric=None):
    if not isinstance(data, (list, tuple)):
        raise AnsibleFilterError('summarize expects a list, got %s' % type(data).__name__)
    if metric is not None:
        data = metric_values(data, metric)
    try:
        return _summarize(data)
    except StatsError as e:
        raise AnsibleFilterError('summarize: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'summarize': summarize}
