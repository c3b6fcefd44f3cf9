# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/dd.py against real dd output (tests/unit/fixtures/dd, see its README)."""

from __future__ import annotations

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import DdParseError, dd_metrics, dd_record, parse_dd
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import rate_to_mb_s

# What each fixture's final "bytes ... copied" line says, copied from the fixture text:
# (bytes, seconds as printed, rate as printed, rate unit). test_table_matches_fixture_text ties
# this table to the files, so the expectations below do not come from the parser.
SUMMARIES = {
    'coreutils-9.1-write-fdatasync.txt': (268435456, '0.766629', '350', 'MB/s'),
    'coreutils-9.1-read-after-drop-caches.txt': (268435456, '0.076743', '3.5', 'GB/s'),
    'coreutils-9.1-read-iflag-direct.txt': (268435456, '0.212246', '1.3', 'GB/s'),
    'coreutils-9.1-tiny-exponent-seconds.txt': (512, '3.6689e-05', '14.0', 'MB/s'),
    'coreutils-9.1-kBps.txt': (1000, '0.000567885', '1.8', 'MB/s'),
    'coreutils-9.1-tmpfs-GBps.txt': (2147483648, '3.009', '714', 'MB/s'),
    'coreutils-9.1-status-progress.txt': (4194304000, '12.277', '342', 'MB/s'),
    'coreutils-9.1-Bps-slow-pipe.txt': (10, '0.301859', '0.0', 'kB/s'),
    'coreutils-9.1-kBps-slow-pipe.txt': (3000, '0.607781', '4.9', 'kB/s'),
    'coreutils-9.1-zero-count.txt': (0, '2.7201e-05', '0.0', 'kB/s'),
    'coreutils-9.1-failed-no-space.txt': (0, '0.000566392', '0.0', 'kB/s'),
}
MEASURED = sorted(n for n, s in SUMMARIES.items() if s[0] > 0)


def _decimals(printed):
    return len(printed.split('.')[1]) if '.' in printed else 0


@pytest.mark.parametrize('name', sorted(SUMMARIES))
def test_table_matches_fixture_text(read_fixture, name):
    nbytes, secs, rate, unit = SUMMARIES[name]
    last = [ln for ln in read_fixture('dd/' + name).replace('\r', '\n').splitlines() if ' copied, ' in ln][-1]
    assert last.startswith('%d bytes' % nbytes)
    assert last.endswith(' copied, %s s, %s %s' % (secs, rate, unit))


@pytest.mark.parametrize('name', sorted(SUMMARIES))
def test_parse_dd_bytes_seconds_rate(read_fixture, name):
    nbytes, secs, rate, unit = SUMMARIES[name]
    parsed = parse_dd(read_fixture('dd/' + name))
    assert parsed['bytes'] == nbytes
    assert parsed['seconds'] == pytest.approx(float(secs), rel=1e-12)
    assert parsed['rate_value'] == pytest.approx(float(rate))
    assert parsed['rate_unit'] == unit
    # throughput is computed from bytes and seconds (10^6 bytes/s), not from dd's rounded rate
    assert parsed['throughput_mb_s'] == pytest.approx(nbytes / float(secs) / 1e6, rel=1e-12)


@pytest.mark.parametrize('name', MEASURED)
def test_throughput_agrees_with_the_rate_dd_printed(read_fixture, name):
    """Catches a B/s / kB/s / MB/s / GB/s mix-up: dd's own rate, converted, is within one unit of
    its last printed digit of the computed throughput."""
    _nbytes, _secs, rate, unit = SUMMARIES[name]
    parsed = parse_dd(read_fixture('dd/' + name))
    tolerance = rate_to_mb_s(10 ** -_decimals(rate), unit)
    assert abs(parsed['throughput_mb_s'] - rate_to_mb_s(float(rate), unit)) <= tolerance


def test_exponent_seconds_are_read_as_a_number(read_fixture):
    parsed = parse_dd(read_fixture('dd/coreutils-9.1-tiny-exponent-seconds.txt'))
    assert parsed['seconds'] == pytest.approx(0.000036689)
    assert parsed['throughput_mb_s'] == pytest.approx(512 / 0.000036689 / 1e6)
    assert 13.9 < parsed['throughput_mb_s'] < 14.0


def test_records_lines_are_read(read_fixture):
    parsed = parse_dd(read_fixture('dd/coreutils-9.1-kBps-slow-pipe.txt'))
    assert parsed['records_in'] == {'full': 2, 'partial': 1}
    assert parsed['records_out'] == {'full': 2, 'partial': 1}
    assert parsed['errors'] == []
    assert parsed['progress'] == 0


def test_reported_rate_zero_but_throughput_computed(read_fixture):
    # dd printed "0.0 kB/s" for 10 bytes in 0.3 s; the record must still carry the real number.
    parsed = parse_dd(read_fixture('dd/coreutils-9.1-Bps-slow-pipe.txt'))
    assert parsed['rate_value'] == 0.0
    assert parsed['throughput_mb_s'] == pytest.approx(10 / 0.301859 / 1e6)
    assert parsed['throughput_mb_s'] > 0


def test_status_progress_final_summary_wins(read_fixture):
    text = read_fixture('dd/coreutils-9.1-status-progress.txt')
    pieces = [p for p in text.replace('\r', '\n').splitlines() if ' copied, ' in p]
    assert len(pieces) == 13  # 12 progress lines + the final summary
    parsed = parse_dd(text)
    assert parsed['progress'] == 12
    assert parsed['bytes'] == 4194304000 == 4000 * 1024 * 1024
    assert parsed['bytes'] != int(pieces[-2].split()[0])  # not the last progress line
    assert parsed['seconds'] == pytest.approx(12.277)
    assert parsed['records_out'] == {'full': 4000, 'partial': 0}
    assert parsed['throughput_mb_s'] == pytest.approx(4194304000 / 12.277 / 1e6)


def test_status_progress_record_raw_tail_ends_with_summary(read_fixture):
    text = read_fixture('dd/coreutils-9.1-status-progress.txt')
    rec = dd_record(text, test='read')
    lines = rec['raw_tail'].splitlines()
    assert len(lines) == 5
    assert '\r' not in rec['raw_tail']
    assert lines[-1] == '4194304000 bytes (4.2 GB, 3.9 GiB) copied, 12.277 s, 342 MB/s'
    assert lines[-2] == '4000+0 records out'


def test_failed_no_input_raises_with_dds_message(read_fixture):
    text = read_fixture('dd/coreutils-9.1-failed-no-input.txt')
    with pytest.raises(DdParseError) as exc:
        parse_dd(text)
    assert "failed to open '/nonexistent/file': No such file or directory" in str(exc.value)
    with pytest.raises(DdParseError) as exc:
        dd_record(text)
    assert 'No such file or directory' in str(exc.value)


def test_failed_no_space_surfaces_error(read_fixture):
    text = read_fixture('dd/coreutils-9.1-failed-no-space.txt')
    parsed = parse_dd(text)
    assert parsed['errors'] == ["error writing '/dev/full': No space left on device"]
    assert parsed['bytes'] == 0
    with pytest.raises(DdParseError) as exc:
        dd_record(text)
    assert str(exc.value) == "dd reported an error: error writing '/dev/full': No space left on device"


def test_zero_bytes_copied_is_no_record(read_fixture):
    text = read_fixture('dd/coreutils-9.1-zero-count.txt')
    parsed = parse_dd(text)
    assert parsed['bytes'] == 0
    assert parsed['records_out'] == {'full': 0, 'partial': 0}
    with pytest.raises(DdParseError, match='0 bytes'):
        dd_record(text)


@pytest.mark.parametrize('name,bs,records', [
    ('busybox-1.35-write-fsync.txt', 1024 * 1024, 256),
    ('busybox-1.35-tiny.txt', 512, 1),
])
def test_busybox_records_only(read_fixture, name, bs, records):
    text = read_fixture('dd/' + name)
    assert ' copied' not in text
    with pytest.raises(DdParseError, match='pass bs'):
        parse_dd(text)
    parsed = parse_dd(text, bs=bs)
    assert parsed['records_out'] == {'full': records, 'partial': 0}
    assert parsed['bytes'] == records * bs
    assert parsed['seconds'] is None
    assert parsed['throughput_mb_s'] is None
    rec = dd_record(text, bs=bs, test='write')
    assert validate_record(rec) == []
    assert set(rec['metrics']) == {'bytes'}
    assert rec['metrics']['bytes'] == {'value': float(records * bs), 'unit': 'bytes', 'better': 'higher'}


def test_records_only_with_partial_record_cannot_use_bs():
    with pytest.raises(DdParseError, match='partial'):
        parse_dd('2+1 records in\n2+1 records out\n', bs=1000)


def test_bs_is_ignored_when_dd_printed_the_byte_count(read_fixture):
    parsed = parse_dd(read_fixture('dd/coreutils-9.1-kBps-slow-pipe.txt'), bs=1024)
    assert parsed['bytes'] == 3000  # not 2 * 1024: the 3rd record was partial


REFERENCE = 'dd/reference-000-dd-time-transcript.txt'


def test_reference_time_transcript(read_fixture):
    text = read_fixture(REFERENCE)
    assert 'bs=1000000 count=200000' in text
    parsed = parse_dd(text, bs=1000000)
    assert parsed['bytes'] == 200000 * 1000000
    # 'real 78m14.761s' after the first "records out"; not the 'real 0m0.007s' of the sync before it
    assert parsed['seconds'] == pytest.approx(78 * 60 + 14.761)
    assert parsed['seconds'] == pytest.approx(4694.761)
    assert parsed['throughput_mb_s'] == pytest.approx(200000 * 1e6 / 4694.761 / 1e6)
    # The post's own table: test 1 took 4720.096 s "incl. sync" (dd + the 25.335 s sync after
    # it) for 42.37 MB/s.
    assert 200000 * 1e6 / (parsed['seconds'] + 25.335) / 1e6 == pytest.approx(42.37, abs=0.005)


def test_reference_time_transcript_needs_bs(read_fixture):
    with pytest.raises(DdParseError, match='pass bs'):
        parse_dd(read_fixture(REFERENCE))


def test_reference_time_transcript_record(read_fixture):
    rec = dd_record(read_fixture(REFERENCE), bs=1000000, labels={'platform': 'openvz'})
    assert validate_record(rec) == []
    assert rec['metrics']['elapsed'] == {'value': pytest.approx(4694.761), 'unit': 's', 'better': 'lower'}
    assert rec['metrics']['bytes']['value'] == 2e11
    assert rec['metrics']['throughput']['value'] == pytest.approx(42.6007, abs=1e-4)


def test_time_real_line_without_records_is_ignored():
    with pytest.raises(DdParseError, match='no dd transfer summary'):
        parse_dd('real\t0m1.000s\nuser\t0m0.000s\n', bs=512)


def test_pre_8_24_summary_format():
    parsed = parse_dd('256+0 records in\n256+0 records out\n'
                      '268435456 bytes (268 MB) copied, 0.766629 s, 350 MB/s\n')
    assert parsed['bytes'] == 268435456
    assert parsed['seconds'] == pytest.approx(0.766629)


def test_zero_seconds_infinity_rate():
    parsed = parse_dd('1+0 records in\n1+0 records out\n512 bytes copied, 0 s, Infinity B/s\n')
    assert parsed['bytes'] == 512
    assert parsed['seconds'] == 0
    assert parsed['rate_value'] == float('inf')
    assert parsed['throughput_mb_s'] is None
    metrics = dd_metrics(parsed)
    assert 'throughput' not in metrics
    assert metrics['elapsed']['value'] == 0.0


@pytest.mark.parametrize('text', ['', 'hello\n', 'dd: warning: partial read\n0+0 records in\n'])
def test_no_transfer_raises(text):
    with pytest.raises(DdParseError):
        parse_dd(text)


@pytest.mark.parametrize('value', [None, b'1+0 records out\n', 42, ['a']])
def test_non_text_raises_dd_parse_error(value):
    with pytest.raises(DdParseError, match='must be text'):
        parse_dd(value)


def test_dd_parse_error_is_a_value_error():
    assert issubclass(DdParseError, ValueError)


@pytest.mark.parametrize('name', MEASURED)
def test_dd_record_validates(read_fixture, name):
    nbytes, secs, _rate, _unit = SUMMARIES[name]
    text = read_fixture('dd/' + name)
    rec = dd_record(text, test='read', tool_version='9.1', labels={'cell': 'c1', 'benchmark': 'dd-read'},
                    params={'bs': '1M'}, warnings=['w'], cmd=['dd', 'if=/x'], started='2026-12-02T10:00:00Z',
                    duration_s=1.25)
    assert validate_record(rec) == []
    assert rec['schema'] == 1
    assert rec['tool'] == 'dd'
    assert rec['test'] == 'read'
    assert rec['tool_version'] == '9.1'
    assert rec['labels'] == {'cell': 'c1', 'benchmark': 'dd-read'}
    assert rec['params'] == {'bs': '1M'}
    assert rec['warnings'] == ['w']
    assert rec['cmd'] == ['dd', 'if=/x']
    assert set(rec['metrics']) == {'throughput', 'bytes', 'elapsed'}
    assert rec['metrics']['throughput'] == {'value': pytest.approx(nbytes / float(secs) / 1e6, rel=1e-12),
                                            'unit': 'MB/s', 'better': 'higher'}
    assert rec['metrics']['bytes'] == {'value': float(nbytes), 'unit': 'bytes', 'better': 'higher'}
    assert rec['metrics']['elapsed'] == {'value': pytest.approx(float(secs)), 'unit': 's', 'better': 'lower'}
    assert rec['raw_tail'].splitlines()[-1] == [ln for ln in text.splitlines() if ln.strip()][-1]


def test_dd_record_without_optional_fields(read_fixture):
    rec = dd_record(read_fixture('dd/coreutils-9.1-write-fdatasync.txt'))
    assert validate_record(rec) == []
    assert rec['test'] == 'write'
    assert rec['tool_version'] is None
    assert rec['labels'] == {}
    assert 'cmd' not in rec and 'started' not in rec and 'duration_s' not in rec


def test_one_byte_copied_singular(read_fixture):
    text = read_fixture('dd/coreutils-9.1-one-byte.txt')
    assert '1 byte copied, 4.9132e-05 s, 20.4 kB/s' in text
    parsed = parse_dd(text)
    assert parsed['bytes'] == 1
    assert parsed['seconds'] == pytest.approx(4.9132e-05)


def test_bs_size_string_is_understood_or_rejected_cleanly(read_fixture):
    text = read_fixture('dd/busybox-1.35-write-fsync.txt')
    try:
        parsed = parse_dd(text, bs='1M')
    except DdParseError as e:
        assert 'bs' in str(e)
        return
    assert parsed['bytes'] == 256 * 1024 * 1024


def test_negative_bs_is_rejected(read_fixture):
    with pytest.raises(DdParseError):
        dd_record(read_fixture('dd/busybox-1.35-write-fsync.txt'), bs=-1)
