"""plugins/module_utils/observe/layers.py on this machine's real sysfs and /proc (root): ext4 on a loop device
over an image file, a partition of a loop device (`partx -a`: `losetup -P` makes no partition nodes
here), a loop device at an offset into another one, and this machine's own root file system.

dm, md and DRBD cannot be made on this kernel: they are resolved over built sysfs trees in
tests/unit/plugins/module_utils/test_layers.py. Everything made here is released in `finally`.
About 2 s under the shared live lock.
"""

import os
import struct
import subprocess
import tempfile

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.observe.layers import Sys, block_layers, layer_stack

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for loop devices and mounts')

MiB = 1024 * 1024


def sh(*argv):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def undo():
    steps = []
    try:
        yield steps
    finally:
        for step in reversed(steps):
            subprocess.run(step, capture_output=True, check=False)


def image(undo, size=32 * MiB):
    fd, img = tempfile.mkstemp(prefix='layers-', suffix='.img', dir='/var/tmp')
    os.close(fd)
    undo.append(['rm', '-f', img])
    os.truncate(img, size)
    return img


def root_disk():
    """The block layers of / on this machine, as the resolver sees them (the test asserts only what
    the kernel says independently: the mount's major:minor)."""
    st = os.stat('/')
    return '%d:%d' % (os.major(st.st_dev), os.minor(st.st_dev))


def test_ext4_on_a_loop_over_a_file_down_to_the_disk(undo, tmp_path):
    img = image(undo)
    dev = sh('losetup', '-f', '--show', '-o', MiB, img)
    undo.append(['losetup', '-d', dev])
    sh('mkfs.ext4', '-q', dev)
    mnt = tmp_path / 'mnt'
    mnt.mkdir()
    sh('mount', dev, mnt)
    undo.append(['umount', str(mnt)])
    (mnt / 'work').mkdir()
    layers = layer_stack(str(mnt / 'work'))
    kinds = [(l['layer'], l['kind']) for l in layers]
    assert kinds[:4] == [(0, 'path'), (1, 'filesystem'), (2, 'loop'), (3, 'file')], layers
    fs, loop, backing = layers[1], layers[2], layers[3]
    assert fs['fstype'] == 'ext4' and fs['mountpoint'] == str(mnt)
    st = os.stat(dev)
    assert loop['name'] == os.path.basename(dev)
    assert loop['major_minor'] == '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
    assert loop['backing_file'] == img and loop['offset'] == MiB and loop['size_bytes'] == 31 * MiB
    assert backing['name'] == img
    # below the image: the file system that holds /var/tmp, by the image's own st_dev
    img_dev = os.stat(img).st_dev
    below = layers[4]
    assert below['kind'] == 'filesystem' and below['major_minor'] == '%d:%d' % (os.major(img_dev), os.minor(img_dev))
    names = [l['name'] for l in block_layers(layers)]
    assert names[0] == loop['name'] and len(names) >= 2, layers
    # the same loop device by its node: layer 0 is the device
    assert [l['name'] for l in layer_stack(dev)][:2] == [loop['name'], img]


def test_a_partition_of_a_loop_and_a_loop_at_an_offset_into_it(undo):
    img = image(undo)
    disk = sh('losetup', '-f', '--show', img)
    undo.append(['losetup', '-d', disk])
    mbr = bytearray(512)
    mbr[446:462] = b'\x00\xff\xff\xff\x83\xff\xff\xff' + struct.pack('<II', 2048, 16384)
    mbr[510:512] = b'\x55\xaa'
    with open(disk, 'r+b') as f:
        f.write(bytes(mbr))
        os.fsync(f.fileno())
    undo.append(['partx', '-d', disk])
    sh('partx', '-a', disk)
    part = disk + 'p1'
    top = sh('losetup', '-f', '--show', '-o', 4096, part)
    undo.append(['losetup', '-d', top])
    layers = layer_stack(top)
    brief = [(l['layer'], l['kind'], l['name']) for l in layers][:4]
    assert brief == [(0, 'loop', os.path.basename(top)), (1, 'partition', os.path.basename(part)),
                     (2, 'loop', os.path.basename(disk)), (3, 'file', img)], layers
    assert layers[0]['offset'] == 4096 and layers[0]['backing_file'] == part
    assert layers[1]['start_bytes'] == 2048 * 512 and layers[1]['size_bytes'] == 16384 * 512
    # the ioctl (live) and sysfs agree on the backing device
    info = Sys().loop_info(Sys().node(layers[0]['major_minor']))
    st = os.stat(part)
    assert info['backing_majmin'] == '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))


def test_this_machines_root_file_system(undo):
    layers = layer_stack('/')
    assert layers[0]['kind'] == 'path' and layers[1]['kind'] == 'filesystem' and layers[1]['mountpoint'] == '/'
    assert layers[1]['major_minor'] == root_disk()
    disks = block_layers(layers)
    assert disks and disks[0]['major_minor'] == root_disk(), layers
