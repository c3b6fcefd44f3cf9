# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise. Used by block device writers (modules dd, drbd_*; fiojob, benchrun).
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

from ansible_collections.benchlab.bench.plugins.module_utils.common import read_text
from ansible_collections.benchlab.bench.plugins.module_utils.sysinfo import parse_mountinfo, unescape_octal

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

def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


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
    if usage['problems']:
        lines = ['refusing to %s %s: it is in use, and benchlab never writes a device in use:' % (what, shown)]
        for text, how in usage['problems']:
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
