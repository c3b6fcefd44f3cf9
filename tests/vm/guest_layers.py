"""The layer resolver (module_utils/observe/layers.py) live in a TCG guest, whose Debian cloud kernel has
device-mapper, md and DRBD 8.4 (this machine's kernel has none of them): guard_holders.py's play runs
these tasks on the devices it already made, once the guard's refusals are recorded, so no extra boot
and no extra devices.

- ext4 is made on guard_holders' LVM volume (dm, over a loop device over /var/tmp/blh-3.img) and
  mounted on /var/tmp/blh-lvmnt;
- benchlab.bench.observe (state=started in check mode: it resolves the stacks and returns them, no
  sampler, nothing made) resolves, with the guest's own Python, a directory on that ext4, the md
  mirror and the DRBD device;
- check() asserts each stack, layer 0 (what a tool writes to) down to the backing files and the
  virtio disk under their file system, and the sizes the setup fixed (lvcreate -L 8M, 24 MiB files,
  the 1 GiB root image).
guard_holders' release unmounts the file system first.
"""

import os

MNT = '/var/tmp/blh-lvmnt'
WORK = MNT + '/work'
MiB = 1024 * 1024

MOUNT = r'''
set -eu
mkfs.ext4 -q -F "$1"
mkdir -p /var/tmp/blh-lvmnt
mount "$1" /var/tmp/blh-lvmnt
mkdir /var/tmp/blh-lvmnt/work
'''

UNMOUNT = r'''
umount /var/tmp/blh-lvmnt >&2 2>/dev/null || true
rmdir /var/tmp/blh-lvmnt 2>/dev/null || true
'''


def tasks():
    """The tasks, run inside guard_holders' block (blh_devs is known); their result: blh_layers."""
    return [
        {'name': 'ext4 on the LVM volume, mounted', 'changed_when': True, 'ansible.builtin.command': {
            'argv': ['sh', '-c', MOUNT, 'blh', "{{ blh_devs['lv'] }}"]}},
        {'name': 'the layer stacks of a directory on it, the md mirror and the DRBD device', 'check_mode': True,
         'register': 'blh_layers', 'benchlab.bench.observe': {
             'state': 'started', 'paths': [WORK, "{{ blh_devs['md'] }}", '/dev/drbd90'], 'run_id': 'guest-layers'}},
    ]


def split(layers):
    """The stacks of a concatenated list (each starts at layer 0)."""
    stacks = []
    for layer in layers:
        if layer['layer'] == 0:
            stacks.append([])
        stacks[-1].append(layer)
    return stacks


def brief(stack):
    return [(l['layer'], l['kind'], l['name']) for l in stack]


def chained(stack):
    """Every layer lies under the nearest layer one above it (`above` names it)."""
    last = {}
    for l in stack:
        if l['layer'] > 0:
            assert l['above'] == last[l['layer'] - 1]['name'], (l, stack)
        last[l['layer']] = l
    return True


def check(layers, devs):
    """Assert the three stacks; returns the figures shown in the test's output."""
    name = dict((k, os.path.basename(v)) for k, v in devs.items() if isinstance(v, str))
    stacks = split(layers)
    assert len(stacks) == 3, layers
    lvm, md, drbd = stacks
    for stack in stacks:
        assert chained(stack)
    root_fs = [l for l in layers if l['kind'] == 'filesystem' and l['name'] == '/']
    assert root_fs and all(l['source'] == '/dev/vda' and l['fstype'] == 'ext4' for l in root_fs), root_fs

    # a directory on ext4 on the LVM volume (dm) on a loop device over a file on / on vda
    assert brief(lvm) == [(0, 'path', WORK), (1, 'filesystem', MNT), (2, 'dm', name['lv']),
                          (3, 'loop', name['lvm pv']), (4, 'file', '/var/tmp/blh-3.img'), (5, 'filesystem', '/'),
                          (6, 'disk', 'vda')], brief(lvm)
    assert lvm[1]['fstype'] == 'ext4' and lvm[1]['source'] == '/dev/mapper/blhvg-lv', lvm[1]
    assert lvm[2]['dm_name'] == 'blhvg-lv' and lvm[2]['dm_uuid'].startswith('LVM-'), lvm[2]
    assert lvm[2]['size_bytes'] == 8 * MiB and lvm[3]['size_bytes'] == 24 * MiB, lvm
    assert lvm[3]['backing_file'] == '/var/tmp/blh-3.img' and lvm[6]['size_bytes'] == 1024 * MiB, lvm

    # the md mirror: both members, each a loop device over its file on / (vda once)
    assert brief(md) == [(0, 'md', name['md']),
                         (1, 'loop', name['md member']), (2, 'file', '/var/tmp/blh-1.img'), (3, 'filesystem', '/'),
                         (4, 'disk', 'vda'),
                         (1, 'loop', name['md other member']), (2, 'file', '/var/tmp/blh-2.img'),
                         (3, 'filesystem', '/')], brief(md)
    assert md[0]['md_level'] == 'raid1' and md[0]['size_bytes'] < 24 * MiB, md[0]

    # DRBD over its backing loop device (internal meta-data: a little smaller than it)
    assert brief(drbd) == [(0, 'drbd', 'drbd90'), (1, 'loop', name['drbd disk']), (2, 'file', '/var/tmp/blh-4.img'),
                           (3, 'filesystem', '/'), (4, 'disk', 'vda')], brief(drbd)
    assert 0 < drbd[0]['size_bytes'] < drbd[1]['size_bytes'] == 24 * MiB, drbd
    return {'layers resolved': len(layers)}
