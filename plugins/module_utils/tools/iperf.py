# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The iperf parsers (iperf3 JSON, iperf2 CSV and text), the records and the argv builders (pure).

Formats read (fixtures in tests/unit/fixtures/iperf, each with the command that made it):
- iperf3 ``-J`` (client or server side). A failed run still prints a document, with an ``error``
  key, and exits 0 (connection refused): that is an error here, never a record.
- iperf2 ``-y C`` CSV: ``stamp,local_ip,local_port,remote_ip,remote_port,id,start-end,bytes,bits/s``
  plus ``jitter_ms,lost,total,lost_pct,out_of_order`` for UDP. iperf 2.1 prints no SUM line for
  ``-P`` (iperf 2.0 prints one with id -1) and, on the client, no server report for UDP (total
  -1): UDP receiver figures then come from the text format or the server's own output.
- iperf2 text (``-f k`` recommended, any ``-f``), ``[ *1]`` reverse ids, ``[SUM]`` lines, the
  UDP ``Server Report`` and the ``-e`` ``Rtry`` column.
iperf2 reports connection failures on stderr and exits 0; they are errors here.

Throughput is in Mbit/s (10^6 bits/s): what the receiver got where the output says it (iperf3
``sum_received``, the iperf2 UDP server report), otherwise what the sender wrote (iperf2 TCP).

The server process (start, recognise, stop) is module_utils/tools/iperf_server.py.
"""

import json
import math
import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import first_line, quote_line
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number, metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import tail

CSV_RE = re.compile(r'^\d{14}(?:\.\d+)?,')
ID = r'\[\s*\*?(?P<id>\d+|SUM(?:-\d+)?)\]'
RESULT_RE = re.compile(
    ID + r'\s+(?P<start>\d+(?:\.\d+)?)\s*-\s*(?P<end>\d+(?:\.\d+)?)\s+sec\s+(?P<xfer>\d+(?:\.\d+)?)\s+(?P<xunit>[KMGT]?Bytes)'
    r'\s+(?P<rate>\d+(?:\.\d+)?)\s+(?P<runit>[KMGT]?(?:bits|Bytes)/sec)(?P<rest>.*)$')
UDP_REST_RE = re.compile(
    r'^\s+(?:(?P<jitter>\d+(?:\.\d+)?)\s+ms\s+)?(?P<lost>-?\d+)/\s*(?P<total>-?\d+)\s+\((?P<pct>[-+]?nan|[-+0-9.e]+)%\)')
ENHANCED_REST_RE = re.compile(r'^\s+(?P<writes>\d+)/(?P<errs>\d+)\s+(?P<retry>\d+)\s')
IPERF3_TEXT_RE = re.compile(r'^(?:Connecting to host |iperf Done\.|\[ ID\] Interval\s+Transfer\s+Bitrate|'
                            r'Server listening on \d+\s*(?:\(test #\d+\))?$|iperf3: )')
IPERF2_TEXT_RE = re.compile(r'^(?:Client connecting to |Server listening on (?:TCP|UDP) port |\[ ID\] Interval\s+Transfer\s+Bandwidth)')
ERROR_RES = (
    re.compile(r'^(?:tcp |udp )?connect failed: .*$'),
    re.compile(r'^read failed: .*$'),
    re.compile(r'^write failed: .*$'),
    re.compile(r'^recvmsg failed: .*$'),
    re.compile(r'^(?:ERROR|error): .*$'),
    re.compile(r'^iperf3: error - .*$'),
    re.compile(r'^(?:\[\s*\d+\] )?WARNING: did not receive ack of last datagram.*$'),
)
VERSION2_RE = re.compile(r'iperf version (\d+\.\d+(?:\.\d+)?\S*)')
VERSION3_RE = re.compile(r'iperf (\d+\.\d+(?:\.\d+)?\S*)')

RATE_FACTORS = {  # to bits/s; iperf2: lowercase-format rates are 10^3 based, Bytes 2^10 based
    'bits/sec': 1.0, 'Kbits/sec': 1e3, 'Mbits/sec': 1e6, 'Gbits/sec': 1e9, 'Tbits/sec': 1e12,
    'Bytes/sec': 8.0, 'KBytes/sec': 8.0 * 1024, 'MBytes/sec': 8.0 * 1024 ** 2,
    'GBytes/sec': 8.0 * 1024 ** 3, 'TBytes/sec': 8.0 * 1024 ** 4,
}


class IperfParseError(ValueError):
    """iperf output that cannot be read, or a run that failed; the message says which and quotes
    the line."""


# ---------------------------------------------------------------------------------------------
# helpers

def error_lines(*texts):
    """The failure messages iperf printed (connect/read failures, iperf3 errors), in order."""
    found = []
    for text in texts:
        for line in (text or '').splitlines():
            s = line.strip()
            if any(r.match(s) for r in ERROR_RES) and s not in found:
                found.append(s)
    return found


def _num(d, key, where):
    v = d.get(key) if isinstance(d, dict) else None
    if not is_number(v):
        raise IperfParseError('iperf3 JSON: %s.%s is missing or not a number (%r)' % (where, key, v))
    return float(v)


def version_from_output(text):
    """'iperf version 2.1.8 (12 August 2022) pthreads' -> '2.1.8'; 'iperf 3.12 (cJSON ...)' -> '3.12'."""
    for r in (VERSION2_RE, VERSION3_RE):
        m = r.search(text or '')
        if m:
            return m.group(1)
    return None


def detect_format(text):
    """'iperf3-json', 'iperf2-csv' or 'iperf2-text'; IperfParseError for anything else."""
    if not isinstance(text, str):
        raise IperfParseError('iperf output must be text, got %s' % type(text).__name__)
    first = first_line(text)
    if first is None:
        errors = error_lines(text)
        raise IperfParseError('iperf output is empty%s' % (': ' + '; '.join(errors) if errors else ''))
    if first.startswith('{'):
        return 'iperf3-json'
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if any(CSV_RE.match(ln) for ln in lines):
        return 'iperf2-csv'
    if any(IPERF2_TEXT_RE.match(ln) or RESULT_RE.match(ln) for ln in lines) and not any(
            IPERF3_TEXT_RE.match(ln) for ln in lines):
        return 'iperf2-text'
    if any(IPERF3_TEXT_RE.match(ln) for ln in lines):
        errors = error_lines(text)
        if errors:
            raise IperfParseError('iperf3 failed: %s' % '; '.join(errors))
        raise IperfParseError('iperf3 text output is not read: run iperf3 with -J (--json); first line: %s'
                              % quote_line(first))
    errors = error_lines(text)
    if errors:
        raise IperfParseError('iperf failed: %s' % '; '.join(errors))
    raise IperfParseError('not iperf3 JSON, iperf2 CSV (-y C) or iperf2 text output; first line: %s' % quote_line(first))


# ---------------------------------------------------------------------------------------------
# iperf3 JSON

def parse_iperf3_json(text):
    """Read one ``iperf3 -J`` document into a summary dict (see module docstring)."""
    if not isinstance(text, str):
        raise IperfParseError('iperf output must be text, got %s' % type(text).__name__)
    start = text.find('{')
    if start < 0:
        raise IperfParseError('iperf3 printed no JSON document (was -J given?); first line: %s'
                              % quote_line(first_line(text)))
    doc = _iperf3_document(text, start)
    if doc.get('error'):
        raise IperfParseError('iperf3 reported an error: %s' % doc['error'])
    st = doc.get('start') if isinstance(doc.get('start'), dict) else {}
    ts = st.get('test_start') if isinstance(st.get('test_start'), dict) else {}
    end = doc.get('end')
    if not isinstance(end, dict) or not end:
        raise IperfParseError("iperf3 JSON output has no 'end' summary (interrupted run?); first line: %s"
                              % quote_line(first_line(text)))
    protocol = str(ts.get('protocol') or ('UDP' if 'sum' in end and 'jitter_ms' in end.get('sum', {}) else 'TCP')).lower()
    out = {
        'format': 'iperf3-json', 'tool': 'iperf3',
        'version': version_from_output(str(st.get('version') or '')),
        'protocol': protocol,
        'streams': ts.get('num_streams', len(end.get('streams') or []) or None),
        'reverse': bool(ts.get('reverse')) if 'reverse' in ts else None,
        'duration': ts.get('duration'),
        'window_bytes': st.get('sock_bufsize') or None,
        'throughput_mbit_s': None, 'sender_throughput_mbit_s': None,
        'retransmits': None, 'jitter_ms': None, 'lost_pct': None, 'lost_packets': None, 'packets': None,
        'warnings': [],
    }
    if protocol == 'udp':
        _iperf3_udp_end(end, out)
    else:
        _iperf3_tcp_end(end, out)
    if not received_anything(out):
        raise IperfParseError('iperf3 moved no data (throughput 0)')
    out['stream_detail'] = _iperf3_streams(end.get('streams'), protocol)
    out['intervals'] = _iperf3_intervals(doc.get('intervals'))
    return out


def _iperf3_intervals(intervals):
    """The throughput of each reporting interval (iperf3 -i, 1 s by default) in Mbit/s, in order, and
    the mean interval length: (values, seconds) from intervals[].sum, leaving out the omitted ones
    (-O); ([], None) when there are none."""
    values, seconds = [], []
    for item in intervals if isinstance(intervals, list) else []:
        summ = item.get('sum') if isinstance(item, dict) else None
        if not isinstance(summ, dict) or summ.get('omitted'):
            continue
        bps, sec = summ.get('bits_per_second'), summ.get('seconds')
        if not is_number(bps) or not math.isfinite(bps) or bps < 0:
            continue
        values.append(bps / 1e6)
        if is_number(sec) and sec > 0:
            seconds.append(float(sec))
    return values, (sum(seconds) / len(seconds) if seconds else None)


def _iperf3_document(text, start):
    """The JSON object starting at `start`; IperfParseError when it is cut short or not an object."""
    try:
        doc, _end = json.JSONDecoder().raw_decode(text, start)
    except ValueError as e:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        raise IperfParseError('iperf3 JSON output is truncated or not valid JSON (%s); last line: %s'
                              % (e, quote_line(lines[-1].strip() if lines else None)))
    if not isinstance(doc, dict):
        raise IperfParseError('iperf3 JSON output is not an object; first line: %s' % quote_line(first_line(text)))
    return doc


def _iperf3_udp_end(end, out):
    """UDP figures from the end summary: the received rate (the sending rate, with a warning, when
    this iperf3 has no sum_received), jitter and loss."""
    summ = end.get('sum')
    received = end.get('sum_received')
    if not isinstance(summ, dict) and not isinstance(received, dict):
        raise IperfParseError("iperf3 JSON: UDP run without an end 'sum' (no receiver report)")
    if isinstance(received, dict):
        out['throughput_mbit_s'] = _num(received, 'bits_per_second', 'end.sum_received') / 1e6
    else:
        out['throughput_mbit_s'] = _num(summ, 'bits_per_second', 'end.sum') / 1e6
        out['warnings'].append('this iperf3 reports no sum_received for UDP: throughput is the sending rate')
    rx = summ if isinstance(summ, dict) else received
    out['jitter_ms'] = _num(rx, 'jitter_ms', 'end.sum')
    out['lost_pct'] = _num(rx, 'lost_percent', 'end.sum')
    out['lost_packets'] = rx.get('lost_packets')
    out['packets'] = rx.get('packets')
    _no_negative_loss(out)
    if isinstance(end.get('sum_sent'), dict):
        out['sender_throughput_mbit_s'] = _num(end['sum_sent'], 'bits_per_second', 'end.sum_sent') / 1e6


def _iperf3_tcp_end(end, out):
    """TCP figures from the end summary: the received rate, the sender's rate and retransmits."""
    received = end.get('sum_received')
    sent = end.get('sum_sent')
    if not isinstance(received, dict):
        raise IperfParseError("iperf3 JSON: TCP run without end.sum_received")
    out['throughput_mbit_s'] = _num(received, 'bits_per_second', 'end.sum_received') / 1e6
    if isinstance(sent, dict):
        if sent.get('bytes'):
            out['sender_throughput_mbit_s'] = _num(sent, 'bits_per_second', 'end.sum_sent') / 1e6
        if 'retransmits' in sent:
            out['retransmits'] = int(_num(sent, 'retransmits', 'end.sum_sent'))


def _iperf3_streams(streams, protocol):
    """Each parallel stream's own figures (end.streams), for the record's workers.detail."""
    detail = []
    for i, st in enumerate(streams if isinstance(streams, list) else []):
        part = (st.get('udp') if protocol == 'udp' else st.get('receiver')) if isinstance(st, dict) else None
        if not isinstance(part, dict) or not isinstance(part.get('bits_per_second'), (int, float)):
            continue
        # UDP: iperf3 gives each stream's sending rate (and its receiver's jitter and loss), not its received rate
        m = {('sent_throughput' if protocol == 'udp' else 'throughput'): part['bits_per_second'] / 1e6}
        for key, name in (('jitter_ms', 'jitter'), ('lost_percent', 'lost_pct')):
            if isinstance(part.get(key), (int, float)):
                m[name] = float(part[key])
        detail.append({'name': 'stream %d' % (i + 1), 'metrics': m})
    return detail


START_ATTEMPTS = 3
# Seconds between two starts of a client whose UDP stream was refused (the server's port opens again)
START_PAUSE_S = 0.5


def port_per_stream(help_text):
    """Whether an iperf 2 (its --help text) gives each parallel UDP stream a port of its own: its
    server listens on a port range (``-p, --port #[-#]``, iperf 2.1) and its client sends stream k to
    port + k - 1 (``--incr-dstport``). Then no stream races another's accept (udp_stream_refused)."""
    text = help_text or ''
    return '--incr-dstport' in text and bool(re.search(r'--port\s+#\[-#\]', text))


def server_ports(argv):
    """The ports a server argv (server_argv) listens on: [port] or the range's ports."""
    for i, arg in enumerate(argv[:-1]):
        if arg in ('-p', '--port'):
            first, _sep, last = argv[i + 1].partition('-')
            if first.isdigit() and (not last or last.isdigit()):
                return list(range(int(first), int(last or first) + 1))
    return []


def udp_stream_refused(version, udp, parallel, *texts):
    """True when an iperf 2 UDP client of several streams had a stream refused at its start. The
    iperf 2 UDP server connects its socket to each stream it accepts and then opens the port again:
    a stream whose first datagram comes in between gets ICMP port unreachable (the client prints
    "recvmsg failed: Connection refused" and may crash). That run measured nothing for the stream;
    starting the client again is safe (the server keeps listening)."""
    return (version == 2 and bool(udp) and parallel > 1
            and any('Connection refused' in (t or '') for t in texts))


def received_anything(summary):
    return bool(summary.get('throughput_mbit_s'))


# ---------------------------------------------------------------------------------------------
# iperf2 CSV and text

def _interval(text):
    a, _sep, b = text.partition('-')
    return float(a), float(b)


def _finals(rows):
    """Per stream id, the report that starts at 0 and ends last (interval reports are skipped)."""
    best = {}
    for r in rows:
        if r['start'] > 0.05:
            continue
        cur = best.get(r['id'])
        if cur is None or r['end'] >= cur['end']:
            best[r['id']] = r
    return best


def _is_sum(stream_id):
    return stream_id == -1 or str(stream_id).startswith('SUM')


def _summarize2(fmt, sender_rows, receiver_rows, udp, errors, retries=None):
    out = {'format': fmt, 'tool': 'iperf', 'version': None, 'protocol': 'udp' if udp else 'tcp',
           'streams': None, 'reverse': None, 'duration': None, 'window_bytes': None,
           'throughput_mbit_s': None, 'sender_throughput_mbit_s': None, 'retransmits': None,
           'jitter_ms': None, 'lost_pct': None, 'lost_packets': None, 'packets': None, 'warnings': []}
    senders = _finals(sender_rows)
    receivers = _finals(receiver_rows)
    per_stream_s = [r for k, r in senders.items() if not _is_sum(k)]
    sum_s = [r for k, r in senders.items() if _is_sum(k)]
    if senders:
        out['streams'] = len(per_stream_s) or None
        out['sender_throughput_mbit_s'] = (sum_s[0]['bps'] if sum_s else sum(r['bps'] for r in per_stream_s)) / 1e6
        out['duration'] = max(r['end'] for r in senders.values())
    if udp:
        per_stream_r = [r for k, r in receivers.items() if not _is_sum(k)]
        sum_r = [r for k, r in receivers.items() if _is_sum(k)]
        if not receivers:
            raise IperfParseError(
                'iperf2 UDP output has no server report (jitter/loss): the server did not answer - is it '
                'running with -u, bound to this address and port, and reachable?%s'
                % (' iperf said: %s' % '; '.join(errors[:3]) if errors else ''))
        if out['streams'] is None:
            out['streams'] = len(per_stream_r) or None
        if sum_r:
            rx = sum_r[0]
            out['throughput_mbit_s'] = rx['bps'] / 1e6
            lost, total = rx['lost'], rx['total']
        else:
            out['throughput_mbit_s'] = sum(r['bps'] for r in per_stream_r) / 1e6
            lost = sum(r['lost'] for r in per_stream_r)
            total = sum(r['total'] for r in per_stream_r)
        silent = [r for r in per_stream_r if r['total'] == 0]
        if silent and len(per_stream_r) > 1:
            raise IperfParseError(
                'iperf2 UDP stream %s received no datagrams while another did: that stream never ran, the sum would '
                'count it as 0%s' % (silent[0]['id'], ' (iperf said: %s)' % '; '.join(errors[:3]) if errors else ''))
        jitters = [r['jitter'] for r in per_stream_r if r.get('jitter') is not None]
        if not jitters and sum_r and sum_r[0].get('jitter') is not None:
            jitters = [sum_r[0]['jitter']]
        out['jitter_ms'] = sum(jitters) / len(jitters) if jitters else None
        out['lost_packets'], out['packets'] = lost, total
        out['lost_pct'] = 100.0 * lost / total if total > 0 else None
        if out['lost_pct'] is None:
            raise IperfParseError('iperf2 UDP server report counts no datagrams (0 received)')
        _no_negative_loss(out)
        if out['duration'] is None:
            out['duration'] = max(r['end'] for r in receivers.values())
    else:
        if not senders:
            if errors:
                raise IperfParseError('iperf2 failed: %s' % '; '.join(errors[:3]))
            return out
        out['throughput_mbit_s'] = out['sender_throughput_mbit_s']
        if retries:
            out['retransmits'] = sum(retries.values())
    rows = [r for k, r in (receivers if udp else senders).items() if not _is_sum(k)]
    out['stream_detail'] = [{'name': 'stream %s' % r['id'], 'metrics': {'throughput': r['bps'] / 1e6}}
                            for r in sorted(rows, key=lambda r: str(r['id']))]
    return out


def parse_iperf2_csv(text, stderr=''):
    """Read iperf2 ``-y C`` output (client or server side) into a summary dict."""
    sender, receiver = [], []
    udp = False
    for line in text.splitlines():
        s = line.strip()
        if not s or not CSV_RE.match(s):
            continue
        f = s.split(',')
        if len(f) < 9:
            raise IperfParseError('iperf2 CSV line with %d fields (9 or 14 expected): %s' % (len(f), quote_line(s)))
        try:
            start, end = _interval(f[6])
            row = {'id': int(f[5]), 'start': start, 'end': end, 'bytes': int(f[7]), 'bps': float(f[8])}
            if len(f) >= 14:
                udp = True
                row.update(jitter=float(f[9]), lost=int(f[10]), total=int(f[11]), pct=float(f[12]))
        except ValueError:
            raise IperfParseError('iperf2 CSV line that cannot be read: %s' % quote_line(s))
        if len(f) >= 14 and row['total'] >= 0:
            receiver.append(row)
        else:
            sender.append(row)
    errors = error_lines(stderr, text)
    out = _summarize2('iperf2-csv', sender, receiver, udp, errors)
    if out['throughput_mbit_s'] is None:
        raise IperfParseError('iperf2 CSV output has no final report%s; first line: %s'
                              % (' (%s)' % '; '.join(errors[:3]) if errors else '', quote_line(first_line(text))))
    return out


def parse_iperf2_text(text, stderr=''):
    """Read iperf2 text output (client or server side, any -f) into a summary dict."""
    sender, receiver = [], []
    retries = {}
    udp = reverse = False
    enhanced = False
    window = None
    for line in text.splitlines():
        s = line.strip()
        if 'UDP port' in s or re.search(r'Sent \d+ datagrams', s) or 'Server Report:' in s:
            udp = True
        if '(reverse)' in s or s.startswith('[ *'):
            reverse = True
        if s.startswith('[ ID]') and 'Rtry' in s:
            enhanced = True
        m = re.match(r'^TCP window size:\s*(\d+(?:\.\d+)?)\s*([KMG]?)Byte', s)
        if m and window is None:
            window = int(float(m.group(1)) * {'': 1, 'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3}[m.group(2)])
        m = RESULT_RE.match(s)
        if not m:
            continue
        sid = m.group('id')
        row = {'id': sid if sid.startswith('SUM') else int(sid), 'start': float(m.group('start')),
               'end': float(m.group('end')),
               'bps': float(m.group('rate')) * RATE_FACTORS[m.group('runit')]}
        rest = m.group('rest')
        u = UDP_REST_RE.match(rest)
        if u:
            row.update(jitter=float(u.group('jitter')) if u.group('jitter') else None,
                       lost=int(u.group('lost')), total=int(u.group('total')))
            if row['total'] >= 0:
                receiver.append(row)
                continue
        sender.append(row)
        e = ENHANCED_REST_RE.match(rest) if enhanced else None
        if e and row['start'] <= 0.05 and not sid.startswith('SUM'):
            retries[row['id']] = int(e.group('retry'))
    errors = error_lines(stderr, text)
    if not sender and not receiver:
        if errors:
            raise IperfParseError('iperf2 failed: %s' % '; '.join(errors[:3]))
        raise IperfParseError('iperf2 text output has no result line; first line: %s' % quote_line(first_line(text)))
    if not udp and receiver:
        udp = True
    out = _summarize2('iperf2-text', sender, receiver, udp, errors, retries=retries)
    if out['throughput_mbit_s'] is None and receiver and not udp:
        out['throughput_mbit_s'] = sum(r['bps'] for r in _finals(receiver).values()) / 1e6
    if out['throughput_mbit_s'] is None:
        raise IperfParseError('iperf2 text output has no final report%s' % (
            ': ' + '; '.join(errors[:3]) if errors else ''))
    out['reverse'] = reverse
    out['window_bytes'] = window
    return out


def parse_iperf(text, stderr=''):
    """Auto-detect the format and return the summary dict; `stderr` (optional) is searched for
    the failure messages iperf2 prints there."""
    if isinstance(text, str) and not text.strip():
        errors = error_lines(stderr)
        if errors:
            raise IperfParseError('iperf failed: %s' % '; '.join(errors[:3]))
    fmt = detect_format(text)
    if fmt == 'iperf3-json':
        return parse_iperf3_json(text)
    if fmt == 'iperf2-csv':
        return parse_iperf2_csv(text, stderr)
    return parse_iperf2_text(text, stderr)


# ---------------------------------------------------------------------------------------------
# records

def iperf_metrics(summary):
    """The record's metrics (docs/usage.md: throughput, retransmits where known, jitter/lost_pct for UDP)."""
    metrics = {'throughput': metric(summary['throughput_mbit_s'], 'Mbit/s', 'higher')}
    if summary.get('retransmits') is not None:
        metrics['retransmits'] = metric(summary['retransmits'], 'count', 'lower')
    if summary['protocol'] == 'udp':
        if summary.get('jitter_ms') is not None:
            metrics['jitter'] = metric(summary['jitter_ms'], 'ms', 'lower')
        if summary.get('lost_pct') is not None:
            metrics['lost_pct'] = metric(summary['lost_pct'], '%', 'lower')
    return metrics


def iperf_test_name(protocol, reverse):
    return '%s%s' % (protocol, '_reverse' if reverse else '')


def iperf_records(text, stderr='', tool_version=None, labels=None, params=None, warnings=None,
                  reverse=None, test=None, **extra):
    """Parse iperf3 JSON or iperf2 CSV/text output into a list of result records (one per run).

    `params` (what the caller asked) replaces the params read from the output; `reverse` tells the
    direction for iperf2 CSV, which does not show it; `test` overrides the record's test name.
    """
    summary = parse_iperf(text, stderr)
    if reverse is None:
        reverse = summary.get('reverse')
    if params is None:
        params = {'protocol': summary['protocol'], 'direction': 'reverse' if reverse else 'forward',
                  'version': 3 if summary['tool'] == 'iperf3' else 2}
        if summary.get('streams'):
            params['streams'] = summary['streams']
        if summary.get('window_bytes'):
            params['window_bytes'] = summary['window_bytes']
        if summary.get('duration') is not None:
            params['time'] = summary['duration']
        params['format'] = summary['format']
    rec = new_record(summary['tool'], test or iperf_test_name(summary['protocol'], reverse), iperf_metrics(summary),
                     tool_version=tool_version or summary.get('version'), labels=labels, params=params,
                     warnings=list(warnings or []) + summary['warnings'],
                     raw_tail=tail(text if summary['format'] != 'iperf3-json' else _json_tail(text), 8),
                     workers=stream_workers(summary), **extra)
    values, seconds = summary.get('intervals') or ([], None)
    if len(values) > 1:
        # the spread within the run: iperf3's throughput per reporting interval
        rec['distributions'] = {'throughput': dict(
            {'kind': 'intervals', 'of': 'throughput per reporting interval', 'unit': 'Mbit/s',
             'values': [round(v, 6) for v in values]}, **({'interval_s': round(seconds, 6)} if seconds else {}))}
    return [rec]


def stream_workers(summary):
    """The record's `workers` for parallel streams (-P): the tool's own sum is the measurement."""
    detail = summary.get('stream_detail') or []
    count = max(summary.get('streams') or 0, len(detail))
    if count < 2:
        return None
    aggregate = ('iperf3: end.sum_received, the sum over the streams' if summary['tool'] == 'iperf3'
                 else 'iperf2: the [SUM] line (the sum of the streams where iperf prints none)')
    out = {'count': count, 'kind': 'iperf parallel streams', 'aggregate': aggregate}
    if detail:
        out['detail'] = detail
    return out


def _json_tail(text):
    """A short, readable tail for a JSON document: the end summary, not closing braces."""
    try:
        doc = json.loads(text[text.find('{'):])
        end = doc.get('end', {})
        return '\n'.join('%s: %s' % (k, json.dumps(end[k], sort_keys=True))
                         for k in ('sum_sent', 'sum_received', 'sum') if k in end)
    except (ValueError, AttributeError):
        return text


# ---------------------------------------------------------------------------------------------
# argv builders (pure)

def server_argv(binary, version, bind, port, udp=False, window=None, server_timeout=None, ports=1):
    """The one-off server: iperf3 -s -1 (exits after one test, --idle-timeout as a safety net);
    iperf2 -s (-t bounds its life: it has no one-off mode); an iperf 2 server for `ports` > 1
    listens on port..port+ports-1 (port_per_stream)."""
    span = '%d-%d' % (port, port + ports - 1) if version == 2 and ports > 1 else str(port)
    argv = [binary, '-s', '-B', bind, '-p', span]
    if version == 3:
        argv.insert(2, '-1')
        if server_timeout:
            argv += ['--idle-timeout', str(int(server_timeout))]
    else:
        if udp:
            argv.append('-u')
        if window:
            argv += ['-w', str(window)]
        if server_timeout:
            argv += ['-t', str(int(server_timeout))]
    return argv


def client_argv(binary, version, server, port, time_s=10, reverse=False, parallel=1, window=None,
                udp=False, bandwidth=None, incr_dstport=False):
    """The client: iperf3 -J; iperf2 -y C for TCP, text -f k for UDP (its CSV has no server report);
    iperf2 with `incr_dstport` and several streams: stream k to port + k - 1 (port_per_stream)."""
    argv = [binary, '-c', server, '-p', str(port), '-t', str(time_s)]
    if version == 3:
        argv.append('-J')
    if parallel and int(parallel) > 1:
        argv += ['-P', str(int(parallel))]
        if version == 2 and incr_dstport:
            argv.append('--incr-dstport')
    if reverse:
        argv.append('-R')
    if window:
        argv += ['-w', str(window)]
    if udp:
        argv.append('-u')
        if bandwidth:
            argv += ['-b', str(bandwidth)]
    if version == 2:
        argv += ['-f', 'k'] if udp else ['-y', 'C']
    return argv


def _no_negative_loss(out):
    """A negative loss is not a measurement of loss (iperf counts datagrams that arrived out of order
    or twice against the lost ones): left out, with a warning, instead of a record the controller
    refuses as impossible."""
    if isinstance(out.get('lost_pct'), (int, float)) and out['lost_pct'] < 0:
        out['warnings'].append('iperf reported a negative loss (%.3g %%, %s datagrams: more arrived than were counted '
                               'as sent, e.g. reordered or duplicated): lost_pct left out' % (
                                   out['lost_pct'], out.get('lost_packets')))
        out['lost_pct'] = None
