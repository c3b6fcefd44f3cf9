# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fio job files as people write them: moved into the work directory (module_utils/tools/fio.py), named by
a matrix and checked on the controller before any host is touched (plugin_utils/jobfiles.py), the
content part of the run key. The job files are tests/unit/fixtures/fio/jobs; `fio --parse-only` runs
for real where fio is installed."""

import copy
import shutil
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import (
    effective_job_options, job_file_in_workdir, job_file_text, parse_only_problem)
from ansible_collections.benchlab.bench.plugins.module_utils.tools.fiojob import check_fio_job, parse_job_file
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import MatrixError, expand_plan, unit_checks
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.resume import plan_keys

JOBS = Path(__file__).resolve().parents[2] / 'fixtures' / 'fio' / 'jobs'
WORK = '/srv/bench/benchlab-fio-abc123'


def _sections(name):
    return parse_job_file((JOBS / name).read_text(), name=name)


def test_ssd_style_directory_is_moved_into_the_work_directory():
    sections = _sections('ssd-style.fio')
    assert check_fio_job(sections, WORK)['outside']            # as written: outside
    moved, notes = job_file_in_workdir(sections, WORK, origin='ssd-style.fio')
    assert 'directory' not in moved[0][1]
    assert moved[0][1]['filename'] == 'ssd.test.file'
    out = check_fio_job(moved, WORK)
    assert (out['devices'], out['outside'], out['unsafe']) == ([], [], [])
    # one shared file of the [global] size=64k (every job uses ssd.test.file in the work directory)
    assert out['files'] == {WORK + '/ssd.test.file': 64 * 1024}
    (note,) = notes
    assert note.startswith('ssd-style.fio line 9 ([global]): directory=/mnt/ssd-under-test is outside')
    # the other options, and every job, are untouched
    assert [s for s, _v, _l in moved] == ['global', 'seq-read', 'rand-read', 'seq-write', 'rand-write']
    assert moved[1][1] == {'rw': 'read', 'stonewall': None}


def test_absolute_filenames_keep_their_name_devices_stay_for_the_guard():
    text = ('[global]\nfilename=/data/a.img:rel/b.img:/dev/sdz\n[j]\nrw=read\nsize=1m\n'
            '[k]\nfilename_format=/scratch/$jobname.$jobnum\ndirectory=sub\nrw=write\nsize=1m\n')
    moved, notes = job_file_in_workdir(parse_job_file(text), WORK)
    assert moved[0][1]['filename'] == 'a.img:rel/b.img:/dev/sdz'
    assert moved[2][1]['filename_format'] == '$jobname.$jobnum' and moved[2][1]['directory'] == 'sub'
    assert len(notes) == 2
    assert check_fio_job(moved, WORK)['devices'] == ['/dev/sdz']
    assert check_fio_job(moved, WORK)['outside'] == []


def test_group_reporting_is_dropped_so_each_worker_is_seen():
    moved, _skip = job_file_in_workdir(_sections('tiobench-style.fio'), WORK)
    assert 'group_reporting' not in moved[0][1] and moved[0][1]['numjobs'] == '4'
    text = job_file_text(moved)
    assert '[seq-read]\nstonewall\nrw=read\n' in text
    # fio reads the copy as the module wrote it: the same sections and options
    assert [(sec, v) for sec, v, _skip in parse_job_file(text)] == [(sec, v) for sec, v, _skip in moved]


def test_effective_options_inherit_global_and_follow_name():
    opts = effective_job_options(parse_job_file('[global]\nbs=4k\n[a]\nrw=read\n[global]\nbs=8k\n[b]\nname=bee\nrw=write\n'))
    assert opts == {'a': {'bs': '4k', 'rw': 'read'}, 'bee': {'bs': '8k', 'name': 'bee', 'rw': 'write'}}


def test_parse_only_message_names_the_line():
    sections = parse_job_file('[global]\nbs=4k\n\n[a]\nrw=raed\nsize=1m\n', name='my.fio')
    msg = parse_only_problem('...valid values: read ...\nfio: failed parsing rw=raed\nfio: job a dropped', sections, 'my.fio')
    assert msg.startswith('my.fio line 5 ([a]): rw=raed: fio refuses it')
    sections = parse_job_file('[a]\nblocksizee=4k\n', name='x.fio')
    assert parse_only_problem('Bad option <blocksizee=4k>\nDid you mean lockfile?', sections, 'x.fio').startswith(
        'x.fio line 2 ([a]): blocksizee=4k')
    assert parse_only_problem('', sections, 'x.fio') is None


def _matrix(job_file, **params):
    return {'name': 'jobs', 'repetitions': 2,
            'cells': [{'name': 'local', 'host': 'localhost', 'path': '/var/tmp'}],
            'benchmarks': [{'name': 'tio', 'tool': 'fio', 'params': dict(params, job_file=str(job_file))}]}


def test_matrix_job_file_travels_as_content_and_is_part_of_the_key(tmp_path):
    job = tmp_path / 'tio.fio'
    job.write_text((JOBS / 'tiobench-style.fio').read_text())
    plan = expand_plan(_matrix(job))
    assert len(plan['runs']) == 2
    for run in plan['runs']:
        assert run['params']['job_file'] == str(job)
        assert run['params']['job_file_content'] == job.read_text()
    assert plan['runs'][0]['async_s'] > 0       # a job file's length is unknown: async
    key = plan_keys(plan)
    job.write_text(job.read_text().replace('size=64k', 'size=128k'))
    assert plan_keys(expand_plan(_matrix(job))) != key      # a changed file is a new cell for resume
    assert plan_keys(expand_plan(_matrix(job))) == plan_keys(expand_plan(_matrix(job)))


@pytest.mark.skipif(not shutil.which('fio'), reason='fio --parse-only needs fio on the controller')
def test_bad_option_is_named_with_file_and_line_before_any_host(tmp_path):
    job = tmp_path / 'bad.fio'
    job.write_text('[global]\nbs=4k\nsize=1m\n\n[a]\nrw=raed\n')
    with pytest.raises(MatrixError) as e:
        expand_plan(_matrix(job))
    assert 'bench_matrix.benchmarks[0].params.job_file: %s line 6 ([a]): rw=raed: fio refuses it' % job in str(e.value)


def test_unsafe_and_unreadable_job_files_are_refused(tmp_path):
    job = tmp_path / 'pre.fio'
    job.write_text((JOBS / 'exec-prerun.fio').read_text())
    with pytest.raises(MatrixError) as e:
        expand_plan(_matrix(job))
    assert 'bench_matrix.benchmarks[0].params.job_file: %s line 4 ([global]): exec_prerun' % job in str(e.value)
    with pytest.raises(MatrixError) as e:
        expand_plan(_matrix(tmp_path / 'missing.fio'))
    assert 'cannot read the fio job file %s' % (tmp_path / 'missing.fio') in str(e.value)
    job = tmp_path / 'dev.fio'
    job.write_text((JOBS / 'raw-device.fio').read_text())
    with pytest.raises(MatrixError) as e:
        expand_plan(_matrix(job))
    assert 'names block device(s) /dev/sdb' in str(e.value)
    job.write_text('[a]\nrw=write\nsize=1m\nwrite_bw_log=/var/log/bw\n')
    with pytest.raises(MatrixError) as e:
        expand_plan(_matrix(job))
    assert 'writes outside the work directory ([a] write_bw_log=/var/log/bw)' in str(e.value)
    job.write_text('[global]\nbs=4k\n')
    with pytest.raises(MatrixError) as e:
        expand_plan(_matrix(job))
    assert 'has no job section' in str(e.value)


def test_job_files_leave_the_callers_matrix_as_it_was(tmp_path):
    """The units' checks copy only the params they fill in (no deep copy of the matrix: slow on the
    lazy containers of ansible-core 2.19+), so the matrix it was given is unchanged, in a cell's
    fio params too, and a matrix without job files comes back as it is."""
    job = tmp_path / 'tio.fio'
    job.write_text((JOBS / 'tiobench-style.fio').read_text())
    matrix = _matrix(job)
    matrix['cells'][0]['params'] = {'fio': {'job_file': str(job)}}
    before = copy.deepcopy(matrix)
    out, problems = unit_checks(matrix)
    assert problems == []
    assert matrix == before
    assert out['benchmarks'][0]['params']['job_file_content'] == job.read_text()
    assert out['cells'][0]['params']['fio']['job_file_content'] == job.read_text()
    assert out['cells'][0]['name'] == matrix['cells'][0]['name']
    plain = {'benchmarks': [{'name': 'b', 'tool': 'fio', 'params': {'rw': 'read'}}], 'cells': []}
    assert unit_checks(plain) == (plain, [])
    assert unit_checks(plain)[0] is plain
