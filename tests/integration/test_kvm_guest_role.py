"""The kvm_guest role through ansible-playbook against libvirt's test driver.

The test driver keeps its domains in memory per connection, and every Ansible task opens its own
connection (in its own process). So the test driver is served by a private libvirtd
(tests/vm/libvirtd_lab.py: own mount + network namespaces, nothing written to the machine's
libvirt directories), reached as test+unix:///default?socket=..., and this test holds one
connection open for the whole module: the domains and networks the role defines in one task are
still there in the next, exactly like with a real hypervisor.
"""

import hashlib
import json
import subprocess
import sys
from xml.etree import ElementTree

import pytest

from conftest import BIN, REPO, ansible_env, run

sys.path.insert(0, str(REPO / 'tests' / 'vm'))
import libvirtd_lab  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.benchlab.bench.plugins.filter.libvirt_mark import libvirt_mark  # noqa: E402

pytestmark = pytest.mark.skipif(subprocess.run(['sh', '-c', 'command -v libvirtd virt-xml-validate qemu-img'],
                                               capture_output=True, check=False).returncode != 0,
                                reason='libvirt-daemon, libvirt-clients and qemu-utils are needed')

NAME = 'kvmt-td-guest'


@pytest.fixture(scope='module')
def lab(tmp_path_factory):
    libvirt = pytest.importorskip('libvirt')
    pytest.importorskip('lxml')
    if not (REPO / '.collections/ansible_collections/community/libvirt').is_dir():
        pytest.skip('community.libvirt is not in the collections path (make setup)')
    work = tmp_path_factory.mktemp('kvmt-lab')
    daemon = libvirtd_lab.Libvirtd(work / 'libvirtd')
    daemon.start()
    try:
        uri = 'test+unix:///default?socket=%s' % daemon.sock
        keeper = libvirt.open(uri)  # keeps the test driver's state alive between tasks
        try:
            yield {'daemon': daemon, 'uri': uri, 'conn': keeper, 'work': work}
        finally:
            keeper.close()
    finally:
        daemon.stop()
        libvirtd_lab.cleanup_dir(work)


def playbook(lab, tmp_path, role_vars, name='kvm_guest'):
    """Apply the role on localhost (once per entry of role_vars['kvmt_guests'], else once with role_vars).

    Return (proc, the recap's changed count, {'groups': ..., 'hosts': {name: hostvars}} of the added guests).
    """
    dump = tmp_path / 'added.json'
    dump.unlink(missing_ok=True)
    guests = role_vars.get('kvmt_guests', [role_vars])
    tasks = [{'name': 'role %d' % i, 'ansible.builtin.include_role': {'name': 'benchlab.bench.' + name}, 'vars': g}
             for i, g in enumerate(guests)]
    names = [g['kvm_guest_name'] for g in guests]
    content = ("{{ {'groups': groups, 'hosts': dict(kvmt_names | zip(kvmt_names | map('extract', hostvars)))}"
               " | to_json }}")
    tasks.append({'name': 'dump', 'ansible.builtin.copy': {'dest': str(dump), 'mode': '0600', 'content': content},
                  'vars': {'kvmt_names': names}, 'changed_when': False,
                  'when': guests[0].get('kvm_guest_state', 'present') == 'present'})
    book = [{'name': 'kvm_guest', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]
    path = tmp_path / 'play.yml'
    path.write_text(json.dumps(book))
    proc = run([BIN / 'ansible-playbook', '-i', REPO / 'inventories/local', path], ansible_env(tmp_path))
    recap = [line for line in proc.stdout.splitlines() if line.startswith('localhost') and 'ok=' in line]
    changed = int(recap[-1].split('changed=')[1].split()[0]) if recap else None
    added = json.loads(dump.read_text()) if dump.exists() else None
    return proc, changed, added


def base_vars(lab, tmp_path, **extra):
    images = lab['work'] / 'images'
    base = lab['work'] / 'base.qcow2'
    if not base.exists():
        subprocess.run(['qemu-img', 'create', '-q', '-f', 'qcow2', str(base), '64M'], check=True)
    v = {'kvm_guest_name': NAME, 'kvm_guest_uri': lab['uri'], 'kvm_guest_domain_type': 'test',
         'kvm_guest_base_image': str(base), 'kvm_guest_image_dir': str(images),
         'kvm_guest_known_hosts_file': str(lab['work'] / 'known_hosts')}
    v.update(extra)
    return v


def domains(lab):
    return {d.name(): d for d in lab['conn'].listAllDomains()}


def networks(lab):
    return {n.name(): n for n in lab['conn'].listAllNetworks()}


def test_define_start_is_idempotent_and_teardown_removes_everything(lab, tmp_path):
    pubkey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKvmtkvmtkvmtkvmtkvmtkvmtkvmtkvmtkvmtkvmtkvm kvmt@test'
    v = base_vars(lab, tmp_path, kvm_guest_network_mode='routed', kvm_guest_network_name='kvmt-routed',
                  kvm_guest_network_bridge='kvmtbr0', kvm_guest_network_address='198.19.77.1',
                  kvm_guest_ip='198.19.77.2', kvm_guest_data_disk_size='16M', kvm_guest_cloud_init=True,
                  kvm_guest_ssh_public_key=pubkey, kvm_guest_memory_mib=256, kvm_guest_vcpus=2,
                  kvm_guest_labels={'kvm_version': 'distro'})
    proc, changed, added = playbook(lab, tmp_path, v)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert changed > 0
    images = lab['work'] / 'images'
    xml_file = images / (NAME + '.xml')
    # the role validated its XML; check it again independently
    check = subprocess.run(['virt-xml-validate', str(xml_file), 'domain'], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    check = subprocess.run(['virt-xml-validate', str(images / 'kvmt-routed.network.xml'), 'network'],
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    # defined and running in libvirt, with what was asked
    dom = domains(lab)[NAME]
    assert dom.isActive() == 1
    live = dom.XMLDesc(0)
    assert '<vcpu placement=\'static\'>2</vcpu>' in live and "<memory unit='KiB'>262144</memory>" in live
    assert "source network='kvmt-routed'" in live
    assert live.count("<disk type='file' device='disk'>") == 3  # system, data, seed
    assert networks(lab)['kvmt-routed'].isActive() == 1
    # disks: an overlay backed by the base image, a raw data disk, a NoCloud seed with the key
    info = json.loads(subprocess.run(['qemu-img', 'info', '--output=json', str(images / (NAME + '.qcow2'))],
                                     capture_output=True, text=True, check=True).stdout)
    assert info['format'] == 'qcow2' and info['backing-filename'] == v['kvm_guest_base_image']
    assert (images / (NAME + '-data.raw')).stat().st_size == 16 * 1024 * 1024
    seed = images / (NAME + '-seed.iso')
    label = subprocess.run(['isoinfo', '-d', '-i', str(seed)], capture_output=True, text=True, check=True).stdout
    assert 'Volume id: cidata' in label
    user_data = subprocess.run(['isoinfo', '-R', '-x', '/user-data', '-i', str(seed)], capture_output=True,
                               text=True, check=True).stdout
    assert user_data.startswith('#cloud-config') and pubkey in user_data
    netcfg = subprocess.run(['isoinfo', '-R', '-x', '/network-config', '-i', str(seed)], capture_output=True,
                            text=True, check=True).stdout
    assert '198.19.77.2/24' in netcfg and 'via: "198.19.77.1"' in netcfg
    # the guest joined the inventory with its labels and its hypervisor host
    assert NAME in added['groups']['kvm_guests']
    guest = added['hosts'][NAME]
    assert guest['ansible_host'] == '198.19.77.2' and guest['bench_hypervisor_host'] == 'localhost'
    labels = guest['bench_labels']
    version = subprocess.run(['qemu-system-x86_64', '--version'], capture_output=True, text=True,
                             check=True).stdout.split()[3]
    # the benchlab mark in the domain's metadata lists exactly the files the role made
    assert 'https://benchlab.example/xmlns/guest/1' in live
    mark = libvirt_mark(live)
    assert mark['marked'] and mark['name'] == NAME and mark['created'].endswith('Z')
    assert sorted(mark['images']) == sorted(str(images / f) for f in (
        NAME + '.xml', NAME + '.qcow2', NAME + '-data.raw', NAME + '-seed.iso', NAME + '-seed'))
    # the host key: generated by the role, handed to cloud-init, pinned on the controller, checked by ssh
    host_pub = (images / (NAME + '-seed') / 'ssh_host_ed25519_key.pub').read_text().split()[:2]
    assert 'ed25519_public: "%s"' % ' '.join(host_pub) in user_data and 'ssh_deletekeys: true' in user_data
    assert 'BEGIN OPENSSH PRIVATE KEY' in user_data
    assert seed.stat().st_mode & 0o777 == 0o600   # it holds the private host key
    assert 'BEGIN OPENSSH PRIVATE KEY' not in proc.stdout
    known = (lab['work'] / 'known_hosts').read_text().split()
    assert known == ['198.19.77.2'] + host_pub
    assert guest['ansible_ssh_common_args'] == ('-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes'
                                                % (lab['work'] / 'known_hosts'))
    assert labels == {'platform': 'kvm', 'hypervisor': 'localhost', 'domain_type': 'test',
                      'emulator': 'qemu-system-x86_64', 'emulator_version': version, 'net': 'routed',
                      'disk_bus': 'virtio', 'disk_cache': 'none', 'disk_io': 'native', 'disk_mode': 'overlay',
                      'kvm_version': 'distro'}

    # a second run changes nothing
    proc, changed, _added = playbook(lab, tmp_path, v)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert changed == 0, proc.stdout[-4000:]

    # teardown: gone from libvirt, the files of the mark removed and nothing else, the host key
    # forgotten, network removed on request; then idempotent
    (images / (NAME + '-notes.txt')).write_text('not made by benchlab\n')
    (images / 'other.qcow2').write_text('not made by benchlab\n')
    gone = dict(v, kvm_guest_state='absent', kvm_guest_network_remove=True)
    proc, changed, _added = playbook(lab, tmp_path, gone)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert changed > 0
    assert NAME not in domains(lab) and 'kvmt-routed' not in networks(lab)
    assert sorted(p.name for p in images.iterdir()) == [NAME + '-notes.txt', 'other.qcow2']
    assert '198.19.77.2' not in (lab['work'] / 'known_hosts').read_text()
    for extra in images.iterdir():
        extra.unlink()
    proc, changed, _added = playbook(lab, tmp_path, gone)
    assert proc.returncode == 0 and changed == 0, proc.stdout[-4000:]


VARIANTS = [  # bus, cache, io, disk mode, device prefix
    ('ide', 'writeback', 'threads', 'copy', 'hd'),
    ('scsi', 'directsync', 'native', 'overlay', 'sd'),
    ('virtio', 'default', 'default', 'overlay', 'vd'),
]


def test_disk_bus_cache_io_modes_bridged_network_and_direct_kernel_boot(lab, tmp_path):
    """Three guests in one run (one ansible-playbook each way keeps this test short)."""
    guests = []
    for bus, cache, io, mode, prefix in VARIANTS:
        guests.append(base_vars(lab, tmp_path, kvm_guest_name='kvmt-td-%s' % bus, kvm_guest_disk_bus=bus,
                                kvm_guest_disk_cache=cache, kvm_guest_disk_io=io, kvm_guest_disk_mode=mode,
                                kvm_guest_network_mode='bridged', kvm_guest_bridge='kvmtbr1',
                                kvm_guest_extra_bridges=['kvmtbr3', 'kvmtbr4'], kvm_guest_nic_model='e1000',
                                kvm_guest_data_disk_size='8M', kvm_guest_kernel='/boot/vmlinuz-kvmt',
                                kvm_guest_initrd='/boot/initrd-kvmt', kvm_guest_emulator='',
                                kvm_guest_cmdline='root=/dev/%sa console=ttyS0' % prefix, kvm_guest_wait_ssh=False))
    macs = []
    try:
        proc, _changed, added = playbook(lab, tmp_path, {'kvmt_guests': guests})
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
        for (bus, cache, io, mode, prefix), v in zip(VARIANTS, guests):
            name = v['kvm_guest_name']
            text = (lab['work'] / 'images' / (name + '.xml')).read_text()
            check = subprocess.run(['virt-xml-validate', '-', 'domain'], input=text, text=True, capture_output=True,
                                   check=False)
            assert check.returncode == 0, check.stdout + check.stderr
            live = domains(lab)[name].XMLDesc(0)
            assert "<target dev='%sa' bus='%s'/>" % (prefix, bus) in live
            assert "<target dev='%sb' bus='%s'/>" % (prefix, bus) in live
            assert ("model='virtio-scsi'" in live) == (bus == 'scsi')
            assert "<source bridge='kvmtbr1'/>" in live
            # the further NICs, after the main one, in order, with the model and a MAC derived from the
            # name and the index (the same at every definition), distinct from the main one
            nics = [(i.find('source').get('bridge'), i.find('mac').get('address'), i.find('model').get('type'))
                    for i in ElementTree.fromstring(live).iter('interface')]
            derived = ['52:54:00:%s:%s:%s' % (h[0:2], h[2:4], h[4:6])
                       for h in (hashlib.sha1(('%s/nic%d' % (name, n)).encode()).hexdigest() for n in (1, 2))]
            assert nics[1:] == [('kvmtbr3', derived[0], 'e1000'), ('kvmtbr4', derived[1], 'e1000')], nics
            assert nics[0][0] == 'kvmtbr1' and nics[0][1] not in derived, nics
            macs.extend(mac for _bridge, mac, _model in nics)
            assert '<kernel>/boot/vmlinuz-kvmt</kernel>' in live and '<cmdline>root=/dev/%sa' % prefix in live
            driver = [line for line in text.splitlines() if '<driver' in line][0]
            assert ('cache="%s"' % cache in driver) == (cache != 'default')
            assert ('io="%s"' % io in driver) == (io != 'default')
            assert '<emulator>' not in text
            labels = added['hosts'][name]['bench_labels']
            assert (labels['disk_bus'], labels['disk_cache'], labels['disk_io'], labels['disk_mode']) == (bus, cache, io, mode)
            assert labels['emulator_version'] == 'unknown' and labels['net'] == 'bridged'
            system = lab['work'] / 'images' / (name + '.qcow2')
            backing = json.loads(subprocess.run(['qemu-img', 'info', '--output=json', str(system)], capture_output=True,
                                                text=True, check=True).stdout).get('backing-filename')
            assert (backing is not None) == (mode == 'overlay')
        assert len(set(macs)) == len(macs) == 3 * len(guests), macs
    finally:
        proc, _changed, _added = playbook(lab, tmp_path, {'kvmt_guests': [dict(v, kvm_guest_state='absent')
                                                                          for v in guests]})
        assert proc.returncode == 0, proc.stdout[-4000:]
    assert not set(domains(lab)) & {v['kvm_guest_name'] for v in guests}


def test_bridged_mode_needs_an_existing_bridge(lab, tmp_path):
    v = base_vars(lab, tmp_path, kvm_guest_name='kvmt-td-nobr', kvm_guest_domain_type='qemu',
                  kvm_guest_network_mode='bridged', kvm_guest_bridge='kvmt-nosuchbr', kvm_guest_ip='198.19.77.9',
                  kvm_guest_ssh_host_public_key='ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKvmtkvmtkvmtkvmtkvmtkvm')
    proc, _changed, _added = playbook(lab, tmp_path, v)
    assert proc.returncode != 0
    assert 'bridged mode needs the existing bridge kvmt-nosuchbr' in proc.stdout
    assert 'kvmt-td-nobr' not in domains(lab)
    playbook(lab, tmp_path, dict(v, kvm_guest_state='absent'))


def test_a_further_nic_needs_an_existing_bridge(lab, tmp_path):
    v = base_vars(lab, tmp_path, kvm_guest_name='kvmt-td-noxbr', kvm_guest_domain_type='qemu',
                  kvm_guest_network_mode='none', kvm_guest_extra_bridges=['kvmt-nosuchxbr'], kvm_guest_ip='198.19.77.9',
                  kvm_guest_ssh_host_public_key='ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKvmtkvmtkvmtkvmtkvmtkvm')
    proc, _changed, _added = playbook(lab, tmp_path, v)
    assert proc.returncode != 0
    assert 'kvm_guest_extra_bridges needs the existing bridge kvmt-nosuchxbr' in proc.stdout, proc.stdout[-3000:]
    assert 'kvmt-td-noxbr' not in domains(lab)
    playbook(lab, tmp_path, dict(v, kvm_guest_state='absent'))


def test_check_mode_defines_nothing(lab, tmp_path):
    v = base_vars(lab, tmp_path, kvm_guest_name='kvmt-td-check', kvm_guest_network_mode='none')
    dump = tmp_path / 'x'
    book = [{'name': 'check', 'hosts': 'localhost', 'gather_facts': False, 'tasks': [
        {'name': 'role', 'ansible.builtin.include_role': {'name': 'benchlab.bench.kvm_guest'}, 'vars': v}]}]
    (tmp_path / 'check.yml').write_text(json.dumps(book))
    proc = run([BIN / 'ansible-playbook', '--check', '-i', REPO / 'inventories/local', tmp_path / 'check.yml'],
               ansible_env(tmp_path))
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert 'kvmt-td-check' not in domains(lab)
    assert not (lab['work'] / 'images' / 'kvmt-td-check.qcow2').exists()
    assert not dump.exists()


FOREIGN = """<domain type='test'>
  <name>%(name)s</name>
  <memory unit='MiB'>64</memory>
  <os><type arch='x86_64'>hvm</type></os>
  <devices>
    <disk type='file' device='disk'><source file='%(disk)s'/><target dev='vda' bus='virtio'/></disk>
  </devices>
</domain>
"""


def test_a_same_named_domain_benchlab_did_not_make_is_refused_unless_adopted(lab, tmp_path):
    """A domain defined behind benchlab's back (no benchlab mark) under the guest's name: neither
    present (redefine) nor absent (destroy/undefine) touches it; with kvm_guest_adopt it goes, and its
    disk stays (only files listed in a benchlab mark are deleted)."""
    name = 'kvmt-td-foreign'
    images = lab['work'] / 'images'
    images.mkdir(exist_ok=True)
    disk = images / (name + '.qcow2')   # the very file the role would make for this guest
    disk.write_bytes(b'user data\n' * 100)
    xml = FOREIGN % {'name': name, 'disk': disk}
    lab['conn'].defineXML(xml)
    try:
        before = domains(lab)[name].XMLDesc(0)
        v = base_vars(lab, tmp_path, kvm_guest_name=name, kvm_guest_network_mode='none', kvm_guest_wait_ssh=False)
        for state, verb in (('absent', 'destroy and undefine'), ('present', 'redefine')):
            proc, _changed, _added = playbook(lab, tmp_path, dict(v, kvm_guest_state=state))
            assert proc.returncode != 0, proc.stdout[-3000:]
            out = ' '.join(proc.stdout.split())
            assert ('domain %s on %s exists but was not made by benchlab (no benchlab mark in its metadata): '
                    'refusing to %s it' % (name, lab['uri'], verb)) in out, out[-3000:]
            assert 'kvm_guest_adopt: true' in out
            assert domains(lab)[name].XMLDesc(0) == before
            assert disk.read_bytes() == b'user data\n' * 100
            assert sorted(p.name for p in images.iterdir()) == [name + '.qcow2']
        proc, changed, _added = playbook(lab, tmp_path, dict(v, kvm_guest_state='absent', kvm_guest_adopt=True))
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert changed > 0
        assert name not in domains(lab)
        assert 'its disks are left in place' in proc.stdout
        assert disk.read_bytes() == b'user data\n' * 100
    finally:
        if name in domains(lab):
            domains(lab)[name].undefine()
        disk.unlink(missing_ok=True)


def test_adopting_on_present_redefines_the_domain_with_the_mark(lab, tmp_path):
    name = 'kvmt-td-adopt'
    images = lab['work'] / 'images'
    images.mkdir(exist_ok=True)
    keep = images / 'kept.raw'
    keep.write_bytes(b'x' * 4096)
    lab['conn'].defineXML(FOREIGN % {'name': name, 'disk': keep})
    v = base_vars(lab, tmp_path, kvm_guest_name=name, kvm_guest_network_mode='none', kvm_guest_wait_ssh=False)
    try:
        proc, _changed, _added = playbook(lab, tmp_path, dict(v, kvm_guest_adopt=True))
        assert proc.returncode == 0, proc.stdout[-3000:]
        mark = libvirt_mark(domains(lab)[name].XMLDesc(0))
        assert mark['marked'] and str(keep) not in mark['images']
        # now benchlab's: absent needs no adopt, deletes what the mark lists, not the foreign disk
        proc, _changed, _added = playbook(lab, tmp_path, dict(v, kvm_guest_state='absent'))
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert name not in domains(lab)
        assert sorted(p.name for p in images.iterdir()) == ['kept.raw']
    finally:
        if name in domains(lab):
            domains(lab)[name].undefine()
        keep.unlink(missing_ok=True)


def test_a_guest_whose_host_key_cannot_be_pinned_is_refused(lab, tmp_path):
    v = base_vars(lab, tmp_path, kvm_guest_name='kvmt-td-nokey', kvm_guest_domain_type='qemu',
                  kvm_guest_network_mode='none', kvm_guest_ip='198.19.77.9', kvm_guest_validate_xml=False)
    proc, _changed, _added = playbook(lab, tmp_path, v)
    try:
        assert proc.returncode != 0
        out = ' '.join(proc.stdout.split())
        assert 'the host key of kvmt-td-nokey cannot be pinned' in out, out[-3000:]
    finally:
        playbook(lab, tmp_path, dict(v, kvm_guest_state='absent'))


def test_a_routed_network_benchlab_did_not_make_is_not_removed(lab, tmp_path):
    """libvirt 9.0 networks carry no metadata: the role's mark is the UUID it derives from the name."""
    net = 'kvmt-foreign-net'
    lab['conn'].networkDefineXML("<network><name>%s</name><bridge name='kvmtbr9'/>"
                                 "<ip address='198.19.99.1' prefix='24'/></network>" % net)
    try:
        v = base_vars(lab, tmp_path, kvm_guest_name='kvmt-td-netx', kvm_guest_network_mode='routed',
                      kvm_guest_network_name=net, kvm_guest_network_remove=True, kvm_guest_state='absent')
        proc, _changed, _added = playbook(lab, tmp_path, v)
        assert proc.returncode != 0
        out = ' '.join(proc.stdout.split())
        assert 'network %s on %s was not made by benchlab' % (net, lab['uri']) in out, out[-3000:]
        assert net in networks(lab)
        proc, _changed, _added = playbook(lab, tmp_path, dict(v, kvm_guest_adopt=True))
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert net not in networks(lab)
    finally:
        if net in networks(lab):
            networks(lab)[net].undefine()
