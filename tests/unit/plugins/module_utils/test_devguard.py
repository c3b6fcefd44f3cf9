# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/run/devguard.py: the "in use" logic over sysfs/proc trees built in tmp_path,
and the signature table over image files made by the real tools.

Mocked, and why: device-mapper (LVM, dm-crypt), md RAID and DRBD holders cannot exist on this
machine's kernel (no dm, md or drbd module), so their holders/ entries and /sys/block/dm-N/dm/name
files are written by the test in a sysfs tree shaped like the kernel's (symlinks
/sys/dev/block/<maj:min> -> ../../block/<disk>[/<part>], `dev`, `size`, `partition`, `holders/`).
The same checks on real loop devices (mounted partition, swap, O_EXCL, signatures) are in
tests/integration/test_devguard_live.py.
"""

import os
import shutil
import struct
import subprocess

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run import devguard
from ansible_collections.benchlab.bench.plugins.module_utils.observe.sysinfo import parse_mountinfo
from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import (
    DeviceGuardError, check_device_writable, device_usage, magic_signature, parse_swaps)


class Tree:
    """A sysfs + proc tree: disks with partitions, holders, mounts and swaps."""

    def __init__(self, root):
        self.sysfs = root / 'sys'
        self.proc = root / 'proc'
        (self.sysfs / 'dev' / 'block').mkdir(parents=True)
        (self.sysfs / 'block').mkdir()
        (self.proc / 'self').mkdir(parents=True)
        self.mountinfo = []
        self.swaps = []

    def disk(self, name, majmin, sectors=2048, parts=()):
        node = self.sysfs / 'block' / name
        self._node(node, majmin, sectors)
        os.symlink('../../block/%s' % name, str(self.sysfs / 'dev' / 'block' / majmin))
        for i, (pname, pmm) in enumerate(parts, 1):
            pnode = node / pname
            self._node(pnode, pmm, sectors // 4)
            (pnode / 'partition').write_text('%d\n' % i)
            os.symlink('../../block/%s/%s' % (name, pname), str(self.sysfs / 'dev' / 'block' / pmm))
        return node

    def _node(self, node, majmin, sectors):
        (node / 'holders').mkdir(parents=True)
        (node / 'dev').write_text(majmin + '\n')
        (node / 'size').write_text('%d\n' % sectors)

    def hold(self, node, holder, dm_name=None, dm_uuid=None):
        hnode = self.sysfs / 'block' / holder
        if not hnode.exists():
            hnode.mkdir()
        if dm_name:
            (hnode / 'dm').mkdir(exist_ok=True)
            (hnode / 'dm' / 'name').write_text(dm_name + '\n')
            (hnode / 'dm' / 'uuid').write_text((dm_uuid or '') + '\n')
        os.symlink('../../%s' % holder, str(node / 'holders' / holder))

    def mount(self, majmin, source, mountpoint, fstype='ext4'):
        n = len(self.mountinfo) + 30
        self.mountinfo.append('%d 1 %s / %s rw,relatime shared:%d - %s %s rw' % (n, majmin, mountpoint, n, fstype, source))

    def swap(self, filename, kind='partition'):
        self.swaps.append('%s\t%s\t\t1048572\t\t0\t\t-2' % (filename, kind))

    def usage(self, majmin, resolve=None):
        (self.proc / 'self' / 'mountinfo').write_text(
            '22 1 0:21 / / rw - tmpfs tmpfs rw\n' + ''.join(line + '\n' for line in self.mountinfo))
        (self.proc / 'swaps').write_text('Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n'
                                         + ''.join(line + '\n' for line in self.swaps))
        return device_usage(majmin, str(self.sysfs), str(self.proc), resolve=resolve or (lambda p: None))


@pytest.fixture
def tree(tmp_path):
    return Tree(tmp_path)


def texts(usage):
    return '\n'.join('%s: %s' % p for p in usage['problems'])


def test_clean_disk_and_partitions(tree):
    tree.disk('sdb', '8:16', parts=[('sdb1', '8:17'), ('sdb2', '8:18')])
    u = tree.usage('8:16')
    assert u['problems'] == [] and u['partitions'] == ['sdb1', 'sdb2'] and u['parent'] is None
    assert tree.usage('8:17')['parent'] == 'sdb'


def test_whole_disk_with_a_mounted_partition_is_in_use(tree):
    tree.disk('sdb', '8:16', parts=[('sdb1', '8:17'), ('sdb2', '8:18')])
    tree.mount('8:18', '/dev/sdb2', '/srv/data')
    u = tree.usage('8:16')
    assert texts(u) == '/dev/sdb2 (its partition) is mounted on /srv/data (ext4): umount /srv/data'
    # the other partition is free: writing it is this disk's business only through sdb2
    assert tree.usage('8:17')['problems'] == []
    assert 'umount /srv/data' in texts(tree.usage('8:18'))


def test_mountinfo_octal_escapes_in_the_mount_point(tree):
    tree.disk('sdc', '8:32')
    tree.mount('8:32', '/dev/sdc', '/mnt/my\\040disk')
    assert 'umount /mnt/my disk' in texts(tree.usage('8:32'))


def test_lvm_holder_of_a_partition(tree):
    disk = tree.disk('sdb', '8:16', parts=[('sdb1', '8:17')])
    tree.hold(disk / 'sdb1', 'dm-0', dm_name='vg0-data', dm_uuid='LVM-abc')
    u = tree.usage('8:16')
    assert 'device-mapper dm-0 (vg0-data)' in texts(u) and 'vgchange -an' in texts(u)
    assert 'vgchange -an' in texts(tree.usage('8:17'))


def test_dm_crypt_and_plain_dm_holders(tree):
    a = tree.disk('sdb', '8:16')
    tree.hold(a, 'dm-1', dm_name='secret', dm_uuid='CRYPT-LUKS2-xyz-secret')
    b = tree.disk('sdc', '8:32')
    tree.hold(b, 'dm-2', dm_name='mpatha', dm_uuid='mpath-3600')
    assert 'cryptsetup close secret' in texts(tree.usage('8:16'))
    assert 'dmsetup remove mpatha' in texts(tree.usage('8:32'))


def test_md_member_and_drbd_backing_disk(tree):
    a = tree.disk('sdd', '8:48')
    tree.hold(a, 'md0')
    b = tree.disk('vdb', '254:16')
    tree.hold(b, 'drbd0')
    assert texts(tree.usage('8:48')) == '/dev/sdd is held by md RAID /dev/md0: stop it (mdadm --stop /dev/md0)'
    assert 'drbdadm down' in texts(tree.usage('254:16')) and 'DRBD /dev/drbd0' in texts(tree.usage('254:16'))


def test_partition_whose_whole_disk_is_held_directly(tree):
    """A partition on a disk that multipath (or md on the whole disk) holds: writing it bypasses the holder."""
    disk = tree.disk('sde', '8:64', parts=[('sde1', '8:65')])
    tree.hold(disk, 'dm-3', dm_name='mpathb', dm_uuid='mpath-1')
    assert '/dev/sde (its whole disk) is held by device-mapper dm-3 (mpathb)' in texts(tree.usage('8:65'))


def test_swap_on_a_partition(tree):
    tree.disk('sdb', '8:16', parts=[('sdb1', '8:17')])
    tree.swap('/dev/sdb1')
    tree.swap('/swapfile', kind='file')
    table = {'/dev/sdb1': '8:17', '/swapfile': None}
    u = tree.usage('8:16', resolve=table.get)
    assert texts(u) == '/dev/sdb1 (its partition) is active swap: swapoff /dev/sdb1'


def test_parse_swaps():
    text = ('Filename\tType\tSize\tUsed\tPriority\n/dev/dm-1                               partition\t8388604\t0\t-2\n'
            '/var/my\\040swap (deleted)  file  1024  0  -3\n'
            '/var/old\\040(deleted)  file  1024  0  -4\n')
    assert parse_swaps(text) == [{'filename': '/dev/dm-1', 'type': 'partition'},
                                 {'filename': '/var/my swap', 'type': 'file'},
                                 {'filename': '/var/old', 'type': 'file'}]
    assert parse_swaps('') == []


def test_several_problems_are_all_named(tree):
    disk = tree.disk('sdb', '8:16', parts=[('sdb1', '8:17'), ('sdb2', '8:18')])
    tree.mount('8:17', '/dev/sdb1', '/boot')
    tree.hold(disk / 'sdb2', 'md127')
    u = tree.usage('8:16')
    assert len(u['problems']) == 2 and 'umount /boot' in texts(u) and 'mdadm --stop /dev/md127' in texts(u)


def test_no_sysfs_entry_is_a_refusal(tree):
    with pytest.raises(DeviceGuardError) as e:
        tree.usage('9:9')
    assert '9:9' in str(e.value) and 'cannot tell what uses it' in str(e.value)


def test_not_a_block_device(tmp_path):
    f = tmp_path / 'file'
    f.write_text('x')
    for path, words in ((str(f), 'is not one'), (str(tmp_path / 'missing'), 'does not exist'),
                        ('/dev/null', 'is not one')):
        with pytest.raises(DeviceGuardError) as e:
            check_device_writable(path, destructive=True)
        assert path in str(e.value) and words in str(e.value)
    assert not devguard.is_block_device(str(f)) and not devguard.is_block_device('/dev/null')
    assert not devguard.is_block_device(None)


# ---- signatures: the magic table against images the real tools made ----------------------------

def _image(tmp_path, name, size=8 * 1024 * 1024):
    p = tmp_path / name
    with open(str(p), 'wb') as f:
        f.truncate(size)
    return p


def _tool(*argv):
    if not shutil.which(argv[0]):
        pytest.skip('%s is not installed' % argv[0])
    subprocess.run(list(argv), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_magic_table_recognises_what_real_tools_write(tmp_path):
    ext4 = _image(tmp_path, 'ext4.img')
    _tool('mkfs.ext4', '-q', '-F', str(ext4))
    swap = _image(tmp_path, 'swap.img')
    _tool('mkswap', '-q', str(swap))
    btrfs = _image(tmp_path, 'btrfs.img', 160 * 1024 * 1024)
    _tool('mkfs.btrfs', '-q', '-f', str(btrfs))
    assert magic_signature(str(ext4)) == 'ext2/3/4'
    assert magic_signature(str(swap)) == 'swap'
    assert magic_signature(str(btrfs)) == 'btrfs'
    assert magic_signature(str(_image(tmp_path, 'zero.img'))) == ''


def _put(path, offset, data):
    with open(str(path), 'r+b') as f:
        f.seek(offset)
        f.write(data)


def _mbr_entry(ptype, start, count):
    return b'\x00\xff\xff\xff' + bytes([ptype]) + b'\xff\xff\xff' + struct.pack('<II', start, count)


@pytest.mark.parametrize('offset,data,expect', [
    (0, b'XFSB', 'xfs'),
    (0, b'LUKS\xba\xbe', 'crypto_LUKS'),
    (512, b'EFI PART', 'gpt'),
    (512, b'LABELONE', 'LVM2_member'),
    (1536, b'LABELONE', 'LVM2_member'),
    (4086, b'SWAP-SPACE', 'swap'),
    (65526, b'SWAPSPACE2', 'swap'),                  # swap made on a 64 KiB-page machine
    (4096, b'EFI PART', 'gpt'),                      # 4096-byte-sector disk
    (446, _mbr_entry(0x83, 2048, 4096) + b'\x00' * 48 + b'\x55\xaa', 'dos partition table'),
    (446, b'\x00' * 64 + b'\x55\xaa', ''),           # boot signature, no partition: not a table
    (-4096 + 60, struct.pack('>I', 0x8374026b), 'drbd (8.4 meta-data)'),
    (-4096 + 60, struct.pack('>I', 0x8374026c), 'drbd (8.4 meta-data, unclean)'),
    (-4096 + 60, struct.pack('>I', 0x8374026d), 'drbd (9 meta-data)'),
    (-4096 + 64, struct.pack('>I', 0x8374026d), ''),  # one word off: not DRBD
])
def test_magic_table(tmp_path, offset, data, expect):
    img = _image(tmp_path, 'x.img', 1024 * 1024)
    _put(img, offset if offset >= 0 else 1024 * 1024 + offset, data)
    assert magic_signature(str(img)) == expect


def test_drbd_magic_is_reported_next_to_what_blkid_says(tmp_path, monkeypatch):
    img = _image(tmp_path, 'd.img', 1024 * 1024)
    _put(img, 1024 * 1024 - 4096 + 60, struct.pack('>I', 0x8374026d))
    monkeypatch.setattr(devguard, 'blkid_signature', lambda path: 'ext4')
    assert devguard.signature_of(str(img)) == 'ext4; drbd (9 meta-data)'
    monkeypatch.setattr(devguard, 'blkid_signature', lambda path: None)   # no blkid on the host
    assert devguard.signature_of(str(img)) == 'drbd (9 meta-data)'
    monkeypatch.setattr(devguard, 'blkid_signature', lambda path: '')
    assert devguard.signature_of(str(_image(tmp_path, 'e.img'))) is None


def test_blkid_verdict_on_a_real_image(tmp_path):
    if not devguard._blkid_bin():
        pytest.skip('blkid is not installed')
    img = _image(tmp_path, 'l.img')
    _tool('mkfs.ext4', '-q', '-F', '-L', 'mydata', str(img))
    assert devguard.blkid_signature(str(img)) == "ext4 labelled 'mydata'"
    assert devguard.blkid_signature(str(_image(tmp_path, 'z.img'))) == ''


def test_mounts_on_a_real_mountinfo(read_fixture):
    """The mount check on a real Debian 12 VM's /proc/self/mountinfo (tests/unit/fixtures/sysinfo)."""
    mounts = parse_mountinfo(read_fixture('sysinfo/debian12-fc-vm.mountinfo'))
    assert [m['mountpoint'] for m in devguard.mounts_on(['254:0'], mounts)][:1] == ['/']
    assert devguard.mounts_on(['8:16'], mounts) == [] and devguard.mounts_on(['254:0'], []) == []


# ---- overlap: a block-device copy's input and output must not share blocks (dd test copy + input) --

def test_overlap_same_device_partition_and_whole_disk(tmp_path):
    t = Tree(tmp_path)
    t.disk('vda', '254:0', parts=[('vda1', '254:1'), ('vda2', '254:2')])
    t.disk('vdb', '254:16')
    names = {'/dev/vda': '254:0', '/dev/vda1': '254:1', '/dev/vda2': '254:2', '/dev/vdb': '254:16',
             '/dev/disk/by-id/virtio-b': '254:16'}

    def ov(a, b):
        return devguard.overlap(a, b, sysfs=str(t.sysfs), resolve=names.get)
    assert ov('/dev/vda', '/dev/vdb') is None
    assert ov('/dev/vda1', '/dev/vda2') is None  # two partitions of one disk: distinct blocks
    assert 'same device (254:16)' in ov('/dev/vdb', '/dev/disk/by-id/virtio-b')
    assert ov('/dev/vda', '/dev/vda1') == '/dev/vda1 is a partition of /dev/vda'
    assert ov('/dev/vda2', '/dev/vda') == '/dev/vda2 is a partition of /dev/vda'
    assert ov('/dev/vda', '/tmp/file') is None  # not a device: the module refuses that earlier
