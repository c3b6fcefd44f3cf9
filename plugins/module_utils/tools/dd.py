# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The dd parser: pure functions over dd's stderr, shared by the module, the filter and the callback.

Formats read (fixtures in tests/unit/fixtures/dd, each with the command that made it):
- coreutils 8.24+: ``268435456 bytes (268 MB, 256 MiB) copied, 0.766629 s, 350 MB/s``
- coreutils 8.x before 8.24: ``268435456 bytes (268 MB) copied, 0.766629 s, 350 MB/s``
- tiny transfers: ``512 bytes copied, 3.6689e-05 s, 14.0 MB/s``; rates in B/s, kB/s, MB/s, GB/s
- ``status=progress`` lines (carriage-return separated, before the final summary)
- dd's own errors (``dd: error writing '/dev/full': No space left on device``)
- old coreutils and busybox builds that print only the ``N+M records`` lines: the byte count then
  comes from the block size given by the caller and the time from a ``time`` ``real`` line;
  with ``sync_after`` the ``real`` of the ``time sync`` that followed is added (a write measured
  with its final sync, reference 000's ``time dd ...; time sync`` transcript).
"""

import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import tail
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, parse_size, rate_to_mb_s

# A decimal number as dd prints it (1, 1.5, .5, 1.5e-05): one dot at most, so "0.00.0" is not one.
_NUMBER = r'(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?'
RECORDS_RE = re.compile(r'^(?P<full>\d+)\+(?P<partial>\d+) records (?P<dir>in|out)\s*$')
SUMMARY_RE = re.compile(
    r'^(?P<bytes>\d+) bytes?(?: \([^)]*\))? copied, (?P<secs>%s) (?:s|seconds?),'
    r' (?P<rate>%s|Infinity) ?(?P<unit>[kMGTP]?i?B/s)\s*$' % (_NUMBER, _NUMBER))
TIME_REAL_RE = re.compile(r'^real\s+(?:(?P<m>\d+)m)?(?P<s>\d+(?:\.\d*)?|\.\d+)s\s*$')
ERROR_RE = re.compile(r'^dd: (?P<msg>.+)$')


class DdParseError(ValueError):
    """dd output that cannot be read; the message names the problem or quotes the line."""


def _lines(text):
    if not isinstance(text, str):
        raise DdParseError('dd output must be text, got %s' % type(text).__name__)
    # status=progress rewrites one line with carriage returns; each piece is its own line.
    return text.replace('\r', '\n').splitlines()


def _block_size(bs):
    try:
        value = parse_size(bs)
    except UnitError as e:
        raise DdParseError('bs: %s' % e)
    if value <= 0:
        raise DdParseError('bs must be greater than zero, got %r' % (bs,))
    return value


def _scan(text):
    """One pass over dd's output: (result, summaries, later_reals, first line not understood)."""
    result = {'records_in': None, 'records_out': None, 'bytes': None, 'seconds': None,
              'rate_value': None, 'rate_unit': None, 'throughput_mb_s': None,
              'errors': [], 'progress': 0}
    summaries, later_reals = [], []
    unread = None
    for line in _lines(text):
        s = line.strip()
        if not s:
            continue
        m = RECORDS_RE.match(s)
        if m:
            result['records_' + m.group('dir')] = {'full': int(m.group('full')), 'partial': int(m.group('partial'))}
            continue
        m = SUMMARY_RE.match(s)
        if m:
            summaries.append(m)
            continue
        m = TIME_REAL_RE.match(s)
        if m:
            seconds = int(m.group('m') or 0) * 60 + float(m.group('s'))
            if result['records_out'] is not None and result['seconds'] is None and not summaries:
                result['seconds'] = seconds
            elif result['records_out'] is not None or summaries:
                later_reals.append(seconds)  # a command timed after dd (the `time sync` of a write)
            continue
        m = ERROR_RE.match(s)
        if m:
            result['errors'].append(m.group('msg'))
        elif unread is None:
            unread = s
    return result, summaries, later_reals, unread


def _add_sync(result, later_reals):
    """sync_after: the write's time includes the `time sync` that followed dd: the `real` of the last
    `time` block after dd's own time (with new coreutils wording and `time dd`, the first one is dd's)."""
    if result['seconds'] is None or not later_reals:
        raise DdParseError("sync_after: no 'real' line of a `time sync` after dd's own time in the output "
                           '(dd run as `time dd ...; time sync`)')
    result['seconds'] += later_reals[-1]
    result['sync_s'] = later_reals[-1]


def parse_dd(text, bs=None, sync_after=False):
    """Parse dd's stderr into a dict.

    Returns records_in/records_out ({full, partial}), bytes, seconds, reported rate
    (rate_value, rate_unit), throughput_mb_s (bytes/seconds in MB/s), errors (dd's own messages)
    and progress (number of status=progress lines). With `sync_after`, the `real` of the last
    `time` after dd's (the final `time sync`) is added to seconds (a write measured with its final sync, as
    reference 000 did) and given as sync_s. Raises DdParseError when no transfer can be found,
    with the reason.
    """
    result, summaries, later_reals, unread = _scan(text)
    if summaries:
        # status=progress prints the same summary shape once a second; the final one comes after
        # the "records out" line and is the last one.
        result['progress'] = len(summaries) - 1
        last = summaries[-1]
        result['bytes'] = int(last.group('bytes'))
        result['seconds'] = float(last.group('secs'))
        result['rate_unit'] = last.group('unit')
        rate = last.group('rate')
        result['rate_value'] = float('inf') if rate == 'Infinity' else float(rate)
    elif result['records_out'] is not None and bs:
        bs = _block_size(bs)
        if result['records_out']['partial']:
            raise DdParseError('dd printed no byte count and %d partial record(s): the size cannot be '
                               'derived from bs' % result['records_out']['partial'])
        result['bytes'] = result['records_out']['full'] * bs
    if result['bytes'] is None:
        raise _no_transfer_error(result, unread)
    if sync_after:
        _add_sync(result, later_reals)
    if result['seconds'] is not None and result['seconds'] > 0:
        result['throughput_mb_s'] = result['bytes'] / result['seconds'] / 1e6
    elif result['rate_value'] is not None and result['rate_value'] != float('inf'):
        try:
            result['throughput_mb_s'] = rate_to_mb_s(result['rate_value'], result['rate_unit'])
        except UnitError as e:
            raise DdParseError(str(e))
    return result


def _no_transfer_error(result, unread):
    """The DdParseError for output without a byte count, saying why."""
    if result['errors']:
        return DdParseError('dd failed: %s' % '; '.join(result['errors']))
    if result['records_out'] is not None:
        return DdParseError("dd printed only its 'records' lines and no 'bytes ... copied' line "
                            '(an old coreutils or a busybox build): pass bs to derive the size')
    return DdParseError("no dd transfer summary ('N+M records out' / 'N bytes ... copied') in the output; %s" % (
        'first line not understood: %r' % unread[:200] if unread else 'the output is empty'))


def dd_metrics(parsed):
    """The record's metrics for a parsed dd run (docs/usage.md: throughput, bytes, elapsed)."""
    metrics = {'bytes': metric(parsed['bytes'], 'bytes', 'higher')}
    if parsed['seconds'] is not None:
        metrics['elapsed'] = metric(parsed['seconds'], 's', 'lower')
    if parsed['throughput_mb_s'] is not None:
        metrics['throughput'] = metric(parsed['throughput_mb_s'], 'MB/s', 'higher')
    return metrics


def dd_record(text, test='write', bs=None, tool_version=None, labels=None, params=None, warnings=None,
              sync_after=False, **extra):
    """Parse dd output into a result record. A dd that reported its own error is a failed run:
    DdParseError with dd's message, never a record with a made-up number. sync_after: see parse_dd."""
    parsed = parse_dd(text, bs=bs, sync_after=sync_after)
    if parsed['errors']:
        raise DdParseError('dd reported an error: %s' % '; '.join(parsed['errors']))
    if not parsed['bytes']:
        raise DdParseError('dd copied 0 bytes: nothing was measured')
    return new_record('dd', test, dd_metrics(parsed), tool_version=tool_version, labels=labels,
                      params=params, warnings=warnings, raw_tail=tail(text, 5), **extra)


def copy_input_problem(test, input_path, input_is_device, path_is_device, path):
    """None, or what is wrong with a block-device copy's `input` (the device read) and `path` (the
    device written): `input` belongs to test copy onto a block device, and such a copy needs one."""
    if input_path is None:
        if test == 'copy' and path_is_device:
            return ('input: test copy onto the block device %s needs input, the block device to copy from '
                    '(such as /dev/vda)' % path)
        return None
    if test != 'copy':
        return 'input: only test copy reads an input device (test is %s)' % test
    if not input_is_device:
        return 'input: %s is not a block device' % input_path
    if not path_is_device:
        return ('input: a copy from the block device %s writes a block device given as path; %s is not one'
                % (input_path, path))
    return None


def space_needed(test, size, target_dir, source_dir=None):
    """[(directory, bytes)] dd will write: the test file in `target_dir` (a write or a read's test
    file, both files of a copy) and the random source in `source_dir` (None: /dev/zero or none)."""
    needs = []
    if target_dir:
        needs.append((target_dir, 2 * size if test == 'copy' else size))
    if source_dir and test == 'write':
        needs.append((source_dir, size))
    return needs
