"""The openvz_ct module and role on this machine, which has no OpenVZ kernel.

Check mode asks the module for the command lines it would run; without vzctl/prlctl installed it
plans as if the container did not exist and says so. A real run fails cleanly, naming the tool.

The ownership tests (a container benchlab did not make is refused unless adopt) run the module for
real with stand-ins for vzctl and prlctl: small scripts on PATH that print canned `vzctl status` /
`prlctl list` output and log their argv, because there is no OpenVZ kernel here (the mocked part).
Everything else is real: the module's decision, ssh-keygen making the host key on the host, and
install(1) putting it into the container's (stand-in) mounted root.
"""

import json
import os
import shutil
import stat

import pytest

from conftest import BIN, REPO, module, run

pytestmark = pytest.mark.skipif(shutil.which('vzctl') is not None or shutil.which('prlctl') is not None,
                                reason='an OpenVZ host: these tests assume the tools are absent')

PLOOP = {'ctid': '101', 'ostemplate': 'centos-6-x86_64', 'layout': 'ploop', 'diskspace': '10G', 'ram': '1G',
         'cpus': 2, 'ip_address': ['198.18.10.101']}


def host_key_steps(ctid, tool='vzctl', key_dir='/var/lib/benchlab/openvz', ve_root='/vz/root'):
    key = '%s/%s/ssh_host_ed25519_key' % (key_dir, ctid)
    return [['install', '-d', '-m', '0700', '%s/%s' % (key_dir, ctid)],
            ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'benchlab-%s' % ctid, '-f', key],
            [tool, 'mount', ctid],
            ['install', '-D', '-m', '0600', key, '%s/%s/etc/ssh/ssh_host_ed25519_key' % (ve_root, ctid)],
            ['install', '-D', '-m', '0644', key + '.pub', '%s/%s/etc/ssh/ssh_host_ed25519_key.pub' % (ve_root, ctid)],
            [tool, 'umount', ctid]]


def test_module_check_mode_returns_the_command_lines(env):
    rc, status, result = module(env, 'openvz_ct', PLOOP, check=True)
    assert rc == 0 and status.endswith('CHANGED'), result
    assert result['cmds'] == [
        ['vzctl', 'create', '101', '--ostemplate', 'centos-6-x86_64', '--layout', 'ploop', '--diskspace', '10G'],
        ['vzctl', 'set', '101', '--ram', '1G', '--cpus', '2', '--ipadd', '198.18.10.101',
         '--description', 'benchlab.bench:101', '--save'],
    ] + host_key_steps('101') + [
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
              'openvz_ct_known_hosts_file': str(tmp_path / 'kh'),
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
        ['vzctl', 'set', '101', '--ram', '512M', '--cpus', '2', '--ipadd', '198.18.10.101',
         '--description', 'benchlab.bench:101', '--save'],
    ] + host_key_steps('101') + [
        ['vzctl', 'start', '101'],
    ]
    assert simfs == [
        ['vzctl', 'create', '102', '--ostemplate', 'centos-6-x86_64', '--layout', 'simfs', '--diskspace', '10G',
         '--hostname', 'ct102'],
        ['vzctl', 'set', '102', '--ram', '512M', '--cpus', '2', '--netif_add', 'eth0,,veth102.0,,vmbr0',
         '--description', 'benchlab.bench:102', '--save'],
    ] + host_key_steps('102') + [
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
    # host key checking is on, against the known_hosts file where the role pins the key it made
    assert out['ct101']['ansible_ssh_common_args'] == ('-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes'
                                                       % (tmp_path / 'kh'))


STUB = """#!/bin/sh
# stand-in for %(tool)s: log the argv, answer the queries from canned files next to this script
d=$(dirname "$0")
python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@" >> "$d/log"
case "$1 $2" in
    "status "*) cat "$d/status" ;;
    "list --all") cat "$d/list.json" ;;
    "list --info") cat "$d/info.json" ;;
esac
exit 0
"""


@pytest.fixture
def stubs(tmp_path, env):
    bindir = tmp_path / 'stubbin'
    bindir.mkdir()
    for tool in ('vzctl', 'prlctl'):
        path = bindir / tool
        path.write_text(STUB % {'tool': tool})
        path.chmod(0o755)
    conf_dir, ve_root, key_dir = tmp_path / 'conf', tmp_path / 'root', tmp_path / 'keys'
    conf_dir.mkdir()
    ve_root.mkdir()
    env = dict(env, PATH='%s:%s' % (bindir, env['PATH']))
    paths = {'conf_dir': str(conf_dir), 've_root': str(ve_root), 'host_key_dir': str(key_dir)}

    def calls():
        log = bindir / 'log'
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return {'env': env, 'bin': bindir, 'paths': paths, 'calls': calls, 'conf_dir': conf_dir, 've_root': ve_root,
            'key_dir': key_dir}


def test_a_vzctl_container_benchlab_did_not_make_is_refused_unless_adopted(stubs):
    (stubs['bin'] / 'status').write_text('CTID 101 exist mounted running\n')
    (stubs['conf_dir'] / '101.conf').write_text('VE_LAYOUT="ploop"\nIP_ADDRESS="192.0.2.7"\nOSTEMPLATE="x"\n'
                                                'DESCRIPTION="customer web server"\n')
    for state, verb in (('absent', 'destroy'), ('started', 'reconfigure, start or stop')):
        rc, _status, result = module(stubs['env'], 'openvz_ct', dict(PLOOP, state=state, **stubs['paths']))
        assert rc != 0
        assert result['msg'].startswith("container 101 exists but was not made by benchlab (its description is not "
                                        "the benchlab mark 'benchlab.bench:101'): refusing to %s it" % verb)
        assert 'adopt: true (role: openvz_ct_adopt: true)' in result['msg']
    # only the status query ran: no stop, destroy, --ipdel all
    assert stubs['calls']() == [['status', '101'], ['status', '101']]

    rc, _status, result = module(stubs['env'], 'openvz_ct', dict(PLOOP, state='absent', adopt=True, **stubs['paths']))
    assert rc == 0, result
    assert stubs['calls']()[2:] == [['status', '101'], ['stop', '101'], ['destroy', '101']]


def test_a_marked_vzctl_container_is_reconfigured_and_a_new_one_gets_a_pinned_host_key(stubs):
    (stubs['bin'] / 'status').write_text('CTID 101 exist mounted running\n')
    (stubs['conf_dir'] / '101.conf').write_text('VE_LAYOUT="ploop"\nIP_ADDRESS="192.0.2.7"\nOSTEMPLATE="x"\n'
                                                'DESCRIPTION="benchlab.bench:101"\n')
    rc, _status, result = module(stubs['env'], 'openvz_ct', dict(PLOOP, **stubs['paths']))
    assert rc == 0, result
    assert result['marked'] is True
    assert ['set', '101', '--ram', '1G', '--cpus', '2', '--diskspace', '10G', '--ipdel', 'all', '--ipadd',
            '198.18.10.101', '--save'] in stubs['calls']()

    # a new container: created with the mark, its host key made on the host and installed before the start
    (stubs['bin'] / 'log').unlink()
    (stubs['bin'] / 'status').write_text('CTID 102 deleted unmounted down\n')
    rc, _status, result = module(stubs['env'], 'openvz_ct', dict(PLOOP, ctid='102', **stubs['paths']))
    assert rc == 0, result
    key = stubs['key_dir'] / '102' / 'ssh_host_ed25519_key'
    root = stubs['ve_root'] / '102' / 'etc' / 'ssh'
    assert [c[:2] for c in result['cmds']] == [
        ['vzctl', 'create'], ['vzctl', 'set'], ['install', '-d'], ['ssh-keygen', '-q'], ['vzctl', 'mount'],
        ['install', '-D'], ['install', '-D'], ['vzctl', 'umount'], ['vzctl', 'start']]
    assert result['cmds'][1][-3:] == ['--description', 'benchlab.bench:102', '--save']
    assert result['cmds'][5] == ['install', '-D', '-m', '0600', str(key), str(root / 'ssh_host_ed25519_key')]
    assert stubs['calls']() == [['status', '102']] + [c[1:] for c in result['cmds'] if c[0] == 'vzctl']
    public = key.with_suffix('.pub').read_text().split()[:2]
    assert result['host_public_key'] == ' '.join(public) and public[0] == 'ssh-ed25519'
    assert (root / 'ssh_host_ed25519_key').read_bytes() == key.read_bytes()
    assert stat.S_IMODE(os.stat(root / 'ssh_host_ed25519_key').st_mode) == 0o600
    assert stat.S_IMODE(os.stat(key.parent).st_mode) == 0o700


def test_a_prlctl_container_is_destroyed_only_with_the_mark(stubs):
    (stubs['bin'] / 'list.json').write_text(json.dumps([{'name': 'ct101', 'status': 'stopped'}]))
    spec = dict(PLOOP, tool='prlctl', ctid='ct101', state='absent', **stubs['paths'])
    (stubs['bin'] / 'info.json').write_text(json.dumps([{'Name': 'ct101', 'Description': ''}]))
    rc, _status, result = module(stubs['env'], 'openvz_ct', spec)
    assert rc != 0 and 'container ct101 exists but was not made by benchlab' in result['msg']
    assert ['delete', 'ct101'] not in stubs['calls']()
    (stubs['bin'] / 'info.json').write_text(json.dumps([{'Name': 'ct101', 'Description': 'benchlab.bench:ct101'}]))
    rc, _status, result = module(stubs['env'], 'openvz_ct', spec)
    assert rc == 0, result
    assert stubs['calls']()[-1] == ['delete', 'ct101']
