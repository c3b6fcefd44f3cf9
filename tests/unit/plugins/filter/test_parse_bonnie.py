# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/filter/parse_bonnie.py: the filter over the shared parser (its parser's tests are in tests/unit/plugins/module_utils/test_bonnie.py)."""

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.benchlab.bench.plugins.filter.parse_bonnie import parse_bonnie as parse_bonnie_filter
from ansible_collections.benchlab.bench.tests.unit.plugins.module_utils.test_bonnie import DIR


def test_filter_returns_a_list(read_fixture):
    records = parse_bonnie_filter(read_fixture(DIR + 'reference-003-bonnie-1.03-drbd.txt'), labels={'storage': 'drbd'})
    assert isinstance(records, list) and len(records) == 6
    assert all(r['labels'] == {'storage': 'drbd'} and 'cmd' not in r and 'started' not in r for r in records)
    one = parse_bonnie_filter(read_fixture(DIR + 'public-1.96-perfkit-sample.csv'))
    assert isinstance(one, list) and len(one) == 1


@pytest.mark.parametrize('value,expected', [
    (None, 'got NoneType'),
    (42, 'got int'),
    ('', "parse_bonnie: bonnie++ output is empty"),
    ('garbage here\n', "parse_bonnie: no bonnie++ result (CSV line or text table) in the output; first line: 'garbage here'"),
])
def test_filter_errors(value, expected):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_bonnie_filter(value)
    assert expected in str(exc.value)
