# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The sysbench fileio parser: pure functions over what ``sysbench fileio ... run`` prints.

Read (fixtures in tests/unit/fixtures/sysbench, each with the command that made it): the
sysbench 1.0 report::

    File operations:
        reads/s:                      5210.35
        writes/s:                     3473.57
        fsyncs/s:                     349.35
    Throughput:
        read, MiB/s:                  81.41
        written, MiB/s:               54.27
    General statistics: ...
    Latency (ms):
             avg:                                    0.11
             95th percentile:                        0.03

sysbench 1.0 prints MiB/s (2^20 bytes); the record carries MB/s (10^6 bytes). Latencies are
printed in ms with two decimals; a printed ``0.00`` is below that resolution and becomes a
``too_fast`` metric (value null) with a warning, not a measured zero.

``FATAL:`` lines (missing prepare step, unknown mode, unwritable directory, O_DIRECT refused)
and ``invalid option`` make the run a failure with sysbench's message.

sysbench writes buffers of zero bytes (the files it prepares and rewrites contain nothing but
zeros), so storage that skips, compresses or deduplicates zero blocks reports write speeds it
never reached: every record carries ZERO_DATA_WARNING and the trap code zero_data (checked: a 4 MiB
file set gzips to 4 KiB after prepare and after a seqrewr run, sysbench 1.0.20).
"""

import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import tail
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import ZERO_DATA

TOOL = 'sysbench'   # the name its records carry (the matrix's tool is sysbench_fileio: its unit's RECORDS)
MIB = 1024.0 * 1024.0

MODES = ('seqwr', 'seqrewr', 'seqrd', 'rndrd', 'rndwr', 'rndrw')
READ_MODES = ('seqrd', 'rndrd', 'rndrw')
WRITE_MODES = ('seqwr', 'seqrewr', 'rndwr', 'rndrw')
# "Doing <what> test" -> --file-test-mode
DOING = {
    'sequential write (creation)': 'seqwr',
    'sequential rewrite': 'seqrewr',
    'sequential read': 'seqrd',
    'random read': 'rndrd',
    'random write': 'rndwr',
    'random r/w': 'rndrw',
}

ZERO_DATA_WARNING = ('sysbench fileio writes buffers of zero bytes: storage that skips, compresses or '
                     'deduplicates zero blocks (ploop, thin volumes, ZFS/btrfs compression, dedup) inflates '
                     'the write results')

VERSION_RE = re.compile(r'^sysbench (?P<version>\d+\.\d+(?:\.\d+)?\S*)')
THREADS_RE = re.compile(r'^Number of threads: (?P<n>\d+)$')
DOING_RE = re.compile(r'^Doing (?P<what>.+) test$')
BLOCK_RE = re.compile(r'^Block size (?P<size>\S+)$')
FLAGS_RE = re.compile(r'^Extra file open flags: (?P<flags>.*)$')
SECTION_RE = re.compile(r'^(?P<name>File operations|Throughput|General statistics|Latency \(ms\)|Threads fairness):$')
VALUE_RE = re.compile(r'^(?P<key>[^:]+):\s+(?P<value>[0-9.]+(?:e[-+]?\d+)?)(?P<unit>s)?$')
PERCENTILE_RE = re.compile(r'^(?P<p>\d+(?:\.\d+)?)th percentile$')
PREPARE_RE = re.compile(r'^\d+ bytes written in [0-9.]+ seconds \(')
ERROR_RES = [re.compile(r'^FATAL:'), re.compile(r'^invalid option'), re.compile(r'^Unknown (?:test|command)'),
             re.compile(r'^ALERT:')]

# (section, key) -> parsed field
FIELDS = {
    ('File operations', 'reads/s'): 'reads_per_s',
    ('File operations', 'writes/s'): 'writes_per_s',
    ('File operations', 'fsyncs/s'): 'fsyncs_per_s',
    ('Throughput', 'read, MiB/s'): 'read_mib_s',
    ('Throughput', 'written, MiB/s'): 'written_mib_s',
    ('General statistics', 'total time'): 'total_time_s',
    ('General statistics', 'total number of events'): 'events',
    ('Latency (ms)', 'min'): 'latency_min_ms',
    ('Latency (ms)', 'avg'): 'latency_avg_ms',
    ('Latency (ms)', 'max'): 'latency_max_ms',
    ('Latency (ms)', 'sum'): 'latency_sum_ms',
}


class SysbenchParseError(ValueError):
    """sysbench output that cannot be read, or a sysbench that failed; the message quotes the line."""


def _parse_sysbench(text):
    """Parse ``sysbench fileio run`` output into a dict.

    Returns version, threads, mode (from the "Doing ... test" line), block_size, extra_flags,
    reads_per_s, writes_per_s, fsyncs_per_s, read_mib_s, written_mib_s, read_mb_s, written_mb_s
    (10^6 bytes/s), total_time_s, events, latency_min/avg/max/sum_ms, percentile and
    latency_pct_ms (the "Nth percentile" line), errors (FATAL lines and what follows them) and
    unknown lines. Raises SysbenchParseError when there is no "File operations" report.
    """
    if not isinstance(text, str):
        raise SysbenchParseError('sysbench output must be text, got %s' % type(text).__name__)
    r = {'version': None, 'threads': None, 'mode': None, 'block_size': None, 'extra_flags': None,
         'percentile': None, 'latency_pct_ms': None, 'errors': [], 'unknown': [], 'prepare': False}
    for key in FIELDS.values():
        r[key] = None
    section = None
    last = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        last = line
        if any(e.match(line) for e in ERROR_RES) or (r['errors'] and line.startswith('WARNING:')):
            r['errors'].append(line)
            continue
        m = VERSION_RE.match(line)
        if m:
            r['version'] = m.group('version')
            continue
        m = SECTION_RE.match(line)
        if m:
            section = m.group('name')
            continue
        if _section_value(r, section, line) or _header_value(r, line):
            continue
        if PREPARE_RE.match(line):
            r['prepare'] = 'prepare'
        elif line == 'Removing test files...':
            r['prepare'] = 'cleanup'
        r['unknown'].append(line)
    for src, dst in (('read_mib_s', 'read_mb_s'), ('written_mib_s', 'written_mb_s')):
        r[dst] = round(r[src] * MIB / 1e6, 6) if r[src] is not None else None
    if r['reads_per_s'] is None and r['writes_per_s'] is None:
        raise _no_report_error(r, last)
    return r


def _section_value(r, section, line):
    """Store a 'key: value' line of a report section in `r`; True when the line is consumed."""
    m = VALUE_RE.match(line)
    if m and section:
        key = m.group('key').strip()
        field = FIELDS.get((section, key))
        if field:
            r[field] = int(m.group('value')) if field == 'events' else float(m.group('value'))
            return True
        pm = PERCENTILE_RE.match(key)
        if pm and section == 'Latency (ms)':
            r['percentile'] = float(pm.group('p'))
            r['latency_pct_ms'] = float(m.group('value'))
            return True
        if section == 'Threads fairness' or section == 'General statistics':
            return True
    return section == 'Threads fairness' and '(avg/stddev)' in line


def _header_value(r, line):
    """Store a line of the run's header (threads, mode, block size, flags); True when it was one."""
    for regex, key, convert in ((THREADS_RE, 'threads', lambda m: int(m.group('n'))),
                                (DOING_RE, 'mode', lambda m: DOING.get(m.group('what'), m.group('what'))),
                                (BLOCK_RE, 'block_size', lambda m: m.group('size')),
                                (FLAGS_RE, 'extra_flags', lambda m: m.group('flags'))):
        m = regex.match(line)
        if m:
            r[key] = convert(m)
            return True
    return False


def _no_report_error(r, last):
    """The SysbenchParseError for output without a 'File operations' report, saying why."""
    if r['errors']:
        return SysbenchParseError('sysbench failed: %s' % ' '.join(r['errors']))
    if r['prepare']:
        return SysbenchParseError("this is the output of 'sysbench fileio %s', not of 'run': no "
                                  "'File operations' report in it" % r['prepare'])
    if last is None:
        return SysbenchParseError("no sysbench 'File operations' report: the output is empty")
    informative = [u for u in r['unknown'] if not u.startswith(('Running the test', 'Initializing', 'Threads started',
                                                                'Calling fsync', 'Periodic FSYNC', 'Using ',
                                                                'Number of IO', 'Read/Write ratio', 'Removing',
                                                                'Creating file', 'WARNING'))
                   and not re.match(r'^\d+ files, ', u) and not re.match(r'^\S+ total file size$', u)]
    if informative:
        return SysbenchParseError("no sysbench 'File operations' report; first line not understood: %r"
                                  % informative[0])
    return SysbenchParseError("no sysbench 'File operations' report: the output stops early (truncated?) "
                              "after the line %r" % last)


def parse_sysbench(text):
    """sysbench output -> dict (see _parse_sysbench); a malformed number is a SysbenchParseError, never a bare ValueError."""
    try:
        return _parse_sysbench(text)
    except SysbenchParseError:
        raise
    except (ValueError, IndexError) as e:
        raise SysbenchParseError('sysbench output has a malformed value: %s' % e)


def _latency(value, name, warnings):
    if value is not None and value == 0.0:
        warnings.append('sysbench printed latency %s 0.00 ms: below its 0.01 ms resolution, recorded as too fast '
                        'to measure' % name)
        return metric(None, 'ms', 'lower')
    return metric(value, 'ms', 'lower')


def sysbench_metrics(parsed, warnings=None):
    """The record's metrics (docs/usage.md): reads_per_s, writes_per_s, fsyncs_per_s (ops/s),
    read_throughput, write_throughput (MB/s), latency_avg, latency_p95 (ms).

    Read metrics only for the modes that read, write and fsync metrics only for the modes that
    write (all of them when the mode is unknown), so a read test carries no meaningless zeros.
    """
    warnings = warnings if warnings is not None else []
    mode = parsed['mode']
    reads = mode in READ_MODES or mode not in MODES
    writes = mode in WRITE_MODES or mode not in MODES
    metrics = {}
    if reads:
        if parsed['reads_per_s'] is not None:
            metrics['reads_per_s'] = metric(parsed['reads_per_s'], 'ops/s', 'higher')
        if parsed['read_mb_s'] is not None:
            metrics['read_throughput'] = metric(parsed['read_mb_s'], 'MB/s', 'higher')
    if writes:
        if parsed['writes_per_s'] is not None:
            metrics['writes_per_s'] = metric(parsed['writes_per_s'], 'ops/s', 'higher')
        if parsed['fsyncs_per_s'] is not None:
            metrics['fsyncs_per_s'] = metric(parsed['fsyncs_per_s'], 'ops/s', 'higher')
        if parsed['written_mb_s'] is not None:
            metrics['write_throughput'] = metric(parsed['written_mb_s'], 'MB/s', 'higher')
    if parsed['latency_avg_ms'] is not None:
        metrics['latency_avg'] = _latency(parsed['latency_avg_ms'], 'avg', warnings)
    if parsed['percentile'] == 95.0 and parsed['latency_pct_ms'] is not None:
        metrics['latency_p95'] = _latency(parsed['latency_pct_ms'], '95th percentile', warnings)
    return metrics


def sysbench_record(text, test=None, tool_version=None, labels=None, params=None, warnings=None, **extra):
    """Parse one ``sysbench fileio run`` into a result record (test = the mode, e.g. rndrw).
    A FATAL message or a run that did no I/O is a SysbenchParseError, never a record."""
    parsed = parse_sysbench(text)
    if parsed['errors']:
        raise SysbenchParseError('sysbench reported an error: %s' % ' '.join(parsed['errors']))
    if not parsed['events'] and not (parsed['reads_per_s'] or parsed['writes_per_s']):
        raise SysbenchParseError('sysbench did no I/O (0 events): nothing was measured')
    warnings = list(warnings or [])
    if ZERO_DATA_WARNING not in warnings:
        warnings.append(ZERO_DATA_WARNING)
    metrics = sysbench_metrics(parsed, warnings)
    if not metrics:
        raise SysbenchParseError('sysbench printed none of the figures its %s mode reports (reads/s, writes/s, '
                                 'fsyncs/s, latency): the output is cut or altered' % (parsed['mode'] or 'fileio'))
    workers = None
    if (parsed['threads'] or 1) > 1:    # sysbench's figures are totals over its threads
        workers = {'count': parsed['threads'], 'kind': 'sysbench threads',
                   'aggregate': 'sysbench totals: operations and throughput of all threads; latency over all requests'}
    return new_record(TOOL, test or parsed['mode'] or 'fileio', metrics,
                      tool_version=tool_version or parsed['version'], labels=labels, params=params,
                      warnings=warnings, raw_tail=tail(text, 15), workers=workers,
                      flags=list(extra.pop('flags', None) or []) + [ZERO_DATA], **extra)
