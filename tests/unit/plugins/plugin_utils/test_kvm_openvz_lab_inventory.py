"""The lab inventory examples (inventories/lab/kvm.yml, openvz.yml and their group_vars): their matrices
are valid for bench.yml and every cell runs on a host of the inventory."""

from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan, validate_matrix

LAB = Path(__file__).resolve().parents[4] / 'inventories' / 'lab'


def hosts_of(inventory):
    out = []
    for group in yaml.safe_load((LAB / inventory).read_text()).values():
        out += list((group.get('hosts') or {}).keys())
    return out


@pytest.mark.parametrize('inventory,group_vars,var,baseline', [
    ('kvm.yml', 'kvm_hosts.yml', 'bench_matrix_kvm', 'host'),
    ('openvz.yml', 'openvz_hosts.yml', 'bench_matrix_openvz', 'vzhost'),
])
def test_lab_matrix_is_valid_for_its_inventory(inventory, group_vars, var, baseline):
    matrix = yaml.safe_load((LAB / 'group_vars' / group_vars).read_text())[var]
    hosts = hosts_of(inventory)
    assert validate_matrix(matrix, inventory_hosts=hosts) is matrix  # raises MatrixError listing problems
    plan = expand_plan(matrix, inventory_hosts=hosts)
    assert matrix['baseline'] == baseline
    assert {c['host'] for c in plan['cells']} <= set(hosts)
    assert plan['runs'], plan


def test_kvm_lab_has_three_emulators_bridged_and_routed():
    guests = yaml.safe_load((LAB / 'kvm.yml').read_text())['kvm_guests']['hosts']
    assert len({g['kvm_guest_emulator'] for g in guests.values()}) == 3
    assert {g['kvm_guest_network_mode'] for g in guests.values()} == {'bridged', 'routed'}


def test_openvz_lab_has_a_ploop_and_a_simfs_container():
    cts = yaml.safe_load((LAB / 'openvz.yml').read_text())['openvz_containers']['hosts']
    assert sorted(c['openvz_ct_layout'] for c in cts.values()) == ['ploop', 'simfs']
    matrix = yaml.safe_load((LAB / 'group_vars' / 'openvz_hosts.yml').read_text())['bench_matrix_openvz']
    zero = [b for b in matrix['benchmarks'] if b['params'].get('data') == 'zero']
    assert [b['cells'] for b in zero] == [['ploop-ct']]  # the trap is shown on purpose, on ploop only
