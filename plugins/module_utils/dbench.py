# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise. Used by modules/dbench, filter/parse_dbench.
"""The dbench parser: pure functions over what dbench prints on stdout (and stderr).

Read (fixtures in tests/unit/fixtures/dbench, each with the command that made it):
- the final ``Throughput 258.332 MB/sec  1 clients  1 procs  max_latency=7.857 ms`` line of
  dbench 4 (with `` (sync open)`` / `` (sync dirs)`` after ``MB/sec`` for -s / -S), and the
  shorter ``Throughput 40.67 MB/sec 144 procs`` of dbench 3, which has no latency;
- the per-operation table (``Operation Count AvgLat MaxLat``, latencies in ms);
- the once-a-second ``warmup`` / ``execute`` / ``cleanup`` lines;
- dbench's own errors (missing loadfile, unknown option, a child that failed), which make the
  run a failure, never a record.

``failed to create barrier semaphore`` is harmless: dbench 4.0 tests semget()'s result against 0
instead of -1, so it prints this whenever the kernel hands out semaphore id 0, and then goes on
normally (see the 1-client fixture). It is ignored.

Units: dbench computes MB/sec as ``1.0e-6 * bytes / seconds`` (dbench.c in
github.com/sahlberg/dbench), so its MB already is 10^6 bytes and no conversion is needed.
The table's latencies are ``1000 * seconds`` (ms); ``max_latency`` is in ms.
"""

import re

from ansible_collections.benchlab.bench.plugins.module_utils.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.runner import tail
from ansible_collections.benchlab.bench.plugins.module_utils.trapcodes import ZERO_DATA

# dbench's MB/sec is 10^6 bytes per second (1.0e-6 * total_bytes / t in dbench.c).
DBENCH_MB = 1e6

VERSION_RE = re.compile(r'^dbench version (?P<version>\S+)')
RUNNING_RE = re.compile(r"^Running for (?P<secs>\d+) seconds with load '(?P<loadfile>.*)' and minimum warmup (?P<warmup>\d+) secs$")
THROUGHPUT_RE = re.compile(
    r'^Throughput (?P<tput>[0-9.]+(?:e[-+]?\d+)?) MB/sec(?P<flags>(?: \((?:sync open|sync dirs)\))*)'
    r'(?:\s+(?P<clients>\d+) clients)?\s+(?P<procs>\d+) procs'
    r'(?:\s+max_latency=(?P<lat>[0-9.]+) ms)?\s*$')
SAMPLE_RE = re.compile(r'^\s*(?P<n>\d+)\s+(?P<lines>\d+)\s+(?P<rate>[0-9.]+) MB/sec\s+(?P<phase>warmup|execute|cleanup)'
                       r'\s+(?P<t>\d+) sec(?:\s+latency (?P<lat>[0-9.]+) ms)?\s*$')
CLEANUP_RE = re.compile(r'^\s*\d+\s+cleanup\s+\d+ sec\s*$')
TABLE_HEAD_RE = re.compile(r'^\s*Operation\s+Count\s+AvgLat\s+MaxLat\s*$')
TABLE_ROW_RE = re.compile(r'^\s*(?P<name>[A-Za-z][A-Za-z0-9_]*)\s+(?P<count>\d+)\s+(?P<avg>[0-9.]+)\s+(?P<max>[0-9.]+)\s*$')
BENIGN_RES = [
    re.compile(r'^-+$'),
    re.compile(r'^\d+ of \d+ processes prepared for launch\s+\d+ sec$'),
    re.compile(r'^releasing clients$'),
    re.compile(r'^failed to create barrier semaphore\s*$'),
    re.compile(r'^Per client results:$'),
    re.compile(r'^Client \d+ did \d+ lines and \d+ bytes$'),
]
# Messages dbench prints when it gives up (dbench.c, child.c, fileio.c of dbench 4.0).
ERROR_RES = [
    re.compile(r'^dbench: '),
    re.compile(r'^Invalid option '),
    re.compile(r'^You need to specify NPROCS'),
    re.compile(r'^create -?\d+ procs\?'),
    re.compile(r'^Child failed with status'),
    re.compile(r'^FAILED TO START'),
    re.compile(r'^Failed to setup shared memory'),
    re.compile(r'^failed to (?:initialize|use|release) the barrier'),
    re.compile(r'^\[\d+\] .*failed'),
    re.compile(r'^\(\d+\) ERROR'),
    re.compile(r'ERROR|[Ee]rror opening|No such file|Permission denied|No space left'),
]


class DbenchParseError(ValueError):
    """dbench output that cannot be read, or a dbench that failed; the message says which and
    quotes the line."""


def _is_error(line):
    return any(r.search(line) for r in ERROR_RES)


def _parse_dbench(text):
    """Parse dbench's output into a dict.

    Returns version, time_limit, warmup, loadfile, throughput_mb_s, clients, procs, max_latency_ms,
    sync_open, sync_dirs, operations ({name: {count, avg_latency_ms, max_latency_ms}} in table
    order), samples (the once-a-second lines: {phase, clients, rate_mb_s, t, latency_ms}),
    errors (dbench's own messages) and unknown (lines not understood). Raises DbenchParseError
    when there is no final Throughput line, quoting the error or the line it could not read.
    """
    if not isinstance(text, str):
        raise DbenchParseError('dbench output must be text, got %s' % type(text).__name__)
    result = {'version': None, 'time_limit': None, 'warmup': None, 'loadfile': None,
              'throughput_mb_s': None, 'clients': None, 'procs': None, 'max_latency_ms': None,
              'sync_open': False, 'sync_dirs': False, 'operations': {}, 'samples': [],
              'errors': [], 'unknown': []}
    in_table = False
    last = None
    for raw in text.replace('\r', '\n').splitlines():
        line = raw.strip()
        if not line:
            in_table = False
            continue
        last = line
        if _run_line(result, line):
            continue
        if CLEANUP_RE.match(line):
            continue
        if TABLE_HEAD_RE.match(line):
            in_table = True
            continue
        if in_table:
            m = TABLE_ROW_RE.match(line)
            if m:
                result['operations'][m.group('name')] = {
                    'count': int(m.group('count')), 'avg_latency_ms': float(m.group('avg')),
                    'max_latency_ms': float(m.group('max'))}
                continue
        if any(r.match(line) for r in BENIGN_RES):
            continue
        if _is_error(line):
            result['errors'].append(line)
        else:
            result['unknown'].append(line)
    if result['throughput_mb_s'] is None:
        raise _no_throughput_error(result, last)
    return result


def _run_line(result, line):
    """Store the version, 'Running for' header, final Throughput or a once-a-second sample line in
    `result`; True when the line was one of them."""
    m = VERSION_RE.match(line)
    if m:
        result['version'] = m.group('version')
        return True
    m = RUNNING_RE.match(line)
    if m:
        result['time_limit'] = int(m.group('secs'))
        result['warmup'] = int(m.group('warmup'))
        result['loadfile'] = m.group('loadfile')
        return True
    m = THROUGHPUT_RE.match(line)
    if m:
        result['throughput_mb_s'] = float(m.group('tput')) * DBENCH_MB / 1e6
        result['procs'] = int(m.group('procs'))
        result['clients'] = int(m.group('clients')) if m.group('clients') else result['procs']
        result['max_latency_ms'] = float(m.group('lat')) if m.group('lat') is not None else None
        result['sync_open'] = '(sync open)' in m.group('flags')
        result['sync_dirs'] = '(sync dirs)' in m.group('flags')
        return True
    m = SAMPLE_RE.match(line)
    if m:
        result['samples'].append({'phase': m.group('phase'), 'clients': int(m.group('n')),
                                  'rate_mb_s': float(m.group('rate')), 't': int(m.group('t')),
                                  'latency_ms': float(m.group('lat')) if m.group('lat') else None})
        return True
    return False


def _no_throughput_error(result, last):
    """The DbenchParseError for output without a final Throughput line, saying why."""
    if result['errors']:
        return DbenchParseError('dbench failed: %s' % '; '.join(result['errors']))
    if result['unknown']:
        return DbenchParseError("no dbench 'Throughput ... MB/sec' line; first line not understood: %r"
                                % result['unknown'][0])
    if last is None:
        return DbenchParseError("no dbench 'Throughput ... MB/sec' line: the output is empty")
    return DbenchParseError("no dbench 'Throughput ... MB/sec' line: the output stops early (truncated?) "
                            "after the line %r" % last)


def parse_dbench(text):
    """dbench output -> dict (see _parse_dbench); a malformed number is a DbenchParseError, never a bare ValueError."""
    try:
        return _parse_dbench(text)
    except DbenchParseError:
        raise
    except (ValueError, IndexError) as e:
        raise DbenchParseError('dbench output has a malformed value: %s' % e)


def op_metric_name(op):
    """'NTCreateX' -> 'op_ntcreatex_avg_latency'."""
    return 'op_%s_avg_latency' % re.sub(r'[^a-z0-9_]', '_', op.lower())


def dbench_metrics(parsed):
    """The record's metrics (docs/usage.md): throughput (MB/s), max_latency (ms), op_<name>_avg_latency (ms)."""
    metrics = {'throughput': metric(parsed['throughput_mb_s'], 'MB/s', 'higher')}
    if parsed['max_latency_ms'] is not None:
        metrics['max_latency'] = metric(parsed['max_latency_ms'], 'ms', 'lower')
    for name, op in parsed['operations'].items():
        if op['count'] > 0:
            metrics[op_metric_name(name)] = metric(op['avg_latency_ms'], 'ms', 'lower')
    return metrics


# dbench's fileio backend writes zero-filled buffers (strace of dbench 4.0 on this machine: its pwrite64
# calls write "\0\0\0..."), like sysbench fileio: every record carries this warning and the code zero_data.
ZERO_DATA_WARNING = ('dbench writes buffers of zero bytes: storage that skips, compresses or deduplicates zero '
                     'blocks (ploop, thin volumes, compression) reports write speeds it never reached')


def dbench_record(text, test=None, tool_version=None, labels=None, params=None, warnings=None, **extra):
    """Parse one dbench run into a result record (labels get `clients`).

    A dbench that printed its own error, or a run too short to have an execute-phase sample
    (dbench then reports ``Throughput 0 MB/sec``), is a DbenchParseError, never a record.
    """
    parsed = parse_dbench(text)
    if parsed['errors']:
        raise DbenchParseError('dbench reported an error: %s' % '; '.join(parsed['errors']))
    if parsed['clients'] is not None and parsed['clients'] < 1:
        raise DbenchParseError('dbench ran 0 clients: nothing was measured')
    if not parsed['throughput_mb_s']:
        raise DbenchParseError('dbench reported a throughput of 0 MB/sec with %d execute-phase sample(s): the '
                               'time limit (-t%s) is too short to measure anything; use at least a few seconds'
                               % (len([s for s in parsed['samples'] if s['phase'] == 'execute']),
                                  ' %s' % parsed['time_limit'] if parsed['time_limit'] is not None else ''))
    labels = dict(labels or {})
    labels['clients'] = parsed['clients']
    warnings = list(warnings or [])
    if ZERO_DATA_WARNING not in warnings:
        warnings.append(ZERO_DATA_WARNING)
    if test is None:
        test = 'netbench'
        if parsed['loadfile']:
            stem = re.sub(r'\.txt$', '', parsed['loadfile'].rstrip('/').rsplit('/', 1)[-1])
            test = stem or test
    workers = None
    if (parsed['clients'] or 1) > 1:     # dbench's Throughput line is already all clients together
        workers = {'count': parsed['clients'], 'kind': 'dbench clients',
                   'aggregate': "dbench's Throughput line: all clients together; max_latency the worst client's"}
    return new_record('dbench', test, dbench_metrics(parsed), tool_version=tool_version or parsed['version'],
                      labels=labels, params=params, warnings=warnings, raw_tail=tail(text, 5), workers=workers,
                      flags=list(extra.pop('flags', None) or []) + [ZERO_DATA], **extra)
