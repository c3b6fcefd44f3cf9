"""How steady is this machine by itself: the same fixed piece of CPU work timed again and again, at
several lengths, with nothing else of benchlab running. The spread it prints is the floor under
every CPU-bound benchmark here (compress, iperf over loopback, dbench, the guests' share of a dd):
a run cannot be steadier than the machine it runs on, however long it lasts.

For each length of a piece of work it prints the spread between pieces (coefficient of variation,
%), how much a piece resembles the one just before it (lag-1 autocorrelation: near 1, the speed
drifts slowly and a baseline run next to its cell would cancel it; near 0, each piece meets a
speed of its own), and the spread of the ratio of two adjacent pieces (what pairing each run with a
baseline run right beside it would leave).

    .venv/bin/python perf/machine_noise.py                 # 0.1, 1 and 2 s pieces
    .venv/bin/python perf/machine_noise.py --lengths 0.5 4 --pieces 12
    .venv/bin/python perf/machine_noise.py --io /var/tmp   # also: short and longer dd and ioping runs there

With --io DIR it also times, in a directory of its own under DIR (removed afterwards), the quick lab
matrix's dd write (256 MiB synced, and the 64 MiB it wrote before) and ioping's synced 4 KiB writes
(200 requests, and 50), interleaved, and prints the spread of each: whether a run is long enough
that its start-up is not its spread.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / '.collections'))

# pylint: disable=wrong-import-position
from ansible_collections.benchlab.bench.plugins.module_utils.tools.ioping import ioping_argv, parse_ioping  # noqa: E402


def spread(times):
    """{cv_pct, lag1, pair_cv_pct} of a series of timings of the same work: the coefficient of
    variation in %, the lag-1 autocorrelation (None below 3 values or without variation), and the
    coefficient of variation of the ratios of adjacent pairs (1st/2nd, 3rd/4th, ...; None below two
    pairs)."""
    times = [float(t) for t in times]
    if len(times) < 2:
        raise ValueError('spread needs at least 2 timings, got %d' % len(times))
    mean = statistics.mean(times)
    out = dict(cv_pct=statistics.stdev(times) / mean * 100.0, lag1=None, pair_cv_pct=None)
    if len(times) >= 3 and len(set(times[:-1])) > 1 and len(set(times[1:])) > 1:
        out['lag1'] = statistics.correlation(times[:-1], times[1:])
    ratios = [times[i] / times[i + 1] for i in range(0, len(times) - 1, 2)]
    if len(ratios) >= 2:
        out['pair_cv_pct'] = statistics.stdev(ratios) / statistics.mean(ratios) * 100.0
    return out


def _work(loops):
    total = 0
    for i in range(loops):
        total += i * i
    return total


def _timed(loops):
    start = time.perf_counter()
    _work(loops)
    return time.perf_counter() - start


def calibrate(seconds):
    """The number of loops of the work that last about `seconds` here."""
    loops = 100000
    while True:
        took = min(_timed(loops) for _i in range(3))
        if took >= 0.05:
            return max(1, int(loops * seconds / took))
        loops *= 4


def io_runs(directory, rounds, sizes_mib=(64, 256), counts=(50, 200)):
    """{name: [MB/s or requests/s of each round]} of dd writes (sizes_mib, conv=fdatasync, from a
    random source in /dev/shm) and ioping synced writes (counts requests), interleaved, in a
    directory of their own under `directory` (removed afterwards)."""
    work = tempfile.mkdtemp(prefix='benchlab-noise-', dir=directory)
    src = tempfile.mkdtemp(prefix='benchlab-noise-src-', dir='/dev/shm' if os.path.isdir('/dev/shm') else None)
    try:
        with open(os.path.join(src, 'src.bin'), 'wb') as f:
            f.write(os.urandom(max(sizes_mib) << 20))
        got = {}
        for _i in range(rounds):
            for mib in sizes_mib:
                argv = ['dd', 'if=' + os.path.join(src, 'src.bin'), 'of=' + os.path.join(work, 'dd.bin'),
                        'bs=1M', 'count=%d' % mib, 'conv=fdatasync']
                start = time.perf_counter()
                subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                got.setdefault('dd write %dM (MB/s)' % mib, []).append(mib * 1.048576 / (time.perf_counter() - start))
            for count in counts:
                # the quick matrix's ioping-write: mode write, dsync, direct (the module's argv)
                out = subprocess.run(ioping_argv('ioping', work, count, write=True, dsync=True), check=True,
                                     capture_output=True, text=True)
                got.setdefault('ioping write x%d (requests/s)' % count, []).append(parse_ioping(out.stdout, out.stderr)['iops'])
        return got
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(src, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    ap.add_argument('--lengths', type=float, nargs='+', default=[0.1, 1.0, 2.0], help='seconds a piece of work lasts')
    ap.add_argument('--pieces', type=int, default=20, help='pieces per length (at least 4)')
    ap.add_argument('--io', metavar='DIR', help='also time short and longer dd and ioping writes in a directory under DIR')
    ap.add_argument('--io-rounds', type=int, default=8, help='rounds of the dd and ioping runs (at least 2)')
    args = ap.parse_args(argv)
    if args.pieces < 4:
        ap.error('--pieces: at least 4 (two adjacent pairs), got %d' % args.pieces)
    print('%8s %7s %9s %8s %12s' % ('piece_s', 'pieces', 'spread_%', 'lag1', 'pair_spread_%'))
    for length in args.lengths:
        loops = calibrate(length)
        got = spread([_timed(loops) for _i in range(args.pieces)])
        print('%8.2f %7d %9.1f %8s %12s' % (
            length, args.pieces, got['cv_pct'], '-' if got['lag1'] is None else '%+.2f' % got['lag1'],
            '-' if got['pair_cv_pct'] is None else '%.1f' % got['pair_cv_pct']))
    if args.io:
        if args.io_rounds < 2:
            ap.error('--io-rounds: at least 2, got %d' % args.io_rounds)
        print('\n%-32s %7s %10s %9s' % ('run', 'rounds', 'mean', 'spread_%'))
        for name, values in io_runs(args.io, args.io_rounds).items():
            print('%-32s %7d %10.1f %9.1f' % (name, len(values), statistics.mean(values), spread(values)['cv_pct']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
