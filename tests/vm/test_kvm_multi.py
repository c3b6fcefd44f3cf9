"""Several KVM guests at once (issue 18 part 2; the KVM-versions report in small), for real.

Run with `BENCHLAB_VM_MULTI=1 make test-vm` (skipped without it: it has not passed end to end yet,
and takes far longer than make test-vm's budget on this machine). Four TCG guests (tests/vm/vmlab.py: Debian cloud kernel,
direct kernel boot, 320 MiB, one vCPU, a 64 MiB raw data disk) are booted together through the
benchlab.bench.kvm_guest role on a libvirt routed network of a private libvirtd
(libvirtd_lab.py), once, and reused for every step:

- a factor that differs between guests, laid out side by side (`pivot: disk_bus`): disk bus
  virtio or ide, crossed with the cache mode none or writeback (g1 virtio/none, g2 ide/writeback,
  g3 virtio/writeback, g4 ide/none);
- dd sequential read of each guest's system disk (/dev/vda, or its IDE by-id name) with bs=16M after dropping
  the caches in the guest and on the host (methodology drop_hypervisor_caches), and the host's own
  read of the same base image (attached read-only as a loop device) as the baseline;
- dd block-device copy inside each guest, system disk onto the data disk (vda -> vdb, sda -> sdb),
  the data disk through the device guard (destructive: true);
- iperf3 with 1, 2 and 4 guests at once: in one step every guest sends to the host and the host
  sends to every guest (2, 4 and 8 concurrent pairs); the report gives the step's aggregate, each
  pair's figure is kept as detail; guest -> guest between g1 and g2;
- then scenarios/kvm_versions/vm.yml (the scenario's TCG rendition) against g1, which is named
  and addressed as that file expects (kvmt-guest, 198.19.77.2).

Not here: bridged networking (the role's bridge check reads /sys/class/net, and in the private
libvirtd's network namespace sysfs still shows the host's interfaces, so the lab has no bridge a
guest could join), KVM acceleration (none on this machine), several emulator builds (one qemu).
Everything the test makes (domains, network, images, the loop device) is removed, also on failure.
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
BIN = vmlab.BIN
NEEDED = ['libvirtd', 'virsh', 'virt-xml-validate', 'qemu-system-x86_64', 'qemu-img', 'mmdebstrap', 'nsenter',
          'unshare', 'iperf3', 'losetup']
HOST_IP = vmlab.NET['host']
# name, address, disk bus, cache mode (the guest named kvmt-guest at .2 is the one vm.yml expects)
GUESTS = [('kvmt-guest', '198.19.77.2', 'virtio', 'none'), ('kvmm-g2', '198.19.77.3', 'ide', 'writeback'),
          ('kvmm-g3', '198.19.77.4', 'virtio', 'writeback'), ('kvmm-g4', '198.19.77.5', 'ide', 'none')]
# The system disk and the data disk as the guest sees them. IDE disks are probed asynchronously, so
# sda/sdb swap between boots (seen: the data disk came up as sda): udev's by-id names follow the
# IDE position (primary master QM00001 = system disk, primary slave QM00002 = data disk).
DISK = {'virtio': ('/dev/vda', '/dev/vdb'),
        'ide': ('/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001', '/dev/disk/by-id/ata-QEMU_HARDDISK_QM00002')}

pytestmark = pytest.mark.skipif(
    subprocess.run(['sh', '-c', 'command -v %s' % ' '.join(NEEDED)], capture_output=True, check=False).returncode != 0
    or os.geteuid() != 0, reason='needs root and: ' + ' '.join(NEEDED))


def root_uuid(image):
    """The base image's file-system UUID: the kernel's root= for any disk bus and probe order."""
    return subprocess.run(['blkid', '-p', '-o', 'value', '-s', 'UUID', str(image / 'rootfs.img')],
                          capture_output=True, text=True, check=True).stdout.strip()


def role_vars(image, work, name, ip, bus, cache, state='present', last=False):
    # rootdelay: four TCG guests probing their disks on two shared cores can take longer than the
    # initramfs's default 30 s wait for the root device (seen: 23 s for the ATA probe of one guest).
    # Debian's initramfs sleeps rootdelay seconds first, unconditionally, then waits up to as long:
    # 45 s (not more: every second of it is boot time).
    return vmlab.guest_vars(
        image, work, name, ip, state=state, kvm_guest_disk_bus=bus, kvm_guest_disk_cache=cache,
        kvm_guest_disk_io='threads', kvm_guest_data_disk_size='64M', kvm_guest_wait_ssh=False,
        kvm_guest_network_remove=last,
        kvm_guest_cmdline='root=UUID=%s rootdelay=45 rw console=ttyS0 net.ifnames=0 systemd.hostname=%s '
                          'ip=%s::%s:255.255.255.0:%s:eth0:off' % (root_uuid(image), name, ip, HOST_IP, name))


def labels(name):
    return "{{ hostvars['%s'].bench_labels }}" % name


def iperf_step(count):
    """The cell of `count` guests at once: every guest -> host and host -> every guest, one step."""
    pairs = []
    for i, (name, ip, _bus, _cache) in enumerate(GUESTS[:count]):
        pairs.append({'client_host': name, 'server_host': 'localhost', 'server_address': HOST_IP,
                      'port': 5301 + 2 * i})
        pairs.append({'client_host': 'localhost', 'server_host': name, 'server_address': ip, 'port': 5302 + 2 * i})
    first = pairs[0]
    return {'name': 'iperf-x%d' % count, 'host': first['client_host'], 'path': '/tmp',
            'labels': {'platform': 'kvm', 'net': 'routed', 'guests': count, 'direction': 'guests<->host'},
            'params': {'iperf': {'server_host': first['server_host'], 'server_address': first['server_address'],
                                 'port': first['port'], 'concurrent': pairs[1:]}}}


def matrix(loop_dev):
    cells = [{'name': 'host-read', 'host': 'localhost', 'path': loop_dev,
              'labels': {'platform': 'host', 'disk_bus': 'host', 'disk_cache': 'host'}}]
    for name, _ip, bus, cache in GUESTS:
        cells.append({'name': '%s-read' % name, 'host': name, 'path': DISK[bus][0], 'labels': labels(name)})
        cells.append({'name': '%s-copy' % name, 'host': name, 'path': DISK[bus][1], 'labels': labels(name),
                      'params': {'dd': {'input': DISK[bus][0]}}})
    cells += [iperf_step(n) for n in (1, 2, 4)]
    cells.append({'name': 'vm-vm', 'host': GUESTS[0][0], 'path': '/tmp',
                  'labels': {'platform': 'kvm', 'net': 'routed', 'guests': 2, 'direction': 'vm-vm'},
                  'params': {'iperf': {'server_host': GUESTS[1][0], 'server_address': GUESTS[1][1]}}})
    return {
        'name': 'kvm-multi', 'repetitions': 1, 'baseline': 'host-read', 'pivot': 'disk_bus',
        'description': 'Four TCG guests at once: dd read bs=16M and vda->vdb copy per disk bus and cache mode, '
                       'iperf3 guests<->host with 1/2/4 guests in one step, guest->guest',
        'methodology': {'drop_hypervisor_caches': True},
        'cells': cells,
        'benchmarks': [
            {'name': 'dd-seq-read', 'tool': 'dd', 'cells': [c['name'] for c in cells if c['name'].endswith('-read')],
             'params': {'test': 'read', 'size': '32M', 'bs': '16M', 'drop_caches': True}},
            {'name': 'dd-copy', 'tool': 'dd', 'cells': [c['name'] for c in cells if c['name'].endswith('-copy')],
             'params': {'test': 'copy', 'size': '32M', 'bs': '16M', 'destructive': True}},
            {'name': 'iperf', 'tool': 'iperf', 'cells': ['iperf-x1', 'iperf-x2', 'iperf-x4', 'vm-vm'],
             'params': {'version': 3, 'time': 2}},
        ],
    }


def write_playbooks(work, image, loop_dev):
    inv = work / 'inventory'
    vmlab.write_json(inv / 'hosts.yml', {'all': {'hosts': {'localhost': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}}}})
    vmlab.write_json(inv / 'group_vars' / 'all' / 'matrix.json',
                     {'bench_matrix': matrix(loop_dev), 'bench_install_tools': False})
    n = len(GUESTS)

    def guests_play(state):
        loop = [role_vars(image, work, g[0], g[1], g[2], g[3], state=state, last=(i == n - 1))
                for i, g in enumerate(GUESTS)]
        # include_role's vars must be a mapping: each variable taken from the loop item
        # (loop_var: the role loops over `item` itself)
        per_item = dict((k, '{{ kvmm_guest.%s }}' % k) for k in loop[0])
        tasks = [{'name': 'kvm_guest %s' % state, 'ansible.builtin.include_role': {'name': 'benchlab.bench.kvm_guest'},
                  'vars': per_item, 'loop': loop, 'loop_control': {'loop_var': 'kvmm_guest', 'label': '{{ kvmm_guest.kvm_guest_name }}'}}]
        if state == 'present':  # started together above; now wait for all of them
            tasks.append({'name': 'Wait for every guest', 'ansible.builtin.wait_for': {
                'host': '{{ item }}', 'port': 22, 'search_regex': 'OpenSSH', 'timeout': 600},
                'loop': [g[1] for g in GUESTS]})
        return [{'name': 'Guests %s' % state, 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]
    up = guests_play('present') + [{'ansible.builtin.import_playbook': str(REPO / 'playbooks' / 'bench.yml')}]
    vmlab.write_json(work / 'up.yml', up)
    vmlab.write_json(work / 'down.yml', guests_play('absent'))
    return inv


def one_run(runs_dir):
    runs = sorted(p for p in runs_dir.iterdir() if p.is_dir() and not p.is_symlink())
    assert len(runs) == 1, runs
    records = [json.loads(line) for line in (runs[0] / 'results.jsonl').read_text().splitlines()]
    return runs[0], records


def check_dd(records, results):
    read = [r for r in records if r['tool'] == 'dd' and r['test'] == 'read']
    by_host = dict((r['host'], r) for r in read)
    assert set(by_host) == {'localhost'} | set(g[0] for g in GUESTS), sorted(by_host)
    for name, _ip, bus, cache in GUESTS:
        rec = by_host[name]
        assert rec['labels']['disk_bus'] == bus and rec['labels']['disk_cache'] == cache, rec['labels']
        assert rec['params']['bs'] == '16M' and rec['params']['drop_caches'] is True, rec['params']
        assert rec['metrics']['throughput']['value'] > 0
    copy = [r for r in records if r['tool'] == 'dd' and r['test'] == 'copy']
    assert sorted((r['host'], r['params']['input']) for r in copy) == sorted(
        (g[0], DISK[g[2]][0]) for g in GUESTS)
    assert all(r['metrics']['bytes']['value'] == 32 * 1024 * 1024 for r in copy)
    pivots = [p for p in results['analysis']['pivots'] if p['benchmark'] == 'dd-seq-read']
    assert pivots and pivots[0]['factor'] == 'disk_bus', results['analysis']['pivots']
    assert set(pivots[0]['columns']) == {'host', 'virtio', 'ide'}, pivots[0]
    filled = [c for row in pivots[0]['cells'] for c in row if c]
    assert len(filled) == 5, pivots[0]  # the host and the four guests, each in its own (bus, cache) place


def check_iperf(records):
    """Each step's pairs: count, both directions, every guest; the aggregate is their sum."""
    iperf = [r for r in records if r['tool'].startswith('iperf')]
    steps = {}
    for r in iperf:
        steps.setdefault(r['labels']['cell'], []).append(r)
    out = {}
    for count in (1, 2, 4):
        recs = steps['iperf-x%d' % count]
        assert len(recs) == 2 * count, [r['labels'] for r in recs]
        assert sorted(r['labels']['pair'] for r in recs) == list(range(1, 2 * count + 1))
        assert all(r['labels']['pairs'] == 2 * count and r['metrics']['throughput']['value'] > 0 for r in recs)
        # the step's records carry the cell's host; a concurrent pair names its own client
        clients = sorted(r['labels'].get('client', r['host']) for r in recs)
        assert clients.count('localhost') == count and set(clients) - {'localhost'} == set(g[0] for g in GUESTS[:count])
        out[count] = sum(r['metrics']['throughput']['value'] for r in recs)
    assert len(steps['vm-vm']) == 1 and steps['vm-vm'][0]['host'] == GUESTS[0][0]
    return out


def test_four_guests_at_once_disk_bus_side_by_side_and_iperf_steps(tmp_path):
    if os.environ.get('BENCHLAB_VM_MULTI') != '1':
        pytest.skip('not yet green end to end and too slow for make test-vm\'s budget (one interrupted run: '
                    '27 min for about half of it under load); BENCHLAB_VM_MULTI=1 runs it')
    if not (REPO / '.collections/ansible_collections/community/libvirt').is_dir():
        pytest.skip('community.libvirt is not in the collections path (make setup)')
    pytest.importorskip('libvirt')
    timings = {}
    t0 = time.monotonic()
    image = guest_image.ensure_image()
    timings['image'] = time.monotonic() - t0
    control_dir = Path('/tmp/kvmm-cp-%d' % os.getpid())  # short: ssh control socket paths are limited
    control_dir.mkdir(mode=0o700, exist_ok=True)
    env = vmlab.ansible_env(tmp_path, control_dir)
    lab = libvirtd_lab.Libvirtd(tmp_path / 'libvirtd', tag='kvmm')
    # the host's baseline: the guests' base image, read-only, as a block device
    loop_dev = subprocess.run(['losetup', '-r', '-f', '--show', str(image / 'rootfs.img')], capture_output=True,
                              text=True, check=True).stdout.strip()
    inv = write_playbooks(tmp_path, image, loop_dev)
    try:
        lab.start()
        t0 = time.monotonic()
        up = vmlab.playbook(lab, env, inv, tmp_path / 'up.yml')
        timings['boot+bench'] = time.monotonic() - t0
        assert up.returncode == 0, (up.stdout[-6000:] + up.stderr[-2000:] + lab.log_tail() + ''.join(
            p.read_text(errors='replace')[-1500:] for p in tmp_path.glob('console-*.log')))
        run_dir, records = one_run(tmp_path / 'runs')
        results = json.loads((run_dir / 'results.json').read_text())
        check_dd(records, results)
        sums = check_iperf(records)
        report = (run_dir / 'report.md').read_text()
        assert 'disk_bus' in report and 'iperf-x4' in report
        print('iperf step sums (Mbit/s, TCG, shared machine): %s' % {k: round(v, 1) for k, v in sums.items()})

        # the scenario's TCG rendition against the first guest (kvmt-guest, as vm.yml names it)
        t0 = time.monotonic()
        scen_inv = vmlab.write_json(tmp_path / 'scenario-inventory.json', vmlab.static_inventory(
            image, tmp_path, {GUESTS[0][0]: GUESTS[0][1]}))
        scen_env = dict(env, BENCHLAB_REPORT_DIR=str(tmp_path / 'scenario-runs'))
        scen = vmlab.playbook(lab, scen_env, scen_inv, REPO / 'playbooks' / 'bench.yml',
                              '-e', '@%s' % (REPO / 'scenarios/kvm_versions/vm.yml'), '-e', 'bench_install_tools=false')
        timings['scenario vm.yml'] = time.monotonic() - t0
        assert scen.returncode == 0, scen.stdout[-6000:] + scen.stderr[-2000:]
        _run, srecs = one_run(tmp_path / 'scenario-runs')
        assert sorted(set((r['labels']['cell'], r['test'] if r['tool'] == 'dd' else r['tool']) for r in srecs)) == [
            ('guest-vda', 'read'), ('guest-vdb', 'copy'), ('host', 'copy'), ('host-vm', 'iperf3'),
            ('vm-host', 'iperf3')], srecs

        t0 = time.monotonic()
        down = vmlab.playbook(lab, env, inv, tmp_path / 'down.yml', timeout=600)
        timings['down'] = time.monotonic() - t0
        assert down.returncode == 0, down.stdout[-4000:]
        assert lab.virsh('list', '--all', '--name').stdout.split() == []
        assert lab.virsh('net-list', '--all', '--name').stdout.split() == []
        assert list((tmp_path / 'images').iterdir()) == []
    finally:
        for sock in control_dir.glob('*'):
            subprocess.run(['ssh', '-O', 'exit', '-o', 'ControlPath=%s' % sock, 'kvmm'], capture_output=True,
                           check=False, timeout=30)
        lab.stop()
        libvirtd_lab.cleanup_dir(control_dir)
        subprocess.run(['losetup', '-d', loop_dev], check=False)
        print('timings (s): %s' % {k: round(v, 1) for k, v in timings.items()})
    assert lab.ns_pids() == []
    assert subprocess.run(['losetup', '-j', str(image / 'rootfs.img')], capture_output=True, text=True,
                          check=True).stdout == ''
