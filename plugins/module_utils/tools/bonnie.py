# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The bonnie++ parser: pure functions shared by the module, the parse_bonnie filter and the callback.

Formats read (fixtures in tests/unit/fixtures/bonnie, each with its command or its source):
- the CSV line of bonnie++ 1.93-1.97 (48 fields) and of 1.98/2.00 (50 fields: the number of seeks
  and of seeker processes follow the chunk size). 2.00a's ``format_version,...`` header line still
  has 48 names, so fields are mapped by POSITION for the format version, never by the header;
- the CSV line of bonnie++ 1.03 (27 fields: name, size, 12 I/O fields, the file count, 12 file fields);
- the 80-column text table of 1.03 (``K/sec``), 1.93-1.97 (``Concurrency`` line, ``Latency`` rows in
  us/ms/s) and 2.00 (``/sec`` with k/m/g suffixes such as ``358m``), blank cells of fast mode (-f)
  and -n 0 included. Several results in one text (a mailing-list post, ``-x``) give one result each.

``+++++`` (a test that took under 500 ms) becomes value None with too_fast: true, never a number.
Throughputs are KiB/s in bonnie++ (K = 1024 bytes) and become MB/s (10^6 bytes/s).
"""

import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import first_line, quote_line, version_tuple
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record

TOOL = 'bonnie++'   # the name its records carry (the matrix's tool is bonnie: its unit's RECORDS)
IO_TESTS = ('seq_output_char', 'seq_output_block', 'seq_rewrite', 'seq_input_char', 'seq_input_block', 'random_seeks')
FILE_TESTS = ('seq_create', 'seq_read', 'seq_delete', 'random_create', 'random_read', 'random_delete')
TESTS = IO_TESTS + FILE_TESTS
THROUGHPUT_TESTS = IO_TESTS[:5]
UNITS = dict([(t, 'MB/s') for t in THROUGHPUT_TESTS] + [('random_seeks', 'seeks/s')] + [(t, 'files/s') for t in FILE_TESTS])
KIB = 1024.0
TOO_FAST = re.compile(r'^\+{3,5}$')
VERSION_RE = re.compile(r'^\d+\.\d+[a-z]?$')
LATENCY_RE = re.compile(r'^(?P<num>\d+(?:\.\d+)?)(?P<unit>ns|us|ms|s)$')
TEXT_VALUE_RE = re.compile(r'^(?P<num>\d+(?:\.\d+)?)(?P<suffix>[kmg]?)$')
SIZE_TOKEN_RE = re.compile(r'^\d+(?:\.\d+)?[KMGT](?::\S+)?$')
SUFFIX = {'': 1.0, 'k': KIB, 'm': KIB ** 2, 'g': KIB ** 3}
LATENCY_TO_MS = {'ns': 1e-6, 'us': 1e-3, 'ms': 1.0, 's': 1e3}
ERROR_HINTS = ("Can't ", 'Cannot ', 'You must use', 'File size should be', 'usage:', 'Bad ', 'Error', 'error')


class BonnieParseError(ValueError):
    """bonnie++ output that cannot be read; the message names the problem and quotes the line."""


def _quote(line):
    return quote_line(line, mark='...')


def _new_result(source, line):
    return {'source': source, 'version': None, 'format_version': None, 'name': None, 'size': None,
            'concurrency': None, 'files': None, 'values': {}, 'cpu': {}, 'latency': {}, 'lines': [line]}


# ---------------------------------------------------------------- CSV
def _csv_number(field, line):
    field = field.strip()
    if field == '':
        return 'absent', None
    if TOO_FAST.match(field):
        return 'too_fast', None
    try:
        return 'value', float(field)
    except ValueError:
        raise BonnieParseError('bonnie++ CSV field %r is not a number in line %s' % (field, _quote(line)))


def _csv_latency(field, line):
    field = field.strip()
    if field == '':
        return None
    m = LATENCY_RE.match(field)
    if not m:
        raise BonnieParseError('bonnie++ CSV latency %r (expected e.g. 2047us or 111ms) in line %s' % (field, _quote(line)))
    return float(m.group('num')) * LATENCY_TO_MS[m.group('unit')]


def _store(result, test, kind, value, cpu_kind, cpu):
    """Record one test's number (already in canonical units) and CPU%."""
    if kind == 'value':
        result['values'][test] = value
    elif kind == 'too_fast':
        result['values'][test] = None
    if cpu_kind == 'value':
        result['cpu'][test] = cpu
    elif cpu_kind == 'too_fast':
        result['cpu'][test] = None


TOOL_UNIT = 'K/sec'


def tool_units(test, value):
    """A record's value back in the unit bonnie++ prints: MB/s -> K/sec (KiB/s) for a throughput
    test; None for the other tests (seeks and files are per second in both) and for no value."""
    if test not in THROUGHPUT_TESTS or value is None:
        return None
    return value * 1e6 / KIB


def _canonical(test, number, multiplier):
    """bonnie++'s number -> MB/s for throughputs (it counts KiB), unchanged for seeks and files."""
    if test in THROUGHPUT_TESTS:
        return number * multiplier / 1e6
    return number


def _csv_tests(result, fields, start, tests, line):
    for i, test in enumerate(tests):
        kind, value = _csv_number(fields[start + 2 * i], line)
        cpu_kind, cpu = _csv_number(fields[start + 2 * i + 1], line)
        if kind == 'value':
            value = _canonical(test, value, KIB)
        _store(result, test, kind, value, cpu_kind, cpu)


def parse_csv_line(line):
    """One bonnie++ CSV data line -> a result dict. Fields are mapped by position for the format."""
    fields = line.strip().split(',')
    result = _new_result('csv', line.strip())
    if VERSION_RE.match(fields[0]) and len(fields) > 1 and VERSION_RE.match(fields[1]):
        fmt = fields[0]
        extra = 2 if version_tuple(fmt) >= (1, 98) else 0
        expected = 48 + extra
        if len(fields) != expected:
            raise BonnieParseError('bonnie++ CSV line (format %s) has %d fields, expected %d: truncated or not '
                                   'bonnie++ output: %s' % (fmt, len(fields), expected, _quote(line)))
        result.update(format_version=fmt, version=fields[1], name=fields[2], size=fields[5] or None)
        if fields[3].isdigit():
            result['concurrency'] = int(fields[3])
        base = 7 + extra
        _csv_tests(result, fields, base, IO_TESTS, line)
        result['files'] = fields[base + 12] or None
        _csv_tests(result, fields, base + 17, FILE_TESTS, line)
        for i, test in enumerate(TESTS):
            lat = _csv_latency(fields[base + 29 + i], line)
            if lat is not None:
                result['latency'][test] = lat
        return result
    if len(fields) == 27:
        # bonnie++ 1.03: name,size,12 I/O fields,files,12 file fields (no version, no latency)
        result.update(format_version='1.03', name=fields[0], size=fields[1] or None, files=fields[14] or None)
        _csv_tests(result, fields, 2, IO_TESTS, line)
        _csv_tests(result, fields, 15, FILE_TESTS, line)
        return result
    raise BonnieParseError('not a bonnie++ CSV line (%d fields; expected 48/50 starting with the format and '
                           'bonnie++ versions, or 27 for 1.03): %s' % (len(fields), _quote(line)))


def _is_csv_candidate(line):
    return line.count(',') >= 20 and not line.lstrip().startswith('format_version,')


# ---------------------------------------------------------------- text table
def _tokens(line):
    return [(m.group(), m.start(), m.end()) for m in re.finditer(r'\S+', line)]


def _text_number(token, test, unit_header, line):
    """A text cell -> (kind, canonical value). `unit_header` is 'K/sec' (1.x: KiB) or '/sec' (2.00: suffix)."""
    if TOO_FAST.match(token):
        return 'too_fast', None
    m = TEXT_VALUE_RE.match(token)
    if not m:
        raise BonnieParseError('bonnie++ table cell %r is not a number in line %s' % (token, _quote(line)))
    number = float(m.group('num'))
    suffix = m.group('suffix')
    if test is None:  # a CPU% cell
        return 'value', number
    if test in THROUGHPUT_TESTS:
        multiplier = SUFFIX[suffix] if (suffix or unit_header == '/sec') else KIB
        return 'value', number * multiplier / 1e6
    return 'value', number * SUFFIX[suffix]


def _map_by_position(cells, edges, line, tolerance):
    """Assign right-aligned cells to the column whose right edge is nearest (blank cells of -f, -n 0)."""
    mapped = {}
    for text, _start, end in cells:
        best = min(range(len(edges)), key=lambda i: abs(edges[i] - end))
        if abs(edges[best] - end) > tolerance or best in mapped:
            raise BonnieParseError('bonnie++ table row does not line up with its header (cell %r): %s'
                                   % (text, _quote(line)))
        mapped[best] = text
    return mapped


def _row_cells(tokens, kind):
    """Split a data row into its label (name, size or file count) and its value cells."""
    if kind == 'files':
        return {'files': tokens[0][0]}, tokens[1:]
    if SIZE_TOKEN_RE.match(tokens[0][0]):
        return {'name': '', 'size': tokens[0][0]}, tokens[1:]
    if len(tokens) > 1 and SIZE_TOKEN_RE.match(tokens[1][0]):
        return {'name': tokens[0][0], 'size': tokens[1][0]}, tokens[2:]
    return {'name': tokens[0][0], 'size': None}, tokens[1:]


def _parse_row(result, line, kind, header_units, edges):
    tokens = _tokens(line)
    label, cells = _row_cells(tokens, kind)
    result.update(label)
    if len(cells) == 12:
        mapped = dict((i, c[0]) for i, c in enumerate(cells))
    else:
        mapped = _map_by_position(cells, edges, line, 4)
    tests = IO_TESTS if kind == 'io' else FILE_TESTS
    for i, test in enumerate(tests):
        kind_v, value = ('absent', None)
        cpu_kind, cpu = ('absent', None)
        if 2 * i in mapped:
            kind_v, value = _text_number(mapped[2 * i], test, header_units[2 * i], line)
        if 2 * i + 1 in mapped:
            cpu_kind, cpu = _text_number(mapped[2 * i + 1], None, None, line)
        _store(result, test, kind_v, value, cpu_kind, cpu)


def _parse_latency(result, line, kind, pair_edges):
    cells = _tokens(line)[1:]
    if len(cells) == 6:
        mapped = dict((i, c[0]) for i, c in enumerate(cells))
    else:
        mapped = _map_by_position(cells, pair_edges, line, 5)
    tests = IO_TESTS if kind == 'io' else FILE_TESTS
    for i, text in mapped.items():
        m = LATENCY_RE.match(text)
        if not m:
            raise BonnieParseError('bonnie++ latency %r (expected e.g. 2047us or 111ms) in line %s' % (text, _quote(line)))
        result['latency'][tests[i]] = float(m.group('num')) * LATENCY_TO_MS[m.group('unit')]


def _is_unit_header(line):
    return '%CP' in line and '/sec' in line


def _table_kind(lines, i):
    for back in range(1, 4):
        if i - back < 0:
            break
        if 'Sequential Output' in lines[i - back]:
            return 'io'
        if 'Sequential Create' in lines[i - back]:
            return 'files'
    return 'files' if re.match(r'^\s*files', lines[i]) else 'io'


def _table_context(lines, i):
    """Version, concurrency and (for a files table) the machine name printed above a unit header."""
    ctx = {'version': None, 'concurrency': None, 'name': None}
    for back in range(1, 4):
        if i - back < 0:
            break
        prev = lines[i - back]
        m = re.match(r'^\s*Version\s+(\S+)', prev)
        if m and ctx['version'] is None:
            ctx['version'] = m.group(1)
        m = re.match(r'^\s*Concurrency\s+(\d+)', prev)
        if m:
            ctx['concurrency'] = int(m.group(1))
        m = re.match(r'^(\S+)\s+-Create--', prev)
        if m:
            ctx['name'] = m.group(1)
    return ctx


def _is_row_end(line):
    s = line.strip()
    return (not s or s.startswith('Version') or s.startswith('Latency') or '---' in s or _is_csv_candidate(line)
            or _is_unit_header(line))


def parse_text_tables(text):
    """All results in bonnie++'s text tables, in order: an I/O table and the files table after it
    make one result; a table with several rows (stacked runs) gives one result per row."""
    lines = text.splitlines()
    results = []
    open_io = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not _is_unit_header(line):
            i += 1
            continue
        kind = _table_kind(lines, i)
        ctx = _table_context(lines, i)
        header = _tokens(line)
        units = [t for t in header if t[0] in ('K/sec', '/sec', '%CP')]
        if len(units) != 12:
            raise BonnieParseError('bonnie++ table header has %d unit columns, expected 12: %s' % (len(units), _quote(line)))
        header_units = [u[0] for u in units]
        edges = [u[2] for u in units]
        pair_edges = edges[1::2]
        rows = []
        j = i + 1
        while j < len(lines) and not _is_row_end(lines[j]):
            result = _new_result('text', line)
            result['lines'].append(lines[j])
            result.update(version=ctx['version'], concurrency=ctx['concurrency'])
            _parse_row(result, lines[j], kind, header_units, edges)
            rows.append(result)
            j += 1
        if not rows:
            raise BonnieParseError('bonnie++ table header without a result row after it (truncated output?): %s'
                                   % _quote(line))
        if j < len(lines) and lines[j].strip().startswith('Latency'):
            _parse_latency(rows[-1], lines[j], kind, pair_edges)
            rows[-1]['lines'].append(lines[j])
            j += 1
        if kind == 'io':
            results.extend(rows)
            open_io = rows
        else:
            if open_io and len(open_io) == len(rows):
                for target, row in zip(open_io, rows):
                    for key in ('values', 'cpu', 'latency'):
                        target[key].update(row[key])
                    target['files'] = row['files']
                    target['lines'].extend(row['lines'])
                    target['version'] = target['version'] or row['version']
            else:
                for row in rows:
                    row['name'] = ctx['name']
                results.extend(rows)
            open_io = []
        i = j
    return results


# ---------------------------------------------------------------- both
def parse_bonnie(text):
    """Every bonnie++ result in `text` (CSV lines, text tables or both), as a list of result dicts.

    When CSV lines are present they are the results (one per line, as -x prints them); a text table
    for the same runs only fills what the CSV lacks (the version of a 1.03 CSV line, for instance).
    Raises BonnieParseError naming the problem and quoting the first line it could not read.
    """
    if not isinstance(text, str):
        raise BonnieParseError('bonnie++ output must be text, got %s' % type(text).__name__)
    if not text.strip():
        raise BonnieParseError('bonnie++ output is empty: no CSV line and no result table')
    csv_results = [parse_csv_line(line) for line in text.splitlines() if _is_csv_candidate(line)]
    text_results = parse_text_tables(text)
    if csv_results:
        if len(text_results) == len(csv_results):
            for res, txt in zip(csv_results, text_results):
                res['version'] = res['version'] or txt['version']
                res['files'] = res['files'] or txt['files']
                if res['concurrency'] is None:
                    res['concurrency'] = txt['concurrency']
                for key in ('values', 'cpu', 'latency'):
                    for test, value in txt[key].items():
                        res[key].setdefault(test, value)
        return csv_results
    if text_results:
        return text_results
    errors = [ln.strip() for ln in text.splitlines() if ln.strip().startswith(ERROR_HINTS)]
    if errors:
        raise BonnieParseError('bonnie++ failed: %s' % '; '.join(errors[:3]))
    raise BonnieParseError('no bonnie++ result (CSV line or text table) in the output; first line: %s'
                           % _quote(first_line(text, strip=False, default='')))


def _file_count(files):
    m = re.match(r'^(\d+)', files or '')
    return int(m.group(1)) * 1024 if m else None


def bonnie_metrics(result):
    """The record's metrics (the names of docs/usage.md) and the warnings they call for."""
    metrics = {}
    warnings = []
    too_fast = []
    misprinted = []
    count = _file_count(result['files'])
    text_200 = result['source'] == 'text' and version_tuple(result['version']) >= (1, 98)
    for test in TESTS:
        if test in result['values']:
            value = result['values'][test]
            if text_200 and test in FILE_TESTS and value is not None and count and value == count:
                # bonnie++ 2.00a's text table prints the number of files instead of the rate
                misprinted.append(test)
            else:
                metrics[test] = metric(value, UNITS[test], 'higher')
                if value is None:
                    too_fast.append(test)
        if test in result['cpu']:
            metrics[test + '_cpu'] = metric(result['cpu'][test], '%', 'lower')
        if test in result['latency']:
            metrics[test + '_latency'] = metric(result['latency'][test], 'ms', 'lower')
    if too_fast:
        hints = []
        if any(t in FILE_TESTS for t in too_fast):
            hints.append('more files (-n, option files)')
        if any(t in IO_TESTS for t in too_fast):
            hints.append('a larger file size (-s, option size)')
        warnings.append('bonnie++ printed +++++ for %s: the test took under 500 ms and was not measured '
                        '(value null, too_fast); use %s' % (', '.join(too_fast), ' or '.join(hints)))
    if misprinted:
        warnings.append('bonnie++ %s text table prints the number of files (%d) in place of the rate for %s: '
                        'those rates are left out; its CSV line has them' % (result['version'], count, ', '.join(misprinted)))
    return metrics, warnings


def result_test(result):
    """The record's `test`: which of bonnie++'s two parts ran."""
    io = any(t in result['values'] or t in result['cpu'] for t in IO_TESTS)
    files = any(t in result['values'] or t in result['cpu'] for t in FILE_TESTS)
    if io and files:
        return 'all'
    return 'io' if io else 'files'


def bonnie_records(text, tool_version=None, labels=None, params=None, warnings=None, **extra):
    """Parse bonnie++ output into result records, one per result found (always a list)."""
    results = parse_bonnie(text)
    records = []
    for index, result in enumerate(results):
        metrics, own_warnings = bonnie_metrics(result)
        if not metrics:
            raise BonnieParseError('bonnie++ result without any measured test: %s' % _quote(result['lines'][-1]))
        rec_params = dict(params or {})
        for key, value in (('machine', result['name']), ('file_size', result['size']),
                           ('files', result['files']), ('concurrency', result['concurrency'])):
            if value not in (None, ''):
                rec_params.setdefault(key, value)
        if len(results) > 1:
            rec_params['run'] = index + 1
        records.append(new_record(TOOL, result_test(result), metrics, tool_version=result['version'] or tool_version,
                                  labels=labels, params=rec_params, warnings=list(warnings or []) + own_warnings,
                                  raw_tail='\n'.join(result['lines']), **extra))
    return records
