# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A metric over time: E-divisive means checked against the reference implementation on a published
series (the Nile, Cobb 1978) and generated ones (fixtures/trend/README.md), then the trend of
stored runs on both history backends: the step found at the right run, the changed environment key
named, the contract's shape, the report files inert."""

from __future__ import annotations

import csv
import io
import json
import os
import random

import pytest

from ansible_collections.benchlab.bench.tests.unit.helpers import FIXTURES

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis import trend
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import open_store
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_trend import (
    trend_csv, trend_html, trend_json, trend_markdown, trend_terminal)

with open(os.path.join(FIXTURES, 'trend', 'reference.json')) as _f:
    REFERENCE = json.load(_f)


@pytest.mark.parametrize('name', sorted(REFERENCE))
def test_the_statistic_and_the_change_points_match_the_reference(name):
    ref = REFERENCE[name]
    stats = trend._t_stats(ref['values'])
    assert len(stats) == len(ref['t_stats'])
    for ours, theirs in zip(stats, ref['t_stats']):
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-9)
    # the reference found the same points with five different seeds; so do we, with ours
    assert all(cp == ref['change_points'][0] for cp in ref['change_points'])
    assert sorted(trend.e_divisive(ref['values'])) == ref['change_points'][0]
    assert sorted(trend.e_divisive(ref['values'], seed=99)) == ref['change_points'][0]


def test_the_nile_changes_in_1899():
    """The published answer: the flow dropped after the Aswan dam works began (Cobb 1978)."""
    assert trend.e_divisive(REFERENCE['nile']['values']) == [1899 - 1871]


def test_small_and_flat_series():
    assert trend.e_divisive([5.0, 5.0, 5.0, 5.0]) == []
    assert trend.e_divisive([1.0, 2.0]) == []
    r = random.Random(3)
    assert trend.e_divisive([r.gauss(10, 1) for _i in range(40)]) == []


# -- the trend of stored runs -------------------------------------------------------------------------

def _env(kernel, rng, options='rw,relatime'):
    return {'localhost/host-rootfs': {'host': 'localhost', 'labels': {'cell': 'host-rootfs'},
                                      'kernel': {'release': kernel, 'machine': 'x86_64'},
                                      'memory': {'mem_available_bytes': rng.randint(1, 10 ** 9)},
                                      'target': {'fstype': 'ext4', 'options': options}}}


def _run(i, mean, kernel, tool_version='9.1', matrix='nightly'):
    r = random.Random(i)
    records = []
    for rep in range(3):
        rec = new_record('dd', 'write', {'throughput': metric(r.gauss(mean, mean * 0.01), 'MB/s')},
                         tool_version=tool_version, labels={'benchmark': 'dd-write', 'cell': 'host-rootfs'},
                         params={'size': '8M'})
        records.append(dict(rec, host='localhost', repetition=rep))
    started = '2026-11-%02dT22:00:00Z' % (i + 1)
    return dict(run_id='202611%02dT220000Z-n%04d' % (i + 1, i), started=started, finished=started, user='ci',
                inventory='inv', playbook='bench.yml', matrix=matrix, collection_version='0.1.0', status='complete',
                invalid=[], failed=[], records=records, environment=_env(kernel, r), plan=None,
                analysis={'benchmarks': []})


def test_a_step_is_found_at_the_right_run_with_the_kernel_that_changed(location):
    """12 nightly runs at ~200 MB/s, then a kernel update and 10 runs at ~150 MB/s (another matrix's
    run in between must not count): the change point is run 12, -25 %, kernel.release named."""
    with open_store(location) as store:
        for i in range(22):
            store.store(_run(i, 200.0 if i < 12 else 150.0, '6.1.0-26-amd64' if i < 12 else '6.1.0-27-amd64'))
        store.store(_run(30, 10.0, 'x', matrix='other'))
        doc = trend.trend_document(store, 'dd-write', 'host-rootfs', 'throughput', matrix='nightly',
                                   meta=dict(started='2026-12-04T00:00:00Z', finished='2026-12-04T00:00:00Z'))
    series, cps = doc['trend']['series'], doc['trend']['change_points']
    assert set(doc['trend']) == {'series', 'change_points'}
    assert len(series) == 22 and all(set(p) == {'run_id', 'started', 'mean', 'ci95', 'n'} for p in series)
    assert [p['started'] for p in series] == sorted(p['started'] for p in series)  # oldest first
    assert series[0]['n'] == 3 and len(series[0]['ci95']) == 2 and series[0]['ci95'][0] < series[0]['mean']
    assert len(cps) == 1 and set(cps[0]) == {'index', 'run_id', 'delta_pct', 'changed_environment'}
    assert cps[0]['index'] == 12 and cps[0]['run_id'] == series[12]['run_id'] == '20261113T220000Z-n0012'
    assert cps[0]['delta_pct'] == pytest.approx(-25.0, abs=1.0)
    # the kernel changed; the free memory (volatile) and everything else did not count
    assert cps[0]['changed_environment'] == {'kernel.release': ['6.1.0-26-amd64', '6.1.0-27-amd64']}
    assert doc['trend_query']['unit'] == 'MB/s' and doc['trend_query']['runs_selected'] == 22
    assert doc['run_id'].startswith('trend-dd-write-host-rootfs-throughput-')


def test_tool_and_collection_versions_are_environment_keys(location):
    with open_store(location) as store:
        for i in range(16):
            store.store(_run(i, 100.0 if i < 8 else 130.0, 'k', tool_version='9.1' if i < 8 else '9.4'), label='ci')
        doc = trend.trend_document(store, 'dd-write', 'host-rootfs', 'throughput', label='ci')
    (cp,) = doc['trend']['change_points']
    assert cp['index'] == 8 and cp['delta_pct'] == pytest.approx(30.0, abs=1.5)
    assert cp['changed_environment'] == {'tool_version': ['9.1', '9.4']}


def test_nothing_selected_is_a_clear_error(location):
    with open_store(location) as store:
        store.store(_run(0, 100.0, 'k'))
        with pytest.raises(trend.TrendError, match="no stored run of matrix 'nope'"):
            trend.trend_document(store, 'dd-write', 'host-rootfs', 'throughput', matrix='nope')
        with pytest.raises(trend.TrendError) as e:
            trend.trend_document(store, 'dd-write', 'host-rootfs', 'iops', matrix='nightly')
        assert 'Stored there: dd-write / host-rootfs / throughput' in str(e.value)
        with pytest.raises(trend.TrendError, match='trend_matrix'):
            trend.trend_document(store, 'dd-write', 'host-rootfs', 'throughput')


def _doc_with_hostile_text():
    series = [dict(run_id='r%d' % i, started='2026-11-%02dT00:00:00Z' % (i + 1), mean=100.0 if i < 5 else 80.0,
                   ci95=[99.0, 101.0] if i < 5 else [79.0, 81.0], n=3) for i in range(10)]
    return dict(run_id='trend-x', started='s', finished='f', user='u', matrix='m', trend=dict(
        series=series, change_points=[dict(index=5, run_id='r5', delta_pct=-20.0, changed_environment={
            'target.options': ['rw', '=HYPERLINK("http://x")<script>alert(1)</script>']})]),
        trend_query=dict(matrix='m', label=None, benchmark='dd-write', cell='<b>cell</b>|x', metric='throughput',
                         unit='MB/s', better='higher', runs_selected=10, method=trend.METHOD))


def test_the_report_formats():
    doc = _doc_with_hostile_text()
    data = json.loads(trend_json(doc))
    assert data['trend'] == doc['trend']
    rows = list(csv.DictReader(io.StringIO(trend_csv(doc))))
    assert [r['change_point'] for r in rows].count('true') == 1 and rows[5]['delta_pct'] == '-20.0'
    assert rows[5]['changed_environment'].startswith("target.options: rw → ")
    assert not any(v.startswith('=') for r in rows for v in r.values())
    md = trend_markdown(doc)
    assert '| 5 | r5 |' in md and '-20.0%' in md and '<script>' not in md and '\\|x' in md
    html = trend_html(doc)
    assert '<script>' not in html and '&lt;script&gt;' in html and '<b>cell</b>' not in html
    assert html.count('<line class="change"') == 1 and html.count('<circle class="point"') == 10
    assert 'class="band"' in html
    lines = trend_terminal(doc)
    assert lines[0].startswith('benchlab trend: dd-write / <b>cell</b>|x / throughput over 10 run(s): 1 change point')
    assert 'change at #5 r5' in lines[2] and '-20.0%' in lines[2]
