# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
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

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import tail
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import ZERO_DATA

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


# -- load files (input: checked before dbench runs) -------------------------------------------------
#
# How dbench 4.0 reads a load file (child.c child_run and util.c next_token of github.com/sahlberg/dbench,
# the 4.0 that Debian and EL ship; 5.0 reads the same way into larger buffers):
# - fgets() into 1024 bytes (a longer line is read as several), then the last character is cut (the
#   newline; on a last line without one, its last real character);
# - every backslash becomes '/', then every " /" becomes " ";
# - the line is split at blanks into at most 19 words; a "..." word keeps its blanks (the quotes are
#   dropped); dbench 4.0 copies each word into 100 bytes, with no bound check;
# - a line of fewer than 2 words, or whose first word starts with '#', is skipped; a first word that
#   starts with a digit is a timestamp and dropped;
# - the 2nd and 3rd words, when they start with '/', are paths: the -D directory + the word
#   (snprintf into 1024 bytes: a longer one is cut), with every "client1" in it (the directory
#   included) replaced by the client's name, client0, client1, ...; the file system then follows `..`.
# So a load file reaches outside the -D directory through `..` only; the check follows the same rules.
# The largest load file read, on the target and on the controller (dbench's own client.txt is 25 MiB).
MAX_LOADFILE_BYTES = 256 * 1024 * 1024
TOO_LARGE = 'is larger than %d bytes: not a dbench load file?'
DBENCH_LINE_MAX = 1022      # fgets(line, 1023): longer lines are read in pieces
DBENCH_WORD_MAX = 99        # dbench 4.0: malloc(100) per word
DBENCH_PATH_MAX = 1023      # fname[1024]
DBENCH_MAX_WORDS = 19
_MARKER = b'.benchlab-owner.json'


def read_capped(path, cap=MAX_LOADFILE_BYTES):
    """A load file's bytes, or None when it has more than `cap` bytes (TOO_LARGE % cap: not a
    dbench load file); OSError when it cannot be read. The one read of a load file, on the target
    (the module) and on the controller (the matrix's check)."""
    with open(path, 'rb') as f:
        data = f.read(cap + 1)
    return None if len(data) > cap else data


_WORD_RE = re.compile(br'(?:[^ "]+|"[^"]*"?)+')


def _load_words(line):
    """dbench's words of one line (bytes), as next_token splits them at ' ' (a "..." part keeps its
    blanks, an unclosed one runs to the end; the quotes are dropped); at most 19."""
    return [w.replace(b'"', b'') for w in _WORD_RE.findall(line)[:DBENCH_MAX_WORDS]]


def _path_problem(path):
    """Why a load-file path (dbench's word, '/'-separated) leaves the work directory, or None."""
    depth = 0
    for part in path.split(b'/'):
        if part in (b'', b'.'):
            continue
        if part == b'..':
            depth -= 1
            if depth < 0:
                return 'its .. leads out of the work directory'
        else:
            if depth == 0 and part == _MARKER:
                return 'it names the work directory\'s ownership marker'
            depth += 1
    return None


def _shown(raw):
    return repr(raw.decode('utf-8', 'backslashreplace').rstrip('\r'))[:200]


def _line_problem(raw, line, lineno, name, base):
    """Why one line of a load file is refused, or None (`line` as dbench keeps it: its last character cut)."""
    if len(raw) + 1 > DBENCH_LINE_MAX:
        return ('%s line %d is %d bytes long: dbench reads at most %d bytes of a line and takes the rest for '
                'another line: split it' % (name, lineno, len(raw), DBENCH_LINE_MAX - 1))
    if line.startswith(b'RANDOMSTRING'):
        return ('%s line %d: %s: dbench 5 puts random text into the paths of the lines below (the work '
                'directory cannot be checked): remove it' % (name, lineno, _shown(raw)))
    words = _load_words(line.replace(b'\\', b'/').replace(b' /', b' '))
    long_words = [w for w in words if len(w) > DBENCH_WORD_MAX]
    if long_words:
        return ('%s line %d: a word of %d bytes; dbench 4.0 keeps each word in %d bytes and would write past '
                'them: shorten it (is this a dbench load file?)' % (name, lineno, len(long_words[0]), DBENCH_WORD_MAX + 1))
    if len(words) < 2 or words[0].startswith(b'#'):
        return None
    if words[0][:1].isdigit():
        words = words[1:]
    for word in words[1:3]:
        if not word.startswith(b'/'):
            continue
        problem = _path_problem(word)
        if problem is None and base and base + len(word) + 4 * word.count(b'client1') > DBENCH_PATH_MAX:
            problem = ('dbench would cut the path at %d bytes (the work directory takes %d of them), which may '
                       'change where it points' % (DBENCH_PATH_MAX, base))
        if problem:
            return ('%s line %d: %s: the path %s is refused: %s (dbench puts its -D work directory in front of '
                    'every path and follows ..); every path must stay inside the work directory'
                    % (name, lineno, _shown(raw), _shown(word.replace(b'/', b'\\')), problem))
    return None


def loadfile_problem(data, name='loadfile', workdir=None):
    """None, or why dbench would act outside its work directory with the load file `data` (bytes),
    naming the file and the line: a path whose `..` leaves the directory or that names benchlab's
    marker in it, a line or word longer than dbench's buffers, a NUL byte, a compressed file or
    dbench 5's RANDOMSTRING (random text in paths: cannot be checked). With `workdir` (dbench's -D),
    also a path that dbench would cut at 1023 bytes and a directory with "client1" in it (dbench
    would rename it per client). Only the lines that could be refused are split into words."""
    if workdir is not None and 'client1' in workdir:
        return ('%s: the work directory %s contains "client1", which dbench replaces by each client\'s name in '
                'every path (client0, client2, ...), so its clients would write elsewhere: choose a path '
                'without "client1"' % (name, workdir))
    if data[:2] == b'\x1f\x8b':
        return ('%s is compressed (gzip): dbench 4.0 reads load files as text, and benchlab checks only text: '
                'decompress it' % name)
    base = len(workdir.encode('utf-8')) if workdir is not None else 0
    lines = data.split(b'\n')
    ends_in_newline = lines[-1] == b''
    if ends_in_newline:
        lines.pop()
    if b'\0' in data:
        lineno = next(i for i, raw in enumerate(lines, 1) if b'\0' in raw)
        return '%s line %d: a NUL byte (a load file is text; dbench would cut the line there)' % (name, lineno)
    # a word longer than a line cannot be; a path cut at 1023 bytes needs a line that long (a "client1"
    # may grow to "client4095", 11 bytes for 7)
    limit = min(DBENCH_WORD_MAX, (DBENCH_PATH_MAX - base) * 7 // 11)
    suspects = [i for i, raw in enumerate(lines) if len(raw) > limit or b'..' in raw or _MARKER in raw
                or raw.startswith(b'RANDOMSTRING')]
    if not ends_in_newline and lines and (len(lines) - 1) not in suspects:
        suspects.append(len(lines) - 1)
    for i in suspects:
        raw = lines[i]
        cut = raw if (ends_in_newline or i < len(lines) - 1) else raw[:-1]
        problem = _line_problem(raw, cut, i + 1, name, base)
        if problem:
            return problem
    return None
