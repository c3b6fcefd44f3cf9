"""Two real guests, routed and bridged: booted through libvirt by the kvm_guest role, benchmarked
side by side with bench.yml.

Run with `make test-vm` (tests/vm/run_all.py, next to the other VM tests): it is not part of
`make test` because it needs qemu, libvirt and mmdebstrap, a first build of the guest image (33 s
here from scratch on 2026-12-04, 3 minutes earlier; then cached under /var/cache/benchlab) and TCG
boots (no KVM acceleration here).

What happens, all for real:
- a private libvirtd (libvirtd_lab.py: own mount + network namespaces) is started here and
  stopped at the end, whatever happens;
- the test makes a Linux bridge in the lab's network namespace (kvmtbr1, 198.19.78.1/24, up): the
  existing bridge an administrator would have for bridged guests;
- in one task (looped) the kvm_guest role boots two guests at once, each a qcow2 overlay of the
  cached Debian image, a domain of type qemu with a direct kernel boot:
  - kvmt-guest (512 MiB, a 64 MiB data disk) on a libvirt routed network the role defines
    (kvmt-routed, 198.19.77.0/24 on bridge kvmtbr0), at 198.19.77.2;
  - kvmt-br (320 MiB), bridged: its tap device joins kvmtbr1 (the role checks the bridge in
    /sys/class/net/kvmtbr1/bridge: Ansible runs with the lab's own sysfs, lab.nsenter), at
    198.19.78.2 with 198.19.78.1 as its gateway;
  then waits for both SSH servers and adds the guests with their labels;
- the same ansible-playbook run then imports playbooks/bench.yml with a matrix of a host cell and
  cells of the guests (labels taken from the role's bench_labels: net routed / bridged): dd
  write/read/copy in the routed guest and on the host, and per guest iperf3 guest -> host and
  host -> guest at the same time (a cell each, its client in the guest plus a concurrent pair
  whose client is on the host, both waiting for one agreed start), one guest after the other;
  the report lays out bridged vs routed side by side (`pivot: net`);
- then, in the same routed guest (no extra boot), the device guard's holder classes that this
  machine's kernel cannot make (guard_holders.py): an md mirror, an LVM volume and a DRBD device that
  is up, on loop devices in the guest; benchlab.bench.dd and benchlab.bench.fio are refused on their
  members naming the holder, the members' and the array's / volume's bytes unchanged, and write
  once the holders are released; before the release, the layer resolver on the guest's Python
  (guest_layers.py, benchlab.bench.observe in check mode) resolves a directory on ext4 on the LVM
  volume, the md mirror and the DRBD device down to their loop devices, backing files and vda;
- the role tears both guests and the routed network down; the bridge is the test's, not the
  role's: it must still be there afterwards, then the test removes it (on a failure it dies with
  the lab's network namespace). The test checks nothing is left.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / '.collections'))  # the analysis' own overlap measure

import guard_holders  # noqa: E402  pylint: disable=wrong-import-position
import guest_layers  # noqa: E402  pylint: disable=wrong-import-position
import guest_image  # noqa: E402  pylint: disable=wrong-import-position
import libvirtd_lab  # noqa: E402  pylint: disable=wrong-import-position
import vmlab  # noqa: E402  pylint: disable=wrong-import-position
from ansible_collections.benchlab.bench.plugins.plugin_utils.measurements import (  # noqa: E402  pylint: disable=wrong-import-position
    TOGETHER_MIN, together)

REPO = vmlab.REPO

NEEDED = ['libvirtd', 'virsh', 'virt-xml-validate', 'qemu-system-x86_64', 'qemu-img', 'mmdebstrap', 'mkfs.ext4',
          'nsenter', 'unshare', 'iperf3']
GUEST = 'kvmt-guest'
NET = dict(vmlab.NET, guest='198.19.77.2')
# the bridged guest on the test's own bridge
BR_GUEST = 'kvmt-br'
BRIDGE = {'name': 'kvmtbr1', 'host': '198.19.78.1', 'guest': '198.19.78.2'}
# iperf3 per guest: both directions at once, every client waiting for one agreed moment past a guest
# client's module start-up in its TCG guest (10-23 s with one guest, see test_kvm_multi.START_DELAY_S;
# CI's fresh machine saw the bridged guest's client 2.7 s past a 35 s delay)
IPERF_TIME = 15
START_DELAY_S = 45

pytestmark = pytest.mark.skipif(
    subprocess.run(['sh', '-c', 'command -v %s' % ' '.join(NEEDED)], capture_output=True, check=False).returncode != 0
    or os.geteuid() != 0, reason='needs root and: ' + ' '.join(NEEDED))


def role_vars(image, images_dir, state='present'):
    """The kvm_guest variables of the routed guest and of the bridged one (the same keys: one looped task)."""
    # the image's own host key (made by openssh-server's postinst at build time) is read from the ext4
    # image without mounting it and pinned by the role in a known_hosts file of this test (vmlab)
    common = dict(state=state, kvm_guest_image_dir=str(images_dir), kvm_guest_wait_ssh=False,
                  kvm_guest_bridge=BRIDGE['name'], kvm_guest_labels={'storage': 'qcow2-overlay'})
    routed = vmlab.guest_vars(image, images_dir.parent, GUEST, NET['guest'], kvm_guest_memory_mib=512,
                              kvm_guest_data_disk_size='64M', **common)
    bridged = vmlab.guest_vars(image, images_dir.parent, BR_GUEST, BRIDGE['guest'], gateway=BRIDGE['host'],
                               kvm_guest_network_mode='bridged', kvm_guest_data_disk_size='', **common)
    return [routed, bridged]


def guests_play(image, images_dir, state):
    loop = role_vars(image, images_dir, state)
    # include_role's vars must be a mapping: each variable taken from the loop item
    per_item = dict((k, '{{ kvmt_guest.%s }}' % k) for k in loop[0])
    tasks = [{'name': 'kvm_guest %s' % state, 'ansible.builtin.include_role': {'name': 'benchlab.bench.kvm_guest'},
              'vars': per_item, 'loop': loop,
              'loop_control': {'loop_var': 'kvmt_guest', 'label': '{{ kvmt_guest.kvm_guest_name }}'}}]
    if state == 'present':  # started together above; now wait for both
        tasks.append({'name': 'Wait for both guests', 'ansible.builtin.wait_for': {
            'host': '{{ item }}', 'port': 22, 'search_regex': 'OpenSSH', 'timeout': 480},
            'loop': [NET['guest'], BRIDGE['guest']]})
    return [{'name': 'Guests %s' % state, 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]


def iperf_cell(cell, guest, guest_ip, host_ip, port):
    """guest -> host (this cell's own client, in the guest) and host -> guest (a concurrent pair, its
    client on the host) at the same time."""
    return {'name': cell, 'host': guest, 'path': '/tmp', 'labels': "{{ hostvars['%s'].bench_labels }}" % guest,
            'params': {'iperf': {'server_host': 'localhost', 'server_address': host_ip, 'port': port,
                                 'concurrent': [{'client_host': 'localhost', 'server_host': guest,
                                                 'server_address': guest_ip, 'port': port + 1}]}}}


MATRIX = {
    'name': 'kvm-tcg-smoke',
    'description': 'The KVM report in small: host vs a qemu guest (dd), a routed vs a bridged guest (iperf3 guest<->host)',
    'repetitions': 1,
    'baseline': 'host',
    'pivot': 'net',
    'cells': [
        {'name': 'host', 'host': 'localhost', 'path': '/var/tmp', 'labels': {'platform': 'host', 'net': 'host'}},
        {'name': 'guest', 'host': GUEST, 'path': '/var/tmp', 'labels': "{{ hostvars['%s'].bench_labels }}" % GUEST},
        iperf_cell('routed', GUEST, NET['guest'], NET['host'], 5201),
        iperf_cell('bridged', BR_GUEST, BRIDGE['guest'], BRIDGE['host'], 5203),
    ],
    'benchmarks': [
        {'name': 'dd-write', 'tool': 'dd', 'cells': ['host', 'guest'], 'params': {'test': 'write', 'size': '16M', 'bs': '1M'}},
        {'name': 'dd-read', 'tool': 'dd', 'cells': ['host', 'guest'], 'params': {'test': 'read', 'size': '16M', 'bs': '1M'}},
        {'name': 'dd-copy', 'tool': 'dd', 'cells': ['guest'], 'params': {'test': 'copy', 'size': '16M', 'bs': '1M'}},
        {'name': 'iperf-net', 'tool': 'iperf', 'cells': ['routed', 'bridged'],
         'params': {'version': 3, 'time': IPERF_TIME, 'start_delay_s': START_DELAY_S}},
    ],
}


def write_playbooks(tmp_path, image, images_dir):
    inv = tmp_path / 'inventory'
    (inv / 'group_vars' / 'all').mkdir(parents=True)
    (inv / 'hosts.yml').write_text(json.dumps({'all': {'hosts': {'localhost': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}}}}))
    group_vars = {'bench_matrix': MATRIX, 'bench_install_tools': False}
    (inv / 'group_vars' / 'all' / 'matrix.json').write_text(json.dumps(group_vars))
    up = guests_play(image, images_dir, 'present') + [
        {'ansible.builtin.import_playbook': str(REPO / 'playbooks' / 'bench.yml')}]
    (tmp_path / 'up.yml').write_text(json.dumps(up))
    (tmp_path / 'down.yml').write_text(json.dumps(guests_play(image, images_dir, 'absent')))
    return inv


def check_guest_records(records, version):
    """Both guests' records with the role's labels; dd in the routed guest and on the host."""
    for rec in (r for r in records if r['host'] in (GUEST, BR_GUEST)):
        labels = rec['labels']
        assert labels['platform'] == 'kvm' and labels['hypervisor'] == 'localhost', labels
        assert labels['domain_type'] == 'qemu' and labels['emulator_version'] == version, labels
        assert labels['disk_bus'] == 'virtio' and labels['disk_cache'] == 'none', labels
        assert labels['net'] == ('bridged' if rec['host'] == BR_GUEST else 'routed'), labels
    dd = [r for r in records if r['host'] == GUEST and r['tool'] == 'dd']
    assert sorted(r['test'] for r in dd) == ['copy', 'read', 'write'], dd
    assert all(r['labels']['cell'] == 'guest' and r['metrics']['throughput']['value'] > 0 for r in dd)
    # each observed in the guest (its own sampler, the guest's /proc and sysfs): /var/tmp down to vda
    for rec in dd:
        obs = rec.get('observed') or {}
        stack = [(l['kind'], l['name'], l['above']) for l in obs.get('stack', [])]
        assert stack and stack[0][0] in ('path', 'file') and ('disk', 'vda', '/') in stack, (rec['test'], stack)
        assert ('filesystem', '/', stack[0][1]) in stack, (rec['test'], stack)
        assert obs['cpu']['cores'] == 1 and not [m for m in obs['missing'] if m['source'] == '/proc/stat'], obs
    write = [r for r in dd if r['test'] == 'write'][0]
    vda = [d for d in write['observed']['devices'] if d['name'] == 'vda']
    assert vda and vda[0]['write_bytes'] >= write['metrics']['bytes']['value'], write['observed']['devices']
    host = [r for r in records if r.get('host') == 'localhost' and r['tool'] == 'dd']
    assert host and all(r['labels']['platform'] == 'host' for r in host)


def check_iperf(records, results, report):
    """Per guest its two pairs (guest -> host, host -> guest) run together, labelled with its net; the
    report's pivot lays the two nets side by side."""
    figures = {}
    for cell, guest, net in (('routed', GUEST, 'routed'), ('bridged', BR_GUEST, 'bridged')):
        recs = [r for r in records if r['tool'].startswith('iperf') and r['labels']['cell'] == cell]
        assert sorted(r['labels'].get('client', r['host']) for r in recs) == sorted([guest, 'localhost']), recs
        assert all(r['labels']['net'] == net and r['metrics']['throughput']['value'] > 0 for r in recs), recs
        spans = [(r['labels'].get('client', r['host']), r['started'], r['duration_s']) for r in recs]
        fraction = together(recs)['fraction']
        assert fraction >= TOGETHER_MIN, 'the %s guest\'s pairs ran at the same time for %.0f%% only: %s' % (
            net, 100 * fraction, spans)
        figures['%s overlap %%' % net] = 100 * fraction
        figures['%s Mbit/s' % net] = sum(r['metrics']['throughput']['value'] for r in recs)
    pivot = [p for p in results['analysis']['pivots'] if p['benchmark'] == 'iperf-net']
    assert pivot and pivot[0]['factor'] == 'net', results['analysis']['pivots']
    assert sorted(pivot[0]['columns']) == ['bridged', 'routed'], pivot[0]
    assert len(pivot[0]['cells']) == 1 and all(c and c['mean'] > 0 for c in pivot[0]['cells'][0]), pivot[0]
    assert '## Pivot: iperf-net' in report, report
    table = report.split('## Pivot: iperf-net', 1)[1].split('\n## ', 1)[0]
    assert 'bridged' in table and 'routed' in table, table
    return figures


def test_a_routed_and_a_bridged_guest_are_provisioned_benchmarked_and_removed(tmp_path):
    if not (REPO / '.collections/ansible_collections/community/libvirt').is_dir():
        pytest.skip('community.libvirt is not in the collections path (make setup)')
    pytest.importorskip('libvirt')
    timings, figures = {}, {}
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
        vmlab.make_bridge(lab, BRIDGE['name'], BRIDGE['host'])
        up = vmlab.timed_playbook(lab, env, inv, tmp_path, 'up', tmp_path / 'up.yml', timings, timeout=1200)
        assert up.returncode == 0, (up.stdout[-8000:] + lab.log_tail() + ''.join(
            p.read_text(errors='replace')[-1500:] for p in tmp_path.glob('console-*.log')))

        run, records = vmlab.run_records(tmp_path / 'runs')
        version = subprocess.run(['qemu-system-x86_64', '--version'], capture_output=True, text=True,
                                 check=True).stdout.split()[3]
        assert set(r['host'] for r in records) >= {GUEST, BR_GUEST, 'localhost'}, records
        check_guest_records(records, version)
        report = (run / 'report.md').read_text()
        assert 'dd-write' in report and 'guest' in report
        figures.update(check_iperf(records, json.loads((run / 'results.json').read_text()), report))
        # the bridged guest's tap device is a port of the test's bridge
        assert vmlab.in_lab(lab, 'ip', '-o', 'link', 'show', 'master', BRIDGE['name']).stdout.strip()

        # the device guard's holders (md, device-mapper, DRBD) in the routed guest
        guard_inv = vmlab.write_json(tmp_path / 'guard-inventory.json',
                                     vmlab.static_inventory(image, tmp_path, {GUEST: NET['guest']}))
        guard = vmlab.timed_playbook(lab, env, guard_inv, tmp_path, 'guard',
                                     guard_holders.play(GUEST, tmp_path / 'guard.json'), timings, timeout=900)
        assert guard.returncode == 0, guard.stdout[-8000:]
        seen = json.loads((tmp_path / 'guard.json').read_text())
        figures.update(('guard %s' % k, v) for k, v in guard_holders.check(seen).items() if k == 'refused')
        figures.update(guest_layers.check(seen['layers'], seen['devs']))

        down = vmlab.timed_playbook(lab, env, inv, tmp_path, 'down', tmp_path / 'down.yml', timings, timeout=600)
        assert down.returncode == 0, down.stdout[-4000:]
        assert lab.virsh('list', '--all', '--name').stdout.split() == []
        assert lab.virsh('net-list', '--all', '--name').stdout.split() == []
        assert list(images_dir.iterdir()) == []
        assert NET['bridge'] not in vmlab.in_lab(lab, 'ip', '-o', 'link').stdout
        # the role left the bridge it did not make (without its guest's port), the test removes it
        vmlab.remove_bridge(lab, BRIDGE['name'])
    finally:
        vmlab.teardown(lab, control)
        print('timings (s): %s' % {k: round(v, 1) for k, v in timings.items()})
        print('figures (TCG, shared machine): %s' % {k: round(v, 1) for k, v in figures.items()})
        vmlab.print_task_times(tmp_path)
    # the lab's mount points and processes are gone
    assert lab.ns_pids() == [] if lab.pid else True
    assert not os.path.exists('/run/libvirt') or '/run/libvirt' not in lab.created_mountpoints
