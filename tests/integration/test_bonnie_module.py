"""benchlab.bench.bonnie runs the real bonnie++ 2.00a on this machine with small sizes."""

import os
import pwd
import shutil
import stat
import subprocess
import tempfile

import pytest

from conftest import module

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

pytestmark = pytest.mark.skipif(shutil.which('bonnie++') is None and not os.path.exists('/usr/sbin/bonnie++'),
                                reason='bonnie++ is not installed')
SMALL = {'size': '128M', 'files': '1', 'fast': True}


def bonnie_processes():
    out = subprocess.run(['pgrep', '-x', 'bonnie++'], capture_output=True, text=True, check=False)
    return out.stdout.split()


@pytest.fixture
def bench_dir():
    """A directory other users may enter (pytest's tmp_path is under a 0700 directory)."""
    d = tempfile.mkdtemp(prefix='benchlab-bonnie-test-', dir='/var/tmp')
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def check_records(res, runs=1):
    records = res['bench_results']
    assert len(records) == runs and res['bench_result'] == records[0]
    for rec in records:
        assert validate_record(rec) == []
        assert rec['tool'] == 'bonnie++' and rec['tool_version'] == '2.00a'
        block = rec['metrics']['seq_output_block']
        assert block['unit'] == 'MB/s'
        assert block['value'] > 0 if block['value'] is not None else block['too_fast'] is True
    return records


@pytest.mark.skipif(os.geteuid() != 0, reason='creating the benchmark user needs root')
def test_creates_the_system_user_once_and_cleans_up(env, bench_dir):
    existed = user_exists('benchlab')
    try:
        rc, status, res = module(env, 'bonnie', dict(SMALL, path=bench_dir), check=True)
        assert rc == 0, res
        assert res['changed'] is (not existed) and res['user_created'] is (not existed)
        assert user_exists('benchlab') is existed, 'check mode must not create the user'
        assert os.listdir(bench_dir) == []

        rc, status, res = module(env, 'bonnie', dict(SMALL, path=bench_dir))
        assert rc == 0, res
        assert res['changed'] is (not existed)
        pw = pwd.getpwnam('benchlab')
        assert pw.pw_uid != 0 and pw.pw_shell.endswith(('nologin', 'false'))
        cmd = res['cmd']
        assert cmd[cmd.index('-u') + 1] == '%d:%d' % (pw.pw_uid, pw.pw_gid)
        assert '-q' in cmd and '-f' in cmd
        rec = check_records(res)[0]
        assert rec['params']['user'] == 'benchlab'
        assert os.listdir(bench_dir) == [], 'the work directory must be removed'

        rc, status, res = module(env, 'bonnie', dict(SMALL, path=bench_dir))
        assert rc == 0, res
        assert res['changed'] is False and res['user_created'] is False
        assert os.listdir(bench_dir) == []
        assert bonnie_processes() == []
    finally:
        if not existed and user_exists('benchlab'):
            subprocess.run(['userdel', 'benchlab'], check=False)


def test_small_size_warns_and_halves_r(env, bench_dir):
    rc, status, res = module(env, 'bonnie', dict(SMALL, path=bench_dir, user='nobody', ram='4G'))
    assert rc == 0, res
    assert res['changed'] is False
    cmd = res['cmd']
    assert cmd[cmd.index('-s') + 1] == '128' and cmd[cmd.index('-r') + 1] == '64'
    assert cmd[cmd.index('-u') + 1] == '65534:65534'
    rec = check_records(res)[0]
    assert any('below 2x RAM (4 GiB)' in w and '-r 64' in w for w in rec['warnings'])
    assert rec['params']['size_mib'] == 128 and rec['params']['ram_mib'] == 4096 and rec['params']['r_mib'] == 64
    assert os.listdir(bench_dir) == []


def test_default_size_is_twice_the_ram(env, bench_dir):
    rc, status, res = module(env, 'bonnie', {'path': bench_dir, 'user': 'nobody', 'ram': '32M', 'files': '0',
                                             'labels': {'platform': 'host'}})
    assert rc == 0, res
    cmd = res['cmd']
    assert cmd[cmd.index('-s') + 1] == '64' and cmd[cmd.index('-r') + 1] == '32'
    rec = check_records(res)[0]
    assert rec['test'] == 'io' and rec['labels'] == {'platform': 'host'}
    assert not any('below 2x RAM' in w for w in rec['warnings'])
    assert 'seq_output_char' in rec['metrics']  # not fast: the per-char tests ran
    assert os.listdir(bench_dir) == []


def test_runs_give_one_record_each(env, bench_dir):
    rc, status, res = module(env, 'bonnie', dict(SMALL, path=bench_dir, user='nobody', runs=2, size='64M'))
    assert rc == 0, res
    assert res['cmd'][res['cmd'].index('-x') + 1] == '2'
    records = check_records(res, runs=2)
    assert [r['params']['run'] for r in records] == [1, 2]
    assert os.listdir(bench_dir) == []


def test_check_mode_runs_nothing(env, bench_dir):
    rc, status, res = module(env, 'bonnie', {'path': bench_dir, 'user': 'nobody', 'files': '64:4096:1024:16',
                                             'machine': 'node1.example.com', 'sync': True}, check=True)
    assert rc == 0, res
    assert 'bench_result' not in res and res['changed'] is False
    cmd = res['cmd']
    assert cmd[cmd.index('-n') + 1] == '64:4096:1024:16' and '-b' in cmd and cmd[cmd.index('-m') + 1] == 'node1.example.com'
    total_mib = int(open('/proc/meminfo').read().split('MemTotal:')[1].split()[0]) // 1024
    assert cmd[cmd.index('-s') + 1] == str(2 * total_mib) and cmd[cmd.index('-r') + 1] == str(total_mib)
    assert os.listdir(bench_dir) == []


def test_bonnie_failure_is_readable_and_leaves_nothing(env, bench_dir):
    # max file size below the min size: bonnie++ refuses it with its usage text
    rc, status, res = module(env, 'bonnie', {'path': bench_dir, 'user': 'nobody', 'size': '0', 'files': '1:1024:4096'})
    assert rc != 0
    assert res['msg'].startswith('bonnie++ failed (rc=1)') and 'usage' in res['msg']
    assert res['cmd'][0].endswith('bonnie++') and 'Traceback' not in str(res)
    assert os.listdir(bench_dir) == []
    assert bonnie_processes() == []


def test_unreachable_path_and_missing_user(env, bench_dir):
    private = os.path.join(bench_dir, 'private')
    os.mkdir(private)
    os.chmod(private, stat.S_IRWXU)
    inner = os.path.join(private, 'disk')
    os.mkdir(inner)
    rc, status, res = module(env, 'bonnie', dict(SMALL, path=inner, user='nobody'))
    assert rc != 0 and 'cannot enter %s' % private in res['msg']
    assert os.listdir(inner) == []
    rc, status, res = module(env, 'bonnie', dict(SMALL, path=bench_dir, user='no-such-user-xyz'))
    assert rc != 0 and 'does not exist' in res['msg']


def test_bad_options_name_the_field(env, bench_dir):
    rc, status, res = module(env, 'bonnie', dict(SMALL, path=bench_dir, files='lots'))
    assert rc != 0 and res['msg'].startswith("files: 'lots'")
    rc, status, res = module(env, 'bonnie', dict(SMALL, path=bench_dir, user='root'))
    assert rc != 0 and 'never runs as root' in res['msg']
    rc, status, res = module(env, 'bonnie', dict(SMALL, path=bench_dir, size='huge'))
    assert rc != 0 and res['msg'].startswith('size:') and "'huge'" in res['msg']
