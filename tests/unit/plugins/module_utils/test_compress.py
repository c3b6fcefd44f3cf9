# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/compress.py: the reproducible input, argv, versions (real --version output in
tests/unit/fixtures/compress, see its README), CPU accounting and records."""

from __future__ import annotations

import bz2
import collections
import gzip
import hashlib
import lzma
import random
import resource
import subprocess

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.compress import (
    COMPRESSORS, CompressError, check_options, compress_argv, compress_metrics, compress_record, decompress_argv,
    file_sha256, compressor_version, compress_test_name, rusage_delta, text_chunks, threads_for, vocabulary, write_text)
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import CommandResult, failure_message

MIB = 1024 * 1024


def _text(size, seed=42):
    return b''.join(text_chunks(size, seed))


@pytest.fixture(scope='module')
def sample():
    return _text(2 * MIB)


def test_exact_size_and_ascii_text():
    for size in (0, 1, 1000, MIB - 1, MIB, MIB + 17):
        data = _text(size, seed=7)
        assert len(data) == size
        assert data.decode('ascii') == data.decode('ascii')


def test_same_seed_same_bytes_other_seed_other_bytes():
    a = _text(300000, seed=1)
    assert _text(300000, seed=1) == a
    assert _text(300000, seed=2) != a
    # a prefix of a longer run is the same text: size changes only where it stops
    assert _text(100000, seed=1) == a[:100000]


def test_reproducible_digest():
    """Pins the generator ('text-v1'): a change to it must be deliberate (and change params.input)."""
    digest = hashlib.sha256(_text(MIB, seed=42)).hexdigest()
    assert digest == hashlib.sha256(_text(MIB, seed=42)).hexdigest()
    assert digest == '0e65acc217c2d0b4f4436834960eec70eb9bd529fdeab2f75c1c272c53e76edd'


def test_looks_like_text(sample):
    text = sample.decode('ascii')
    words = text.split()
    assert 4.0 < len(text) / len(words) < 7.5  # characters per word, space included
    counts = collections.Counter(w.strip('.,?!').lower() for w in words)
    top = counts.most_common(10)
    assert top[0][1] > 20 * counts.most_common(1000)[-1][1]  # Zipf-like: a few words are frequent
    assert len(counts) > 1000
    assert text.count('.') > len(words) / 30
    assert '\n\n' in text
    assert set(text) <= set('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,?!\n')


def test_neither_zeros_nor_repeating_blocks(sample):
    assert b'\0' not in sample
    blocks = [sample[i:i + 4096] for i in range(0, len(sample), 4096)]
    assert len(set(blocks)) == len(blocks)


def test_compresses_like_real_text(sample):
    ratio_bz2 = len(sample) / len(bz2.compress(sample, 9))
    ratio_gz = len(sample) / len(gzip.compress(sample, 6))
    ratio_xz = MIB / len(lzma.compress(sample[:MIB], preset=6))
    assert 3.0 < ratio_bz2 < 5.0
    assert 2.0 < ratio_gz < 4.0
    assert 2.5 < ratio_xz < 5.0
    # random bytes would not compress at all
    noise = random.Random(0).getrandbits(8 * 100000).to_bytes(100000, 'little')
    assert len(bz2.compress(noise, 9)) > len(noise)


def test_vocabulary_frequent_words_are_short():
    words = vocabulary(random.Random(3))
    assert len(words) == len(set(words)) == 3000
    assert sum(map(len, words[:100])) / 100 < sum(map(len, words[-100:])) / 100


def test_write_text_hash_and_mode(tmp_path):
    path = tmp_path / 'in.txt'
    digest = write_text(str(path), 123457, 9)
    assert path.stat().st_size == 123457
    assert (path.stat().st_mode & 0o777) == 0o600
    assert digest == hashlib.sha256(_text(123457, 9)).hexdigest() == file_sha256(str(path))
    with pytest.raises(OSError):
        write_text(str(path), 10, 9)  # never overwrites


@pytest.mark.parametrize('size', [-1, 1.5, '1M', None])
def test_bad_size(size):
    with pytest.raises(CompressError, match='size'):
        _text(size)


@pytest.mark.parametrize('compressor,level', [('bzip2', 9), ('gzip', 6), ('xz', 6), ('zstd', 3)])
def test_default_levels(compressor, level):
    assert check_options(compressor) == level
    assert check_options(compressor, 1) == 1


@pytest.mark.parametrize('compressor,level,threads,match', [
    ('lz4', None, None, "unknown compressor 'lz4'"),
    ('bzip2', 0, None, 'level 0 is out of range for bzip2 \\(1-9\\)'),
    ('gzip', 10, None, 'level 10 is out of range for gzip'),
    ('zstd', 20, None, 'level 20 is out of range for zstd \\(1-19\\)'),
    ('xz', True, None, 'level True'),
    ('xz', 6, -1, 'threads must be a whole number'),
])
def test_check_options_rejects(compressor, level, threads, match):
    with pytest.raises(CompressError, match=match):
        check_options(compressor, level, threads)


def test_argv():
    assert compress_argv('/usr/bin/bzip2', 'bzip2', 9, None, '/w/bzip2.data') == ['/usr/bin/bzip2', '-9', '-f', '/w/bzip2.data']
    assert decompress_argv('/usr/bin/bzip2', 'bzip2', 4, '/w/bzip2.data.bz2') == ['/usr/bin/bzip2', '-d', '-f', '/w/bzip2.data.bz2']
    assert compress_argv('xz', 'xz', 6, None, 'f') == ['xz', '-6', '-T1', '-f', 'f']
    assert compress_argv('zstd', 'zstd', 19, 2, 'f') == ['zstd', '-19', '-T2', '-q', '--rm', '-f', 'f']
    assert decompress_argv('zstd', 'zstd', 0, 'f.zst') == ['zstd', '-d', '-T0', '-q', '--rm', '-f', 'f.zst']
    assert threads_for('gzip', 4) is None and threads_for('xz', None) == 1 and threads_for('zstd', 0) == 0


def test_record_test_names():
    assert compress_test_name('bzip2', 'compress', 9) == 'bzip2-9-compress'
    assert compress_test_name('bzip2', 'decompress', 9) == 'bzip2-decompress'
    with pytest.raises(CompressError):
        compress_test_name('bzip2', 'both', 9)


@pytest.mark.parametrize('name,compressor,version', [
    ('bzip2-1.0.8-version.stderr', 'bzip2', 'bzip2 1.0.8'),
    ('bzip2-1.0.8-help.stderr', 'bzip2', 'bzip2 1.0.8'),
    ('gzip-1.12-version.stdout', 'gzip', 'gzip 1.12'),
    ('xz-5.4.1-version.stdout', 'xz', 'xz 5.4.1'),
    ('zstd-1.5.4-version.stdout', 'zstd', 'zstd 1.5.4'),
])
def test_parse_version(read_fixture, name, compressor, version):
    assert compressor_version(compressor, read_fixture('compress/' + name)) == version


def test_parse_version_unknown():
    assert compressor_version('bzip2', '') is None
    assert compressor_version('bzip2', '\nno version here\n1.0\n') is None


def test_rusage_delta_of_a_real_child():
    """CPU seconds of a CPU-bound child (bzip2 on 1 MiB of text) as the module measures them."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(['bzip2', '-9', '-c'], input=_text(MIB), stdout=subprocess.PIPE, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, sys_ = rusage_delta(before, after)
    assert user > 0.01
    assert sys_ >= 0
    assert bz2.decompress(proc.stdout) == _text(MIB)
    earlier, later = after, before  # swapped snapshots never give negative CPU time
    assert rusage_delta(earlier, later) == (0.0, 0.0)


def test_metrics_and_record():
    rec = compress_record('bzip2', 'compress', 9, 32 * MIB, 4.0, 3.9, 0.05, tool_version='bzip2 1.0.8',
                          labels={'platform': 'kvm'}, params={'size': '32M'}, warnings=['w'], output='',
                          cmd=['bzip2', '-9', '-f', 'x'], started='2026-12-02T10:00:00Z', duration_s=4.0)
    assert validate_record(rec) == []
    assert rec['tool'] == 'compress'
    assert rec['test'] == 'bzip2-9-compress'
    assert rec['tool_version'] == 'bzip2 1.0.8'
    assert set(rec['metrics']) == {'elapsed', 'user', 'sys', 'throughput'}
    assert rec['metrics']['throughput'] == {'value': pytest.approx(32 * MIB / 4.0 / 1e6), 'unit': 'MB/s', 'better': 'higher'}
    assert rec['metrics']['elapsed'] == {'value': 4.0, 'unit': 's', 'better': 'lower'}
    assert rec['metrics']['user'] == {'value': 3.9, 'unit': 's', 'better': 'lower'}
    assert rec['metrics']['sys'] == {'value': 0.05, 'unit': 's', 'better': 'lower'}


def test_zero_elapsed_is_too_fast():
    metrics = compress_metrics(1000, 0.0, 0.0, 0.0)
    assert metrics['throughput'] == {'value': None, 'unit': 'MB/s', 'better': 'higher', 'too_fast': True}
    rec = compress_record('gzip', 'decompress', 6, 1000, 0.0, 0.0, 0.0)
    assert validate_record(rec) == [] and rec['test'] == 'gzip-decompress'


def test_record_refuses_nonsense():
    with pytest.raises(CompressError, match='empty'):
        compress_record('gzip', 'compress', 6, 0, 1.0, 1.0, 0.0)
    with pytest.raises(CompressError, match='elapsed'):
        compress_metrics(1000, -1.0, 0.0, 0.0)


@pytest.mark.parametrize('name,needle', [
    ('bzip2-1.0.8-decompress-corrupt.stderr', 'Data integrity error when decompressing'),
    ('gzip-1.12-decompress-corrupt.stderr', 'invalid compressed data--crc error'),
    ('xz-5.4.1-decompress-corrupt.stderr', 'Compressed data is corrupt'),
    ('zstd-1.5.4-decompress-corrupt.stderr', 'Data corruption detected'),
])
def test_corrupt_input_messages_reach_the_failure(read_fixture, name, needle):
    """What a compressor prints about corrupt data is quoted by the module's failure message."""
    text = read_fixture('compress/' + name)
    tool = name.split('-')[0]
    res = CommandResult([tool, '-d', '-f', 'd-%s%s' % (tool, COMPRESSORS[tool]['suffix'])], 1, '', text, 0.1)
    msg = failure_message('%s decompression' % tool, res)
    assert msg.startswith('%s decompression failed (rc=1): %s -d -f d-%s' % (tool, tool, tool))
    assert needle in msg


def test_compressors_table():
    assert sorted(COMPRESSORS) == ['bzip2', 'gzip', 'xz', 'zstd']
    assert {c: COMPRESSORS[c]['suffix'] for c in COMPRESSORS} == {'bzip2': '.bz2', 'gzip': '.gz', 'xz': '.xz', 'zstd': '.zst'}
    assert [c for c in sorted(COMPRESSORS) if COMPRESSORS[c]['threads']] == ['xz', 'zstd']
