"""The host below a guest, observed through the one run path, for real: an LXC lab guest on a loop
image (benchlab.bench.local_lab, bench_hypervisor_host=localhost) writes with dd; the run path starts
benchlab.bench.observe on the host before the run, stops it after and cuts it to the guest's window,
and the record carries observed.host: the host's stack under the image (its loop device, the disk
under the image's file system) with the bytes each received, the guest's own cgroup CPU, and the
host-side cost. Then the same run with the host made busy on purpose (one CPU hog per core, started
here and stopped by their pids) fires host_busy; the quiet run before it is its control.

The lab is the integration tests' shared one (conftest.shared_lab); its first loop guest is observed.
The root file system comes from the lab's cache (/var/cache/benchlab)."""

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import BIN, SHARED_LAB_PREFIX, load_run, needs_lab, run, run_dirs

from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.explain import explain_cell, host_cost, run_verdicts

GUEST = 'bls-g2'
IMAGE = '/var/lib/benchlab/%s/%s.img' % (SHARED_LAB_PREFIX, GUEST)
SIZE = 192 * 1024 * 1024
MATRIX = {
    'name': 'blh-host-observe',
    'repetitions': 1,
    'methodology': {'cooldown_s': 0, 'quiesce': False, 'observe_interval_s': 0.25},
    'cells': [{'name': 'g1', 'host': GUEST, 'path': '/var/tmp'}],
    'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '192M', 'bs': '1M'}}],
}

pytestmark = needs_lab


@pytest.fixture
def lab(shared_lab):
    assert [g['storage'] for g in shared_lab['local_lab_guests'] if g['name'] == GUEST] == ['loop']
    return shared_lab


@pytest.fixture
def hogs():
    """Start one CPU hog per core on the host (outside the guest), stopped by their own pids."""
    procs = []

    def start():
        for _core in range(os.cpu_count() or 1):
            procs.append(subprocess.Popen([sys.executable, '-c', 'while True: pass']))
    try:
        yield start
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()


def bench(env, tmp_path, lab, name):
    vars_file = tmp_path / ('%s.json' % name)
    vars_file.write_text(json.dumps(dict(lab, bench_lab_matrix=MATRIX)))
    runs = tmp_path / name
    proc = run([BIN / 'ansible-playbook', 'playbooks/lab_bench.yml', '-i', 'inventories/local', '-e', '@%s' % vars_file],
               dict(env, BENCHLAB_REPORT_DIR=str(runs)))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    (run_dir,) = run_dirs(runs)
    results, jsonl = load_run(run_dir)
    (rec,) = [r for r in jsonl if r['host'] == GUEST]
    return run_dir, results, rec, out


def host_stack():
    """(the loop device of the guest's image, the disk under the image's file system), from the host's tools."""
    loop = subprocess.run(['losetup', '--noheadings', '--output', 'NAME', '--associated', IMAGE], capture_output=True,
                          text=True, check=True).stdout.split()[0]
    source = subprocess.run(['findmnt', '-n', '-o', 'SOURCE', '--target', IMAGE], capture_output=True, text=True,
                            check=True).stdout.strip()
    disk = subprocess.run(['lsblk', '-n', '-s', '-o', 'NAME,TYPE', source], capture_output=True, text=True,
                          check=True).stdout.split()
    disks = [disk[i].lstrip('└─│ ') for i in range(0, len(disk), 2) if disk[i + 1] == 'disk']
    return os.path.basename(loop), disks[0]


def test_a_loop_guest_is_observed_on_its_host_and_a_busy_host_is_told(env, tmp_path, lab, hogs):
    run_dir, results, rec, out = bench(env, tmp_path, lab, 'quiet')
    loop, disk = host_stack()
    host = rec['observed']['host']
    assert host['name'] == 'localhost' and host['role'] == 'hypervisor', host
    # held until its observer's after phase, then stored once, with it (results.jsonl and results.json)
    (kept,) = [r for r in results['records'] if r['host'] == GUEST]
    assert kept['observed']['host'] == host
    # the host's own stack under the guest's disk: the image's loop device and the disk under it
    assert loop in host['guest_devices'] and disk in host['guest_devices'], (loop, disk, host['guest_devices'])
    devices = dict((d['name'], d) for d in host['devices'])
    written = rec['observed']['tool']['write_bytes']
    assert written >= SIZE
    # the bytes the guest wrote reached the loop device and the disk under the image in its window
    assert devices[loop]['write_bytes'] >= 0.9 * SIZE, devices
    assert devices[disk]['write_bytes'] >= 0.5 * SIZE, devices
    # each layer's bytes, judged between layers: the container's loop device (the host's too: one
    # kernel, counted once), then the host's disk under the image; dd's sync returned with them there
    layers = explain_cell([rec])[0]['written']['layers']
    assert [(l['name'], l['where']) for l in layers] == [(loop, 'target'), (disk, 'localhost')], layers
    assert not {'not_durable', 'writes_elided'} & set(v['code'] for v in run_verdicts(rec)), layers
    # the window is the guest's, cut from the host's sampler (started before the run)
    assert abs(host['window_s'] - rec['observed']['window_s']) <= 2 * MATRIX['methodology']['observe_interval_s'] + 0.5
    # the guest's own CPU told apart: its container's cgroup on the host
    assert host['guest']['kind'] == 'lxc' and host['guest']['cgroup'] and host['guest']['pid'] > 1, host['guest']
    assert host['cpu']['guest_cpu_s'] > 0 and 0 <= host['cpu']['guest_pct'] <= host['cpu']['busy_pct_mean'] + 1
    # the host-side cost of the layer, in the record and in the report's explained line
    assert host['cost'] == host_cost(rec, host) and host['cost']['cpu_s_per_gb'] >= 0
    assert host['cpu']['kthread_cpu_s'] >= 0 and host['cost']['kernel_cpu_s_per_gb'] >= 0
    # the guest's own cgroup per GB moved (for a KVM guest that is qemu's CPU; here the container's)
    assert host['cost']['guest_cpu_s_per_gb'] > 0, host['cost']
    report = (run_dir / 'report.md').read_text()
    assert 'CPU s per GB moved outside the guest (' in report and '; the guest itself ' in report
    # the host's series beside the target's
    assert (run_dir / 'observed' / ('%s.json.gz' % host['series'])).is_file()
    assert (run_dir / 'observed' / ('%s.json.gz' % rec['observed']['series'])).is_file()
    # the control: a quiet host (this machine's other work stayed below the threshold: the figure says so)
    quiet = [v for v in run_verdicts(rec) if v['code'] == 'host_busy']
    assert quiet == [], (quiet, host['cpu'])

    hogs()
    run_dir, results, rec, out = bench(env, tmp_path, lab, 'busy')
    host = rec['observed']['host']
    (busy,) = [v for v in run_verdicts(rec) if v['code'] == 'host_busy']
    assert busy['figure'] >= 45 and 'other work than this guest' in busy['message'], (busy, host['cpu'])
    assert host['cpu']['busy_pct_mean'] >= 90, host['cpu']
    assert 'host busy' in (run_dir / 'report.md').read_text()
