"""Every number explained, live (issue 30 phase 1): each evidence verdict fires on a run made to cause
it and stays quiet on its control, through the real modules (`ansible localhost -m`), their
observation (module_utils/observe/observe.py in BenchRun) and the controller's verdicts
(plugin_utils/explain/explain.py run_verdicts). Root: loop devices, mounts, a blkio cgroup, a netns.

- writes_elided: dd writes zeros into btrfs with compress-force on a loop device; the control writes
  random data there (stored as is: the bytes reach the loop device);
- served_from_cache: dd reads back a file it just wrote with the caches kept; the control drops them;
  fio's direct read on ext4 over a loop device without direct I/O, served by the page cache of the
  loop's image (flagged at the disk under it); the control is a direct-I/O loop after a cache drop;
- cpu_bound: bzip2 (the compress module); the control is a dd write, whose tool waits for the disk;
- device_bound: dd with O_DIRECT onto ext4 on a loop device in direct-I/O mode whose writes to the
  disk below are throttled for the test's blkio cgroup (v1) to 8 MB/s: the loop device's queue is
  never empty; the control is the bzip2 run (its devices idle);
- link_bound: iperf3 to a server in a network namespace over a veth pair shaped with tc (tbf, 40 Mbit/s)
  on the host's side; the control is the same link shaped at 1 Gbit/s with the client sending
  20 Mbit/s of UDP.

Everything made (loop devices, mounts, the cgroup, the namespace, the server) is removed in
`finally`. About 40 s in all, under the shared live lock.
"""

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import module

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.explain import explain_cell, run_verdicts

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for loop devices, mounts, cgroups and netns')

MiB = 1024 * 1024
BLKIO = Path('/sys/fs/cgroup/blkio')


def sh(*argv, check=True):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=check).stdout.strip()


class Undo(list):
    def close(self):
        for step in reversed(self):
            if callable(step):
                step()
            else:
                subprocess.run(step, capture_output=True, check=False)


@pytest.fixture
def undo():
    u = Undo()
    try:
        yield u
    finally:
        u.close()


def loop_fs(undo, tmp_path, mkfs, size=256 * MiB, opts=None, direct_io=False):
    fd, img = tempfile.mkstemp(prefix='explain-', suffix='.img', dir='/var/tmp')
    os.close(fd)
    undo.append(['rm', '-f', img])
    os.truncate(img, size)
    dev = sh('losetup', '-f', '--show', *(['--direct-io=on'] if direct_io else []), img)
    undo.append(['losetup', '-d', dev])
    sh(*(mkfs + [dev]))
    mnt = tempfile.mkdtemp(prefix='explain-mnt-', dir=str(tmp_path))
    sh('mount', *(['-o', opts] if opts else []), dev, mnt)
    undo.append(['umount', mnt])
    return dev, mnt


def record(env, name, args):
    rc, _status, res = module(env, name, args)
    assert rc == 0, res
    recs = res.get('bench_results') or [res['bench_result']]
    for r in recs:
        assert validate_record(r) == [], r
        assert r['observed']['series'] in res['bench_observed']
    return recs


def codes(rec):
    return dict((v['code'], v) for v in run_verdicts(rec))


def test_writes_elided_on_a_compressing_file_system(env, undo, tmp_path):
    dev, mnt = loop_fs(undo, tmp_path, ['mkfs.btrfs', '-q'], opts='compress-force=zstd')
    (zero,) = record(env, 'dd', {'path': mnt, 'size': '64M', 'data': 'zero'})
    v = codes(zero)
    assert 'writes_elided' in v and v['writes_elided']['name'] == os.path.basename(dev), zero['observed']
    assert v['writes_elided']['figure'] < 0.2
    (real,) = record(env, 'dd', {'path': mnt, 'size': '64M'})
    assert 'writes_elided' not in codes(real) and 'write_amplified' not in codes(real), real['observed']
    ex, _flags = explain_cell([real])
    assert ex['written']['device'] == os.path.basename(dev) and ex['written']['ratio'] >= 0.9
    # the layer stack the record names: the path, btrfs, the loop device, its image, the disk below
    kinds = [l['kind'] for l in real['observed']['stack']][:4]
    assert kinds == ['path', 'filesystem', 'loop', 'file']


def test_served_from_cache_when_the_caches_are_kept(env, undo, tmp_path):
    dev, mnt = loop_fs(undo, tmp_path, ['mkfs.ext4', '-q'])
    (cached,) = record(env, 'dd', {'path': mnt, 'size': '32M', 'test': 'read', 'drop_caches': False})
    v = codes(cached)
    assert 'served_from_cache' in v and v['served_from_cache']['name'] == os.path.basename(dev), cached['observed']
    (dropped,) = record(env, 'dd', {'path': mnt, 'size': '32M', 'test': 'read'})
    assert 'served_from_cache' not in codes(dropped), dropped['observed']
    assert explain_cell([dropped])[0]['read']['ratio'] >= 0.9


def test_a_direct_read_the_host_cached_under_a_loop_device_is_flagged_below_it(env, undo, tmp_path):
    """fio's O_DIRECT read on ext4 over a loop device without direct I/O: fio lays its file out first
    (through the loop device into the page cache of the image file), then its direct reads pass the
    loop device and are served by that page cache: the disk under the image delivers less than half.
    The control: the same read on a loop device in direct-I/O mode, after a cache drop."""
    args = {'rw': 'read', 'bs': '1M', 'size': '32M', 'direct': True}
    dev, mnt = loop_fs(undo, tmp_path, ['mkfs.ext4', '-q'])
    # fio and its libraries in the page cache first: after another test's cache drop, loading them
    # read 57 MB from the disk that also holds the image, inside the window (seen here)
    sh('fio', '--name=warm', '--directory=%s' % tmp_path, '--rw=read', '--bs=1M', '--size=1M', '--output=/dev/null')
    (cached,) = record(env, 'fio', dict(args, path=mnt))
    loop = os.path.basename(dev)
    v = codes(cached)
    assert 'served_from_cache' in v, [(d['name'], d['read_bytes']) for d in cached['observed']['devices']]
    # the evidence of this run: the loop device delivered what fio read, the disk under its image less
    # than half of it; the verdict names the disk, under the loop device, and the cache between them
    layers = explain_cell([cached])[0]['read']['layers']
    assert layers[0]['name'] == loop and layers[0]['ratio'] >= 0.9 and layers[-1]['ratio'] < 0.5, layers
    assert v['served_from_cache']['name'] == layers[-1]['name'] != loop
    assert ' under %s: served by the page cache of %s\'s backing file' % (loop, loop) in v['served_from_cache']['message']
    dev, mnt = loop_fs(undo, tmp_path, ['mkfs.ext4', '-q'], direct_io=True)
    sh('sh', '-c', 'sync; echo 3 > /proc/sys/vm/drop_caches')
    (direct,) = record(env, 'fio', dict(args, path=mnt))
    assert 'served_from_cache' not in codes(direct), direct['observed']['devices']
    layers = explain_cell([direct])[0]['read']['layers']
    assert all(l['ratio'] >= 0.9 for l in layers), layers


def test_cpu_bound_bzip2_and_its_control(env, undo, tmp_path):
    dev, mnt = loop_fs(undo, tmp_path, ['mkfs.ext4', '-q'])
    recs = record(env, 'compress', {'path': mnt, 'size': '8M', 'compressors': ['bzip2']})
    comp = next(r for r in recs if r['test'].endswith('compress') and 'decompress' not in r['test'])
    v = codes(comp)
    assert 'cpu_bound' in v, comp['observed']['cpu']
    assert comp['limited_by']['resource'] == 'cpu' and comp['limited_by']['name'] == 'tool'
    assert 'device_bound' not in v                      # the device control: idle under a CPU-bound tool
    (dd,) = record(env, 'dd', {'path': mnt, 'size': '32M'})
    assert 'cpu_bound' not in codes(dd), dd['observed']['cpu']


@pytest.mark.skipif(not (BLKIO / 'blkio.throttle.write_bps_device').exists(), reason='no blkio cgroup v1 here')
def test_device_bound_through_a_throttled_disk_below(env, undo, tmp_path):
    dev, mnt = loop_fs(undo, tmp_path, ['mkfs.ext4', '-q'], direct_io=True)
    img_dev = os.stat('/var/tmp').st_dev
    cg = BLKIO / ('benchlab-explain-%d' % os.getpid())
    cg.mkdir()
    undo.append(cg.rmdir)
    (cg / 'blkio.throttle.write_bps_device').write_text('%d:%d %d\n' % (os.major(img_dev), os.minor(img_dev), 8 * MiB))
    # the module (and dd, its child) in the cgroup: the loop device's writes to its image are charged to it
    env = dict(env)
    argv_prefix = 'echo $$ > %s/cgroup.procs; exec "$@"' % cg
    rc, _status, res = module_in(env, argv_prefix, 'dd', {'path': mnt, 'size': '16M', 'direct': True})
    assert rc == 0, res
    rec = res['bench_result']
    v = codes(rec)
    assert 'device_bound' in v and v['device_bound']['name'] == os.path.basename(dev), rec['observed']['devices']
    assert rec['limited_by']['resource'] == 'device' and rec['metrics']['throughput']['value'] < 20


def module_in(env, prefix, name, args):
    """conftest.module, started through `sh -c prefix` (a cgroup to join first)."""
    import json as _json
    from conftest import BIN, REPO, run
    argv = ['sh', '-c', prefix, 'sh', str(BIN / 'ansible'), 'localhost', '-i', str(REPO / 'inventories/local'),
            '-m', 'benchlab.bench.%s' % name, '-a', _json.dumps(args), '-o']
    proc = run(argv, env)
    status, _sep, payload = proc.stdout.strip().partition(' => ')
    return proc.returncode, status, _json.loads(payload) if payload else {'raw': proc.stdout + proc.stderr}


@pytest.fixture
def shaped_link(undo):
    """A veth pair to a network namespace with an iperf3 server; yields a function that shapes the
    host's side with tbf at a rate and returns (server address, port, host interface)."""
    if not shutil.which('iperf3') or not shutil.which('tc'):
        pytest.skip('iperf3 and tc are needed')
    ns, host_if, ns_if = 'blexp%d' % (os.getpid() % 100000), 'blexh%d' % (os.getpid() % 100000), 'blexn0'
    sh('ip', 'netns', 'add', ns)
    undo.append(['ip', 'netns', 'del', ns])
    sh('ip', 'link', 'add', host_if, 'type', 'veth', 'peer', 'name', ns_if, 'netns', ns)
    undo.append(['ip', 'link', 'del', host_if])
    sh('ip', 'addr', 'add', '198.19.233.1/24', 'dev', host_if)
    sh('ip', 'link', 'set', host_if, 'up')
    sh('ip', 'netns', 'exec', ns, 'ip', 'addr', 'add', '198.19.233.2/24', 'dev', ns_if)
    sh('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', ns_if, 'up')
    sh('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up')
    port = 15800 + os.getpid() % 100
    server = subprocess.Popen(['ip', 'netns', 'exec', ns, 'iperf3', '-s', '-B', '198.19.233.2', '-p', str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop_server():
        server.terminate()
        try:
            server.wait(5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    undo.append(stop_server)
    for _attempt in range(50):
        if subprocess.run(['ip', 'netns', 'exec', ns, 'ss', '-ltn', 'sport = :%d' % port], capture_output=True,
                          text=True, check=False).stdout.count('LISTEN'):
            break
        time.sleep(0.1)

    def shape(rate):
        sh('tc', 'qdisc', 'replace', 'dev', host_if, 'root', 'tbf', 'rate', rate, 'burst', '32kb', 'latency', '50ms')
        return '198.19.233.2', port, host_if
    return shape


def test_link_bound_on_a_shaped_veth_and_its_control(env, shaped_link):
    server, port, host_if = shaped_link('40mbit')
    (rec,) = record(env, 'iperf', {'server': server, 'port': port, 'time': 4})
    (net,) = rec['observed']['net']
    assert net['name'] == host_if and net['rate_mbit'] == 40.0
    v = codes(rec)
    assert 'link_bound' in v and v['link_bound']['name'] == host_if, net
    assert rec['limited_by'] == dict(rec['limited_by'], resource='link', name=host_if)
    server, port, host_if = shaped_link('1gbit')
    (ctl,) = record(env, 'iperf', {'server': server, 'port': port, 'time': 3, 'udp': True, 'bandwidth': '20M'})
    assert ctl['observed']['net'][0]['rate_mbit'] == 1000.0
    assert 'link_bound' not in codes(ctl), ctl['observed']['net']


def test_a_run_toward_a_drbd_peer_observes_its_own_link_to_it(env, undo, tmp_path):
    """guards.observe_toward (the run path's DRBD peer addresses): the target observes the interface
    it reaches each address through, here the loopback toward 127.0.0.1 (no DRBD kernel module here;
    the TCG pair in tests/vm/test_drbd_vm.py has the real link)."""
    _dev, mnt = loop_fs(undo, tmp_path, ['mkfs.ext4', '-q'], size=64 * MiB)
    (rec,) = record(env, 'dd', {'path': mnt, 'size': '8M', 'guards': {'observe_toward': ['127.0.0.1']}})
    assert [n['name'] for n in rec['observed']['net']] == ['lo'], rec['observed']['net']
    assert rec['params']['guards']['observe_toward'] == ['127.0.0.1']
    (plain,) = record(env, 'dd', {'path': mnt, 'size': '8M'})
    assert plain['observed']['net'] == []
