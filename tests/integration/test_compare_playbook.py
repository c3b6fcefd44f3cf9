"""History and compare.yml for real: three runs of a tiny matrix stored by the callback, one of them
with its storage throttled on purpose, then compare.yml finds the regression and gates on it.

The cell's path is an ext4 file system on a loop device made for the test (its image in /dev/shm:
whatever the machine's disk). Every run's ansible-playbook is moved into a cgroup (iothrottle.py:
cgroup v1 blkio.throttle.write_bps_device, or v2 io.max, whichever the machine has) that limits
writes to that loop device: 16 MB/s for the two normal runs, 2 MB/s for the slowed-down one. So each
side's speed is what its throttle allows, not what the machine happens to do (unthrottled, a 4 MiB
write to memory takes milliseconds, and two normal runs then differ by +100% on a hiccup). dd
writes with O_DIRECT (cmp-matrix.yml: `direct: true`): a throttle governs only the I/O its processes
submit themselves, and a page-cache write would be written back by the kernel's flusher outside the
cgroup, so its slowdown would depend on timing (a fresh-clone CI once saw no slowdown at all).
Before any comparison is asserted the fixture checks the premise: each cgroup's own statistics
count its runs' bytes, no record is faster than its limit, and the base run is more than five times
faster than the slow one. Loop device, mount and cgroups carry the prefix `cmp` and are removed also
on failure."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import yaml

from conftest import BIN, FILES, REPO, ansible_env, run, run_dirs
import iothrottle

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import list_runs, load_run

SLOW_BPS = 2 * 1000 * 1000
THROTTLE_BURST_S = 0.2
NORMAL_BPS = 16 * 1000 * 1000
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for the loop device and the cgroup')


def _sh(*argv):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope='module')
def lab(tmp_path_factory):
    """A loop-device ext4 file system, a throttle for it, and three stored runs on it."""
    if iothrottle.default_mechanism() is None:
        pytest.skip('no I/O throttle on this machine: %s; %s'
                    % (iothrottle.unavailable('v1'), iothrottle.unavailable('v2')))
    tmp = tmp_path_factory.mktemp('cmp')
    image, mnt = Path(tempfile.mkstemp(prefix='cmp-loop-', suffix='.img', dir='/dev/shm')[1]), tmp / 'cmp-mnt'
    mnt.mkdir()
    loop = None
    throttles = {}
    mounted = False
    try:
        subprocess.run(['truncate', '-s', '64M', str(image)], check=True)
        loop = _sh('losetup', '-f', '--show', image)
        _sh('mkfs.ext4', '-q', loop)
        _sh('mount', loop, mnt)
        mounted = True
        majmin = _sh('lsblk', '-dno', 'MAJ:MIN', loop).replace(' ', '')
        for name, bps in (('normal', NORMAL_BPS), ('slow', SLOW_BPS)):
            throttles[name] = iothrottle.Throttle('cmp-%s' % name)
            throttles[name].limit(majmin, wbps=bps)
        matrix = yaml.safe_load((FILES / 'cmp-matrix.yml').read_text())
        matrix['bench_matrix']['cells'][0]['path'] = str(mnt)
        (tmp / 'matrix.json').write_text(json.dumps(matrix))
        lab = dict(tmp=tmp, mnt=mnt, db=tmp / 'history.sqlite', runs=tmp / 'runs', procs={})
        argv = [BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % (tmp / 'matrix.json'), '-e', 'bench_install_tools=false']
        for name, label, slow in (('base', 'cmp-base', False), ('normal', 'cmp-normal', False), ('slow', None, True)):
            env = ansible_env(tmp, BENCHLAB_HISTORY_DB=str(lab['db']), BENCHLAB_RUN_ID='cmp-%s-%s' % (name, uuid.uuid4().hex[:6]))
            if label:
                env['BENCHLAB_RUN_LABEL'] = label
            proc = run(throttles['slow' if slow else 'normal'].wrap(argv), env)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
            lab['procs'][name] = (env['BENCHLAB_RUN_ID'], proc)
        # the benchmark left nothing on the file system under test
        assert sorted(p.name for p in mnt.iterdir()) == ['lost+found']
        premise(lab, throttles, majmin)
        yield lab
    finally:
        for throttle in throttles.values():
            assert throttle.remove()
        if mounted:
            subprocess.run(['umount', str(mnt)], check=False)
        if loop:
            _detach(loop, image)
        image.unlink(missing_ok=True)


def premise(lab, throttles, majmin):
    """Each run's speed is what its throttle allows, before anything compares them: its writes went
    through its cgroup (the cgroup's own statistics), none of its records is faster than the limit,
    and the base run is more than five times faster than the slow one. (An idle throttle lets a burst
    through at once, up to two of cgroup v1 blkio's 100 ms slices' worth: a record may be that much
    faster.)"""
    runs = dict((name, load_run(str(lab['db']), run_id)) for name, (run_id, _proc) in lab['procs'].items())
    size = 8 * 1024 * 1024  # each record wrote 8M (cmp-matrix.yml)
    for group, names, bps in (('normal', ('base', 'normal'), NORMAL_BPS), ('slow', ('slow',), SLOW_BPS)):
        elapsed = [r['metrics']['elapsed']['value'] for name in names for r in runs[name]['records']]
        _read, written = throttles[group].io_bytes(majmin)
        assert written >= len(elapsed) * size, ('the %s runs\' writes did not go through their %s cgroup (%d bytes): '
                                                'not direct I/O?' % (group, throttles[group].mechanism, written))
        assert min(elapsed) >= (size - bps * THROTTLE_BURST_S) / bps, (
            'a record faster than its throttle (%d B/s)' % bps, elapsed)
    assert mean(runs['slow'], 'throughput') * 5 < mean(runs['base'], 'throughput'), (
        mean(runs['slow'], 'throughput'), mean(runs['base'], 'throughput'))


def _detach(loop, image):
    """Detach the loop device; right after umount it may still be busy for a moment."""
    for _attempt in range(50):
        subprocess.run(['losetup', '-d', loop], capture_output=True, check=False)
        if str(image) not in _sh('losetup', '-a'):
            return
        time.sleep(0.2)
    raise AssertionError('%s (%s) is still attached' % (loop, image))


def compare(lab, *extra, cwd=REPO, playbook='playbooks/compare.yml', env=None):
    env = env or ansible_env(lab['tmp'])
    argv = [BIN / 'ansible-playbook', playbook, '-e', 'history_db=%s' % lab['db'],
            '-e', 'output_dir=%s' % (lab['tmp'] / 'compare')]
    for e in extra:
        argv += ['-e', e]
    return run(argv, env, cwd=cwd)


def mean(doc, metric):
    vals = [r['metrics'][metric]['value'] for r in doc['records']]
    return sum(vals) / len(vals)


def test_every_run_is_stored_by_the_callback(lab):
    runs = {r['run_id']: r for r in list_runs(str(lab['db']))}
    ids = dict((k, v[0]) for k, v in lab['procs'].items())
    assert set(runs) == set(ids.values())
    assert runs[ids['base']]['label'] == 'cmp-base' and runs[ids['slow']]['label'] is None
    assert all(r['matrix'] == 'cmp-it' and r['status'] == 'complete' and r['n_records'] == 3 for r in runs.values())
    for name, (run_id, proc) in lab['procs'].items():
        assert 'benchlab history: run %s stored in %s' % (run_id, lab['db']) in proc.stdout
        # the history holds the document results.json was written from (the writer may add its schema tag)
        stored = load_run(str(lab['db']), run_id)
        written = json.loads((lab['runs'] / run_id / 'results.json').read_text())
        assert stored['records'] and dict((k, written.get(k)) for k in stored) == stored
    assert oct(os.stat(lab['db']).st_mode & 0o777) == '0o600'


def test_compare_flags_the_slowdown(lab):
    slow_id = lab['procs']['slow'][0]
    proc = compare(lab, 'baseline=cmp-base', 'candidate=%s' % slow_id, 'regression_threshold=5')
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    out = lab['tmp'] / 'compare' / ('compare-%s-vs-%s' % (slow_id, lab['procs']['base'][0]))
    doc = json.loads((out / 'results.json').read_text())
    regs = {(r['benchmark'], r['metric']): r for r in doc['comparison']['regressions']}
    assert ('dd-write', 'throughput') in regs and ('dd-write', 'elapsed') in regs
    assert regs[('dd-write', 'throughput')]['delta_pct'] < -80
    assert doc['comparison']['baseline']['label'] == 'cmp-base'
    report = (out / 'report.md').read_text()
    assert 'host-loopfs @ baseline' in report and 'host-loopfs @ candidate' in report
    assert 'significantly worse than the baseline by more than the 5% threshold' in report
    assert 'REGRESSION dd-write host-loopfs throughput' in proc.stdout
    assert str(out / 'report.md') in proc.stdout
    # no run was made: the history still holds three runs, and the report callback wrote no run dir
    assert len(list_runs(str(lab['db']))) == 3
    assert len(run_dirs(lab['tmp'] / 'runs')) == 3


def test_the_gate_fails_the_play_on_the_regression(lab):
    slow_id = lab['procs']['slow'][0]
    proc = compare(lab, 'baseline=cmp-base', 'candidate=%s' % slow_id, 'regression_threshold=80',
                   'fail_on_regression=true')
    assert proc.returncode != 0
    assert 'benchlab regression gate:' in proc.stdout and 'regressed beyond 80%' in proc.stdout
    assert 'dd-write host-loopfs throughput' in proc.stdout
    # the report was written before the play failed
    out = lab['tmp'] / 'compare' / ('compare-%s-vs-%s' % (slow_id, lab['procs']['base'][0]))
    assert (out / 'report.md').exists()


def test_two_normal_runs_pass_the_gate(lab):
    proc = compare(lab, 'baseline=cmp-base', 'candidate=cmp-normal', 'regression_threshold=80', 'fail_on_regression=true')
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert 'no regression' in proc.stdout
    out = lab['tmp'] / 'compare' / ('compare-%s-vs-%s' % (lab['procs']['normal'][0], lab['procs']['base'][0]))
    doc = json.loads((out / 'results.json').read_text())
    assert doc['comparison']['regressions'] == [] and doc['comparison']['too_little_data'] == []


def test_unknown_run_is_named(lab):
    proc = compare(lab, 'baseline=cmp-nope', 'candidate=latest')
    assert proc.returncode != 0
    assert "no run 'cmp-nope'" in proc.stdout and str(lab['db']) in proc.stdout
    proc = compare(lab)
    assert proc.returncode != 0 and '-e baseline=<run id or label>' in proc.stdout


def test_fqcn_playbook_from_the_installed_collection(lab, tmp_path):
    build, colls = tmp_path / 'build', tmp_path / 'collections'
    proc = run([BIN / 'ansible-galaxy', 'collection', 'build', '--force', '--output-path', build, REPO], ansible_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (tarball,) = build.glob('benchlab-bench-*.tar.gz')
    proc = run([BIN / 'ansible-galaxy', 'collection', 'install', '--offline', '--force', '-p', colls, tarball],
               ansible_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cfg = tmp_path / 'ansible.cfg'
    # the history location comes from the callback's ini setting, as in a user's project
    cfg.write_text('[defaults]\ncallbacks_enabled = benchlab.bench.report\ncollections_path = %s\n\n'
                   '[callback_benchlab_report]\nhistory_db = %s\n' % (colls, lab['db']))
    env = ansible_env(tmp_path, ANSIBLE_CONFIG=str(cfg))
    env.pop('BENCHLAB_REPORT_DIR')
    env.pop('BENCHLAB_HISTORY_DB')  # the ini setting above must be what counts
    proc = run([BIN / 'ansible-playbook', 'benchlab.bench.compare', '-e', 'baseline=cmp-base',
                '-e', 'candidate=%s' % lab['procs']['slow'][0], '-e', 'fail_on_regression=true'], env, cwd=tmp_path)
    assert proc.returncode != 0
    assert 'benchlab regression gate:' in proc.stdout, proc.stdout[-3000:] + proc.stderr[-2000:]
    (out,) = run_dirs(tmp_path / 'benchlab-runs')
    assert out.name.startswith('compare-') and (out / 'report.md').exists()
    assert str(REPO) not in proc.stdout
    shutil.rmtree(str(colls))
