# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""Units: parsing human sizes and rates into the canonical units of the result record.

Canonical units (the record's, docs/usage.md): throughput MB/s (10^6 bytes/s), network Mbit/s, time s,
latency ms. Everything that converts goes through here.
"""

import re

_SIZE_RE = re.compile(r'^\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[kmgtp]?)(?P<i>i?)(?P<b>b?)\s*$', re.IGNORECASE)
_POWERS = {'': 0, 'k': 1, 'm': 2, 'g': 3, 't': 4, 'p': 5}

# Multipliers to bytes per second for the rate units printed by dd (coreutils and busybox),
# fio and friends. Lower-case keys; 'kb/s' is the SI kilobyte coreutils prints as 'kB/s'.
_RATE_TO_BYTES = {
    'b/s': 1.0,
    'kb/s': 1e3, 'mb/s': 1e6, 'gb/s': 1e9, 'tb/s': 1e12,
    'kib/s': 1024.0, 'mib/s': 1024.0 ** 2, 'gib/s': 1024.0 ** 3, 'tib/s': 1024.0 ** 4,
}


class UnitError(ValueError):
    """A size or rate that cannot be understood; the message quotes it."""


def parse_size(text, binary=True):
    """'256M', '1g', '4k', '512', '1GiB', '10MB' -> bytes (int).

    Suffixes K/M/G/T/P are powers of 1024 by default (dd, fio and bonnie++ read them that way);
    an explicit 'B' without 'i' after the prefix ('10MB') means powers of 1000, as in dd.
    """
    if isinstance(text, bool):
        raise UnitError('size must be a number or a string such as 256M, not %r' % (text,))
    if isinstance(text, int):
        if text < 0:
            raise UnitError('size must not be negative: %r' % (text,))
        return text
    m = _SIZE_RE.match(str(text))
    if not m:
        raise UnitError('not a size: %r (expected e.g. 4k, 256M, 2G)' % (text,))
    num = float(m.group('num'))
    unit = m.group('unit').lower()
    base = 1024 if (binary and not (m.group('b') and not m.group('i'))) else 1000
    if m.group('i'):
        base = 1024
    return int(num * base ** _POWERS[unit])


def rate_to_mb_s(value, unit):
    """A rate such as (1.4, 'GB/s') -> MB/s (10^6 bytes/s)."""
    key = unit.strip().lower()
    if key not in _RATE_TO_BYTES:
        raise UnitError('unknown rate unit %r' % (unit,))
    return float(value) * _RATE_TO_BYTES[key] / 1e6


def bytes_per_s_to_mb_s(value):
    return float(value) / 1e6


def ns_to_ms(value):
    return float(value) / 1e6


def format_bytes(n):
    """Bytes as a short IEC string for messages: 268435456 -> '256 MiB'."""
    n = float(n)
    for unit in ('B', 'KiB', 'MiB', 'GiB', 'TiB'):
        if abs(n) < 1024 or unit == 'TiB':
            return ('%d %s' % (n, unit)) if n == int(n) else ('%.1f %s' % (n, unit))
        n /= 1024.0
    return '%s B' % n
