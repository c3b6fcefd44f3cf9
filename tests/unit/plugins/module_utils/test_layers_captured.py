# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/observe/layers.py and the device guard (devguard.device_usage) on sysfs and /proc
captured in a real TCG guest (Debian 12's cloud kernel, which has device-mapper, md and DRBD 8.4:
this machine's kernel has none of them) and in an LXC container on loop storage as the local lab
makes one. tests/unit/fixtures/layers/README.md says how each was set up and the exact capture
command.

The tree is rebuilt in tmp_path from the captured JSON (a repository may hold no symbolic links to
directories) and walked offline. Two kinds of assertions: the offline walk gives exactly the stack
the same resolver gave live in the guest (with its ioctls and st_dev), and the figures the guest's
setup fixed independently of the resolver (lvcreate -L 48M, truncate -s 24M/64M, the 1 GiB root
image, the partition written at sector 2048 for 65536 sectors) come out of the sectors the kernel
reported.
"""

import json
import os
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import device_usage
from ansible_collections.benchlab.bench.plugins.module_utils.observe.layers import Sys, block_layers, layer_stack
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import load_schema, schema_problems, schema_validator

FIXTURES = Path(__file__).resolve().parents[3] / 'unit' / 'fixtures' / 'layers'
MiB = 1024 * 1024


def load(name):
    return json.loads((FIXTURES / name).read_text())


def materialize(doc, root):
    """The captured sysfs and /proc files as a tree under `root`: directories, files byte for byte,
    the kernel's links as relative symbolic links inside the tree."""
    sysfs, proc = root / 'sys', root / 'proc'
    for rel, entry in sorted(doc['sys'].items()):
        path = sysfs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(entry, dict) and entry.get('dir'):
            path.mkdir(parents=True, exist_ok=True)
        elif isinstance(entry, dict):
            target = sysfs / entry['link']
            target.mkdir(parents=True, exist_ok=True)
            os.symlink(os.path.relpath(str(target), str(path.parent)), str(path))
        else:
            path.write_text(entry)
    for rel, text in doc['proc'].items():
        (proc / rel).parent.mkdir(parents=True, exist_ok=True)
        (proc / rel).write_text(text)
    return str(root)


@pytest.fixture(scope='module')
def guest(tmp_path_factory):
    doc = load('tcg-guest.json')
    return doc, materialize(doc, tmp_path_factory.mktemp('tcg-guest'))


def brief(layers):
    return [(l['layer'], l['kind'], l['name'], l['above']) for l in layers]


def by_name(layers):
    return dict((l['name'], l) for l in layers if l['kind'] not in ('path', 'file', 'filesystem'))


def test_the_capture_is_of_the_guest_kernel(guest):
    doc, _root = guest
    assert doc['meta']['kernel'] == '6.1.0-50-cloud-amd64'
    assert sorted(doc['meta']['stacks']) == ['/dev/drbd90', '/dev/md127', '/mnt/cap/work', '/mnt/part/work', '/var/tmp']


@pytest.mark.parametrize('target', ['/mnt/cap/work', '/dev/md127', '/dev/drbd90', '/mnt/part/work', '/var/tmp'])
def test_the_captured_tree_walks_as_the_live_guest_did(guest, target):
    doc, root = guest
    offline = layer_stack(target, root=root)
    assert not Sys(root).live
    assert offline == doc['meta']['stacks'][target]


def test_ext4_on_an_lvm_volume_on_a_loop_over_a_file_down_to_the_virtio_disk(guest):
    _doc, root = guest
    layers = layer_stack('/mnt/cap/work', root=root)
    assert brief(layers) == [
        (0, 'path', '/mnt/cap/work', None),
        (1, 'filesystem', '/mnt/cap', '/mnt/cap/work'),
        (2, 'dm', 'dm-0', '/mnt/cap'),
        (3, 'loop', 'loop3', 'dm-0'),
        (4, 'file', '/var/tmp/cap-lv.img', 'loop3'),
        (5, 'filesystem', '/', '/var/tmp/cap-lv.img'),
        (6, 'disk', 'vda', '/'),
    ]
    dev = by_name(layers)
    assert layers[1]['fstype'] == 'ext4' and layers[1]['source'] == '/dev/mapper/capvg-lv'
    assert dev['dm-0']['dm_name'] == 'capvg-lv' and dev['dm-0']['dm_uuid'].startswith('LVM-')
    assert dev['dm-0']['size_bytes'] == 48 * MiB                     # lvcreate -L 48M
    assert dev['loop3']['backing_file'] == '/var/tmp/cap-lv.img' and dev['loop3']['size_bytes'] == 64 * MiB
    assert dev['vda']['size_bytes'] == 1024 * MiB and dev['vda']['major_minor'] == '254:0'   # the 1G root image
    assert [l['name'] for l in block_layers(layers)] == ['dm-0', 'loop3', 'vda']


def test_an_md_mirror_branches_to_both_members_and_their_files(guest):
    _doc, root = guest
    layers = layer_stack('/dev/md127', root=root)
    assert brief(layers) == [
        (0, 'md', 'md127', None),
        (1, 'loop', 'loop0', 'md127'), (2, 'file', '/var/tmp/cap-1.img', 'loop0'),
        (3, 'filesystem', '/', '/var/tmp/cap-1.img'), (4, 'disk', 'vda', '/'),
        (1, 'loop', 'loop1', 'md127'), (2, 'file', '/var/tmp/cap-2.img', 'loop1'),
        (3, 'filesystem', '/', '/var/tmp/cap-2.img'),     # vda once: the walk stops at a file system it saw
    ]
    dev = by_name(layers)
    assert dev['md127']['md_level'] == 'raid1' and dev['md127']['major_minor'] == '9:127'
    # two 24 MiB members; the array is 1 MiB smaller (metadata 1.2's data offset)
    assert dev['loop0']['size_bytes'] == dev['loop1']['size_bytes'] == 24 * MiB
    assert dev['md127']['size_bytes'] == 23 * MiB


def test_a_drbd_device_over_its_backing_loop_device(guest):
    _doc, root = guest
    layers = layer_stack('/dev/drbd90', root=root)
    assert brief(layers) == [
        (0, 'drbd', 'drbd90', None),
        (1, 'loop', 'loop2', 'drbd90'),
        (2, 'file', '/var/tmp/cap-4.img', 'loop2'),
        (3, 'filesystem', '/', '/var/tmp/cap-4.img'),
        (4, 'disk', 'vda', '/'),
    ]
    dev = by_name(layers)
    assert dev['drbd90']['major_minor'] == '147:90'       # DRBD's block major
    # internal meta-data at the end of the 24 MiB backing device: the DRBD device is a little smaller
    assert 23 * MiB < dev['drbd90']['size_bytes'] < dev['loop2']['size_bytes'] == 24 * MiB


def test_a_partition_of_the_second_virtio_disk(guest):
    _doc, root = guest
    layers = layer_stack('/mnt/part/work', root=root)
    assert brief(layers) == [(0, 'path', '/mnt/part/work', None), (1, 'filesystem', '/mnt/part', '/mnt/part/work'),
                             (2, 'partition', 'vdb1', '/mnt/part'), (3, 'disk', 'vdb', 'vdb1')]
    dev = by_name(layers)
    # the MBR entry written: start sector 2048, 65536 sectors, on a 64 MiB disk
    assert dev['vdb1']['start_bytes'] == 2048 * 512 and dev['vdb1']['size_bytes'] == 65536 * 512
    assert dev['vdb']['size_bytes'] == 64 * MiB and dev['vdb']['major_minor'] == '254:16'


@pytest.mark.parametrize('majmin, text', [
    ('7:3', '/dev/loop3 is held by device-mapper dm-0 (capvg-lv)'),
    ('7:0', '/dev/loop0 is held by md RAID /dev/md127'),
    ('7:1', '/dev/loop1 is held by md RAID /dev/md127'),
    ('7:2', '/dev/loop2 is held by DRBD /dev/drbd90'),
    ('254:17', '/dev/vdb1 is mounted on /mnt/part (ext4)'),
    ('254:16', '/dev/vdb1 (its partition) is mounted on /mnt/part (ext4)'),
])
def test_the_guard_names_each_holder_in_the_captured_tree(guest, majmin, text):
    _doc, root = guest
    usage = device_usage(majmin, sysfs=os.path.join(root, 'sys'), proc=os.path.join(root, 'proc'),
                         resolve=lambda p: None)
    assert [t for t, _how in usage['problems']] == [text]


def test_a_free_loop_device_in_the_captured_tree_is_free(guest):
    _doc, root = guest
    doc_loops = [n for n in os.listdir(os.path.join(root, 'sys', 'block')) if n.startswith('loop')]
    free = [n for n in doc_loops if not os.path.exists(os.path.join(root, 'sys', 'block', n, 'loop'))]
    assert free, doc_loops                                  # losetup -f left unconfigured loop devices
    majmin = Sys(root).majmin_of_node(Sys(root).node_by_name(free[0]))
    assert device_usage(majmin, sysfs=os.path.join(root, 'sys'), proc=os.path.join(root, 'proc'),
                        resolve=lambda p: None)['problems'] == []


# ---- an LXC guest on loop storage (the local lab's shape): the host's sysfs, the container's mounts -----

@pytest.fixture(scope='module')
def lxc(tmp_path_factory):
    doc = load('lxc-loop-guest.json')
    return doc, materialize(doc, tmp_path_factory.mktemp('lxc-loop-guest'))


@pytest.mark.parametrize('target', ['/var/tmp', '/dev/shm'])
def test_the_containers_tree_walks_as_it_did_live(lxc, target):
    doc, root = lxc
    assert layer_stack(target, root=root) == doc['meta']['stacks'][target]


def test_the_containers_root_goes_down_to_its_loop_device_and_no_further(lxc):
    """The container's root is ext4 on the host's loop1 over an image in the host's /var/tmp; the
    container sees the loop device (the host's sysfs) but not the host's file systems: the image's
    file system is not named (a guess would have named the container's own root, loop1 itself)."""
    _doc, root = lxc
    layers = layer_stack('/var/tmp', root=root)
    assert brief(layers) == [(0, 'path', '/var/tmp', None), (1, 'filesystem', '/', '/var/tmp'),
                             (2, 'loop', 'loop1', '/'), (3, 'file', '/var/tmp/wt30b-lxc-guest.img', 'loop1')]
    assert layers[1]['source'] == '/dev/loop1' and layers[1]['major_minor'] == '7:1'
    assert layers[2]['size_bytes'] == 1024 * MiB                   # truncate -s 1G
    assert 'not visible here' in layers[3]['unresolved']
    assert [l['name'] for l in block_layers(layers)] == ['loop1']
    # /dev/shm, LXC's tmpfs: a file system on no block device
    shm = layer_stack('/dev/shm', root=root)
    assert brief(shm) == [(0, 'path', '/dev/shm', None), (1, 'filesystem', '/dev/shm', '/dev/shm')]


@pytest.mark.parametrize('name', ['tcg-guest.json', 'lxc-loop-guest.json'])
def test_every_captured_stack_is_a_valid_observed_stack_of_a_record(name):
    """What the resolver said live (a container's unresolved image included) must pass the record
    schema's observed.stack, or the report sets the run's record aside as invalid."""
    schema = load_schema()
    layer_schema = dict(schema['$defs']['layer'], **{'$defs': schema['$defs']})
    validator = schema_validator(layer_schema)
    stacks = load(name)['meta']['stacks']
    layers = [layer for stack in stacks.values() for layer in stack]
    assert layers and any('unresolved' in layer for layer in layers) == (name == 'lxc-loop-guest.json')
    for target, stack in sorted(stacks.items()):
        for layer in stack:
            assert schema_problems(validator, layer, 'observed.stack') == [], (target, layer)
