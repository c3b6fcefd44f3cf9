"""The summarize and compare filters: thin shims over module_utils.analysis.stats."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.filter.compare import compare
from ansible_collections.benchlab.bench.plugins.filter.summarize import summarize
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record


def rec(v):
    return new_record('dd', 'write', {'throughput': metric(v, 'MB/s')})


def test_summarize_numbers_and_records_agree():
    assert summarize([rec(1.0), rec(2.0), rec(6.0)], 'throughput') == summarize([1.0, 2.0, 6.0])
    assert summarize([1.0, 2.0, 6.0])['median'] == 2.0


def test_summarize_errors_name_the_problem():
    with pytest.raises(AnsibleFilterError, match='item 1 is not a record with metric'):
        summarize([rec(1.0), {'metrics': {}}], 'throughput')
    with pytest.raises(AnsibleFilterError, match='expects a list'):
        summarize('1,2,3')
    with pytest.raises(AnsibleFilterError, match='not a finite number'):
        summarize([1, 'x'])


def test_compare_filter():
    out = compare(5481.256, 4720.096, better='lower')
    assert out['slower_pct'] == pytest.approx(13.887, abs=0.001)
    with pytest.raises(AnsibleFilterError, match='better must be'):
        compare([1, 2], [1, 2], better='faster')
    with pytest.raises(AnsibleFilterError, match='candidate'):
        compare('fast', [1, 2])
