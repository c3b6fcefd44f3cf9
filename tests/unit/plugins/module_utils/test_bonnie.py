# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/bonnie.py and the parse_bonnie filter against real bonnie++ output
(tests/unit/fixtures/bonnie, see its README)."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.bonnie import (
    FILE_TESTS, IO_TESTS, TESTS, BonnieParseError, bonnie_records, parse_bonnie)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

from ansible_collections.benchlab.bench.tests.unit.helpers import FIXTURES

DIR = 'bonnie/'


def _has_result(name):
    if name.endswith(('.txt', '.csv')):
        return True
    return name.endswith('.stderr') and 'error' not in name and '%CP' in (FIXTURES / 'bonnie' / name).read_text()


RESULT_FIXTURES = sorted(f for f in os.listdir(str(FIXTURES / 'bonnie')) if _has_result(f))
ERROR_FIXTURES = sorted(f for f in os.listdir(str(FIXTURES / 'bonnie')) if 'error' in f)
KIB_TO_MB = 1024 / 1e6


def csv_rows(text):
    """The CSV data rows of a fixture, split by the test itself (not by the parser)."""
    return [ln.split(',') for ln in text.splitlines() if ln.count(',') > 20 and not ln.startswith('format_version')]


def csv_value(field):
    return None if field.startswith('+') else float(field)


def latency_ms(field):
    m = re.match(r'^([0-9.]+)(us|ms|s)$', field)
    return float(m.group(1)) * {'us': 1e-3, 'ms': 1.0, 's': 1e3}[m.group(2)]


def expected_from_csv(row):
    """Metric values from one CSV row, by the layout of bonnie++'s format version."""
    base = 9 if row[0] >= '1.98' else 7
    out = {}
    for i, test in enumerate(IO_TESTS):
        out[test] = row[base + 2 * i]
        out[test + '_cpu'] = row[base + 2 * i + 1]
    for i, test in enumerate(FILE_TESTS):
        out[test] = row[base + 17 + 2 * i]
        out[test + '_cpu'] = row[base + 17 + 2 * i + 1]
    for i, test in enumerate(TESTS):
        out[test + '_latency'] = row[base + 29 + i]
    values = {}
    for name, field in out.items():
        if field == '':
            continue
        if name.endswith('_latency'):
            values[name] = latency_ms(field)
        elif name in IO_TESTS[:5]:
            values[name] = None if field.startswith('+') else float(field) * KIB_TO_MB
        else:
            values[name] = csv_value(field)
    return values


@pytest.mark.parametrize('name', RESULT_FIXTURES)
def test_every_record_is_schema_valid(read_fixture, name):
    records = bonnie_records(read_fixture(DIR + name))
    assert isinstance(records, list) and records
    for rec in records:
        assert validate_record(rec) == []
        assert rec['tool'] == 'bonnie++'
        for key, m in rec['metrics'].items():
            assert (m['value'] is None) == bool(m.get('too_fast')), key


CSV_FIXTURES = ['2.00a-s512M-n1.txt', '2.00a-s512M-n0.txt', '2.00a-fast-s512M-n1.txt', '2.00a-b-fast-s256M-n0.txt',
                '2.00a-x2-s256M-n0.txt', '2.00a-q-s512M-n1.txt', '2.00a-q-x2-fast-s256M-n1.txt', '2.00a-q-x1-s0-n1.txt',
                '2.00a-files-max-min-dirs-q.txt', '2.00a-m-dotted-s256M-n0.txt', 'public-1.97-bossjones-nfs-worker1.txt',
                'public-1.96-jamesdon-splunk-fast-50files.txt', 'public-1.96-perfkit-sample.csv']


@pytest.mark.parametrize('name', CSV_FIXTURES)
def test_csv_fields_by_position(read_fixture, name):
    text = read_fixture(DIR + name)
    rows = csv_rows(text)
    records = bonnie_records(text)
    assert len(records) == len(rows)
    for row, rec in zip(rows, records):
        expected = expected_from_csv(row)
        got = dict((k, m['value']) for k, m in rec['metrics'].items())
        assert set(got) == set(expected)
        for key, value in expected.items():
            assert got[key] == (None if value is None else pytest.approx(value)), key
        assert rec['tool_version'] == row[1]
        assert rec['params']['machine'] == row[2]


def test_200a_header_is_shorter_than_its_rows(read_fixture):
    text = read_fixture(DIR + '2.00a-x2-s256M-n0.txt')
    header = text.splitlines()[0].split(',')
    rows = csv_rows(text)
    assert len(header) == 48 and all(len(r) == 50 for r in rows)
    # mapping by the header's names would read put_block from index 9, which holds putc (824 K/sec)
    assert header[9] == 'put_block' and rows[0][9] == '824' and rows[0][11] == '290991'
    rec = bonnie_records(text)[0]
    assert rec['metrics']['seq_output_char']['value'] == pytest.approx(824 * KIB_TO_MB)
    assert rec['metrics']['seq_output_block']['value'] == pytest.approx(290991 * KIB_TO_MB)
    assert rec['metrics']['seq_output_char_cpu']['value'] == 97


def test_runs_give_one_record_each(read_fixture):
    records = bonnie_records(read_fixture(DIR + '2.00a-q-x2-fast-s256M-n1.txt'))
    assert [r['params']['run'] for r in records] == [1, 2]
    assert records[0]['metrics']['seq_create']['value'] is None
    assert records[1]['metrics']['seq_create']['value'] == 1704
    assert 'seq_output_char' not in records[0]['metrics']  # -f


def test_kib_are_1024_bytes(read_fixture):
    rec = bonnie_records(read_fixture(DIR + 'reference-003-bonnie-1.03-drbd.txt'))[0]
    assert rec['metrics']['seq_output_char'] == {'value': pytest.approx(28657 * 1024 / 1e6), 'unit': 'MB/s', 'better': 'higher'}
    assert rec['metrics']['random_seeks'] == {'value': 100.6, 'unit': 'seeks/s', 'better': 'higher'}
    assert rec['metrics']['seq_create']['unit'] == 'files/s'
    assert rec['metrics']['seq_create_cpu'] == {'value': 38.0, 'unit': '%', 'better': 'lower'}


def test_reference_post_has_six_results(read_fixture):
    text = read_fixture(DIR + 'reference-003-bonnie-1.03-drbd.txt')
    io_rows = [ln.split() for ln in text.splitlines() if re.match(r'^node[12]\s+3G\s', ln)]
    file_rows = [ln.split() for ln in text.splitlines() if re.match(r'^\s+16\s', ln)]
    assert len(io_rows) == len(file_rows) == 6
    records = bonnie_records(text)
    assert len(records) == 6
    for rec, io, files in zip(records, io_rows, file_rows):
        assert rec['tool_version'] == '1.03' and rec['test'] == 'all'
        assert rec['params']['machine'] == io[0] and rec['params']['file_size'] == '3G' and rec['params']['files'] == '16'
        for i, test in enumerate(IO_TESTS):
            factor = KIB_TO_MB if i < 5 else 1
            assert rec['metrics'][test]['value'] == pytest.approx(float(io[2 + 2 * i]) * factor)
            assert rec['metrics'][test + '_cpu']['value'] == float(io[3 + 2 * i])
        for i, test in enumerate(FILE_TESTS):
            assert rec['metrics'][test]['value'] == csv_value(files[1 + 2 * i])
        assert not any(k.endswith('_latency') for k in rec['metrics'])  # 1.03 prints none
        assert rec['metrics']['seq_read'] == {'value': None, 'unit': 'files/s', 'better': 'higher', 'too_fast': True}
        assert rec['metrics']['seq_read_cpu']['too_fast'] is True
        assert any('+++++' in w and 'seq_read, random_read' in w and '-n' in w for w in rec['warnings'])
    assert [r['params']['machine'] for r in records] == ['node1'] * 3 + ['node2'] * 3
    # the post's point: DRBD 0.7.10 halves node1's block writes (44144 -> 23434 K/sec)
    assert records[1]['metrics']['seq_output_block']['value'] < 0.6 * records[0]['metrics']['seq_output_block']['value']


def _strip_csv(text):
    return '\n'.join(ln for ln in text.splitlines() if ln.count(',') < 20)


@pytest.mark.parametrize('name', ['public-1.97-bossjones-nfs-worker1.txt', 'public-1.96-jamesdon-splunk-fast-50files.txt'])
def test_196_197_table_agrees_with_its_csv(read_fixture, name):
    """The text table alone (Concurrency line, Latency rows, blank fast-mode cells placed by column)
    gives the same metrics as the CSV line bonnie++ printed with it."""
    text = read_fixture(DIR + name)
    from_csv = bonnie_records('\n'.join(ln for ln in text.splitlines() if ln.count(',') > 20))[0]
    from_table = bonnie_records(_strip_csv(text))[0]
    assert from_table['metrics'] == from_csv['metrics']
    assert from_table['params']['concurrency'] == 1
    assert from_table['tool_version'] == from_csv['tool_version']


def test_197_latency_units(read_fixture):
    rec = bonnie_records(_strip_csv(read_fixture(DIR + 'public-1.97-bossjones-nfs-worker1.txt')))[0]
    assert rec['metrics']['seq_output_char_latency'] == {'value': pytest.approx(21.103), 'unit': 'ms', 'better': 'lower'}
    assert rec['metrics']['seq_output_block_latency']['value'] == 801.0
    assert rec['metrics']['seq_input_block']['value'] == pytest.approx(271440 * KIB_TO_MB)


def test_196_fast_mode_latencies_land_in_their_columns(read_fixture):
    rec = bonnie_records(_strip_csv(read_fixture(DIR + 'public-1.96-jamesdon-splunk-fast-50files.txt')))[0]
    m = rec['metrics']
    assert 'seq_output_char' not in m and 'seq_input_char' not in m and 'seq_output_char_latency' not in m
    assert m['seq_output_block_latency']['value'] == 12226.0
    assert m['seq_rewrite_latency']['value'] == 61883.0
    assert m['seq_input_block_latency']['value'] == 349.0
    assert m['random_seeks_latency']['value'] == 3643.0
    assert rec['params']['files'] == '50'


def test_200_table_suffixes_agree_with_csv(read_fixture):
    """2.00's table prints 358m / 870k (MiB/s, KiB/s): within one printed unit of the CSV's KiB/s."""
    csv = bonnie_records(read_fixture(DIR + '2.00a-q-s512M-n1.txt'))[0]['metrics']
    table = bonnie_records(read_fixture(DIR + '2.00a-q-s512M-n1.stderr'))[0]['metrics']
    stderr = read_fixture(DIR + '2.00a-q-s512M-n1.stderr')
    assert ' 234m ' in stderr and ' 931k ' in stderr
    assert table['seq_output_block']['value'] == pytest.approx(234 * 1024 * 1024 / 1e6)
    assert abs(table['seq_output_block']['value'] - csv['seq_output_block']['value']) < 1024 * 1024 / 1e6
    assert table['seq_output_char']['value'] == pytest.approx(csv['seq_output_char']['value'])
    assert table['random_seeks']['value'] == csv['random_seeks']['value'] == 13427


def test_200_table_file_count_misprint_is_left_out(read_fixture):
    stdout = read_fixture(DIR + '2.00a-q-s512M-n1.txt')
    stderr = read_fixture(DIR + '2.00a-q-s512M-n1.stderr')
    assert ',1283,43,' in stdout and '  1024  43 ' in stderr
    table = bonnie_records(stderr)[0]
    assert 'seq_create' not in table['metrics'] and table['metrics']['seq_create_cpu']['value'] == 43
    assert any('number of files (1024)' in w and 'seq_create' in w for w in table['warnings'])
    both = bonnie_records(stdout + stderr)
    assert len(both) == 1 and both[0]['metrics']['seq_create']['value'] == 1283
    assert not any('number of files' in w for w in both[0]['warnings'])


def test_files_only_and_io_only(read_fixture):
    files = bonnie_records(read_fixture(DIR + '2.00a-q-x1-s0-n1.txt'))[0]
    assert files['test'] == 'files'
    assert not any(k.startswith(IO_TESTS) for k in files['metrics'])
    io = bonnie_records(read_fixture(DIR + '2.00a-s512M-n0.txt'))[0]
    assert io['test'] == 'io' and not any(k.startswith(FILE_TESTS) for k in io['metrics'])
    assert io['metrics']['random_seeks_latency']['value'] == 111.0
    table = bonnie_records(read_fixture(DIR + '2.00a-files-max-min-dirs-q.stderr'))[0]
    assert table['test'] == 'files' and table['params']['files'] == '2:4096:1024/4' and table['params']['machine'] == 'vm'


def test_dotted_machine_name_whole_from_csv(read_fixture):
    text = read_fixture(DIR + '2.00a-m-dotted-s256M-n0.txt')
    assert 'node1.example. 256M' in text
    rec = bonnie_records(text)[0]
    assert rec['params']['machine'] == 'node1.example.com'
    table = bonnie_records(_strip_csv(text))[0]
    assert table['params']['machine'] == 'node1.example.'
    assert table['metrics']['seq_output_block']['value'] == pytest.approx(288 * 1024 * 1024 / 1e6)


def test_too_fast_warning_names_the_option(read_fixture):
    rec = bonnie_records(read_fixture(DIR + '2.00a-b-fast-s256M-n0.txt'))[0]
    assert rec['metrics']['random_seeks'] == {'value': None, 'unit': 'seeks/s', 'better': 'higher', 'too_fast': True}
    warning = [w for w in rec['warnings'] if '+++++' in w]
    assert len(warning) == 1 and 'seq_input_block, random_seeks' in warning[0] and '-s' in warning[0]
    assert '-n' not in warning[0]


def test_params_and_labels_are_kept(read_fixture):
    rec = bonnie_records(read_fixture(DIR + '2.00a-s512M-n1.txt'), labels={'platform': 'host'},
                         params={'files': '1', 'size_mib': 512}, warnings=['asked'], cmd=['bonnie++'], duration_s=1.5)[0]
    assert rec['labels'] == {'platform': 'host'} and rec['params']['size_mib'] == 512 and rec['params']['files'] == '1'
    assert rec['warnings'][0] == 'asked' and rec['cmd'] == ['bonnie++'] and rec['duration_s'] == 1.5
    assert rec['raw_tail'].splitlines()[-1].startswith('1.98,2.00a,vm,')
    assert validate_record(rec) == []


@pytest.mark.parametrize('name,message', [
    ('2.00a-error-dir-not-writable.stderr', "bonnie++ failed: Can't open file ./Bonnie."),
    ('2.00a-error-size-below-2x-ram.stderr', 'bonnie++ failed: File size should be double RAM for good results, RAM is 256M.'),
    ('2.00a-error-root-without-u.stderr', 'bonnie++ failed: You must use the "-u" switch when running as root.'),
])
def test_bonnies_own_errors(read_fixture, name, message):
    assert name in ERROR_FIXTURES
    with pytest.raises(BonnieParseError) as exc:
        parse_bonnie(read_fixture(DIR + name))
    assert str(exc.value).startswith(message)


def test_progress_only_is_no_result(read_fixture):
    with pytest.raises(BonnieParseError) as exc:
        parse_bonnie(read_fixture(DIR + '2.00a-s512M-n1.stderr'))
    assert "first line: 'Using uid:65534, gid:65534.'" in str(exc.value)


@pytest.mark.parametrize('text,quoted', [
    ('', 'empty'),
    ('   \n\n', 'empty'),
    ('hello world\nsecond line\n', "'hello world'"),
])
def test_empty_and_garbage(text, quoted):
    with pytest.raises(BonnieParseError) as exc:
        parse_bonnie(text)
    assert 'bonnie++' in str(exc.value) and quoted in str(exc.value)


def test_truncated_table_quotes_the_header(read_fixture):
    lines = read_fixture(DIR + 'public-1.97-bossjones-nfs-worker1.txt').splitlines()
    cut = '\n'.join(lines[:17])  # up to the "Machine  Size K/sec ..." header
    assert lines[16].startswith('Machine')
    with pytest.raises(BonnieParseError) as exc:
        parse_bonnie(cut)
    assert 'without a result row' in str(exc.value) and repr(lines[16]) in str(exc.value)


def test_truncated_csv_line_quotes_it(read_fixture):
    line = read_fixture(DIR + 'public-1.96-perfkit-sample.csv').strip()
    cut = line[:line.index(',,512ms')]
    with pytest.raises(BonnieParseError) as exc:
        parse_bonnie(cut)
    assert 'has 36 fields, expected 48' in str(exc.value) and cut[:40] in str(exc.value)


def test_not_text():
    with pytest.raises(BonnieParseError, match='must be text'):
        parse_bonnie(None)
