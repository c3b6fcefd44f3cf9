# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every parse_* filter does around its module_utils parser: refuse what is not text and turn
the parser's error into an AnsibleFilterError that starts with the filter's name. And what the
filters that ask for more runs (gate_runs, round_runs) check of their plan and records."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError


def parse_with(filter_name, tool, parser, error, text, *args, **kwargs):
    """parser(text, *args, **kwargs), with the filters' error contract."""
    if not isinstance(text, str):
        raise AnsibleFilterError('%s expects the text %s printed, got %s' % (filter_name, tool, type(text).__name__))
    try:
        return parser(text, *args, **kwargs)
    except error as e:
        raise AnsibleFilterError('%s: %s' % (filter_name, e))


def more_runs(filter_name, plan, records, exclude, ask):
    """ask(set of (benchmark, cell) pairs to leave alone) for a plan and a list of records, with the
    filters' error contract (a malformed plan or record named, never a traceback)."""
    if not isinstance(plan, dict) or 'runs' not in plan:
        raise AnsibleFilterError('%s: the input must be a plan from benchlab.bench.matrix_plan' % filter_name)
    if not isinstance(records, list):
        raise AnsibleFilterError('%s: records must be a list, got %s' % (filter_name, type(records).__name__))
    try:
        return ask(set(tuple(p) for p in exclude or []))
    except (KeyError, TypeError, ValueError) as e:
        raise AnsibleFilterError('%s: malformed plan or record: %s' % (filter_name, e))
