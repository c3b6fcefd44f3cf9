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
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    ap.add_argument('--lengths', type=float, nargs='+', default=[0.1, 1.0, 2.0], help='seconds a piece of work lasts')
    ap.add_argument('--pieces', type=int, default=20, help='pieces per length (at least 4)')
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
    return 0


if __name__ == '__main__':
    sys.exit(main())
