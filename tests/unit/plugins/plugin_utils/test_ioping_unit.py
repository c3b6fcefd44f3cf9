# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ioping benchmark unit (plugins/plugin_utils/benchmarks/ioping.py) on real ioping output: its
metric names are what the parser gives, hand-run output imports (playbooks/import.yml's path), its
report table says what a request costs against the baseline, and its time estimate."""

from __future__ import annotations

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.ioping import ioping_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.common import toolinfo
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan import matrix
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.tooltables import tool_tables
from ansible_collections.benchlab.bench.tests.unit.plugins.plugin_utils.test_imports import write_manifest

UNIT = toolinfo.unit('ioping')


def test_the_metric_names_are_the_parsers(read_fixture):
    rec = ioping_record(read_fixture('ioping/ioping-1.3-batch-c10.txt'))
    assert sorted(rec['metrics']) == sorted(name for name, _u, _b, _w in UNIT.METRICS)
    for name, unit, better, _what in UNIT.METRICS:
        assert (rec['metrics'][name]['unit'], rec['metrics'][name]['better']) == (unit, better)


def test_hand_run_output_imports(tmp_path):
    from ansible_collections.benchlab.bench.plugins.plugin_utils.run.imports import import_manifest
    manifest = {'name': 'latency', 'baseline': 'plain', 'entries': [
        {'cell': 'plain', 'tool': 'ioping', 'file': 'ioping-1.3-read-c10.txt', 'labels': {'storage': 'ext4'}},
        {'cell': 'plain', 'tool': 'ioping', 'file': 'ioping-1.3-direct-c10.txt', 'labels': {'storage': 'ext4'}},
        {'cell': 'sync', 'tool': 'ioping', 'test': 'write', 'file': 'ioping-1.3-json-write-sync.txt', 'tool_version': '1.3'}]}
    path = write_manifest(tmp_path, manifest, ['ioping/ioping-1.3-read-c10.txt', 'ioping/ioping-1.3-direct-c10.txt',
                                               'ioping/ioping-1.3-json-write-sync.txt'])
    records, hosts, plan = import_manifest(path)
    assert [(r['labels']['cell'], r['test'], r['repetition']) for r in records] == [
        ('plain', 'read', 1), ('plain', 'read', 2), ('sync', 'write', 1)]
    assert records[0]['metrics']['latency_avg']['value'] == pytest.approx(0.3129)
    assert records[2]['tool_version'] == '1.3' and records[2]['params']['imported'] is True


def _cells(read_fixture):
    recs = []
    for cell, names in (('disk', ['ioping-1.3-batch-c10.txt', 'ioping-1.3-batch-write-direct.txt']),
                        ('drbd', ['ioping-1.3-batch-print-count.txt', 'ioping-1.3-batch-worktime.txt'])):
        for rep, name in enumerate(names, 1):
            rec = ioping_record(read_fixture('ioping/' + name), labels={'cell': cell, 'benchmark': 'lat'})
            recs.append(dict(rec, host='h', repetition=rep))
    return recs


def test_the_report_table_says_what_a_request_costs_against_the_baseline(read_fixture):
    recs = _cells(read_fixture)
    plan = {'name': 'p', 'baseline': 'disk', 'cells': [{'name': 'disk', 'host': 'h'}, {'name': 'drbd', 'host': 'h'}],
            'benchmarks': [{'name': 'lat', 'tool': 'ioping', 'cells': ['disk', 'drbd']}], 'runs': []}
    analysis = analyze(recs, plan)
    (bench,) = analysis['benchmarks']
    (table,) = tool_tables(bench)
    disk, drbd = table['data']

    def avg(cell):
        return sum(r['metrics']['latency_avg']['value'] for r in recs if r['labels']['cell'] == cell) / 2
    assert disk['baseline'] and disk['added_ms'] is None and disk['latency_avg'] == pytest.approx(avg('disk'))
    assert drbd['added_ms'] == pytest.approx(avg('drbd') - avg('disk')) and drbd['n'] == 2
    assert table['rows'][1][6] == '%+.3f' % (avg('drbd') - avg('disk'))
    assert 'ioping, what one request costs' in render_markdown(analysis, {'run_id': 'r', 'status': 'complete'})


def test_the_estimate():
    assert matrix.estimate_s('ioping', {}) == pytest.approx(100 * 0.01 + 1)       # the module's count: 100
    assert matrix.estimate_s('ioping', {'count': 20, 'interval': '1s'}) == pytest.approx(20 * 1.01 + 1)
    assert matrix.estimate_s('ioping', {'time': 3}) == 4
