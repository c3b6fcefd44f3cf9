# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The performance figures of issue 9 (`make perf`; a benchmark, not a test).

    .venv/bin/python perf/perf.py [--pairs 7] [--out perf/results.json] [--only FIGURE ...]

`--only fidelity_dd` (or fidelity_fio, overhead, report) measures just that part, prints it and
writes nothing (the full run takes minutes; use this while working on one figure).

- fidelity_dd, fidelity_fio: does measuring through the module cost the measurement anything?
  Paired runs, alternating which goes first: the module (through `ansible -m`, so with Ansible's
  own processes around it) and the same command run by hand; the figure is the median of
  module ÷ hand throughput over the pairs (goal >= 0.98). The storage is an ext4 filesystem on a
  loop device whose image lives in /dev/shm, so the disk's own noise does not drown the figure.
- overhead_per_cell_s: the wall time of `ansible-playbook playbooks/bench.yml` on localhost minus
  the tools' own time (the records' duration_s), per run of a cell (goal <= 1 s).
- report_100k_s, report_100k_peak_mb: perf/report_100k.py (goal <= 5 s, <= 500 MB).

Prints a table and writes the figures, the goals and the machine they came from to --out.
Needs root (loop device, drop_caches) and the venv of `make setup`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(REPO, '.venv', 'bin')
sys.path.insert(0, os.path.join(REPO, '.collections'))

from ansible_collections.benchlab.bench.plugins.module_utils.dd import parse_dd  # noqa: E402
from ansible_collections.benchlab.bench.plugins.module_utils.fio import fio_records  # noqa: E402

PARTS = ('fidelity_dd', 'fidelity_fio', 'overhead', 'report')
GOALS = {'fidelity_dd': ('>=', 0.98), 'fidelity_fio': ('>=', 0.98), 'overhead_per_cell_s': ('<=', 1.0),
         'report_100k_s': ('<=', 5.0), 'report_100k_peak_mb': ('<=', 500)}
ENV = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'), ANSIBLE_NOCOLOR='1',
           PATH='%s:%s' % (BIN, os.environ.get('PATH', '')))


def sh(*argv, **kw):
    return subprocess.run([str(a) for a in argv], check=True, capture_output=True, text=True, **kw).stdout


class LoopFs(object):
    """An ext4 filesystem on a loop device backed by /dev/shm; removed on exit."""

    def __init__(self, size_mb):
        self.size_mb = size_mb
        self.image = self.dev = self.mnt = None

    def __enter__(self):
        fd, self.image = tempfile.mkstemp(prefix='benchlab-perf-', dir='/dev/shm')
        os.close(fd)
        os.truncate(self.image, self.size_mb * 1024 * 1024)
        self.dev = sh('losetup', '--find', '--show', self.image).strip()
        sh('mkfs.ext4', '-q', self.dev)
        self.mnt = tempfile.mkdtemp(prefix='benchlab-perf-')
        sh('mount', self.dev, self.mnt)
        return self.mnt

    def __exit__(self, *exc):
        if self.mnt:
            subprocess.run(['umount', self.mnt], check=False)
            os.rmdir(self.mnt)
        if self.dev:
            subprocess.run(['losetup', '-d', self.dev], check=False)
        if self.image:
            os.unlink(self.image)


def module(name, args):
    """Run benchlab.bench.<name> on localhost through `ansible -m`; the module's result."""
    out = sh(os.path.join(BIN, 'ansible'), 'localhost', '-i', os.path.join(REPO, 'inventories', 'local'),
             '-m', 'benchlab.bench.%s' % name, '-a', json.dumps(args), '-o', env=ENV, cwd=REPO)
    return json.loads(out.split(' => ', 1)[1])


def drop_caches():
    os.sync()
    with open('/proc/sys/vm/drop_caches', 'w') as f:
        f.write('3\n')


NO_GUARDS = {'quiesce': False, 'cooldown_s': 0}


def dd_module(path, size_mb):
    res = module('dd', {'path': path, 'test': 'write', 'size': '%dM' % size_mb, 'bs': '1M', 'guards': NO_GUARDS})
    return res['bench_result']['metrics']['throughput']['value']


def dd_by_hand(path, size_mb):
    """What the module does, by hand: random source in /dev/shm (not timed), dd with fdatasync."""
    work = tempfile.mkdtemp(prefix='benchlab-hand-', dir=path)
    fd, src = tempfile.mkstemp(prefix='benchlab-src-', dir='/dev/shm')
    try:
        with os.fdopen(fd, 'wb') as f:
            for _i in range(size_mb):
                f.write(os.urandom(1024 * 1024))
        drop_caches()
        out = subprocess.run(['dd', 'if=' + src, 'of=' + os.path.join(work, 'dd.bin'), 'bs=1048576',
                              'count=%d' % size_mb, 'conv=fdatasync'], capture_output=True, text=True,
                             env=dict(os.environ, LC_ALL='C'), check=True)
        return parse_dd(out.stderr)['throughput_mb_s']
    finally:
        os.unlink(src)
        shutil.rmtree(work)


FIO = {'rw': 'randread', 'bs': '4k', 'size': '64M', 'runtime': 3, 'time_based': True, 'direct': True}


def fio_module(path):
    res = module('fio', dict(FIO, path=path, guards=NO_GUARDS))
    return res['bench_result']['metrics']['read_iops']['value'], res['bench_result']['cmd']


def fio_by_hand(path, argv):
    """The module's own argv, with its work directory replaced by one of ours."""
    work = tempfile.mkdtemp(prefix='benchlab-hand-', dir=path)
    try:
        argv = [('--directory=%s' % work) if a.startswith('--directory=') else a for a in argv]
        drop_caches()
        out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=work)
        return fio_records(out.stdout)[0]['metrics']['read_iops']['value']
    finally:
        shutil.rmtree(work)


def paired(pairs, via_module, by_hand):
    """Median of module/hand ratios over alternating pairs, and the ratios."""
    ratios = []
    for i in range(pairs):
        if i % 2 == 0:
            m = via_module()
            h = by_hand()
        else:
            h = by_hand()
            m = via_module()
        ratios.append(m / h)
        print('  pair %d: module %.1f, by hand %.1f, ratio %.3f' % (i + 1, m, h, m / h), flush=True)
    return statistics.median(ratios), ratios


def fidelity(pairs, parts=('fidelity_dd', 'fidelity_fio')):
    figures = {}
    with LoopFs(2048) as mnt:
        if 'fidelity_dd' in parts:
            print('fidelity_dd (dd write 1 GiB, fdatasync, ext4 on a /dev/shm loop device)', flush=True)
            figures['fidelity_dd'], figures['fidelity_dd_ratios'] = paired(
                pairs, lambda: dd_module(mnt, 1024), lambda: dd_by_hand(mnt, 1024))
        if 'fidelity_fio' in parts:
            print('fidelity_fio (fio randread 4k O_DIRECT 3 s, same filesystem)', flush=True)
            _iops, argv = fio_module(mnt)
            figures['fidelity_fio'], figures['fidelity_fio_ratios'] = paired(
                pairs, lambda: fio_module(mnt)[0], lambda: fio_by_hand(mnt, argv))
    return figures


def overhead(runs):
    """(wall - tools) / runs for a bench.yml of `runs` small dd writes on localhost."""
    base = tempfile.mkdtemp(prefix='benchlab-perf-runs-')
    try:
        matrix = {'bench_matrix': {
            'name': 'perf-overhead', 'repetitions': runs,
            'methodology': {'cooldown_s': 0, 'quiesce': False},
            'cells': [{'name': 'shm', 'host': 'localhost', 'path': '/dev/shm', 'expected_faster': True}],
            'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]}}
        mfile = os.path.join(base, 'matrix.json')
        with open(mfile, 'w') as f:
            json.dump(matrix, f)
        env = dict(ENV, BENCHLAB_REPORT_DIR=os.path.join(base, 'runs'), BENCHLAB_HISTORY_DB=os.path.join(base, 'h.sqlite'))
        t0 = time.monotonic()
        sh(os.path.join(BIN, 'ansible-playbook'), 'playbooks/bench.yml', '-i', 'inventories/local',
           '-e', '@' + mfile, '-e', 'bench_install_tools=false', env=env, cwd=REPO)
        wall = time.monotonic() - t0
        (run_id,) = [d for d in os.listdir(os.path.join(base, 'runs')) if d != 'latest']
        with open(os.path.join(base, 'runs', run_id, 'results.json')) as f:
            records = json.load(f)['records']
        tools = sum(r.get('duration_s') or 0 for r in records)
        print('overhead: %d runs, playbook %.1f s, tools %.2f s' % (len(records), wall, tools), flush=True)
        return {'overhead_per_cell_s': (wall - tools) / len(records), 'overhead_runs': len(records),
                'overhead_wall_s': wall, 'overhead_tools_s': tools}
    finally:
        shutil.rmtree(base)


def report_100k():
    proc = subprocess.run([sys.executable, os.path.join(REPO, 'perf', 'report_100k.py')], cwd=REPO,
                          capture_output=True, text=True, check=False)
    out = proc.stdout
    print(out + proc.stderr[-2000:], flush=True)
    if proc.returncode != 0:
        print('report_100k.py failed (exit %d): its figures are missing' % proc.returncode)
    total = re.search(r'^total[^:]*:\s*([0-9.]+) s wall', out, re.M)
    peak = re.search(r'peak[^0-9]*([0-9.]+)\s*MB', out, re.I)
    return {'report_100k_s': float(total.group(1)) if total else None,
            'report_100k_peak_mb': float(peak.group(1)) if peak else None}


def machine():
    cpu = ''
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    with open('/proc/meminfo') as f:
        mem_kb = int(f.readline().split()[1])
    return {'kernel': platform.release(), 'cpu': cpu, 'cpus': os.cpu_count(), 'mem_gib': round(mem_kb / 1024 ** 2, 1),
            'os': sh('sh', '-c', '. /etc/os-release && echo "$PRETTY_NAME"').strip(),
            'virtualization': subprocess.run(['systemd-detect-virt'], capture_output=True, text=True,
                                             check=False).stdout.strip() if shutil.which('systemd-detect-virt') else None}


def terminated(signum, _frame):
    # SIGTERM unwinds like Ctrl-C, so the loop filesystem and the /dev/shm images go away with it
    raise SystemExit(128 + signum)


def main(argv=None):
    signal.signal(signal.SIGTERM, terminated)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--pairs', type=int, default=7)
    ap.add_argument('--runs', type=int, default=20, help='runs of the overhead playbook')
    ap.add_argument('--out', default=os.path.join(REPO, 'perf', 'results.json'))
    ap.add_argument('--only', nargs='+', choices=PARTS, metavar='PART',
                    help='measure only these parts (%s), print them and write nothing' % ', '.join(PARTS))
    args = ap.parse_args(argv)
    parts = args.only or PARTS
    figures = {}
    if 'fidelity_dd' in parts or 'fidelity_fio' in parts:
        figures.update(fidelity(args.pairs, parts))
    if 'overhead' in parts:
        figures.update(overhead(args.runs))
    if 'report' in parts:
        figures.update(report_100k())
    if args.only:
        for name in sorted(figures):
            value = figures[name]
            print('%-22s %s' % (name, ', '.join('%.3f' % v for v in value) if isinstance(value, list) else
                                ('%.3f' % value if isinstance(value, float) else value)))
        return 0
    print('\n%-22s %10s %10s  %s' % ('figure', 'value', 'goal', 'met'))
    for name, (op, goal) in GOALS.items():
        value = figures.get(name)
        met = value is not None and (value >= goal if op == '>=' else value <= goal)
        print('%-22s %10s %10s  %s' % (name, '%.3f' % value if value is not None else 'n/a', op + ' %g' % goal,
                                       'yes' if met else 'NO'))
    doc = {'date': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'),
           'machine': machine(), 'figures': figures, 'goals': dict((k, '%s %g' % v) for k, v in GOALS.items())}
    with open(args.out, 'w') as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write('\n')
    print('written: %s' % args.out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
