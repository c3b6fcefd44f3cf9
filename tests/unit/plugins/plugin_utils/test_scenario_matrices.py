# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scenarios/<name>: every matrix (real lab, local rendition, qemu rendition) passes the matrix schema
and names only hosts of the inventory it is meant for (plugin_utils/plan/matrix.py validate_matrix), and
every scenario has the files its README promises."""

from pathlib import Path

import jinja2
import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import validate_matrix

REPO = Path(__file__).resolve().parents[4]
SCENARIOS = sorted(p for p in (REPO / 'scenarios').iterdir() if p.is_dir())
DEFAULT_LAB = yaml.safe_load((REPO / 'inventories/local/group_vars/all/lab_matrix.yml').read_text())['local_lab_guests']
EXTRA_VARS = {'scen_drbd_generation': '8.4'}


def rendered(obj):
    """The matrix as Ansible templates it from the vars file, with the scenario's documented -e values."""
    if isinstance(obj, str) and '{{' in obj:
        return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(obj).render(**EXTRA_VARS)
    if isinstance(obj, dict):
        return {k: rendered(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rendered(v) for v in obj]
    return obj


def inventory_hosts(node):
    """Every host name of a YAML inventory."""
    hosts = set()
    if isinstance(node, dict):
        hosts.update((node.get('hosts') or {}).keys())
        for child in (node.get('children') or {}).values():
            hosts |= inventory_hosts(child)
        if 'all' in node:
            hosts |= inventory_hosts(node['all'])
    return hosts


def test_there_is_a_scenario_per_field_report():
    assert [p.name for p in SCENARIOS] == ['bonnie_drbd', 'drbd_2x2', 'kvm_versions', 'ploop_simfs', 'vps_bonnie_bzip2']


@pytest.mark.parametrize('scenario', SCENARIOS, ids=lambda p: p.name)
def test_real_lab_matrix_fits_its_inventory(scenario):
    for name in ('README.md', 'matrix.yml', 'inventory.yml', 'local.yml'):
        assert (scenario / name).is_file(), name
    hosts = inventory_hosts(yaml.safe_load((scenario / 'inventory.yml').read_text()))
    matrix = rendered(yaml.safe_load((scenario / 'matrix.yml').read_text())['bench_matrix'])
    validate_matrix(matrix, inventory_hosts=sorted(hosts | {'localhost'}))
    assert {c['host'] for c in matrix['cells']} <= hosts
    readme = (scenario / 'README.md').read_text()
    assert 'Deviations' in readme and 'make bench SCENARIO=%s' % scenario.name in readme
    assert '../' not in readme   # the report is described, not pointed at outside the collection


@pytest.mark.parametrize('scenario', SCENARIOS, ids=lambda p: p.name)
def test_local_rendition_fits_the_lab(scenario):
    doc = yaml.safe_load((scenario / 'local.yml').read_text())
    guests = [g['name'] for g in doc.get('local_lab_guests', DEFAULT_LAB)]
    matrix = rendered(doc['bench_lab_matrix'])
    validate_matrix(matrix, inventory_hosts=guests + ['localhost'])
    # a random dd write keeps its source in the guests' tmpfs, never on the storage under test
    for b in matrix['benchmarks']:
        if b['tool'] == 'dd' and (b.get('params') or {}).get('test', 'write') == 'write' \
                and (b.get('params') or {}).get('data', 'random') == 'random':
            assert b['params'].get('data_dir') == '/dev/shm', b['name']


def test_the_qemu_rendition_names_the_vm_tests_guest():
    matrix = yaml.safe_load((REPO / 'scenarios/kvm_versions/vm.yml').read_text())['bench_matrix']
    validate_matrix(matrix, inventory_hosts=['localhost', 'kvmt-guest'])
    assert any(c['path'] == '/dev/vda' for c in matrix['cells'])


def test_a_matrix_naming_a_host_outside_the_inventory_is_refused():
    matrix = rendered(yaml.safe_load((REPO / 'scenarios/drbd_2x2/matrix.yml').read_text())['bench_matrix'])
    with pytest.raises(Exception, match='nowhere|node1|inventory'):
        validate_matrix(matrix, inventory_hosts=['localhost', 'ct101', 'ct102'])
