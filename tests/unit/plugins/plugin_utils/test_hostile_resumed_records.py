# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resumed records go through the same validation as new ones (issue 27, finding 7).

The corpus tests/unit/fixtures/hostile/resumed_records.yml: one field of a real stored record
forged (a metric name or unit that a spreadsheet reads as a formula, Infinity or NaN, a label name
that is not a name, ...). Each forged line of results.jsonl

- is set aside by the run_state lookup, named with its file and line number, and never counted as
  measured (the resume measures that repetition again);
- reaches the report callback only as an invalid entry (results.json's invalid list): results.csv,
  the analysis and the history hold the valid records only, and the report step does not fail;
- is refused the same way when it arrives in a plan's resume.records built some other way.
"""

from __future__ import annotations

import csv
import copy
import json
from pathlib import Path

import pytest
import yaml
from ansible.executor.stats import AggregateStats

from ansible_collections.benchlab.bench.plugins.lookup.run_state import LookupModule
from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import dd_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import load_run
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys, resume_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import read_jsonl
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.validation import checked_records, record_problems
from ansible_collections.benchlab.bench.tests.unit.helpers import CallbackResult, CallbackTask, fixture_text

from ansible_collections.benchlab.bench.tests.unit.plugins.plugin_utils.test_nothing_lost import PLAN, callback  # noqa: F401  pylint: disable=unused-import

HOSTILE = Path(__file__).resolve().parents[2] / 'fixtures' / 'hostile'
CASES = yaml.safe_load((HOSTILE / 'resumed_records.yml').read_text())['cases']
KEY = plan_keys(PLAN)[('dd-write', 'host-rootfs')]


def stored(repetition):
    """A real dd record (captured output) as the report callback stores it in results.jsonl."""
    rec = dd_record(fixture_text('dd/coreutils-9.1-write-fdatasync.txt'), test='write', tool_version='9.1')
    rec['labels'] = {'platform': 'host', 'cell': 'host-rootfs', 'benchmark': 'dd-write'}
    rec.update(host='localhost', cell_key=KEY, repetition=repetition)
    assert record_problems(rec, stored=True) == []
    return rec


def forged(case, repetition=2):
    rec = copy.deepcopy(stored(repetition))
    *parents, last = case['path']
    node = rec
    for key in parents:
        node = node.setdefault(key, {})
    if case.get('delete'):
        del node[last]
    else:
        node[last] = case['value']
    return rec


def write_jsonl(path, records):
    # json.dumps writes NaN/Infinity as JavaScript does: what a hand edit or another tool leaves
    path.write_text(''.join(json.dumps(r) + '\n' for r in records))


def test_the_corpus_has_unique_ids_and_every_case_is_invalid():
    ids = [c['id'] for c in CASES]
    assert len(set(ids)) == len(ids)
    for case in CASES:
        assert any(case['expect'] in p for p in record_problems(forged(case), stored=True)), case['id']


@pytest.mark.parametrize('case', CASES, ids=[c['id'] for c in CASES])
def test_a_forged_line_is_set_aside_with_its_line_number_and_never_counted(case, tmp_path):
    path = tmp_path / 'results.jsonl'
    write_jsonl(path, [stored(1), forged(case), stored(3)])
    numbered, problems = read_jsonl(str(path), numbered=True)
    assert problems == [] and [n for n, _r in numbered] == [1, 2, 3]
    records, set_aside, messages = checked_records(numbered, str(path))
    assert [r['repetition'] for r in records] == [1, 3]
    assert [a['line'] for a in set_aside] == [2] and any(case['expect'] in e for e in set_aside[0]['errors'])
    assert messages[0].startswith('%s line 2: not a valid record, set aside (never rendered): ' % path)
    # the resume measures repetition 2 again: the forged line does not count as measured
    plan = dict(PLAN, runs=[dict(PLAN['runs'][0], repetition=n, guards={}) for n in (1, 2, 3)])
    resumed = resume_plan(plan, PLAN, records, 'r1', set_aside=set_aside)
    assert [r['repetition'] for r in resumed['runs']] == [2]
    assert resumed['resume']['set_aside'] == set_aside


def test_the_run_state_lookup_returns_valid_records_and_names_the_set_aside_lines(tmp_path, monkeypatch):
    monkeypatch.setenv('BENCHLAB_REPORT_DIR', str(tmp_path))
    (tmp_path / 'r1').mkdir()
    lines = [stored(1)] + [forged(case, 2 + i) for i, case in enumerate(CASES)] + [stored(99)]
    write_jsonl(tmp_path / 'r1' / 'results.jsonl', lines)
    warnings = []
    monkeypatch.setattr('ansible_collections.benchlab.bench.plugins.lookup.run_state.display.warning', warnings.append)
    from ansible import constants as C
    from ansible_collections.benchlab.bench.plugins.lookup import run_state
    # what Ansible's plugin loader does when it loads the lookup: its options from DOCUMENTATION
    C.config.initialize_plugin_configuration_definitions('lookup', 'benchlab.bench.run_state',
                                                         yaml.safe_load(run_state.DOCUMENTATION)['options'])
    lookup = LookupModule()
    lookup._load_name = 'benchlab.bench.run_state'
    (state,) = lookup.run(['r1'], variables={})
    assert [r['repetition'] for r in state['records']] == [1, 99]
    assert [a['line'] for a in state['set_aside']] == list(range(2, 2 + len(CASES)))
    assert len(warnings) == len(CASES)
    assert all(' line %d: not a valid record, set aside' % (i + 2) in w for i, w in enumerate(warnings))
    assert not any(c in w for w in warnings for c in '\r\n\x1b')   # the terminal sees escapes, not control characters


def _csv_rows(run_dir):
    with open(str(run_dir / 'results.csv'), newline='') as f:
        return [(r['metric'], r['unit']) for r in csv.DictReader(f)]


@pytest.mark.parametrize('how', ['set-aside-by-the-lookup', 'inside-resume-records'])
@pytest.mark.parametrize('case', CASES, ids=[c['id'] for c in CASES])
def test_a_forged_record_is_never_rendered_and_the_report_step_completes(case, how, callback, tmp_path):  # noqa: F811
    cb = callback()
    good = [stored(1), stored(3)]
    bad = forged(case)
    if how == 'set-aside-by-the-lookup':
        resume = dict(run_id=cb.rundir.run_id, skipped=2, records=good,
                      set_aside=[dict(line=2, errors=record_problems(bad, stored=True), record=bad)])
    else:   # a plan made by other means: the callback checks the records itself
        resume = dict(run_id=cb.rundir.run_id, skipped=3, records=[good[0], bad, good[1]])
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('plan', 'ansible.builtin.set_fact'),
                                      {'ansible_facts': {'bench_plan': dict(PLAN, resume=resume)}}))
    cb.v2_playbook_on_stats(AggregateStats())   # no SystemExit: every file is written
    run_dir = tmp_path / 'runs' / cb.rundir.run_id
    doc = json.loads((run_dir / 'results.json').read_text())
    assert [r['repetition'] for r in doc['records']] == [1, 3]
    (invalid,) = doc['invalid']
    assert any(case['expect'] in e for e in invalid['errors'])
    assert invalid['task'] == ('results.jsonl line 2 (resumed)' if how == 'set-aside-by-the-lookup' else 'resumed record')
    # results.csv: the two valid records' metrics, nothing else (no forged name, unit or label column)
    rows = _csv_rows(run_dir)
    assert sorted(rows) == sorted((name, m['unit']) for rec in good for name, m in rec['metrics'].items()), rows
    with open(str(run_dir / 'results.csv'), newline='') as f:
        assert [c for c in next(csv.reader(f)) if c.startswith('label_')] == ['label_platform']
    assert doc['analysis']['benchmarks'][0]['cells'][0]['metrics']['throughput']['n'] == 2
    assert len(load_run(str(tmp_path / 'history.sqlite'), cb.rundir.run_id)['records']) == 2
    for name in ('results.csv', 'report.md', 'report.html'):
        text = (run_dir / name).read_text()
        assert 'HYPERLINK' not in text.split('Invalid records')[0] and '=1+1' not in text.split('Invalid records')[0]
    assert json.loads((run_dir / 'plan.json').read_text())['resume'].get('set_aside_lines') == (
        [2] if how == 'set-aside-by-the-lookup' else [])
