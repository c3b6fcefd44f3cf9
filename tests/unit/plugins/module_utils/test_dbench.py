# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/dbench.py and the parse_dbench filter against real dbench 4.0 output
(tests/unit/fixtures/dbench, see its README)."""

from __future__ import annotations

import re

import pytest


from ansible_collections.benchlab.bench.plugins.module_utils.tools.dbench import (
    DbenchParseError, dbench_record, op_metric_name, parse_dbench)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

GOOD = ['dbench-4.0-1client.txt', 'dbench-4.0-2clients.txt', 'dbench-4.0-4clients.txt',
        'dbench-4.0-3clients-warmup.txt', 'dbench-4.0-sync-2clients.txt']
# The final line of each, copied from the fixture text (test_final_line_matches ties them together).
FINAL = {
    'dbench-4.0-1client.txt': ('258.332', 1, '7.857'),
    'dbench-4.0-2clients.txt': ('282.192', 2, '10.671'),
    'dbench-4.0-4clients.txt': ('364.116', 4, '20.220'),
    'dbench-4.0-3clients-warmup.txt': ('242.397', 3, '26.350'),
    'dbench-4.0-sync-2clients.txt': ('97.6409', 2, '13.612'),
}


def _fx(read_fixture, name):
    return read_fixture('dbench/' + name)


def _table(text):
    """The operation table straight from the text, independently of the parser."""
    rows = {}
    lines = text.splitlines()
    start = [i for i, ln in enumerate(lines) if ln.split()[:4] == ['Operation', 'Count', 'AvgLat', 'MaxLat']][0]
    for ln in lines[start + 2:]:
        if not ln.strip():
            break
        name, count, avg, mx = ln.split()
        rows[name] = (int(count), float(avg), float(mx))
    return rows


@pytest.mark.parametrize('name', GOOD)
def test_final_line_matches(read_fixture, name):
    tput, clients, lat = FINAL[name]
    last = _fx(read_fixture, name).splitlines()[-1]
    assert last.startswith('Throughput %s MB/sec' % tput)
    assert last.endswith('  %d clients  %d procs  max_latency=%s ms' % (clients, clients, lat))


@pytest.mark.parametrize('name', GOOD)
def test_parse_final_line(read_fixture, name):
    tput, clients, lat = FINAL[name]
    parsed = parse_dbench(_fx(read_fixture, name))
    # dbench's MB/sec is 1.0e-6 * bytes / s: already 10^6-byte MB, so the value is unchanged
    assert parsed['throughput_mb_s'] == pytest.approx(float(tput), rel=1e-12)
    assert parsed['clients'] == parsed['procs'] == clients
    assert parsed['max_latency_ms'] == pytest.approx(float(lat))
    assert parsed['version'] == '4.00'
    assert parsed['loadfile'] == '/usr/share/dbench/client.txt'
    assert parsed['errors'] == [] and parsed['unknown'] == []


@pytest.mark.parametrize('name', GOOD)
def test_operation_table(read_fixture, name):
    text = _fx(read_fixture, name)
    table = _table(text)
    parsed = parse_dbench(text)
    assert list(parsed['operations']) == list(table)
    assert len(table) >= 14 and "NTCreateX" in table and "ReadX" in table
    for op, (count, avg, mx) in table.items():
        assert parsed['operations'][op] == {'count': count, 'avg_latency_ms': avg, 'max_latency_ms': mx}


@pytest.mark.parametrize('name', GOOD)
def test_record_metrics(read_fixture, name):
    text = _fx(read_fixture, name)
    rec = dbench_record(text, labels={'platform': 'host'})
    assert validate_record(rec) == []
    assert rec['tool'] == 'dbench' and rec['test'] == 'client' and rec['tool_version'] == '4.00'
    assert rec['labels'] == {'platform': 'host', 'clients': FINAL[name][1]}
    m = rec['metrics']
    assert m['throughput'] == {'value': float(FINAL[name][0]), 'unit': 'MB/s', 'better': 'higher'}
    assert m['max_latency'] == {'value': float(FINAL[name][2]), 'unit': 'ms', 'better': 'lower'}
    table = _table(text)
    ops = dict((k, v) for k, v in m.items() if k.startswith('op_'))
    assert sorted(ops) == sorted('op_%s_avg_latency' % n.lower() for n in table)
    for op, (_count, avg, _mx) in table.items():
        assert ops['op_%s_avg_latency' % op.lower()] == {'value': avg, 'unit': 'ms', 'better': 'lower'}
    assert set(m) == {'throughput', 'max_latency'} | set(ops)
    assert rec['raw_tail'].splitlines()[-1] == text.splitlines()[-1]


def test_op_names_are_lower_cased():
    assert op_metric_name('NTCreateX') == 'op_ntcreatex_avg_latency'
    assert op_metric_name('ReadX') == 'op_readx_avg_latency'


def test_final_throughput_is_the_last_execute_sample(read_fixture):
    """dbench's final number is its last execute-phase sample (printed with 2 decimals), and
    max_latency is the worst of the per-second latency samples: a check that the right lines
    were read."""
    for name in GOOD:
        parsed = parse_dbench(_fx(read_fixture, name))
        execute = [s for s in parsed['samples'] if s['phase'] == 'execute']
        assert execute, name
        assert abs(execute[-1]['rate_mb_s'] - parsed['throughput_mb_s']) <= 0.005 + 1e-9
        worst = max(s['latency_ms'] for s in parsed['samples'] if s['latency_ms'] is not None)
        assert parsed['max_latency_ms'] == pytest.approx(worst)


def test_warmup_samples_are_read(read_fixture):
    parsed = parse_dbench(_fx(read_fixture, 'dbench-4.0-3clients-warmup.txt'))
    assert parsed['warmup'] == 2 and parsed['time_limit'] == 10
    phases = [s['phase'] for s in parsed['samples']]
    assert phases[0] == 'warmup' and phases.count('execute') == 9
    assert parsed['samples'][0] == {'phase': 'warmup', 'clients': 3, 'rate_mb_s': 293.87, 't': 1, 'latency_ms': 17.196}


def test_barrier_semaphore_message_is_harmless(read_fixture):
    text = _fx(read_fixture, 'dbench-4.0-1client.txt')
    assert 'failed to create barrier semaphore' in text
    parsed = parse_dbench(text)
    assert parsed['errors'] == [] and parsed['unknown'] == []
    assert validate_record(dbench_record(text)) == []


def test_sync_flags(read_fixture):
    parsed = parse_dbench(_fx(read_fixture, 'dbench-4.0-sync-2clients.txt'))
    assert parsed['sync_open'] and parsed['sync_dirs']
    assert not parse_dbench(_fx(read_fixture, 'dbench-4.0-2clients.txt'))['sync_open']


def test_dbench3_final_line_without_clients_and_latency():
    # The dbench 3.x printf format ("Throughput %g MB/sec%s%s %d procs"): no clients, no latency.
    parsed = parse_dbench('Throughput 40.6701 MB/sec 144 procs\n')
    assert parsed['throughput_mb_s'] == pytest.approx(40.6701)
    assert parsed['clients'] == parsed['procs'] == 144
    assert parsed['max_latency_ms'] is None
    rec = dbench_record('Throughput 40.6701 MB/sec 144 procs\n')
    assert set(rec['metrics']) == {'throughput'} and rec['test'] == 'netbench'


def test_too_short_run_is_no_record(read_fixture):
    text = _fx(read_fixture, 'dbench-4.0-t1-zero-throughput.txt')
    assert 'Throughput 0 MB/sec' in text
    assert parse_dbench(text)['throughput_mb_s'] == 0
    with pytest.raises(DbenchParseError, match=r'throughput of 0 MB/sec with 0 execute-phase sample\(s\).*-t 1'):
        dbench_record(text)


def test_zero_clients(read_fixture):
    text = _fx(read_fixture, 'dbench-4.0-zero-clients.txt')
    with pytest.raises(DbenchParseError, match='0 clients'):
        dbench_record(text)
    err = _fx(read_fixture, 'dbench-4.0-zero-clients.stderr')
    with pytest.raises(DbenchParseError, match=re.escape('create 0 procs?  you must be kidding.')):
        dbench_record(text + err)


@pytest.mark.parametrize('name,message', [
    ('dbench-4.0-missing-loadfile', "dbench: error opening '/nonexistent/client.txt': No such file or directory"),
    ('dbench-4.0-bad-option', 'Invalid option --bogus: unknown option'),
])
def test_errors_on_stderr(read_fixture, name, message):
    out = _fx(read_fixture, name + '.txt')
    err = _fx(read_fixture, name + '.stderr')
    assert message in err
    with pytest.raises(DbenchParseError) as exc:
        parse_dbench(out + err)
    assert str(exc.value) == 'dbench failed: %s' % message
    # stdout alone stops early: the message says so and quotes the last line read
    with pytest.raises(DbenchParseError) as exc:
        parse_dbench(out)
    assert 'stops early' in str(exc.value) and repr(out.strip().splitlines()[-1]) in str(exc.value)


def test_missing_directory_errors_on_stdout(read_fixture):
    with pytest.raises(DbenchParseError) as exc:
        parse_dbench(_fx(read_fixture, 'dbench-4.0-missing-directory.txt'))
    msg = str(exc.value)
    assert msg.startswith('dbench failed: [3] open /nonexistent/dir/clients/client0 failed')
    assert 'Child failed with status 1' in msg


def test_empty_garbage_truncated(read_fixture):
    with pytest.raises(DbenchParseError, match='the output is empty'):
        parse_dbench('')
    with pytest.raises(DbenchParseError) as exc:
        parse_dbench('Segmentation fault\nsomething else\n')
    assert "first line not understood: 'Segmentation fault'" in str(exc.value)
    text = _fx(read_fixture, 'dbench-4.0-2clients.txt')
    lines = text.splitlines()
    with pytest.raises(DbenchParseError) as exc:
        parse_dbench('\n'.join(lines[:len(lines) // 2]) + '\n')
    assert 'stops early (truncated?)' in str(exc.value)
    assert repr(lines[len(lines) // 2 - 1].strip()) in str(exc.value)
    with pytest.raises(DbenchParseError, match='must be text'):
        parse_dbench(None)
