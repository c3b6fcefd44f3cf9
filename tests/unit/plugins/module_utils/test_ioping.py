# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/ioping.py against real ioping 1.3 output in its three formats (human, -B, -J;
tests/unit/fixtures/ioping, see its README). The expected figures are read from the fixture text
here, independently of the parser."""

from __future__ import annotations

import json

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.ioping import (
    IopingParseError, ioping_argv, ioping_record, parse_ioping, version_from_output)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

HUMAN = ['ioping-1.3-read-c10.txt', 'ioping-1.3-direct-c10.txt', 'ioping-1.3-write-c10.txt', 'ioping-1.3-rapid.txt',
         'ioping-1.3-quiet-c10.txt', 'ioping-1.3-print-count.txt', 'ioping-1.3-tmpfs-direct.txt']
RAW = ['ioping-1.3-batch-c10.txt', 'ioping-1.3-batch-write-direct.txt', 'ioping-1.3-batch-print-count.txt',
       'ioping-1.3-batch-worktime.txt']
UNIT_MS = {'ns': 1e-6, 'us': 1e-3, 'ms': 1.0, 's': 1e3}


def _fx(read_fixture, name):
    return read_fixture('ioping/' + name)


@pytest.mark.parametrize('name', RAW)
def test_raw_statistics_are_exact(read_fixture, name):
    """-B: the last line's ten integers; times in ns."""
    fields = [int(x) for x in _fx(read_fixture, name).strip().splitlines()[-1].split()]
    parsed = parse_ioping(_fx(read_fixture, name))
    assert parsed['requests'] == fields[0] and parsed['generated'] == fields[8]
    assert parsed['iops'] == fields[2] and parsed['throughput_mb_s'] == pytest.approx(fields[3] / 1e6)
    assert [parsed[k] for k in ('min_ms', 'avg_ms', 'max_ms', 'mdev_ms')] == pytest.approx([f / 1e6 for f in fields[4:8]])
    assert parsed['format'] == 'raw'


def test_raw_periods_come_before_the_final_statistics(read_fixture):
    parsed = parse_ioping(_fx(read_fixture, 'ioping-1.3-batch-print-count.txt'))
    assert parsed['periods'] == 2 and parsed['requests'] == 11      # not the 5 of a period


def _human_final(text):
    """The statistics block's figures, read straight from the text."""
    lines = text.splitlines()
    done = [ln for ln in lines if 'requests completed in' in ln][-1]
    minmax = [ln for ln in lines if ln.startswith('min/avg/max/mdev = ')][-1]
    parts = minmax.split(' = ', 1)[1].split(' / ')
    ms = [float(p.split()[0]) * UNIT_MS[p.split()[1]] for p in parts]
    return done, ms


@pytest.mark.parametrize('name', HUMAN)
def test_human_statistics(read_fixture, name):
    text = _fx(read_fixture, name)
    done, ms = _human_final(text)
    parsed = parse_ioping(text)
    assert [parsed[k] for k in ('min_ms', 'avg_ms', 'max_ms', 'mdev_ms')] == pytest.approx(ms)
    assert parsed['direction'] == ('write' if ' written, ' in done else 'read')
    assert parsed['target']['path'] in ('/var/tmp/iopt', '/dev/shm')
    words = done.split()
    count = float(words[0]) * (1000 if words[1] == 'k' else 1)
    assert parsed['requests'] == count


def test_human_units_and_thousands(read_fixture):
    """46.4 k requests, 15.9 k iops, 61.9 MiB/s (MiB: 2^20 bytes), 8.31 ms."""
    parsed = parse_ioping(_fx(read_fixture, 'ioping-1.3-rapid.txt'))
    assert parsed['requests'] == 46400 and parsed['iops'] == 15900
    assert parsed['throughput_mb_s'] == pytest.approx(61.9 * 2 ** 20 / 1e6)
    assert parsed['max_ms'] == pytest.approx(8.31) and parsed['mdev_ms'] == pytest.approx(0.0991)
    tmpfs = parse_ioping(_fx(read_fixture, 'ioping-1.3-tmpfs-direct.txt'))
    assert tmpfs['mdev_ms'] == pytest.approx(215e-6) and tmpfs['target']['fstype'] == 'tmpfs'


@pytest.mark.parametrize('name,direction', [('ioping-1.3-json-c5.txt', 'read'), ('ioping-1.3-json-write-sync.txt', 'write')])
def test_json_statistics(read_fixture, name, direction):
    docs = json.loads(_fx(read_fixture, name))
    stat = [d for d in docs if 'stat' in d][-1]['stat']
    parsed = parse_ioping(_fx(read_fixture, name))
    assert parsed['requests'] == stat['count'] and parsed['iops'] == stat['iops']
    assert parsed['avg_ms'] == pytest.approx(stat['avg'] / 1e6) and parsed['direction'] == direction
    assert parsed['target'] == {'path': '/var/tmp/iopt', 'fstype': 'ext4', 'device': '/dev/vda'}


@pytest.mark.parametrize('name,message', [
    ('ioping-1.3-missing-dir', 'ioping failed: stat "/nonexistent/dir" failed: No such file or directory'),
    ('ioping-1.3-device-write-refused', 'ioping failed: think twice, then use -WWW to shred this target'),
])
def test_iopings_own_errors_are_failures(read_fixture, name, message):
    with pytest.raises(IopingParseError) as e:
        parse_ioping(_fx(read_fixture, name + '.txt'), _fx(read_fixture, name + '.stderr'))
    assert str(e.value) == message


@pytest.mark.parametrize('name', ['ioping-1.3-only-warmup.txt', 'ioping-1.3-batch-only-warmup.txt'])
def test_a_run_that_counted_no_request_is_no_record(read_fixture, name):
    with pytest.raises(IopingParseError, match='ioping counted no request'):
        parse_ioping(_fx(read_fixture, name))


@pytest.mark.parametrize('text', ['', 'ioping 1.3\n', '9 2175508 4137\n', '[{"io": {}}]', '[1, 2', '{"stat": {}}'])
def test_no_statistics_is_an_error_naming_the_line(text):
    with pytest.raises(IopingParseError):
        parse_ioping(text)


def test_the_record(read_fixture):
    rec = ioping_record(_fx(read_fixture, 'ioping-1.3-write-c10.txt'), labels={'cell': 'c'}, params={'count': 10})
    assert validate_record(rec) == []
    assert rec['tool'] == 'ioping' and rec['test'] == 'write' and rec['labels'] == {'cell': 'c'}
    assert sorted(rec['metrics']) == ['iops', 'latency_avg', 'latency_max', 'latency_mdev', 'latency_min', 'throughput']
    assert rec['metrics']['latency_avg'] == {'value': pytest.approx(0.348), 'unit': 'ms', 'better': 'lower'}
    assert rec['params'] == {'count': 10, 'requests': 9,
                             'target': {'path': '/var/tmp/iopt', 'fstype': 'ext4', 'device': '/dev/vda'}}
    assert ioping_record(_fx(read_fixture, 'ioping-1.3-batch-c10.txt'), test='randread')['test'] == 'randread'


def test_version_and_argv(read_fixture):
    assert version_from_output(_fx(read_fixture, 'ioping-1.3-version.txt')) == '1.3'
    assert version_from_output('something else') is None
    assert ioping_argv('/usr/bin/ioping', '/srv/w', 20, write=True, direct=True, sync=True, work_time=3) == [
        '/usr/bin/ioping', '-B', '-q', '-c', '20', '-i', '0', '-s', '4k', '-S', '1m', '-a', '1', '-W', '-D', '-Y',
        '-w', '3', '/srv/w']
