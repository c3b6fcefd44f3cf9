# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""Pure parsers for the environment a benchmark ran in: /proc/cpuinfo, /proc/meminfo,
/etc/os-release and /proc/self/mountinfo, plus the virtualization verdict. (Whether a block
device is in use - mounted, held, swap - is devguard.py's business.)"""

import os


def parse_cpuinfo(text):
    """CPU model, logical CPU count, sockets, physical cores and the mean current MHz."""
    model = None
    count = 0
    mhz = []
    physical = set()
    cores = {}
    cur_phys = None
    for line in text.splitlines():
        key, sep, value = line.partition(':')
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == 'processor':
            count += 1
        elif key in ('model name', 'Processor', 'cpu model') and model is None:
            model = value
        elif key == 'cpu MHz':
            try:
                mhz.append(float(value))
            except ValueError:
                pass
        elif key == 'physical id':
            cur_phys = value
            physical.add(value)
        elif key == 'cpu cores' and cur_phys is not None:
            try:
                cores[cur_phys] = int(value)
            except ValueError:
                pass
    return {
        'model': model,
        'logical_cpus': count,
        'sockets': len(physical) or None,
        'cores': sum(cores.values()) or None,
        'mhz': round(sum(mhz) / len(mhz), 1) if mhz else None,
    }


def parse_meminfo(text):
    """MemTotal and MemAvailable in bytes."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(':')
        if not sep:
            continue
        parts = value.split()
        if not parts or not parts[0].isdigit():
            continue
        n = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == 'kB' else 1)
        if key == 'MemTotal':
            out['mem_total_bytes'] = n
        elif key == 'MemAvailable':
            out['mem_available_bytes'] = n
    return out


def parse_os_release(text):
    """ID, VERSION_ID and PRETTY_NAME of /etc/os-release."""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition('=')
        if sep and key.strip() and not key.startswith('#'):
            values[key.strip()] = value.strip().strip('"').strip("'")
    return {'id': values.get('ID'), 'version_id': values.get('VERSION_ID'),
            'pretty_name': values.get('PRETTY_NAME')}


def unescape_octal(field):
    """Undo the kernel's octal escapes of /proc/self/mountinfo and /proc/swaps (space, tab, newline
    and backslash become \\040 ...)."""
    out, i = '', 0
    while i < len(field):
        code = field[i + 1:i + 4]
        if field[i] == '\\' and len(code) == 3 and code.isdigit():
            out += chr(int(code, 8))
            i += 4
        else:
            out += field[i]
            i += 1
    return out


def parse_mountinfo(text):
    """/proc/self/mountinfo -> list of {mountpoint, fstype, source, options, major_minor}."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(' - ')
        if not sep:
            continue
        lf = left.split()
        rf = right.split()
        if len(lf) < 6 or len(rf) < 2:
            continue
        mount_opts = lf[5]
        super_opts = rf[2] if len(rf) > 2 else ''
        mounts.append({
            'mountpoint': unescape_octal(lf[4]),
            'major_minor': lf[2],
            'fstype': rf[0],
            'source': unescape_octal(rf[1]),
            'options': mount_opts + ((',' + super_opts) if super_opts else ''),
        })
    return mounts


def mount_for(path, mounts):
    """The mount holding `path` (the longest mountpoint prefix; the last one mounted wins)."""
    path = os.path.normpath(path)
    best = None
    for m in mounts:
        mp = m['mountpoint']
        if path == mp or path.startswith(mp.rstrip('/') + '/') or mp == '/':
            if best is None or len(mp) >= len(best['mountpoint']):
                best = m
    return best


def detect_virtualization(detect_virt_output=None, cpuinfo_text='', pid1_environ='', proc_vz=False,
                          dockerenv=False):
    """The virtualization type: systemd-detect-virt's word when available, else evidence.

    Returns {'type': 'none'|'kvm'|'lxc'|'openvz'|..., 'role': 'host'|'guest'|'container',
    'source': what decided it}.
    """
    word = (detect_virt_output or '').strip()
    if word:
        if word == 'none':
            role = 'host'
        elif word in ('openvz', 'lxc', 'lxc-libvirt', 'systemd-nspawn', 'docker', 'podman', 'wsl', 'proot',
                      'pouch', 'rkt', 'container-other'):
            role = 'container'
        else:
            role = 'guest'
        return {'type': word, 'role': role, 'source': 'systemd-detect-virt'}
    if proc_vz:
        # /proc/vz exists on OpenVZ hosts and containers; /proc/bc/0 only... keep it simple:
        return {'type': 'openvz', 'role': 'unknown', 'source': '/proc/vz'}
    if 'container=lxc' in pid1_environ:
        return {'type': 'lxc', 'role': 'container', 'source': '/proc/1/environ'}
    if dockerenv:
        return {'type': 'docker', 'role': 'container', 'source': '/.dockerenv'}
    if ' hypervisor' in cpuinfo_text:
        return {'type': 'vm-other', 'role': 'guest', 'source': '/proc/cpuinfo hypervisor flag'}
    return {'type': 'none', 'role': 'host', 'source': 'no evidence of virtualization'}
