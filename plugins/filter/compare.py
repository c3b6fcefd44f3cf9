# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: compare
short_description: Compare a candidate with its baseline, with significance
version_added: 0.1.0
description:
  - Compares a candidate measurement with a baseline. Each side may be a number, a list of
    repetitions or a summary from M(benchlab.bench.summarize).
  - Returns the difference in % of the baseline (C(delta_pct)) with its 95% confidence interval
    (C(ci_pct), Welch), the p-value, whether the difference is C(significant) or within noise, and
    C(slower_pct), the field reports' "slower than Test 1 (in %)" column; C(1 - baseline/candidate)
    for lower-is-better values such as durations, C(1 - candidate/baseline) for higher-is-better ones.
options:
  _input:
    description: The candidate.
    type: raw
    required: true
  baseline:
    description: The baseline.
    type: raw
    required: true
  better:
    description: Whether higher or lower values are better.
    type: str
    choices: [higher, lower]
    default: higher
  alpha:
    description: Significance level.
    type: float
    default: 0.05
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: VPS with DRBD vs the host without, from durations including sync (seconds)
  ansible.builtin.debug:
    msg: "{{ (5481.256 | benchlab.bench.compare(4720.096, better='lower')).slower_pct }}"  # 13.887

- name: Repetitions of two cells
  ansible.builtin.debug:
    msg: "{{ [80.1, 79.5, 80.4] | benchlab.bench.compare([100.2, 99.1, 100.9]) }}"
'''

RETURN = r'''
_value:
  description: The comparison.
  type: dict
  contains:
    delta_pct:
      description: (candidate - baseline) / baseline in %.
      type: float
    ci_pct:
      description: 95% confidence interval of that difference in % (null with fewer than 2 values a side).
      type: list
    p:
      description: Two-sided p-value of Welch's t-test.
      type: float
    significant:
      description: p < alpha; null when there is too little data to tell.
      type: bool
    slower_pct:
      description: The field reports' "slower than Test 1 (in %)".
      type: float
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.module_utils.stats import StatsError, compare as _compare


def compare(candidate, baseline, better='higher', alpha=0.05):
    try:
        return _compare(candidate, baseline, better=better, alpha=float(alpha))
    except (StatsError, TypeError, ValueError) as e:
        raise AnsibleFilterError('compare: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'compare': compare}
