# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/observe/sysinfo.py against a real Debian 12 VM's /proc files (tests/unit/fixtures/sysinfo)."""

from __future__ import annotations

import re

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.observe.sysinfo import (
    detect_virtualization, mount_for, parse_cpuinfo, parse_meminfo, parse_mountinfo,
    parse_os_release)


@pytest.fixture
def cpuinfo(read_fixture):
    return read_fixture('sysinfo/debian12-fc-vm.cpuinfo')


@pytest.fixture
def mounts(read_fixture):
    return parse_mountinfo(read_fixture('sysinfo/debian12-fc-vm.mountinfo'))


def test_cpuinfo(cpuinfo):
    info = parse_cpuinfo(cpuinfo)
    processors = re.findall(r'^processor\s*:', cpuinfo, re.M)
    mhz = [float(v) for v in re.findall(r'^cpu MHz\s*:\s*([0-9.]+)', cpuinfo, re.M)]
    assert info['logical_cpus'] == len(processors) == 2
    assert info['model'] == 'AMD EPYC'
    assert info['sockets'] == len(set(re.findall(r'^physical id\s*:\s*(\d+)', cpuinfo, re.M))) == 1
    assert info['cores'] == 2
    assert info['mhz'] == round(sum(mhz) / len(mhz), 1) == 2445.4


def test_cpuinfo_two_sockets_and_no_mhz():
    text = ''.join('processor\t: %d\nmodel name\t: X\nphysical id\t: %d\ncpu cores\t: 4\n\n' % (i, i // 4)
                   for i in range(8))
    info = parse_cpuinfo(text)
    assert info == {'model': 'X', 'logical_cpus': 8, 'sockets': 2, 'cores': 8, 'mhz': None}


def test_cpuinfo_empty():
    assert parse_cpuinfo('') == {'model': None, 'logical_cpus': 0, 'sockets': None, 'cores': None, 'mhz': None}


def test_meminfo(read_fixture):
    text = read_fixture('sysinfo/debian12-fc-vm.meminfo')
    total_kb = int(re.search(r'^MemTotal:\s+(\d+) kB$', text, re.M).group(1))
    avail_kb = int(re.search(r'^MemAvailable:\s+(\d+) kB$', text, re.M).group(1))
    assert parse_meminfo(text) == {'mem_total_bytes': total_kb * 1024, 'mem_available_bytes': avail_kb * 1024}
    assert total_kb == 24683584


def test_meminfo_ignores_garbage():
    assert parse_meminfo('MemTotal: lots\nnonsense\nHugePages_Total:       0\n') == {}


def test_os_release(read_fixture):
    info = parse_os_release(read_fixture('sysinfo/debian12.os-release'))
    assert info == {'id': 'debian', 'version_id': '12', 'pretty_name': 'Debian GNU/Linux 12 (bookworm)'}


def test_os_release_comments_and_single_quotes():
    text = "# ID=fake\nID='centos'\nVERSION_ID=\"4.2\"\n"
    assert parse_os_release(text) == {'id': 'centos', 'version_id': '4.2', 'pretty_name': None}


def test_mountinfo_fixture(read_fixture, mounts):
    text = read_fixture('sysinfo/debian12-fc-vm.mountinfo')
    assert len(mounts) == len([ln for ln in text.splitlines() if ' - ' in ln]) == 20
    root = [m for m in mounts if m['mountpoint'] == '/']
    assert root == [{'mountpoint': '/', 'major_minor': '254:0', 'fstype': 'ext4', 'source': '/dev/vda',
                     'options': 'rw,relatime,rw,discard,resv_strict,resuid=65534,resgid=65534'}]
    assert [m['major_minor'] for m in mounts if m['mountpoint'] == '/dev/shm'] == ['0:23', '0:27']


def test_mountinfo_escapes_and_optional_fields():
    # the kernel's own example (proc(5)): optional field "master:1" before the separator, a space escaped
    line = r'36 35 98:0 /mnt1 /mnt/my\040dir rw,noatime master:1 - ext3 /dev/my\134disk rw,errors=continue'
    (m,) = parse_mountinfo(line + '\nnot a mountinfo line\n')
    assert m == {'mountpoint': '/mnt/my dir', 'major_minor': '98:0', 'fstype': 'ext3', 'source': '/dev/my\\disk',
                 'options': 'rw,noatime,rw,errors=continue'}


@pytest.mark.parametrize('path,mountpoint,fstype,major_minor', [
    ('/var/tmp/benchlab', '/', 'ext4', '254:0'),
    ('/', '/', 'ext4', '254:0'),
    ('/dev/shm/bench', '/dev/shm', 'tmpfs', '0:27'),  # mounted twice: the last one wins
    ('/dev/shm', '/dev/shm', 'tmpfs', '0:27'),
    ('/dev/shmx', '/dev', 'devtmpfs', '0:6'),  # a prefix of the name is not a parent directory
    ('/sys/fs/cgroup/cpuacct/x', '/sys/fs/cgroup/cpuacct', 'cgroup', '0:30'),
    ('/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu', 'cgroup', '0:29'),
    ('/var/tmp/../../dev/shm/x', '/dev/shm', 'tmpfs', '0:27'),
])
def test_mount_for(mounts, path, mountpoint, fstype, major_minor):
    m = mount_for(path, mounts)
    assert (m['mountpoint'], m['fstype'], m['major_minor']) == (mountpoint, fstype, major_minor)


def test_mount_for_without_mounts():
    assert mount_for('/var/tmp', []) is None


def test_detect_virtualization_from_fixture(read_fixture):
    word = read_fixture('sysinfo/debian12-fc-vm.detect-virt')
    assert word == 'docker\n'
    assert detect_virtualization(word) == {'type': 'docker', 'role': 'container', 'source': 'systemd-detect-virt'}


@pytest.mark.parametrize('word,role', [
    ('none\n', 'host'), ('kvm\n', 'guest'), ('qemu', 'guest'), ('microsoft', 'guest'), ('openvz\n', 'container'),
    ('lxc', 'container'), ('systemd-nspawn', 'container'), ('wsl', 'container'),
])
def test_detect_virtualization_words(word, role):
    assert detect_virtualization(word) == {'type': word.strip(), 'role': role, 'source': 'systemd-detect-virt'}


def test_detect_virtualization_word_wins_over_evidence(cpuinfo):
    assert detect_virtualization('kvm', cpuinfo_text=cpuinfo, proc_vz=True, dockerenv=True)['type'] == 'kvm'


def test_detect_virtualization_evidence(cpuinfo):
    assert ' hypervisor' in cpuinfo
    assert detect_virtualization('', cpuinfo_text=cpuinfo) == {
        'type': 'vm-other', 'role': 'guest', 'source': '/proc/cpuinfo hypervisor flag'}
    assert detect_virtualization(None, proc_vz=True)['type'] == 'openvz'
    assert detect_virtualization(None, pid1_environ='PATH=/bin\0container=lxc\0') == {
        'type': 'lxc', 'role': 'container', 'source': '/proc/1/environ'}
    assert detect_virtualization('  \n', dockerenv=True)['type'] == 'docker'
    assert detect_virtualization() == {'type': 'none', 'role': 'host', 'source': 'no evidence of virtualization'}
    no_flag = cpuinfo.replace(' hypervisor', '')
    assert detect_virtualization('', cpuinfo_text=no_flag)['type'] == 'none'
