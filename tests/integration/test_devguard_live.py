"""Every refusal class of the device guard (module_utils/run/devguard.py) proven through the modules that
would write, on REAL loop devices (root), with the data checked afterwards.

One set of loop devices, one per class, is made at once; then one ansible-playbook run sends every
writer at every one of them (dd write, fio with `filename=` the device, drbd_md create-md through a
drbd.conf naming it, dd copy onto it), each with the options that would let it write (destructive,
force) except what the class is about:

- the device mounted (ext4, a file on it); a partition of the disk mounted (`partx -a` nodes;
  `losetup -P` makes none here); active swap; busy (another process holds it open O_EXCL);
- a known signature without `force` (ext4 with a file on it; DRBD meta-data from `drbdmeta`);
- no `destructive` (also through a symlink: the message names the device behind it);
- a copy destination mounted, the same device as the input, a partition of the input.

Each must be refused with its reason, and the device's bytes (sha256 of a direct read of the whole
device), the file on it (sha256) and, for a file system, `e2fsck -fn` afterwards show nothing was
written. Then each device is released and the same writer run again must write (its sha256 changes):
so the comparisons above could fail. Device-mapper, md and DRBD holders do not exist on this kernel:
tests/vm/test_kvm_multi.py makes an LVM volume, an md mirror and a DRBD device that is up inside a TCG
guest and runs dd and fio against their members there.

Every loop device, partition node, mount, swap area and child process is released in `finally`,
also when an assertion fails. About 40 s here.
"""

import hashlib
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile

import pytest

from conftest import BIN, REPO, ansible_env, run

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for loop devices, mounts and swap')

MiB = 1024 * 1024
HOST = os.uname()[1]
# ext4 that writes nothing by itself once mounted (no lazy init thread), read without atime updates:
# a mounted device's bytes stay put unless something writes to it
MKFS = ['mkfs.ext4', '-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0']


def sh(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True, check=True).stdout.strip()


def sha256(path):
    """sha256 of a whole block device read with O_DIRECT (what is on it, not what a cache remembers),
    or of a file."""
    if not stat.S_ISBLK(os.stat(path).st_mode):
        return file_sha256(path)
    out = subprocess.run(['dd', 'if=%s' % path, 'iflag=direct', 'bs=1M', 'status=none'], stdout=subprocess.PIPE,
                         check=True).stdout
    return hashlib.sha256(out).hexdigest()


def file_sha256(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_mbr(dev, parts):
    """An msdos partition table with `parts` [(type byte, start sector, sectors)]: no sfdisk/fdisk here."""
    mbr = bytearray(512)
    for i, (ptype, start, count) in enumerate(parts):
        mbr[446 + 16 * i:446 + 16 * (i + 1)] = b'\x00\xff\xff\xff' + bytes([ptype]) + b'\xff\xff\xff' + \
            struct.pack('<II', start, count)
    mbr[510:512] = b'\x55\xaa'
    with open(dev, 'r+b') as f:
        f.write(bytes(mbr))
        f.flush()
        os.fsync(f.fileno())


def fsck_clean(dev):
    p = subprocess.run(['e2fsck', '-fn', dev], capture_output=True, text=True, check=False)
    assert p.returncode == 0, '%s: %s%s' % (dev, p.stdout, p.stderr)


class Loop:
    """One loop device over a sparse image; everything made on it is recorded and undone by close()."""

    def __init__(self, size=32 * MiB, random=False):
        fd, self.image = tempfile.mkstemp(prefix='devguard-', suffix='.img', dir='/var/tmp')
        os.close(fd)
        if random:
            with open(self.image, 'wb') as f:
                f.write(os.urandom(size))
        else:
            os.truncate(self.image, size)
        self.dev = None
        self.mounts, self.swaps, self.partitioned = [], [], False
        try:
            self.dev = sh('losetup', '-f', '--show', self.image)
        except BaseException:
            os.unlink(self.image)
            raise

    def partition(self):
        write_mbr(self.dev, [(0x83, 2048, 32 * 2048), (0x83, 34 * 2048, 16 * 2048)])
        self.partitioned = True
        sh('partx', '-a', self.dev)
        return self.dev + 'p1', self.dev + 'p2'

    def mount(self, dev, where):
        sh('mount', '-o', 'noatime', dev, where)
        self.mounts.append(where)

    def umount(self, where):
        sh('umount', where)
        self.mounts.remove(where)

    def swapon(self, dev):
        sh('swapon', '-p', '-2', dev)   # the lowest priority: the kernel's last choice
        self.swaps.append(dev)

    def swapoff(self, dev):
        sh('swapoff', dev)
        self.swaps.remove(dev)

    def close(self):
        errors = []
        for argv in ([['swapoff', s] for s in self.swaps] + [['umount', m] for m in reversed(self.mounts)]
                     + ([['partx', '-d', self.dev]] if self.partitioned and self.dev else [])
                     + ([['losetup', '-d', self.dev]] if self.dev else [])):
            p = subprocess.run(argv, capture_output=True, text=True, check=False)
            if p.returncode:
                errors.append('%s: %s' % (' '.join(argv), p.stderr.strip()))
        os.unlink(self.image)
        attached = sh('losetup', '-j', self.image) if os.path.exists(self.image) else ''
        assert not errors and not attached, errors


@pytest.fixture
def loop():
    """make(size=64 MiB, random=False) -> Loop; all closed at the end, also on failure."""
    made = []

    def make(size=64 * MiB, random=False):
        lo = Loop(size, random)
        made.append(lo)
        return lo
    try:
        yield make
    finally:
        for lo in made:
            lo.close()


def pages_swapped_out():
    """The kernel's count of pages it wrote to swap (/proc/vmstat pswpout), any swap area."""
    for line in open('/proc/vmstat').read().splitlines():
        name, _sep, value = line.partition(' ')
        if name == 'pswpout':
            return int(value)
    raise AssertionError('/proc/vmstat has no pswpout')


def swap_header_sha256(dev):
    """sha256 of the first page of a swap area (its header and signature, read with O_DIRECT): the
    kernel writes pages from the second page on and never the header; a writer starts at byte 0."""
    out = subprocess.run(['dd', 'if=%s' % dev, 'iflag=direct', 'bs=4096', 'count=1', 'status=none'],
                         stdout=subprocess.PIPE, check=True).stdout
    return hashlib.sha256(out).hexdigest()


def writers_play(cases, results):
    """One task per case {id, module, args}, errors ignored, every result saved to `results`."""
    tasks = [{'name': c['id'], 'benchlab.bench.%s' % c['module']: c['args'], 'register': 'r%d' % i,
              'ignore_errors': True} for i, c in enumerate(cases)]
    content = '{{ {%s} | to_json }}' % ', '.join('%s: r%d' % (json.dumps(c['id']), i) for i, c in enumerate(cases))
    tasks.append({'name': 'results', 'ansible.builtin.copy': {'dest': str(results), 'content': content, 'mode': '0600'}})
    return [{'name': 'device guard through the writers', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]


def run_writers(env, tmp_path, name, cases):
    book, results = tmp_path / ('%s.yml' % name), tmp_path / ('%s.json' % name)
    book.write_text(json.dumps(writers_play(cases, results)))
    p = run([BIN / 'ansible-playbook', '-i', REPO / 'inventories/local', book], env)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    return json.loads(results.read_text())


def dd(dev, **kw):
    args = {'path': dev, 'size': '4M', 'bs': '1M', 'destructive': True, 'force': True, 'guards': {'quiesce': False}}
    args.update(kw)
    return {'module': 'dd', 'args': args}


def fio(work, dev, **kw):
    args = {'path': str(work), 'rw': 'write', 'size': '4M', 'bs': '64k', 'options': {'filename': dev},
            'destructive': True, 'force': True, 'guards': {'quiesce': False}}
    args.update(kw)
    return {'module': 'fio', 'args': args}


def drbd_md(conf, name, **kw):
    return {'module': 'drbd_md', 'args': dict({'name': name, 'config_file': str(conf)}, **kw)}


def drbd_conf(path, disks):
    """A drbd.conf with one DRBD 9 resource per {name: disk} on this host (drbd_md reads it)."""
    text = ''
    for i, (name, disk) in enumerate(sorted(disks.items())):
        text += ('resource %s {\n  device /dev/drbd%d minor %d; disk %s; meta-disk internal;\n'
                 '  on %s { node-id 0; address 10.199.9.1:%d; }\n  on dg-peer { node-id 1; address 10.199.9.2:%d; }\n}\n'
                 % (name, 60 + i, 60 + i, disk, HOST, 7960 + i, 7960 + i))
    path.write_text(text)
    return path


@pytest.fixture(scope='module')
def guard_lab(tmp_path_factory):
    """Every class set up at once, the writers run against each, then each released and written."""
    tmp_path = tmp_path_factory.mktemp('guard')
    made = []

    def loop(size=32 * MiB, random=False):
        made.append(Loop(size, random))
        return made[-1]
    try:
        yield guard_run(tmp_path, loop, ansible_env(tmp_path))
    finally:
        for lo in made:
            lo.close()


def guard_run(tmp_path, loop, env):
    lab = {'work': tmp_path / 'work', 'mnt': {}, 'files': {}}
    lab['work'].mkdir()
    dev = lab['dev'] = {}

    def mounted_fs(name, lo, part=None):
        target = part or lo.dev
        subprocess.run(MKFS + [target], check=True, capture_output=True)
        mnt = tmp_path / ('mnt-' + name)
        mnt.mkdir()
        lo.mount(target, str(mnt))
        with open(mnt / 'precious', 'wb') as f:
            f.write(os.urandom(MiB))
        os.sync()
        lab['mnt'][name], lab['files'][name] = mnt, file_sha256(mnt / 'precious')
        return target

    los = {}
    los['mounted'] = loop()
    dev['mounted'] = mounted_fs('mounted', los['mounted'])
    los['partition'] = loop(64 * MiB)
    p1, p2 = los['partition'].partition()
    dev['partition'], dev['partition p1'], dev['partition p2'] = los['partition'].dev, mounted_fs(
        'partition', los['partition'], p1), p2
    los['swap'] = loop()
    dev['swap'] = los['swap'].dev
    sh('mkswap', '-q', dev['swap'])
    los['swap'].swapon(dev['swap'])
    los['busy'] = loop(random=True)
    dev['busy'] = los['busy'].dev
    holder = subprocess.Popen(
        [sys.executable, '-c', 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL); '
                               'print("held", flush=True); sys.stdin.read()', dev['busy']],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == 'held'
        los['ext4'] = loop()
        dev['ext4'] = mounted_fs('ext4', los['ext4'])
        los['ext4'].umount(str(lab['mnt']['ext4']))
        los['drbd'] = loop(random=True)
        dev['drbd'] = los['drbd'].dev
        if shutil.which('drbdmeta'):
            subprocess.run(['drbdmeta', '--force', '98', 'v08', dev['drbd'], 'internal', 'create-md', '1'],
                           stdin=subprocess.DEVNULL, capture_output=True, check=True)
        los['plain'] = loop(random=True)
        dev['plain'] = los['plain'].dev
        link = lab['link'] = tmp_path / 'by-id-link'
        os.symlink(dev['plain'], str(link))
        los['input'] = loop(random=True)
        dev['input'] = los['input'].dev
        los['destination'] = loop()
        dev['destination'] = mounted_fs('destination', los['destination'])
        conf = drbd_conf(tmp_path / 'drbd.conf', {
            'dg-mounted': dev['mounted'], 'dg-partition': dev['partition'], 'dg-swap': dev['swap'],
            'dg-busy': dev['busy'], 'dg-ext4': dev['ext4']})
        work = lab['work']
        copy = {'test': 'copy', 'input': dev['input']}
        cases = [
            dict(dd(dev['mounted']), id='mounted: dd'), dict(fio(work, dev['mounted']), id='mounted: fio'),
            dict(drbd_md(conf, 'dg-mounted', force=True), id='mounted: drbd_md'),
            dict(dd(dev['partition']), id='partition: dd'), dict(fio(work, dev['partition']), id='partition: fio'),
            dict(drbd_md(conf, 'dg-partition', force=True), id='partition: drbd_md'),
            dict(dd(dev['swap']), id='swap: dd'), dict(fio(work, dev['swap']), id='swap: fio'),
            dict(drbd_md(conf, 'dg-swap', force=True), id='swap: drbd_md'),
            dict(dd(dev['busy']), id='busy: dd'), dict(fio(work, dev['busy']), id='busy: fio'),
            dict(drbd_md(conf, 'dg-busy', force=True), id='busy: drbd_md'),
            dict(dd(dev['ext4'], force=False), id='ext4: dd'), dict(fio(work, dev['ext4'], force=False), id='ext4: fio'),
            dict(drbd_md(conf, 'dg-ext4'), id='ext4: drbd_md'),
            dict(dd(dev['drbd'], force=False), id='drbd: dd'), dict(fio(work, dev['drbd'], force=False), id='drbd: fio'),
            dict(dd(dev['plain'], destructive=False, force=False), id='plain: dd'),
            dict(fio(work, dev['plain'], destructive=False, force=False), id='plain: fio'),
            dict(dd(str(link), destructive=False, force=False), id='plain: dd through a symlink'),
            dict(dd(dev['destination'], **copy), id='copy: destination mounted'),
            dict(dd(dev['input'], **copy), id='copy: the same device'),
            dict(dd(dev['partition p2'], test='copy', input=dev['partition']), id='copy: a partition of the input'),
        ]
        swapped, header = pages_swapped_out(), swap_header_sha256(dev['swap'])
        shas = dict((k, sha256(v)) for k, v in dev.items())
        lab['refused'] = run_writers(env, tmp_path, 'refused', cases)
        lab['shas before'], lab['shas after'] = shas, dict((k, sha256(v)) for k, v in dev.items())
        lab['swap headers'] = (header, swap_header_sha256(dev['swap']))
        lab['kernel swapped out'] = pages_swapped_out() - swapped
        lab['files after'] = dict((k, file_sha256(m / 'precious')) for k, m in lab['mnt'].items() if k != 'ext4')
        assert os.listdir(str(work)) == [], 'a refused writer left files in its work directory'
        # released: unmounted (each file system checked), swap off, the holder gone
        for name in ('mounted', 'partition', 'destination'):
            los[name].umount(str(lab['mnt'][name]))
        lab['fsck'] = {}
        for name in ('mounted', 'partition p1', 'ext4', 'destination'):
            fsck_clean(dev[name])
            lab['fsck'][name] = True
        los['swap'].swapoff(dev['swap'])
    finally:
        holder.kill()
        holder.wait()
    released = dict((k, sha256(v)) for k, v in dev.items())
    lab['written'] = run_writers(env, tmp_path, 'written', [
        dict(dd(dev['mounted']), id='mounted'), dict(dd(dev['partition']), id='partition'),
        dict(dd(dev['swap']), id='swap'), dict(fio(lab['work'], dev['busy']), id='busy'),
        dict(dd(dev['ext4']), id='ext4'), dict(fio(lab['work'], dev['drbd']), id='drbd'),
        dict(dd(str(link)), id='plain'), dict(dd(dev['destination'], **copy), id='destination')])
    lab['shas released'], lab['shas written'] = released, dict((k, sha256(v)) for k, v in dev.items())
    lab['swap header written'] = swap_header_sha256(dev['swap'])
    return lab


CLASSES = [
    # class, devices whose bytes must not change, cases and what each refusal says
    ('mounted', ['mounted'], {'mounted: dd': ['is mounted on {mnt[mounted]}', 'in use', 'umount {mnt[mounted]}'],
                              'mounted: fio': ['is mounted on {mnt[mounted]}', 'in use'],
                              'mounted: drbd_md': ['refusing to create DRBD meta-data of resource dg-mounted',
                                                   'is mounted on {mnt[mounted]}']}),
    ('partition', ['partition'], {'partition: dd': ['{dev[partition p1]} (its partition) is mounted on'],
                                  'partition: fio': ['{dev[partition p1]} (its partition) is mounted on'],
                                  'partition: drbd_md': ['{dev[partition p1]} (its partition) is mounted on']}),
    ('swap', ['swap'], {'swap: dd': ['is active swap', 'swapoff {dev[swap]}'], 'swap: fio': ['is active swap'],
                        'swap: drbd_md': ['is active swap']}),
    ('busy', ['busy'], {'busy: dd': ['busy', 'another user holds it open exclusively'], 'busy: fio': ['busy'],
                        'busy: drbd_md': ['busy']}),
    ('ext4', ['ext4'], {'ext4: dd': ['carries ext4', 'force: true'], 'ext4: fio': ['carries ext4', 'force: true'],
                        'ext4: drbd_md': ['safe mode: refusing create-md for dg-ext4', 'ext4']}),
    ('drbd', ['drbd'], {'drbd: dd': ['DRBD meta-data', 'force: true'], 'drbd: fio': ['DRBD meta-data', 'force: true']}),
    ('plain', ['plain'], {'plain: dd': ['destructive: true'], 'plain: fio': ['destructive: true'],
                          'plain: dd through a symlink': ['{link} ({dev[plain]})', 'destructive: true']}),
    ('destination', ['destination', 'input'], {'copy: destination mounted': ['is mounted on {mnt[destination]}', 'in use']}),
    ('input', ['input'], {'copy: the same device': ['same device']}),
    ('partition p2', ['partition p2', 'partition'], {'copy: a partition of the input': [
        '{dev[partition p2]} is a partition of {dev[partition]}']}),
]


def test_every_guard_class_is_refused_by_every_writer_and_the_data_stays(guard_lab):
    if not shutil.which('drbdmeta'):
        pytest.fail('drbdmeta (drbd-utils) is not installed: the DRBD meta-data class cannot be made')
    lab, refused = guard_lab, guard_lab['refused']
    for cls, devices, cases in CLASSES:
        for case, words in cases.items():
            res = refused[case]
            assert res.get('failed'), '%s was not refused: %s' % (case, res)
            for w in words:
                w = w.format(**lab)
                assert w in res['msg'], '%s: %r not in %s' % (case, w, res['msg'])
            assert not res.get('bench_result'), case
        for d in devices:
            if d == 'swap' and lab['kernel swapped out']:
                # the kernel paged to the active swap area meanwhile (a memory cgroup at its limit pages
                # out with the machine's memory free; CI saw the bytes change with its use back at 0):
                # its pages are the kernel's, the header is what a writer would have overwritten
                assert lab['swap headers'][1] == lab['swap headers'][0], 'swap: its header changed'
                continue
            assert lab['shas after'][d] == lab['shas before'][d], '%s (%s): its bytes changed' % (d, cls)
    # the files on the mounted file systems, then a clean e2fsck -fn of each once unmounted
    assert lab['files after'] == dict((k, v) for k, v in lab['files'].items() if k != 'ext4')
    assert lab['fsck'] == {'mounted': True, 'partition p1': True, 'ext4': True, 'destination': True}


def test_released_the_same_writers_write(guard_lab):
    """The comparisons above could fail: once released (unmounted, swap off, the holder gone) or forced,
    each writer writes, and the device's bytes change."""
    lab = guard_lab
    for case, res in lab['written'].items():
        assert not res.get('failed'), '%s: %s' % (case, res.get('msg'))
        metrics = res['bench_result']['metrics']
        assert (metrics['bytes'] if res['bench_result']['tool'] == 'dd' else metrics['write_throughput'])['value'] > 0
    for name in ('mounted', 'partition', 'swap', 'busy', 'ext4', 'drbd', 'plain', 'destination'):
        assert lab['shas written'][name] != lab['shas released'][name], '%s: nothing was written' % name
    assert lab['shas written']['input'] == lab['shas released']['input']  # a copy reads its input only
    # the swap header the refusals are checked by when the kernel paged meanwhile: a writer overwrites it
    assert lab['swap header written'] != lab['swap headers'][0]
