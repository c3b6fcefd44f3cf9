# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/observe/layers.py (the layer resolver) and the device guard's walk through the
stack (devguard.stack_usage) over sysfs/proc trees built in tmp_path.

Built, and why: device-mapper (LVM, dm-crypt, thin), md RAID, DRBD and btrfs over several devices
cannot be made on this machine's kernel (no dm, md or drbd module), and partitions that overlap
cannot be made at all here (partx's BLKPG_ADD_PARTITION refuses an overlap, partition scanning
makes no nodes). The tree has the kernel's shape: /sys/devices/.../block/<disk>[/<partition>] with
`dev`, `size`, `partition`, `start`, `holders/`, `slaves/`, `dm/name`, `dm/uuid`, `md/level`,
`loop/backing_file`, `loop/offset`, `loop/sizelimit`, and the links /sys/block/<disk>,
/sys/class/block/<name>, /sys/dev/block/<maj:min>; /proc/self/mountinfo and /proc/swaps. The same
resolver on real loop devices, a partition and ext4 is tested in
tests/integration/test_layers_live.py, and the guard in tests/integration/test_hostile_device_stack.py.
"""

import os

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import stack_usage
from ansible_collections.benchlab.bench.plugins.module_utils.observe.layers import (
    Sys, block_layers, device_stack, layer_stack)


class Tree:
    """A sysfs + proc tree shaped like the kernel's."""

    def __init__(self, root):
        self.root = root
        self.sys = root / 'sys'
        for d in ('dev/block', 'block', 'class/block', 'devices/virtual/block', 'devices/pci0000:00'):
            (self.sys / d).mkdir(parents=True)
        (root / 'proc' / 'self').mkdir(parents=True)
        self.mountinfo = ['22 1 0:21 / /proc rw - proc proc rw']
        self.swaps = []
        self.nodes = {}

    def _link(self, node, name, majmin, whole=True):
        rel = os.path.relpath(str(node), str(self.sys / 'block'))
        if whole:
            os.symlink(rel, str(self.sys / 'block' / name))
        os.symlink(os.path.relpath(str(node), str(self.sys / 'class' / 'block')), str(self.sys / 'class' / 'block' / name))
        os.symlink(os.path.relpath(str(node), str(self.sys / 'dev' / 'block')), str(self.sys / 'dev' / 'block' / majmin))

    def _node(self, node, majmin, sectors):
        for d in ('holders', 'slaves'):
            (node / d).mkdir(parents=True)
        (node / 'dev').write_text(majmin + '\n')
        (node / 'size').write_text('%d\n' % sectors)

    def disk(self, name, majmin, sectors=1 << 21, physical=True):
        base = self.sys / 'devices' / ('pci0000:00' if physical else 'virtual') / 'block' if physical else \
            self.sys / 'devices' / 'virtual' / 'block'
        node = base / name
        self._node(node, majmin, sectors)
        if physical:
            (node / 'device').mkdir()
        self._link(node, name, majmin)
        self.nodes[name] = node
        return node

    def partition(self, disk, name, majmin, start, sectors, number=1):
        node = self.nodes[disk] / name
        self._node(node, majmin, sectors)
        (node / 'partition').write_text('%d\n' % number)
        (node / 'start').write_text('%d\n' % start)
        self._link(node, name, majmin, whole=False)
        self.nodes[name] = node
        return node

    def loop(self, name, majmin, backing, offset=0, sizelimit=0, sectors=1 << 16, deleted=False):
        node = self.disk(name, majmin, sectors, physical=False)
        (node / 'loop').mkdir()
        (node / 'loop' / 'backing_file').write_text(backing + (' (deleted)' if deleted else '') + '\n')
        (node / 'loop' / 'offset').write_text('%d\n' % offset)
        (node / 'loop' / 'sizelimit').write_text('%d\n' % sizelimit)
        return node

    def stacked(self, name, majmin, slaves, sectors=1 << 20, dm_name=None, dm_uuid=None, md_level=None):
        node = self.disk(name, majmin, sectors, physical=False)
        if dm_name:
            (node / 'dm').mkdir()
            (node / 'dm' / 'name').write_text(dm_name + '\n')
            (node / 'dm' / 'uuid').write_text((dm_uuid or '') + '\n')
        if md_level:
            (node / 'md').mkdir()
            (node / 'md' / 'level').write_text(md_level + '\n')
        for s in slaves:
            os.symlink(os.path.relpath(str(self.nodes[s]), str(node / 'slaves')), str(node / 'slaves' / s))
            os.symlink(os.path.relpath(str(node), str(self.nodes[s] / 'holders')), str(self.nodes[s] / 'holders' / name))
        return node

    def btrfs(self, fsid, members):
        d = self.sys / 'fs' / 'btrfs' / fsid / 'devices'
        d.mkdir(parents=True)
        for m in members:
            os.symlink(os.path.relpath(str(self.nodes[m]), str(d)), str(d / m))

    def mount(self, majmin, source, mountpoint, fstype='ext4', super_opts='rw'):
        n = len(self.mountinfo) + 30
        self.mountinfo.append('%d 1 %s / %s rw,relatime shared:%d - %s %s %s' % (
            n, majmin, mountpoint, n, fstype, source, super_opts))

    def swap(self, filename, kind='partition'):
        self.swaps.append('%s\t%s\t\t1048572\t\t0\t\t-2' % (filename, kind))

    def write(self):
        (self.root / 'proc' / 'self' / 'mountinfo').write_text(''.join(line + '\n' for line in self.mountinfo))
        (self.root / 'proc' / 'swaps').write_text('Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n'
                                                  + ''.join(line + '\n' for line in self.swaps))
        return str(self.root)

    def stack(self, target):
        return layer_stack(target, root=self.write())

    def problems(self, majmin):
        self.write()
        return stack_usage(majmin, str(self.sys), str(self.root / 'proc'), resolve=lambda p: None)


@pytest.fixture
def tree(tmp_path):
    return Tree(tmp_path / 'host')


def brief(layers):
    return [(l['layer'], l['kind'], l['name'], l['above']) for l in layers]


# ---- the resolver ---------------------------------------------------------------------------------

def test_path_on_ext4_on_a_loop_over_a_file_on_a_partition(tree):
    tree.disk('vda', '254:0')
    tree.partition('vda', 'vda1', '254:1', start=2048, sectors=1 << 20)
    tree.mount('254:1', '/dev/vda1', '/')
    tree.loop('loop0', '7:0', '/var/lib/images/lab.img', offset=1048576, sizelimit=33554432, sectors=65536)
    tree.mount('7:0', '/dev/loop0', '/srv/bench')
    layers = tree.stack('/srv/bench/work')
    assert brief(layers) == [
        (0, 'path', '/srv/bench/work', None),
        (1, 'filesystem', '/srv/bench', '/srv/bench/work'),
        (2, 'loop', 'loop0', '/srv/bench'),
        (3, 'file', '/var/lib/images/lab.img', 'loop0'),
        (4, 'filesystem', '/', '/var/lib/images/lab.img'),
        (5, 'partition', 'vda1', '/'),
        (6, 'disk', 'vda', 'vda1'),
    ]
    loop = layers[2]
    assert loop['major_minor'] == '7:0' and loop['backing_file'] == '/var/lib/images/lab.img'
    assert loop['offset'] == 1048576 and loop['sizelimit'] == 33554432 and loop['size_bytes'] == 65536 * 512
    assert layers[1]['fstype'] == 'ext4' and layers[5]['start_bytes'] == 2048 * 512
    assert [l['name'] for l in block_layers(layers)] == ['loop0', 'vda1', 'vda']


def test_a_block_device_is_layer_0(tree):
    tree.disk('vda', '254:0')
    tree.loop('loop1', '7:1', '/dev/loop0', offset=8388608)
    tree.loop('loop0', '7:0', '/var/img')
    tree.mount('254:0', '/dev/vda', '/')
    layers = tree.stack('/dev/loop1')
    assert brief(layers) == [(0, 'loop', 'loop1', None), (1, 'loop', 'loop0', 'loop1'), (2, 'file', '/var/img', 'loop0'),
                             (3, 'filesystem', '/', '/var/img'), (4, 'disk', 'vda', '/')]
    assert layers[0]['offset'] == 8388608 and layers[0]['backing_file'] == '/dev/loop0'


def test_dm_crypt_on_lvm_on_md_raid1_branches_to_both_disks(tree):
    tree.disk('sda', '8:0')
    tree.disk('sdb', '8:16')
    tree.partition('sda', 'sda1', '8:1', 2048, 1 << 20)
    tree.partition('sdb', 'sdb1', '8:17', 2048, 1 << 20)
    tree.stacked('md0', '9:0', ['sda1', 'sdb1'], md_level='raid1')
    tree.stacked('dm-0', '253:0', ['md0'], dm_name='vg0-data', dm_uuid='LVM-abcdef')
    tree.stacked('dm-1', '253:1', ['dm-0'], dm_name='data_crypt', dm_uuid='CRYPT-LUKS2-1234-data_crypt')
    tree.mount('253:1', '/dev/mapper/data_crypt', '/data', fstype='xfs')
    layers = tree.stack('/data/bench')
    assert brief(layers) == [
        (0, 'path', '/data/bench', None), (1, 'filesystem', '/data', '/data/bench'),
        (2, 'dm', 'dm-1', '/data'), (3, 'dm', 'dm-0', 'dm-1'), (4, 'md', 'md0', 'dm-0'),
        (5, 'partition', 'sda1', 'md0'), (6, 'disk', 'sda', 'sda1'),
        (5, 'partition', 'sdb1', 'md0'), (6, 'disk', 'sdb', 'sdb1')]
    assert layers[2]['dm_name'] == 'data_crypt' and layers[2]['dm_uuid'].startswith('CRYPT-')
    assert layers[4]['md_level'] == 'raid1'


def test_drbd_on_an_lvm_volume(tree):
    tree.disk('vdb', '252:16')
    tree.stacked('dm-0', '253:0', ['vdb'], dm_name='vg-drbd0', dm_uuid='LVM-x')
    tree.stacked('drbd0', '147:0', ['dm-0'])
    tree.mount('147:0', '/dev/drbd0', '/mnt/drbd')
    assert [(l['kind'], l['name']) for l in block_layers(tree.stack('/mnt/drbd'))] == [
        ('drbd', 'drbd0'), ('dm', 'dm-0'), ('disk', 'vdb')]


def test_btrfs_over_two_devices_shows_an_anonymous_device(tree):
    tree.disk('vdb', '252:16')
    tree.disk('vdc', '252:32')
    tree.btrfs('1234-abcd', ['vdb', 'vdc'])
    tree.mount('0:45', '/dev/vdb', '/pool', fstype='btrfs', super_opts='rw,compress-force=zstd:15')
    layers = tree.stack('/pool/x')
    assert brief(layers)[2:] == [(2, 'disk', 'vdb', '/pool'), (2, 'disk', 'vdc', '/pool')]


def test_overlay_goes_to_its_upper_directory(tree):
    tree.disk('vda', '254:0')
    tree.mount('254:0', '/dev/vda', '/')
    tree.mount('0:50', 'overlay', '/var/lib/lxc/ct/rootfs', fstype='overlay',
               super_opts='rw,lowerdir=/var/lib/lxc/base,upperdir=/var/lib/lxc/ct/delta,workdir=/var/lib/lxc/ct/work')
    assert brief(tree.stack('/var/lib/lxc/ct/rootfs/tmp')) == [
        (0, 'path', '/var/lib/lxc/ct/rootfs/tmp', None), (1, 'filesystem', '/var/lib/lxc/ct/rootfs', '/var/lib/lxc/ct/rootfs/tmp'),
        (2, 'directory', '/var/lib/lxc/ct/delta', '/var/lib/lxc/ct/rootfs'), (3, 'filesystem', '/', '/var/lib/lxc/ct/delta'),
        (4, 'disk', 'vda', '/')]


def test_tmpfs_and_nfs_end_at_their_file_system(tree):
    tree.mount('0:27', 'tmpfs', '/dev/shm', fstype='tmpfs')
    tree.mount('0:60', 'nas:/export', '/mnt/nas', fstype='nfs4')
    assert brief(tree.stack('/dev/shm/x')) == [(0, 'path', '/dev/shm/x', None), (1, 'filesystem', '/dev/shm', '/dev/shm/x')]
    assert tree.stack('/mnt/nas/y')[1]['source'] == 'nas:/export' and block_layers(tree.stack('/mnt/nas/y')) == []


def test_a_loop_over_a_deleted_file_stops_there(tree):
    tree.loop('loop3', '7:3', '/var/tmp/gone.img', deleted=True)
    layers = device_stack('7:3', root=tree.write())
    assert brief(layers) == [(0, 'loop', 'loop3', None)] and layers[0]['backing_file'] == '/var/tmp/gone.img'


def test_a_containers_root_on_a_loop_device_whose_image_it_cannot_see(tree):
    """An LXC guest on loop storage (roles/local_lab): its root is ext4 on loop0 over an image on the
    host; the container sees the host's sysfs but only its own mounts. The image's path, looked up in
    them, would land on the container's root, which is loop0 itself: the walk says it cannot see the
    file's file system instead of naming a wrong one."""
    tree.loop('loop0', '7:0', '/var/lib/benchlab/lab/bl-g1.img', sectors=1 << 21)
    tree.disk('vda', '254:0')
    tree.mount('7:0', '/dev/loop0', '/')
    layers = tree.stack('/var/tmp')
    assert brief(layers) == [(0, 'path', '/var/tmp', None), (1, 'filesystem', '/', '/var/tmp'),
                             (2, 'loop', 'loop0', '/'), (3, 'file', '/var/lib/benchlab/lab/bl-g1.img', 'loop0')]
    assert 'not visible here' in layers[3]['unresolved']
    assert [l['name'] for l in block_layers(layers)] == ['loop0']


def test_a_cycle_or_an_unknown_device_ends_the_walk(tree):
    tree.loop('loop0', '7:0', '/dev/loop1')
    tree.loop('loop1', '7:1', '/dev/loop0')
    layers = device_stack('7:0', root=tree.write())
    assert [l['name'] for l in layers] == ['loop0', 'loop1', 'loop0'] and len(layers) == 3
    assert device_stack('7:99', root=tree.write()) == []


def test_device_majmin_of_mapper_names_and_missing_nodes(tree):
    tree.disk('vdb', '252:16')
    tree.stacked('dm-3', '253:3', ['vdb'], dm_name='vg-lv', dm_uuid='LVM-y')
    s = Sys(root=tree.write())
    assert not s.live
    assert s.device_majmin('/dev/mapper/vg-lv') == '253:3' and s.device_majmin('/dev/vdb') == '252:16'
    assert s.device_majmin('/dev/nothing') is None


# ---- the guard's walk through the stack -----------------------------------------------------------

def texts(problems):
    return '\n'.join('%s: %s' % p for p in problems)


def test_a_loop_at_an_offset_into_a_mounted_loop(tree):
    tree.disk('vda', '254:0')
    tree.loop('loop0', '7:0', '/var/img', sectors=65536)
    tree.loop('loop1', '7:1', '/dev/loop0', offset=8388608, sizelimit=1048576, sectors=2048)
    tree.mount('7:0', '/dev/loop0', '/mnt/user')
    assert texts(tree.problems('7:1')) == (
        '/dev/loop1, a loop device over /dev/loop0 (bytes 8388608-9437183 of it): /dev/loop0 is mounted on '
        '/mnt/user (ext4): umount /mnt/user')
    # the mounted loop device itself: device_usage's business, nothing below or beside it
    assert tree.problems('7:0') == []


def test_loops_over_the_same_file_overlap_or_not(tree):
    tree.loop('loop0', '7:0', '/var/img', offset=0, sectors=65536)            # bytes 0 .. 32 MiB
    tree.loop('loop1', '7:1', '/var/img', offset=16 << 20, sectors=2048)      # inside loop0's bytes
    tree.loop('loop2', '7:2', '/var/img', offset=32 << 20, sectors=2048)      # right after them
    tree.mount('7:0', '/dev/loop0', '/mnt/user')
    assert 'loop0 reaches the same bytes (a loop device over /var/img, bytes 0-33554431) and is in use: ' \
           '/dev/loop0 is mounted on /mnt/user' in texts(tree.problems('7:1'))
    assert tree.problems('7:2') == []


def test_overlapping_partitions(tree):
    tree.disk('sdb', '8:16')
    tree.partition('sdb', 'sdb1', '8:17', start=2048, sectors=40960, number=1)
    tree.partition('sdb', 'sdb2', '8:18', start=20480, sectors=40960, number=2)      # overlaps sdb1
    tree.partition('sdb', 'sdb3', '8:19', start=61440, sectors=40960, number=3)      # after both
    tree.mount('8:17', '/dev/sdb1', '/srv')
    assert texts(tree.problems('8:18')) == (
        '/dev/sdb2, a partition of /dev/sdb: the partition /dev/sdb1 (bytes 1048576-22020095 of /dev/sdb) overlaps '
        'it and is in use: /dev/sdb1 is mounted on /srv (ext4): umount /srv')
    assert tree.problems('8:19') == []


def test_lvm_siblings_are_lvm_business_but_a_loop_over_the_pv_is_not(tree):
    tree.disk('vdb', '252:16')
    tree.stacked('dm-0', '253:0', ['vdb'], dm_name='vg-free', dm_uuid='LVM-a')
    tree.stacked('dm-1', '253:1', ['vdb'], dm_name='vg-root', dm_uuid='LVM-b')
    tree.mount('253:1', '/dev/mapper/vg-root', '/')
    # LVM gives each volume its own extents: the free volume may be written
    assert tree.problems('253:0') == []
    # a loop device over the physical volume reaches every volume's bytes
    tree.loop('loop4', '7:4', '/dev/vdb', offset=0)
    assert 'device-mapper dm-0 (vg-free)' in texts(tree.problems('7:4'))
    assert 'device-mapper dm-1 (vg-root)' in texts(tree.problems('7:4'))


def test_a_loop_over_a_partition_of_a_disk_in_use_below(tree):
    tree.disk('sdc', '8:32')
    tree.partition('sdc', 'sdc1', '8:33', start=2048, sectors=40960)
    tree.loop('loop5', '7:5', '/dev/sdc1', offset=1 << 20, sectors=2048)
    tree.swap('/dev/sdc1')
    problems = stack_usage('7:5', str(tree.sys), tree.write() + '/proc',
                           resolve={'/dev/sdc1': '8:33'}.get)
    assert texts(problems) == ('/dev/loop5, a loop device over /dev/sdc1 (bytes 1048576-2097151 of it): /dev/sdc1 is '
                               'active swap: swapoff /dev/sdc1')


def test_a_loop_over_a_loop_device_that_another_loop_reaches_mounted(tree):
    tree.loop('loop0', '7:0', '/var/img', sectors=65536)
    tree.loop('loop1', '7:1', '/dev/loop0', offset=0, sectors=65536)          # mounted, over all of loop0
    tree.loop('loop2', '7:2', '/dev/loop0', offset=4 << 20, sectors=2048)     # what is written
    tree.mount('7:1', '/dev/loop1', '/mnt/other')
    assert '/dev/loop1 reaches the same bytes (a loop device over /dev/loop0, bytes 0-33554431) and is in use: ' \
           '/dev/loop1 is mounted on /mnt/other' in texts(tree.problems('7:2'))


def test_the_written_stack_itself_is_no_holder_of_concern(tree):
    tree.disk('vdd', '252:48')
    tree.stacked('md1', '9:1', ['vdd'], md_level='raid1')
    # vdd's only holder is md1, the device being written
    assert tree.problems('9:1') == []
