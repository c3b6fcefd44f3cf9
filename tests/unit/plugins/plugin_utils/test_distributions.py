# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Latency as a distribution and the spread of a network cell, on real captured output
(tests/unit/fixtures/fio, iperf): the parsers keep fio's json+ histogram and iperf3's intervals per
run (module_utils/tools/fio.py, iperf.py), the analysis merges them over workers and repetitions
(plugin_utils/analysis/distributions.py), the reports show them (render_distributions.py)."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import fio_records, parse_fio
from ansible_collections.benchlab.bench.plugins.module_utils.tools.iperf import iperf_records
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import histogram_percentile
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.distributions import CDF_POINTS, cdf_points, cell_distributions
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import inert
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_distributions import render_distributions_csv
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_json, results_problems

FIXTURES = Path(__file__).resolve().parents[3] / 'unit' / 'fixtures'
THREADS = (FIXTURES / 'fio' / 'fio-3.33-tiobench-threads.json+normal').read_text()
MIXED = (FIXTURES / 'fio' / 'fio-3.33-mixed-timebased.json+normal').read_text()


def _workers_bins(text, job, direction):
    doc, _msgs = parse_fio(text)
    merged = {}
    for entry in doc['jobs']:
        if entry['jobname'] == job:
            for k, v in entry[direction]['clat_ns']['bins'].items():
                merged[float(k)] = merged.get(float(k), 0) + v
    return merged


def test_fio_keeps_the_completion_latency_histogram_merged_over_the_workers():
    recs = fio_records(THREADS)
    for rec in recs:
        assert validate_record(rec) == []
        (name,) = rec['distributions']
        direction = name.split('_')[0]
        d = rec['distributions'][name]
        assert (d['kind'], d['unit']) == ('histogram', 'ns') and d['values'] == sorted(d['values'])
        bins = _workers_bins(THREADS, rec['test'], direction)      # fio's own json+ bins of the 16 workers
        assert dict(zip(map(float, d['values']), d['counts'])) == dict((k, v) for k, v in bins.items() if v)
        # the record's p99 is the merged histogram's: one source for both
        assert rec['metrics'][direction + '_lat_p99']['value'] == pytest.approx(histogram_percentile(bins, 99.0) * 1e-6)
    both = fio_records(MIXED)
    assert all(set(r['distributions']) == {'read_clat', 'write_clat'} for r in both)
    # plain json output has no bins: no distribution, nothing invented
    assert all('distributions' not in r for r in fio_records((FIXTURES / 'fio' / 'fio-3.33-randrw.json').read_text()))


def test_iperf3_keeps_the_throughput_of_each_interval():
    text = (FIXTURES / 'iperf' / 'iperf3-3.12-tcp.json').read_text()
    (rec,) = iperf_records(text)
    assert validate_record(rec) == []
    d = rec['distributions']['throughput']
    doc = json.loads(text)
    assert d['values'] == pytest.approx([i['sum']['bits_per_second'] / 1e6 for i in doc['intervals']], abs=1e-6)
    assert d['kind'] == 'intervals' and d['unit'] == 'Mbit/s' and d['interval_s'] == pytest.approx(1.0, abs=0.01)
    (iperf2,) = iperf_records((FIXTURES / 'iperf' / 'iperf-2.1.8-tcp.txt').read_text())
    assert 'distributions' not in iperf2


def _cell(records, cell, reps=3):
    out = []
    for rep in range(1, reps + 1):
        for r in records:
            r = copy.deepcopy(r)
            r.update(host='h', repetition=rep, labels={'benchmark': 'fio', 'cell': cell})
            out.append(r)
    return out


def test_a_cell_merges_its_repetitions_and_says_how_much_each_percentile_moves():
    recs = [r for r in fio_records(THREADS) if r['test'] == 'rand-read']
    one = copy.deepcopy(recs[0])
    # three repetitions: the captured histogram, then the same with every latency doubled and tripled
    reps = []
    for factor in (1, 2, 3):
        r = copy.deepcopy(one)
        r['distributions']['read_clat']['values'] = [v * factor for v in r['distributions']['read_clat']['values']]
        r.update(repetition=factor, labels={'benchmark': 'fio', 'cell': 'c'}, host='h')
        reps.append(r)
    d = cell_distributions(reps)['read_clat']
    base = dict(zip(one['distributions']['read_clat']['values'], one['distributions']['read_clat']['counts']))
    assert d['repetitions'] == 3 and d['samples'] == 3 * sum(base.values())
    p99 = histogram_percentile(dict((v * 1e-6, c) for v, c in base.items()), 99.0)
    assert d['percentiles']['p99']['mean'] == pytest.approx(2 * p99)           # (1 + 2 + 3) / 3
    assert d['percentiles']['p99']['ci95'][0] < 2 * p99 < d['percentiles']['p99']['ci95'][1]
    merged = {}
    for f in (1, 2, 3):
        for v, c in base.items():
            merged[v * f * 1e-6] = merged.get(v * f * 1e-6, 0) + c
    for key, pct in (('p50', 50.0), ('p90', 90.0), ('p99', 99.0), ('p99.9', 99.9)):
        assert d['percentiles'][key]['merged'] == pytest.approx(histogram_percentile(merged, pct))
    assert len(d['cdf']) <= CDF_POINTS and d['cdf'][-1][1] == 1.0
    assert all(a[0] < b[0] and a[1] <= b[1] for a, b in zip(d['cdf'], d['cdf'][1:]))


def test_cdf_points_keep_every_bucket_when_few_and_thin_on_a_log_scale_when_many():
    few = {0.1: 1, 0.2: 3, 0.4: 4}
    assert cdf_points(few) == [[0.1, 0.125], [0.2, 0.5], [0.4, 1.0]]
    many = dict((0.001 * 1.01 ** i, 1) for i in range(1000))
    thin = cdf_points(many)
    assert len(thin) <= CDF_POINTS + 1 and thin[-1][1] == 1.0


def test_concurrent_pairs_add_up_interval_by_interval():
    text = (FIXTURES / 'iperf' / 'iperf3-3.12-tcp.json').read_text()
    (a,) = iperf_records(text)
    pair = []
    for i, scale in ((1, 1.0), (2, 0.5)):
        r = copy.deepcopy(a)
        r['distributions']['throughput']['values'] = [v * scale for v in r['distributions']['throughput']['values']]
        r.update(host='g%d' % i, repetition=1, labels={'benchmark': 'net', 'cell': 'x2', 'pair': i, 'pairs': 2},
                 started='2026-12-04T03:00:00.000Z', duration_s=2.0)
        pair.append(r)
    d = cell_distributions(pair)['throughput']
    values = a['distributions']['throughput']['values']
    assert d['intervals'] == 2 and d['min'] == pytest.approx(1.5 * min(values)) and d['max'] == pytest.approx(1.5 * max(values))
    # pairs that did not run together are no measurement: left out here too
    late = copy.deepcopy(pair)
    late[1]['started'] = '2026-12-04T03:00:05.000Z'
    assert cell_distributions(late) is None


def test_the_reports_show_the_percentiles_and_the_cdf():
    recs = [r for r in fio_records(THREADS) if r['test'] == 'rand-read']
    slow = copy.deepcopy(recs[0])
    slow['distributions']['read_clat']['values'] = [v * 4 for v in slow['distributions']['read_clat']['values']]
    records = _cell(recs, 'host') + _cell([slow], 'guest')
    plan = {'baseline': 'host', 'cells': [{'name': 'host'}, {'name': 'guest'}]}
    a = analyze(records, plan)
    (b,) = a['benchmarks']
    assert [c['distributions']['read_clat']['repetitions'] for c in b['cells']] == [3, 3]
    doc = dict(run_id='r', started=None, finished=None, status='complete', records=records, environment={}, plan=plan,
               analysis=a, invalid=[], failed=[])
    assert results_problems(json.loads(results_json(doc))) == []
    md = render_markdown(a, {'run_id': 'r'})
    assert '| cell | direction | I/Os | p50 | p90 | p99 | p99.9 |' in md
    html = render_html(a, {'run_id': 'r'})
    assert html.count('<figure class="cdf-chart" data-distribution="read_clat">') == 1
    assert 'read latency CDF: guest over host' in html and '<script' not in html
    assert html.count('<path class="cdf ') == 2
    rows = list(csv.DictReader(io.StringIO(render_distributions_csv(a, inert))))
    assert [r['statistic'] for r in rows if r['cell'] == 'guest'] == ['p50', 'p90', 'p99', 'p99.9']
    guest = b['cells'][1]['distributions']['read_clat']['percentiles']
    host = b['cells'][0]['distributions']['read_clat']['percentiles']
    assert guest['p99']['merged'] == pytest.approx(4 * host['p99']['merged'])
    assert render_distributions_csv({'benchmarks': []}, inert) is None
