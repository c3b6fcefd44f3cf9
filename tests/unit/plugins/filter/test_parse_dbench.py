# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/filter/parse_dbench.py: the filter over the shared parser (its parser's tests are in tests/unit/plugins/module_utils/test_dbench.py)."""

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.filter.parse_dbench import FilterModule, parse_dbench as parse_dbench_filter
from ansible_collections.benchlab.bench.tests.unit.plugins.module_utils.test_dbench import _fx


def test_filter(read_fixture):
    assert FilterModule().filters() == {'parse_dbench': parse_dbench_filter}
    rec = parse_dbench_filter(_fx(read_fixture, 'dbench-4.0-4clients.txt'), labels={'cell': 'x'})
    assert validate_record(rec) == [] and rec['labels'] == {'cell': 'x', 'clients': 4}
    assert 'cmd' not in rec and 'started' not in rec
    assert parse_dbench_filter(_fx(read_fixture, 'dbench-4.0-4clients.txt'), test='netbench')['test'] == 'netbench'


@pytest.mark.parametrize('value', [None, 3, b'Throughput 1 MB/sec 1 procs', ['x']])
def test_filter_non_string(value):
    with pytest.raises(AnsibleFilterError, match='parse_dbench expects the text dbench printed, got %s' % type(value).__name__):
        parse_dbench_filter(value)


def test_filter_errors_name_the_tool(read_fixture):
    for text, part in [('', 'the output is empty'), ('garbage here\n', "'garbage here'"),
                       (_fx(read_fixture, 'dbench-4.0-missing-loadfile.txt') + _fx(read_fixture, 'dbench-4.0-missing-loadfile.stderr'),
                        "error opening '/nonexistent/client.txt'")]:
        with pytest.raises(AnsibleFilterError) as exc:
            parse_dbench_filter(text)
        assert str(exc.value).startswith('parse_dbench: ') and part in str(exc.value)
