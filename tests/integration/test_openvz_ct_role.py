"""The openvz_ct module and role on this machine, which has no OpenVZ kernel: check mode only.

Check mode asks the module for the command lines it would run; without vzctl/prlctl installed it
plans as if the container did not exist and says so. A real run fails cleanly, naming the tool.
"""

import json
import shutil

import pytest

from conftest import BIN, REPO, module, run

pytestmark = pytest.mark.skipif(shutil.which('vzctl') is not None or shutil.which('prlctl') is not None,
                                reason='an OpenVZ host: these tests assume the tools are absent')

PLOOP = {'ctid': '101', 'ostemplate': 'centos-6-x86_64', 'layout': 'ploop', 'diskspace': '10G', 'ram': '1G',
         'cpus': 2, 'ip_address': ['198.18.10.101']}


def test_module_check_mode_returns_the_command_lines(env):
    rc, status, result = module(env, 'openvz_ct', PLOOP, check=True)
    assert rc == 0 and status.endswith('CHANGED'), result
    assert result['cmds'] == [
        ['vzctl', 'create', '101', '--ostemplate', 'centos-6-x86_64', '--layout', 'ploop', '--diskspace', '10G'],
        ['vzctl', 'set', '101', '--ram', '1G', '--cpus', '2', '--ipadd', '198.18.10.101', '--save'],
        ['vzctl', 'start', '101'],
    ]
    assert result['labels'] == {'platform': 'openvz', 'layout': 'ploop', 'net': 'venet', 'openvz_tool': 'vzctl'}
    assert result['ct_root'] == '/vz/root/101'


def test_module_refuses_to_run_without_the_tool(env):
    rc, _status, result = module(env, 'openvz_ct', PLOOP)
    assert rc != 0
    assert 'vzctl is not installed on this host' in result['msg']


def test_module_rejects_simfs_on_openvz7(env):
    rc, _status, result = module(env, 'openvz_ct', dict(PLOOP, tool='prlctl', ctid='ct101', layout='simfs'),
                                 check=True)
    assert rc != 0
    assert 'layout simfs needs legacy OpenVZ (vzctl)' in result['msg']


def test_role_in_check_mode_plans_a_ploop_and_a_simfs_container(tmp_path, env):
    dump = tmp_path / 'plan.json'
    cts = [{'openvz_ct_ctid': '101', 'openvz_ct_layout': 'ploop', 'openvz_ct_ip_address': ['198.18.10.101']},
           {'openvz_ct_ctid': '102', 'openvz_ct_layout': 'simfs', 'openvz_ct_ip_address': ['198.18.10.102'],
            'openvz_ct_network': 'veth', 'openvz_ct_bridge': 'vmbr0'}]
    common = {'openvz_ct_ostemplate': 'centos-6-x86_64', 'openvz_ct_ram': '512M', 'openvz_ct_cpus': 2,
              'openvz_ct_labels': {'storage': 'local'}}
    tasks = []
    for i, ct in enumerate(cts):
        tasks.append({'name': 'ct %d' % i, 'ansible.builtin.include_role': {'name': 'benchlab.bench.openvz_ct'},
                      'vars': dict(common, **ct)})
        tasks.append({'name': 'keep %d' % i, 'ansible.builtin.set_fact': {'plan_%d' % i: '{{ openvz_ct_result }}'}})
    tasks.append({'name': 'dump', 'ansible.builtin.copy': {
        'dest': str(dump), 'mode': '0600',
        'content': "{{ {'plans': [plan_0, plan_1], 'groups': groups, 'ct101': hostvars['ct101'],"
                   " 'ct102': hostvars['ct102']} | to_json }}"}, 'check_mode': False})
    book = tmp_path / 'play.yml'
    book.write_text(json.dumps([{'name': 'openvz', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]))
    proc = run([BIN / 'ansible-playbook', '--check', '-i', REPO / 'inventories/local', book], env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    out = json.loads(dump.read_text())
    ploop, simfs = (p['cmds'] for p in out['plans'])
    assert ploop == [
        ['vzctl', 'create', '101', '--ostemplate', 'centos-6-x86_64', '--layout', 'ploop', '--diskspace', '10G',
         '--hostname', 'ct101'],
        ['vzctl', 'set', '101', '--ram', '512M', '--cpus', '2', '--ipadd', '198.18.10.101', '--save'],
        ['vzctl', 'start', '101'],
    ]
    assert simfs == [
        ['vzctl', 'create', '102', '--ostemplate', 'centos-6-x86_64', '--layout', 'simfs', '--diskspace', '10G',
         '--hostname', 'ct102'],
        ['vzctl', 'set', '102', '--ram', '512M', '--cpus', '2', '--netif_add', 'eth0,,veth102.0,,vmbr0', '--save'],
        ['vzctl', 'start', '102'],
        ['vzctl', 'exec2', '102', 'ip', 'addr', 'replace', '198.18.10.102/24', 'dev', 'eth0'],
        ['vzctl', 'exec2', '102', 'ip', 'link', 'set', 'eth0', 'up'],
    ]
    assert sorted(out['groups']['openvz_containers']) == ['ct101', 'ct102']
    assert out['ct101']['bench_labels'] == {'platform': 'openvz', 'layout': 'ploop', 'net': 'venet',
                                            'openvz_tool': 'vzctl', 'hypervisor': 'localhost',
                                            'ostemplate': 'centos-6-x86_64', 'storage': 'local'}
    assert out['ct102']['bench_labels']['layout'] == 'simfs' and out['ct102']['bench_labels']['net'] == 'veth'
    assert out['ct101']['ansible_host'] == '198.18.10.101' and out['ct101']['bench_hypervisor_host'] == 'localhost'
