"""benchlab.bench.compress runs for real on this machine through `ansible localhost -m ...`."""

import json
import os
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, module

sys.path.insert(0, str(REPO / '.collections'))

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record  # noqa: E402
from ansible_collections.benchlab.bench.plugins.module_utils.tools.timeparse import parse_time  # noqa: E402

KIB = 1024


def _leftovers(path):
    return [n for n in os.listdir(path) if n.startswith('benchlab-')]


def _compressor_processes():
    out = subprocess.run(['ps', '-eo', 'pid=,args='], capture_output=True, text=True, check=True).stdout
    return [ln for ln in out.splitlines() if 'benchlab-compress-' in ln]


def test_bzip2_default_records_and_cleanup(env, tmp_path):
    rc, status, res = module(env, 'compress', {'path': str(tmp_path), 'size': '2M', 'labels': {'platform': 'host'}})
    assert rc == 0, res
    assert res['changed'] is False
    recs = res['bench_results']
    assert [r['test'] for r in recs] == ['bzip2-9-compress', 'bzip2-decompress']
    assert res['bench_result'] == recs[0]
    version = subprocess.run(['bzip2', '--help'], capture_output=True, text=True, check=True).stderr
    for rec in recs:
        assert validate_record(rec) == []
        assert rec['tool'] == 'compress'
        assert rec['tool_version'] == 'bzip2 ' + version.split('Version ')[1].split(',')[0]
        assert rec['labels'] == {'platform': 'host'}
        m = rec['metrics']
        assert set(m) == {'elapsed', 'user', 'sys', 'throughput'}
        assert m['throughput']['value'] == pytest.approx(2 * 1024 * 1024 / m['elapsed']['value'] / 1e6)
        assert m['user']['value'] > 0
        # the child's CPU time cannot exceed its wall-clock time (bzip2 is single-threaded)
        assert m['user']['value'] + m['sys']['value'] <= m['elapsed']['value'] * 1.05 + 0.01
        p = rec['params']
        assert p['bytes'] == 2 * 1024 * 1024 and p['seed'] == 42 and p['level'] == 9 and p['compressor'] == 'bzip2'
        assert 3.0 < p['ratio'] < 5.0 and p['ratio'] == round(p['bytes'] / p['compressed_bytes'], 3)
        assert len(p['input_sha256']) == 64
        assert isinstance(p['guards'], dict)
    assert recs[0]['cmd'][1:3] == ['-9', '-f'] and recs[1]['cmd'][1:3] == ['-d', '-f']
    assert recs[0]['params']['input_sha256'] == recs[1]['params']['input_sha256']
    assert os.listdir(tmp_path) == []
    assert _compressor_processes() == []


def test_same_seed_same_input_everywhere(env, tmp_path):
    a = tmp_path / 'a'
    b = tmp_path / 'b'
    a.mkdir()
    b.mkdir()
    _rc, _s, ra = module(env, 'compress', {'path': str(a), 'size': '512K', 'compressors': ['gzip']})
    _rc, _s, rb = module(env, 'compress', {'path': str(b), 'size': '512K', 'compressors': ['gzip'], 'seed': 43})
    _rc, _s, rc_ = module(env, 'compress', {'path': str(a), 'size': '512K', 'tools': ['gzip']})
    sha = [r['bench_result']['params']['input_sha256'] for r in (ra, rb, rc_)]
    assert sha[0] == sha[2] != sha[1]
    assert ra['bench_result']['params']['compressed_bytes'] == rc_['bench_result']['params']['compressed_bytes']
    assert os.listdir(a) == [] and os.listdir(b) == []


def test_all_four_compressors_with_threads(env, tmp_path):
    rc, status, res = module(env, 'compress', {'path': str(tmp_path), 'size': '1M',
                                               'algorithms': ['bzip2', 'gzip', 'xz', 'zstd'], 'threads': 2})
    assert rc == 0, res
    recs = res['bench_results']
    assert [r['test'] for r in recs] == ['bzip2-9-compress', 'bzip2-decompress', 'gzip-6-compress', 'gzip-decompress',
                                         'xz-6-compress', 'xz-decompress', 'zstd-3-compress', 'zstd-decompress']
    for rec in recs:
        assert validate_record(rec) == [], rec
        assert rec['tool_version'].split()[0] == rec['params']['compressor']
    by = {r['test']: r for r in recs}
    assert by['zstd-3-compress']['params']['threads'] == 2 and '-T2' in by['zstd-3-compress']['cmd']
    assert by['xz-decompress']['params']['threads'] == 2 and '-T2' in by['xz-decompress']['cmd']
    assert by['gzip-6-compress']['params']['threads'] is None
    assert not any(a.startswith('-T') for a in by['gzip-6-compress']['cmd'])
    assert by['bzip2-9-compress']['params']['ratio'] > by['gzip-6-compress']['params']['ratio']
    assert os.listdir(tmp_path) == []


def test_default_path_is_the_temp_dir_and_is_cleaned(env, tmp_path):
    tmp = tmp_path / 'tmp'
    tmp.mkdir()
    env = dict(env, TMPDIR=str(tmp))
    rc, status, res = module(env, 'compress', {'size': '256K', 'compressors': ['zstd'], 'level': 19})
    assert rc == 0, res
    assert res['cmd'][-1].startswith(str(tmp) + '/benchlab-compress-')
    assert res['bench_result']['test'] == 'zstd-19-compress'
    assert _leftovers(tmp) == []
    # under 1 s: the record says the number is dominated by overhead
    assert any('under 1 s' in w for w in res['bench_result']['warnings'])


def test_check_mode_returns_the_commands_and_writes_nothing(env, tmp_path):
    rc, status, res = module(env, 'compress', {'path': str(tmp_path), 'compressors': ['bzip2', 'xz']}, check=True)
    assert rc == 0, res
    assert 'bench_result' not in res
    assert len(res['cmds']) == 4 and res['cmd'] == res['cmds'][0]
    assert res['cmds'][0][0].endswith('bzip2') and res['cmds'][0][1] == '-9'
    assert res['cmds'][3][0].endswith('xz') and res['cmds'][3][1:3] == ['-d', '-T1']
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize('args,message', [
    ({'size': 'lots'}, "size: "),
    ({'size': '0'}, 'size must be greater than zero'),
    ({'level': 12, 'compressors': ['gzip']}, 'level 12 is out of range for gzip (1-9)'),
    ({'compressors': ['lz4']}, 'value of compressors must be one or more of'),
    ({'path': '/nonexistent/dir'}, 'path /nonexistent/dir does not exist or is not a directory'),
])
def test_bad_options_are_named(env, tmp_path, args, message):
    args = dict({'path': str(tmp_path), 'size': '64K'}, **args)
    rc, status, res = module(env, 'compress', args)
    assert rc != 0
    assert message in res['msg'], res['msg']
    assert os.listdir(tmp_path) == []


def test_threads_on_single_threaded_tools_warns(env, tmp_path):
    rc, status, res = module(env, 'compress', {'path': str(tmp_path), 'size': '64K', 'compressors': ['gzip'], 'threads': 4})
    assert rc == 0, res
    assert any('threads applies to xz and zstd only' in w for w in res['bench_result']['warnings'])


def test_broken_compressor_fails_readably_and_cleans_up(env, tmp_path):
    """A 'bzip2' that corrupts its output: the round trip check must catch it."""
    fake = tmp_path / 'bin'
    fake.mkdir()
    script = fake / 'bzip2'
    script.write_text('#!/bin/sh\n'
                      'case "$1" in --help) echo "bzip2, fake.  Version 9.9.9, x." >&2; exit 0;; esac\n'
                      'f=""; for a; do f=$a; done\n'
                      'case "$1" in -d) out="${f%.bz2}"; /usr/bin/bzip2 -d -f "$f" && echo x >> "$out";;\n'
                      '*) /usr/bin/bzip2 "$@";; esac\n')
    script.chmod(0o755)
    work = tmp_path / 'work'
    work.mkdir()
    env = dict(env, PATH='%s:%s' % (fake, env['PATH']))
    rc, status, res = module(env, 'compress', {'path': str(work), 'size': '64K'})
    assert rc != 0
    assert res['msg'].startswith('bzip2 round trip failed (rc=0)')
    assert 'the decompressed file differs from the input' in res['msg']
    assert 'Traceback' not in json.dumps(res)
    assert os.listdir(work) == []


def test_failing_compressor_quotes_its_error(env, tmp_path):
    fake = tmp_path / 'bin'
    fake.mkdir()
    script = fake / 'gzip'
    script.write_text('#!/bin/sh\necho "gzip: invalid option -- \'k\'" >&2\nexit 1\n')
    script.chmod(0o755)
    work = tmp_path / 'work'
    work.mkdir()
    env = dict(env, PATH='%s:%s' % (fake, env['PATH']))
    rc, status, res = module(env, 'compress', {'path': str(work), 'size': '64K', 'compressors': ['gzip']})
    assert rc != 0
    assert res['msg'].startswith('gzip compression failed (rc=1)') and "invalid option -- 'k'" in res['msg']
    assert res['rc'] == 1 and res['cmd'][0] == str(script)
    assert os.listdir(work) == []


def test_rusage_agrees_with_gnu_time(env, tmp_path):
    """The module's user time for bzip2 -9 and that of /usr/bin/time -v (read with parse_time) on the
    same input agree: the getrusage accounting measures the compressor, not the module."""
    rc, status, res = module(env, 'compress', {'path': str(tmp_path), 'size': '4M'})
    assert rc == 0, res
    rec = res['bench_result']
    src = tmp_path / 'in.txt'
    sys.path.insert(0, str(REPO / '.collections'))
    from ansible_collections.benchlab.bench.plugins.module_utils.tools.compress import write_text
    assert write_text(str(src), 4 * 1024 * 1024, 42) == rec['params']['input_sha256']
    # CPU time of one run moves with the machine's other load (cache, frequency): GNU time runs three
    # times and the module's figure must sit within the spread of those, widened by a third.
    users = []
    for _round in range(3):
        proc = subprocess.run(['/usr/bin/time', '-v', 'bzip2', '-9', '-c', str(src)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, env=dict(os.environ, LC_ALL='C'), check=True)
        gnu = parse_time(proc.stderr)[0]
        assert gnu['exit_status'] == 0
        users.append(gnu['user'])
    user = rec['metrics']['user']['value']
    assert min(users) * 0.65 - 0.05 <= user <= max(users) * 1.35 + 0.05, (user, users)
    src.unlink()


def test_bench_run_tasks_file_passes_every_param():
    """The one run path (benchlab.bench.run_benchmark, plugin_utils/plan/runargs.py) forwards every compress
    param under its own name, and the options every benchmark shares once for every tool."""
    sys.path.insert(0, str(REPO / '.collections'))
    from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runargs import module_args, param_names
    assert set(param_names('compress')) | {'path'} == {'path', 'size', 'seed', 'compressors', 'level', 'threads', 'input'}
    params = dict((key, 'v-%s' % key) for key in ('size', 'seed', 'compressors', 'level', 'threads', 'input'))
    run = {'tool': 'compress', 'benchmark': 'c', 'cell': 'x', 'path': '/srv', 'params': params, 'labels': {'cell': 'x'}}
    args = module_args(run, {'labels': run['labels'], 'guards': {}, 'run_id': 'r', 'run_key': 'k'})
    assert set(args) == {'path', 'size', 'seed', 'compressors', 'level', 'threads', 'input', 'labels', 'guards', 'run_id',
                         'run_key'}
    for key in params:
        assert args[key] == 'v-%s' % key
    # the role's one task file calls the action with the runs, never the tool's module
    run_yml = yaml.safe_load((REPO / 'roles/bench_run/tasks/run.yml').read_text())
    calls = [t for t in run_yml[0]['block'] if 'benchlab.bench.run_benchmark' in t and 'runs' in t['benchlab.bench.run_benchmark']]
    assert len(calls) == 1 and calls[0]['register'] == '__bench_run_last'
