# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter shims (plugins/filter): called directly, as Jinja would, with good and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.filter import matrix_plan as matrix_plan_mod
from ansible_collections.benchlab.bench.plugins.filter import parse_dd as parse_dd_mod
from ansible_collections.benchlab.bench.plugins.filter import parse_fio as parse_fio_mod
from ansible_collections.benchlab.bench.plugins.filter.matrix_plan import matrix_plan
from ansible_collections.benchlab.bench.plugins.filter.parse_dd import parse_dd
from ansible_collections.benchlab.bench.plugins.filter.parse_fio import parse_fio
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

EXAMPLE = Path(__file__).resolve().parents[4] / 'inventories' / 'local' / 'group_vars' / 'all' / 'matrix.yml'


@pytest.fixture
def matrix():
    with open(EXAMPLE) as f:
        return yaml.safe_load(f)['bench_matrix']


@pytest.mark.parametrize('module,name,func', [
    (parse_dd_mod, 'parse_dd', parse_dd), (parse_fio_mod, 'parse_fio', parse_fio),
    (matrix_plan_mod, 'matrix_plan', matrix_plan),
])
def test_filter_module_exposes_the_filter(module, name, func):
    assert module.FilterModule().filters() == {name: func}
    assert yaml.safe_load(module.DOCUMENTATION)['name'] == name


def test_parse_dd_filter(read_fixture):
    rec = parse_dd(read_fixture('dd/coreutils-9.1-write-fdatasync.txt'), test='write', labels={'storage': 'drbd'})
    assert validate_record(rec) == []
    assert rec['labels'] == {'storage': 'drbd'}
    assert rec['metrics']['throughput']['value'] == pytest.approx(268435456 / 0.766629 / 1e6)
    assert 'cmd' not in rec and 'started' not in rec and 'duration_s' not in rec


def test_parse_dd_filter_records_only_with_bs(read_fixture):
    rec = parse_dd(read_fixture('dd/reference-000-dd-time-transcript.txt'), bs=1000000)
    assert rec['metrics']['bytes']['value'] == 2e11
    assert rec['metrics']['elapsed']['value'] == pytest.approx(4694.761)


@pytest.mark.parametrize('value', [None, 42, b'1+0 records out', ['dd output'], {'stderr': 'x'}])
def test_parse_dd_filter_non_string(value):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_dd(value)
    assert 'parse_dd expects the text dd printed, got %s' % type(value).__name__ in str(exc.value)


@pytest.mark.parametrize('name,message', [
    ('coreutils-9.1-failed-no-space.txt', "parse_dd: dd reported an error: error writing '/dev/full': No space left on device"),
    ('coreutils-9.1-failed-no-input.txt', "parse_dd: dd failed: failed to open '/nonexistent/file': No such file or directory"),
    ('coreutils-9.1-zero-count.txt', 'parse_dd: dd copied 0 bytes: nothing was measured'),
])
def test_parse_dd_filter_failed_dd(read_fixture, name, message):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_dd(read_fixture('dd/' + name))
    assert message in str(exc.value)


def test_parse_dd_filter_records_only_without_bs(read_fixture):
    with pytest.raises(AnsibleFilterError, match='pass bs'):
        parse_dd(read_fixture('dd/busybox-1.35-write-fsync.txt'))


def test_parse_dd_filter_garbage():
    with pytest.raises(AnsibleFilterError, match='parse_dd: no dd transfer summary'):
        parse_dd('Permission denied\n')


def test_parse_fio_filter(read_fixture):
    records = parse_fio(read_fixture('fio/fio-3.33-jobfile-two-jobs.json'), labels={'cell': 'x'})
    assert [r['test'] for r in records] == ['seq-read', 'rand-read']
    assert all(validate_record(r) == [] and r['labels'] == {'cell': 'x'} for r in records)


@pytest.mark.parametrize('value', [None, 1.5, b'{"jobs": []}', [{'jobs': []}]])
def test_parse_fio_filter_non_string(value):
    with pytest.raises(AnsibleFilterError, match='parse_fio expects the text fio printed, got %s' % type(value).__name__):
        parse_fio(value)


@pytest.mark.parametrize('name,parts', [
    ('fio-3.33-error-enospc-dev-full.json', ['parse_fio: fio job full failed with error 28', 'No space left on device']),
    ('fio-3.33-error-not-a-directory.json', ['parse_fio: fio job nodir failed with error 20']),
    ('fio-3.33-error-bad-engine.json', ['parse_fio: fio printed no JSON document', 'nosuchengine']),
])
def test_parse_fio_filter_failed_fio(read_fixture, name, parts):
    with pytest.raises(AnsibleFilterError) as exc:
        parse_fio(read_fixture('fio/' + name))
    for part in parts:
        assert part in str(exc.value)


def test_parse_fio_filter_truncated(read_fixture):
    text = read_fixture('fio/fio-3.33-seqread-direct.json')
    with pytest.raises(AnsibleFilterError, match='parse_fio: fio JSON output is not valid JSON'):
        parse_fio(text[:len(text) // 2])


def test_matrix_plan_filter(matrix):
    plan = matrix_plan(matrix, inventory_hosts=('localhost', 'other'))
    assert len(plan['runs']) == 24
    assert plan['baseline'] == 'host-rootfs'
    assert len(matrix_plan(matrix)['runs']) == 24


@pytest.mark.parametrize('hosts', [['db1'], []])
def test_matrix_plan_filter_host_not_in_inventory(matrix, hosts):
    with pytest.raises(AnsibleFilterError) as exc:
        matrix_plan(matrix, inventory_hosts=hosts)
    assert "bench_matrix.cells[0].host: 'localhost' is not in the inventory" in str(exc.value)


def test_matrix_plan_filter_names_the_field(matrix):
    matrix['cells'][1]['path'] = 'relative/path'
    with pytest.raises(AnsibleFilterError) as exc:
        matrix_plan(matrix, inventory_hosts=['localhost'])
    assert str(exc.value).startswith('invalid bench_matrix:')
    assert 'bench_matrix.cells[1].path' in str(exc.value)


@pytest.mark.parametrize('value', [None, 'bench_matrix', [1, 2]])
def test_matrix_plan_filter_not_a_mapping(value):
    with pytest.raises(AnsibleFilterError, match='bench_matrix: must be a mapping'):
        matrix_plan(value)


def test_parse_dd_filter_bs_size_string(read_fixture):
    try:
        rec = parse_dd(read_fixture('dd/busybox-1.35-write-fsync.txt'), bs='1M')
    except AnsibleFilterError as e:
        assert 'bs' in str(e)
        return
    assert rec['metrics']['bytes']['value'] == 256 * 1024 * 1024
