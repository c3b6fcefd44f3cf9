"""DRBD replication between two real guests, measured (references 000 and 003 in small).

Run with `make test-vm`. Two TCG guests (tests/vm/vmlab.py) boot the Debian cloud kernel, whose
in-tree DRBD 8.4.11 module drbd-utils 9.22 drives through drbdadm-84/drbdsetup-84. Everything real:
- the test makes a Linux bridge in the lab's network namespace (kvmtbr3, up, no address of the lab's):
  a dedicated replication link;
- kvm_guest boots both on the lab's routed network, each with five equal data disks (drbd_lab.py:
  r0 protocol C, r1 protocol A, r2 taken StandAlone, a plain ext4 baseline, r3 protocol C) and a
  second NIC on kvmtbr3 (kvm_guest_extra_bridges); the playbook addresses eth1 (198.19.79.11/.12);
  r0-r2 replicate over the routed network, r3 over the bridge (its only way to the peer's address);
- the benchlab.bench.drbd role with drbd_manage_lifecycle renders and validates the 8.4 syntax,
  creates the meta-data in safe mode, brings the resources up on both nodes, runs the initial sync,
  promotes kvmt-drbd1, makes and mounts ext4 and waits for UpToDate;
- r1 is made to resync (resync paused, then invalidate on the secondary) right before bench.yml: the
  cell must wait;
- bench.yml runs dd (write, fdatasync) on the plain disk, r0 (C, net routed), r1 (A), r2
  (StandAlone) and r3 (C, net bridged), bonnie++ on the plain disk and r0; the report shows the
  "% slower" table (C routed vs C bridged against the plain disk) and the DRBD state of every cell,
  r3 Established/UpToDate; both guests' tap devices are ports of kvmtbr3;
- failure paths: the peer guest is stopped, then a run with a DRBD cell fails that cell with the
  reason while the host cell is measured; a backing disk with a filesystem is refused by create-md;
- teardown (role) and the guests' removal; nothing is left (domains, network, images, DRBD devices
  incl. r3, mounts in the surviving guest), the bridge without ports, then removed by the test; the
  guests' disks are removed also when it fails.

Measured (2026-12-03, 2 shared cores, image cached, another helper's tests not running at the
time): passed in 833 s. up.yml 595 s = both guests started by kvm_guest then SSH (about 135 s),
the drbd role (create-md 59 s, up 43 s, promote with the initial sync of 3 x 32 MiB 42 s, mkfs +
mount 18 s, render/validate/modprobe 35 s), bench.yml 6 runs (about 260 s, of which the 100 s
resync pause every cell waits for; the environment of the cells 28 s); the peer stopped 47 s;
the refused ext4 disk 36 s; teardown + removal 151 s. The first run (under load, with both boots
in turn and fact gathering) spent 919 s in up.yml alone. Each Ansible module in a TCG guest costs
several seconds: the time goes with the number of tasks x resources, not with the data.
With the bridged r3 (2026-12-04, alone, image cached): passed in 639 s (with lint, sanity and the
libvirt test-driver tests running at the same time), 458 s and 468 s (quiet). up.yml 522 / 340 s (SSH of
both guests 77 / 26 s, create-md 63 / 22 s, promote 40 / 19 s, eth1 addressed + the plain disk's
ext4 in one task 36 s, up on the secondary 23 / 14 s, mkfs + mount 22 / 14 s, the 100 s resync
pause waited for), the peer stopped 38 s, the refused ext4 disk 14 s, teardown + removal 63 s: r3
adds a loop item to the drbd role's tasks and one dd run, no task of its own.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import drbd_lab  # noqa: E402  pylint: disable=wrong-import-position
import guest_image  # noqa: E402  pylint: disable=wrong-import-position
import libvirtd_lab  # noqa: E402  pylint: disable=wrong-import-position
import vmlab  # noqa: E402  pylint: disable=wrong-import-position

REPO = vmlab.REPO
NEEDED = ['libvirtd', 'virsh', 'qemu-system-x86_64', 'qemu-img', 'mmdebstrap', 'mkfs.ext4', 'nsenter', 'unshare']
pytestmark = pytest.mark.skipif(
    subprocess.run(['sh', '-c', 'command -v %s' % ' '.join(NEEDED)], capture_output=True, check=False).returncode != 0
    or os.geteuid() != 0, reason='needs root and: ' + ' '.join(NEEDED))
P1, P2 = sorted(drbd_lab.NODES)
# long enough to outlast bench.yml's planning and its environment of the cells (taken before the
# first run), which then shows r1 still resyncing
RESYNC_PAUSE_S = 100


def _boot_play(image, work, state='present'):
    # both guests are started before either is waited for: the two TCG boots overlap
    tasks = [{'name': 'Guest %s' % n, 'ansible.builtin.include_role': {'name': 'benchlab.bench.kvm_guest'},
              'vars': vmlab.guest_vars(image, work, n, ip, state=state, kvm_guest_data_disk_size=drbd_lab.DISK_SIZE,
                                       kvm_guest_data_disk_count=drbd_lab.DATA_DISKS,
                                       kvm_guest_extra_bridges=[drbd_lab.BRIDGE],
                                       kvm_guest_labels={'platform': 'kvm'}, kvm_guest_wait_ssh=False)}
             for n, ip in sorted(drbd_lab.NODES.items())]
    if state == 'present':
        tasks.append({'name': "Wait for both guests' SSH servers", 'ansible.builtin.wait_for': {
            'host': '{{ item }}', 'port': 22, 'search_regex': 'OpenSSH', 'timeout': 600},
            'loop': sorted(drbd_lab.NODES.values())})
    return {'name': 'The two DRBD guests', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}


def _shell(name, cmd, hosts='drbd_pair', register=None):
    task = {'name': name, 'ansible.builtin.shell': cmd, 'changed_when': True}
    if register:
        task['register'] = register
    return {'name': name, 'hosts': hosts, 'gather_facts': False, 'tasks': [task]}


def _up_book(image, work):
    plain = ('mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 {d} && mkdir -p {m} && mount {d} {m}'
             .format(d=drbd_lab.PLAIN_DISK, m=drbd_lab.PLAIN_MOUNT))
    # the role does not address the further NIC: the playbook does (one task with the plain disk's:
    # every task costs seconds in a TCG guest)
    link = 'ip addr add {{ kvmt_repl_ip }}/24 dev eth1 && ip link set eth1 up'
    resync = {'name': 'Make r1 resync (the next cell must wait)', 'hosts': P2, 'gather_facts': False, 'tasks': [
        # paused for RESYNC_PAUSE_S, then resumed by the guest itself (and the time written down): a
        # cell that starts before must wait; a record started before the resume would have measured
        # the resync
        # paused before the invalidate: 32 MiB at 40M/s resync in under a second, sooner than a
        # `drbdadm pause-sync` issued after the invalidate starts in a TCG guest (CI saw r1 Established)
        {'name': 'Pause r1\'s resync, invalidate r1 on the secondary, resume the resync in %d s' % RESYNC_PAUSE_S,
         'changed_when': True,
         'ansible.builtin.shell': "drbdadm pause-sync r1 && drbdadm invalidate r1 && (setsid sh -c 'sleep %d; "
                                  "drbdadm resume-sync r1; date -u +%%Y-%%m-%%dT%%H:%%M:%%S > /run/kvmt-resumed' "
                                  ">/dev/null 2>&1 < /dev/null &)" % RESYNC_PAUSE_S},
        {'name': 'Its state now', 'benchlab.bench.drbd_status': {'names': ['r1']}, 'register': 'during'},
        {'name': 'Keep it', 'delegate_to': 'localhost', 'ansible.builtin.copy': {
            'content': "{{ during.drbd | to_json }}", 'dest': str(work / 'resync-state.json'), 'mode': '0644'}}]}
    standalone = {'name': 'r2 StandAlone: the no-replication cell', 'hosts': 'drbd_pair', 'gather_facts': False,
                  'tasks': [{'name': 'Disconnect r2',
                             'benchlab.bench.drbd_lifecycle': {'name': 'r2', 'state': 'disconnected'}}]}
    return [_boot_play(image, work),
            _shell('The replication link (eth1 on the bridge) addressed and up; the plain baseline disk: ext4, mounted',
                   link + ' && ' + plain),
            # no facts: each module costs seconds in a TCG guest; the node name is the inventory name
            {'name': 'DRBD up', 'hosts': 'drbd_pair', 'gather_facts': False, 'tasks': [
                {'name': 'The drbd role', 'ansible.builtin.include_role': {'name': 'benchlab.bench.drbd'}}]},
            standalone, resync, {'ansible.builtin.import_playbook': str(REPO / 'playbooks' / 'bench.yml')},
            {'name': 'When the resync was resumed', 'hosts': P2, 'gather_facts': False, 'tasks': [
                {'name': 'Fetch it', 'ansible.builtin.fetch': {
                    'src': '/run/kvmt-resumed', 'flat': True, 'dest': str(work / 'resumed.txt')}}]}]


def _check_matrix_run(work):
    run, records = vmlab.run_records(work / 'runs')
    cells = {}
    for rec in records:
        cells.setdefault(rec['labels']['cell'], []).append(rec)
    assert sorted(cells) == sorted(drbd_lab.ALL_CELLS), sorted(cells)
    for cell, recs in cells.items():
        tools = ['bonnie++', 'dd'] if cell in ('plain', 'drbd-c') else ['dd']
        assert sorted({r['tool'] for r in recs}) == tools, (cell, recs)
        assert all(r['metrics'] for r in recs)
        net = drbd_lab.CELLS[cell][4] if cell in drbd_lab.CELLS else None
        assert all(r['labels'].get('net') == net for r in recs), (cell, [r['labels'] for r in recs])
    assert all(r['labels']['drbd_protocol'] == 'C' for r in cells['drbd-c-bridged']), cells['drbd-c-bridged']
    during = json.loads((work / 'resync-state.json').read_text())
    assert during[0]['replication'] in ('PausedSyncT', 'StartingSyncT', 'WFBitMapT', 'WFSyncUUID'), during
    resumed = (work / 'resumed.txt').read_text().strip()
    assert resumed and all(r['started'][:19] >= resumed for r in records), (resumed, [r['started'] for r in records])
    results = json.loads((run / 'results.json').read_text())
    env = {e.get('host'): e for e in results['environment']} if isinstance(results['environment'], list) else {}
    report = (run / 'report.md').read_text()
    assert '% slower' in report or 'slower' in report
    for cell in drbd_lab.CELLS:
        assert cell in report, cell
    # the cells' environment (taken once, before the first run) saw r1 resyncing; every run waited
    # and recorded the state at its own start: in sync
    env_r1 = [d for e in results['environment'].values() for d in e.get('drbd') or [] if d['name'] == 'r1']
    assert env_r1 and all(d['replication'].startswith(('PausedSync', 'Sync')) for d in env_r1), env_r1
    for rec in records:
        states = {d['name']: d for d in rec['params']['guards']['drbd']}
        assert sorted(states) == ['r0', 'r1', 'r2', 'r3'], rec['params']['guards']
        assert all(d['disk_state'] == 'UpToDate' for d in states.values()), states
        assert states['r1']['replication'] == 'Established' and states['r2']['connection'] == 'StandAlone', states
        # r3 replicates over the bridge (its peer's only address there)
        assert states['r3']['replication'] == 'Established' and states['r3']['connection'] == 'Connected', states
    assert 'drbd_not_uptodate' not in json.dumps(results.get('analysis', {})), 'a cell measured during the resync'
    # The replication link, counted on the primary's own clock (its runs observe their links toward
    # the peer: guards.observe_toward): protocol C's dd (fdatasync) is done only once the peer has
    # every byte, so its link sent about the bytes written; StandAlone sent none. The report's
    # explained line says it per cell.
    (dd_bench,) = [b for b in results['analysis']['benchmarks'] if b['benchmark'] == 'dd-write']
    explained = dict((c['cell'], c.get('explained') or {}) for c in dd_bench['cells'])
    for cell, iface, low, high in (('drbd-c', 'eth0', 0.95, 1.5), ('drbd-c-bridged', 'eth1', 0.95, 1.5),
                                   ('drbd-a', 'eth0', 0.5, 1.5), ('drbd-standalone', None, 0.0, 0.05)):
        (rec,) = [r for r in cells[cell] if r['tool'] == 'dd']
        assert rec['params']['guards']['observe_toward'], rec['params']['guards']
        link = explained[cell].get('link')
        print('%s: %s (%s)' % (cell, link, explained[cell].get('line')))
        assert link and low <= link['ratio'] <= high, (cell, link, rec['observed']['net'])
        assert iface is None or link['interface'] == iface, (cell, link)
        assert 'toward the DRBD peer per byte written' in explained[cell]['line'], explained[cell]
    # The peer observed as well (its observer started before each run, cut to the run's window by
    # the wall clock: the two guests' clocks are set from the RTC at boot, a second apart at most,
    # and a dd of 8 MiB lasts under a second, so what the peer received in that cut is printed only)
    for cell in ('drbd-c', 'drbd-c-bridged', 'drbd-standalone'):
        (rec,) = [r for r in cells[cell] if r['tool'] == 'dd']
        # observed.host: the guests' hypervisor host (this machine), observed.peers: the DRBD peer
        below = [rec['observed']['host']] + rec['observed'].get('peers', [])
        assert [(h['name'], h['role']) for h in below] == [('localhost', 'hypervisor'), (P2, 'drbd_peer')], below
        peer = below[1]
        written = rec['observed']['tool']['write_bytes']
        received = max(n['rx_bytes'] for n in peer['net'])
        print('%s: %d bytes written, the peer received %d (%s)' % (cell, written, received, peer['net']))
        assert written > 0 and peer['net'], (cell, rec['observed'])
    # C routed vs C bridged against the plain disk, for the log (TCG figures: no goal)
    print('report rows of the cells:\n' + '\n'.join(
        line for line in report.splitlines() if line.startswith('|') and any(c in line for c in drbd_lab.ALL_CELLS))[:6000])
    return run, env


def _failure_book():
    # the peer is gone: the DRBD cell must fail with the reason, the host cell is measured
    return [{'ansible.builtin.import_playbook': str(REPO / 'playbooks' / 'bench.yml')}]


def _r9():
    res = dict(drbd_lab.resources()[0], name='r9', device='/dev/drbd9', disk=drbd_lab.PLAIN_DISK, mount='',
               nodes=[{'name': n, 'address': '%s:7799' % ip} for n, ip in sorted(drbd_lab.NODES.items())])
    res.pop('mount')
    return res


def _refuse_book():
    res = _r9()
    return [_shell('Unmount the plain disk (it keeps its ext4)', 'umount %s' % drbd_lab.PLAIN_MOUNT, hosts=P1),
            {'name': 'A backing disk with a filesystem', 'hosts': P1, 'gather_facts': False, 'tasks': [
                {'name': 'The drbd role', 'ansible.builtin.include_role': {'name': 'benchlab.bench.drbd'},
                 'vars': {'drbd_resources': [res]}}]}]


def _down_book(image, work):
    return [{'name': 'DRBD down on the survivor', 'hosts': P1, 'gather_facts': False, 'tasks': [
        {'name': 'Teardown', 'ansible.builtin.include_role': {'name': 'benchlab.bench.drbd', 'tasks_from': 'teardown'},
         'vars': {'drbd_teardown_wipe_md': True, 'drbd_teardown_remove_config': True}},
        {'name': 'Remove the resource file of the refused r9 (the role installed it before create-md refused)',
         'benchlab.bench.drbd_resource': {'resources': [_r9()], 'state': 'absent', 'lab': 'kvmt'}},
        {'name': 'What is left', 'ansible.builtin.shell': 'cat /proc/drbd; ls /etc/drbd.d; grep -c " /srv/" /proc/mounts || true',
         'register': 'left', 'changed_when': False},
        {'name': 'Keep it', 'delegate_to': 'localhost', 'ansible.builtin.copy': {
            'content': '{{ left.stdout }}', 'dest': str(work / 'left.txt'), 'mode': '0644'}}]},
        _boot_play(image, work, state='absent')]


def test_drbd_pair_replicates_is_measured_and_fails_for_the_right_reasons(tmp_path):
    if not (REPO / '.collections/ansible_collections/community/libvirt').is_dir():
        pytest.skip('community.libvirt is not in the collections path (make setup)')
    pytest.importorskip('libvirt')
    timings, t0 = {}, time.monotonic()
    image = guest_image.ensure_image()
    timings['image'] = time.monotonic() - t0
    work = tmp_path
    inv = vmlab.write_json(work / 'inv' / 'hosts.json', vmlab.static_inventory(
        image, work, drbd_lab.NODES, groups=('kvm_guests', 'drbd_pair'),
        extra_vars={n: {'kvmt_repl_ip': ip} for n, ip in drbd_lab.BRIDGED_NODES.items()}))
    # DRBD only on the pair: a host cell on localhost has no resource to wait for
    vmlab.write_json(work / 'inv' / 'group_vars' / 'drbd_pair.json', drbd_lab.drbd_vars())
    vmlab.write_json(work / 'inv' / 'group_vars' / 'all.json',
                     {'bench_matrix': drbd_lab.matrix(), 'bench_install_tools': False})
    control = vmlab.control_dir('kvmt')
    env = vmlab.ansible_env(work, control)
    lab = libvirtd_lab.Libvirtd(work / 'libvirtd')

    def play(name, book, *extra, timeout=1800):
        # where each playbook's time goes (perf/callback_plugins/task_timer.py), printed at the end
        return vmlab.timed_playbook(lab, env, inv, work, name, book, timings, *extra, timeout=timeout)

    try:
        lab.start()
        # the replication link: no address of the lab's on it (the guests reach each other over it only)
        vmlab.make_bridge(lab, drbd_lab.BRIDGE)
        up = play('up', _up_book(image, work), timeout=3000)
        assert up.returncode == 0, up.stdout[-8000:] + up.stderr[-2000:] + lab.log_tail()
        _check_matrix_run(work)
        # both guests' eth1 (tap devices) are ports of the replication bridge
        ports = vmlab.in_lab(lab, 'ip', '-o', 'link', 'show', 'master', drbd_lab.BRIDGE).stdout.strip().splitlines()
        assert len(ports) == 2, ports

        # the peer stopped during the run: its DRBD cell fails with the reason, the host cell is measured
        lab.virsh('destroy', P2)
        host_cell = {'name': 'host', 'host': 'localhost', 'path': '/var/tmp', 'labels': {'platform': 'host'}}
        matrix = drbd_lab.matrix('drbd-peer-gone', cells=('drbd-c',), extra_cells=(host_cell,))
        matrix['benchmarks'] = matrix['benchmarks'][:1]
        gone = play('gone', _failure_book(), '-e', json.dumps({'bench_matrix': matrix, 'drbd_wait_timeout': 30}))
        assert gone.returncode != 0, gone.stdout[-4000:]
        run, records = vmlab.run_records(work / 'runs', 2)
        assert [r['labels']['cell'] for r in records] == ['host'], records
        results = json.loads((run / 'results.json').read_text())
        failed = json.dumps(results['failed'])
        assert 'drbd-c' in failed and 'peer connection is' in failed, failed
        assert 'drbd-c' in (run / 'report.md').read_text()

        # a backing disk that carries a filesystem is refused
        refused = play('refuse', _refuse_book(), timeout=1200)
        assert refused.returncode != 0
        assert 'ext4' in refused.stdout and 'r9' in refused.stdout, refused.stdout[-4000:]

        down = play('down', _down_book(image, work), timeout=1200)
        assert down.returncode == 0, down.stdout[-6000:]
        left = (work / 'left.txt').read_text()
        assert ' cs:' not in left and '.res' not in left and left.rstrip().endswith('0'), left
        assert lab.virsh('list', '--all', '--name').stdout.split() == []
        assert lab.virsh('net-list', '--all', '--name').stdout.split() == []
        assert list((work / 'images').iterdir()) == []
        # the role left the bridge it did not make, without the guests' ports; the test removes it
        vmlab.remove_bridge(lab, drbd_lab.BRIDGE)
    finally:
        # the guests' disks (this test's own directory) too, also after a failure: ~300 MB per run
        vmlab.teardown(lab, control, work / 'images')
        print('timings (s): %s' % {k: round(v, 1) for k, v in timings.items()})
        vmlab.print_task_times(work)
    assert lab.ns_pids() == [] if lab.pid else True
