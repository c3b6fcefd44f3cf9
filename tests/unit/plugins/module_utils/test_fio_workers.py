# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fio workers (numjobs) are one measurement: module_utils/tools/fio.py against real fio 3.33 output of
job files written for these tests (tests/unit/fixtures/fio/jobs, commands in fixtures/README.md).

The `*.json+normal` fixtures hold fio's json+ AND its normal output of the SAME run, so the
aggregate is checked against fio's own group figures ("Run status group N") of the same data."""

import json
import re

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import fio_records, job_groups, parse_fio
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import histogram_percentile

GROUP_RE = re.compile(r'Run status group (\d+) \(all jobs\):\n((?:\s+(?:READ|WRITE):.*\n)+)')
DIR_RE = re.compile(r'(READ|WRITE): bw=\S+ \(([\d.]+)([kMG]?)B/s\).*?io=\S+ \(([\d.]+)([kMG]?)B\), run=(\d+)-(\d+)msec')
SCALE = {'': 1.0, 'k': 1e3, 'M': 1e6, 'G': 1e9}


def _split(text):
    """(json document, fio's normal text) of a `--output-format=json+,normal` run."""
    start = text.index('\n{') + 1
    doc, end = json.JSONDecoder().raw_decode(text, start)
    return doc, text[:start] + text[end:]


def _fio_groups(normal):
    """fio's own per-group aggregate from its normal output: {(group, 'read'|'write'): (MB/s, bytes, max ms)}."""
    out = {}
    for gid, body in GROUP_RE.findall(normal):
        for d, bw, bwu, io, iou, _skip, run_max in DIR_RE.findall(body):
            out[(int(gid), d.lower())] = (float(bw) * SCALE[bwu] / 1e6, float(io) * SCALE[iou], int(run_max))
    return out


@pytest.fixture
def tiobench(read_fixture):
    text = read_fixture('fio/fio-3.33-tiobench-threads.json+normal')
    doc, normal = _split(text)
    return text, doc, normal


def test_one_record_per_group_not_per_thread(tiobench):
    text, doc, _skip = tiobench
    assert len(doc['jobs']) == 16                     # 4 groups x numjobs=4, as fio printed them
    records = fio_records(text)
    assert [r['test'] for r in records] == ['seq-write', 'seq-read', 'rand-write', 'rand-read']
    for rec in records:
        assert validate_record(rec) == []
        assert rec['workers']['count'] == 4
        assert rec['workers']['kind'] == 'fio numjobs'
        assert [w['name'] for w in rec['workers']['detail']] == ['%s.%d' % (rec['test'], i) for i in range(4)]
        assert rec['params']['numjobs'] == '4'        # inherited from [global]


def test_aggregate_is_fios_own_group_figure_of_the_same_run(tiobench):
    """Throughput = all workers' bytes / the longest worker's runtime: fio's 'Run status group' line."""
    text, doc, normal = tiobench
    groups = _fio_groups(normal)
    assert len(groups) == 4
    for gid, rec in enumerate(fio_records(text)):
        (d,) = [k for (g, k) in groups if g == gid]
        fio_mb_s, fio_bytes, fio_run_ms = groups[(gid, d)]
        assert rec['metrics'][d + '_throughput']['value'] == pytest.approx(fio_mb_s, rel=0.006)
        workers = [j for j in doc['jobs'] if j['groupid'] == gid]
        assert sum(j[d]['io_bytes'] for j in workers) == pytest.approx(fio_bytes, rel=0.006)
        assert max(j[d]['runtime'] for j in workers) == fio_run_ms
        # iops the same way (fio's sum_thread_stats: total_ios summed, the longest runtime)
        expected_iops = sum(j[d]['total_ios'] for j in workers) * 1000.0 / fio_run_ms
        assert rec['metrics'][d + '_iops']['value'] == pytest.approx(expected_iops, rel=1e-12)
        # the group did about numjobs times one worker's rate, never the mean of the workers
        per_worker = [w['metrics'][d + '_iops'] for w in rec['workers']['detail']]
        assert rec['metrics'][d + '_iops']['value'] > 2.5 * (sum(per_worker) / 4)
        assert rec['metrics'][d + '_iops']['value'] <= sum(per_worker) * (1 + 1e-12)
        # latency mean weighted by each worker's I/O count
        n = sum(j[d]['lat_ns']['N'] for j in workers)
        mean = sum(j[d]['lat_ns']['mean'] * j[d]['lat_ns']['N'] for j in workers) / n / 1e6
        assert rec['metrics'][d + '_lat_mean']['value'] == pytest.approx(mean, rel=1e-12)
        assert not any('p99' in w for w in rec['warnings'])       # json+ bins: merged exactly


def test_histogram_percentile_is_fios_algorithm(tiobench):
    """histogram_percentile over one worker's json+ bins gives every percentile fio printed for it."""
    _skip, doc, _skip = tiobench
    checked = 0
    for job in doc['jobs']:
        for d in ('read', 'write'):
            clat = job[d]['clat_ns']
            if not clat['N']:
                continue
            for pct, value in clat['percentile'].items():
                assert histogram_percentile(clat['bins'], float(pct)) == value, (job['jobname'], d, pct)
                checked += 1
    assert checked == 16 * 17


def test_p99_from_the_merged_histogram(tiobench):
    text, doc, _skip = tiobench
    rec = fio_records(text)[0]
    workers = [j for j in doc['jobs'] if j['groupid'] == 0]
    merged = {}
    for j in workers:
        for k, v in j['write']['clat_ns']['bins'].items():
            merged[k] = merged.get(k, 0) + v
    ordered = sorted((int(k), v) for k, v in merged.items())
    total = sum(v for _skip, v in ordered)
    running, p99 = 0, None
    for value, count in ordered:
        running += count
        if running >= 0.99 * total:
            p99 = value
            break
    assert rec['metrics']['write_lat_p99']['value'] == pytest.approx(p99 / 1e6)
    worst = max(j['write']['clat_ns']['percentile']['99.000000'] for j in workers)
    best = min(j['write']['clat_ns']['percentile']['99.000000'] for j in workers)
    assert best / 1e6 <= rec['metrics']['write_lat_p99']['value'] <= worst / 1e6


def test_group_reporting_json_is_one_entry_per_group(read_fixture):
    text = read_fixture('fio/fio-3.33-tiobench-group.json')
    doc, _skip = parse_fio(text)
    records = fio_records(text)
    assert [r['test'] for r in records] == ['seq-write', 'seq-read', 'rand-write', 'rand-read']
    for rec, job in zip(records, doc['jobs']):
        assert validate_record(rec) == []
        d = 'write' if 'write' in rec['test'] else 'read'
        # fio merged the workers itself: its figures are taken as they are
        assert rec['metrics'][d + '_iops']['value'] == job[d]['iops']
        assert rec['metrics'][d + '_lat_p99']['value'] == job[d]['clat_ns']['percentile']['99.000000'] / 1e6
        assert rec['workers']['count'] == 4 and 'detail' not in rec['workers']


def test_mixed_time_based_job(read_fixture):
    text = read_fixture('fio/fio-3.33-mixed-timebased.json+normal')
    doc, normal = _split(text)
    (rec,) = fio_records(text)
    assert validate_record(rec) == []
    assert rec['test'] == 'oltp-mix' and rec['workers']['count'] == 2
    assert rec['params']['rwmixread'] == '70' and rec['params']['runtime'] == '1'
    for d in ('read', 'write'):
        fio_mb_s, _skip, _skip = _fio_groups(normal)[(0, d)]
        assert rec['metrics'][d + '_throughput']['value'] == pytest.approx(fio_mb_s, rel=0.006)
    reads, writes = rec['metrics']['read_iops']['value'], rec['metrics']['write_iops']['value']
    assert reads / (reads + writes) == pytest.approx(0.70, abs=0.05)


def test_plain_json_p99_is_the_worst_workers_and_says_so(read_fixture):
    text = read_fixture('fio/fio-3.33-mixed-timebased.json')
    doc, _skip = parse_fio(text)
    (rec,) = fio_records(text)
    for d in ('read', 'write'):
        worst = max(j[d]['clat_ns']['percentile']['99.000000'] for j in doc['jobs'])
        assert rec['metrics'][d + '_lat_p99']['value'] == worst / 1e6
        assert any(w.startswith(d + "_lat_p99 is the worst worker's p99") for w in rec['warnings'])


def test_same_name_in_two_groups_gets_two_tests():
    doc = {'jobs': [{'jobname': 'a', 'groupid': 0}, {'jobname': 'a', 'groupid': 0}, {'jobname': 'a', 'groupid': 1}]}
    groups = job_groups(doc)
    assert [(name, len(entries)) for name, _skip, entries in groups] == [('a.g0', 2), ('a.g1', 1)]


def test_unreadable_histograms_and_group_ids_do_not_break_the_parse(read_fixture):
    """Mutated json+ (hand-made from the real fixture): a bad bin falls back to the worst worker's p99."""
    text = read_fixture('fio/fio-3.33-tiobench-threads.json+normal')
    doc, _skip = _split(text)
    doc['jobs'][1]['write']['clat_ns']['bins'] = {'x': 'y'}
    for j in doc['jobs'][4:8]:
        j['groupid'] = [1]
    recs = fio_records(json.dumps(doc))
    assert [r['test'] for r in recs] == ['seq-write', 'seq-read', 'rand-write', 'rand-read']
    worst = max(j['write']['clat_ns']['percentile']['99.000000'] for j in doc['jobs'][:4])
    assert recs[0]['metrics']['write_lat_p99']['value'] == worst / 1e6
    assert any("worst worker's p99" in w for w in recs[0]['warnings'])
