# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/run/units.py and stats.py."""

from __future__ import annotations

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import delta_pct, summarize
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import (
    UnitError, bytes_per_s_to_mb_s, format_bytes, ns_to_ms, parse_size, rate_to_mb_s)


@pytest.mark.parametrize('text,expected', [
    ('256M', 256 * 1024 ** 2), ('1g', 1024 ** 3), ('4k', 4096), ('512', 512), ('1GiB', 1024 ** 3),
    ('10MB', 10 * 1000 ** 2), ('1kB', 1000), ('2 KiB', 2048), (' 1.5G ', int(1.5 * 1024 ** 3)),
    ('1T', 1024 ** 4), (0, 0), (4096, 4096),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_parse_size_decimal():
    assert parse_size('1M', binary=False) == 1000000
    assert parse_size('1MiB', binary=False) == 1024 ** 2


@pytest.mark.parametrize('bad', ['', 'abc', '-1M', '1X', '1.2.3M', True, False, -1, None])
def test_parse_size_rejects(bad):
    with pytest.raises(UnitError):
        parse_size(bad)


@pytest.mark.parametrize('value,unit,expected', [
    (1.4, 'GB/s', 1400.0), (350, 'MB/s', 350.0), (4.9, 'kB/s', 0.0049), (10, 'B/s', 1e-5),
    (1, 'MiB/s', 1.048576), (1, 'GiB/s', 1073.741824), (1, 'KiB/s', 0.001024), (2, 'TB/s', 2e6),
    ('3.5', ' gb/s ', 3500.0),
])
def test_rate_to_mb_s(value, unit, expected):
    assert rate_to_mb_s(value, unit) == pytest.approx(expected)


@pytest.mark.parametrize('unit', ['Mbit/s', 'MB', 'ops/s', ''])
def test_rate_to_mb_s_unknown_unit(unit):
    with pytest.raises(UnitError, match='unknown rate unit'):
        rate_to_mb_s(1, unit)


def test_simple_conversions():
    assert bytes_per_s_to_mb_s(1890390535) == pytest.approx(1890.390535)
    assert ns_to_ms(618496) == pytest.approx(0.618496)


@pytest.mark.parametrize('n,expected', [
    (268435456, '256 MiB'), (0, '0 B'), (1023, '1023 B'), (1536, '1.5 KiB'), (24683584 * 1024, '23.5 GiB'),
    (1024 ** 5, '1024 TiB'),
])
def test_format_bytes(n, expected):
    assert format_bytes(n) == expected


def test_unit_error_is_a_value_error():
    assert issubclass(UnitError, ValueError)


def test_summarize():
    s = summarize([1, 2, 6])
    assert {k: s[k] for k in ('n', 'too_fast', 'mean', 'min', 'max', 'median')} == {'n': 3, 'too_fast': 0, 'mean': 3.0, 'min': 1.0, 'max': 6.0, 'median': 2.0}


def test_summarize_too_fast_values_are_counted_apart():
    s = summarize([None, 2.0, 4.0])
    assert {k: s[k] for k in ('n', 'too_fast', 'mean', 'min', 'max')} == {'n': 2, 'too_fast': 1, 'mean': 3.0, 'min': 2.0, 'max': 4.0}
    assert summarize([None, None]) == {'n': 0, 'too_fast': 2, 'mean': None, 'min': None, 'max': None,
                                       'median': None, 'stdev': None, 'cv': None, 'ci95': None}
    assert summarize([])['n'] == 0 and summarize([])['mean'] is None


def test_summarize_zero_is_a_value():
    s = summarize([0.0, 0])
    expected = {'n': 2, 'too_fast': 0, 'mean': 0.0, 'min': 0.0, 'max': 0.0, 'stdev': 0.0, 'cv': None}
    assert {k: s[k] for k in expected} == expected


@pytest.mark.parametrize('value,baseline,expected', [
    (110, 100, 10.0), (90, 100, -10.0), (100, 100, 0.0), (5, 0, None), (5, 0.0, None), (None, 100, None),
    (100, None, None), (0, 50, -100.0),
])
def test_delta_pct(value, baseline, expected):
    result = delta_pct(value, baseline)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)
