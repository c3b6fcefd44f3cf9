"""fio job files as people write them, run for real by benchlab.bench.fio (`ansible -m`): one record
per job/group aggregated over numjobs, the aggregate held to fio's own --group_reporting arithmetic on
each run's own figures, nothing left outside (or inside) the module's path. The job files are
tests/unit/fixtures/fio/jobs (written for these tests)."""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import fio_records
from conftest import module

JOBS = Path(__file__).resolve().parents[1] / 'unit' / 'fixtures' / 'fio' / 'jobs'


@pytest.fixture
def area():
    """A scratch area on /var/tmp (ext4: O_DIRECT works, unlike tmpfs): the module's path, a directory
    of the user's the job file names, and the job files; removed whatever happens."""
    root = Path(tempfile.mkdtemp(prefix='wk-fio-jobs-', dir='/var/tmp'))
    try:
        for sub in ('work', 'outside', 'jobs'):
            (root / sub).mkdir()
        yield root
    finally:
        shutil.rmtree(str(root))


def _job(area, name, text=None):
    path = area / 'jobs' / name
    path.write_text(text if text is not None else (JOBS / name).read_text())
    return path


def test_tiobench_style_gives_one_record_per_group_over_its_four_workers(env, area):
    rc, status, res = module(env, 'fio', {'path': str(area / 'work'), 'job_file': str(_job(area, 'tiobench-style.fio'))})
    assert rc == 0, res
    recs = res['bench_results']
    assert [r['test'] for r in recs] == ['seq-write', 'seq-read', 'rand-write', 'rand-read']      # not 16
    for rec in recs:
        d = 'write' if 'write' in rec['test'] else 'read'
        w = rec['workers']
        assert w['count'] == 4 and len(w['detail']) == 4 and w['kind'] == 'fio numjobs'
        per_worker = [x['metrics'][d + '_iops'] for x in w['detail']]
        # fio's group figure: all I/Os over the longest runtime. Every worker did the same 16 I/Os (size=64k),
        # so that is 4 x the slowest worker's rate - the group's, never one worker's (the bug: ~1/4 of it)
        assert rec['metrics'][d + '_iops']['value'] == pytest.approx(4 * min(per_worker), rel=1e-6)
        assert rec['metrics'][d + '_iops']['value'] <= sum(per_worker) * (1 + 1e-9)
        assert rec['params']['job_options']['numjobs'] == '4'
        assert 'group_reporting' not in rec['params']['job_options']
        assert rec['params']['job_file'] == str(area / 'jobs' / 'tiobench-style.fio')
        assert '--output-format=json+' in rec['cmd']
    assert os.listdir(str(area / 'work')) == []


def test_ssd_style_directory_of_the_user_is_left_alone(env, area):
    text = (JOBS / 'ssd-style.fio').read_text().replace('/mnt/ssd-under-test', str(area / 'outside'))
    job = _job(area, 'ssd.fio', text)
    rc, status, res = module(env, 'fio', {'path': str(area / 'work'), 'job_file': str(job)})
    assert rc == 0, res
    assert [r['test'] for r in res['bench_results']] == ['seq-read', 'rand-read', 'seq-write', 'rand-write']
    for rec in res['bench_results']:
        assert 'workers' not in rec                                   # one worker each
        assert any(w.startswith('%s line 9 ([global]): directory=%s is outside' % (job, area / 'outside'))
                   for w in rec['warnings'])
    # the 64k test file went to the work directory, which is gone; the user's directory is untouched
    assert os.listdir(str(area / 'outside')) == []
    assert os.listdir(str(area / 'work')) == []


def test_mixed_time_based_job(env, area):
    rc, status, res = module(env, 'fio', {'path': str(area / 'work'),
                                          'job_file_content': (JOBS / 'mixed-timebased.fio').read_text(),
                                          'job_file_name': 'controller:/jobs/mixed.fio'})
    assert rc == 0, res
    (rec,) = res['bench_results']
    assert rec['test'] == 'oltp-mix' and rec['workers']['count'] == 2
    assert rec['params']['job_file'] == 'controller:/jobs/mixed.fio'
    assert rec['params']['job_options']['time_based'] is None and rec['params']['job_options']['rwmixread'] == '70'
    reads, writes = rec['metrics']['read_iops']['value'], rec['metrics']['write_iops']['value']
    assert reads / (reads + writes) == pytest.approx(0.7, abs=0.1)
    assert rec['duration_s'] >= 1.0
    assert os.listdir(str(area / 'work')) == []


def test_bad_option_is_named_with_its_line_and_nothing_runs(env, area):
    rc, status, res = module(env, 'fio', {'path': str(area / 'work'), 'job_file_name': 'my.fio',
                                          'job_file_content': '[global]\nsize=1m\n\n[a]\nrw=raed\n'})
    assert rc != 0
    assert res['msg'].startswith('fio job refused: my.fio line 5 ([a]): rw=raed'), res['msg']
    assert os.listdir(str(area / 'work')) == []


def _fio_by_hand(job, cwd, *extra):
    """fio's own JSON of the job file, run by hand in `cwd`: ({jobname: [entries]}, stdout)."""
    proc = subprocess.run(['fio', '--output-format=json'] + list(extra) + [str(job)], cwd=str(cwd),
                          capture_output=True, text=True, check=True)
    text = proc.stdout[proc.stdout.index('{'):]
    jobs = {}
    for entry in json.loads(text)['jobs']:
        jobs.setdefault(entry['jobname'], []).append(entry)
    return jobs, text


AGG_JOB = ('[global]\nioengine=psync\ndirect=1\nbs=4k\nsize=16m\nnumjobs=4\ntime_based\nruntime=1\n\n'
           '[rr]\nrw=randread\n\n[rw]\nstonewall\nrw=randwrite\n')


def test_aggregate_is_fios_group_reporting_arithmetic_on_each_runs_own_figures(env, area):
    """The aggregate over numjobs is fio's group_reporting (stat.c sum_thread_stats: every worker's I/Os
    over the longest worker's runtime), decided on each run's own figures, never by comparing the rates
    of two runs of a disk that is faster or slower from one minute to the next:
    - fio's own --group_reporting of the job file: its group's IOPS is its I/O count over its runtime
      (the definition the module follows, as this fio states it);
    - fio by hand without it (what the module runs): the collection's parser gives every job the I/O
      count of its four workers over the longest runtime, computed here from fio's JSON;
    - the module's own run: four workers in the record, the aggregate at most the sum of the workers'
      own rates, and bytes over operations exactly the block size (both over the same runtime)."""
    job = _job(area, 'agg.fio', AGG_JOB)
    grouped, _text = _fio_by_hand(job, area / 'outside', '--group_reporting')
    for name, d in (('rr', 'read'), ('rw', 'write')):
        (entry,) = grouped[name]
        part = entry[d]
        assert part['iops'] == pytest.approx(part['total_ios'] / (part['runtime'] / 1000.0), rel=1e-3), part
    for path in (area / 'outside').iterdir():
        path.unlink()

    workers, text = _fio_by_hand(job, area / 'outside')
    recs = dict((r['test'], r) for r in fio_records(text))
    for name, d in (('rr', 'read'), ('rw', 'write')):
        parts = [e[d] for e in workers[name]]
        assert len(parts) == 4
        expected = sum(p['total_ios'] for p in parts) / (max(p['runtime'] for p in parts) / 1000.0)
        assert recs[name]['metrics'][d + '_iops']['value'] == pytest.approx(expected, rel=1e-9), (name, parts)

    rc, status, res = module(env, 'fio', {'path': str(area / 'work'), 'job_file': str(job)})
    assert rc == 0, res
    assert sorted(r['test'] for r in res['bench_results']) == ['rr', 'rw']
    for rec in res['bench_results']:
        d = 'read' if rec['test'] == 'rr' else 'write'
        w = rec['workers']
        assert w['count'] == 4 and len(w['detail']) == 4
        iops = rec['metrics'][d + '_iops']['value']
        assert 0 < iops <= sum(x['metrics'][d + '_iops'] for x in w['detail']) * (1 + 1e-9), rec
        assert rec['metrics'][d + '_throughput']['value'] * 1e6 / iops == pytest.approx(4096, rel=1e-6)
    assert os.listdir(str(area / 'work')) == []


def test_an_engine_among_the_options_runs_with_its_own_options(env, area):
    """options {ioengine: io_uring, fixedbufs: null}: fio refused the run ("unrecognized option
    '--fixedbufs'") while the module put --fixedbufs before --ioengine=io_uring (fio knows an
    engine's own options only once the engine is named)."""
    rc, status, res = module(env, 'fio', {'path': str(area / 'work'), 'rw': 'read', 'size': '1M',
                                          'options': {'ioengine': 'io_uring', 'fixedbufs': None}})
    assert rc == 0, (res.get('msg') or '')[:3000]
    cmd = res['bench_result']['cmd']
    assert cmd.index('--ioengine=io_uring') < cmd.index('--fixedbufs')
    assert res['bench_result']['metrics']['read_iops']['value'] > 0
    assert os.listdir(str(area / 'work')) == []
