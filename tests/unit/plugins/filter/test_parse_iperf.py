# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/filter/parse_iperf.py: the filter over the shared parser (its parser's tests are in tests/unit/plugins/module_utils/test_iperf.py)."""

import pytest
import yaml

from ansible.errors import AnsibleFilterError
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.filter import parse_iperf as parse_iperf_mod
from ansible_collections.benchlab.bench.plugins.filter.parse_iperf import parse_iperf as parse_iperf_filter
from ansible_collections.benchlab.bench.tests.unit.plugins.module_utils.test_iperf import fx


def test_filter_module_exposes_the_filter():
    assert parse_iperf_mod.FilterModule().filters() == {'parse_iperf': parse_iperf_filter}
    assert yaml.safe_load(parse_iperf_mod.DOCUMENTATION)['name'] == 'parse_iperf'


@pytest.mark.parametrize('name,tool,test', [
    ('iperf3-3.12-tcp.json', 'iperf3', 'tcp'),
    ('iperf3-3.12-udp-b100M.json', 'iperf3', 'udp'),
    ('iperf-2.1.8-tcp-P2-csv.csv', 'iperf', 'tcp'),
    ('iperf-2.1.8-udp-fk.txt', 'iperf', 'udp'),
    ('iperf-2.1.8-tcp-reverse.txt', 'iperf', 'tcp_reverse'),
])
def test_filter_autodetects_and_returns_a_list(read_fixture, name, tool, test):
    records = parse_iperf_filter(fx(read_fixture, name), labels={'net': 'bridged'})
    assert isinstance(records, list) and len(records) == 1
    rec = records[0]
    assert validate_record(rec) == []
    assert (rec['tool'], rec['test']) == (tool, test)
    assert rec['labels'] == {'net': 'bridged'}
    assert 'cmd' not in rec and 'started' not in rec and 'duration_s' not in rec


def test_filter_labels_carry_nothing_extra(read_fixture):
    rec = parse_iperf_filter(fx(read_fixture, 'iperf3-3.12-tcp.json'))[0]
    assert rec['labels'] == {}
    assert set(['protocol', 'direction', 'streams', 'version']) <= set(rec['params'])


def test_filter_reverse_hint_for_csv(read_fixture):
    rec = parse_iperf_filter(fx(read_fixture, 'iperf-2.1.8-tcp-reverse-csv.csv'), reverse=True)[0]
    assert rec['test'] == 'tcp_reverse'


def test_filter_stderr_argument(read_fixture):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_iperf_filter(fx(read_fixture, 'iperf-2.1.8-refused-csv.csv'),
                           stderr=fx(read_fixture, 'iperf-2.1.8-refused-csv.stderr'))
    assert str(exc.value) == 'parse_iperf: iperf failed: tcp connect failed: Connection refused'


@pytest.mark.parametrize('value', [None, 42, b'{}', ['x'], {'stdout': ''}])
def test_filter_non_string(value):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_iperf_filter(value)
    assert 'parse_iperf expects the text iperf printed, got %s' % type(value).__name__ in str(exc.value)


@pytest.mark.parametrize('text,part', [
    ('', 'parse_iperf: iperf output is empty'),
    ('garbage here\n', "parse_iperf: not iperf3 JSON, iperf2 CSV (-y C) or iperf2 text output; first line: 'garbage here'"),
])
def test_filter_garbage(text, part):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_iperf_filter(text)
    assert part in str(exc.value)


def test_filter_truncated(read_fixture):
    text = fx(read_fixture, 'iperf3-3.12-udp-b100M.json')
    with pytest.raises(AnsibleFilterError, match='parse_iperf: iperf3 JSON output is truncated'):
        parse_iperf_filter(text[:len(text) // 3])


def test_filter_connection_refused(read_fixture):
    with pytest.raises(AnsibleFilterError, match='parse_iperf: iperf3 reported an error: unable to connect'):
        parse_iperf_filter(fx(read_fixture, 'iperf3-3.12-refused.json'))
