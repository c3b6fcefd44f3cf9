# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: compare
short_description: Compare a candidate with its baseline, and conclude
version_added: 0.1.0
description:
  - Compares a candidate measurement with a baseline. Each side may be a number, a list of
    repetitions or a summary from M(benchlab.bench.summarize).
  - Returns the difference in % of the baseline (C(delta_pct)) with its 95% confidence interval
    (C(ci_pct), Welch), C(slower_pct), the field reports' "slower than Test 1 (in %)" column
    (C(1 - baseline/candidate) for lower-is-better values such as durations, C(1 - candidate/baseline)
    for higher-is-better ones), and the conclusion - C(verdict) C(better), C(worse), C(equivalent)
    (within O(equivalence_margin_pct) by two one-sided tests) or C(inconclusive) with
    C(repetitions_needed), beside C(mde_pct) (the smallest difference this data could detect), C(p),
    C(p_equivalence) and the C(test) that decided (C(welch); C(mann-whitney) for skewed lists such as
    latencies when the sample sizes let a rank test decide). One comparison alone, so no correction.
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
  equivalence_margin_pct:
    description: The equivalence margin in % of the baseline mean.
    type: float
    default: 5.0
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
  # verdict: worse, delta_pct: -20.1, mde_pct: 2.2, p: 0.00006, test: welch

- name: Two layers the same within 3 %?
  ansible.builtin.debug:
    msg: "{{ ([100.4, 99.8, 100.1, 100.3] | benchlab.bench.compare([100.0, 100.2, 99.9, 100.1],
             equivalence_margin_pct=3)).verdict }}"  # equivalent
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
      description: Two-sided p-value of the test that decided (null with fewer than 2 values a side).
      type: float
    significant:
      description: The verdict is better or worse; null when there is too little data to tell.
      type: bool
    verdict:
      description: better, worse, equivalent or inconclusive.
      type: str
      sample: worse
    mde_pct:
      description: The smallest difference, in % of the baseline mean, these data could detect (alpha 0.05, power 0.8).
      type: float
    p_equivalence:
      description: The p-value of the two one-sided tests against the equivalence margin.
      type: float
    test:
      description: The test that decided, C(welch) or C(mann-whitney).
      type: str
    repetitions_needed:
      description: For an inconclusive verdict, the repetitions per side that would settle it at this spread.
      type: int
    reason:
      description: Why the verdict is inconclusive.
      type: str
    slower_pct:
      description: The field reports' "slower than Test 1 (in %)".
      type: float
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import compare as _compare
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import StatsError


def compare(candidate, baseline, better='higher', alpha=0.05, equivalence_margin_pct=5.0):
    try:
        return _compare(candidate, baseline, better=better, alpha=float(alpha), margin_pct=float(equivalence_margin_pct))
    except (StatsError, TypeError, ValueError) as e:
        raise AnsibleFilterError('compare: %s' % e)


class FilterModule(object):
    def filters(self):
        return {'compare': compare}
