# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/filter/parse_time.py: the filter over the shared parser (its parser's tests are in tests/unit/plugins/module_utils/test_time.py)."""

import pytest
import yaml

from ansible.errors import AnsibleFilterError
from ansible_collections.benchlab.bench.plugins.filter import parse_time as parse_time_mod
from ansible_collections.benchlab.bench.plugins.filter.parse_time import parse_time as parse_time_filter
from ansible_collections.benchlab.bench.tests.unit.plugins.module_utils.test_time import KEYS, REFERENCE


def test_filter_module_exposes_the_filter():
    assert parse_time_mod.FilterModule().filters() == {'parse_time': parse_time_filter}
    doc = yaml.safe_load(parse_time_mod.DOCUMENTATION)
    assert doc['name'] == 'parse_time'
    assert any('not' in d and 'result records' in d for d in doc['description'])
    yaml.safe_load(parse_time_mod.EXAMPLES)
    yaml.safe_load(parse_time_mod.RETURN)


def test_filter_returns_plain_dicts(read_fixture):
    blocks = parse_time_filter(read_fixture(REFERENCE))
    assert len(blocks) == 12
    assert all(isinstance(b, dict) and set(b) == KEYS and 'metrics' not in b for b in blocks)
    assert blocks[1]['real'] == pytest.approx(4694.761)


@pytest.mark.parametrize('value', [None, 42, b'real 0m1.000s', ['real 0m1.000s'], {'stderr': 'x'}])
def test_filter_non_string(value):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_time_filter(value)
    assert 'parse_time expects the text time printed, got %s' % type(value).__name__ in str(exc.value)


@pytest.mark.parametrize('text,message', [
    ('', 'parse_time: no time output: the input is empty'),
    ('garbage\n', "parse_time: no time output found (bash 'time', 'time -p', GNU time's default or -v format); "
                  "the first line is 'garbage'"),
    ('real\t0m0.202s\nuser\t0m0.000s', "parse_time: truncated time output: the input ends after "
                                       "'user\\t0m0.000s' (line 2), before its 'sys' line"),
])
def test_filter_errors_name_the_filter_and_quote_the_line(text, message):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_time_filter(text)
    assert message in str(exc.value)
