"""The variance gate and the rounds driven by the comparisons, live: a cell made noisy on purpose
runs to the cap and is flagged while a quiet cell stops at the default count; with budget_s, the
noisy cell's comparison gets a round to the sequential test's next look and concludes there.

Two small ext4 filesystems on loop devices whose images live in /dev/shm, so reading them costs
memory speed and does not depend on this VM's disk. The playbook runs inside a cgroup of the test's
own (iothrottle.py: cgroup v1 blkio here, cgroup v2 io.max on a host without v1; fio reads with
O_DIRECT, which both govern). Both cells' devices are limited to QUIET_IOPS reads per second, so
their figures are what the throttle allows, not what a loaded machine happens to do (unthrottled,
the quiet cell's own runs spread by 2-7x here when other work ran, and its gate was not met). A watcher
thread sees each fio process of the noisy cell start and throttles that cell's loop device for
every other run (a competing load with a known pattern: a run either shares the device with
the throttle or does not). Throttling is per device, so the quiet cell is never touched.
The noise pattern is deterministic, so the test is not flaky: the noisy cell's runs alternate between
about 150 and QUIET_IOPS, a CV near 90%, far above max_cv 0.5; the quiet cell's stay at QUIET_IOPS.
"""

import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import yaml

from conftest import BIN, REPO, load_run, processes_with, run_dirs
import iothrottle

MAX_REPS = 6
THROTTLED_IOPS = 150
# the ceiling of both cells (a /dev/shm loop device does far more than this, also under load)
QUIET_IOPS = 2000


def sh(*argv):
    return subprocess.run([str(a) for a in argv], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def devices(tmp_path):
    """Two 64 MiB ext4 loop filesystems backed by /dev/shm: {'quiet': (mnt, maj:min), 'noisy': ...}."""
    made, mounts, images = [], [], []
    try:
        out = {}
        for name in ('quiet', 'noisy'):
            image = Path(tempfile.mkstemp(prefix='benchlab-gate-%s-' % name, dir='/dev/shm')[1])
            images.append(image)
            os.truncate(image, 64 * 1024 ** 2)
            dev = sh('losetup', '--find', '--show', image)
            made.append(dev)
            sh('mkfs.ext4', '-q', dev)
            mnt = Path(tempfile.mkdtemp(prefix='benchlab-gate-%s-' % name))
            sh('mount', dev, mnt)
            mounts.append(mnt)
            out[name] = (str(mnt), sh('lsblk', '-dno', 'MAJ:MIN', dev).strip())
        yield out
    finally:
        for mnt in mounts:
            subprocess.run(['umount', str(mnt)], check=False, capture_output=True)
            mnt.rmdir()
        for dev in made:
            subprocess.run(['losetup', '-d', dev], check=False, capture_output=True)
        for image in images:
            image.unlink()


@pytest.fixture
def throttle():
    if iothrottle.default_mechanism() is None:
        pytest.skip('no I/O throttle on this machine: %s; %s'
                    % (iothrottle.unavailable('v1'), iothrottle.unavailable('v2')))
    group = iothrottle.Throttle('benchlab-gate')
    try:
        yield group
    finally:
        assert group.remove()


class Noise(threading.Thread):
    """Throttles the noisy device for every other fio run in it (the 1st, 3rd, ...), or for the runs
    `throttled(k)` says (k counts from 1)."""

    def __init__(self, throttle, majmin, mountpoint, throttled=lambda k: k % 2 == 1):
        super().__init__(daemon=True)
        self.throttle, self.majmin, self.mountpoint = throttle, majmin, mountpoint
        self.pattern = throttled
        self.stop = threading.Event()
        self.runs = 0
        self.throttled = []

    def limit(self, iops):
        self.throttle.limit(self.majmin, riops=iops)

    def run(self):
        seen = set()
        while not self.stop.is_set():
            pids = set(processes_with(self.mountpoint, program='fio'))
            new = pids - seen
            # fio forks a job process: a run is a new fio whose parent is not a fio we know
            if new and not (pids & seen):
                self.runs += 1
                throttle = self.pattern(self.runs)
                self.limit(THROTTLED_IOPS if throttle else QUIET_IOPS)
                self.throttled.append(throttle)
            seen = pids
            time.sleep(0.02)
        self.limit(0)


def two_cells(name, devices, methodology, runtime):
    """The matrix of both tests: fio random reads, 3 repetitions, in the quiet cell (the baseline)
    and the noisy one, with these methodology keys."""
    return {'bench_matrix': {
        'name': name, 'repetitions': 3, 'baseline': 'quiet',
        'methodology': dict(methodology, cooldown_s=0, quiesce=False),
        'cells': [{'name': 'quiet', 'host': 'localhost', 'path': devices['quiet'][0], 'labels': {'storage': 'loop-shm'}},
                  {'name': 'noisy', 'host': 'localhost', 'path': devices['noisy'][0],
                   'labels': {'storage': 'loop-shm-throttled'}}],
        'benchmarks': [{'name': 'fio-randread', 'tool': 'fio',
                        'params': {'rw': 'randread', 'bs': '4k', 'size': '16M', 'runtime': runtime, 'time_based': True,
                                   'direct': True}}]}}


def run_throttled(tmp_path, env, throttle, devices, noise, matrix):
    """bench.yml over `matrix` inside the throttle's cgroup, the quiet device at QUIET_IOPS and the
    noise running: (the finished process, results.json, results.jsonl records, the run directory)."""
    (tmp_path / 'matrix.yml').write_text(yaml.safe_dump(matrix))
    throttle.limit(devices['quiet'][1], riops=QUIET_IOPS)
    noise.limit(QUIET_IOPS)
    noise.start()
    # the shell joins the cgroup, then becomes ansible-playbook: every process it starts is inside
    argv = throttle.wrap([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                          '-e', '@%s' % (tmp_path / 'matrix.yml'), '-e', 'bench_install_tools=false'])
    try:
        proc = subprocess.run(argv, cwd=str(REPO), env=env, capture_output=True, text=True, timeout=900, check=False)
    finally:
        noise.stop.set()
        noise.join()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results, jsonl = load_run(run_dir)
    return proc, results, jsonl, run_dir


def test_noisy_cell_runs_to_the_cap_and_is_flagged(tmp_path, env, devices, throttle):
    noisy, noisy_dev = devices['noisy']
    matrix = two_cells('gate-live', devices, {'max_cv': 0.5, 'max_repetitions': MAX_REPS}, runtime=2)
    noise = Noise(throttle, noisy_dev, noisy)
    _proc, results, jsonl, run_dir = run_throttled(tmp_path, env, throttle, devices, noise, matrix)
    (bench,) = results['analysis']['benchmarks']
    cells = {c['cell']: c for c in bench['cells']}
    per_cell = {name: [r for r in jsonl if r['labels']['cell'] == name] for name in ('quiet', 'noisy')}

    # the noise really happened: every other noisy run throttled (the cgroup counted the noisy device's
    # reads), and it shows in the numbers
    assert noise.runs == len(per_cell['noisy']) and noise.throttled[:2] == [True, False]
    assert throttle.io_bytes(noisy_dev)[0] > 0, "the noisy cell's reads did not go through the cgroup"
    iops = [r['metrics']['read_iops']['value'] for r in per_cell['noisy']]
    assert max(iops) > 5 * min(iops), iops
    # and both cells ran at what their throttle allows (a burst of one idle slice at most above it)
    quiet_iops = [r['metrics']['read_iops']['value'] for r in per_cell['quiet']]
    assert max(iops + quiet_iops) <= QUIET_IOPS * 1.25, (iops, quiet_iops)

    # the noisy cell: runs added up to the cap, never beyond it; the gate is not met and flagged
    noisy_gate = cells['noisy']['gate']
    assert len(per_cell['noisy']) == MAX_REPS == noisy_gate['n']
    assert noisy_gate['met'] is False and noisy_gate['capped'] is True and noisy_gate['cv'] > 0.5
    flags = [f['code'] for f in cells['noisy']['flags']]
    assert 'gate_not_met' in flags, cells['noisy']['flags']

    # the quiet cell stopped at the default count with its gate met
    quiet_gate = cells['quiet']['gate']
    assert len(per_cell['quiet']) == 3 == quiet_gate['n'], [r['metrics']['read_iops']['value'] for r in per_cell['quiet']]
    assert quiet_gate['met'] is True and quiet_gate['cv'] <= 0.5
    assert 'gate_not_met' not in [f['code'] for f in cells['quiet']['flags']]
    assert '`gate_not_met`' in (run_dir / 'report.md').read_text()


ROUND_CAP = 12


def test_rounds_go_to_the_unsettled_comparison_and_stop_at_its_verdict(tmp_path, env, devices, throttle):
    """methodology.budget_s, live: the noisy cell's runs are throttled except its 3rd, so its
    comparison with the quiet cell cannot be settled at the planned 3 runs (Welch's t is 2.0 whatever
    the rates); the round brings both cells to the sequential test's next look, 6 runs, where the
    noisy cell is worse (t 5.0). Judged by what the run printed and recorded: one round, to the look
    at 6; every run it asked for is a record and nothing else was added; the verdict is the
    sequential test's at that look."""
    noisy, noisy_dev = devices['noisy']
    matrix = two_cells('rounds-live', devices, {'budget_s': 900, 'max_repetitions': ROUND_CAP}, runtime=1)
    noise = Noise(throttle, noisy_dev, noisy, throttled=lambda k: k != 3)
    proc, results, jsonl, run_dir = run_throttled(tmp_path, env, throttle, devices, noise, matrix)
    per_cell = {name: sorted(r['repetition'] for r in jsonl if r['labels']['cell'] == name) for name in ('quiet', 'noisy')}
    # the noise happened as designed: every noisy run throttled but the 3rd
    iops = [r['metrics']['read_iops']['value'] for r in sorted(jsonl, key=lambda r: r['repetition'])
            if r['labels']['cell'] == 'noisy']
    assert noise.throttled == [k != 3 for k in range(1, len(iops) + 1)]
    assert [v > QUIET_IOPS / 2 for v in iops] == [k == 3 for k in range(1, len(iops) + 1)], iops

    # what the rounds printed: one round, to the look at 6, and then no further one
    planned = [line for line in proc.stdout.splitlines() if 'run  fio-randread noisy vs quiet' in line]
    assert len(planned) == 1 and 'to the look at 6: 3 more of noisy, 3 more of quiet' in planned[0], proc.stdout[-3000:]
    assert 'no further round: 1 of 1 comparisons concluded' in proc.stdout
    # every repetition 1..6 exactly once per cell: the round's six runs and nothing else
    assert per_cell['noisy'] == per_cell['quiet'] == [1, 2, 3, 4, 5, 6]

    (row,) = results['analysis']['overview']
    seq = row['sequential']
    assert results['analysis']['correction']['sequential']['budget_s'] == 900
    assert (seq['first'], seq['last'], seq['look_n'], seq['looks']) == (3, ROUND_CAP, 6, 2), seq
    # worse at the look at 6: its p divided by that look's share is below alpha
    assert row['verdict'] == 'worse' and row['p_adjusted'] < 0.05, row
    assert 'Sequential test' in (run_dir / 'report.md').read_text()
