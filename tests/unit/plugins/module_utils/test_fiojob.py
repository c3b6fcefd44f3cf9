# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/fiojob.py: the job-file parser against real fio 3.x (fio --parse-only and
fio's own JSON "global options"/"job options" of a real tiny run), and the safety check on job
files written in the styles people publish (tests/unit/fixtures/fio/jobs)."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fiojob import (
    FioJobError, check_fio_job, options_to_sections, parse_job_file, split_names)

JOBS = Path(__file__).resolve().parents[2] / 'fixtures' / 'fio' / 'jobs'
FIO = shutil.which('fio')
needs_fio = pytest.mark.skipif(not FIO, reason='fio is not installed')


def job(name):
    return (JOBS / name).read_text()


def test_tiobench_style_sections_flags_and_inheritance(tmp_path):
    sections = parse_job_file(job('tiobench-style.fio'))
    assert [s[0] for s in sections] == ['global', 'seq-write', 'seq-read', 'rand-write', 'rand-read']
    assert sections[0][1] == {'direct': '1', 'size': '64k', 'bs': '4k', 'numjobs': '4', 'group_reporting': None,
                              'ioengine': 'psync'}
    assert sections[2][1] == {'stonewall': None, 'rw': 'read'} and sections[2][2] == {'stonewall': 15, 'rw': 16}
    # files are <jobname>.<n>.<m> in the work directory: nothing outside, no device
    out = check_fio_job(sections, str(tmp_path))
    assert (out['devices'], out['outside'], out['unsafe']) == ([], [], [])
    # 4 jobs x numjobs=4, one file of size=64k each: what the free-space check adds up
    assert len(out['files']) == 16 and set(out['files'].values()) == {64 * 1024}
    assert str(tmp_path / 'rand-read.3.0') in out['files']


def test_ssd_style_directory_outside_the_work_directory(tmp_path):
    sections = parse_job_file(job('ssd-style.fio'))
    g = sections[0][1]
    assert g['filename'] == 'ssd.test.file'        # '; one shared file' is a comment, as fio reads it
    assert g['directory'] == '/mnt/ssd-under-test'
    out = check_fio_job(sections, str(tmp_path))
    assert out['devices'] == []
    # the directory is reported once: the file fio makes in it is outside with it
    assert out['outside'] == [('global', 'directory', '/mnt/ssd-under-test')]
    # the same job pointed at the work directory is all inside
    inside = parse_job_file(job('ssd-style.fio').replace('/mnt/ssd-under-test', str(tmp_path / 'sub')))
    assert check_fio_job(inside, str(tmp_path))['outside'] == []


def test_raw_device_job_names_the_device(tmp_path):
    out = check_fio_job(parse_job_file(job('raw-device.fio')), str(tmp_path))
    assert out['devices'] == ['/dev/sdb'] and out['outside'] == []


def test_exec_prerun_is_refused_with_file_line_and_option(tmp_path):
    sections = parse_job_file(job('exec-prerun.fio'), name='exec-prerun.fio')
    assert sections[0][1]['exec_prerun'] == 'sync'     # fio cuts the line at ';' too
    with pytest.raises(FioJobError) as e:
        check_fio_job(sections, str(tmp_path), origin='exec-prerun.fio')
    msg = str(e.value)
    assert 'exec-prerun.fio line 4 ([global]): exec_prerun=sync is refused' in msg and 'shell' in msg
    assert check_fio_job(sections, str(tmp_path), allow_unsafe=True)['unsafe'] == [('global', 'exec_prerun', 'sync')]


@pytest.mark.parametrize('text,words', [
    ('[j]\nexec_postrun=rm -rf /srv\n', ['exec_postrun', 'shell']),
    ('[j]\nallow_mounted_write=1\nfilename=/dev/sda1\n', ['allow_mounted_write', "fio's own refusal"]),
    ('[j]\nioengine=external:/tmp/evil.so\n', ['external engine']),
    ('[j]\nioengine=/tmp/evil.so\n', ['shared library']),
    ('[j]\nioengine=exec\nprogram=/bin/sh\n', ['exec engine']),
    ('[j]\nread_iolog=/tmp/trace\n', ['replaying']),
    ('[j]\nioscheduler=none\n', ['scheduler']),
    ('[j]\nprofile=act\n', ['profile']),
    ('[global]\nexec_prerun=x\n[j]\n', ['line 2 ([global]): exec_prerun']),
])
def test_unsafe_options_are_refused(tmp_path, text, words):
    with pytest.raises(FioJobError) as e:
        check_fio_job(parse_job_file(text), str(tmp_path))
    for w in words:
        assert w in str(e.value)
    assert 'allow_unsafe' in str(e.value)


def test_safe_values_of_watched_options_pass(tmp_path):
    text = '[j]\nallow_mounted_write=0\nioengine=libaio\nfilename=/dev/null\n'
    assert check_fio_job(parse_job_file(text), str(tmp_path)) == {'devices': [], 'outside': [], 'unsafe': [],
                                                                  'files': {}}


@pytest.mark.parametrize('text,problem', [
    ('size=1M\n[j]\n', 'outside of any [section]'),
    ('[j]\ninclude other.fio\n', 'include is not supported'),
    ('include other.fio\n[j]\n', 'include is not supported'),
    ('[my job]\nrw=read\n', 'no blanks'),
    ('[j\nrw=read\n', 'section header'),
    ('[j]\nfilename=/tmp/a\nfilename=/dev/sdb\n', 'sets filename again (first on line 2)'),
    ('[j]\n=3\n', 'no option name'),
])
def test_parse_refusals(text, problem):
    with pytest.raises(FioJobError) as e:
        parse_job_file(text, name='x.fio')
    assert problem in str(e.value) and 'x.fio line' in str(e.value)


def test_env_expansion_in_a_path_is_refused(tmp_path):
    for key in ('filename', 'directory', 'write_bw_log', 'filename_format'):
        with pytest.raises(FioJobError) as e:
            check_fio_job(parse_job_file('[j]\n%s=${HOME}/x\n' % key), str(tmp_path))
        assert '${...}' in str(e.value) and key in str(e.value)
    # elsewhere it is fio's business, but for a size the free-space check needs
    assert check_fio_job(parse_job_file('[j]\nbs=${BS}\n'), str(tmp_path))['outside'] == []
    with pytest.raises(FioJobError) as e:
        check_fio_job(parse_job_file('[j]\nsize=${SIZE}\n'), str(tmp_path))
    assert 'line 2 ([j]): size=${SIZE}: not a size benchlab can check' in str(e.value)


def test_split_names_with_escaped_colons():
    assert split_names('a\\:b:c') == ['a:b', 'c']
    assert split_names('/dev/sdb:/dev/sdc') == ['/dev/sdb', '/dev/sdc']
    assert split_names(':x::') == ['x']


def test_several_devices_and_directory_prefixing(tmp_path):
    out = check_fio_job(parse_job_file('[j]\nfilename=/dev/sdb:/dev/sdc\n'), str(tmp_path))
    assert out['devices'] == ['/dev/sdb', '/dev/sdc']
    # fio 3.33 writes directory + name (/dev/sdb becomes a file under the directory); other builds
    # may not: the device is named either way, and directory=/dev + a relative name is a device too
    out = check_fio_job(parse_job_file('[j]\ndirectory=%s\nfilename=/dev/sdb\n' % tmp_path), str(tmp_path))
    assert out['devices'] == ['/dev/sdb'] and out['outside'] == []
    out = check_fio_job(parse_job_file('[j]\ndirectory=/dev\nfilename=sdb\n'), str(tmp_path))
    assert out['devices'] == ['/dev/sdb']
    # /dev/shm is a file system, not a device
    out = check_fio_job(parse_job_file('[j]\ndirectory=/dev/shm\n'), str(tmp_path))
    assert out['devices'] == [] and out['outside'] == [('j', 'directory', '/dev/shm')]


def test_filename_format_on_devices_cannot_be_checked(tmp_path):
    with pytest.raises(FioJobError) as e:
        check_fio_job(parse_job_file('[j]\nfilename_format=/dev/sd$jobnum\n'), str(tmp_path))
    assert 'filename_format' in str(e.value)


def test_a_job_name_can_leave_the_work_directory(tmp_path):
    out = check_fio_job(parse_job_file('[../../etc/cron.d/x]\nrw=write\n'), str(tmp_path))
    assert out['outside'] == [('../../etc/cron.d/x', 'name', '../../etc/cron.d/x')]
    out = check_fio_job(parse_job_file('[j]\nname=../../x\n'), str(tmp_path))
    assert ('j', 'name', '../../x') in out['outside']


def test_logs_and_mem_files_outside(tmp_path):
    text = ('[global]\nwrite_bw_log=/var/log/bw\n[a]\nwrite_iolog=io.log\n[b]\nwrite_lat_log\nmem=mmaphuge:/hugepages/f\n'
            '[c]\nopendir=/home\n')
    out = check_fio_job(parse_job_file(text), str(tmp_path))
    assert ('global', 'write_bw_log', '/var/log/bw') in out['outside']
    assert ('b', 'mem', 'mmaphuge:/hugepages/f') in out['outside']
    assert ('c', 'opendir', '/home') in out['outside']
    assert not any(o[1] in ('write_iolog', 'write_lat_log') for o in out['outside'])


def test_global_sections_apply_only_to_jobs_below_them(tmp_path):
    text = '[a]\nrw=read\n[global]\nfilename=/dev/sdb\n[b]\nrw=write\n[globalx]\ndirectory=/srv\n[c]\n'
    out = check_fio_job(parse_job_file(text), str(tmp_path))
    assert out['devices'] == ['/dev/sdb']                     # b and c, not a
    # "globalx" is a global section for fio; a's file is <a>.0.0 in the work directory
    assert out['outside'] == [('globalx', 'directory', '/srv')]


def test_existing_block_device_outside_dev_is_a_device(tmp_path, monkeypatch):
    """A symlink such as /srv/disk -> /dev/sdb: is_block_device follows it (mocked: no such disk here)."""
    from ansible_collections.benchlab.bench.plugins.module_utils.tools import fiojob
    monkeypatch.setattr(fiojob, 'is_block_device', lambda p: p == '/srv/disk')
    out = check_fio_job(parse_job_file('[j]\nfilename=/srv/disk\n'), str(tmp_path))
    assert out['devices'] == ['/srv/disk']


# ---- the module's options ----------------------------------------------------------------------

def test_options_to_sections(tmp_path):
    secs = options_to_sections({'ramp_time': 2, 'time_based': None, 'direct': True},
                               name='bench', base={'name': 'bench', 'directory': str(tmp_path)})
    assert secs == [('bench', {'name': 'bench', 'directory': str(tmp_path), 'direct': '1', 'ramp_time': '2',
                               'time_based': None},
                     {'name': None, 'directory': None, 'direct': None, 'ramp_time': None, 'time_based': None})]
    assert check_fio_job(secs, str(tmp_path)) == {'devices': [], 'outside': [], 'unsafe': [],
                                                  'files': {str(tmp_path / 'bench.0.0'): 0}}
    secs = options_to_sections({'filename': '/dev/sdb'}, base={'directory': str(tmp_path)})
    assert check_fio_job(secs, str(tmp_path))['devices'] == ['/dev/sdb']
    with pytest.raises(FioJobError) as e:
        check_fio_job(options_to_sections({'exec_prerun': 'touch /tmp/x'}), str(tmp_path))
    assert str(e.value).startswith('options: exec_prerun=touch /tmp/x is refused')


@pytest.mark.parametrize('key,words', [
    ('exec_pre', 'abbreviates the fio option exec_prerun'),
    ('exec_p', 'exec_postrun or exec_prerun'),
    ('filen', 'filename'),
    ('output', 'command-line option'),
    ('trigger', 'command-line option'),
    ('server', 'command-line option'),
    ('outp', 'abbreviates the fio option output'),
])
def test_options_refuse_abbreviations_and_command_line_options(key, words):
    with pytest.raises(FioJobError) as e:
        options_to_sections({key: 'x'})
    assert words in str(e.value) and repr(key) in str(e.value)


# ---- agreement with real fio -------------------------------------------------------------------

VALID = ['tiobench-style.fio', 'ssd-style.fio', 'raw-device.fio', 'exec-prerun.fio']


@needs_fio
@pytest.mark.parametrize('name', VALID)
def test_fio_parse_only_accepts_what_we_parse(name, tmp_path):
    proc = subprocess.run([FIO, '--parse-only', str(JOBS / name)], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert parse_job_file(job(name))


@needs_fio
@pytest.mark.parametrize('name', ['tiobench-style.fio', 'ssd-style.fio', 'exec-prerun.fio'])
def test_fio_reads_the_same_options(name, tmp_path):
    """A real tiny run in tmp_path: fio's JSON lists the options it read per job and for all global
    sections; they are ours. (exec-prerun.fio runs `sync` - what fio makes of its line.)"""
    text = job(name).replace('/mnt/ssd-under-test', str(tmp_path / 'ssd'))
    (tmp_path / 'ssd').mkdir()
    path = tmp_path / name
    path.write_text(text)
    proc = subprocess.run([FIO, '--output-format=json', str(path)], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout[proc.stdout.index('{'):])
    sections = parse_job_file(text)
    globals_ = {}
    for sec, values, _lines in sections:
        if sec.startswith('global'):
            globals_.update((k, v) for k, v in values.items() if v is not None)
    assert doc['global options'] == globals_
    own = dict((sec, dict((k, v) for k, v in values.items() if v is not None)) for sec, values, _l in sections)
    for j in doc['jobs']:
        assert j['job options'] == own[j['jobname']]
    assert sorted(set(j['jobname'] for j in doc['jobs'])) == sorted(s for s in own if not s.startswith('global'))
    # and everything it wrote is inside tmp_path, as check_fio_job says
    assert check_fio_job(sections, str(tmp_path), allow_unsafe=True)['outside'] == []
    assert all(str(p).startswith(str(tmp_path)) for p in tmp_path.rglob('*'))


# ---- the hostile corpus (tests/unit/fixtures/hostile/fio_jobs.yml) --------------------------------

HOSTILE = yaml.safe_load((JOBS.parents[1] / 'hostile' / 'fio_jobs.yml').read_text())['cases']
WORKDIR = '/work/benchlab-fio-x'


def test_the_hostile_fio_corpus_is_unique():
    ids = [c['id'] for c in HOSTILE]
    assert len(ids) >= 25 and len(set(ids)) == len(ids)


@pytest.mark.parametrize('case', HOSTILE, ids=[c['id'] for c in HOSTILE])
def test_hostile_fio_job(case):
    def check():
        if 'job' in case:
            sections = parse_job_file(case['job'])
        else:
            sections = options_to_sections(case['options'], base={'name': 'bench', 'directory': WORKDIR})
        return check_fio_job(sections, WORKDIR)
    if 'refused' in case:
        with pytest.raises(FioJobError) as e:
            check()
        for part in case['refused']:
            assert part in str(e.value), str(e.value)
        assert 'secret' not in str(e.value).lower().replace('secret-', ''), str(e.value)
    else:
        out = check()
        assert out['devices'] == case['devices']
        assert [list(o) for o in out['outside']] == case['outside']


@pytest.mark.parametrize('key', ['http_pass', 'HTTP_S3_KEY', 'http_s3_keyid', 'http_swift_auth_token'])
def test_credentials_are_refused_without_their_value_even_when_unsafe_is_allowed(tmp_path, key):
    value = 'sEcr3t-not-for-fio'
    text = '[s3]\nioengine=http\nhttp_host=example.invalid\n%s=%s\n' % (key, value)
    for sections, origin, where in ((parse_job_file(text), 'job.fio', 'job.fio line 4 ([s3]): %s' % key),
                                    (options_to_sections({'ioengine': 'http', key: value}), 'options',
                                     'options: %s' % key)):
        with pytest.raises(FioJobError) as e:
            check_fio_job(sections, str(tmp_path), allow_unsafe=True, origin=origin)
        assert str(e.value).startswith(where + ' is refused: it carries a credential'), str(e.value)
        assert value not in str(e.value)
