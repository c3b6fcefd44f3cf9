# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The layers below a path or a block device, down to the physical disks: one resolver for the
device guard (what else reaches the same storage) and for the observation of a run (which
devices to watch, and what each one is).

A path lives in a file system (its mountinfo entry, found by the file's st_dev), a file system on a
block device; below a device:

- a partition: its whole disk (sysfs ``partition``, ``start``, ``size``);
- device-mapper (LVM, thin, dm-crypt, multipath), md RAID, DRBD: the devices in its sysfs
  ``slaves/`` (the kernel links every backing disk there, DRBD's too);
- a loop device: its backing file or device (``loop/backing_file``, ``loop/offset``,
  ``loop/sizelimit``; on a live system the LOOP_GET_STATUS64 ioctl gives the backing file's device
  and inode, which a renamed file cannot hide), and below a backing file the file system that holds
  it and so on, recursively (loop on loop, a partition of a loop, a loop on a partition);
- an overlay file system: the file system of its upper directory.

Every layer is a dict: ``layer`` (0 = what the tool writes to, the number grows downwards),
``name``, ``kind`` (path, filesystem, file, partition, disk, loop, dm, md, drbd, virtual),
``above`` (the name of the layer it lies under), and what the kind has: ``major_minor``,
``fstype``/``mountpoint``/``source``, ``backing_file``/``offset``/``size_bytes``, ``dm_name``,
``start_bytes``, and ``unresolved`` (why the walk stops there: a loop device's backing file that this
machine's mounts do not show, as in a container whose root is that loop device). Everything is read
from sysfs and /proc under `root` (``/`` on a live system; the unit tests build such trees in a
temporary directory), never by running a program.
"""

import fcntl
import os
import stat
import struct

from ansible_collections.benchlab.bench.plugins.module_utils.observe.sysinfo import mount_for, parse_mountinfo

SECTOR = 512
MAX_DEPTH = 16
LOOP_GET_STATUS64 = 0x4C05
# struct loop_info64: lo_device, lo_inode, lo_rdevice, lo_offset, lo_sizelimit (u64), lo_number,
# lo_encrypt_type, lo_encrypt_key_size, lo_flags (u32), lo_file_name[64], lo_crypt_name[64],
# lo_encrypt_key[32], lo_init[2] (u64): 232 bytes
LOOP_INFO64 = struct.Struct('=QQQQQIIII')
LOOP_INFO64_SIZE = 232
# file systems whose mountinfo major:minor is an anonymous device (0:N) though a block device holds them
DELETED = ' (deleted)'


def _path(root, *parts):
    return os.path.join(root, *[p.lstrip('/') for p in parts])


def _read(path, default=''):
    try:
        with open(path) as f:
            return f.read().strip()
    except (IOError, OSError, UnicodeDecodeError):
        return default


def _int(text):
    text = (text or '').strip()
    return int(text) if text.isdigit() else None


def sorted_listdir(path):
    """The names in directory `path`, sorted; [] when it cannot be read."""
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


_listdir = sorted_listdir


class Sys(object):
    """sysfs and /proc of one machine, read under `root`."""

    def __init__(self, root='/', sysfs=None, proc=None):
        root = root or '/'
        self.sysfs = sysfs or os.path.join(root, 'sys')
        self.procfs = proc or os.path.join(root, 'proc')
        self.live = os.path.realpath(self.sysfs) == '/sys' and os.path.realpath(self.procfs) == '/proc'
        self._mounts = None
        self._loops = None

    def sys(self, *parts):
        return _path(self.sysfs, *parts)

    def proc(self, *parts):
        return _path(self.procfs, *parts)

    def mounts(self):
        if self._mounts is None:
            self._mounts = parse_mountinfo(_read(self.proc('self', 'mountinfo')))
        return self._mounts

    # -- block devices ------------------------------------------------------------------------

    def node(self, majmin):
        """The device's sysfs directory (/sys/dev/block/<maj:min> resolved), or None."""
        link = self.sys('dev', 'block', majmin)
        return os.path.realpath(link) if os.path.exists(link) else None

    def node_by_name(self, name):
        """The sysfs directory of kernel device `name` (loop0, vda1, dm-0), or None."""
        link = self.sys('class', 'block', name)
        if os.path.exists(link):
            return os.path.realpath(link)
        link = self.sys('block', name)
        if os.path.exists(link):
            return os.path.realpath(link)
        for majmin in _listdir(self.sys('dev', 'block')):    # a partition, in a tree without class/block
            node = os.path.realpath(self.sys('dev', 'block', majmin))
            if os.path.basename(node) == name:
                return node
        return None

    def majmin_of_node(self, node):
        return _read(os.path.join(node, 'dev')) or None

    def device_majmin(self, path):
        """major:minor of block device node `path`: its st_rdev on a live system, else (and when the
        node is missing) through sysfs by the name it points at (/dev/mapper/<name> by dm/name)."""
        if self.live:
            try:
                st = os.stat(path)
                if stat.S_ISBLK(st.st_mode):
                    return '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
            except (OSError, ValueError, TypeError):
                pass
        real = os.path.realpath(path) if self.live else path
        name = os.path.basename(real)
        node = self.node_by_name(name)
        if node is None and os.path.dirname(real) == '/dev/mapper':
            for entry in _listdir(self.sys('block')):
                if _read(self.sys('block', entry, 'dm', 'name')) == name:
                    node = self.node_by_name(entry)
                    break
        return self.majmin_of_node(node) if node else None

    def size_bytes(self, node):
        sectors = _int(_read(os.path.join(node, 'size')))
        return None if sectors is None else sectors * SECTOR

    def partition(self, node):
        """(whole disk's node, start in bytes, size in bytes) for a partition's node, else None."""
        if not os.path.isfile(os.path.join(node, 'partition')):
            return None
        start = _int(_read(os.path.join(node, 'start')))
        return os.path.dirname(node), (start or 0) * SECTOR, self.size_bytes(node)

    def partitions(self, node):
        """The sysfs nodes of a whole disk's partitions."""
        return [os.path.join(node, c) for c in _listdir(node) if os.path.isfile(os.path.join(node, c, 'partition'))]

    def slaves(self, node):
        """The nodes in the device's slaves/ (the devices device-mapper, md, DRBD ... sit on)."""
        out = []
        for name in _listdir(os.path.join(node, 'slaves')):
            n = self.node_by_name(name)
            if n:
                out.append(n)
        return out

    def holders(self, node):
        return _listdir(os.path.join(node, 'holders'))

    def kind(self, node):
        """(kind, extra fields) of a block device's sysfs node."""
        name = os.path.basename(node)
        if os.path.isfile(os.path.join(node, 'partition')):
            return 'partition', {}
        if os.path.isdir(os.path.join(node, 'dm')):
            extra = {'dm_name': _read(os.path.join(node, 'dm', 'name')) or None}
            uuid = _read(os.path.join(node, 'dm', 'uuid'))
            if uuid:
                extra['dm_uuid'] = uuid
            return 'dm', extra
        if os.path.isdir(os.path.join(node, 'md')):
            return 'md', {'md_level': _read(os.path.join(node, 'md', 'level')) or None}
        if name.startswith('loop') and os.path.isdir(os.path.join(node, 'loop')):
            return 'loop', {}
        if name.startswith('drbd'):
            return 'drbd', {}
        if os.path.exists(os.path.join(node, 'device')):
            return 'disk', {}
        return 'virtual', {}

    # -- loop devices ---------------------------------------------------------------------------

    def loop_info(self, node):
        """{backing_file, offset, sizelimit, backing_majmin (a block device backing), backing_id
        (the backing file's (st_dev, inode), live only)} of a configured loop device, else None."""
        base = os.path.join(node, 'loop')
        if not os.path.isdir(base):
            return None
        backing = _read(os.path.join(base, 'backing_file'))
        deleted = backing.endswith(DELETED)
        if deleted:
            backing = backing[:-len(DELETED)]
        info = {'backing_file': backing or None, 'offset': _int(_read(os.path.join(base, 'offset'))) or 0,
                'sizelimit': _int(_read(os.path.join(base, 'sizelimit'))) or 0, 'backing_majmin': None,
                'backing_id': None, 'deleted': deleted}
        status = self._loop_status(os.path.basename(node)) if self.live else None
        if status:
            dev, ino, rdev, offset, sizelimit = status
            info.update(offset=offset, sizelimit=sizelimit)
            if rdev:
                info['backing_majmin'] = '%d:%d' % (os.major(rdev), os.minor(rdev))
            else:
                info['backing_id'] = (dev, ino)
        elif backing and not deleted:
            if self.live:
                try:
                    st = os.stat(backing)
                except OSError:
                    st = None
                if st is not None and stat.S_ISBLK(st.st_mode):
                    info['backing_majmin'] = '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
                elif st is not None:
                    info['backing_id'] = (st.st_dev, st.st_ino)
            elif backing.startswith('/dev/'):
                info['backing_majmin'] = self.device_majmin(backing)
        return info

    @staticmethod
    def _loop_status(name):
        """(lo_device, lo_inode, lo_rdevice, lo_offset, lo_sizelimit) from LOOP_GET_STATUS64 on
        /dev/<name>, or None (no node, no permission, not configured)."""
        try:
            fd = os.open('/dev/%s' % name, os.O_RDONLY | getattr(os, 'O_CLOEXEC', 0))
        except OSError:
            return None
        try:
            buf = bytearray(LOOP_INFO64_SIZE)
            fcntl.ioctl(fd, LOOP_GET_STATUS64, buf)
        except (OSError, IOError):
            return None
        finally:
            os.close(fd)
        return LOOP_INFO64.unpack_from(bytes(buf))[:5]

    def loops(self):
        """[(node, loop_info)] of every configured loop device (read once)."""
        if self._loops is not None:
            return self._loops
        out = self._loops = []
        for name in _listdir(self.sys('block')):
            if not name.startswith('loop'):
                continue
            node = self.node_by_name(name)
            info = self.loop_info(node) if node else None
            if info:
                out.append((node, info))
        return out

    # -- files and file systems ---------------------------------------------------------------

    def file_id(self, path):
        """(st_dev, inode) of a file on a live system, None otherwise."""
        if not self.live:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def mount_of(self, path, dev=None):
        """The mountinfo entry of the file system that holds `path`: on a live system the entry with
        the file's st_dev (or `dev`, a loop device's backing file's st_dev from its ioctl, which a
        renamed file cannot hide) whose mount point is the longest prefix of the path, else the longest
        prefix."""
        mounts = self.mounts()
        real = os.path.realpath(path) if self.live else os.path.normpath(path)
        if self.live:
            if dev is None:
                try:
                    dev = os.stat(real).st_dev
                except OSError:
                    dev = None
            if dev is not None:
                majmin = '%d:%d' % (os.major(dev), os.minor(dev))
                found = mount_for(real, [m for m in mounts if m['major_minor'] == majmin])
                if found:
                    return found
        return mount_for(real, mounts)

    def filesystem_devices(self, mount):
        """The sysfs nodes of the block devices a mounted file system sits on: its major:minor, else
        (btrfs, which shows an anonymous 0:N) its source device and btrfs' own device list."""
        node = self.node(mount['major_minor']) if not mount['major_minor'].startswith('0:') else None
        if node:
            return [node]
        source = mount.get('source') or ''
        if not source.startswith('/dev/'):
            return []
        majmin = self.device_majmin(source)
        node = self.node(majmin) if majmin else None
        if node is None:
            return []
        nodes = [node]
        if mount.get('fstype') == 'btrfs':
            for fsid in _listdir(self.sys('fs', 'btrfs')):
                members = _listdir(self.sys('fs', 'btrfs', fsid, 'devices'))
                if os.path.basename(node) in members:
                    nodes = [self.node_by_name(m) for m in members]
                    nodes = [n for n in nodes if n]
                    break
        return nodes


def _option(options, key):
    for opt in (options or '').split(','):
        k, sep, v = opt.partition('=')
        if sep and k == key:
            return v
    return None


class _Walker(object):
    def __init__(self, sysv):
        self.s = sysv
        self.layers = []
        self.seen = set()
        self.chain = []          # the devices above the layer being walked (major:minor)

    def add(self, layer, depth, above, **fields):
        entry = dict(layer=depth, above=above)
        entry.update(layer)
        entry.update((k, v) for k, v in fields.items() if v is not None)
        self.layers.append(entry)
        return entry

    def path(self, path, depth, above, kind='path', dev=None):
        if depth > MAX_DEPTH:
            return
        mount = self.s.mount_of(path, dev)
        entry = self.add({'name': path, 'kind': kind}, depth, above)
        if mount is None:
            return
        if kind == 'file' and (mount['major_minor'] in self.chain or (
                self.s.live and dev is None and not os.path.exists(path))):
            # a loop device's backing file that this machine's mounts do not show: a container whose root
            # is that loop device sees the host's sysfs but not the host's file systems. The file
            # system a prefix of the path names here is not the one holding the file: said, not guessed.
            entry['unresolved'] = 'the file is not visible here (outside this mount namespace: a container?)'
            return
        self.filesystem(mount, depth + 1, path)

    def filesystem(self, mount, depth, above):
        fs = self.add({'name': mount['mountpoint'], 'kind': 'filesystem'}, depth, above, fstype=mount['fstype'],
                      mountpoint=mount['mountpoint'], source=mount.get('source'), major_minor=mount['major_minor'])
        key = ('fs', mount['mountpoint'], mount['major_minor'])
        if key in self.seen or depth > MAX_DEPTH:
            return
        self.seen.add(key)
        if mount['fstype'] == 'overlay':
            upper = _option(mount.get('options'), 'upperdir')
            if upper:
                self.path(upper, depth + 1, fs['name'], kind='directory')
            return
        for node in self.s.filesystem_devices(mount):
            self.device(node, depth + 1, fs['name'])

    def device(self, node, depth, above):
        majmin = self.s.majmin_of_node(node)
        name = os.path.basename(node)
        kind, extra = self.s.kind(node)
        entry = self.add({'name': name, 'kind': kind, 'major_minor': majmin}, depth, above,
                         size_bytes=self.s.size_bytes(node), **extra)
        if majmin in self.seen or depth > MAX_DEPTH:
            return
        self.seen.add(majmin)
        self.chain.append(majmin)
        try:
            self._below(node, entry, name, kind, depth)
        finally:
            self.chain.pop()

    def _below(self, node, entry, name, kind, depth):
        part = self.s.partition(node)
        if part:
            entry['start_bytes'] = part[1]
            self.device(part[0], depth + 1, name)
            return
        if kind == 'loop':
            info = self.s.loop_info(node) or {}
            entry.update(backing_file=info.get('backing_file'), offset=info.get('offset', 0))
            if info.get('sizelimit'):
                entry['sizelimit'] = info['sizelimit']
            if info.get('backing_majmin'):
                below = self.s.node(info['backing_majmin'])
                if below:
                    self.device(below, depth + 1, name)
            elif info.get('backing_file') and not info.get('deleted'):
                backing_id = info.get('backing_id')
                self.path(info['backing_file'], depth + 1, name, kind='file', dev=backing_id[0] if backing_id else None)
            return
        for slave in self.s.slaves(node):
            self.device(slave, depth + 1, name)


def device_stack(majmin, root='/', sysv=None):
    """The layers from block device `majmin` (layer 0) down to the disks; [] when it is unknown."""
    s = sysv or Sys(root)
    node = s.node(majmin)
    if node is None:
        return []
    w = _Walker(s)
    w.device(node, 0, None)
    return w.layers


def path_stack(path, root='/', sysv=None):
    """The layers from `path` (layer 0: the file or directory the tool writes) through its file
    system down to the disks."""
    s = sysv or Sys(root)
    w = _Walker(s)
    w.path(path, 0, None)
    return w.layers


def layer_stack(target, root='/', sysv=None):
    """device_stack for a block device node, path_stack for anything else."""
    s = sysv or Sys(root)
    majmin = None
    if s.live:
        try:
            st = os.stat(target)
            if stat.S_ISBLK(st.st_mode):
                majmin = '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
        except (OSError, ValueError, TypeError):
            pass
    elif target.startswith('/dev/'):
        majmin = s.device_majmin(target)
    if majmin:
        return device_stack(majmin, sysv=s)
    return path_stack(target, sysv=s)


def image_stack(path, root='/', sysv=None):
    """The layers of a guest's disk image on its host: for a file that backs loop devices (the local
    lab's image), each such loop device's stack (the loop, the file, its file system, the disks under
    it); else layer_stack(path) (an image directory, a block device, a container's private area)."""
    s = sysv or Sys(root)
    fid = s.file_id(path)
    out = []
    if fid is not None:
        for node, info in s.loops():
            if info.get('backing_id') == fid:
                majmin = s.majmin_of_node(node)
                if majmin:
                    out.extend(device_stack(majmin.strip(), sysv=s))
    return out or layer_stack(path, sysv=s)


def block_layers(layers):
    """The layers that are block devices (those /proc/diskstats counts), in stack order, each once."""
    out, seen = [], set()
    for layer in layers:
        if layer.get('kind') in ('filesystem', 'path', 'file', 'directory') or not layer.get('major_minor'):
            continue
        if layer['name'] in seen:
            continue
        seen.add(layer['name'])
        out.append(layer)
    return out
