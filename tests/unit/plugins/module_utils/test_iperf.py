# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/iperf.py and the parse_iperf filter against real iperf3 3.12 / iperf 2.1.8
output (tests/unit/fixtures/iperf, see its README)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools import iperf as ip
from ansible_collections.benchlab.bench.plugins.module_utils.observe import procfs
from ansible_collections.benchlab.bench.plugins.module_utils.tools import iperf_server
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import version_tuple
from ansible_collections.benchlab.bench.plugins.module_utils.tools.iperf import (
    IperfParseError, client_argv, detect_format, iperf_records, parse_iperf, server_argv, udp_stream_refused)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

D = 'iperf/'


def fx(read_fixture, name):
    return read_fixture(D + name)


def doc(read_fixture, name):
    return json.loads(fx(read_fixture, name))


# --------------------------------------------------------------------------- iperf3 JSON

@pytest.mark.parametrize('name,streams,reverse', [
    ('iperf3-3.12-tcp.json', 1, False),
    ('iperf3-3.12-tcp-reverse.json', 1, True),
    ('iperf3-3.12-tcp-P2.json', 2, False),
    ('iperf3-3.12-tcp-w256k.json', 1, False),
])
def test_iperf3_tcp_throughput_is_sum_received(read_fixture, name, streams, reverse):
    d = doc(read_fixture, name)
    s = parse_iperf(fx(read_fixture, name))
    assert s['format'] == 'iperf3-json' and s['tool'] == 'iperf3' and s['version'] == '3.12'
    assert s['protocol'] == 'tcp' and s['streams'] == streams and s['reverse'] is reverse
    # receiver side, in 10^6 bits/s, not the sender's number
    assert s['throughput_mbit_s'] == pytest.approx(d['end']['sum_received']['bits_per_second'] / 1e6, rel=1e-12)
    assert s['throughput_mbit_s'] != pytest.approx(d['end']['sum_sent']['bits_per_second'] / 1e6, rel=1e-9)
    assert s['retransmits'] == d['end']['sum_sent']['retransmits']
    # the per-stream receivers add up to the sum that was used
    per = sum(st['receiver']['bits_per_second'] for st in d['end']['streams'])
    assert per / 1e6 == pytest.approx(s['throughput_mbit_s'], rel=1e-9)


def test_iperf3_parallel_retransmits_are_the_sum_of_streams(read_fixture):
    d = doc(read_fixture, 'iperf3-3.12-tcp-P2.json')
    per = [st['sender']['retransmits'] for st in d['end']['streams']]
    assert len(per) == 2
    rec = iperf_records(fx(read_fixture, 'iperf3-3.12-tcp-P2.json'))[0]
    assert rec['metrics']['retransmits'] == {'value': float(sum(per)), 'unit': 'count', 'better': 'lower'}
    assert rec['params']['streams'] == 2


def test_iperf3_window_is_read(read_fixture):
    s = parse_iperf(fx(read_fixture, 'iperf3-3.12-tcp-w256k.json'))
    assert s['window_bytes'] == 256 * 1024
    assert parse_iperf(fx(read_fixture, 'iperf3-3.12-tcp.json'))['window_bytes'] is None


def test_iperf3_reverse_record_test_name(read_fixture):
    rec = iperf_records(fx(read_fixture, 'iperf3-3.12-tcp-reverse.json'))[0]
    assert rec['test'] == 'tcp_reverse' and rec['params']['direction'] == 'reverse'
    assert validate_record(rec) == []


@pytest.mark.parametrize('name', ['iperf3-3.12-udp-b100M.json', 'iperf3-3.12-udp-b5G-P2.json'])
def test_iperf3_udp_jitter_and_loss(read_fixture, name):
    d = doc(read_fixture, name)
    rec = iperf_records(fx(read_fixture, name))[0]
    assert validate_record(rec) == []
    assert rec['tool'] == 'iperf3' and rec['test'] == 'udp'
    m = rec['metrics']
    assert set(m) == {'throughput', 'jitter', 'lost_pct'}
    assert m['throughput']['value'] == pytest.approx(d['end']['sum_received']['bits_per_second'] / 1e6)
    assert m['jitter'] == {'value': pytest.approx(d['end']['sum']['jitter_ms']), 'unit': 'ms', 'better': 'lower'}
    assert m['lost_pct'] == {'value': pytest.approx(d['end']['sum']['lost_percent']), 'unit': '%', 'better': 'lower'}


def test_iperf3_udp_overload_shows_loss(read_fixture):
    d = doc(read_fixture, 'iperf3-3.12-udp-b5G-P2.json')
    s = parse_iperf(fx(read_fixture, 'iperf3-3.12-udp-b5G-P2.json'))
    lost, packets = d['end']['sum']['lost_packets'], d['end']['sum']['packets']
    assert lost > 0
    assert s['lost_pct'] == pytest.approx(100.0 * lost / packets)
    assert s['throughput_mbit_s'] < s['sender_throughput_mbit_s']


def test_iperf3_server_side_output(read_fixture):
    d = doc(read_fixture, 'iperf3-3.12-tcp-server.json')
    rec = iperf_records(fx(read_fixture, 'iperf3-3.12-tcp-server.json'))[0]
    assert validate_record(rec) == []
    assert rec['metrics']['throughput']['value'] == pytest.approx(d['end']['sum_received']['bits_per_second'] / 1e6)
    assert 'retransmits' not in rec['metrics']  # the receiving server does not know them


def test_iperf3_connection_refused_is_an_error(read_fixture):
    text = fx(read_fixture, 'iperf3-3.12-refused.json')
    assert json.loads(text)['error']  # exit code was 0 (see README)
    with pytest.raises(IperfParseError) as exc:
        iperf_records(text)
    assert str(exc.value) == 'iperf3 reported an error: unable to connect to server: Connection refused'


def test_iperf3_text_output_asks_for_json(read_fixture):
    with pytest.raises(IperfParseError) as exc:
        parse_iperf(fx(read_fixture, 'iperf3-3.12-tcp-text.txt'))
    assert 'run iperf3 with -J' in str(exc.value)
    assert "'Connecting to host 127.0.0.1, port 15301'" in str(exc.value)


def test_iperf3_refused_text_stderr(read_fixture):
    text = fx(read_fixture, 'iperf3-3.12-refused-text.stderr')
    with pytest.raises(IperfParseError, match='iperf3 failed: iperf3: error - unable to connect to server: Connection refused'):
        parse_iperf(text)


def test_iperf3_truncated_json(read_fixture):
    text = fx(read_fixture, 'iperf3-3.12-tcp.json')
    cut = text[:len(text) // 2]
    with pytest.raises(IperfParseError) as exc:
        parse_iperf(cut)
    last = [ln for ln in cut.splitlines() if ln.strip()][-1].strip()
    assert 'truncated or not valid JSON' in str(exc.value) and repr(last) in str(exc.value)


def test_iperf3_json_without_end(read_fixture):
    d = doc(read_fixture, 'iperf3-3.12-tcp.json')
    d['end'] = {}
    with pytest.raises(IperfParseError, match="no 'end' summary"):
        parse_iperf(json.dumps(d))


# --------------------------------------------------------------------------- iperf2 CSV

def csv_rows(text):
    return [ln.split(',') for ln in text.splitlines() if ln.strip()]


@pytest.mark.parametrize('name,streams', [
    ('iperf-2.1.8-tcp-csv.csv', 1),
    ('iperf-2.1.8-tcp-P2-csv.csv', 2),
    ('iperf-2.1.8-tcp-w256k-csv.csv', 1),
    ('iperf-2.1.8-tcp-reverse-csv.csv', 1),
    ('iperf-2.1.8-tcp-enhanced-csv.csv', 1),
])
def test_iperf2_csv_tcp(read_fixture, name, streams):
    text = fx(read_fixture, name)
    rows = csv_rows(text)
    assert len(rows) == streams and all(len(r) == 9 for r in rows)  # 2.1.8: no SUM line for -P
    assert detect_format(text) == 'iperf2-csv'
    rec = iperf_records(text)[0]
    assert validate_record(rec) == []
    assert rec['tool'] == 'iperf' and rec['test'] == 'tcp'
    assert rec['metrics'] == {'throughput': {'value': pytest.approx(sum(int(r[8]) for r in rows) / 1e6),
                                             'unit': 'Mbit/s', 'better': 'higher'}}
    assert rec['params']['streams'] == streams


def test_iperf2_csv_interval_reports_are_not_added(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-tcp-i1-P2-csv.csv')
    rows = csv_rows(text)
    finals = [r for r in rows if r[6] == '0.0-2.0']
    assert len(rows) == 6 and len(finals) == 2
    s = parse_iperf(text)
    assert s['throughput_mbit_s'] == pytest.approx(sum(int(r[8]) for r in finals) / 1e6)
    assert s['streams'] == 2


def test_iperf2_csv_reverse_needs_the_hint(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-tcp-reverse-csv.csv')
    assert iperf_records(text)[0]['test'] == 'tcp'  # CSV does not show the direction
    rec = iperf_records(text, reverse=True)[0]
    assert rec['test'] == 'tcp_reverse' and rec['params']['direction'] == 'reverse'


def test_iperf2_csv_udp_client_has_no_server_report(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-udp-csv.csv')
    rows = csv_rows(text)
    assert len(rows) == 1 and rows[0][11] == '-1'  # iperf 2.1.8: total -1 = no receiver figures
    with pytest.raises(IperfParseError, match='no server report'):
        parse_iperf(text)


def test_iperf2_csv_udp_server_side(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-udp-csv-server.csv')
    r = csv_rows(text)[0]
    rec = iperf_records(text)[0]
    assert validate_record(rec) == []
    assert rec['test'] == 'udp'
    assert rec['metrics']['throughput']['value'] == pytest.approx(int(r[8]) / 1e6)
    assert rec['metrics']['jitter']['value'] == pytest.approx(float(r[9]))
    assert rec['metrics']['lost_pct']['value'] == pytest.approx(100.0 * int(r[10]) / int(r[11]))
    assert rec['metrics']['lost_pct']['value'] == pytest.approx(float(r[12]), abs=0.0005)


@pytest.mark.parametrize('name', ['iperf-2.1.8-refused-csv', 'iperf-2.1.8-refused'])
def test_iperf2_tcp_connection_refused(read_fixture, name):
    ext = '.csv' if name.endswith('csv') else '.txt'
    text, err = fx(read_fixture, name + ext), fx(read_fixture, name + '.stderr')
    with pytest.raises(IperfParseError) as exc:
        parse_iperf(text, err)
    # the CSV run printed nothing on stdout, the text run a header without a result
    assert str(exc.value) == '%s failed: tcp connect failed: Connection refused' % (
        'iperf' if name.endswith('csv') else 'iperf2')


@pytest.mark.parametrize('name', ['iperf-2.1.8-udp-refused-csv', 'iperf-2.1.8-udp-refused'])
def test_iperf2_udp_connection_refused(read_fixture, name):
    ext = '.csv' if name.endswith('csv') else '.txt'
    text, err = fx(read_fixture, name + ext), fx(read_fixture, name + '.stderr')
    with pytest.raises(IperfParseError) as exc:
        parse_iperf(text, err)
    assert 'no server report' in str(exc.value) and 'read failed: Connection refused' in str(exc.value)
    # without stderr the missing server report alone is still an error
    with pytest.raises(IperfParseError, match='no server report'):
        parse_iperf(text)


# --------------------------------------------------------------------------- iperf2 text

RATE = re.compile(r'sec\s+\S+ \S+\s+(\S+) (\S+)/sec')
UNITS = {'Kbits': 1e-3, 'Mbits': 1.0, 'Gbits': 1e3}


def rate_of(line):
    value, unit = RATE.search(line).groups()
    return float(value) * UNITS[unit]


def final_line(text, tag):
    return [ln for ln in text.splitlines() if ln.startswith(tag) and '/sec' in ln][-1]


@pytest.mark.parametrize('name,tag', [
    ('iperf-2.1.8-tcp.txt', '[  1]'),
    ('iperf-2.1.8-tcp-w256k.txt', '[  1]'),
    ('iperf-2.1.8-tcp-P2.txt', '[SUM]'),
    ('iperf-2.1.8-tcp-P2-server.txt', '[SUM]'),
    ('iperf-2.1.8-tcp-reverse.txt', '[ *1]'),
    ('iperf-2.1.8-tcp-i1.txt', '[  1]'),
])
def test_iperf2_text_tcp(read_fixture, name, tag):
    text = fx(read_fixture, name)
    assert detect_format(text) == 'iperf2-text'
    rec = iperf_records(text)[0]
    assert validate_record(rec) == []
    assert rec['metrics']['throughput']['value'] == pytest.approx(rate_of(final_line(text, tag)))
    assert rec['test'] == ('tcp_reverse' if 'reverse' in name else 'tcp')


def test_iperf2_text_interval_lines_are_skipped(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-tcp-i1.txt')
    lines = [ln for ln in text.splitlines() if ln.startswith('[  1]') and ' sec ' in ln]
    assert len(lines) == 4 and lines[-1].startswith('[  1] 0.0000-')
    s = parse_iperf(text)
    assert s['throughput_mbit_s'] == pytest.approx(4497436 / 1e3)  # -f k: exact to 1 Kbit/s
    assert s['duration'] == pytest.approx(3.0302)


def test_iperf2_text_window_warning_line(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-tcp-w256k.txt')
    assert 'WARNING: requested  250 KByte' in text  # iperf2 reads 256k as 256000 bytes
    assert parse_iperf(text)['window_bytes'] == 500 * 1024


def test_iperf2_text_enhanced_retries(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-tcp-enhanced.txt')
    line = final_line(text, '[  1]')
    retries = int(line.split('/0')[1].split()[0])
    rec = iperf_records(text)[0]
    assert rec['metrics']['retransmits']['value'] == retries == 3
    assert rec['metrics']['throughput']['value'] == pytest.approx(rate_of(line))


@pytest.mark.parametrize('name', ['iperf-2.1.8-udp.txt', 'iperf-2.1.8-udp-fk.txt', 'iperf-2.1.8-udp-b5G-fk.txt'])
def test_iperf2_text_udp_uses_the_server_report(read_fixture, name):
    text = fx(read_fixture, name)
    lines = text.splitlines()
    report = lines[lines.index('[  1] Server Report:') + 2]
    m = re.search(r'(\S+) ms\s+(\d+)/\s*(\d+)', report)
    rec = iperf_records(text)[0]
    assert validate_record(rec) == []
    assert rec['test'] == 'udp'
    assert rec['metrics']['throughput']['value'] == pytest.approx(rate_of(report))
    assert rec['metrics']['jitter']['value'] == pytest.approx(float(m.group(1)))
    assert rec['metrics']['lost_pct']['value'] == pytest.approx(100.0 * int(m.group(2)) / int(m.group(3)))
    sent = rate_of([ln for ln in lines if ln.startswith('[  1] 0.0000')][0])
    if 'b5G' in name:
        assert rec['metrics']['lost_pct']['value'] > 10
        assert rec['metrics']['throughput']['value'] < sent  # received, not sent


def test_iperf2_text_udp_parallel_sums_server_reports(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-udp-P2-fk.txt')
    lines = text.splitlines()
    reports = [lines[i + 1] if lines[i + 1].startswith('[  ') else lines[i + 2]
               for i, ln in enumerate(lines) if ln.endswith('Server Report:')]
    reports = [r for r in reports if ' ms ' in r]
    assert len(reports) == 2
    counts = [re.search(r'(\d+)/(\d+) \(', r).groups() for r in reports]
    jitters = [float(re.search(r'(\S+) ms', r).group(1)) for r in reports]
    rec = iperf_records(text)[0]
    assert rec['params']['streams'] == 2
    assert rec['metrics']['throughput']['value'] == pytest.approx(sum(rate_of(r) for r in reports))
    assert rec['metrics']['lost_pct']['value'] == pytest.approx(
        100.0 * sum(int(a) for a, _b in counts) / sum(int(b) for _a, b in counts))
    assert rec['metrics']['jitter']['value'] == pytest.approx(sum(jitters) / 2)


def test_iperf2_text_udp_server_side_sum(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-udp-P2-fk-server.txt')
    rec = iperf_records(text)[0]
    assert validate_record(rec) == []
    assert rec['metrics']['throughput']['value'] == pytest.approx(rate_of(final_line(text, '[SUM]')))
    assert rec['metrics']['lost_pct']['value'] == 0.0  # the SUM line says 0/8922


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize('text,message', [
    ('', 'iperf output is empty'),
    ('   \n\n', 'iperf output is empty'),
    ('Permission denied\nsomething else\n', "first line: 'Permission denied'"),
    ('{"start": {}}', "no 'end' summary"),
    ('[1, 2]', "first line: '[1, 2]'"),
])
def test_garbage(text, message):
    with pytest.raises(IperfParseError) as exc:
        parse_iperf(text)
    assert message in str(exc.value)


def test_truncated_iperf2_text(read_fixture):
    text = fx(read_fixture, 'iperf-2.1.8-tcp.txt')
    cut = '\n'.join(text.splitlines()[:5])
    with pytest.raises(IperfParseError) as exc:
        parse_iperf(cut)
    assert "no result line; first line: '------------------------------------------------------------'" in str(exc.value)


def test_bad_csv_line():
    with pytest.raises(IperfParseError) as exc:
        parse_iperf('20260101120000,1.2.3.4,5,6\n')
    assert "'20260101120000,1.2.3.4,5,6'" in str(exc.value)


def test_non_string():
    with pytest.raises(IperfParseError, match='must be text, got bytes'):
        parse_iperf(b'{}')


# --------------------------------------------------------------------------- argv builders

def test_argv_builders():
    assert server_argv('iperf3', 3, '127.0.0.1', 5201, server_timeout=40) == [
        'iperf3', '-s', '-1', '-B', '127.0.0.1', '-p', '5201', '--idle-timeout', '40']
    assert server_argv('iperf', 2, '10.0.0.1', 5001, udp=True, window='256k', server_timeout=70) == [
        'iperf', '-s', '-B', '10.0.0.1', '-p', '5001', '-u', '-w', '256k', '-t', '70']
    assert client_argv('iperf3', 3, 'h', 5201, time_s=2, reverse=True, parallel=4, window='256k') == [
        'iperf3', '-c', 'h', '-p', '5201', '-t', '2', '-J', '-P', '4', '-R', '-w', '256k']
    assert client_argv('iperf3', 3, 'h', 5201, udp=True, bandwidth='100M')[-3:] == ['-u', '-b', '100M']
    assert client_argv('iperf', 2, 'h', 5001)[-2:] == ['-y', 'C']
    assert client_argv('iperf', 2, 'h', 5001, udp=True, bandwidth='10M')[-5:] == ['-u', '-b', '10M', '-f', 'k']


def test_version_helpers():
    assert ip.version_from_output('iperf version 2.1.8 (12 August 2022) pthreads') == '2.1.8'
    assert ip.version_from_output('iperf 3.12 (cJSON 1.7.15)\nLinux') == '3.12'
    assert version_tuple('2.0.5') < (2, 1) <= version_tuple('2.1.8')


# --------------------------------------------------------------------------- process helpers

@pytest.fixture
def sleeper():
    """A harmless child process, always killed."""
    proc = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_a_process_that_is_not_iperf_is_never_taken_for_a_server(sleeper):
    assert procfs.proc_state(sleeper.pid) not in (None, 'Z', 'X')  # alive (R, S or D while it starts)
    assert iperf_server.is_iperf_server(sleeper.pid) is False
    assert iperf_server.is_iperf_server(os.getpid()) is False


def test_kill_server_escalates_to_sigkill():
    # a child that ignores SIGTERM, like a stuck iperf2 server
    proc = subprocess.Popen([sys.executable, '-c',
                             'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
                             'print("ready", flush=True); time.sleep(60)'], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b'ready'
        t0 = time.monotonic()
        assert iperf_server.kill_server(proc.pid, grace=0.3) == 'SIGKILL'
        assert time.monotonic() - t0 < 5
        assert proc.wait(timeout=5) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert iperf_server.kill_server(proc.pid, grace=0.1) is None  # gone: nothing to do


# --------------------------------------------------------------------------- the filter


# --------------------------------------------------------------------------- iperf2 UDP start race

def test_iperf2_udp_stream_refused_at_its_start_is_no_measurement(read_fixture):
    # three of eight reverse streams were refused (0/0, -nan%) and [SUM] adds up the five others:
    # 4955 Kbits/sec for eight streams asked 1 Mbit/s each would be a wrong number, never a record
    text = fx(read_fixture, 'iperf-2.1.8-udp-R-P8-race.txt')
    err = fx(read_fixture, 'iperf-2.1.8-udp-R-P8-race.stderr')
    assert '[SUM] 0.0000-1.0846 sec   656 KBytes  4955 Kbits/sec' in text
    with pytest.raises(IperfParseError) as exc:
        parse_iperf(text, err)
    assert str(exc.value).startswith('iperf2 UDP stream 2 received no datagrams while another did')
    assert 'recvmsg failed: Connection refused' in str(exc.value)
    with pytest.raises(IperfParseError, match='stream 2 received no datagrams'):
        parse_iperf(text)  # the output alone says it: stderr is not needed


@pytest.mark.parametrize('version,udp,parallel,expected', [
    (2, True, 8, True),
    (2, True, 1, False),   # one stream: no other stream's accept to race with
    (2, False, 8, False),  # TCP: a refused connection is a server that is not there
    (3, True, 8, False),   # iperf3 runs its streams over one control connection
])
def test_udp_stream_refused_only_for_iperf2_udp_with_several_streams(read_fixture, version, udp, parallel, expected):
    err = fx(read_fixture, 'iperf-2.1.8-udp-R-P8-race.stderr')
    assert udp_stream_refused(version, udp, parallel, '', err) is expected
    assert udp_stream_refused(version, udp, parallel, fx(read_fixture, 'iperf-2.1.8-udp-P2-fk.txt'), '') is False


# --------------------------------------------------------------------------- a port per iperf 2 UDP stream

def test_port_per_stream_is_read_from_the_help_text(read_fixture):
    # iperf 2.1.8 prints its help on stderr: the server's "-p, --port #[-#]" and the client's --incr-dstport
    assert ip.port_per_stream(fx(read_fixture, 'iperf-2.1.8-help.stderr')) is True
    # a help text without them (iperf3's) or none at all: one port, the client's retries
    assert ip.port_per_stream(fx(read_fixture, 'iperf3-3.12-help.txt')) is False
    assert ip.port_per_stream('') is False and ip.port_per_stream(None) is False
    # one of the two is not enough: the server's range without the client's --incr-dstport
    help_text = fx(read_fixture, 'iperf-2.1.8-help.stderr')
    assert ip.port_per_stream('\n'.join(l for l in help_text.splitlines() if 'incr-dstport' not in l)) is False
    assert ip.port_per_stream('\n'.join(l for l in help_text.splitlines() if '#[-#]' not in l)) is False


def test_a_server_on_a_port_per_stream_and_its_client():
    argv = server_argv('iperf', 2, '127.0.0.1', 5001, udp=True, server_timeout=70, ports=2)
    assert argv == ['iperf', '-s', '-B', '127.0.0.1', '-p', '5001-5002', '-u', '-t', '70']
    assert ip.server_ports(argv) == [5001, 5002]
    assert ip.server_ports(server_argv('iperf', 2, '127.0.0.1', 5001, udp=True)) == [5001]
    assert ip.server_ports(server_argv('iperf3', 3, '127.0.0.1', 5201, ports=4)) == [5201]  # iperf3: one port
    assert ip.server_ports(['iperf', '-s', '-p']) == [] and ip.server_ports(['iperf', '-s', '-p', 'x-y']) == []
    client = client_argv('iperf', 2, '127.0.0.1', 5001, parallel=2, udp=True, bandwidth='10M', incr_dstport=True)
    assert client[client.index('-P'):client.index('-P') + 3] == ['-P', '2', '--incr-dstport']
    # one stream, iperf3 or not asked: no --incr-dstport
    assert '--incr-dstport' not in client_argv('iperf', 2, 'h', 5001, parallel=1, udp=True, incr_dstport=True)
    assert '--incr-dstport' not in client_argv('iperf3', 3, 'h', 5201, parallel=2, udp=True, incr_dstport=True)
    assert '--incr-dstport' not in client_argv('iperf', 2, 'h', 5001, parallel=2, udp=True)


@pytest.mark.parametrize('name,reverse', [
    ('iperf-2.1.8-udp-R-P2-incr-dstport.txt', True),   # reverse: the client prints its streams as *1, *2
    ('iperf-2.1.8-udp-P2-incr-dstport.txt', False),
])
def test_two_udp_streams_on_ports_of_their_own(read_fixture, name, reverse):
    text = fx(read_fixture, name)
    assert ('127.0.0.1 port 15303' in text) and ('127.0.0.1 port 15302' in text)   # each stream its own port
    s = parse_iperf(text)
    assert s['streams'] == 2 and s['protocol'] == 'udp' and s['reverse'] is reverse
    assert [d['name'] for d in s['stream_detail']] == ['stream 1', 'stream 2']
    per_stream = [d['metrics']['throughput'] for d in s['stream_detail']]
    assert all(10.4 < t < 10.6 for t in per_stream), per_stream
    assert s['throughput_mbit_s'] == pytest.approx(sum(per_stream), rel=1e-3)
    assert s['lost_pct'] == 0.0 and s['packets'] in (1788, 1790)
    recs = iperf_records(text, tool_version='2.1.8', reverse=reverse)
    assert recs[0]['test'] == ('udp_reverse' if reverse else 'udp') and validate_record(recs[0]) == []


def test_a_negative_udp_loss_is_left_out_not_a_refused_record():
    """iperf counts reordered or duplicated datagrams against the lost ones, so a real UDP run can
    report a negative loss; the parser leaves lost_pct out (a warning says why) instead of giving the
    controller a record it must refuse as impossible (the captured iperf3 3.12 output, its loss edited)."""
    from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, plausibility_problems
    from ansible_collections.benchlab.bench.tests.unit.helpers import fixture_text
    doc = json.loads(fixture_text('iperf/iperf3-3.12-udp-b100M.json'))
    doc['end']['sum']['lost_packets'], doc['end']['sum']['lost_percent'] = -3, -0.035
    out = ip.parse_iperf3_json(json.dumps(doc))
    assert out['lost_pct'] is None and any('negative loss (-0.035 %, -3 datagrams' in w for w in out['warnings'])
    assert plausibility_problems({'metrics': {'lost_pct': metric(-0.035, '%', 'lower')}})
