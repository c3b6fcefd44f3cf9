"""OpenVZ / Virtuozzo command lines (module_utils/guests/openvz.py): exact argv sequences, no OpenVZ kernel needed.

Inputs that stand for what a host has: `vzctl status` lines in the format of vzctl(8)
("CTID 101 exist mounted running"), and a container config in the shape of a real vzctl 4
/etc/vz/conf/101.conf (vswap sample: PHYSPAGES="0:256M", DISKSPACE="2G:2.2G", VE_LAYOUT, ...).
"""

import json

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.guests import openvz

PLOOP = {'tool': 'vzctl', 'ctid': '101', 'ostemplate': 'centos-6-x86_64', 'layout': 'ploop', 'diskspace': '10G',
         'ram': '1G', 'swap': '512M', 'cpus': 2, 'hostname': 'ct101', 'network': 'venet',
         'ip_address': ['198.18.10.101'], 'state': 'started'}
SIMFS = dict(PLOOP, ctid='102', layout='simfs', hostname='ct102', ip_address=['198.18.10.102'])
NONE = {'exists': False, 'running': False}

CONF_101 = '''# RAM
PHYSPAGES="0:256M"

# Swap
SWAPPAGES="0:512M"

# Disk quota parameters (in form of softlimit:hardlimit)
DISKSPACE="2G:2.2G"
DISKINODES="131072:144179"
QUOTATIME="0"

# CPU fair scheduler parameter
CPUUNITS="1000"

NETFILTER="stateless"
VE_ROOT="/var/lib/vz/root/$VEID"
VE_PRIVATE="/var/lib/vz/private/$VEID"
VE_LAYOUT="simfs"
OSTEMPLATE="centos7-x86_64"
ORIGIN_SAMPLE="vswap-256m"
NAMESERVER="8.8.8.8"
IP_ADDRESS="192.168.0.101/24"
HOSTNAME="centos-7"
'''


def test_vzctl_ploop_container_from_nothing_to_started():
    assert openvz.plan(PLOOP, NONE) == [
        ['vzctl', 'create', '101', '--ostemplate', 'centos-6-x86_64', '--layout', 'ploop', '--diskspace', '10G',
         '--hostname', 'ct101'],
        ['vzctl', 'set', '101', '--ram', '1G', '--swap', '512M', '--cpus', '2', '--ipadd', '198.18.10.101',
         '--description', 'benchlab.bench:101', '--save'],
        ['vzctl', 'start', '101'],
    ]


def test_vzctl_simfs_differs_only_in_layout():
    ploop, simfs = openvz.plan(PLOOP, NONE), openvz.plan(SIMFS, NONE)
    assert simfs[0][:7] == ['vzctl', 'create', '102', '--ostemplate', 'centos-6-x86_64', '--layout', 'simfs']
    swap = {'101': '102', 'ploop': 'simfs', 'ct101': 'ct102', '198.18.10.101': '198.18.10.102',
            'benchlab.bench:101': 'benchlab.bench:102'}
    assert simfs == [[swap.get(a, a) for a in argv] for argv in ploop]


def test_vzctl_veth_bridged_sets_the_interface_and_its_address_after_start():
    spec = dict(PLOOP, network='veth', bridge='vmbr0', ip_address=['198.18.10.101/24'], gateway='198.18.10.1',
                swap=None, hostname=None, diskspace=None)
    assert openvz.plan(spec, NONE) == [
        ['vzctl', 'create', '101', '--ostemplate', 'centos-6-x86_64', '--layout', 'ploop'],
        ['vzctl', 'set', '101', '--ram', '1G', '--cpus', '2', '--netif_add', 'eth0,,veth101.0,,vmbr0',
         '--description', 'benchlab.bench:101', '--save'],
        ['vzctl', 'start', '101'],
        ['vzctl', 'exec2', '101', 'ip', 'addr', 'replace', '198.18.10.101/24', 'dev', 'eth0'],
        ['vzctl', 'exec2', '101', 'ip', 'link', 'set', 'eth0', 'up'],
        ['vzctl', 'exec2', '101', 'ip', 'route', 'replace', 'default', 'via', '198.18.10.1'],
    ]


def test_existing_running_container_with_matching_config_needs_nothing():
    conf = openvz.parse_vz_conf(openvz.render_conf(openvz.expected_conf(openvz.normalize(PLOOP))))
    assert openvz.plan(PLOOP, {'exists': True, 'running': True}, conf) == []
    # stopped: only the start
    assert openvz.plan(PLOOP, {'exists': True, 'running': False}, conf) == [['vzctl', 'start', '101']]


def test_existing_container_gets_only_the_settings_that_differ():
    conf = dict(openvz.parse_vz_conf(CONF_101), DESCRIPTION='benchlab.bench:101')   # made by benchlab
    spec = dict(SIMFS, ctid='101', ram='256M', swap='512M', diskspace='2G', hostname='centos-7', cpus=None,
                ip_address=['192.168.0.101'])
    # the real config: RAM and swap match (0:256M, 0:512M); the disk hard limit is 2.2G, not 2G
    assert openvz.conf_differences(openvz.normalize(spec), conf) == ['DISKSPACE']
    assert openvz.plan(spec, {'exists': True, 'running': True}, conf) == [
        ['vzctl', 'set', '101', '--diskspace', '2G', '--save']]
    spec = dict(spec, ram='1G', ip_address=['192.168.0.101', '192.168.0.102'])
    assert openvz.plan(spec, {'exists': True, 'running': True}, conf) == [
        ['vzctl', 'set', '101', '--ram', '1G', '--diskspace', '2G', '--ipdel', 'all', '--ipadd', '192.168.0.101',
         '--ipadd', '192.168.0.102', '--save']]


def test_plain_numbers_in_the_config_are_pages_and_kib_blocks():
    conf = {'PHYSPAGES': '0:262144', 'SWAPPAGES': '0:131072', 'DISKSPACE': '10485760:10485760'}
    assert openvz.conf_limit_bytes('PHYSPAGES', conf['PHYSPAGES']) == 1024 ** 3
    assert openvz.conf_limit_bytes('SWAPPAGES', conf['SWAPPAGES']) == 512 * 1024 ** 2
    assert openvz.conf_limit_bytes('DISKSPACE', conf['DISKSPACE']) == 10 * 1024 ** 3
    assert openvz.conf_limit_bytes('PHYSPAGES', '0:unlimited') is None
    full = dict(conf, VE_LAYOUT='ploop', OSTEMPLATE='centos-6-x86_64', CPUS='2', HOSTNAME='ct101',
                IP_ADDRESS='198.18.10.101')
    assert openvz.conf_differences(openvz.normalize(PLOOP), full) == []


def test_the_rendered_config_file():
    assert openvz.render_conf(openvz.expected_conf(openvz.normalize(SIMFS))) == (
        'CPUS="2"\n'
        'DESCRIPTION="benchlab.bench:102"\n'
        'DISKSPACE="10G:10G"\n'
        'HOSTNAME="ct102"\n'
        'IP_ADDRESS="198.18.10.102"\n'
        'OSTEMPLATE="centos-6-x86_64"\n'
        'PHYSPAGES="0:1G"\n'
        'SWAPPAGES="0:512M"\n'
        'VE_LAYOUT="simfs"\n')


def test_parse_vz_conf_reads_the_real_config_and_rejects_garbage():
    conf = openvz.parse_vz_conf(CONF_101)
    assert conf['VE_LAYOUT'] == 'simfs' and conf['PHYSPAGES'] == '0:256M' and conf['VE_ROOT'] == '/var/lib/vz/root/$VEID'
    assert len(conf) == sum(1 for line in CONF_101.splitlines() if '=' in line and not line.startswith('#'))
    with pytest.raises(openvz.OpenVZError, match="cannot read 'this is not a config line'"):
        openvz.parse_vz_conf('VE_LAYOUT="ploop"\nthis is not a config line\n')


def test_layout_of_an_existing_container_is_never_converted():
    conf = openvz.parse_vz_conf(CONF_101)
    msg = openvz.layout_mismatch(dict(PLOOP, ctid='101'), conf)
    assert 'exists with layout simfs, not ploop' in msg
    assert openvz.layout_mismatch(dict(SIMFS, ctid='101'), conf) is None
    # vzctl before 4.0 wrote no VE_LAYOUT: such containers are simfs
    assert 'layout simfs' in openvz.layout_mismatch(PLOOP, {})


@pytest.mark.parametrize('tool,running,expected', [
    ('vzctl', True, [['vzctl', 'stop', '101'], ['vzctl', 'destroy', '101']]),
    ('vzctl', False, [['vzctl', 'destroy', '101']]),
    ('prlctl', True, [['prlctl', 'stop', 'ct101'], ['prlctl', 'delete', 'ct101']]),
])
def test_absent_stops_then_destroys(tool, running, expected):
    spec = dict(PLOOP, tool=tool, ctid='101' if tool == 'vzctl' else 'ct101', state='absent')
    ours = 'benchlab.bench:' + spec['ctid']
    assert openvz.plan(spec, {'exists': True, 'running': running}, description=ours) == expected
    assert openvz.plan(spec, NONE) == []


def test_stopped_and_present_states():
    running = {'exists': True, 'running': True}
    assert openvz.plan(dict(PLOOP, state='stopped'), running, None, description='benchlab.bench:101') == [
        ['vzctl', 'stop', '101']]
    assert openvz.plan(dict(PLOOP, state='present'), NONE)[-1][:2] == ['vzctl', 'set']


def test_prlctl_openvz7_container():
    spec = dict(PLOOP, tool='prlctl', ctid='ct101')
    assert openvz.plan(spec, NONE) == [
        ['prlctl', 'create', 'ct101', '--vmtype', 'ct', '--ostemplate', 'centos-6-x86_64'],
        ['prlctl', 'set', 'ct101', '--memsize', '1024', '--swappages', '131072', '--cpus', '2', '--hostname', 'ct101',
         '--ipadd', '198.18.10.101', '--description', 'benchlab.bench:ct101'],
        ['prlctl', 'set', 'ct101', '--device-set', 'hdd0', '--size', '10G'],
        ['prlctl', 'start', 'ct101'],
    ]
    veth = dict(spec, network='veth', bridge='Bridged', ip_address=['198.18.10.101/24'], gateway='198.18.10.1',
                swap=None, hostname=None, diskspace=None)
    assert openvz.plan(veth, NONE)[-2:] == [
        ['prlctl', 'set', 'ct101', '--device-add', 'net', '--network', 'Bridged', '--ipadd', '198.18.10.101/24',
         '--gw', '198.18.10.1'],
        ['prlctl', 'start', 'ct101'],
    ]


@pytest.mark.parametrize('change,message', [
    ({'tool': 'prlctl', 'ctid': 'ct101', 'layout': 'simfs'}, 'layout simfs needs legacy OpenVZ'),
    ({'ctid': '99'}, 'above 100'),
    ({'ctid': 'web'}, 'must be a number'),
    ({'layout': 'zfs'}, "layout must be ploop or simfs, got 'zfs'"),
    ({'network': 'veth'}, 'needs bridge'),
    ({'ip_address': ['10.0.0.1/24']}, 'venet addresses are host routes'),
    ({'ip_address': ['not-an-ip']}, "not an address: 'not-an-ip'"),
    ({'ram': '1.5k'}, 'whole number of MiB'),
    ({'ram': 'lots'}, 'ram: not a size'),
    ({'cpus': 0}, 'cpus must be at least 1'),
    ({'ostemplate': None}, 'ostemplate is needed'),
])
def test_bad_specs_name_the_option(change, message):
    with pytest.raises(openvz.OpenVZError, match=message):
        openvz.plan(dict(PLOOP, **change), NONE)


def test_parse_vzctl_status():
    assert openvz.parse_vzctl_status('CTID 101 exist mounted running\n') == {
        'exists': True, 'mounted': True, 'running': True}
    assert openvz.parse_vzctl_status('CTID 101 deleted unmounted down\n') == {
        'exists': False, 'mounted': False, 'running': False}
    assert openvz.parse_vzctl_status('VEID 101 exist unmounted down\n')['exists'] is True
    for bad, quoted in (('', '(empty output)'), ('Unable to open /dev/vzctl\n', 'Unable to open /dev/vzctl')):
        with pytest.raises(openvz.OpenVZError, match='vzctl status: cannot read') as err:
            openvz.parse_vzctl_status(bad)
        assert quoted in str(err.value)


def test_parse_prlctl_list():
    text = json.dumps([{'uuid': '{7b2f}', 'status': 'running', 'ip_configured': '198.18.10.101', 'name': 'ct101'},
                       {'uuid': '{9c1e}', 'status': 'stopped', 'ip_configured': '-', 'name': 'ct102'}])
    assert openvz.parse_prlctl_list(text, 'ct101') == {'exists': True, 'running': True}
    assert openvz.parse_prlctl_list(text, 'ct102') == {'exists': True, 'running': False}
    assert openvz.parse_prlctl_list(text, 'ct103') == {'exists': False, 'running': False}
    with pytest.raises(openvz.OpenVZError, match="not JSON: 'prlctl: command failed'"):
        openvz.parse_prlctl_list('prlctl: command failed\n', 'ct101')


def test_labels_and_container_root():
    assert openvz.labels(PLOOP) == {'platform': 'openvz', 'layout': 'ploop', 'net': 'venet', 'openvz_tool': 'vzctl'}
    assert openvz.labels(SIMFS)['layout'] == 'simfs'
    assert openvz.container_root(PLOOP) == '/vz/root/101'
    assert openvz.container_root(PLOOP, '/var/lib/vz/root/') == '/var/lib/vz/root/101'


# -- ownership (the benchlab mark) and host keys --------------------------------------------------

RUNNING = {'exists': True, 'running': True}
KEY = {'dir': '/var/lib/benchlab/openvz', 'exists': False, 've_root': '/vz/root'}


@pytest.mark.parametrize('description', [None, '', 'customer web server', 'benchlab.bench:1010', ' benchlab.bench:10'])
@pytest.mark.parametrize('state,verb', [('absent', 'destroy'), ('started', 'reconfigure, start or stop'),
                                        ('stopped', 'reconfigure, start or stop'), ('present', 'reconfigure')])
def test_a_container_without_the_mark_is_refused(description, state, verb):
    conf = dict(openvz.parse_vz_conf(CONF_101), VE_LAYOUT='ploop')
    if description is not None:
        conf['DESCRIPTION'] = description
    with pytest.raises(openvz.OpenVZError) as err:
        openvz.plan(dict(PLOOP, state=state), RUNNING, conf, host_key=KEY)
    msg = str(err.value)
    assert msg.startswith('container 101 exists but was not made by benchlab')
    assert verb in msg and 'adopt: true (role: openvz_ct_adopt: true)' in msg


def test_the_network_rewrite_happens_only_on_a_marked_or_adopted_container():
    conf = dict(openvz.parse_vz_conf(CONF_101), VE_LAYOUT='ploop')
    spec = dict(PLOOP, ip_address=['198.18.10.101'])
    rewrite = ['vzctl', 'set', '101', '--ram', '1G', '--cpus', '2', '--diskspace', '10G', '--hostname', 'ct101',
               '--ipdel', 'all',
               '--ipadd', '198.18.10.101', '--save']
    with pytest.raises(openvz.OpenVZError):
        openvz.plan(spec, RUNNING, conf)
    assert openvz.plan(spec, RUNNING, dict(conf, DESCRIPTION='benchlab.bench:101')) == [rewrite]
    # adopted: marked first; running, so no host key can be put in before its start
    assert openvz.plan(spec, RUNNING, conf, adopt=True, host_key=KEY) == [
        ['vzctl', 'set', '101', '--description', 'benchlab.bench:101', '--save'], rewrite]


def test_an_adopted_stopped_container_gets_the_host_key_before_its_start():
    conf = {'VE_LAYOUT': 'ploop', 'DESCRIPTION': 'not ours'}
    spec = dict(PLOOP, ram=None, swap=None, cpus=None, hostname=None, diskspace=None, ip_address=[])
    cmds = openvz.plan(spec, {'exists': True, 'running': False}, conf, adopt=True, host_key=dict(KEY, exists=True))
    assert cmds == [
        ['vzctl', 'set', '101', '--description', 'benchlab.bench:101', '--save'],
        ['vzctl', 'mount', '101'],
        ['install', '-D', '-m', '0600', '/var/lib/benchlab/openvz/101/ssh_host_ed25519_key',
         '/vz/root/101/etc/ssh/ssh_host_ed25519_key'],
        ['install', '-D', '-m', '0644', '/var/lib/benchlab/openvz/101/ssh_host_ed25519_key.pub',
         '/vz/root/101/etc/ssh/ssh_host_ed25519_key.pub'],
        ['vzctl', 'umount', '101'],
        ['vzctl', 'start', '101'],
    ]


def test_a_new_container_gets_a_host_key_generated_on_the_host_before_its_first_start():
    cmds = openvz.plan(PLOOP, NONE, host_key=dict(KEY, ve_root='/var/lib/vz/root'))
    assert cmds[2:] == [
        ['install', '-d', '-m', '0700', '/var/lib/benchlab/openvz/101'],
        ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'benchlab-101', '-f',
         '/var/lib/benchlab/openvz/101/ssh_host_ed25519_key'],
        ['vzctl', 'mount', '101'],
        ['install', '-D', '-m', '0600', '/var/lib/benchlab/openvz/101/ssh_host_ed25519_key',
         '/var/lib/vz/root/101/etc/ssh/ssh_host_ed25519_key'],
        ['install', '-D', '-m', '0644', '/var/lib/benchlab/openvz/101/ssh_host_ed25519_key.pub',
         '/var/lib/vz/root/101/etc/ssh/ssh_host_ed25519_key.pub'],
        ['vzctl', 'umount', '101'],
        ['vzctl', 'start', '101'],
    ]
    prl = openvz.plan(dict(PLOOP, tool='prlctl', ctid='ct101'), NONE, host_key=KEY)
    assert [c[:2] for c in prl[-5:]] == [['prlctl', 'mount'], ['install', '-D'], ['install', '-D'],
                                         ['prlctl', 'umount'], ['prlctl', 'start']]
    # a marked container that exists keeps its key (nothing to install); absent removes benchlab's copy
    assert openvz.plan(PLOOP, RUNNING, None, description='benchlab.bench:101', host_key=KEY) == []
    assert openvz.plan(dict(PLOOP, state='absent'), RUNNING, None, description='benchlab.bench:101',
                       host_key=dict(KEY, exists=True)) == [
        ['vzctl', 'stop', '101'], ['vzctl', 'destroy', '101'],
        ['rm', '-f', '/var/lib/benchlab/openvz/101/ssh_host_ed25519_key',
         '/var/lib/benchlab/openvz/101/ssh_host_ed25519_key.pub']]


def test_parse_prlctl_info_reads_the_description():
    text = json.dumps([{'ID': '{7b2f}', 'Name': 'ct101', 'Description': 'benchlab.bench:ct101', 'State': 'running'}])
    assert openvz.parse_prlctl_info(text, 'ct101') == 'benchlab.bench:ct101'
    assert openvz.parse_prlctl_info(json.dumps({'Name': 'ct101'}), 'ct101') == ''
    with pytest.raises(openvz.OpenVZError, match="no container 'ct102'"):
        openvz.parse_prlctl_info(text, 'ct102')
    with pytest.raises(openvz.OpenVZError, match='not JSON'):
        openvz.parse_prlctl_info('oops', 'ct101')
