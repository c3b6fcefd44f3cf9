"""One real guest: boot it through libvirt with the kvm_guest role, benchmark it with bench.yml.

Run with `make test-vm` (tests/vm/run_all.py, next to the other VM tests): it is not part of
`make test` because it needs qemu, libvirt and mmdebstrap, a first build of the guest image (33 s
here from scratch on 2026-12-04, 3 minutes earlier; then cached under /var/cache/benchlab) and a
TCG boot (no KVM acceleration here).

What happens, all for real:
- a private libvirtd (libvirtd_lab.py: own mount + network namespaces) is started here and
  stopped at the end, whatever happens;
- the kvm_guest role makes a qcow2 overlay of the cached Debian image plus a data disk, defines
  a libvirt routed network (kvmt-routed, 198.19.77.0/24 on bridge kvmtbr0, inside the lab's
  network namespace), defines and starts a domain of type qemu with a direct kernel boot, waits
  for SSH and adds the guest with its labels;
- the same ansible-playbook run then imports playbooks/bench.yml with a matrix of a host cell
  and a guest cell (labels taken from the role's bench_labels): dd write/read/copy in the guest,
  iperf3 from the guest to the host over the routed network, records reach the report;
- the role tears the guest and the network down; the test checks nothing is left.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import guest_image  # noqa: E402  pylint: disable=wrong-import-position
import libvirtd_lab  # noqa: E402  pylint: disable=wrong-import-position
import vmlab  # noqa: E402  pylint: disable=wrong-import-position

REPO = vmlab.REPO

NEEDED = ['libvirtd', 'virsh', 'virt-xml-validate', 'qemu-system-x86_64', 'qemu-img', 'mmdebstrap', 'mkfs.ext4',
          'nsenter', 'unshare', 'iperf3']
GUEST = 'kvmt-guest'
NET = dict(vmlab.NET, guest='198.19.77.2')

pytestmark = pytest.mark.skipif(
    subprocess.run(['sh', '-c', 'command -v %s' % ' '.join(NEEDED)], capture_output=True, check=False).returncode != 0
    or os.geteuid() != 0, reason='needs root and: ' + ' '.join(NEEDED))


def role_vars(image, images_dir, state='present'):
    # the image's own host key (made by openssh-server's postinst at build time) is read from the ext4
    # image without mounting it and pinned by the role in a known_hosts file of this test (vmlab)
    return vmlab.guest_vars(
        image, images_dir.parent, GUEST, NET['guest'], state=state, kvm_guest_memory_mib=512,
        kvm_guest_image_dir=str(images_dir), kvm_guest_data_disk_size='64M',
        kvm_guest_serial_log=str(images_dir.parent / 'console.log'), kvm_guest_wait_timeout=480,
        kvm_guest_labels={'storage': 'qcow2-overlay'})


MATRIX = {
    'name': 'kvm-tcg-smoke',
    'description': 'The KVM report in small: host vs a qemu guest, dd and iperf3 host<->guest',
    'repetitions': 1,
    'baseline': 'host',
    'cells': [
        {'name': 'host', 'host': 'localhost', 'path': '/var/tmp', 'labels': {'platform': 'host'}},
        {'name': 'guest', 'host': GUEST, 'path': '/var/tmp', 'labels': "{{ hostvars['%s'].bench_labels }}" % GUEST},
    ],
    'benchmarks': [
        {'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '16M', 'bs': '1M'}},
        {'name': 'dd-read', 'tool': 'dd', 'params': {'test': 'read', 'size': '16M', 'bs': '1M'}},
        {'name': 'dd-copy', 'tool': 'dd', 'cells': ['guest'], 'params': {'test': 'copy', 'size': '16M', 'bs': '1M'}},
        {'name': 'iperf-guest-host', 'tool': 'iperf', 'cells': ['guest'],
         'params': {'version': 3, 'time': 3, 'server_host': 'localhost', 'server_address': NET['host']}},
    ],
}


def write_playbooks(tmp_path, image, images_dir):
    inv = tmp_path / 'inventory'
    (inv / 'group_vars' / 'all').mkdir(parents=True)
    (inv / 'hosts.yml').write_text(json.dumps({'all': {'hosts': {'localhost': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}}}}))
    group_vars = {'bench_matrix': MATRIX, 'bench_install_tools': False}
    (inv / 'group_vars' / 'all' / 'matrix.json').write_text(json.dumps(group_vars))
    up = [{'name': 'Provision the guest', 'hosts': 'localhost', 'gather_facts': False, 'tasks': [
        {'name': 'Boot it', 'ansible.builtin.include_role': {'name': 'benchlab.bench.kvm_guest'},
         'vars': role_vars(image, images_dir)}]},
        {'ansible.builtin.import_playbook': str(REPO / 'playbooks' / 'bench.yml')}]
    down = [{'name': 'Tear the guest down', 'hosts': 'localhost', 'gather_facts': False, 'tasks': [
        {'name': 'Remove it', 'ansible.builtin.include_role': {'name': 'benchlab.bench.kvm_guest'},
         'vars': role_vars(image, images_dir, state='absent')}]}]
    (tmp_path / 'up.yml').write_text(json.dumps(up))
    (tmp_path / 'down.yml').write_text(json.dumps(down))
    return inv


def test_a_real_guest_is_provisioned_benchmarked_and_removed(tmp_path):
    if not (REPO / '.collections/ansible_collections/community/libvirt').is_dir():
        pytest.skip('community.libvirt is not in the collections path (make setup)')
    pytest.importorskip('libvirt')
    timings = {}
    t0 = time.monotonic()
    image = guest_image.ensure_image()
    timings['image'] = time.monotonic() - t0
    images_dir = tmp_path / 'images'
    control = vmlab.control_dir('kvmt')
    inv = write_playbooks(tmp_path, image, images_dir)
    env = vmlab.ansible_env(tmp_path, control)
    lab = libvirtd_lab.Libvirtd(tmp_path / 'libvirtd')
    try:
        lab.start()
        up = vmlab.timed_playbook(lab, env, inv, tmp_path, 'up', tmp_path / 'up.yml', timings, timeout=1200)
        console = tmp_path / 'console.log'
        assert up.returncode == 0, (up.stdout[-8000:] + lab.log_tail()
                                    + (console.read_text(errors='replace')[-3000:] if console.exists() else ''))

        run, records = vmlab.run_records(tmp_path / 'runs')
        guest = [r for r in records if r.get('host') == GUEST]
        version = subprocess.run(['qemu-system-x86_64', '--version'], capture_output=True, text=True,
                                 check=True).stdout.split()[3]
        assert guest, records
        for rec in guest:
            labels = rec['labels']
            assert labels['platform'] == 'kvm' and labels['hypervisor'] == 'localhost'
            assert labels['domain_type'] == 'qemu' and labels['emulator_version'] == version
            assert labels['net'] == 'routed' and labels['disk_bus'] == 'virtio' and labels['disk_cache'] == 'none'
            assert labels['cell'] == 'guest'
        dd = [r for r in guest if r['tool'] == 'dd']
        assert sorted(r['test'] for r in dd) == ['copy', 'read', 'write']
        assert all(r['metrics']['throughput']['value'] > 0 for r in dd)
        iperf = [r for r in guest if r['tool'].startswith('iperf')]
        assert len(iperf) == 1 and iperf[0]['metrics']['throughput']['value'] > 0
        host = [r for r in records if r.get('host') == 'localhost' and r['tool'] == 'dd']
        assert host and all(r['labels']['platform'] == 'host' for r in host)
        report = (run / 'report.md').read_text()
        assert 'dd-write' in report and 'guest' in report

        down = vmlab.timed_playbook(lab, env, inv, tmp_path, 'down', tmp_path / 'down.yml', timings, timeout=600)
        assert down.returncode == 0, down.stdout[-4000:]
        assert lab.virsh('list', '--all', '--name').stdout.split() == []
        assert lab.virsh('net-list', '--all', '--name').stdout.split() == []
        assert list(images_dir.iterdir()) == []
        links = subprocess.run(lab.nsenter(['ip', '-o', 'link']), capture_output=True, text=True, check=True).stdout
        assert NET['bridge'] not in links
    finally:
        vmlab.teardown(lab, control)
        print('timings (s): %s' % {k: round(v, 1) for k, v in timings.items()})
    # the lab's mount points and processes are gone
    assert lab.ns_pids() == [] if lab.pid else True
    assert not os.path.exists('/run/libvirt') or '/run/libvirt' not in lab.created_mountpoints
