# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The compression CPU test: the reproducible input, the compressors' command lines, their
versions, CPU time accounting and the result records (docs/usage.md: tool ``compress``, metrics
``elapsed``, ``user``, ``sys``, ``throughput``).

The input is seeded pseudo-English text: words made of syllables, a Zipf-like word frequency
(frequent words short), sentences, paragraphs and a few numbers. It compresses like real text
(bzip2 -9 about 3.5x, gzip about 2.5x, xz about 3.4x), unlike zeros (which measure nothing) or
random bytes (which measure the incompressible path). The same seed and size give the same bytes
with every Python 3 on every target (only ``random.Random(seed).random()`` is used), so the
cells of a matrix compress the same data; its SHA-256 goes on the record.
"""

import array
import bisect
import hashlib
import os
import random
import re
import sys

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import tail

# name -> suffix, default level (the tool's own default, passed explicitly), valid levels,
# whether -T<n> threads are understood.
COMPRESSORS = {
    'bzip2': {'suffix': '.bz2', 'default_level': 9, 'levels': (1, 9), 'threads': False},
    'gzip': {'suffix': '.gz', 'default_level': 6, 'levels': (1, 9), 'threads': False},
    'xz': {'suffix': '.xz', 'default_level': 6, 'levels': (0, 9), 'threads': True},
    'zstd': {'suffix': '.zst', 'default_level': 3, 'levels': (1, 19), 'threads': True},
}
VERSION_RE = re.compile(r'(\d+\.\d+(?:\.\d+)*)')
CHUNK_CHARS = 1 << 20

ONSETS = ('', 'b', 'c', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'st', 'tr',
          'pl', 'ch', 'sh', 'th', 'br', 'gr')
NUCLEI = ('a', 'e', 'i', 'o', 'u', 'ea', 'ou', 'ai', 'ie')
CODAS = ('', '', '', 'n', 'r', 's', 't', 'l', 'nd', 'st', 'ng', 'm', 'ck')
VOCABULARY = 3000
ZIPF_S = 1.1
LENGTH_JITTER = 8.0


class CompressError(ValueError):
    """A compression run that cannot give a trustworthy number (bad option, failed round trip)."""


def _pick(rnd, items):
    return items[int(rnd() * len(items))]


def vocabulary(rng, size=VOCABULARY):
    """`size` distinct pseudo-words, roughly shortest first (frequent words are short)."""
    rnd = rng.random
    words, seen = [], set()
    while len(words) < size:
        syllables = 1 + int(rnd() * 3.2)
        w = ''.join(_pick(rnd, ONSETS) + _pick(rnd, NUCLEI) + _pick(rnd, CODAS) for _i in range(syllables))
        if w not in seen:
            seen.add(w)
            words.append(w)
    keys = dict((w, len(w) + rnd() * LENGTH_JITTER) for w in words)
    words.sort(key=lambda w: keys[w])
    return words


def _word_table(words):
    """A 65536-entry table: a uniform 16-bit number -> a word with Zipf-like frequency."""
    cum, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank ** ZIPF_S
        cum.append(total)
    last = len(words) - 1
    return [words[min(last, bisect.bisect(cum, (q + 0.5) / 65536.0 * total))] for q in range(65536)]


def _random_u16(rng, count):
    """`count` 16-bit numbers from rng, the same on little- and big-endian machines."""
    values = array.array('H', rng.getrandbits(16 * count).to_bytes(2 * count, 'little'))
    if sys.byteorder == 'big':
        values.byteswap()
    return values


def text_chunks(size, seed):
    """Yield ASCII byte chunks that add up to exactly `size` bytes of seeded pseudo-English text."""
    if not isinstance(size, int) or size < 0:
        raise CompressError('size must be a whole number of bytes >= 0, got %r' % (size,))
    rng = random.Random(seed)
    table = _word_table(vocabulary(rng))
    rnd = rng.random
    left = size
    in_paragraph = 0
    while left > 0:
        # Enough words for one chunk (about 5.5 characters each with the space), drawn at once.
        pool = [table[v] for v in _random_u16(rng, CHUNK_CHARS // 4)]
        pos, out, n = 0, [], 0
        while n < CHUNK_CHARS:
            k = 4 + int(rnd() * 18)
            ws = pool[pos:pos + k]
            pos += k
            ws[0] = ws[0].capitalize()
            if rnd() < 0.4:
                i = 1 + int(rnd() * (k - 1))
                ws[i - 1] += ','
            if rnd() < 0.05:
                ws.insert(int(rnd() * k), str(int(rnd() * 10000)))
            end = '.' if rnd() < 0.85 else ('?' if rnd() < 0.5 else '!')
            sentence = ' '.join(ws) + end
            in_paragraph += 1
            if in_paragraph >= 3 and rnd() < 0.25:
                sentence += '\n\n'
                in_paragraph = 0
            else:
                sentence += '\n' if rnd() < 0.5 else ' '
            out.append(sentence)
            n += len(sentence)
        data = ''.join(out).encode('ascii')
        if len(data) > left:
            data = data[:left]
        left -= len(data)
        yield data


def write_text(path, size, seed):
    """Write the input file (mode 0600, must not exist); return its SHA-256 hex digest."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for chunk in text_chunks(size, seed):
            digest.update(chunk)
            view = memoryview(chunk)
            while view:
                written = os.write(fd, view)
                view = view[written:]
    finally:
        os.close(fd)
    return digest.hexdigest()


def copy_input(src, dst):
    """Copy a file the user names to `dst` (mode 0600, must not exist), not timed; return
    (SHA-256 hex digest, size in bytes) of what was copied."""
    digest = hashlib.sha256()
    size = 0
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with open(src, 'rb') as f:
            while True:
                block = f.read(CHUNK_CHARS)
                if not block:
                    break
                digest.update(block)
                size += len(block)
                view = memoryview(block)
                while view:
                    view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return digest.hexdigest(), size


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        while True:
            block = f.read(CHUNK_CHARS)
            if not block:
                break
            digest.update(block)
    return digest.hexdigest()


def check_options(compressor, level=None, threads=None):
    """The level to use (the tool's default when None). CompressError for an unknown compressor,
    a level out of its range, or threads for a tool without them."""
    if compressor not in COMPRESSORS:
        raise CompressError('unknown compressor %r (known: %s)' % (compressor, ', '.join(sorted(COMPRESSORS))))
    spec = COMPRESSORS[compressor]
    if level is None:
        level = spec['default_level']
    lo, hi = spec['levels']
    if not isinstance(level, int) or isinstance(level, bool) or not lo <= level <= hi:
        raise CompressError('level %r is out of range for %s (%d-%d)' % (level, compressor, lo, hi))
    if threads is not None:
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
            raise CompressError('threads must be a whole number >= 0 (0 = one per core), got %r' % (threads,))
    return level


def threads_for(compressor, threads):
    """The -T value used: the asked one for xz/zstd (1 when not asked, for reproducibility:
    xz 5.6 and later otherwise use every core), None for tools without threads."""
    if not COMPRESSORS[compressor]['threads']:
        return None
    return 1 if threads is None else threads


def _argv(binary, mode, compressor, threads, path):
    argv = [binary, mode]
    t = threads_for(compressor, threads)
    if t is not None:
        argv.append('-T%d' % t)
    if compressor == 'zstd':
        argv += ['-q', '--rm']
    return argv + ['-f', path]


def compress_argv(binary, compressor, level, threads, path):
    """Compress `path` in place into path + suffix (the source is a hard link, hence -f)."""
    return _argv(binary, '-%d' % level, compressor, threads, path)


def decompress_argv(binary, compressor, threads, path):
    """Decompress path (ending in the suffix) in place, back to the name without it."""
    return _argv(binary, '-d', compressor, threads, path)


def compress_test_name(compressor, phase, level):
    """bzip2-9-compress, bzip2-decompress, ..."""
    if phase == 'compress':
        return '%s-%d-compress' % (compressor, level)
    if phase == 'decompress':
        return '%s-decompress' % compressor
    raise CompressError('phase must be compress or decompress, got %r' % (phase,))


def compressor_version(compressor, text):
    """'bzip2 1.0.8' from what `<compressor> --version` printed (stdout and stderr), or None."""
    for line in (text or '').splitlines():
        if not line.strip():
            continue
        m = VERSION_RE.search(line)
        return '%s %s' % (compressor, m.group(1)) if m else None
    return None


def rusage_delta(before, after):
    """(user, sys) CPU seconds of the children reaped between two
    resource.getrusage(RUSAGE_CHILDREN) snapshots."""
    return (max(0.0, after.ru_utime - before.ru_utime), max(0.0, after.ru_stime - before.ru_stime))


def compress_metrics(nbytes, elapsed, user, sys_):
    """The compress metrics of docs/usage.md; throughput is uncompressed bytes / elapsed in MB/s (10^6)."""
    if elapsed is None or elapsed < 0:
        raise CompressError('elapsed time must be a number >= 0, got %r' % (elapsed,))
    return {
        'elapsed': metric(elapsed, 's', 'lower'),
        'user': metric(user, 's', 'lower'),
        'sys': metric(sys_, 's', 'lower'),
        'throughput': metric(nbytes / elapsed / 1e6 if elapsed > 0 else None, 'MB/s', 'higher'),
    }


def compress_record(compressor, phase, level, nbytes, elapsed, user, sys_, tool_version=None, labels=None,
                    params=None, warnings=None, output='', **extra):
    """One result record (tool ``compress``) for one timed compress or decompress run."""
    if not nbytes or nbytes <= 0:
        raise CompressError('the input is empty: nothing was measured')
    return new_record('compress', compress_test_name(compressor, phase, level),
                      compress_metrics(nbytes, elapsed, user, sys_), tool_version=tool_version,
                      labels=labels, params=params, warnings=warnings, raw_tail=tail(output, 5), **extra)
