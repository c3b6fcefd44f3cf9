# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The matrix additions for the local lab: per-cell params (keyed by tool), iperf `concurrent`
pairs and their inventory checks, and the lab matrix in inventories/local (quick profile)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import (
    MatrixError, expand_plan, run_params, validate_matrix)

LAB = Path(__file__).resolve().parents[4] / 'inventories' / 'local' / 'group_vars' / 'all' / 'lab_matrix.yml'


@pytest.fixture(scope='module')
def lab_vars():
    with open(LAB) as f:
        return yaml.safe_load(f)


@pytest.fixture
def lab(lab_vars):
    return copy.deepcopy(lab_vars['bench_lab_matrix'])


@pytest.fixture
def hosts(lab_vars):
    return ['localhost'] + [g['name'] for g in lab_vars['local_lab_guests']]


def small():
    return {'name': 'm', 'repetitions': 2,
            'cells': [{'name': 'lo', 'host': 'h1', 'path': '/tmp'},
                      {'name': 'g', 'host': 'h2', 'path': '/tmp',
                       'params': {'iperf': {'server_host': 'h1', 'server_address': '198.18.0.1',
                                            'concurrent': [{'client_host': 'h3', 'server_host': 'h1',
                                                            'server_address': '198.18.0.1'}]},
                                  'dd': {'size': '1M'}}}],
            'benchmarks': [{'name': 'net', 'tool': 'iperf', 'params': {'time': 3, 'server_address': '127.0.0.1'}},
                           {'name': 'w', 'tool': 'dd', 'params': {'test': 'write', 'size': '2M'}}]}


def test_cell_params_override_the_benchmark_params_of_their_tool_only():
    plan = expand_plan(small(), ['h1', 'h2', 'h3'])
    by = {(r['benchmark'], r['cell']): r['params'] for r in plan['runs'] if r['repetition'] == 1}
    assert by[('net', 'lo')] == {'time': 3, 'server_address': '127.0.0.1'}
    assert by[('net', 'g')]['server_address'] == '198.18.0.1' and by[('net', 'g')]['time'] == 3
    assert by[('net', 'g')]['concurrent'][0]['client_host'] == 'h3'
    assert by[('w', 'g')] == {'test': 'write', 'size': '1M'}
    assert by[('w', 'lo')] == {'test': 'write', 'size': '2M'}
    assert len(plan['runs']) == 2 * 2 * 2


def test_run_params_does_not_change_its_inputs():
    m = small()
    before = copy.deepcopy(m)
    run_params(m['benchmarks'][0], m['cells'][1])
    assert m == before


@pytest.mark.parametrize('mutate, where', [
    (lambda m: m['cells'][1]['params'].update(fio={'rw': 'sideways'}), 'bench_matrix.cells[1].params.fio.rw'),
    (lambda m: m['cells'][1]['params'].update(nosuchtool={}), 'bench_matrix.cells[1].params'),
    (lambda m: m['cells'][1]['params']['iperf']['concurrent'][0].pop('server_address'),
     'bench_matrix.cells[1].params.iperf.concurrent[0]'),
    (lambda m: m['cells'][1]['params']['iperf']['concurrent'][0].update(port=0),
     'bench_matrix.cells[1].params.iperf.concurrent[0].port'),
    (lambda m: m['cells'][1]['params']['iperf']['concurrent'][0].update(extra=1),
     'bench_matrix.cells[1].params.iperf.concurrent[0]'),
])
def test_bad_cell_params_name_the_field(mutate, where):
    m = small()
    mutate(m)
    with pytest.raises(MatrixError) as e:
        validate_matrix(m, ['h1', 'h2', 'h3'])
    assert where in str(e.value)


def test_hosts_named_by_cell_params_and_pairs_must_be_in_the_inventory():
    with pytest.raises(MatrixError) as e:
        validate_matrix(small(), ['h1', 'h2'])
    assert e.value.problems == ["bench_matrix.cells[1].params.iperf.concurrent[0].client_host: 'h3' is not in the inventory"]
    with pytest.raises(MatrixError) as e:
        validate_matrix(small(), ['h2', 'h3'])
    assert "bench_matrix.cells[1].params.iperf.server_host: 'h1' is not in the inventory" in e.value.problems
    assert "bench_matrix.cells[1].params.iperf.concurrent[0].server_host: 'h1' is not in the inventory" in e.value.problems
    m = small()
    m['benchmarks'][0]['params']['concurrent'] = [{'client_host': 'h9', 'server_host': 'h1', 'server_address': '1.2.3.4'}]
    with pytest.raises(MatrixError) as e:
        validate_matrix(m, ['h1', 'h2', 'h3'])
    assert e.value.problems == ["bench_matrix.benchmarks[0].params.concurrent[0].client_host: 'h9' is not in the inventory"]


def test_lab_matrix_is_valid_with_the_lab_and_refused_without_it(lab, hosts):
    assert validate_matrix(lab, hosts) is lab
    with pytest.raises(MatrixError) as e:
        validate_matrix(lab, ['localhost'])
    guests_named = {p.split("'")[1] for p in e.value.problems}
    assert guests_named == set(hosts) - {'localhost'}


def test_lab_matrix_covers_the_issue_cells(lab, hosts, lab_vars):
    plan = expand_plan(lab, hosts)
    guests = {g['name']: g for g in lab_vars['local_lab_guests']}
    # every address of the lab is in 198.18.0.0/15
    addrs = [g['address'] for g in guests.values()]
    addrs += [r['params'].get('server_address') for r in plan['runs'] if r['tool'] == 'iperf']
    addrs = [a for a in addrs if a and a != '127.0.0.1']
    assert addrs and all(a.startswith(('198.18.', '198.19.')) for a in addrs)
    storage = {c['name']: guests.get(c['host'], {}).get('storage', 'host') for c in plan['cells']}
    for tool in ('dd', 'fio', 'dbench'):
        cells = {r['cell'] for r in plan['runs'] if r['tool'] == tool}
        assert {storage[c] for c in cells} == {'host', 'dir', 'loop'}, tool
    tests = {(r['tool'], r['params'].get('test') or r['params'].get('rw')) for r in plan['runs']}
    assert {('dd', 'write'), ('dd', 'read'), ('fio', 'randread'), ('fio', 'randwrite')} <= tests
    assert [r['params']['clients'] for r in plan['runs'] if r['tool'] == 'dbench'][0] == [1, 4]
    assert {storage[r['cell']] for r in plan['runs'] if r['tool'] == 'compress'} == {'host', 'dir'}
    iperf = [r for r in plan['runs'] if r['tool'] == 'iperf']
    net = {}
    for r in iperf:
        client = r['host']
        server = r['params'].get('server_host', client)
        kind = tuple('host' if h == 'localhost' else guests[h]['net'] for h in (client, server))
        pairs = 1 + len(r['params'].get('concurrent', []))
        net.setdefault(kind, set()).add(pairs)
    assert net[('host', 'bridged')] == net[('host', 'routed')] == {1}
    assert net[('bridged', 'host')] == net[('routed', 'host')] == {1, 2}
    assert net[('bridged', 'bridged')] == net[('routed', 'routed')] == {1}
    # 3 repetitions everywhere; the host is the baseline (first cell of every benchmark)
    assert plan['repetitions'] == 3 and plan['baseline'] == 'host-rootfs'
    for b in plan['benchmarks']:
        assert b['repetitions'] == 3
        assert plan['cells'][[c['name'] for c in plan['cells']].index(b['cells'][0])]['host'] == 'localhost'


def test_lab_guests_of_a_concurrent_pair_are_distinct_clients(lab, hosts):
    plan = expand_plan(lab, hosts)
    for r in plan['runs']:
        for pair in r['params'].get('concurrent', []):
            assert pair['client_host'] != r['host']


def test_standard_profile_is_valid_with_the_quick_cells(lab_vars, hosts):
    std = copy.deepcopy(lab_vars['bench_lab_matrix_standard'])
    assert std['cells'] == '{{ bench_lab_matrix.cells }}'   # templated by Ansible
    std['cells'] = copy.deepcopy(lab_vars['bench_lab_matrix']['cells'])
    plan = expand_plan(std, hosts)
    assert plan['repetitions'] == 5
    sizes = {b['name']: b['params'].get('size') for b in plan['benchmarks']}
    assert sizes['dd-write'] == sizes['dd-read'] == sizes['bonnie'] == '48G'
    assert [b['params']['clients'] for b in plan['benchmarks'] if b['tool'] == 'dbench'] == [[1, 4, 16, 64]]
