"""The local lab for real: LXC containers on this machine (benchlab.bench.local_lab), reached by
Ansible over SSH, benchmarked by playbooks/lab_bench.yml, and torn down also when a play fails.

The tests use their own prefix `blt` and network 198.19.0.0/16 (inside 198.18.0.0/15), so a lab
of `make bench` (prefix bl, 198.18.0.0/16) may exist at the same time. The root file system is
built once by mmdebstrap and cached in /var/cache/benchlab (about 1.5 minutes cold)."""

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import BIN, REPO, load_run, run, run_dirs

sys.path.insert(0, str(REPO / 'tests' / 'utils'))
from bl_lab_state import lab_is_gone, snapshot  # noqa: E402

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.measurements import TOGETHER_MIN, together  # noqa: E402

PREFIX = 'blt'
HOST_ADDR = '198.19.0.1'
G1, G2 = 'blt-g1', 'blt-g2'
A1, A2 = '198.19.0.11', '198.19.1.12'
LAB_VARS = {
    'local_lab_prefix': PREFIX,
    'local_lab_host_address': HOST_ADDR,
    'local_lab_loop_size': '1G',
    'local_lab_guests': [
        {'name': G1, 'storage': 'dir', 'net': 'bridged', 'address': A1},
        {'name': G2, 'storage': 'loop', 'net': 'routed', 'address': A2},
    ],
}

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which('lxc-start') or not shutil.which('mmdebstrap'),
    reason='the local lab needs root, lxc and mmdebstrap')


def teardown_lab(env):
    proc = run([BIN / 'ansible-playbook', 'playbooks/teardown.yml', '-i', 'inventories/local',
                '-e', 'local_lab_prefix=%s' % PREFIX], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return proc


@pytest.fixture
def clean_lab(env):
    """No blt lab before the test; none after it, whatever happened."""
    teardown_lab(env)
    assert lab_is_gone(PREFIX) == {}
    try:
        yield snapshot(PREFIX)
    finally:
        teardown_lab(env)


@pytest.fixture
def stray_ct():
    """The name of a stray container the test itself makes with the lab's names (a config and an empty
    root, no benchlab mark); removed afterwards also when the test fails."""
    name = PREFIX + '-g9'
    try:
        yield name
    finally:
        shutil.rmtree('/var/lib/lxc/%s' % name, ignore_errors=True)


@pytest.fixture
def canary():
    """A container with the lab's names that benchlab did not make (lxc-create -t none: a config and an
    empty root, never started). Every teardown must leave it; the test removes it itself."""
    name = PREFIX + '-canary'
    subprocess.run(['lxc-destroy', '-n', name], capture_output=True, check=False)
    subprocess.run(['lxc-create', '-n', name, '-t', 'none'], capture_output=True, check=True)
    config = Path('/var/lib/lxc/%s/config' % name)
    text = config.read_text()
    try:
        yield name, config, text
    finally:
        subprocess.run(['lxc-destroy', '-n', name], capture_output=True, check=False)
        shutil.rmtree('/var/lib/lxc/%s' % name, ignore_errors=True)


def assert_canary_kept(canary, out):
    name, config, text = canary
    assert config.read_text() == text
    assert name in subprocess.run(['lxc-ls', '-1'], capture_output=True, text=True, check=True).stdout.split()
    assert 'kept (not ours): container %s' % name in out, out[-3000:]


def without(snap, *names):
    """A snapshot without the entries naming the given containers (the canary is not the lab's)."""
    return {k: [v for v in vals if not any(n in v for n in names)] for k, vals in snap.items()}


def extra_vars(tmp_path, **more):
    path = tmp_path / 'lab-vars.json'
    path.write_text(json.dumps(dict(LAB_VARS, **more)))
    return '@%s' % path


def recap(stdout, host='localhost'):
    return [line for line in stdout.splitlines() if line.startswith(host + ' ') and 'ok=' in line][-1]


# this lab's own addresses only (the guests', the host's, the boom cell's): the VM tests' iperf runs
# on 198.19.77.* (tests/vm) may run at the same time and are no leftover of this lab
NO_SUCH_ADDR = '198.19.9.9'
LAB_ADDRESS = re.compile(r'(?<![\d.])(%s)(?![\d])' % '|'.join(re.escape(a) for a in (HOST_ADDR, A1, A2, NO_SUCH_ADDR)))


def lab_iperf_processes():
    out = subprocess.run(['ps', '-eo', 'pid,args'], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if 'iperf' in line and LAB_ADDRESS.search(line)]


MATRIX = {
    'name': 'blt-lab',
    'repetitions': 1,
    'baseline': 'host',
    'methodology': {'cooldown_s': 0, 'quiesce': False},
    'cells': [
        {'name': 'host', 'host': 'localhost', 'path': '/var/tmp', 'labels': {'platform': 'host'}},
        {'name': 'g1', 'host': G1, 'path': '/var/tmp'},
        {'name': 'g2', 'host': G2, 'path': '/var/tmp'},
        {'name': 'host-to-g1', 'host': 'localhost', 'path': '/tmp', 'labels': {'direction': 'host-guest'},
         'params': {'iperf': {'server_host': G1, 'server_address': A1}}},
        {'name': 'g1-to-g2', 'host': G1, 'path': '/tmp', 'labels': {'direction': 'guest-guest'},
         'params': {'iperf': {'server_host': G2, 'server_address': A2}}},
        {'name': 'g2-to-host-x2', 'host': G2, 'path': '/tmp', 'labels': {'direction': 'guest-host'},
         'params': {'iperf': {'server_host': 'localhost', 'server_address': HOST_ADDR, 'port': 15801,
                              'concurrent': [{'client_host': G1, 'server_host': 'localhost',
                                              'server_address': HOST_ADDR}]}}},
        # the injected failure: an iperf server that cannot bind (no such address in the guest)
        {'name': 'boom', 'host': G1, 'path': '/tmp',
         'params': {'iperf': {'server_host': G2, 'server_address': NO_SUCH_ADDR}}},
    ],
    'benchmarks': [
        {'name': 'dd-write', 'tool': 'dd', 'cells': ['host', 'g1', 'g2'], 'params': {'test': 'write', 'size': '8M'}},
        {'name': 'iperf', 'tool': 'iperf', 'cells': ['host-to-g1', 'g1-to-g2', 'g2-to-host-x2'],
         'params': {'time': 1, 'start_delay_s': 8}},
        {'name': 'boom', 'tool': 'iperf', 'cells': ['boom'], 'params': {'time': 1}},
    ],
}


def test_lab_bench_runs_on_guests_over_ssh_and_tears_down_after_a_failure(tmp_path, env, clean_lab, canary):
    before = clean_lab
    mfile = tmp_path / 'matrix.json'
    mfile.write_text(json.dumps({'bench_lab_matrix': MATRIX}))
    proc = run([BIN / 'ansible-playbook', 'playbooks/lab_bench.yml', '-i', 'inventories/local',
                '-e', extra_vars(tmp_path), '-e', '@%s' % mfile], env)
    out = proc.stdout + proc.stderr
    # the injected failure fails the run, after the teardown play
    assert proc.returncode != 0, out[-4000:]
    assert 'lab_bench: ' in out and 'boom' in out, out[-4000:]
    assert out.index('Tear the lab down, always') < out.index('Fail the run if a play failed')
    # every batch's task is named for its benchmarks, also where the first host is not in the batch
    assert 'template error' not in out and 'Benchmark dd-write' in out, out[-4000:]
    # Ansible reached both guests over SSH, at their lab addresses
    assert '%s -> %s(%s)' % ('localhost', G1, A1) in out or ('[%s]' % G1) in out
    runs = run_dirs(tmp_path / 'runs')
    assert len(runs) == 1
    _results, jsonl = load_run(runs[0])
    for rec in jsonl:
        assert validate_record({k: v for k, v in rec.items() if k not in ('host', 'cell_key')}) == []
    by = Counter((r['host'], r['tool'], r['labels']['cell']) for r in jsonl)
    assert by[('localhost', 'dd', 'host')] == by[(G1, 'dd', 'g1')] == by[(G2, 'dd', 'g2')] == 1, by
    assert by[('localhost', 'iperf3', 'host-to-g1')] == by[(G1, 'iperf3', 'g1-to-g2')] == 1, by
    assert by[(G2, 'iperf3', 'g2-to-host-x2')] == 2, by   # two pairs at once, a record each
    # the records carry the labels the role gave the guests
    for rec in jsonl:
        if rec['labels']['cell'] == 'g1':
            assert {k: rec['labels'][k] for k in ('platform', 'storage', 'net')} == \
                {'platform': 'container', 'storage': 'dir', 'net': 'bridged'}
        if rec['labels']['cell'] == 'g2':
            assert {k: rec['labels'][k] for k in ('platform', 'storage', 'net')} == \
                {'platform': 'container', 'storage': 'loop', 'net': 'routed'}
        if rec['tool'] == 'dd':
            assert rec['metrics']['throughput']['value'] > 0
            assert rec['metrics']['bytes']['value'] == 8 * 1024 * 1024
        else:
            assert rec['metrics']['throughput']['value'] > 0
            assert rec['params']['server'] != '127.0.0.1'
    # the runs went in the plan's order across the hosts, which all contend for this machine (the cells of
    # a benchmark one right after the other), not each host's runs as one block
    started = {}
    for rec in jsonl:
        started[rec['labels']['cell']] = min(rec['started'], started.get(rec['labels']['cell'], rec['started']))
    plan_order = ['host', 'g1', 'g2', 'host-to-g1', 'g1-to-g2', 'g2-to-host-x2']
    assert sorted(plan_order, key=started.get) == plan_order, started
    pairs = sorted((r['labels'].get('pair'), r['labels'].get('pairs'), r['labels'].get('client'))
                   for r in jsonl if r['labels']['cell'] == 'g2-to-host-x2')
    assert pairs == [(1, 2, None), (2, 2, G1)]
    # the two pairs (clients on two guests) waited for one agreed moment and ran together from it (the
    # analysis' own overlap rule; start_delay_s 8: under load the guests' modules took over 3.5 s to start)
    x2 = [r for r in jsonl if r['labels']['cell'] == 'g2-to-host-x2']
    starts = [r['params']['guards'] for r in x2]
    assert len(set(g['start_at'] for g in starts)) == 1 and together(x2)['fraction'] >= TOGETHER_MIN, (together(x2), starts)
    assert not any(r['labels']['cell'] == 'boom' for r in jsonl)
    # nothing of the lab is left: containers, links, routes, loop devices, mounts, processes, files;
    # the container with the lab's names that benchlab did not make is still there, reported as not ours
    assert_canary_kept(canary, out)
    assert without(snapshot(PREFIX), canary[0]) == before
    assert without(lab_is_gone(PREFIX), canary[0]) == {'files': [], 'lxc-ls': []}
    assert lab_iperf_processes() == []


def test_half_built_lab_is_repaired_rebuild_changes_nothing_and_plan_failure_tears_down(
        tmp_path, env, clean_lab, stray_ct):
    before = clean_lab
    # what a killed run leaves: the lab state it wrote first, a bridge without address, a (marked)
    # container with a stale config and an empty root, a buffered loop device on the image; and a stray
    # container with the lab's names that the lab did not make (no mark, not recorded)
    labdir = Path('/var/lib/benchlab/%s' % PREFIX)
    labdir.mkdir(parents=True, mode=0o700)
    img = labdir / (G2 + '.img')
    Path('/var/lib/benchlab/lab-%s.json' % PREFIX).write_text(json.dumps({
        'benchlab': 1, 'lab': PREFIX, 'created': '2026-01-01T00:00:00Z', 'bridge': PREFIX + 'br0',
        'dirs': [str(labdir)], 'containers': [G1, G2], 'images': [str(img)]}))
    subprocess.run(['ip', 'link', 'add', PREFIX + 'br0', 'type', 'bridge'], check=True)
    stray = stray_ct
    for ct in (G1, stray):
        root = Path('/var/lib/lxc/%s/rootfs' % ct)
        root.mkdir(parents=True)
        (root.parent / 'config').write_text('lxc.uts.name = %s\nlxc.rootfs.path = dir:%s\n' % (ct, root))
    (root.parent.parent / G1 / 'benchlab-lab.json').write_text(json.dumps({'benchlab': 1, 'lab': PREFIX, 'guest': G1}))
    subprocess.run(['truncate', '-s', '1G', str(img)], check=True)
    stray_dev = subprocess.run(['losetup', '--find', '--show', str(img)], capture_output=True, text=True,
                               check=True).stdout.strip()
    assert lab_is_gone(PREFIX) != {}

    play = tmp_path / 'lab.yml'
    play.write_text('''
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: benchlab.bench.local_lab
    - ansible.builtin.command: cat /etc/benchlab-rootfs /proc/1/cmdline
      delegate_to: "{{ item }}"
      loop: "{{ groups['benchlab_lab'] }}"
      changed_when: false
      register: probe
    - ansible.builtin.debug:
        msg: "LAB {{ item }} {{ hostvars[item].ansible_host }} {{ hostvars[item].bench_lab_labels | dictsort | map('join', '=') | join(',') }}
              dio={{ hostvars[item].bench_lab_loop_direct_io | default('-') }}"
      loop: "{{ groups['benchlab_lab'] }}"
    - ansible.builtin.debug:
        msg: "SSHARGS {{ item }} {{ hostvars[item].ansible_ssh_common_args }}"
      loop: "{{ groups['benchlab_lab'] }}"
''')
    first = run([BIN / 'ansible-playbook', play, '-i', 'inventories/local', '-e', extra_vars(tmp_path)], env)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    assert 'changed=0' not in recap(first.stdout)
    for name, addr in ((G1, A1), (G2, A2)):
        assert 'localhost -> %s(%s)' % (name, addr) in first.stdout   # reached over SSH
    assert 'LAB %s %s net=bridged,platform=container,storage=dir,virt=lxc dio=-' % (G1, A1) in first.stdout
    assert 'LAB %s %s net=routed,platform=container,storage=loop,virt=lxc dio=True' % (G2, A2) in first.stdout
    # the stray loop device was reused (not a second one), now with direct I/O, and mounted
    loops = subprocess.run(['losetup', '-n', '-O', 'NAME,DIO', '-j', str(img)], capture_output=True, text=True,
                           check=True).stdout.split()
    assert loops == [stray_dev, '1']
    assert subprocess.run(['findmnt', '-n', '-o', 'SOURCE', '/var/lib/lxc/%s/rootfs' % G2], capture_output=True,
                          text=True, check=False).stdout.strip() == stray_dev

    second = run([BIN / 'ansible-playbook', play, '-i', 'inventories/local', '-e', extra_vars(tmp_path)], env)
    assert second.returncode == 0, second.stdout[-4000:]
    assert 'changed=0' in recap(second.stdout) and 'failed=0' in recap(second.stdout), recap(second.stdout)

    # local_lab_reuse: the whole lab is used as it is (no step of the build or repair), the same inventory
    lab_lines = sorted(line.strip() for line in second.stdout.splitlines() if '"msg": "LAB ' in line)
    reused = run([BIN / 'ansible-playbook', play, '-i', 'inventories/local', '-e', extra_vars(tmp_path, local_lab_reuse=True)], env)
    assert reused.returncode == 0 and 'changed=0' in recap(reused.stdout), reused.stdout[-4000:]
    assert 'Add each guest to the inventory as it is' in reused.stdout
    assert 'Write the container config of' not in reused.stdout and 'Install what the lab needs' not in reused.stdout
    assert sorted(line.strip() for line in reused.stdout.splitlines() if '"msg": "LAB ' in line) == lab_lines
    for name, addr in ((G1, A1), (G2, A2)):
        assert 'localhost -> %s(%s)' % (name, addr) in reused.stdout   # reached over SSH
    # a guest that is not running: the lab is repaired as without local_lab_reuse
    subprocess.run(['lxc-stop', '--name', G1, '--kill'], check=True, capture_output=True)
    repaired = run([BIN / 'ansible-playbook', play, '-i', 'inventories/local', '-e', extra_vars(tmp_path, local_lab_reuse=True)], env)
    assert repaired.returncode == 0, repaired.stdout[-4000:]
    assert 'Write the container config of %s' % G1 in repaired.stdout and 'Start %s' % G1 in repaired.stdout
    assert 'changed=0' not in recap(repaired.stdout)
    assert sorted(line.strip() for line in repaired.stdout.splitlines() if '"msg": "LAB ' in line) == lab_lines

    # host keys: generated by the role, pinned in the lab's known_hosts, checked (not trusted on first use)
    known = labdir / 'known_hosts'
    args = 'SSHARGS %s -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes' % (G1, known)
    assert args in first.stdout
    pinned = {line.split()[0]: line.split()[1:3] for line in known.read_text().splitlines()}
    for name, addr in ((G1, A1), (G2, A2)):
        key = Path('/var/lib/lxc/%s/rootfs/etc/ssh/ssh_host_ed25519_key.pub' % name).read_text().split()[:2]
        assert pinned[addr] == key
    ssh = ['ssh', '-i', str(labdir / 'id_ed25519'), '-o', 'UserKnownHostsFile=%s' % known, '-o',
           'StrictHostKeyChecking=yes', '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o',
           'GlobalKnownHostsFile=/dev/null', 'root@' + A1, 'true']
    ok = subprocess.run(ssh, capture_output=True, text=True, timeout=60, check=False)
    assert ok.returncode == 0, ok.stderr
    good = known.read_text()
    other = tmp_path / 'other_key'
    subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', str(other)], check=True)
    try:
        wrong = ' '.join(Path(str(other) + '.pub').read_text().split()[:2])
        known.write_text(good.replace(' '.join(pinned[A1]), wrong))
        bad = subprocess.run(ssh, capture_output=True, text=True, timeout=60, check=False)
        assert bad.returncode == 255, bad.stderr
        assert 'REMOTE HOST IDENTIFICATION HAS CHANGED' in bad.stderr or 'Host key verification failed' in bad.stderr
    finally:
        known.write_text(good)

    # a matrix naming a guest that does not exist fails in the planning play: the lab is still removed
    bad = dict(MATRIX, cells=MATRIX['cells'][:1] + [dict(MATRIX['cells'][1], host='blt-g7')],
               benchmarks=MATRIX['benchmarks'][:1])
    bad['benchmarks'] = [dict(bad['benchmarks'][0], cells=['host', 'g1'])]
    mfile = tmp_path / 'bad.json'
    mfile.write_text(json.dumps({'bench_lab_matrix': bad}))
    proc = run([BIN / 'ansible-playbook', 'playbooks/lab_bench.yml', '-i', 'inventories/local',
                '-e', extra_vars(tmp_path), '-e', '@%s' % mfile], env)
    assert proc.returncode != 0
    assert "bench_matrix.cells[1].host: 'blt-g7' is not in the inventory" in proc.stdout
    assert 'Benchmark dd' not in proc.stdout
    # the stray container the lab did not make survives the teardown, reported as not ours
    assert Path('/var/lib/lxc/%s/config' % stray).exists()
    assert 'kept (not ours): container %s' % stray in proc.stdout
    shutil.rmtree('/var/lib/lxc/%s' % stray)
    assert snapshot(PREFIX) == before
    assert lab_is_gone(PREFIX) == {}


def test_a_container_the_lab_did_not_make_is_refused_unless_adopted_and_survives_teardown(tmp_path, env, clean_lab,
                                                                                          canary):
    """Cheap (nothing is built): a guest whose container directory exists without the lab's mark stops
    the role before it creates anything, naming the container and local_lab_adopt; the teardown keeps
    it. The teardown removes a recorded and marked container, and not a recorded one without the mark."""
    name, _config, _text = canary
    guests = [{'name': name, 'storage': 'dir', 'net': 'bridged', 'address': A1}]
    proc = run([BIN / 'ansible-playbook', 'playbooks/lab_bench.yml', '-i', 'inventories/local',
                '-e', extra_vars(tmp_path, local_lab_guests=guests, local_lab_host_packages=[])], env)
    out = ' '.join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0
    assert ('local_lab: container %s (/var/lib/lxc/%s) exist(s) but carry no mark of lab %s' % (name, name, PREFIX)
            in out), out[-3000:]
    assert 'local_lab_adopt: true' in out
    assert not Path('/var/lib/benchlab/lab-%s.json' % PREFIX).exists()   # refused before recording anything
    assert not Path('/sys/class/net/%sbr0' % PREFIX).exists()
    assert_canary_kept(canary, proc.stdout)

    # teardown.sh on its own: a recorded+marked container goes, a recorded unmarked one stays
    ours, unmarked = PREFIX + '-ours', PREFIX + '-nomark'
    try:
        for ct in (ours, unmarked):
            Path('/var/lib/lxc/%s/rootfs' % ct).mkdir(parents=True)
            Path('/var/lib/lxc/%s/config' % ct).write_text('lxc.uts.name = %s\n' % ct)
        Path('/var/lib/lxc/%s/benchlab-lab.json' % ours).write_text(
            json.dumps({'benchlab': 1, 'lab': PREFIX, 'guest': ours}))
        Path('/var/lib/lxc/%s/benchlab-lab.json' % unmarked).write_text(   # another lab's mark
            json.dumps({'benchlab': 1, 'lab': 'other', 'guest': unmarked}))
        Path('/var/lib/benchlab').mkdir(mode=0o755, exist_ok=True)
        Path('/var/lib/benchlab/lab-%s.json' % PREFIX).write_text(json.dumps(
            {'benchlab': 1, 'lab': PREFIX, 'bridge': PREFIX + 'br0', 'dirs': [], 'images': [],
             'containers': [ours, unmarked, name]}))
        proc = teardown_lab(env)
        assert not Path('/var/lib/lxc/%s' % ours).exists()
        assert Path('/var/lib/lxc/%s/config' % unmarked).exists()
        assert 'kept (not ours): container %s (no benchlab mark of lab %s)' % (unmarked, PREFIX) in proc.stdout
        assert_canary_kept(canary, proc.stdout)
    finally:
        for ct in (ours, unmarked):
            shutil.rmtree('/var/lib/lxc/%s' % ct, ignore_errors=True)
        Path('/var/lib/benchlab/lab-%s.json' % PREFIX).unlink(missing_ok=True)
