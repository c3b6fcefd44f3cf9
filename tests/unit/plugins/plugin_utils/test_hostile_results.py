# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hostile corpus of what a run directory may hold (issue 14 sections 5 and 9).

- tests/unit/fixtures/hostile/results_jsonl.yml: results.jsonl files a crash, a full disk or a
  hand edit leaves. Read back for a resume, every object line is a record and every other line is
  named with its line number (never a traceback); repaired before the next append, every complete
  record is kept and the dropped bytes are named.
- tests/unit/fixtures/hostile/run_ids.yml: run ids the callback refuses before any host (the
  preflight error the plan play asserts), making no directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir, current_run, read_jsonl, repair_jsonl

from ansible_collections.benchlab.bench.tests.unit.plugins.plugin_utils.test_nothing_lost import callback  # noqa: F401  pylint: disable=unused-import

HOSTILE = Path(__file__).resolve().parents[2] / 'fixtures' / 'hostile'
JSONL = yaml.safe_load((HOSTILE / 'results_jsonl.yml').read_text())['cases']
RUN_IDS = yaml.safe_load((HOSTILE / 'run_ids.yml').read_text())['cases']


def content_of(case):
    if 'content_hex' in case:
        return bytes.fromhex(case['content_hex'])
    if 'content_generate' in case:
        n = case['content_generate']['nest']
        return b'{"a": 1}\n' + b'[' * n + b']' * n + b'\n'
    return case['content'].encode('utf-8')


def test_the_corpora_have_unique_ids():
    for cases in (JSONL, RUN_IDS):
        ids = [c['id'] for c in cases]
        assert len(set(ids)) == len(ids)


@pytest.mark.parametrize('case', JSONL, ids=[c['id'] for c in JSONL])
def test_a_hostile_results_jsonl_is_read_and_repaired_without_losing_a_record(case, tmp_path):
    path = tmp_path / 'results.jsonl'
    data = content_of(case)
    path.write_bytes(data)
    records, problems = read_jsonl(str(path))
    assert len(records) == case['records'] and all(isinstance(r, dict) for r in records)
    assert len(problems) == len(case['problems']), problems
    for problem, expect in zip(problems, case['problems']):
        assert problem.startswith(str(path) + ' ') and expect in problem, problem
    message = repair_jsonl(str(path))
    after = path.read_bytes()
    if case['repair'] is None:
        assert message is None and after == data
    elif case['repair'] == 'dropped':
        cut = data.rfind(b'\n') + 1
        assert message.startswith('%s: dropped a partial last line of %d bytes' % (path, len(data) - cut))
        assert after == data[:cut]
    else:
        assert message.startswith('%s: the last record had no newline; completed it' % path)
        assert after == data + b'\n'
    assert after == b'' or after.endswith(b'\n')
    # every complete record is still there, and an append after the repair is a record of its own
    kept, _problems = read_jsonl(str(path))
    assert kept == records  # what was dropped or completed was never a record lost
    d = RunDir(str(tmp_path), 'x')
    d.path = str(tmp_path)
    d.append_jsonl('results.jsonl', {'new': True})
    assert read_jsonl(str(path))[0] == kept + [{'new': True}]


@pytest.mark.parametrize('case', RUN_IDS, ids=[c['id'] for c in RUN_IDS])
def test_a_hostile_run_id_fails_the_preflight_and_makes_nothing(case, callback, tmp_path):  # noqa: F811
    cb = callback(run_id=case['run_id'])
    error = current_run()['preflight_error']
    assert error.startswith('benchlab.bench.report: run_id %r: ' % case['run_id']), error
    assert ('error', error + ' (nothing is run: fix it and start again)') in cb.messages
    cb.v2_playbook_on_stats(None)
    assert not (tmp_path / 'runs').exists()
