# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/sysbench.py and the parse_sysbench filter against real sysbench 1.0.20
fileio output (tests/unit/fixtures/sysbench, see its README)."""

from __future__ import annotations

import re

import pytest


from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.module_utils.tools.sysbench import (
    ZERO_DATA_WARNING, SysbenchParseError, parse_sysbench, sysbench_record)

# fixture -> (mode, threads, block size line)
RUNS = {
    'sysbench-1.0.20-rndrw.txt': ('rndrw', 1, '16KiB'),
    'sysbench-1.0.20-seqrd.txt': ('seqrd', 1, '16KiB'),
    'sysbench-1.0.20-rndwr-2threads-4k-fsync10.txt': ('rndwr', 2, '4KiB'),
    'sysbench-1.0.20-rndrd-direct.txt': ('rndrd', 1, '16KiB'),
    'sysbench-1.0.20-seqrewr-events2000.txt': ('seqrewr', 1, '16KiB'),
    'sysbench-1.0.20-seqwr-no-fsync.txt': ('seqwr', 1, '16KiB'),
}
READS = {'rndrw', 'seqrd', 'rndrd'}
WRITES = {'rndrw', 'rndwr', 'seqrewr', 'seqwr'}


def _fx(read_fixture, name):
    return read_fixture('sysbench/' + name)


def _value(text, label):
    """The number after `label:` in the text, read independently of the parser."""
    m = re.search(r'^\s*%s:\s+([0-9.]+)s?$' % re.escape(label), text, re.M)
    return float(m.group(1))


@pytest.mark.parametrize('name', sorted(RUNS))
def test_parse_run(read_fixture, name):
    text = _fx(read_fixture, name)
    mode, threads, block = RUNS[name]
    p = parse_sysbench(text)
    assert p['version'] == '1.0.20' and p['mode'] == mode and p['threads'] == threads and p['block_size'] == block
    assert p['reads_per_s'] == _value(text, 'reads/s')
    assert p['writes_per_s'] == _value(text, 'writes/s')
    assert p['fsyncs_per_s'] == _value(text, 'fsyncs/s')
    assert p['read_mib_s'] == _value(text, 'read, MiB/s')
    assert p['written_mib_s'] == _value(text, 'written, MiB/s')
    # MiB/s (2^20 bytes) -> MB/s (10^6 bytes)
    assert p['read_mb_s'] == pytest.approx(_value(text, 'read, MiB/s') * 1.048576)
    assert p['written_mb_s'] == pytest.approx(_value(text, 'written, MiB/s') * 1.048576)
    assert p['latency_avg_ms'] == _value(text, 'avg')
    assert p['percentile'] == 95.0 and p['latency_pct_ms'] == _value(text, '95th percentile')
    assert p['events'] == int(_value(text, 'total number of events'))
    assert p['total_time_s'] == _value(text, 'total time')
    assert p['errors'] == []


@pytest.mark.parametrize('name', sorted(RUNS))
def test_record(read_fixture, name):
    text = _fx(read_fixture, name)
    mode = RUNS[name][0]
    rec = sysbench_record(text, labels={'platform': 'kvm'})
    assert validate_record(rec) == []
    assert rec['tool'] == 'sysbench' and rec['test'] == mode and rec['tool_version'] == '1.0.20'
    assert rec['labels'] == {'platform': 'kvm'}
    assert ZERO_DATA_WARNING in rec['warnings']
    m = rec['metrics']
    expected = {'latency_avg', 'latency_p95'}
    if mode in READS:
        expected |= {'reads_per_s', 'read_throughput'}
    if mode in WRITES:
        expected |= {'writes_per_s', 'fsyncs_per_s', 'write_throughput'}
    assert set(m) == expected
    if mode in READS:
        assert m['reads_per_s'] == {'value': _value(text, 'reads/s'), 'unit': 'ops/s', 'better': 'higher'}
        assert m['read_throughput']['unit'] == 'MB/s'
        assert m['read_throughput']['value'] == pytest.approx(_value(text, 'read, MiB/s') * 1048576 / 1e6)
    if mode in WRITES:
        assert m['writes_per_s']['value'] == _value(text, 'writes/s') > 0
        assert m['write_throughput']['value'] == pytest.approx(_value(text, 'written, MiB/s') * 1048576 / 1e6)
    for key in ('latency_avg', 'latency_p95'):
        assert m[key]['unit'] == 'ms' and m[key]['better'] == 'lower'


def test_throughput_agrees_with_ops(read_fixture):
    """Catches a MiB/MB mix-up: ops/s x block size = the throughput sysbench printed (in MiB/s)."""
    for name, block in [('sysbench-1.0.20-rndrw.txt', 16384), ('sysbench-1.0.20-rndwr-2threads-4k-fsync10.txt', 4096),
                        ('sysbench-1.0.20-rndrd-direct.txt', 16384)]:
        p = parse_sysbench(_fx(read_fixture, name))
        assert p['read_mb_s'] == pytest.approx(p['reads_per_s'] * block / 1e6, abs=0.011)
        assert p['written_mb_s'] == pytest.approx(p['writes_per_s'] * block / 1e6, abs=0.011)


def test_zero_latency_is_too_fast_not_zero(read_fixture):
    rec = sysbench_record(_fx(read_fixture, 'sysbench-1.0.20-seqrd.txt'))
    assert rec['metrics']['latency_avg'] == {'value': None, 'unit': 'ms', 'better': 'lower', 'too_fast': True}
    assert rec['metrics']['latency_p95']['too_fast'] is True
    assert any('latency avg 0.00 ms' in w for w in rec['warnings'])
    assert validate_record(rec) == []


def test_direct_flag_and_options_are_read(read_fixture):
    assert parse_sysbench(_fx(read_fixture, 'sysbench-1.0.20-rndrd-direct.txt'))['extra_flags'] == 'directio'
    assert parse_sysbench(_fx(read_fixture, 'sysbench-1.0.20-rndrw.txt'))['extra_flags'] == '(none)'


FATAL_CASES = [
    ('sysbench-1.0.20-fatal-no-prepare.txt',
     "FATAL: Cannot open file 'test_file.0' errno = 2 (No such file or directory) "
     'WARNING: Did you forget to run the prepare step?'),
    ('sysbench-1.0.20-fatal-bad-mode.txt', 'FATAL: Invalid IO operations mode: bogus.'),
    ('sysbench-1.0.20-fatal-unwritable-dir.txt', "FATAL: Can't open file errno = 13 (Permission denied)"),
    ('sysbench-1.0.20-fatal-direct-blocksize.txt',
     'FATAL: Failed to read file! file: 4 pos: 28696 errno = 22 (Invalid argument)'),
]


@pytest.mark.parametrize('name,message', FATAL_CASES)
def test_fatal_is_a_failure(read_fixture, name, message):
    text = _fx(read_fixture, name)
    with pytest.raises(SysbenchParseError) as exc:
        parse_sysbench(text)
    assert str(exc.value) == 'sysbench failed: ' + message
    with pytest.raises(SysbenchParseError):
        sysbench_record(text)


def test_bad_option_on_stderr(read_fixture):
    out = _fx(read_fixture, 'sysbench-1.0.20-bad-option.txt')
    err = _fx(read_fixture, 'sysbench-1.0.20-bad-option.stderr')
    with pytest.raises(SysbenchParseError, match='sysbench failed: invalid option: --bogus-opt=1'):
        parse_sysbench(out + err)
    with pytest.raises(SysbenchParseError, match=re.escape("stops early (truncated?) after the line 'sysbench 1.0.20")):
        parse_sysbench(out)


@pytest.mark.parametrize('name,verb', [('sysbench-1.0.20-prepare.txt', 'prepare'), ('sysbench-1.0.20-cleanup.txt', 'cleanup')])
def test_prepare_and_cleanup_output_are_not_runs(read_fixture, name, verb):
    with pytest.raises(SysbenchParseError, match="output of 'sysbench fileio %s', not of 'run'" % verb):
        parse_sysbench(_fx(read_fixture, name))


def test_empty_garbage_truncated(read_fixture):
    with pytest.raises(SysbenchParseError, match='the output is empty'):
        parse_sysbench('')
    with pytest.raises(SysbenchParseError) as exc:
        parse_sysbench('bash: sysbench: command not found\n')
    assert "first line not understood: 'bash: sysbench: command not found'" in str(exc.value)
    text = _fx(read_fixture, 'sysbench-1.0.20-rndrw.txt')
    cut = text.index('File operations:')
    with pytest.raises(SysbenchParseError) as exc:
        parse_sysbench(text[:cut])
    assert "stops early (truncated?) after the line 'Threads started!'" in str(exc.value)
    with pytest.raises(SysbenchParseError, match='must be text'):
        parse_sysbench(b'x')
