# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""n is the number of repetitions, never of workers: plugin_utils/analysis/measurements.py, its use by the
analysis, the variance gate and resume, and the report callback's repetition stamp. Records of the
concurrent iperf pairs are built with the module's own record builder over real iperf3 output."""

import copy

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import fio_records
from ansible_collections.benchlab.bench.plugins.module_utils.tools.iperf import iperf_records
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record, validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.gate import gate_status
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.measurements import measurements
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown, render_terminal
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import render_csv
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import resume_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runpath import stamp


def _pair_record(read_fixture, pair, rep, scale=1.0, cell='lan'):
    """One pair's record of a concurrent iperf step, from real iperf3 JSON, its throughput scaled so the
    pairs and repetitions differ."""
    (rec,) = iperf_records(read_fixture('iperf/' + IPERF3), labels={'cell': cell, 'benchmark': 'net', 'pair': pair,
                                                                    'pairs': 2})
    rec['metrics']['throughput']['value'] *= scale
    return dict(rec, host='h1', repetition=rep)


IPERF3 = 'iperf3-3.12-tcp.json'


@pytest.fixture
def pairs(read_fixture):
    """Two concurrent pairs x three repetitions: six records, three measurements."""
    return [_pair_record(read_fixture, pair, rep, scale=rep * (1.0 if pair == 1 else 0.5))
            for rep in (1, 2, 3) for pair in (1, 2)]


def test_iperf_fixture_is_there(read_fixture):
    assert read_fixture('iperf/' + IPERF3)


def test_concurrent_pairs_are_one_measurement_per_repetition(pairs):
    base = pairs[0]['metrics']['throughput']['value']
    out = measurements(pairs)
    assert len(out) == 3
    for rep, m in zip((1, 2, 3), out):
        assert m['repetition'] == rep
        # the step's aggregate: the sum of the pairs' throughputs
        assert m['metrics']['throughput']['value'] == pytest.approx(base * rep * 1.5)
        assert m['workers']['count'] == 2 and m['workers']['kind'] == 'concurrent pairs'
        assert [d['name'] for d in m['workers']['detail']] == ['pair 1', 'pair 2']
        assert m['workers']['detail'][1]['metrics']['throughput'] == pytest.approx(base * rep * 0.5)
        assert 'pair' not in m['labels'] and m['labels']['pairs'] == 2
        assert validate_record(dict((k, v) for k, v in m.items() if k not in ('host', 'hosts'))) == []


def test_the_report_counts_repetitions_not_pairs(pairs):
    base = pairs[0]['metrics']['throughput']['value']
    (bench,) = analyze(pairs)['benchmarks']
    (cell,) = bench['cells']
    assert cell['n'] == 3                                  # not 6
    s = cell['metrics']['throughput']
    assert s['n'] == 3
    assert s['values'] == pytest.approx([base * 1.5, base * 3.0, base * 4.5])
    assert s['mean'] == pytest.approx(base * 3.0)
    assert not [f for f in cell['flags'] if f['code'] == 'duplicate_runs']


def test_a_missing_pair_is_said(pairs):
    out = measurements(pairs[:1] + pairs[2:])
    assert out[0]['workers']['count'] == 1
    assert any('only 1 of the 2 concurrent pairs' in w for w in out[0]['warnings'])


def test_latency_like_metrics_take_the_worst_pair():
    recs = []
    for pair, (mbit, jitter, lost) in enumerate([(100.0, 0.5, 1.0), (80.0, 2.0, 0.2)], 1):
        r = new_record('iperf3', 'udp', {'throughput': metric(mbit, 'Mbit/s'), 'jitter': metric(jitter, 'ms', 'lower'),
                                         'lost_pct': metric(lost, '%', 'lower'), 'retransmits': metric(3, 'count', 'lower')},
                       labels={'cell': 'c', 'benchmark': 'u', 'pair': pair, 'pairs': 2})
        recs.append(dict(r, repetition=1))
    (m,) = measurements(recs)
    assert m['metrics']['throughput']['value'] == 180.0
    assert m['metrics']['jitter']['value'] == 2.0
    assert m['metrics']['lost_pct']['value'] == 1.0
    assert m['metrics']['retransmits']['value'] == 6.0


def test_a_duplicate_repetition_is_counted_once_and_flagged():
    recs = [dict(new_record('dd', 'write', {'throughput': metric(v, 'MB/s')}, labels={'cell': 'c', 'benchmark': 'd'}),
                 repetition=rep) for v, rep in ((100.0, 1), (110.0, 2), (130.0, 2))]
    (bench,) = analyze(recs)['benchmarks']
    (cell,) = bench['cells']
    assert cell['n'] == 2
    assert cell['metrics']['throughput']['values'] == [100.0, 120.0]
    (flag,) = [f for f in cell['flags'] if f['code'] == 'duplicate_runs']
    assert 'counted once' in flag['message']


def test_records_without_repetition_count_as_before():
    recs = [new_record('dd', 'write', {'throughput': metric(v, 'MB/s')}, labels={'cell': 'c', 'benchmark': 'd'})
            for v in (100.0, 110.0, 130.0)]
    (bench,) = analyze(recs)['benchmarks']
    assert bench['cells'][0]['n'] == 3


def test_fio_job_file_with_numjobs_two_repetitions_is_n_2(read_fixture):
    """tiobench-style: 4 groups x numjobs=4 in each of 2 repetitions: 4 tables, each n=2 (was 4 x n=8)."""
    text = read_fixture('fio/fio-3.33-tiobench-threads.json+normal')
    recs = []
    for rep in (1, 2):
        recs.extend(dict(r, repetition=rep) for r in fio_records(text, labels={'cell': 'c', 'benchmark': 'tio'}))
    out = analyze(recs)['benchmarks']
    assert [b['test'] for b in out] == ['seq-write', 'seq-read', 'rand-write', 'rand-read']
    for b in out:
        assert b['cells'][0]['n'] == 2
        d = 'write' if 'write' in b['test'] else 'read'
        one = [r for r in recs if r['test'] == b['test']][0]
        assert b['cells'][0]['metrics'][d + '_iops']['mean'] == pytest.approx(one['metrics'][d + '_iops']['value'])


def test_gate_counts_repetitions(pairs):
    status = gate_status(pairs, max_cv=0.01, max_repetitions=3)
    assert status['n'] == 3 and status['capped']


def test_resume_runs_exactly_the_missing_repetition():
    matrix = {'name': 'r', 'repetitions': 3, 'cells': [{'name': 'a', 'host': 'h1', 'path': '/var/tmp'}],
              'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]}
    plan = expand_plan(matrix, inventory_hosts=['h1'])
    recs = [dict(new_record('dd', 'write', {'throughput': metric(100.0, 'MB/s')},
                            labels={'cell': 'a', 'benchmark': 'dd-write'}, params={'guards': {}}),
                 host='h1', repetition=rep) for rep in (1, 3)]     # repetition 2 failed
    out = resume_plan(plan, copy.deepcopy(plan), recs, 'run-1')
    assert [r['repetition'] for r in out['runs']] == [2]
    assert out['resume']['done'] == [{'benchmark': 'dd-write', 'cell': 'a', 'runs': 2}]


def test_the_run_path_stamps_the_context_of_the_run_that_made_the_records():
    """Issue 29 §3: the path that ran a run puts its repetition, step, run id and cell key on every
    record it made (a concurrent pair's too), never the callback from what a host announced."""
    run = {'cell': 'a', 'benchmark': 'b', 'repetition': 2, 'step': 4, 'key': 'k1'}
    made = [new_record('iperf3', 'tcp', {'throughput': metric(v, 'Mbit/s')}, labels={'cell': 'a', 'benchmark': 'b', 'pair': p})
            for p, v in ((1, 10.0), (2, 20.0))]
    for rec in stamp(made, run, 'run-1'):
        assert (rec['repetition'], rec['step'], rec['cell_key'], rec['run_id']) == (2, 4, 'k1', 'run-1')
        assert validate_record(rec) == []
    (own,) = stamp([dict(made[0], repetition=5)], run, 'run-1')
    assert own['repetition'] == 5                        # a record's own value stays
    (gate,) = stamp([new_record('dd', 'write', {'throughput': metric(1.0, 'MB/s')})], dict(run, step=None, gate=True), 'r')
    assert 'step' not in gate and gate['repetition'] == 2   # a gate run has no step
    bad = dict(made[1], repetition=True)
    assert validate_record(bad)                          # the schema takes no boolean repetition


def test_results_document_and_report_say_workers_and_n(pairs, read_fixture):
    from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_json, results_problems
    from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown
    import json
    text = read_fixture('fio/fio-3.33-tiobench-threads.json+normal')
    recs = list(pairs)
    for rep in (1, 2):
        recs.extend(dict(r, repetition=rep, host='h1') for r in fio_records(text, labels={'cell': 'lan', 'benchmark': 'tio'}))
    analysis = analyze(recs)
    doc = dict(run_id='r1', started='2026-12-03T10:00:00Z', finished='2026-12-03T10:01:00Z', status='complete',
               records=recs, environment={}, plan=None, analysis=analysis, invalid=[], failed=[])
    assert results_problems(json.loads(results_json(doc))) == []
    cells = {b['name']: b['cells'][0] for b in analysis['benchmarks']}
    assert cells['net']['workers'] == {'count': 2, 'kind': 'concurrent pairs'} and cells['net']['n_records'] == 6
    assert cells['tio seq-write']['workers'] == {'count': 4, 'kind': 'fio numjobs'}
    report = render_markdown(analysis, {'run_id': 'r1'})
    assert 'lan: n=3, no variance gate; each run: 2 workers at once (concurrent pairs), one measurement' in report
    assert 'lan: n=2, no variance gate; each run: 4 workers at once (fio numjobs)' in report
    assert '- **records**: %d' % len(recs) in report


@pytest.mark.parametrize('name, count', [
    ('iperf3-3.12-tcp-P2.json', 2), ('iperf-2.1.8-tcp-P2.txt', 2), ('iperf-2.1.8-tcp-P2-csv.csv', 2)])
def test_iperf_parallel_streams_are_one_record_with_stream_detail(read_fixture, name, count):
    (rec,) = iperf_records(read_fixture('iperf/' + name))
    assert validate_record(rec) == []
    w = rec['workers']
    assert w['count'] == count and w['kind'] == 'iperf parallel streams'
    assert len(w['detail']) == count
    streams = sum(d['metrics']['throughput'] for d in w['detail'])
    # the record's figure is the tool's own sum over the streams (iperf3 end.sum_received, iperf2 [SUM])
    assert rec['metrics']['throughput']['value'] == pytest.approx(streams, rel=0.02)


def test_iperf3_udp_streams_detail_their_sending_rate(read_fixture):
    import json
    text = read_fixture('iperf/iperf3-3.12-udp-b5G-P2.json')
    (rec,) = iperf_records(text)
    detail = rec['workers']['detail']
    assert [sorted(d['metrics']) for d in detail] == [['jitter', 'lost_pct', 'sent_throughput']] * 2
    sent = json.loads(text)['end']['sum_sent']['bits_per_second'] / 1e6
    assert sum(d['metrics']['sent_throughput'] for d in detail) == pytest.approx(sent)
    assert rec['metrics']['throughput']['value'] < sent       # the record's figure is what arrived


def test_single_stream_has_no_workers(read_fixture):
    (rec,) = iperf_records(read_fixture('iperf/iperf3-3.12-tcp.json'))
    assert 'workers' not in rec


def test_dbench_clients_and_sysbench_threads_say_their_aggregate(read_fixture):
    from ansible_collections.benchlab.bench.plugins.module_utils.tools.dbench import dbench_record
    from ansible_collections.benchlab.bench.plugins.module_utils.tools.sysbench import sysbench_record
    rec = dbench_record(read_fixture('dbench/dbench-4.0-4clients.txt'))
    assert validate_record(rec) == []
    assert rec['workers'] == {'count': 4, 'kind': 'dbench clients',
                              'aggregate': "dbench's Throughput line: all clients together; max_latency the worst client's"}
    assert 'workers' not in dbench_record(read_fixture('dbench/dbench-4.0-1client.txt'))
    rec = sysbench_record(read_fixture('sysbench/sysbench-1.0.20-rndwr-2threads-4k-fsync10.txt'))
    assert validate_record(rec) == [] and rec['workers']['count'] == 2 and rec['workers']['kind'] == 'sysbench threads'
    assert 'workers' not in sysbench_record(read_fixture('sysbench/sysbench-1.0.20-rndrw.txt'))


def _timed(rec, started, duration_s):
    return dict(rec, started=started, duration_s=duration_s)


def test_pairs_that_ran_together_are_summed_and_say_so(read_fixture):
    """The agreed start (guards.start_at) makes the pairs start within milliseconds: summed."""
    one = _timed(_pair_record(read_fixture, 1, 1), '2026-12-04T02:51:35.004Z', 3.05)
    two = _timed(_pair_record(read_fixture, 2, 1, scale=0.5), '2026-12-04T02:51:35.011Z', 3.04)
    (m,) = measurements([one, two])
    assert m['metrics']['throughput']['value'] == pytest.approx(one['metrics']['throughput']['value'] * 1.5)
    assert m['workers']['together'] == {'together_s': 3.04, 'fraction': 0.997, 'spread_s': 0.007}
    assert 'not_together' not in m['flags']


def test_pairs_that_did_not_run_together_have_no_sum_and_are_flagged(read_fixture):
    """What the lab recorded before the agreed start: pairs of 2 s, started one after the other by
    Ansible 1.6 s apart. Their sum is no concurrent figure: no value, the flag and the reason; each
    pair's own figures stay as detail; the analysis counts the flagged run."""
    one = _timed(_pair_record(read_fixture, 1, 1), '2026-12-03T21:13:01.700Z', 2.04)
    two = _timed(_pair_record(read_fixture, 2, 1), '2026-12-03T21:13:00.100Z', 2.03)
    (m,) = measurements([one, two])
    assert m['metrics']['throughput']['value'] is None
    assert 'not_together' in m['flags']
    assert any('ran together for 0.4 s' in w and '1.6 s apart' in w for w in m['warnings']), m['warnings']
    assert m['workers']['detail'][0]['metrics']['throughput'] == one['metrics']['throughput']['value']
    res = analyze([one, two])
    (cell,) = res['benchmarks'][0]['cells']
    assert [f['code'] for f in cell['flags']] == ['not_together']
    assert dict((t['code'], (t['flagged'], t['runs'])) for t in res['traps'])['not_together'] == (1, 1)
    assert 'throughput' not in cell['metrics'] and cell['n'] == 1   # no value, and not "too fast"
    # every renderer takes a cell without the value, and says why
    meta = {'run_id': 'r1', 'name': 'm'}
    for text in (render_markdown(res, meta), render_html(res, meta), render_terminal(res, meta=meta)):
        assert 'not_together' in text or 'did not run together' in text
    assert render_csv([one, two])


def test_second_precision_starts_get_the_benefit_of_the_doubt(read_fixture):
    """Records from before millisecond times: one second apart may have been 0.001 s apart."""
    one = _timed(_pair_record(read_fixture, 1, 1), '2026-12-03T21:13:02Z', 2.04)
    two = _timed(_pair_record(read_fixture, 2, 1), '2026-12-03T21:13:01Z', 2.03)
    (m,) = measurements([one, two])
    assert m['metrics']['throughput']['value'] is not None and 'not_together' not in m['flags']
    far = _timed(_pair_record(read_fixture, 2, 1), '2026-12-03T21:12:59Z', 2.03)
    (m,) = measurements([one, far])
    assert m['metrics']['throughput']['value'] is None and 'not_together' in m['flags']


def test_records_without_times_are_summed_as_before(pairs):
    assert all('together' not in m['workers'] for m in measurements([dict(r, started=None) for r in pairs]))


def test_together_is_pure_arithmetic():
    from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.measurements import together
    recs = [{'started': '2026-01-01T00:00:00.000Z', 'duration_s': 10.0},
            {'started': '2026-01-01T00:00:05.000Z', 'duration_s': 10.0}]
    assert together(recs) == {'together_s': 5.0, 'fraction': 0.5, 'spread_s': 5.0}
    recs[1]['started'] = '2026-01-01T00:00:11.000Z'
    assert together(recs) == {'together_s': 0.0, 'fraction': 0.0, 'spread_s': 11.0}
    # a host 5 s ahead of the controller (its reading, params.guards.clock_offset_s): it started with the other
    recs[1].update(started='2026-01-01T00:00:05.000Z', params={'guards': {'clock_offset_s': 5.0}})
    assert together(recs) == {'together_s': 10.0, 'fraction': 1.0, 'spread_s': 0.0}
    recs[1]['params']['guards']['clock_offset_s'] = True     # no number: not used
    assert together(recs)['spread_s'] == 5.0
    assert together([{'started': 'yesterday', 'duration_s': 1}]) is None
    assert together([{'started': '2026-01-01T00:00:00Z', 'duration_s': True}]) is None
