# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: round_runs
short_description: The next round of runs, for the comparisons closest to a verdict
version_added: 0.1.0
description:
  - For a plan from M(benchlab.bench.matrix_plan) whose matrix sets C(methodology.budget_s), and the
    records of every host so far, analyses the records as the report would and returns the next
    round - one more run on each side of the comparisons closest to a verdict per second of machine
    time - and the lines that say why. Empty runs when every comparison has concluded, none can
    within the budget left or its cap (C(max_repetitions)), or the budget is spent.
  - The verdicts of such a run use a sequential test that stays valid however often the rounds
    looked at the data.
options:
  _input:
    description: The plan.
    type: dict
    required: true
  records:
    description: The result records of every host so far.
    type: list
    elements: dict
    required: true
  budget_left_s:
    description: Wall seconds left of C(methodology.budget_s).
    type: float
    required: true
  spent_s:
    description: Wall seconds the earlier rounds took (for the estimate of what a run costs).
    type: float
    default: 0
  runs_done:
    description: How many runs the earlier rounds made.
    type: int
    default: 0
  exclude:
    description: Pairs C([benchmark, cell]) never to repeat, e.g. those with a failed run.
    type: list
    elements: list
    default: []
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Plan the next round
  ansible.builtin.set_fact:
    round: "{{ bench_plan | benchlab.bench.round_runs(all_records, 120) }}"
'''

RETURN = r'''
_value:
  description: The round.
  type: dict
  contains:
    runs:
      description: Runs in the plan's run format, with C(gate=true) and the next repetition number.
      type: list
      elements: dict
    lines:
      description: What the round does and why, and the comparisons it stops with their reason.
      type: list
      elements: str
'''

from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import more_runs
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.rounds import next_round


def round_runs(plan, records, budget_left_s, spent_s=0, runs_done=0, exclude=None):
    return more_runs('round_runs', plan, records, exclude, lambda skip: next_round(
        plan, records, float(budget_left_s), float(spent_s), int(runs_done), skip))


class FilterModule(object):
    def filters(self):
        return {'round_runs': round_runs}
