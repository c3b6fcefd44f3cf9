# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/filter/parse_sysbench.py: the filter over the shared parser (its parser's tests are in tests/unit/plugins/module_utils/test_sysbench.py)."""

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.filter.parse_sysbench import FilterModule, parse_sysbench as parse_sysbench_filter
from ansible_collections.benchlab.bench.tests.unit.plugins.module_utils.test_sysbench import FATAL_CASES, _fx


def test_filter(read_fixture):
    assert FilterModule().filters() == {'parse_sysbench': parse_sysbench_filter}
    rec = parse_sysbench_filter(_fx(read_fixture, 'sysbench-1.0.20-rndrw.txt'), labels={'cell': 'x'})
    assert validate_record(rec) == [] and rec['labels'] == {'cell': 'x'} and rec['test'] == 'rndrw'
    assert 'cmd' not in rec and 'duration_s' not in rec


@pytest.mark.parametrize('value', [None, 1, b'File operations:', {'a': 1}])
def test_filter_non_string(value):
    with pytest.raises(AnsibleFilterError, match='parse_sysbench expects the text sysbench printed, got %s' % type(value).__name__):
        parse_sysbench_filter(value)


def test_filter_garbage_names_the_tool():
    with pytest.raises(AnsibleFilterError) as exc:
        parse_sysbench_filter('Permission denied\n')
    assert str(exc.value) == "parse_sysbench: no sysbench 'File operations' report; first line not understood: 'Permission denied'"


@pytest.mark.parametrize('name,message', FATAL_CASES)
def test_filter_fatal_names_the_tool(read_fixture, name, message):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_sysbench_filter(_fx(read_fixture, name))
    assert str(exc.value) == 'parse_sysbench: sysbench failed: ' + message
