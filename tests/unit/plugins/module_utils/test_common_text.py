# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/run/common.py text helpers, with each former caller's behaviour kept (iperf: stripped
first line or None, cut without a mark; bonnie: the line as printed or '', cut with '...')."""

import re

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import first_line, quote_line, version_tuple


def test_first_line_iperf_style():
    assert first_line('\n  \n  iperf 3.12  \nx') == 'iperf 3.12'
    assert first_line('') is None
    assert first_line(None) is None


def test_first_line_bonnie_style():
    assert first_line('\n  Version  2.00\n', strip=False, default='') == '  Version  2.00'
    assert first_line(' \n', strip=False, default='') == ''


def test_quote_line():
    assert quote_line(None) == '(empty output)'
    assert quote_line('a' * 250) == repr('a' * 200)
    assert quote_line('a' * 250, mark='...') == repr('a' * 200 + '...')
    assert quote_line('short\n', mark='...') == repr('short')


@pytest.mark.parametrize('version, expected', [('2.1.8', (2, 1, 8)), ('3.12', (3, 12)), ('1.03e', (1, 3)),
                                               ('2.00a', (2, 0)), ('', ()), (None, ()), ('x.1', ())])
def test_version_tuple(version, expected):
    assert version_tuple(version) == expected


@pytest.mark.parametrize('version', ['1.03', '1.03e', '1.93c', '1.97', '1.98', '2.00', '2.00a', 'garbage', '', None])
def test_version_tuple_as_bonnie_compared_it(version):
    """bonnie.py compared a (major, minor) regex match, (0, 0) without one, against (1, 98): the
    shared version_tuple gives the same answer for every version form bonnie++ prints."""
    m = re.match(r'^(\d+)\.(\d+)', version or '')
    old = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    assert (version_tuple(version) >= (1, 98)) == (old >= (1, 98))
