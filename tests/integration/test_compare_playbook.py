"""History and compare.yml for real: three runs of a tiny matrix stored by the callback, one of them
with its storage throttled on purpose, then compare.yml finds the regression and gates on it.

The cell's path is an ext4 file system on a loop device made for the test; the slowed-down run's
ansible-playbook is moved into a blkio cgroup (cgroup v1 blkio.throttle.write_bps_device, or v2
io.max) that limits writes to that loop device to 2 MB/s - about 50-100x slower than unthrottled
here. Loop device, mount and cgroup carry the prefix `cmp` and are removed also on failure."""

import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import yaml

from conftest import BIN, FILES, REPO, ansible_env, run, run_dirs

from ansible_collections.benchlab.bench.plugins.plugin_utils.history import list_runs, load_run

THROTTLE_BPS = 2 * 1000 * 1000
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='needs root for the loop device and the cgroup')


def _sh(*argv):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=True).stdout.strip()


class Throttle(object):
    """A cgroup of our own that limits writes to one block device (major:minor)."""

    def __init__(self, majmin, bps):
        self.name = 'cmp-%s' % uuid.uuid4().hex[:8]
        v1 = Path('/sys/fs/cgroup/blkio')
        v2 = next((p for p in (Path('/sys/fs/cgroup'), Path('/sys/fs/cgroup/unified'))
                   if 'io' in _read(p / 'cgroup.controllers').split()), None)
        if (v1 / 'blkio.throttle.write_bps_device').exists():
            self.root, self.path = v1, v1 / self.name
            self.path.mkdir()
            (self.path / 'blkio.throttle.write_bps_device').write_text('%s %d\n' % (majmin, bps))
        elif v2 is not None:
            if 'io' not in _read(v2 / 'cgroup.subtree_control').split():
                (v2 / 'cgroup.subtree_control').write_text('+io\n')
            self.root, self.path = v2, v2 / self.name
            self.path.mkdir()
            (self.path / 'io.max').write_text('%s wbps=%d\n' % (majmin, bps))
        else:
            pytest.skip('no blkio/io cgroup controller to throttle a device with')

    def wrap(self, argv):
        """argv run inside the cgroup (the shell moves itself in, then execs)."""
        return ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.path)] + [str(a) for a in argv]

    def remove(self):
        if not self.path.exists():
            return
        for pid in _read(self.path / 'cgroup.procs').split():
            try:
                (self.root / 'cgroup.procs').write_text(pid + '\n')
            except OSError:
                pass
        self.path.rmdir()


def _read(path):
    try:
        return Path(path).read_text()
    except OSError:
        return ''


@pytest.fixture(scope='module')
def lab(tmp_path_factory):
    """A loop-device ext4 file system, a throttle for it, and three stored runs on it."""
    tmp = tmp_path_factory.mktemp('cmp')
    image, mnt = tmp / 'cmp-loop.img', tmp / 'cmp-mnt'
    mnt.mkdir()
    loop = throttle = None
    mounted = False
    try:
        subprocess.run(['truncate', '-s', '64M', str(image)], check=True)
        loop = _sh('losetup', '-f', '--show', image)
        _sh('mkfs.ext4', '-q', loop)
        _sh('mount', loop, mnt)
        mounted = True
        throttle = Throttle(_sh('lsblk', '-dno', 'MAJ:MIN', loop).replace(' ', ''), THROTTLE_BPS)
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
            proc = run(throttle.wrap(argv) if slow else argv, env)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
            lab['procs'][name] = (env['BENCHLAB_RUN_ID'], proc)
        # the benchmark left nothing on the file system under test
        assert sorted(p.name for p in mnt.iterdir()) == ['lost+found']
        yield lab
    finally:
        if throttle is not None:
            throttle.remove()
        if mounted:
            subprocess.run(['umount', str(mnt)], check=False)
        if loop:
            _detach(loop, image)
        image.unlink(missing_ok=True)
    assert not throttle or not throttle.path.exists()


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
    # the throttle really slowed the candidate down (the premise of the next tests)
    slow, base = (load_run(str(lab['db']), ids[k]) for k in ('slow', 'base'))
    assert mean(slow, 'throughput') * 5 < mean(base, 'throughput'), (mean(slow, 'throughput'), mean(base, 'throughput'))


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
