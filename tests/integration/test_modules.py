"""The modules run for real on this machine through `ansible localhost -m ...`."""

import hashlib
import json
import os
import subprocess
import tempfile

import pytest

from conftest import module


def test_default_write_data_is_not_zeros_nor_repeating(env, tmp_path):
    rc, status, res = module(env, 'dd', {'path': str(tmp_path), 'size': '16M', 'keep': True})
    assert rc == 0, res
    written = os.path.join(res['workdir'], 'dd.bin')
    blocks = set()
    zero = bytes(4096)
    with open(written, 'rb') as f:
        while True:
            b = f.read(4096)
            if not b:
                break
            assert b != zero, 'an all-zero 4 KiB block in the written file'
            blocks.add(hashlib.sha256(b).digest())
    assert len(blocks) == 16 * 1024 * 1024 // 4096, 'repeated blocks: zero-skipping or dedup could fake the result'
    assert res['bench_result']['params']['data'] == 'random'
    assert res['bench_result']['params']['data_source'] == 'tmpfs'
    assert 'conv=fdatasync' in res['cmd']


def test_zero_data_only_when_asked_and_with_a_warning(env, tmp_path):
    rc, status, res = module(env, 'dd', {'path': str(tmp_path), 'size': '4M', 'data': 'zero'})
    assert rc == 0, res
    assert any('/dev/zero' in w for w in res['bench_result']['warnings'])
    assert 'if=/dev/zero' in res['cmd']


def test_read_drops_caches_and_cleans_up(env, tmp_path):
    rc, status, res = module(env, 'dd', {'path': str(tmp_path), 'test': 'read', 'size': '8M'})
    assert rc == 0, res
    rec = res['bench_result']
    assert rec['test'] == 'read' and rec['params']['drop_caches'] is True
    assert rec['metrics']['bytes']['value'] == 8 * 1024 * 1024
    assert os.listdir(tmp_path) == []


def test_copy_is_fdatasynced(env, tmp_path):
    rc, status, res = module(env, 'dd', {'path': str(tmp_path), 'test': 'copy', 'size': '8M', 'bs': '64k'})
    assert rc == 0, res
    assert res['bench_result']['params']['count'] == 128
    assert 'conv=fdatasync' in res['cmd'] and res['cmd'][-1] != 'iflag=direct'
    assert os.listdir(tmp_path) == []


def test_check_mode_returns_the_argv_and_writes_nothing(env, tmp_path):
    rc, status, res = module(env, 'dd', {'path': str(tmp_path), 'size': '8M'}, check=True)
    assert rc == 0, res
    assert res['cmd'][0].endswith('dd') and 'count=8' in res['cmd'] and 'bs=1048576' in res['cmd']
    assert 'bench_result' not in res
    assert os.listdir(tmp_path) == []
    rc, status, res = module(env, 'fio', {'path': str(tmp_path), 'rw': 'randwrite'}, check=True)
    assert rc == 0 and '--rw=randwrite' in res['cmd'] and '--output-format=json+' in res['cmd']
    assert os.listdir(tmp_path) == []


def test_bad_size_names_the_field(env, tmp_path):
    rc, status, res = module(env, 'dd', {'path': str(tmp_path), 'size': '10M', 'bs': '3M'})
    assert rc != 0 and 'multiple of bs' in res['msg']
    rc, status, res = module(env, 'dd', {'path': str(tmp_path), 'size': 'lots'})
    assert rc != 0 and res['msg'].startswith('size/bs:') and "'lots'" in res['msg']


def test_fio_failure_is_readable_and_leaves_nothing(env, tmp_path):
    # an engine that is not built in is loaded as a shared library (code): refused before fio runs
    rc, status, res = module(env, 'fio', {'path': str(tmp_path), 'ioengine': 'nosuchengine', 'size': '1M'})
    assert rc != 0 and res['msg'].startswith('fio job refused') and 'nosuchengine' in res['msg'], res
    assert os.listdir(tmp_path) == []
    # an option fio does not have is refused before fio runs (fio's option table)
    rc, status, res = module(env, 'fio', {'path': str(tmp_path), 'options': {'nosuchoption': 1}, 'size': '1M'})
    assert rc != 0 and res['msg'].startswith('fio job refused: options: nosuchoption is refused'), res
    assert os.listdir(tmp_path) == []
    # a value fio itself refuses: fio's own message
    rc, status, res = module(env, 'fio', {'path': str(tmp_path), 'options': {'rwmixread': 'abc'}, 'size': '1M'})
    assert rc != 0
    assert res['msg'].startswith('fio failed (rc=1)') and 'rwmixread' in res['msg'], res
    assert res['rc'] == 1 and res['cmd'][0].endswith('fio')
    assert 'Traceback' not in json.dumps(res)
    assert os.listdir(tmp_path) == []


def test_fio_job_file_gives_one_record_per_job(env, tmp_path):
    job = tmp_path / 'two.fio'
    job.write_text('[global]\nsize=8M\nruntime=1\ntime_based\n[a]\nrw=read\nbs=64k\n[b]\nstonewall\nrw=randwrite\nbs=4k\n')
    work = tmp_path / 'work'
    work.mkdir()
    rc, status, res = module(env, 'fio', {'path': str(work), 'job_file': str(job)})
    assert rc == 0, res
    assert [r['test'] for r in res['bench_results']] == ['a', 'b']
    assert 'read_iops' in res['bench_results'][0]['metrics'] and 'write_iops' in res['bench_results'][1]['metrics']
    assert os.listdir(work) == []


def test_read_job_lays_out_in_1m_writes_and_reads_in_its_own_block_size(env, tmp_path):
    # fio's bs=<read>,<write>: a read-only job's file is laid out in 1 MiB writes (fio.py layout_bs);
    # the measurement is still reads of bs: fio's own per-I/O figures say so
    rc, status, res = module(env, 'fio', {'path': str(tmp_path), 'rw': 'randread', 'bs': '4k', 'size': '16M',
                                          'runtime': 1, 'time_based': True, 'direct': False})
    assert rc == 0, res
    rec = res['bench_result']
    assert '--bs=4k,1M' in rec['cmd'] and rec['params']['bs'] == '4k', rec
    m = dict((k, v['value']) for k, v in rec['metrics'].items())
    assert m['read_iops'] > 0 and 'write_iops' not in m, m
    assert abs(m['read_throughput'] * 1e6 / m['read_iops'] - 4096) < 64, m   # MB/s: 10^6 bytes
    assert os.listdir(tmp_path) == []


def test_sysinfo_describes_the_target(env, tmp_path):
    rc, status, res = module(env, 'sysinfo', {'path': '/dev/shm'})
    assert rc == 0, res
    info = res['sysinfo']
    assert info['target']['fstype'] == 'tmpfs' and info['target']['mountpoint'] == '/dev/shm'
    assert info['cpu']['logical_cpus'] == os.cpu_count()
    assert info['memory']['mem_total_bytes'] > 0
    assert info['kernel']['release'] == os.uname().release
    assert info['distribution']['id']


@pytest.fixture
def loop_device(tmp_path):
    image = tmp_path / 'disk.img'
    with open(image, 'wb') as f:
        f.truncate(64 * 1024 * 1024)
    dev = subprocess.run(['losetup', '--find', '--show', str(image)], capture_output=True, text=True, check=False)
    if dev.returncode != 0:
        pytest.skip('no loop device here: %s' % dev.stderr.strip())
    dev = dev.stdout.strip()
    mnt = tempfile.mkdtemp(prefix='benchlab-test-mnt-')
    try:
        yield dev, mnt
    finally:
        subprocess.run(['umount', mnt], capture_output=True, check=False)
        os.rmdir(mnt)
        subprocess.run(['losetup', '-d', dev], check=True)


def test_block_device_needs_destructive_and_is_never_written_mounted(env, loop_device):
    dev, mnt = loop_device
    rc, status, res = module(env, 'dd', {'path': dev, 'size': '8M'})
    assert rc != 0 and 'destructive: true' in res['msg']
    rc, status, res = module(env, 'dd', {'path': dev, 'size': '8M', 'destructive': True})
    assert rc == 0, res
    assert res['cmd'][2] == 'of=' + dev
    rc, status, res = module(env, 'dd', {'path': dev, 'test': 'read', 'size': '8M'})
    assert rc == 0 and res['bench_result']['metrics']['throughput']['value'] > 0
    subprocess.run(['mkfs.ext4', '-q', dev], check=True)
    subprocess.run(['mount', dev, mnt], check=True)
    rc, status, res = module(env, 'dd', {'path': dev, 'size': '8M', 'destructive': True})
    assert rc != 0 and 'is mounted' in res['msg']
