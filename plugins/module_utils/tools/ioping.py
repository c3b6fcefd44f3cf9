# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The ioping parser (pure functions over what ioping prints) and its argv.

ioping measures the latency of single I/O requests: what one request costs through a layer (DRBD
protocol C, a guest's virtual disk) rather than how much data flows. Formats read (fixtures in
tests/unit/fixtures/ioping, each with the command that made it):

- ``-B``: one line of ten integers per statistics period, the final statistics last: requests
  counted, their run time (ns), iops, bytes per second, min, avg, max and mdev (ns), requests
  generated (the warm-up and requests outside -t/-T included), total time (ns). The module runs this.
- ``-J``: a JSON array, one object per request (``io``) and statistics objects (``stat``, times in ns).
- the human output: per request ``4 KiB <<< /dir (ext4 /dev/vda 252.0 GiB): request=2 time=388.8 us``
  (``>>>`` for writes), then the ``--- ... ioping statistics ---`` block with ``9 requests completed
  in 2.82 ms, 36 KiB read, 3.20 k iops, 12.5 MiB/s`` and ``min/avg/max/mdev = 181.6 us / ...``
  (ioping rounds these to three digits; ``-B`` and ``-J`` are exact).

Metrics (of the requests ioping counted: never its warm-up request): ``latency_min``,
``latency_avg``, ``latency_max``, ``latency_mdev`` in ms, ``iops``, ``throughput`` in MB/s
(10^6 bytes/s). ioping's errors (``ioping: ...``) and a run in which no request counted are
failures, never a record.
"""

import json
import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import first_line, quote_line
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import tail

TOOL = 'ioping'
RAW_RE = re.compile(r'^\d+(?: \d+){9}$')
STATS_RE = re.compile(r'^--- (?P<target>.*) ioping statistics ---$')
COMPLETED_RE = re.compile(
    r'^(?P<n>[0-9.]+)(?: (?P<nk>[kMGT]))? requests completed in (?P<t>[0-9.]+) (?P<tu>ns|us|ms|s|min|hour|day), '
    r'(?P<size>[0-9.]+) (?P<su>B|[KMGTP]iB) (?P<dir>read|written), '
    r'(?P<iops>[0-9.]+)(?: (?P<ik>[kMGT]))? iops, (?P<bps>[0-9.]+) (?P<bu>B|[KMGTP]iB)/s$')
MINMAX_RE = re.compile(r'^min/avg/max/mdev = ' + ' / '.join([r'(?P<%s>[0-9.]+) (?P<%s_u>ns|us|ms|s|min|hour|day)' % (k, k)
                                                             for k in ('min', 'avg', 'max', 'mdev')]) + r'$')
REQUEST_RE = re.compile(r'^\S+ (?:B|[KMGTP]iB) (?P<dir><<<|>>>) .*: request=\d+ time=[0-9.]+ (?:ns|us|ms|s)\b')
TARGET_RE = re.compile(r'^(?P<path>.*) \((?P<fstype>\S+) (?P<device>\S+) [0-9.]+ (?:B|[KMGTP]iB)\)$')
ERROR_RE = re.compile(r'^ioping: (?P<msg>.+)$')
VERSION_RE = re.compile(r'^ioping (?P<version>\d\S*)\s*$')
# ioping's own units (print_time, print_size, print_int in ioping.c): powers of 1000 for time and
# counts, of 1024 for sizes.
TIME_NS = {'ns': 1.0, 'us': 1e3, 'ms': 1e6, 's': 1e9, 'min': 60e9, 'hour': 3600e9, 'day': 86400e9}
COUNT = {None: 1.0, '': 1.0, 'k': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12}
SIZE = {'B': 1, 'KiB': 1024, 'MiB': 1024 ** 2, 'GiB': 1024 ** 3, 'TiB': 1024 ** 4, 'PiB': 1024 ** 5}


class IopingParseError(ValueError):
    """ioping output that cannot be read, or an ioping that failed; the message says which."""


def version_from_output(text):
    """'ioping 1.3' (ioping -v) -> '1.3', else None."""
    m = VERSION_RE.match((first_line(text) or ''))
    return m.group('version') if m else None


def error_lines(*texts):
    """ioping's own error messages (``ioping: ...``)."""
    return [m.group('msg') for text in texts for line in (text or '').splitlines() for m in [ERROR_RE.match(line.strip())]
            if m]


def _stats(requests, time_ns, iops, bps, min_ns, avg_ns, max_ns, mdev_ns, **extra):
    out = dict(requests=int(requests), time_ms=time_ns / 1e6, iops=float(iops), throughput_mb_s=bps / 1e6,
               min_ms=min_ns / 1e6, avg_ms=avg_ns / 1e6, max_ms=max_ns / 1e6, mdev_ms=mdev_ns / 1e6)
    out.update(extra)
    return out


def parse_raw(text):
    """The final (last) ``-B`` line."""
    lines = [line.strip() for line in text.splitlines() if RAW_RE.match(line.strip())]
    if not lines:
        return None
    f = [int(x) for x in lines[-1].split()]
    return _stats(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], generated=f[8], total_time_ms=f[9] / 1e6,
                  format='raw', periods=len(lines) - 1)


def _target(doc):
    t = doc.get('target') if isinstance(doc.get('target'), dict) else {}
    return dict((k, t[k]) for k in ('path', 'fstype', 'device') if k in t)


def parse_json(text):
    """The last ``stat`` object of ``-J`` output (and the direction of its requests)."""
    try:
        docs = json.loads(text)
    except ValueError as e:
        raise IopingParseError('ioping -J output is not JSON: %s' % e)
    if not isinstance(docs, list):
        raise IopingParseError('ioping -J output is not a JSON array')
    stats = [d for d in docs if isinstance(d, dict) and isinstance(d.get('stat'), dict)]
    if not stats:
        raise IopingParseError('ioping -J output has no statistics object ("stat")')
    s = stats[-1]['stat']
    ops = [d['io'].get('operation') for d in docs if isinstance(d, dict) and isinstance(d.get('io'), dict)]
    try:
        return _stats(s['count'], s['time'], s['iops'], s['bps'], s['min'], s['avg'], s['max'], s['mdev'],
                      format='json', direction='write' if 'write' in ops else ('read' if ops else None),
                      generated=(stats[-1].get('load') or {}).get('count'), target=_target(stats[-1]))
    except KeyError as e:
        raise IopingParseError('ioping -J statistics without %s' % e)


def _text_stats(lines, i):
    """The statistics block whose head is lines[i]."""
    block = dict(target=None)
    m = TARGET_RE.match(STATS_RE.match(lines[i]).group('target'))
    if m:
        block['target'] = m.groupdict()
    done = mm = None
    for line in lines[i + 1:i + 5]:
        done = done or COMPLETED_RE.match(line)
        mm = mm or MINMAX_RE.match(line)
    if not done or not mm:
        raise IopingParseError('ioping statistics without their %s line: %s' % (
            'completed' if not done else 'min/avg/max/mdev', quote_line(lines[i])))
    ns = dict((k, float(mm.group(k)) * TIME_NS[mm.group(k + '_u')]) for k in ('min', 'avg', 'max', 'mdev'))
    bps = float(done.group('bps')) * SIZE[done.group('bu')]
    return _stats(float(done.group('n')) * COUNT[done.group('nk')], float(done.group('t')) * TIME_NS[done.group('tu')],
                  float(done.group('iops')) * COUNT[done.group('ik')], bps, ns['min'], ns['avg'], ns['max'], ns['mdev'],
                  format='text', direction='write' if done.group('dir') == 'written' else 'read', target=block['target'],
                  bytes=int(float(done.group('size')) * SIZE[done.group('su')]))


def parse_text(text):
    lines = [line.rstrip() for line in text.splitlines()]
    heads = [i for i, line in enumerate(lines) if STATS_RE.match(line)]
    return _text_stats(lines, heads[-1]) if heads else None


def parse_ioping(text, stderr=''):
    """ioping's output in any of its three formats -> its final statistics (a dict). IopingParseError
    for ioping's own error, an output without statistics, or statistics of no request."""
    errors = error_lines(stderr, text)
    if errors:
        raise IopingParseError('ioping failed: %s' % '; '.join(errors))
    body = (text or '').strip()
    try:
        parsed = parse_json(body) if body.startswith('[') else (parse_text(body) or parse_raw(body))
    except IopingParseError:
        raise
    except (TypeError, ValueError, OverflowError, AttributeError, KeyError) as e:
        raise IopingParseError('ioping output not understood (%s); first line: %s' % (e, quote_line(first_line(body))))
    if parsed is None:
        raise IopingParseError('no ioping statistics in the output (neither -B, -J nor its human form); first line: %s'
                               % quote_line(first_line(body)))
    if parsed['requests'] < 1:
        raise IopingParseError('ioping counted no request (the first request is its warm-up, never counted): '
                               'ask for more requests (count)')
    return parsed


def ioping_metrics(parsed):
    return {
        'latency_min': metric(parsed['min_ms'], 'ms', 'lower'),
        'latency_avg': metric(parsed['avg_ms'], 'ms', 'lower'),
        'latency_max': metric(parsed['max_ms'], 'ms', 'lower'),
        'latency_mdev': metric(parsed['mdev_ms'], 'ms', 'lower'),
        'iops': metric(parsed['iops'], 'ops/s', 'higher'),
        'throughput': metric(parsed['throughput_mb_s'], 'MB/s', 'higher'),
    }


def ioping_record(text, stderr='', test=None, tool_version=None, labels=None, params=None, warnings=None, **extra):
    """One record of an ioping run. `test` (read, write, ...) wins; else the output's direction."""
    parsed = parse_ioping(text, stderr)
    p = dict(params or {})
    p.setdefault('requests', parsed['requests'])
    if parsed.get('target'):
        p.setdefault('target', parsed['target'])
    return new_record(TOOL, test or parsed.get('direction') or 'read', ioping_metrics(parsed), tool_version=tool_version,
                      labels=labels, params=p, warnings=warnings, raw_tail=tail(text, 5), **extra)


def ioping_argv(binary, target, count, interval='0', size='4k', work_size='1m', write=False, direct=True, sync=False,
                dsync=False, linear=False, warmup=1, work_time=None):
    """The argv of a run: final statistics only, in the raw (-B) format."""
    argv = [binary, '-B', '-q', '-c', str(count), '-i', str(interval), '-s', str(size), '-S', str(work_size),
            '-a', str(warmup)]
    for flag, on in (('-W', write), ('-D', direct), ('-Y', sync), ('-y', dsync), ('-L', linear)):
        if on:
            argv.append(flag)
    if work_time:
        argv.extend(['-w', str(work_time)])
    return argv + [target]
