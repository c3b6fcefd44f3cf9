# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run observed on the hosts below it: its task returns its records held (bench_results_held) and
the amend task returns them with observed.host; the report callback keeps the amended ones, and a held
record whose amended copy never came (the playbook stopped between) still counts, as it is."""

import json
from types import SimpleNamespace

from ansible_collections.benchlab.bench.plugins.callback.report import CallbackModule
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir


def _record(rep, host_obs=None):
    obs = {'interval_s': 1, 'samples': 2}
    if host_obs:
        obs['host'] = host_obs
    return {'schema': 1, 'tool': 'dd', 'test': 'write', 'labels': {'cell': 'g1', 'benchmark': 'dd'}, 'params': {},
            'metrics': {'throughput': {'value': 100.0, 'unit': 'MB/s', 'better': 'higher'}}, 'repetition': rep,
            'cell_key': 'k1', 'run_id': 'r1', 'observed': obs}


def _callback(tmp_path):
    cb = CallbackModule()
    cb.rundir = RunDir(str(tmp_path), '20261205T000000Z-abcdef')
    cb._display = SimpleNamespace(warning=lambda *_a, **_k: None, error=lambda *_a, **_k: None)
    return cb


def _result():
    return SimpleNamespace(_task=SimpleNamespace(get_name=lambda: 'Benchmark dd'))


def test_held_records_wait_for_their_amended_copy(tmp_path):
    cb = _callback(tmp_path)
    cb._keep_records(_result(), {'bench_results': [_record(1), _record(2)], 'bench_results_held': True}, 'g1')
    assert cb.records == [] and len(cb._held_records) == 2
    amended = _record(1, {'name': 'localhost', 'role': 'hypervisor'})
    cb._keep_records(_result(), {'bench_results': [amended], 'bench_results_stored': [True]}, 'g1')
    assert [r['observed'].get('host') for r in cb.records] == [{'name': 'localhost', 'role': 'hypervisor'}]
    assert len(cb._held_records) == 1
    # the playbook ended before repetition 2's amend task: it counts as it is, appended once
    cb._release_held()
    assert [r['repetition'] for r in cb.records] == [1, 2] and cb._held_records == {}
    lines = [json.loads(x) for x in open(cb.rundir.file('results.jsonl')).read().splitlines()]
    assert [(r['repetition'], 'host' in r['observed']) for r in lines] == [(2, False)]   # 1: stored by the run path
