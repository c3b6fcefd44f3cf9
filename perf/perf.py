# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The performance figures of issue 9 (`make perf`; a benchmark, not a test).

    .venv/bin/python perf/perf.py [--pairs 11] [--out perf/results.json] [--only FIGURE ...]

`--only fidelity_dd` (or fidelity_fio, overhead, report, observer) measures just that part, prints it and
writes nothing (the full run takes minutes; use this while working on one figure).

- fidelity_dd, fidelity_fio: does measuring through the module cost the measurement anything?
  Paired runs, alternating which goes first: the module (through `ansible -m`, so with Ansible's
  own processes around it) and the same command run by hand; the figure is the median of
  module ÷ hand throughput over the pairs (goal >= 0.98). "By hand" is the recipe of the field
  reports: `sync; echo 3 > /proc/sys/vm/drop_caches`, then the module's own argv.
  fidelity_dd writes 4 GiB from /dev/zero with O_DIRECT to a loop device whose image was filled
  beforehand in /dev/shm: nothing is allocated and no random source is made while dd runs, so the
  figure is CPU- and memory-bound (the most sensitive to Ansible's processes around the module)
  and steady (+-5% run to run here). Zeros are fine there: a raw loop device over tmpfs stores
  every byte it is given (the zero traps are about file systems and thin storage).
  Page-cache writes are not steady on this machine: it is a Firecracker VM with free page
  reporting (memory the guest frees goes back to the host, pages dd's writes allocate may fault on
  the host first) among neighbours (CPU steal in bursts), so the same dd varies +-40% from one run
  to the next. That path is measured too, as fidelity_dd_pagecache (1 GiB of random data, ext4 on
  a /dev/shm loop device), for information: no goal, its ratios are stored so the spread shows.
  Pairs in which either side saw CPU steal are dropped (see paired()).
  fidelity_fio reads 4k at random with O_DIRECT for 3 s on that ext4 filesystem.
- overhead_per_cell_s: the wall time of `ansible-playbook playbooks/bench.yml` on localhost minus
  the tools' own time (the records' duration_s), per run of a cell (goal <= 0.25 s; the fixed cost of
  a one-run play <= 1.5 s); with it the
  CPU time (user + system) of the playbook's whole process tree (overhead_cpu_s, fixed_cost_cpu_s,
  overhead_marginal_cpu_s), which a loaded machine changes far less than the wall time.
- time_to_result_vs_bench_fio (peer): bench.yml and bench-fio on the same three fio jobs; also
  bench.yml's own fio argv run by hand, which tells an IOPS gap's cause (see peer()).
- The floors under the two goals above, measured alongside so that a goal below what any playbook
  can reach shows as such: fixed_cost_floor_s (perf/floor/one_run.yml: the same dd run as the only
  task of a play, no plan, no install check), floor_empty_play_s (perf/floor/empty.yml: a play of no
  task, with the report callback as bench.yml runs), and time_to_result_floor_vs_bench_fio (an empty
  play plus the three fio jobs run by hand, over bench-fio: the ratio of a playbook that did nothing
  but fio's own work), with peer_bench_fio_adds_s (what bench-fio adds to fio's own time).
- report_100k_s, report_100k_peak_mb: perf/report_100k.py (goal <= 5 s, <= 500 MB).
- history_<backend>_*: perf/history_perf.py - store, find, compare and trend times for 1,000 stored runs
  on a SQLite file and on a private PostgreSQL server (no goal: the figures are for docs/performance.md).

Prints a table and writes the figures, the goals and the machine they came from to --out.
Needs root (loop device, drop_caches) and the venv of `make setup`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The checkout whose playbooks are measured (BENCHLAB_PERF_REPO: an export of an earlier commit, for
# before/after figures); the venv and bench-fio are this checkout's.
REPO = os.path.abspath(os.environ.get('BENCHLAB_PERF_REPO') or HERE)
BIN = os.path.join(HERE, '.venv', 'bin')
sys.path.insert(0, os.path.join(HERE, '.collections'))

from ansible_collections.benchlab.bench.plugins.module_utils.run import common  # noqa: E402
from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import parse_dd  # noqa: E402
from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import fio_records  # noqa: E402

MIB = 1024 * 1024
PARTS = ('fidelity_dd', 'fidelity_fio', 'overhead', 'peer', 'breakdown', 'report', 'history', 'observer')
# name: (op, goal, floor). With a floor (another figure of the same run) the goal is relative to it:
# fixed_cost_s at most 0.5 s above a play whose only task is the same run (what any playbook pays).
GOALS = {'fidelity_dd': ('>=', 0.98, None), 'fidelity_fio': ('>=', 0.98, None), 'overhead_per_cell_s': ('<=', 0.25, None),
         'fixed_cost_s': ('<=', 0.5, 'fixed_cost_floor_s'), 'time_to_result_vs_bench_fio': ('<=', 1.10, None),
         'report_100k_s': ('<=', 5.0, None), 'report_100k_peak_mb': ('<=', 500, None)}


def goal_text(name):
    op, goal, floor = GOALS[name]
    return '%s %s + %g' % (op, floor, goal) if floor else '%s %g' % (op, goal)


def judge(figures):
    """{name: {value, goal, target, floor, met}} of every goal on these figures (pure): `target` is the
    number the value is held to (a floor's goal: the floor plus its margin), `met` None when the
    value, or the floor it is judged against, was not measured."""
    out = {}
    for name, (op, goal, floor) in GOALS.items():
        value = figures.get(name)
        base = figures.get(floor) if floor else 0.0
        target = None if base is None else base + goal
        met = None
        if value is not None and target is not None:
            met = value >= target if op == '>=' else value <= target
        out[name] = {'value': value, 'goal': goal_text(name), 'target': target, 'floor': floor and base, 'met': met}
    return out


# bench-fio (PyPI package fio-plot) lives in a virtualenv of the perf tooling, never in the
# collection's requirements (perf_venv() makes it on first use).
PERF_VENV = os.path.join(HERE, 'build', 'perf-venv')
PEER_PACKAGE = 'fio-plot'
ENV = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'), ANSIBLE_NOCOLOR='1',
           PATH='%s:%s' % (BIN, os.environ.get('PATH', '')))


def sh(*argv, **kw):
    return subprocess.run([str(a) for a in argv], check=True, capture_output=True, text=True, **kw).stdout


@contextlib.contextmanager
def loop_device(size_mb, fill):
    """A loop device over an image in /dev/shm, removed on exit (also on SIGTERM, see main). Filled
    beforehand (fill=True), writing it allocates nothing; else the image is sparse."""
    fd, image = tempfile.mkstemp(prefix='benchlab-perf-', dir='/dev/shm')
    dev = None
    try:
        with os.fdopen(fd, 'wb') as f:
            if fill:
                block = b'\xa5' * MIB
                for _i in range(size_mb):
                    f.write(block)
            else:
                f.truncate(size_mb * MIB)
        dev = sh('losetup', '--find', '--show', image).strip()
        yield dev
    finally:
        if dev:
            subprocess.run(['losetup', '-d', dev], check=False)
        os.unlink(image)


@contextlib.contextmanager
def loop_fs(size_mb):
    """An ext4 filesystem on a sparse loop_device, mounted; removed on exit."""
    with loop_device(size_mb, fill=False) as dev:
        sh('mkfs.ext4', '-q', dev)
        mnt = tempfile.mkdtemp(prefix='benchlab-perf-')
        try:
            sh('mount', dev, mnt)
            try:
                yield mnt
            finally:
                subprocess.run(['umount', mnt], check=False)
        finally:
            os.rmdir(mnt)


def module(name, args):
    """Run benchlab.bench.<name> on localhost through `ansible -m`; the module's result."""
    out = sh(os.path.join(BIN, 'ansible'), 'localhost', '-i', os.path.join(REPO, 'inventories', 'local'),
             '-m', 'benchlab.bench.%s' % name, '-a', json.dumps(args), '-o', env=ENV, cwd=REPO)
    return json.loads(out.split(' => ', 1)[1])


def drop_caches():
    """The module's own `sync; echo 3 > /proc/sys/vm/drop_caches`; perf needs it to work."""
    reason = common.drop_caches()
    if reason:
        raise SystemExit('perf.py needs root: %s' % reason)


NO_GUARDS = {'quiesce': False, 'cooldown_s': 0}


def dd_module(path, size_mb, **extra):
    """The module's throughput, the duration of its dd and its argv."""
    args = dict({'path': path, 'test': 'write', 'size': '%dM' % size_mb, 'bs': '1M', 'guards': NO_GUARDS}, **extra)
    rec = module('dd', args)['bench_result']
    return rec['metrics']['throughput']['value'], rec['duration_s'], rec['cmd']


def dd_by_hand(argv, size_mb):
    """The module's argv, by hand: a random source of our own in /dev/shm (not timed) unless it
    reads /dev/zero, `sync; echo 3 > drop_caches`, dd. A target inside a directory becomes a file in
    a work directory of ours."""
    target = [a for a in argv if a.startswith('of=')][0][3:]
    work = None
    if not target.startswith('/dev/'):
        work = tempfile.mkdtemp(prefix='benchlab-hand-', dir=os.path.dirname(os.path.dirname(target)))
        target = os.path.join(work, 'dd.bin')
    src = None
    if 'if=/dev/zero' not in argv:
        fd, src = tempfile.mkstemp(prefix='benchlab-src-', dir='/dev/shm')
    try:
        if src:
            with os.fdopen(fd, 'wb') as f:
                for _i in range(size_mb):
                    f.write(os.urandom(MIB))
        argv = [('if=' + src) if src and a.startswith('if=') else ('of=' + target) if a.startswith('of=') else a
                for a in argv]
        drop_caches()
        start = time.monotonic()
        out = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, LC_ALL='C'), check=True)
        return parse_dd(out.stderr)['throughput_mb_s'], time.monotonic() - start
    finally:
        if src:
            os.unlink(src)
        if work:
            shutil.rmtree(work)


FIO = {'rw': 'randread', 'bs': '4k', 'size': '64M', 'runtime': 3, 'time_based': True, 'direct': True}


def fio_module(path):
    rec = module('fio', dict(FIO, path=path, guards=NO_GUARDS))['bench_result']
    return rec['metrics']['read_iops']['value'], rec['duration_s'], rec['cmd']


def fio_by_hand(path, argv):
    """The module's own argv, with its work directory replaced by one of ours."""
    work = tempfile.mkdtemp(prefix='benchlab-hand-', dir=path)
    try:
        argv = [('--directory=%s' % work) if a.startswith('--directory=') else a for a in argv]
        drop_caches()
        start = time.monotonic()
        out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=work)
        return fio_records(out.stdout)[0]['metrics']['read_iops']['value'], time.monotonic() - start
    finally:
        shutil.rmtree(work)


class StealSampler(object):
    """CPU time the hypervisor gave to others ("steal", /proc/stat), sampled every 50 ms.

    On this machine (a VM among neighbours) steal comes in bursts, and a burst during one side of a
    pair costs that side 10-30% of its throughput whichever side it is. steal(t0, t1) is in ticks
    (1/100 s), summed over the CPUs, between the samples around the wall-clock window [t0, t1].
    """

    def __init__(self, interval=0.05):
        self.interval = interval
        self.samples = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def read():
        with open('/proc/stat') as f:
            fields = f.readline().split()
        return int(fields[8]) if len(fields) > 8 else 0

    def _run(self):
        while not self.done.is_set():
            self.samples.append((time.time(), self.read()))
            self.done.wait(self.interval)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def steal(self, t0, t1):
        self.samples.append((time.time(), self.read()))
        before = [v for t, v in self.samples if t <= t0]
        after = [v for t, v in self.samples if t >= t1]
        return (after[0] if after else self.samples[-1][1]) - (before[-1] if before else self.samples[0][1])


RAW_MB = 4096         # fidelity_dd: 4 GiB, about 1 s here
PAGECACHE_MB = 1024   # fidelity_dd_pagecache
STEAL_MAX = 2     # ticks of steal a side may see and still count (20 ms)
SLACK_S = 1.0     # the window before the tool's end: the module's end is only known when Ansible returns


def paired(pairs, via_module, by_hand):
    """Median of module/hand ratios over alternating pairs, and the ratios.

    A pair counts when neither side saw more than STEAL_MAX ticks of steal; pairs are run until
    `pairs` of them count, at most 3x `pairs` in all. Dropping a pair is blind to which side the
    burst hit, so it removes the host's noise without favouring the module. When too few pairs
    count, the figure is the median of all of them and says so."""
    kept, every, dropped = [], [], 0
    with StealSampler() as sampler:
        i = 0
        while len(kept) < pairs and i < 3 * pairs:
            sides = {}
            for side in (('module', 'hand') if i % 2 == 0 else ('hand', 'module')):
                value, duration = (via_module if side == 'module' else by_hand)()
                end = time.time()
                sides[side] = (value, sampler.steal(end - duration - SLACK_S, end))
            (m, m_steal), (h, h_steal) = sides['module'], sides['hand']
            ratio = m / h
            every.append(ratio)
            ok = m_steal <= STEAL_MAX and h_steal <= STEAL_MAX
            if ok:
                kept.append(ratio)
            else:
                dropped += 1
            i += 1
            print('  pair %d: module %.1f (steal %d), by hand %.1f (steal %d), ratio %.3f%s' % (
                i, m, m_steal, h, h_steal, ratio, '' if ok else '  dropped: the host stole CPU'), flush=True)
    if len(kept) < pairs:
        print('  only %d of %d pairs were undisturbed: the figure is the median of all %d' % (
            len(kept), pairs, len(every)), flush=True)
        return statistics.median(every), every, dropped
    return statistics.median(kept), kept, dropped


def fidelity(pairs, parts=('fidelity_dd', 'fidelity_fio')):
    figures = {}

    def measure(name, via_module, by_hand):
        figures[name], figures[name + '_ratios'], figures[name + '_dropped_pairs'] = paired(pairs, via_module, by_hand)

    if 'fidelity_dd' in parts:
        with loop_device(RAW_MB + 64, fill=True) as dev:
            print('fidelity_dd (dd write %d GiB of zeros, O_DIRECT, fdatasync, loop device over a filled /dev/shm image)'
                  % (RAW_MB // 1024), flush=True)
            raw = dict(destructive=True, direct=True, data='zero')
            argv = dd_module(dev, RAW_MB, **raw)[2]
            measure('fidelity_dd', lambda: dd_module(dev, RAW_MB, **raw)[:2], lambda: dd_by_hand(argv, RAW_MB))
    with loop_fs(2048) as mnt:
        if 'fidelity_dd' in parts:
            print('fidelity_dd_pagecache (dd write %d MiB of random data, fdatasync, ext4 on a /dev/shm loop device; '
                  'no goal)' % PAGECACHE_MB, flush=True)
            argv = dd_module(mnt, PAGECACHE_MB)[2]
            measure('fidelity_dd_pagecache', lambda: dd_module(mnt, PAGECACHE_MB)[:2],
                    lambda: dd_by_hand(argv, PAGECACHE_MB))
        if 'fidelity_fio' in parts:
            print('fidelity_fio (fio randread 4k O_DIRECT 3 s, same filesystem)', flush=True)
            argv = fio_module(mnt)[2]
            measure('fidelity_fio', lambda: fio_module(mnt)[:2], lambda: fio_by_hand(mnt, argv))
    return figures


def observer(pairs):
    """The observation's cost (issue 30): the fidelity_dd run (4 GiB of zeros, O_DIRECT, onto a loop
    device over a filled /dev/shm image) through the module observed every second vs not observed,
    alternating pairs: `observed_vs_unobserved` (median throughput ratio; goal >= 0.98), and the
    sampler's own CPU time per second of window (`observer_cpu_pct`, % of one core, median)."""
    cpu = []

    def run(interval):
        args = {'path': dev, 'test': 'write', 'size': '%dM' % RAW_MB, 'bs': '1M', 'guards': NO_GUARDS,
                'destructive': True, 'direct': True, 'data': 'zero', 'observe_interval_s': interval}
        rec = module('dd', args)['bench_result']
        if interval:
            obs = rec['observed']
            cpu.append(100.0 * obs['observer_cpu_s'] / obs['window_s'])
        return rec['metrics']['throughput']['value'], rec['duration_s']

    with loop_device(RAW_MB + 64, fill=True) as dev:
        print('observer (the fidelity_dd run observed every second vs not observed)', flush=True)
        ratio, ratios, dropped = paired(pairs, lambda: run(1.0), lambda: run(0))
    return {'observed_vs_unobserved': ratio, 'observed_vs_unobserved_ratios': ratios,
            'observed_vs_unobserved_dropped_pairs': dropped, 'observer_cpu_pct': statistics.median(cpu),
            'observer_cpu_pct_all': cpu}


# The CPU time (user + system) of the last bench_playbook's process tree: ansible-playbook, its
# workers, the modules and the tools (every descendant is reaped, so RUSAGE_CHILDREN counts it).
# Unlike the wall time it hardly depends on what else the machine runs.
LAST_CPU = [0.0]


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def bench_playbook(matrix, install=False, profile=False, playbook='playbooks/bench.yml'):
    """Run playbooks/bench.yml (or `playbook`, of this checkout's perf/floor) on localhost with `matrix`:
    (wall seconds, records, stdout)."""
    base = tempfile.mkdtemp(prefix='benchlab-perf-runs-')
    try:
        mfile = os.path.join(base, 'matrix.json')
        with open(mfile, 'w') as f:
            json.dump({'bench_matrix': matrix}, f)
        env = dict(ENV, BENCHLAB_REPORT_DIR=os.path.join(base, 'runs'), BENCHLAB_HISTORY_DB=os.path.join(base, 'h.sqlite'))
        if profile:  # perf/callback_plugins/task_timer.py: the time per task name, into profile
            env['ANSIBLE_CALLBACK_PLUGINS'] = os.path.join(HERE, 'perf', 'callback_plugins')
            env['ANSIBLE_CALLBACKS_ENABLED'] = 'benchlab.bench.report,task_timer'
            env['BENCHLAB_PERF_TIMER'] = profile
        t0, cpu0 = time.monotonic(), children_cpu()
        out = sh(os.path.join(BIN, 'ansible-playbook'), playbook, '-i', 'inventories/local',
                 '-e', '@' + mfile, '-e', 'bench_install_tools=%s' % ('true' if install else 'false'), env=env, cwd=REPO)
        wall = time.monotonic() - t0
        LAST_CPU[0] = children_cpu() - cpu0
        runs = [d for d in os.listdir(os.path.join(base, 'runs')) if d != 'latest'] if os.path.isdir(
            os.path.join(base, 'runs')) else []
        records = []
        for run_id in runs:   # one (an empty floor play stores none)
            with open(os.path.join(base, 'runs', run_id, 'results.json')) as f:
                records = json.load(f)['records']
        return wall, records, out
    finally:
        shutil.rmtree(base)


def floor_play(name):
    """The wall time of perf/floor/<name>.yml (this checkout's, with the report callback on as for
    bench.yml) minus its records' tool time: what `ansible-playbook` costs around that much work."""
    wall, records, _out = bench_playbook({}, playbook=os.path.join(HERE, 'perf', 'floor', name + '.yml'))
    return wall - sum(r.get('duration_s') or 0 for r in records), records


def dd_matrix(runs):
    return {'name': 'perf-overhead', 'repetitions': runs,
            'methodology': {'cooldown_s': 0, 'quiesce': False},
            'cells': [{'name': 'shm', 'host': 'localhost', 'path': '/dev/shm', 'expected_faster': True}],
            'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '8M'}}]}


def overhead(runs):
    """(wall - tools) / runs for a bench.yml of `runs` small dd writes on localhost (the tools are
    installed already); the fixed cost: the same for a one-run play, with the install check, as a
    user runs it; and the marginal cost of a run between the two."""
    wall, records, _out = bench_playbook(dd_matrix(runs))
    cpu = LAST_CPU[0]
    tools = sum(r.get('duration_s') or 0 for r in records)
    print('overhead: %d runs, playbook %.1f s (CPU %.1f s), tools %.2f s' % (len(records), wall, cpu, tools), flush=True)
    wall1, records1, _out = bench_playbook(dd_matrix(1), install=True)
    cpu1 = LAST_CPU[0]
    tools1 = sum(r.get('duration_s') or 0 for r in records1)
    fixed = wall1 - tools1
    print('fixed cost: one run with the install check, playbook %.1f s (CPU %.1f s), tool %.2f s' % (
        wall1, cpu1, tools1), flush=True)
    # The floor under the fixed cost: the same dd run as the only task of a play (perf/floor/one_run.yml:
    # no plan, no install check, no schedule), and a play of no task at all; the median of three each.
    floor_one = statistics.median(floor_play('one_run')[0] for _i in range(3))
    floor_empty = statistics.median(floor_play('empty')[0] for _i in range(3))
    print('floor: a play of that one dd task %.2f s, an empty play %.2f s (ansible-playbook and the report '
          'callback)' % (floor_one, floor_empty), flush=True)
    # The CPU figures count the tools' CPU too (8 MiB dd writes to /dev/shm: a few ms each).
    return {'overhead_per_cell_s': (wall - tools) / len(records), 'overhead_runs': len(records),
            'overhead_wall_s': wall, 'overhead_tools_s': tools, 'fixed_cost_s': fixed,
            'overhead_marginal_s': ((wall - tools) - fixed) / max(len(records) - 1, 1),
            'overhead_cpu_s': cpu, 'fixed_cost_cpu_s': cpu1,
            'fixed_cost_floor_s': floor_one, 'floor_empty_play_s': floor_empty,
            'overhead_marginal_cpu_s': (cpu - cpu1) / max(len(records) - 1, 1)}


PEER_DEPTHS = (1, 4, 16)
PEER_FIO = {'rw': 'randread', 'bs': '4k', 'ioengine': 'libaio', 'direct': True, 'size': '128M', 'runtime': 3,
            'time_based': True}


def perf_venv():
    """bench-fio in the perf tooling's own virtualenv (build/perf-venv), made on first use."""
    exe = os.path.join(PERF_VENV, 'bin', 'bench-fio')
    if not os.path.exists(exe):
        sh(sys.executable, '-m', 'venv', PERF_VENV)
        sh(os.path.join(PERF_VENV, 'bin', 'python'), '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check',
           PEER_PACKAGE)
    return exe


def bench_fio_once(exe, target):
    """The three fio jobs through bench-fio: (wall seconds, {iodepth: read IOPS})."""
    out = tempfile.mkdtemp(prefix='benchlab-perf-bfio-')
    try:
        t0 = time.monotonic()
        sh(exe, '--target', target, '--type', 'directory', '--size', PEER_FIO['size'], '--output', out,
           '--block-size', PEER_FIO['bs'], '--iodepth', *PEER_DEPTHS, '--numjobs', 1, '--runtime', PEER_FIO['runtime'],
           '--mode', PEER_FIO['rw'], '--engine', PEER_FIO['ioengine'], '--direct', 1, '--time-based', '--quiet')
        wall = time.monotonic() - t0
        iops = {}
        for root, _dirs, files in os.walk(out):
            for name in files:
                if name.endswith('.json'):
                    with open(os.path.join(root, name)) as f:
                        doc = json.load(f)
                    for job in doc.get('jobs') or []:
                        depth = int((job.get('job options') or {}).get('iodepth')
                                    or doc['global options'].get('iodepth'))
                        iops[depth] = job['read']['iops']
        return wall, iops
    finally:
        shutil.rmtree(out)
        for name in os.listdir(target):
            os.unlink(os.path.join(target, name))
        # bench-fio's job file, which it leaves in /tmp (runfio.py: /tmp/<target's name>-tmpjobfile.fio);
        # the target is a directory of ours, so is this name
        with contextlib.suppress(FileNotFoundError):
            os.unlink('/tmp/%s-tmpjobfile.fio' % os.path.basename(target))


def peer_matrix(target):
    return {'name': 'perf-peer', 'repetitions': 1, 'methodology': {'cooldown_s': 0},
            'cells': [{'name': 'var-tmp', 'host': 'localhost', 'path': target}],
            'benchmarks': [{'name': 'randread-qd%d' % d, 'tool': 'fio', 'params': dict(PEER_FIO, iodepth=d)}
                           for d in PEER_DEPTHS]}


def bench_yml_once(target):
    """The same three jobs through bench.yml (install check on, as a user runs it): (wall seconds,
    {iodepth: read IOPS}, {iodepth: fio argv}). Prints each run's quiet verdict (the CPU other
    processes used while it ran), so a disturbed round shows."""
    wall, records, _out = bench_playbook(peer_matrix(target), install=True)
    iops = dict((int(r['params']['iodepth']), r['metrics']['read_iops']['value']) for r in records)
    for r in records:
        g = r['params'].get('guards') or {}
        print('    bench.yml qd%s: %.0f IOPS, fio %.2f s, other processes %s%% CPU %s' % (
            r['params']['iodepth'], r['metrics']['read_iops']['value'], r['duration_s'], g.get('other_cpu_pct'),
            ', '.join(g.get('busiest') or [])), flush=True)
    return wall, iops, dict((int(r['params']['iodepth']), r['cmd']) for r in records)


def fio_by_hand_once(target, argvs):
    """bench.yml's own fio argv of each job, run directly (no Ansible) as the module's batch runs
    them: in one directory, the file the first job laid out read again by the next ones (renamed to
    the name fio gives the next job's file, as the module does; bench-fio too reads one file laid
    out by its first job). Separates what Ansible around fio costs from how the jobs differ from
    bench-fio's, and is the floor of bench.yml's time: fio's own."""
    t0 = time.monotonic()
    iops = {}
    work = tempfile.mkdtemp(prefix='benchlab-hand-', dir=target)
    try:
        previous = None
        for depth in PEER_DEPTHS:
            argv = [('--directory=%s' % work) if a.startswith('--directory=') else a for a in argvs[depth]]
            name = next(a.split('=', 1)[1] for a in argv if a.startswith('--name='))
            if previous:
                os.rename(os.path.join(work, previous + '.0.0'), os.path.join(work, name + '.0.0'))
            out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=work)
            iops[depth] = fio_records(out.stdout)[0]['metrics']['read_iops']['value']
            previous = name
    finally:
        shutil.rmtree(work)
    return time.monotonic() - t0, iops


def breakdown():
    """Where the time of the peer matrix's play goes: the wall time per task name (summed over its
    loop items and hosts' turns), largest first, and the number of tasks started."""
    target = tempfile.mkdtemp(prefix='perf-peer-', dir='/var/tmp')
    fd, timer = tempfile.mkstemp(prefix='benchlab-perf-timer-', suffix='.json')
    os.close(fd)
    try:
        wall, records, _out = bench_playbook(peer_matrix(target), install=True, profile=timer)
        with open(timer) as f:
            doc = json.load(f)
    finally:
        shutil.rmtree(target)
        os.unlink(timer)
    cpu = LAST_CPU[0]
    tools = sum(r.get('duration_s') or 0 for r in records)
    tasks = sorted(doc['tasks'].items(), key=lambda kv: -kv[1]['s'])
    print('breakdown: playbook %.1f s (CPU of its process tree %.1f s, fio included), tools %.1f s, %d task starts'
          % (wall, cpu, tools, sum(v['count'] for _k, v in tasks)), flush=True)
    for name, v in tasks:
        print('  %6.2f s  %3dx  %s' % (v['s'], v['count'], name), flush=True)
    return {'breakdown_wall_s': wall, 'breakdown_tools_s': tools, 'breakdown_cpu_s': cpu,
            'breakdown_task_starts': sum(v['count'] for _k, v in tasks),
            'breakdown_tasks': [dict(task=name, s=round(v['s'], 2), count=v['count']) for name, v in tasks]}


def peer(rounds):
    """time_to_result_vs_bench_fio: bench.yml and bench-fio on the same three fio jobs (randread 4k,
    libaio, O_DIRECT, 128 MiB, iodepth 1/4/16, 3 s each, /var/tmp), alternating which goes first;
    the median of the wall-time ratios and, per iodepth, the median IOPS ratio. A third side, bench.yml's
    own fio argv run by hand (after bench.yml, so the ordering does not favour it), tells an IOPS gap's
    cause: Ansible around fio (bench.yml / by hand, peer_iops_ratio_vs_hand) or the jobs themselves
    (by hand / bench-fio, peer_iops_ratio_hand_vs_bench_fio)."""
    exe = perf_venv()
    target = tempfile.mkdtemp(prefix='perf-peer-', dir='/var/tmp')
    ratios, ours, theirs, hands, floors, empties = [], [], [], [], [], []
    iops_ratios, vs_hand, hand_vs_peer = [dict((d, []) for d in PEER_DEPTHS) for _i in range(3)]

    def add(into, a, b):
        for d in PEER_DEPTHS:
            if a.get(d) and b.get(d):
                into[d].append(a[d] / b[d])

    def fmt(a, b):
        return ', '.join('qd%d %.2f' % (d, a.get(d, 0) / b[d]) for d in PEER_DEPTHS if b.get(d))

    try:
        for i in range(rounds):
            sides = {}
            for side in (('bench.yml', 'bench-fio') if i % 2 == 0 else ('bench-fio', 'bench.yml')):
                if side == 'bench.yml':
                    w, iops, argvs = bench_yml_once(target)
                    sides[side] = (w, iops)
                    sides['hand'] = fio_by_hand_once(target, argvs)
                else:
                    sides[side] = bench_fio_once(exe, target)
            (w_ours, i_ours), (w_theirs, i_theirs), (w_hand, i_hand) = sides['bench.yml'], sides['bench-fio'], sides['hand']
            # the floor of any playbook: an empty play (ansible-playbook and the report callback) plus fio's own time
            empty = floor_play('empty')[0]
            ratios.append(w_ours / w_theirs)
            ours.append(w_ours)
            theirs.append(w_theirs)
            hands.append(w_hand)
            empties.append(empty)
            floors.append((empty + w_hand) / w_theirs)
            add(iops_ratios, i_ours, i_theirs)
            add(vs_hand, i_ours, i_hand)
            add(hand_vs_peer, i_hand, i_theirs)
            print('  round %d: bench.yml %.1f s, bench-fio %.1f s, ratio %.2f; IOPS ratio %s; bench.yml/by hand %s; '
                  'by hand/bench-fio %s' % (i + 1, w_ours, w_theirs, ratios[-1], fmt(i_ours, i_theirs),
                                            fmt(i_ours, i_hand), fmt(i_hand, i_theirs)), flush=True)
            print('    fio by hand %.2f s, so bench-fio adds %.2f s to fio; an empty play takes %.2f s: the floor of '
                  'any playbook is %.2f of bench-fio' % (w_hand, w_theirs - w_hand, empty, floors[-1]), flush=True)
    finally:
        shutil.rmtree(target)

    def medians(by_depth):
        return dict(('qd%d' % d, statistics.median(v)) for d, v in by_depth.items() if v)

    return {'time_to_result_vs_bench_fio': statistics.median(ratios), 'peer_ratios': ratios,
            'peer_fio_by_hand_s': hands, 'peer_bench_fio_adds_s': statistics.median(t - h for t, h in zip(theirs, hands)),
            'peer_empty_play_s': empties, 'time_to_result_floor_vs_bench_fio': statistics.median(floors),
            'peer_bench_yml_s': ours, 'peer_bench_fio_s': theirs, 'peer_iops_ratio': medians(iops_ratios),
            'peer_iops_ratio_vs_hand': medians(vs_hand), 'peer_iops_ratio_hand_vs_bench_fio': medians(hand_vs_peer)}


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


def history_figures():
    proc = subprocess.run([sys.executable, os.path.join(HERE, 'perf', 'history_perf.py')], cwd=HERE,
                          capture_output=True, text=True, check=False)
    print(proc.stdout + proc.stderr[-2000:], flush=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        print('history_perf.py failed (exit %d): its figures are missing' % proc.returncode)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


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


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def update(out, figures):
    """Merge some figures into an existing results file: each figure keeps the date it was measured
    (figure_dates), the machine is the one of the newest figures."""
    with open(out) as f:
        doc = json.load(f)
    dates = doc.setdefault('figure_dates', dict((k, doc.get('date')) for k in doc.get('figures', {})))
    doc.setdefault('figures', {}).update(figures)
    dates.update((k, now()) for k in figures)
    doc.update(date=now(), machine=machine(), goals=dict((k, goal_text(k)) for k in GOALS),
               verdicts=judge(doc['figures']))
    with open(out, 'w') as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write('\n')
    for name in sorted(figures):
        if name != 'breakdown_tasks':
            print('%-28s %s' % (name, figures[name]))
    print('updated: %s' % out)
    return 0


def terminated(signum, _frame):
    # SIGTERM unwinds like Ctrl-C, so the loop filesystem and the /dev/shm images go away with it
    raise SystemExit(128 + signum)


def main(argv=None):
    signal.signal(signal.SIGTERM, terminated)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--pairs', type=int, default=11)
    ap.add_argument('--runs', type=int, default=20, help='runs of the overhead playbook')
    ap.add_argument('--rounds', type=int, default=3, help='alternating rounds of bench.yml and bench-fio')
    ap.add_argument('--out', default=os.path.join(HERE, 'perf', 'results.json'))
    ap.add_argument('--only', nargs='+', choices=PARTS, metavar='PART',
                    help='measure only these parts (%s), print them and write nothing' % ', '.join(PARTS))
    ap.add_argument('--update', action='store_true',
                    help='with --only: also merge these figures into --out (the others stay, with their date '
                         'in figure_dates)')
    args = ap.parse_args(argv)
    parts = args.only or PARTS
    figures = {}
    if 'fidelity_dd' in parts or 'fidelity_fio' in parts:
        figures.update(fidelity(args.pairs, parts))
    if 'overhead' in parts:
        figures.update(overhead(args.runs))
    if 'peer' in parts:
        figures.update(peer(args.rounds))
    if 'breakdown' in parts:
        figures.update(breakdown())
    if 'report' in parts:
        figures.update(report_100k())
    if 'history' in parts:
        figures.update(history_figures())
    if 'observer' in parts:
        figures.update(observer(args.pairs))
    if args.only and args.update:
        return update(args.out, figures)
    if args.only:
        for name in sorted(figures):
            value = figures[name]
            if name == 'breakdown_tasks':
                continue
            print('%-28s %s' % (name, ', '.join('%.3f' % v for v in value) if isinstance(value, list) else
                                ('%.3f' % value if isinstance(value, float) else value)))
        return 0
    verdicts = judge(figures)
    print('\n%-22s %10s  %-32s %10s  %s' % ('figure', 'value', 'goal', 'target', 'met'))
    for name, v in verdicts.items():
        print('%-22s %10s  %-32s %10s  %s' % (name, '%.3f' % v['value'] if v['value'] is not None else 'n/a', v['goal'],
                                              '%.3f' % v['target'] if v['target'] is not None else 'n/a',
                                              {True: 'yes', False: 'NO', None: 'not measured'}[v['met']]))
    for name, floor in (('fixed_cost_s', 'fixed_cost_floor_s'),
                        ('time_to_result_vs_bench_fio', 'time_to_result_floor_vs_bench_fio')):
        if figures.get(floor) is not None:
            print('%-22s %10.3f  the floor under %s: what a playbook that did nothing else takes' % (
                floor[:22], figures[floor], name))
    doc = {'date': now(), 'machine': machine(), 'figures': figures,
           'goals': dict((k, goal_text(k)) for k in GOALS), 'verdicts': verdicts}
    with open(args.out, 'w') as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write('\n')
    print('written: %s' % args.out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
