# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The ``time`` output parser: pure functions, shared by the parse_time filter and any module.

Formats read (fixtures in tests/unit/fixtures/time, each with the command that made it):
- bash's ``time`` keyword: ``real<TAB>0m54.809s`` / ``user ...`` / ``sys ...`` (tab or space
  separated, minutes unbounded: ``78m14.761s``; the decimal comma of a de_DE locale too);
- POSIX ``time -p`` (bash and GNU time): ``real 54.81`` / ``user 0.00`` / ``sys 0.00``;
- GNU ``/usr/bin/time`` default format: ``0.00user 0.00system 0:00.10elapsed 0%CPU (...)``,
  elapsed as ``m:ss.cc`` or, from one hour on, ``h:mm:ss``; an optional
  ``Command exited with non-zero status N`` / ``Command terminated by signal N`` line before it;
- GNU ``/usr/bin/time -v``: ``User time (seconds): ...``, ``System time (seconds): ...``,
  ``Elapsed (wall clock) time (h:mm:ss or m:ss): 0:01.23`` ... ``Exit status: N``.

Other lines (the timed command's own output, a mail around a transcript) are skipped. Unlike the
other parsers this one returns plain dicts, not result records: ``time`` measures any command.
"""

import re

NUMBER = r'\d+(?:[.,]\d+)?'
BASH_VALUE_RE = re.compile(r'^(?P<m>\d+)m(?P<s>%s)s$' % NUMBER)
POSIX_VALUE_RE = re.compile(r'^(?P<s>%s)$' % NUMBER)
CLOCK_RE = re.compile(r'^(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>%s)$' % NUMBER)
KEYWORD_RE = re.compile(r'^(?P<key>real|user|sys)[ \t]+(?P<value>\S+)$')
GNU_RE = re.compile(r'^(?P<user>%s)user (?P<sys>%s)system (?P<elapsed>[0-9:.,]+)elapsed (?P<cpu>\S+)CPU\b'
                    % (NUMBER, NUMBER))
GNU_LIKE_RE = re.compile(r'^\d[0-9.,]*user\b')
STATUS_RE = re.compile(r'^Command (?:exited with non-zero status (?P<status>\d+)|terminated by signal (?P<signal>\d+))$')
VERBOSE_FIRST = ('Command being timed', 'User time (seconds)')
VERBOSE_KEYS = {
    'User time (seconds)': 'user',
    'System time (seconds)': 'sys',
    'Elapsed (wall clock) time (h:mm:ss or m:ss)': 'real',
}
VERBOSE_LINE_RE = re.compile(r'^(?P<key>[A-Z][^:]*(?:\([^)]*\))?[^:]*): (?P<value>.*)$')
FORMATS = ('bash', 'posix', 'gnu', 'gnu-verbose')


class TimeParseError(ValueError):
    """``time`` output that cannot be read; the message names the problem and quotes the line."""


def _number(text):
    return float(text.replace(',', '.'))


def parse_duration(text):
    """Seconds (float) from one ``time`` value: ``1m2.500s`` (bash), ``62.50`` (POSIX -p),
    ``1:02.50`` or ``1:01:02`` (GNU time); a decimal comma is accepted. None when unreadable."""
    text = text.strip()
    m = BASH_VALUE_RE.match(text)
    if m:
        return round(int(m.group('m')) * 60 + _number(m.group('s')), 6)
    m = POSIX_VALUE_RE.match(text)
    if m:
        return round(_number(m.group('s')), 6)
    m = CLOCK_RE.match(text)
    if m:
        return round(int(m.group('h') or 0) * 3600 + int(m.group('m')) * 60 + _number(m.group('s')), 6)
    return None


def _value_format(value):
    if BASH_VALUE_RE.match(value):
        return 'bash'
    if POSIX_VALUE_RE.match(value):
        return 'posix'
    return None


def _block(real, user, sys_, fmt, line, exit_status=None, signal=None):
    return {'real': real, 'user': user, 'sys': sys_, 'format': fmt, 'line': line,
            'exit_status': exit_status, 'signal': signal}


class _Reader(object):
    def __init__(self, text):
        self.rows = [r.rstrip('\r') for r in text.split('\n')]
        self.i = 0

    def next_nonblank(self):
        while self.i < len(self.rows):
            row = self.rows[self.i]
            self.i += 1
            if row.strip():
                return self.i, row.strip()
        return None, None


def _keyword_block(reader, lineno, first, value, status):
    """real/user/sys lines (bash or -p). `first` is the real line already read."""
    fmt = _value_format(value)
    found = {'real': parse_duration(value)}
    prev, prev_n = first, lineno
    for key in ('user', 'sys'):
        n, row = reader.next_nonblank()
        if row is None:
            raise TimeParseError("truncated time output: the input ends after %r (line %d), before its '%s' line"
                                 % (prev, prev_n, key))
        m = KEYWORD_RE.match(row)
        if not m or m.group('key') != key:
            raise TimeParseError("cannot read line %d %r: expected the '%s' line of the time block that starts "
                                 "with %r (line %d)" % (n, row, key, first, lineno))
        if _value_format(m.group('value')) != fmt:
            raise TimeParseError('cannot read line %d %r: its time value is not in the %s format of %r (line %d)'
                                 % (n, row, fmt, first, lineno))
        found[key] = parse_duration(m.group('value'))
        prev, prev_n = row, n
    return _block(found['real'], found['user'], found['sys'], fmt, lineno, **status)


def _gnu_block(m, lineno, status):
    real = parse_duration(m.group('elapsed'))
    if real is None or not CLOCK_RE.match(m.group('elapsed')):
        return None
    return _block(real, _number(m.group('user')), _number(m.group('sys')), 'gnu', lineno, **status)


def _verbose_block(reader, lineno, first, status):
    """GNU time -v: key: value lines up to 'Exit status' (or the first line of another kind)."""
    found = {}
    last, last_n = first, lineno
    exit_status = status.get('exit_status')
    rows = [(lineno, first)]
    while True:
        save = reader.i
        n, row = reader.next_nonblank()
        if row is None:
            break
        m = VERBOSE_LINE_RE.match(row)
        if not m or m.group('key') == 'Command being timed' or STATUS_RE.match(row):
            reader.i = save
            break
        rows.append((n, row))
        last, last_n = row, n
        if m.group('key') == 'Exit status':
            try:
                exit_status = int(m.group('value'))
            except ValueError:
                raise TimeParseError('cannot read line %d %r: the exit status is not a number' % (n, row))
            break
    for n, row in rows:
        m = VERBOSE_LINE_RE.match(row)
        key = VERBOSE_KEYS.get(m.group('key')) if m else None
        if key:
            value = parse_duration(m.group('value'))
            if value is None:
                raise TimeParseError('cannot read line %d %r: the time value is not a number of seconds '
                                     'or [h:]m:ss' % (n, row))
            found[key] = value
    missing = [k for k, v in sorted(VERBOSE_KEYS.items(), key=lambda kv: kv[1]) if v not in found]
    if missing:
        raise TimeParseError("truncated GNU time -v block starting with %r (line %d): no %s line; the block "
                             "ends with %r (line %d)" % (first, lineno, ' / '.join("'%s'" % k for k in missing),
                                                         last, last_n))
    return _block(found['real'], found['user'], found['sys'], 'gnu-verbose', lineno,
                  exit_status=exit_status, signal=status.get('signal'))


def parse_time(text):
    """Every ``time`` block in `text`, in order: a list of dicts with

    - ``real``, ``user``, ``sys``: seconds (floats; ``real`` is the wall-clock time),
    - ``format``: ``bash``, ``posix`` (``time -p``), ``gnu`` (GNU time's default) or ``gnu-verbose``,
    - ``line``: the 1-based line where the block starts,
    - ``exit_status``, ``signal``: what GNU time said about the command (None when not printed;
      GNU time prints nothing for status 0 in its default format, which gives 0 here).

    Raises TimeParseError, quoting the line, for input that is not text, holds no ``time`` block,
    or has a block it cannot read (a value that is not a time, a block cut short).
    """
    if not isinstance(text, str):
        raise TimeParseError('time output must be text, got %s' % type(text).__name__)
    reader = _Reader(text)
    blocks = []
    status = {}
    first_line = None
    while True:
        n, row = reader.next_nonblank()
        if row is None:
            break
        if first_line is None:
            first_line = row
        m = STATUS_RE.match(row)
        if m:
            status = {'exit_status': int(m.group('status')) if m.group('status') else None,
                      'signal': int(m.group('signal')) if m.group('signal') else None}
            continue
        m = KEYWORD_RE.match(row)
        if m and m.group('key') == 'real' and m.group('value')[0].isdigit():
            if _value_format(m.group('value')) is None:
                raise TimeParseError('cannot read line %d %r: the real time is neither bash (0m1.234s) nor '
                                     'POSIX -p (1.23) format' % (n, row))
            blocks.append(_keyword_block(reader, n, row, m.group('value'), status))
            status = {}
            continue
        if GNU_LIKE_RE.match(row):
            m = GNU_RE.match(row)
            block = _gnu_block(m, n, dict({'exit_status': 0, 'signal': None}, **status)) if m else None
            if block is None:
                raise TimeParseError("cannot read line %d %r: not GNU time's default format "
                                     "('0.00user 0.00system 0:00.00elapsed 0%%CPU ...')" % (n, row))
            blocks.append(block)
            status = {}
            continue
        m = VERBOSE_LINE_RE.match(row)
        if m and m.group('key') in VERBOSE_FIRST:
            blocks.append(_verbose_block(reader, n, row, status))
            status = {}
            continue
    if not blocks:
        if first_line is None:
            raise TimeParseError('no time output: the input is empty')
        raise TimeParseError("no time output found (bash 'time', 'time -p', GNU time's default or -v format); "
                             'the first line is %r' % first_line)
    return blocks
