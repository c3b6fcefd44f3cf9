"""The DRBD pair of the qemu DRBD test: two guests, four resources (protocol C, protocol A, one
taken StandAlone over the routed lab network, and protocol C over a bridged replication link), a
plain disk for the baseline, and the matrix of references 000 and 003 in small.

Disks of each guest (kvm_guest_data_disk_count 5, all the same size): vdb -> r0 (protocol C),
vdc -> r1 (protocol A), vdd -> r2 (disconnected: StandAlone), vde -> plain ext4 (the baseline),
vdf -> r3 (protocol C over the bridge).

NICs of each guest: eth0 on the lab's routed network (NODES: SSH, and r0-r2), eth1 on the test's
bridge BRIDGE (kvm_guest_extra_bridges; the test addresses it: BRIDGED_NODES, r3 only). The lab's
host side of BRIDGE has no address, so r3 has no other way than the bridge.
"""

NODES = {'kvmt-drbd1': '198.19.77.11', 'kvmt-drbd2': '198.19.77.12'}
# the dedicated replication link: a Linux bridge the test makes in the lab's network namespace (not
# kvmtbr0 of the routed network nor kvmtbr2 of test_kvm_multi.py)
BRIDGE = 'kvmtbr3'
BRIDGED_NODES = {'kvmt-drbd1': '198.19.79.11', 'kvmt-drbd2': '198.19.79.12'}
PRIMARY = 'kvmt-drbd1'
DISK_SIZE = '32M'
PLAIN_DISK = '/dev/vde'
PLAIN_MOUNT = '/srv/bench-plain'
DATA_DISKS = 5
# cell: (resource, protocol, backing disk, mount point, network of the replication)
CELLS = {'drbd-c': ('r0', 'C', '/dev/vdb', '/srv/drbd-c', 'routed'),
         'drbd-a': ('r1', 'A', '/dev/vdc', '/srv/drbd-a', 'routed'),
         'drbd-standalone': ('r2', 'C', '/dev/vdd', '/srv/drbd-standalone', 'routed'),
         'drbd-c-bridged': ('r3', 'C', '/dev/vdf', '/srv/drbd-c-bridged', 'bridged')}
ALL_CELLS = ('plain', 'drbd-c', 'drbd-a', 'drbd-standalone', 'drbd-c-bridged')


def resources():
    out = []
    for minor, (name, proto, disk, mount, net) in enumerate(sorted(CELLS.values())):
        nodes = BRIDGED_NODES if net == 'bridged' else NODES
        out.append({
            'name': name, 'protocol': proto, 'device': '/dev/drbd%d' % minor, 'disk': disk,
            'meta_disk': 'internal', 'primary': PRIMARY, 'mount': mount,
            # a fixed resync rate: the 8.4 dynamic controller starts at 250K/s
            'disk_options': {'resync_rate': '40M', 'c_plan_ahead': 0},
            'nodes': [{'name': n, 'address': '%s:%d' % (ip, 7788 + minor)} for n, ip in nodes.items()],
        })
    return out


def drbd_vars(**extra):
    out = {'drbd_resources': resources(), 'drbd_install': False, 'drbd_manage_lifecycle': True,
           'drbd_lab': 'kvmt', 'drbd_wait_interval': 1, 'drbd_wait_timeout': 300}
    out.update(extra)
    return out


def matrix(name='drbd-tcg', cells=ALL_CELLS, extra_cells=()):
    all_cells = {'plain': {'name': 'plain', 'host': PRIMARY, 'path': PLAIN_MOUNT,
                           'labels': {'storage': 'plain', 'node': PRIMARY}}}
    for cell, (res, proto, _disk, mount, net) in CELLS.items():
        all_cells[cell] = {'name': cell, 'host': PRIMARY, 'path': mount,
                           'labels': {'storage': cell, 'node': PRIMARY, 'drbd_resource': res,
                                      'drbd_protocol': proto, 'net': net}}
    return {
        'name': name,
        'description': ('dd and bonnie++ on a plain disk vs DRBD (protocol C, A, StandAlone over the routed network, '
                        'C over a bridged link) between two TCG guests'),
        'repetitions': 1,
        # the host's caches stay: dropping them syncs the whole machine, and test_kvm_multi.py beside
        # this test checks that a cache=unsafe guest's synced write is still in the host's page cache
        # when its sync returns (its check_durability); the pair's writes are synced in the guests
        'methodology': {'drop_hypervisor_caches': False},
        'baseline': 'plain' if 'plain' in cells else cells[0],
        'cells': [all_cells[c] for c in cells] + list(extra_cells),
        'benchmarks': [
            {'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M', 'bs': '1M'}},
            # bonnie++ on the baseline and protocol C only: every run costs minutes of TCG
            {'name': 'bonnie', 'tool': 'bonnie', 'cells': [c for c in ('plain', 'drbd-c') if c in cells],
             'params': {'size': '16M', 'ram': '8', 'files': '0', 'fast': True}},
        ],
    }
