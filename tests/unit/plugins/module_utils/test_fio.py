# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/fio.py against real fio 3.33 JSON output (tests/unit/fixtures/fio)."""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import (
    FioParseError, fio_records, fio_version, job_metrics, parse_fio)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

OK_FIXTURES = ['fio-3.33-seqread-direct.json', 'fio-3.33-randwrite-libaio.json', 'fio-3.33-randrw.json',
               'fio-3.33-jobfile-two-jobs.json']
SUFFIXES = ('iops', 'throughput', 'lat_mean', 'lat_p99')


def _expected_metrics(job):
    """The metrics a fio 3.x job should give, computed straight from its JSON."""
    out = {}
    for d in ('read', 'write'):
        part = job[d]
        if part['io_bytes'] <= 0:
            continue
        out[d + '_iops'] = {'value': part['iops'], 'unit': 'ops/s', 'better': 'higher'}
        out[d + '_throughput'] = {'value': part['bw_bytes'] / 1e6, 'unit': 'MB/s', 'better': 'higher'}
        out[d + '_lat_mean'] = {'value': part['lat_ns']['mean'] / 1e6, 'unit': 'ms', 'better': 'lower'}
        out[d + '_lat_p99'] = {'value': part['clat_ns']['percentile']['99.000000'] / 1e6, 'unit': 'ms',
                               'better': 'lower'}
    return out


def _assert_metrics(actual, expected):
    assert set(actual) == set(expected)
    for name, exp in expected.items():
        assert actual[name]['unit'] == exp['unit'], name
        assert actual[name]['better'] == exp['better'], name
        assert actual[name]['value'] == pytest.approx(exp['value'], rel=1e-12), name


@pytest.mark.parametrize('name', OK_FIXTURES)
def test_records_match_the_json(read_fixture, name):
    text = read_fixture('fio/' + name)
    doc = json.loads(text)
    records = fio_records(text)
    assert len(records) == len(doc['jobs'])
    for rec, job in zip(records, doc['jobs']):
        assert validate_record(rec) == []
        assert rec['tool'] == 'fio'
        assert rec['tool_version'] == '3.33'
        assert rec['test'] == job['jobname']
        # the job's options with the [global] ones it inherits, as fio runs it
        assert rec['params'] == dict(doc.get('global options') or {}, **job['job options'])
        _assert_metrics(rec['metrics'], _expected_metrics(job))


def test_seqread_values(read_fixture):
    (rec,) = fio_records(read_fixture('fio/fio-3.33-seqread-direct.json'))
    m = rec['metrics']
    assert set(m) == {'read_iops', 'read_throughput', 'read_lat_mean', 'read_lat_p99'}
    assert m['read_iops']['value'] == pytest.approx(1802.816901)
    assert m['read_throughput']['value'] == pytest.approx(1890.390535)
    assert m['read_lat_mean']['value'] == pytest.approx(0.544894765625)
    assert m['read_lat_p99']['value'] == pytest.approx(0.618496)
    assert rec['params']['ioengine'] == 'psync'
    assert rec['warnings'] == []
    assert rec['raw_tail'] == ''


def test_read_only_job_has_no_write_metrics(read_fixture):
    for name in ('fio-3.33-seqread-direct.json', 'fio-3.33-jobfile-two-jobs.json'):
        for rec in fio_records(read_fixture('fio/' + name)):
            assert not any(k.startswith('write_') for k in rec['metrics'])
            assert all('read_' + s in rec['metrics'] for s in SUFFIXES)


def test_write_only_job_has_no_read_metrics(read_fixture):
    (rec,) = fio_records(read_fixture('fio/fio-3.33-randwrite-libaio.json'))
    assert sorted(rec['metrics']) == sorted('write_' + s for s in SUFFIXES)
    assert rec['metrics']['write_iops']['value'] == pytest.approx(62589.834898)
    assert rec['metrics']['write_throughput']['value'] == pytest.approx(256.367963)


def test_randrw_has_both_directions(read_fixture):
    (rec,) = fio_records(read_fixture('fio/fio-3.33-randrw.json'))
    assert sorted(rec['metrics']) == sorted(d + '_' + s for d in ('read', 'write') for s in SUFFIXES)
    assert rec['metrics']['read_iops']['value'] == pytest.approx(16945.027486)
    assert rec['metrics']['write_iops']['value'] == pytest.approx(7257.371314)
    # rwmixread=70: reads are about 70 % of the I/O
    r, w = rec['metrics']['read_iops']['value'], rec['metrics']['write_iops']['value']
    assert 0.65 < r / (r + w) < 0.75


def test_two_job_job_file_gives_two_records(read_fixture):
    records = fio_records(read_fixture('fio/fio-3.33-jobfile-two-jobs.json'), labels={'cell': 'a'})
    assert [r['test'] for r in records] == ['seq-read', 'rand-read']
    inherited = {'directory': '/var/tmp/fiot', 'size': '32M', 'direct': '1', 'runtime': '2'}   # [global]
    assert [r['params'] for r in records] == [dict(inherited, rw='read', bs='1M'), dict(inherited, rw='randread', bs='4k')]
    assert all('workers' not in r for r in records)     # one worker each
    assert all(r['labels'] == {'cell': 'a'} for r in records)
    assert records[0]['metrics']['read_throughput']['value'] == pytest.approx(3093.849427)
    assert records[1]['metrics']['read_iops']['value'] == pytest.approx(26676.161919)
    # the records do not share mutable parts
    records[0]['labels']['x'] = 1
    assert 'x' not in records[1]['labels']


def test_explicit_params_win_over_job_options(read_fixture):
    (rec,) = fio_records(read_fixture('fio/fio-3.33-seqread-direct.json'), params={'rw': 'read'})
    assert rec['params'] == {'rw': 'read'}


def test_enospc_error_line_before_json(read_fixture):
    text = read_fixture('fio/fio-3.33-error-enospc-dev-full.json')
    assert text.startswith('fio: pid=')
    doc, messages = parse_fio(text)
    assert doc['jobs'][0]['error'] == 28
    assert messages == [text.splitlines()[0].strip()]
    assert 'No space left on device' in messages[0]
    with pytest.raises(FioParseError) as exc:
        fio_records(text)
    msg = str(exc.value)
    assert 'fio job full failed with error 28' in msg
    assert 'No space left on device' in msg


def test_not_a_directory_job_error(read_fixture):
    text = read_fixture('fio/fio-3.33-error-not-a-directory.json')
    doc, messages = parse_fio(text)
    assert messages == []
    assert doc['jobs'][0]['error'] == 20
    with pytest.raises(FioParseError, match='fio job nodir failed with error 20'):
        fio_records(text)


def test_bad_engine_no_json_at_all(read_fixture):
    text = read_fixture('fio/fio-3.33-error-bad-engine.json')
    assert '{' not in text
    with pytest.raises(FioParseError) as exc:
        parse_fio(text)
    assert 'no JSON document' in str(exc.value)
    assert 'nosuchengine' in str(exc.value)
    with pytest.raises(FioParseError):
        fio_records(text)


@pytest.mark.parametrize('text', ['', '\n\n'])
def test_empty_output(text):
    with pytest.raises(FioParseError, match=r'\(empty output\)'):
        parse_fio(text)


def test_messages_after_the_json_are_kept(read_fixture):
    text = read_fixture('fio/fio-3.33-seqread-direct.json') + 'fio: something after\n'
    doc, messages = parse_fio(text)
    assert doc['fio version'] == 'fio-3.33'
    assert messages == ['fio: something after']
    (rec,) = fio_records(text, warnings=['mine'])
    assert rec['warnings'] == ['mine', 'fio: something after']
    assert rec['raw_tail'] == 'fio: something after'
    assert validate_record(rec) == []


@pytest.mark.parametrize('fraction', [0.0, 0.01, 0.25, 0.5, 0.9, 0.999])
def test_truncated_json_is_a_fio_parse_error(read_fixture, fraction):
    text = read_fixture('fio/fio-3.33-seqread-direct.json').rstrip()
    cut = text[:max(1, int(len(text) * fraction))]
    assert cut.startswith('{') and cut != text
    with pytest.raises(FioParseError):
        fio_records(cut)


@pytest.mark.parametrize('text,match', [
    ('{not json}', 'not valid JSON'),
    ('{"jobs": 5}', "no 'jobs' list"),
    ('{"fio version": "fio-3.33"}', "no 'jobs' list"),
    ('[1, 2]', 'no JSON document'),
    ('null', 'no JSON document'),
    ('{"jobs": []}', 'lists no jobs'),
    ('{"jobs": [{"jobname": "j", "read": {"io_bytes": 1, "bw_bytes": 1, "iops": "many"}}]}', 'not a number'),
    ('{"jobs": [{"jobname": "j", "read": {"io_bytes": 1, "bw_bytes": 1}}]}', 'iops is missing'),
    ('{"jobs": [{"jobname": "j", "read": {"io_bytes": true, "iops": 1}}]}', 'not a number'),
])
def test_garbage_json_is_a_fio_parse_error(text, match):
    with pytest.raises(FioParseError, match=match):
        fio_records(text)


@pytest.mark.parametrize('value', [None, b'{}', 3])
def test_non_text_is_a_fio_parse_error(value):
    with pytest.raises(FioParseError, match='must be text'):
        parse_fio(value)


def test_job_that_moved_no_data(read_fixture):
    doc = json.loads(read_fixture('fio/fio-3.33-error-not-a-directory.json'))
    doc['jobs'][0]['error'] = 0
    with pytest.raises(FioParseError, match='fio job nodir moved no data'):
        fio_records(json.dumps(doc))


def test_missing_percentiles_leave_p99_out(read_fixture):
    doc = json.loads(read_fixture('fio/fio-3.33-seqread-direct.json'))
    job = copy.deepcopy(doc['jobs'][0])
    del job['read']['clat_ns']['percentile']
    m = job_metrics(job)
    assert 'read_lat_p99' not in m
    assert m['read_lat_mean']['value'] == pytest.approx(0.544894765625)


def test_fio2_style_job_units():
    """fio 2.x: io_kbytes, bw in KiB/s, latencies in microseconds."""
    job = {'jobname': 'old', 'read': {'io_kbytes': 1024, 'bw': 2048, 'iops': 512.0,
                                      'lat': {'mean': 250.0},
                                      'clat': {'percentile': {'95.000000': 800, '99.000000': 1000}}}}
    m = job_metrics(job)
    assert m['read_throughput']['value'] == pytest.approx(2048 * 1024 / 1e6)
    assert m['read_lat_mean']['value'] == pytest.approx(0.25)
    assert m['read_lat_p99']['value'] == pytest.approx(1.0)
    assert m['read_iops']['value'] == 512.0


@pytest.mark.parametrize('doc,expected', [
    ({'fio version': 'fio-3.33'}, '3.33'),
    ({'fio version': 'fio-2.2.10'}, '2.2.10'),
    ({'fio version': '3.1'}, '3.1'),
    ({'fio version': 3.33}, None),
    ({}, None),
])
def test_fio_version(doc, expected):
    assert fio_version(doc) == expected


def test_fio_parse_error_is_a_value_error():
    assert issubclass(FioParseError, ValueError)


def test_job_that_is_not_an_object_is_a_fio_parse_error():
    with pytest.raises(FioParseError):
        fio_records('{"jobs": [null]}')


def test_lat_that_is_not_an_object_leaves_the_latency_out():
    """A null latency block is no crash: throughput and IOPS stand, the latency metrics are absent."""
    (rec,) = fio_records('{"jobs": [{"jobname": "j", "read": {"io_bytes": 1, "bw_bytes": 1, "iops": 1, "lat_ns": null}}]}')
    assert set(rec['metrics']) == {'read_iops', 'read_throughput'}
