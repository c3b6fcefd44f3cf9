# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The one guard every module that writes a block device goes through (dd, fio, drbd_md, mkfs, ...).

A device may be written only when nothing uses it: not the device, not one of its partitions, and
(for a partition) not its whole disk directly. "Uses" means every way Linux records it:

- mounted: a /proc/self/mountinfo entry whose major:minor (or source device) is the device or one
  of its partitions;
- holders: a non-empty sysfs ``holders/`` (device-mapper/LVM/dm-crypt/multipath, md RAID, DRBD,
  bcache, ...) of the device or one of its partitions;
- swap: an active /proc/swaps entry on the device or one of its partitions;
- busy: ``open(O_EXCL)`` fails with EBUSY (the kernel's own answer: any exclusive opener, also
  ones the three lists above miss). Checked last.

On top of that the caller must have said ``destructive: true``, and a device that carries a
signature (file system, partition table, LVM, RAID, swap, LUKS, DRBD meta-data ...) is refused
unless ``force: true``. Signatures come from ``blkid -p`` when it exists, and from a small table of
superblock magics read directly otherwise (or when blkid found nothing).

Everything is found from the device's major:minor (st_rdev) through /sys/dev/block/<maj:min>, so
symlinks (/dev/disk/by-id/...) and renamed nodes cannot hide a device. The `sysfs` and `proc`
arguments exist for the unit tests, which build such trees in a temporary directory.
"""

import errno
import os
import shutil
import stat
import struct
import subprocess

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import read_text
from ansible_collections.benchlab.bench.plugins.module_utils.observe.layers import Sys
from ansible_collections.benchlab.bench.plugins.module_utils.observe.layers import sorted_listdir as _listdir
from ansible_collections.benchlab.bench.plugins.module_utils.observe.sysinfo import parse_mountinfo, unescape_octal

OPTION_DESTRUCTIVE = 'destructive: true'
OPTION_FORCE = 'force: true'

# DRBD internal meta-data: the super block sits 4096 bytes before the end of the backing device,
# its 32-bit big-endian magic at byte 60 of it (drbdmeta.c DRBD_MD_MAGIC_08/_84_UNCLEAN/_09,
# DRBD_MAGIC 0x83740267 + 4/5/6; libblkid's drbd probe reads the same place).
DRBD_MD_OFFSET = 4096
DRBD_MAGIC_OFFSET = 60
DRBD_MAGICS = {
    0x8374026b: 'drbd (8.4 meta-data)',
    0x8374026c: 'drbd (8.4 meta-data, unclean)',
    0x8374026d: 'drbd (9 meta-data)',
}

# (name, offset from the start, magic bytes)
MAGICS = (
    ('xfs', 0, b'XFSB'),
    ('crypto_LUKS', 0, b'LUKS\xba\xbe'),
    ('gpt', 512, b'EFI PART'),
    ('gpt', 4096, b'EFI PART'),             # disks with 4096-byte sectors
    ('ext2/3/4', 1080, b'\x53\xef'),
    ('btrfs', 65600, b'_BHRfS_M'),
) + tuple(('swap', page - 10, magic) for page in (4096, 8192, 16384, 65536)   # at the end of the first page
          for magic in (b'SWAPSPACE2', b'SWAP-SPACE'))


class DeviceGuardError(Exception):
    """A refusal; str(e) is the user-facing message (device, what holds it, how to release it)."""


def is_block_device(path):
    """True when `path` (followed through symlinks) is a block device node."""
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except (OSError, ValueError, TypeError):
        return False


def major_minor(path):
    """'major:minor' of a block device node, or None for anything else."""
    try:
        st = os.stat(path)
    except (OSError, ValueError, TypeError):
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return '%d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))


# ---- sysfs --------------------------------------------------------------------------------------

def _read(path):
    return read_text(path, '').strip()


def sysfs_node(majmin, sysfs='/sys'):
    """The device's sysfs directory (/sys/dev/block/<maj:min> resolved), or None."""
    link = os.path.join(sysfs, 'dev', 'block', majmin)
    if not os.path.exists(link):
        return None
    return os.path.realpath(link)


def _node_info(node):
    return {'name': os.path.basename(node), 'major_minor': _read(os.path.join(node, 'dev')), 'node': node}


def partitions_of(node):
    """The partitions of a whole-disk sysfs node: children that carry a `partition` file."""
    return [_node_info(os.path.join(node, child)) for child in _listdir(node)
            if os.path.isfile(os.path.join(node, child, 'partition'))]


def parent_of(node):
    """For a partition's sysfs node, its whole disk's node info; None for a whole disk."""
    if not os.path.isfile(os.path.join(node, 'partition')):
        return None
    return _node_info(os.path.dirname(node))


def holders_of(node, sysfs='/sys'):
    """[{name, kind, dm_name, dm_uuid}] for every entry of the node's holders/ directory."""
    out = []
    for h in _listdir(os.path.join(node, 'holders')):
        base = os.path.join(sysfs, 'block', h)
        dm_name = _read(os.path.join(base, 'dm', 'name')) or None
        dm_uuid = _read(os.path.join(base, 'dm', 'uuid')) or None
        if dm_name or h.startswith('dm-'):
            kind = 'device-mapper'
        elif h.startswith('md'):
            kind = 'md'
        elif h.startswith('drbd'):
            kind = 'drbd'
        elif h.startswith('bcache'):
            kind = 'bcache'
        else:
            kind = 'other'
        out.append({'name': h, 'kind': kind, 'dm_name': dm_name, 'dm_uuid': dm_uuid})
    return out


def device_size(node, path=None):
    """Size in bytes: sysfs `size` (512-byte sectors), else the end of the opened device."""
    size = _read(os.path.join(node, 'size')) if node else ''
    if size.isdigit():
        return int(size) * 512
    if path:
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                return os.lseek(fd, 0, os.SEEK_END)
            finally:
                os.close(fd)
        except OSError:
            pass
    return None


def block_device_size(path, sysfs='/sys'):
    """Size in bytes of block device `path` (None when it is not one or cannot be read)."""
    mm = major_minor(path)
    if mm is None:
        return None
    return device_size(sysfs_node(mm, sysfs), path)


def overlap(path_a, path_b, sysfs='/sys', resolve=major_minor):
    """None, or why block devices `path_a` and `path_b` share blocks: the same device (also under
    another name: major:minor decides), or one is a partition of the other. Two partitions of one
    disk do not overlap."""
    mm_a, mm_b = resolve(path_a), resolve(path_b)
    if mm_a is None or mm_b is None:
        return None
    if mm_a == mm_b:
        return '%s and %s are the same device (%s)' % (path_a, path_b, mm_a)
    for whole, part, mm_whole, mm_part in ((path_a, path_b, mm_a, mm_b), (path_b, path_a, mm_b, mm_a)):
        node = sysfs_node(mm_part, sysfs)
        parent = parent_of(node) if node else None
        if parent and parent['major_minor'] == mm_whole:
            return '%s is a partition of %s' % (part, whole)
    return None


# ---- /proc --------------------------------------------------------------------------------------

def parse_swaps(text):
    """/proc/swaps -> [{filename, type}] (octal escapes undone, ' (deleted)' removed)."""
    out = []
    for line in (text or '').splitlines()[1:]:
        parts = line.split()
        if len(parts) > 2 and parts[1] == '(deleted)':   # the kernel escapes that space as \040; be lenient
            parts[0] += '\\040(deleted)'
            del parts[1]
        if len(parts) < 2:
            continue
        name = unescape_octal(parts[0])
        if name.endswith('(deleted)'):
            name = name[:-len('(deleted)')].rstrip()
        out.append({'filename': name, 'type': parts[1]})
    return out


def mounts_on(majmins, mounts):
    """The mountinfo entries whose device is one of `majmins` (by major:minor, or by the source
    node's major:minor: btrfs reports an anonymous 0:N in mountinfo)."""
    found = []
    for m in mounts:
        src_mm = major_minor(m['source']) if m['source'].startswith('/') else None
        if m['major_minor'] in majmins or (src_mm and src_mm in majmins):
            found.append(m)
    return found


def swaps_on(majmins, swaps, resolve=major_minor):
    """The active swap areas on one of `majmins` (partition/device swaps; a swap file lives on a
    file system and that file system's mount is found by mounts_on)."""
    return [s for s in swaps if s['type'] == 'partition' and resolve(s['filename']) in majmins]


# ---- signatures ---------------------------------------------------------------------------------

def _blkid_bin():
    found = shutil.which('blkid')
    if found:
        return found
    for d in ('/usr/sbin', '/sbin', '/usr/bin', '/bin'):
        p = os.path.join(d, 'blkid')
        if os.access(p, os.X_OK):
            return p
    return None


def _parse_export(text):
    out = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition('=')
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def blkid_signature(path):
    """What `blkid -p -o export` finds: a description, '' when it found nothing, None when blkid
    is absent or could not probe."""
    blkid = _blkid_bin()
    if not blkid:
        return None
    try:
        proc = subprocess.Popen([blkid, '-p', '-o', 'export', path], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True)
        out, err = proc.communicate()
    except OSError:
        return None
    if proc.returncode == 2:      # nothing found
        return ''
    if proc.returncode == 8:      # ambivalent: more than one signature
        return 'several signatures (blkid: %s)' % (err.strip() or 'ambivalent result')
    if proc.returncode != 0:
        return None
    values = _parse_export(out)
    parts = []
    if values.get('TYPE'):
        kind = values['TYPE']
        if kind == 'drbd':
            kind = 'DRBD meta-data %s' % values.get('VERSION', '')
        parts.append(kind.strip() + (' labelled %r' % values['LABEL'] if values.get('LABEL') else ''))
    if values.get('PTTYPE'):
        parts.append('a %s partition table' % values['PTTYPE'])
    # PART_ENTRY_* alone only describe the partition's place in its disk's table: no signature
    return '; '.join(parts)


def _mbr_has_partition(sector0):
    if len(sector0) < 512 or sector0[510:512] != b'\x55\xaa':
        return False
    for i in range(4):
        entry = sector0[446 + 16 * i:446 + 16 * (i + 1)]
        # type byte nonzero and a nonzero sector count
        if entry[4:5] != b'\x00' and struct.unpack('<I', entry[12:16])[0] != 0:
            return True
    return False


def magic_signature(path, size=None):
    """The superblock magics found by reading `path` directly: a description or ''."""
    found = []
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return ''
    try:
        def read_at(off, n):
            try:
                return os.pread(fd, n, off)
            except OSError:
                return b''
        if size is None:
            size = os.lseek(fd, 0, os.SEEK_END)
        for name, off, magic in MAGICS:
            if off + len(magic) <= size and read_at(off, len(magic)) == magic and name not in found:
                found.append(name)
        head = read_at(0, 4 * 512)
        if any(head[s * 512:s * 512 + 8] == b'LABELONE' for s in range(4)):
            found.append('LVM2_member')
        if _mbr_has_partition(head[:512]) and 'gpt' not in found:
            found.append('dos partition table')
        if size and size >= DRBD_MD_OFFSET:
            raw = read_at(size - DRBD_MD_OFFSET + DRBD_MAGIC_OFFSET, 4)
            if len(raw) == 4:
                magic = struct.unpack('>I', raw)[0]
                if magic in DRBD_MAGICS:
                    found.append(DRBD_MAGICS[magic])
    finally:
        os.close(fd)
    return ', '.join(found)


def signature_of(path, size=None):
    """blkid's verdict when it has one, the magic table when blkid is absent or found nothing
    (DRBD meta-data and old formats some blkid builds do not know). None when clean."""
    via_blkid = blkid_signature(path)
    via_magic = magic_signature(path, size)
    if via_blkid:
        if via_magic and 'drbd' in via_magic and 'DRBD' not in via_blkid:
            return '%s; %s' % (via_blkid, via_magic)
        return via_blkid
    return via_magic or None


# ---- the guard ----------------------------------------------------------------------------------

def _holder_text(h):
    if h['kind'] == 'device-mapper':
        uuid = h.get('dm_uuid') or ''
        name = h.get('dm_name') or h['name']
        what = 'device-mapper %s (%s)' % (h['name'], name) if h.get('dm_name') else 'device-mapper %s' % h['name']
        if uuid.startswith('LVM-'):
            how = 'deactivate the LVM volume (vgchange -an <its volume group>, or lvchange -an)'
        elif uuid.startswith('CRYPT-'):
            how = 'close it (cryptsetup close %s)' % name
        else:
            how = 'remove the mapping (dmsetup remove %s, or vgchange -an for LVM)' % name
        return what, how
    if h['kind'] == 'md':
        return 'md RAID /dev/%s' % h['name'], 'stop it (mdadm --stop /dev/%s)' % h['name']
    if h['kind'] == 'drbd':
        return 'DRBD /dev/%s' % h['name'], 'take its resource down (drbdadm down <resource of /dev/%s>)' % h['name']
    if h['kind'] == 'bcache':
        return 'bcache /dev/%s' % h['name'], 'detach/stop the bcache device'
    return 'holder %s' % h['name'], 'release /dev/%s first' % h['name']


def device_usage(majmin, sysfs='/sys', proc='/proc', resolve=major_minor):
    """Everything that uses device `majmin`, from sysfs and proc alone (no device access).

    Returns {'name', 'node', 'parent', 'partitions', 'problems': [(text, how to release)]}.
    `resolve` maps a /proc/swaps file name to major:minor (the unit tests pass a table)."""
    node = sysfs_node(majmin, sysfs)
    if node is None:
        raise DeviceGuardError('block device %s has no sysfs entry %s/dev/block/%s: cannot tell what uses it'
                               % (majmin, sysfs, majmin))
    info = _node_info(node)
    parts = partitions_of(node)
    parent = parent_of(node)
    # what counts as "this device": itself and its partitions; a partition's whole disk is checked
    # only for direct use (its other partitions are none of our business).
    targets = [info] + parts + ([parent] if parent else [])
    mounts = parse_mountinfo(read_text(os.path.join(proc, 'self', 'mountinfo')))
    swaps = parse_swaps(read_text(os.path.join(proc, 'swaps')))
    problems = []
    for t in targets:
        dev = '/dev/%s' % t['name']
        own = '' if t is info else (' (its whole disk)' if t is parent else ' (its partition)')
        for m in mounts_on([t['major_minor']], mounts):
            problems.append(('%s%s is mounted on %s (%s)' % (dev, own, m['mountpoint'], m['fstype']),
                             'umount %s' % m['mountpoint']))
        for s in swaps_on([t['major_minor']], swaps, resolve):
            problems.append(('%s%s is active swap' % (dev, own), 'swapoff %s' % s['filename']))
        for h in holders_of(t['node'], sysfs):
            what, how = _holder_text(h)
            problems.append(('%s%s is held by %s' % (dev, own, what), how))
    return {'name': info['name'], 'node': node, 'major_minor': majmin, 'parent': parent['name'] if parent else None,
            'partitions': [p['name'] for p in parts], 'problems': problems}


# ---- the storage below, and who else reaches it -------------------------------------------------

def _overlaps(a_start, a_end, b_start, b_end):
    return a_start < b_end and b_start < a_end


def _span(start, end):
    return 'bytes %d-%d' % (start, end - 1) if end > start else 'no bytes'


def _loop_span(info, size):
    """(start, end) of the bytes of its backing file or device a loop device reaches (its size in
    sysfs already counts its sizelimit; unknown: to the end)."""
    offset = info.get('offset') or 0
    return offset, offset + size if size else float('inf')


def _reach(majmin, s):
    """Walk down from device `majmin`: every device and backing file its blocks lie on, with the
    byte range it covers there: [{kind: 'dev' (key: major:minor) or 'file' (key: the file's
    (st_dev, inode) on a live system, else its path), key, name, start, end, via (how the written
    device gets there, for messages), by: 'target', 'partition', 'loop' or 'slave' (below
    device-mapper, md and DRBD, whose maps sysfs does not show: then the whole device counts)}]."""
    node = s.node(majmin)
    name = '/dev/%s' % os.path.basename(node or majmin)
    out = [dict(kind='dev', key=majmin, name=name, start=0, end=(s.size_bytes(node) if node else 0) or 0, via=name,
                by='target')]
    seen = set([('dev', majmin)])
    i = 0
    while i < len(out) and len(out) < 64:
        cur = out[i]
        i += 1
        node = s.node(cur['key']) if cur['kind'] == 'dev' else None
        if node is None:
            continue
        start, end, via = cur['start'], cur['end'], cur['via']
        below = []
        part = s.partition(node)
        if part:
            parent, pstart, _psize = part
            pname = '/dev/%s' % os.path.basename(parent)
            below.append(dict(kind='dev', key=s.majmin_of_node(parent), name=pname, start=pstart + start,
                              end=pstart + end, via='%s, a partition of %s' % (via, pname), by='partition'))
        elif s.kind(node)[0] == 'loop':
            info = s.loop_info(node) or {}
            lo, hi = (info.get('offset') or 0) + start, (info.get('offset') or 0) + end
            if info.get('backing_majmin'):
                bnode = s.node(info['backing_majmin'])
                bname = '/dev/%s' % os.path.basename(bnode) if bnode else info['backing_majmin']
                below.append(dict(kind='dev', key=info['backing_majmin'], name=bname, start=lo, end=hi, by='loop',
                                  via='%s, a loop device over %s (%s of it)' % (via, bname, _span(lo, hi))))
            elif info.get('backing_file'):
                fname = info['backing_file']
                below.append(dict(kind='file', key=info.get('backing_id') or fname, name=fname, start=lo, end=hi,
                                  by='loop', via='%s, a loop device over the file %s (%s of it)' % (
                                      via, fname, _span(lo, hi))))
        else:
            for slave in s.slaves(node):
                sname = '/dev/%s' % os.path.basename(slave)
                below.append(dict(kind='dev', key=s.majmin_of_node(slave), name=sname, start=0,
                                  end=s.size_bytes(slave) or 0, via='%s, which sits on %s' % (via, sname), by='slave'))
        for entry in below:
            if entry['key'] and (entry['kind'], entry['key']) not in seen:
                seen.add((entry['kind'], entry['key']))
                out.append(entry)
    return out


def _exclusive_busy(name, s):
    """On a live system: True when /dev/<name> exists and O_EXCL gives EBUSY."""
    if not s.live:
        return False
    path = '/dev/%s' % name
    if not os.path.exists(path):
        return False
    return _exclusive_open_error(path) == errno.EBUSY


def _busy_text(name):
    return ('%s is busy (opened exclusively: a mount in another mount namespace, LVM, md, a program)' % name,
            'find it with `fuser -vm %s` and release it' % name)


def _in_use(majmin, s, ctx, depth=0):
    """What uses device `majmin` (another device that reaches the storage being written): it is
    mounted, swap, held or busy, or one of its partitions or a loop device over it is (recursively).
    [(text, how to release)]."""
    node = s.node(majmin)
    if node is None or depth > 8:
        return []
    name = '/dev/%s' % os.path.basename(node)
    found = _direct_use(majmin, node, name, s, ctx, holders=True)
    if not found and _exclusive_busy(os.path.basename(node), s):
        found.append(_busy_text(name))
    for part in s.partitions(node):
        found.extend(_in_use(s.majmin_of_node(part), s, ctx, depth + 1))
    for lnode, info in s.loops():
        if info.get('backing_majmin') == majmin:
            lname = '/dev/%s' % os.path.basename(lnode)
            found.extend(('%s (a loop device over %s): %s' % (lname, name, text), how)
                         for text, how in _in_use(s.majmin_of_node(lnode), s, ctx, depth + 1))
    return found


def _direct_use(majmin, node, name, s, ctx, holders=True, skip_holders=()):
    """[(text, how)] for device `majmin` itself being mounted, active swap or (unless `holders` is
    false) held by a holder not in `skip_holders`."""
    found = []
    for m in mounts_on([majmin], ctx['mounts']):
        found.append(('%s is mounted on %s (%s)' % (name, m['mountpoint'], m['fstype']), 'umount %s' % m['mountpoint']))
    for sw in swaps_on([majmin], ctx['swaps'], ctx['resolve']):
        found.append(('%s is active swap' % name, 'swapoff %s' % sw['filename']))
    if holders:
        for h in holders_of(node, s.sysfs):
            if h['name'] not in skip_holders:
                what, how = _holder_text(h)
                found.append(('%s is held by %s' % (name, what), how))
    return found


def _same_file(info, key):
    if isinstance(key, tuple):
        return info.get('backing_id') == key
    return info.get('backing_file') == key and not info.get('deleted')


def _file_users(key, path, s, swaps):
    """A backing file's other users on a live system: active swap on it, processes with it open
    (this process left out). [(text, how)]."""
    found = []
    if not isinstance(key, tuple) or not s.live:
        return found
    for sw in swaps:
        if sw['type'] == 'file' and s.file_id(sw['filename']) == key:
            found.append(('the file %s is active swap' % path, 'swapoff %s' % sw['filename']))
    me = str(os.getpid())
    for pid in _listdir(s.proc()):
        if not pid.isdigit() or pid == me:
            continue
        fd_dir = s.proc(pid, 'fd')
        for fd in _listdir(fd_dir):
            try:
                st = os.stat(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == key:
                comm = read_text(s.proc(pid, 'comm'), '?').strip()
                found.append(('the file %s is open in process %s (%s)' % (path, pid, comm),
                              'stop that process or let it close the file'))
                break
    return found


def _below_problems(entry, node, s, ctx, chain_names):
    """A device the written blocks lie on (not the written device itself): mounted, swap, held by
    something outside the chain, or (under a loop device, which claims nothing) busy."""
    found = _direct_use(entry['key'], node, entry['name'], s, ctx,
                        holders=entry['by'] != 'slave', skip_holders=chain_names)
    # below dm/md/DRBD the other holders are that layer's own business (LVM's other volumes);
    # a partition's disk is claimed by its mounted partitions, dm/md/DRBD claim their devices: only
    # under a loop device does an exclusive opener mean someone else
    if entry['by'] == 'loop' and not found and _exclusive_busy(os.path.basename(node), s):
        found.append(_busy_text(entry['name']))
    return found


def _other_reachers(entry, node, s, ctx, chain):
    """The OTHER devices that reach the bytes of `entry`: overlapping partitions of a device, loop
    devices over the same device or file at an overlapping range; [(text, how)] for those in use."""
    found = []
    start, end, via = entry['start'], entry['end'], entry['via']
    if entry['kind'] == 'dev':
        for part in s.partitions(node):
            pmm, pinfo = s.majmin_of_node(part), s.partition(part)
            if pmm in chain or pinfo is None:
                continue
            pstart, pend = pinfo[1], pinfo[1] + (pinfo[2] or 0)
            if _overlaps(start, end, pstart, pend):
                found.extend(('%s: the partition /dev/%s (%s of %s) overlaps it and is in use: %s' % (
                    via, os.path.basename(part), _span(pstart, pend), entry['name'], text), how)
                    for text, how in _in_use(pmm, s, ctx))
        others = [(n, i) for n, i in s.loops() if i.get('backing_majmin') == entry['key']]
    else:
        others = [(n, i) for n, i in s.loops() if _same_file(i, entry['key'])]
    for lnode, info in others:
        lmm = s.majmin_of_node(lnode)
        if lmm in chain:
            continue
        lstart, lend = _loop_span(info, s.size_bytes(lnode))
        if _overlaps(start, end, lstart, lend):
            found.extend(('%s: /dev/%s reaches the same bytes (a loop device over %s, %s) and is in use: %s' % (
                via, os.path.basename(lnode), entry['name'], _span(lstart, lend), text), how)
                for text, how in _in_use(lmm, s, ctx))
    return found


def stack_usage(majmin, sysfs='/sys', proc='/proc', resolve=major_minor):
    """The problems below device `majmin` and beside it: every device and file its blocks lie on
    (a partition's disk, a loop device's backing file or device at its offset, recursively, the
    devices under device-mapper/md/DRBD) that is mounted, swap, held or busy, and every OTHER
    device that reaches the same bytes (a loop device over the same file or device at an
    overlapping range, an overlapping partition) that is. [(text, how to release)]."""
    s = Sys(sysfs=sysfs, proc=proc)
    ctx = dict(mounts=s.mounts(), swaps=parse_swaps(read_text(s.proc('swaps'))), resolve=resolve)
    reach = _reach(majmin, s)
    chain = set(e['key'] for e in reach if e['kind'] == 'dev')
    chain_names = set(os.path.basename(s.node(c) or '') for c in chain)
    problems = []
    for entry in reach:
        if entry['kind'] == 'file':
            problems.extend(('%s: %s' % (entry['via'], text), how)
                            for text, how in _file_users(entry['key'], entry['name'], s, ctx['swaps']))
            problems.extend(_other_reachers(entry, None, s, ctx, chain))
            continue
        node = s.node(entry['key'])
        if node is None:
            continue
        if entry['by'] != 'target':
            problems.extend(('%s: %s' % (entry['via'], text), how)
                            for text, how in _below_problems(entry, node, s, ctx, chain_names))
        problems.extend(_other_reachers(entry, node, s, ctx, chain))
    out = []
    for p in problems:
        if p not in out:
            out.append(p)
    return out


def _describe(path, name):
    dev = '/dev/%s' % name
    return path if os.path.normpath(path) == dev else '%s (%s)' % (path, dev)


def _exclusive_open_error(path):
    """None when the device can be opened O_EXCL, else the errno."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL)
    except OSError as e:
        return e.errno
    os.close(fd)
    return None


def check_device_writable(path, destructive, force=False, sysfs='/sys', proc='/proc', what='write'):
    """Raise DeviceGuardError unless block device `path` may be written (see the module docstring).

    Returns {'path', 'name', 'major_minor', 'size_bytes', 'signature', 'partitions', 'parent'}."""
    mm = major_minor(path)
    if mm is None:
        if not os.path.exists(path):
            raise DeviceGuardError('refusing to %s %s: it does not exist' % (what, path))
        raise DeviceGuardError('refusing to %s %s as a block device: it is not one' % (what, path))
    usage = device_usage(mm, sysfs, proc)
    shown = _describe(path, usage['name'])
    problems = usage['problems'] + [p for p in stack_usage(mm, sysfs, proc) if p not in usage['problems']]
    if problems:
        lines = ['refusing to %s %s: it is in use, and benchlab never writes a device in use:' % (what, shown)]
        for text, how in problems:
            lines.append('- %s: %s' % (text, how))
        lines.append('Release it first (or choose another device); no option overrides this.')
        raise DeviceGuardError('\n'.join(lines))
    if not destructive:
        raise DeviceGuardError('refusing to %s %s: it is a block device and writing it destroys its data; '
                               'set %s to allow it' % (what, shown, OPTION_DESTRUCTIVE))
    size = device_size(usage['node'], path)
    signature = signature_of(path, size)
    if signature and not force:
        raise DeviceGuardError('refusing to %s %s: it carries %s, which writing destroys; if that data may go, '
                               'set %s (on top of %s)' % (what, shown, signature, OPTION_FORCE, OPTION_DESTRUCTIVE))
    err = _exclusive_open_error(path)
    if err == errno.EBUSY:
        raise DeviceGuardError('refusing to %s %s: it is busy (another user holds it open exclusively: a mount, '
                               'LVM, md, DRBD, swap, a running program); find it with `fuser -vm %s` or '
                               '`lsof %s` and release it first' % (what, shown, path, path))
    if err is not None:
        raise DeviceGuardError('refusing to %s %s: cannot open it exclusively (%s)' % (what, shown, os.strerror(err)))
    return {'path': path, 'name': usage['name'], 'major_minor': mm, 'size_bytes': size, 'signature': signature,
            'partitions': usage['partitions'], 'parent': usage['parent']}
