# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/run/record.py: building records and validating them against record-v1.json."""

from __future__ import annotations

import copy
import re

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run import record
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record, validate_record


@pytest.fixture
def good():
    return new_record('dd', 'write', {'throughput': metric(350.2, 'MB/s'), 'elapsed': metric(0.77, 's', 'lower')},
                      tool_version='9.1', labels={'cell': 'a', 'n': 1, 'ok': True, 'x': None},
                      params={'bs': '1M', 'nested': {'a': [1]}}, warnings=['w'], raw_tail='tail',
                      cmd=['dd', 1], started='2026-12-02T10:00:00Z', duration_s=1.23456789)


def test_good_record_validates(good):
    assert validate_record(good) == []
    assert good['schema'] == record.SCHEMA_VERSION == 1
    assert good['cmd'] == ['dd', '1']
    assert good['duration_s'] == 1.234568


def test_minimal_record():
    rec = new_record('fio', 'job', {'read_iops': metric(1, 'ops/s')})
    assert validate_record(rec) == []
    assert set(rec) == {'schema', 'tool', 'tool_version', 'test', 'labels', 'params', 'metrics', 'warnings', 'flags'}
    assert rec['flags'] == []


def test_record_flags_are_codes_from_the_module_and_from_params():
    rec = new_record('dd', 'write', {'x': metric(1, 'count')}, flags=['source_on_test_storage', 'below_2x_ram'],
                     params={'test': 'write', 'data': 'zero', 'guards': {'quiet': False}})
    assert rec['flags'] == ['below_2x_ram', 'not_quiet', 'source_on_test_storage', 'zero_data']
    assert validate_record(rec) == []
    assert new_record('dd', 'read', {'x': metric(1, 'count')}, params={'test': 'read', 'data': 'zero'})['flags'] == []
    bad = dict(rec, flags=['Not a code'])
    assert validate_record(bad) == ["flags[0]: 'Not a code' does not match '^[a-z][a-z0-9_]*$'"]


def test_new_record_copies_its_inputs():
    labels, metrics = {'cell': 'a'}, {'x': metric(1, 'count')}
    rec = new_record('dd', 'write', metrics, labels=labels)
    labels['cell'] = 'b'
    metrics['y'] = metric(2, 'count')
    assert rec['labels'] == {'cell': 'a'}
    assert set(rec['metrics']) == {'x'}


def test_metric_shapes():
    assert metric(3, 'MB/s') == {'value': 3.0, 'unit': 'MB/s', 'better': 'higher'}
    assert isinstance(metric(3, 'MB/s')['value'], float)
    assert metric(None, 'MB/s') == {'value': None, 'unit': 'MB/s', 'better': 'higher', 'too_fast': True}
    assert metric(0, 's', 'lower') == {'value': 0.0, 'unit': 's', 'better': 'lower'}


def test_too_fast_metric_validates(good):
    good['metrics']['seq_output_char'] = metric(None, 'MB/s')
    assert validate_record(good) == []


def test_utc_now_matches_the_schema():
    assert re.match(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$', record.utc_now())
    rec = new_record('dd', 'write', {'bytes': metric(1, 'bytes')}, started=record.utc_now())
    assert validate_record(rec) == []


def _mutate(rec, path, value):
    target = rec
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return rec


@pytest.mark.parametrize('path,value,where', [
    (('metrics', 'throughput', 'unit'), 'MiB/s', 'metrics.throughput.unit:'),
    (('metrics', 'throughput', 'unit'), 'GB/s', 'metrics.throughput.unit:'),
    (('metrics', 'throughput', 'better'), 'more', 'metrics.throughput.better:'),
    (('metrics', 'throughput', 'value'), '350', 'metrics.throughput.value:'),
    (('metrics', 'throughput', 'extra'), 1, 'metrics.throughput:'),
    (('metrics', 'throughput', 'unit'), KeyError, 'metrics.throughput:'),
    (('schema',), 2, 'schema:'),
    (('schema',), '1', 'schema:'),
    (('tool',), 'iozone', 'tool:'),
    (('test',), '', 'test:'),
    (('tool_version',), 9.1, 'tool_version:'),
    (('labels', 'deep'), {'a': 1}, 'labels.deep:'),
    (('cmd', 1), 1, 'cmd[1]:'),
    (('started',), '2026-12-02 10:00:00', 'started:'),
    (('duration_s',), -1, 'duration_s:'),
    (('warnings', 0), 3, 'warnings[0]:'),
    (('raw_tail',), ['x'], 'raw_tail:'),
    (('metrics',), {}, 'metrics:'),
])
def test_validate_record_names_the_field(good, path, value, where):
    errors = validate_record(_mutate(copy.deepcopy(good), path, value))
    assert errors, 'accepted a bad %s' % '.'.join(map(str, path))
    assert any(e.startswith(where) for e in errors), errors


@pytest.mark.parametrize('missing', ['tool', 'schema', 'test', 'metrics'])
def test_validate_record_missing_required(good, missing):
    del good[missing]
    errors = validate_record(good)
    assert len(errors) == 1
    assert errors[0].startswith('(record):')
    assert "'%s' is a required property" % missing in errors[0]


def test_validate_record_unknown_top_level_key(good):
    good['host'] = 'h1'
    errors = validate_record(good)
    assert errors and errors[0].startswith('(record):') and "'host'" in errors[0]


def test_the_stamps_of_the_callback_validate(good):
    """The report callback stamps the plan's repetition and schedule step on each record it stores
    (results.jsonl): a stamped record is valid, a negative or non-integer stamp names its field."""
    good.update(repetition=2, step=0)
    assert validate_record(good) == []
    for key, bad in (('step', -1), ('step', 'x'), ('repetition', 1.5)):
        wrong = dict(good, **{key: bad})
        errors = validate_record(wrong)
        assert errors and key in errors[0], (key, errors)


def test_validate_record_bad_metric_name(good):
    good['metrics']['Throughput'] = metric(1, 'MB/s')
    errors = validate_record(good)
    assert errors and errors[0].startswith('metrics:') and 'Throughput' in errors[0]


def test_null_value_needs_too_fast(good):
    good['metrics']['throughput'] = {'value': None, 'unit': 'MB/s', 'better': 'higher'}
    errors = validate_record(good)
    assert errors and all(e.startswith('metrics.throughput') for e in errors)
    good['metrics']['throughput']['too_fast'] = False
    assert validate_record(good)


def test_several_errors_are_all_reported(good):
    good['schema'] = 2
    good['metrics']['throughput']['unit'] = 'MiB/s'
    errors = validate_record(good)
    assert len(errors) == 2
    assert [e.split(':')[0] for e in errors] == ['metrics.throughput.unit', 'schema']


def test_schema_file_is_loaded():
    schema = record.load_schema()
    assert schema['properties']['schema'] == {'const': 1}
    assert 'MB/s' in schema['$defs']['metric']['properties']['unit']['enum']


def test_numbers_within_their_units_physical_range_pass_and_beyond_it_are_named():
    from ansible_collections.benchlab.bench.plugins.module_utils.run.record import UNIT_RANGES, plausibility_problems
    fast = new_record('dd', 'write', {'throughput': metric(30000.0, 'MB/s'), 'bytes': metric(3e10, 'bytes'),
                                      'elapsed': metric(1.0, 's', 'lower'), 'lost_pct': metric(0.0, '%', 'lower'),
                                      'p99': metric(None, 'ms', 'lower')})
    assert plausibility_problems(dict(fast, duration_s=1.2)) == []   # tmpfs at 30 GB/s, a too-fast metric
    for unit, top in UNIT_RANGES.items():
        rec = new_record('dd', 'write', {'m': metric(top, unit)})
        assert plausibility_problems(rec) == []
        rec['metrics']['m']['value'] = top * 1.01
        assert plausibility_problems(rec) == ['metrics.m.value: %.6g %s is beyond what any machine measures (at most '
                                              '%.6g %s): a damaged or forged record' % (top * 1.01, unit, top, unit)]
        rec['metrics']['m']['value'] = -1e-9
        assert plausibility_problems(rec)[0].startswith('metrics.m.value: -1e-09 %s is negative' % unit)
    torn = dict(fast, duration_s=1e8)
    torn['metrics']['bytes']['value'] = 2e10   # 20,000 MB/s by bytes / elapsed, 30,000 claimed
    assert plausibility_problems(torn) == [
        'duration_s: 1e+08 s is beyond what any run lasts (at most 1e+07 s)',
        'metrics.throughput.value: 30000 MB/s, but bytes / elapsed is 20000 MB/s (2e+10 bytes in 1 s): the record '
        'contradicts itself']


def test_a_record_label_value_has_a_length_limit():
    rec = new_record('dd', 'write', {'throughput': metric(1.0, 'MB/s')}, labels={'cell': 'a', 'note': 'y' * 257})
    assert any(p.startswith("labels.note: 'yyy") and 'is too long' in p for p in validate_record(rec))
    rec['labels']['note'] = 'y' * 256
    assert validate_record(rec) == []
