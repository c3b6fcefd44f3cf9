# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every benchmark module on a real Python 3.6 and 3.13 target (pyenv's, on this machine, through
ansible_python_interpreter) under ansible-core 2.16, the last core that drives 3.6; the records are
valid. A Python 2.7 target gets one message naming the host and how to install python3."""

import json
import os
import shutil
import tempfile

import pytest

from conftest import BIN, CORE, FILES, pyenv_python, run

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

pytestmark = pytest.mark.skipif(CORE != (2, 16), reason='the Python 3.6 / 2.7 target runs need ansible-core 2.16 '
                                                        '(make compat runs them from .venv-core216)')


@pytest.fixture
def bench_dir():
    """A directory bonnie++'s user (nobody) may enter (pytest's tmp_path is under a 0700 directory)."""
    d = tempfile.mkdtemp(prefix='benchlab-compat-', dir='/var/tmp')
    try:
        os.chmod(d, 0o755)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize('version,env_name,port', [('3.6', 'TARGET_PY36', 15761), ('3.13', 'TARGET_PY313', 15762)])
def test_every_module_on_target_python(version, env_name, port, env, tmp_path, bench_dir):
    python = pyenv_python(version, env_name)
    out = tmp_path / 'out.json'
    proc = run([BIN / 'ansible-playbook', FILES / 'every_module.yml', '-i', 'inventories/local',
                '-e', 'ansible_python_interpreter=%s' % python, '-e', 'compat_dir=%s' % bench_dir,
                '-e', 'compat_out=%s' % out, '-e', 'compat_python_label=%s' % version,
                '-e', 'compat_iperf_port=%d' % port], env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    got = json.loads(out.read_text())
    # the modules really ran on that Python (the setup module's own report of it)
    assert '%d.%d' % tuple(got['target_python'][:2]) == version
    assert got['dropped'] is True
    assert got['sysinfo']['target']['path'] == bench_dir and got['sysinfo']['cpu']['logical_cpus'] >= 1
    records = got['records']
    for rec in records:
        assert validate_record(rec) == [], rec
        assert rec['labels']['python'] == version
    assert [r['tool'] for r in records] == ['dd', 'fio', 'bonnie++', 'dbench', 'sysbench', 'iperf3', 'compress',
                                            'compress', 'ioping']
    assert records[0]['metrics']['throughput']['value'] > 0 and records[5]['metrics']['throughput']['value'] > 0
    assert os.listdir(bench_dir) == []  # every module removed its work directory


# sysinfo's own action plugin, and dd's through meta/runtime.yml's plugin_routing (as every other target module)
@pytest.mark.parametrize('module,args', [('sysinfo', ''), ('dd', 'path=/var/tmp size=1M')])
def test_python27_target_gets_one_clear_error(env, module, args):
    python = pyenv_python('2.7', 'TARGET_PY27')
    proc = run([BIN / 'ansible', 'localhost', '-i', 'inventories/local', '-m', 'benchlab.bench.' + module,
                '-a', args, '-e', 'ansible_python_interpreter=%s' % python, '-o'], env)
    assert proc.returncode != 0
    status, _sep, payload = proc.stdout.strip().partition(' => ')
    assert 'FAILED' in status, proc.stdout + proc.stderr
    res = json.loads(payload)
    assert res['msg'].startswith('host localhost: its Python at %s is 2.7; benchlab.bench needs Python 3.6' % python)
    assert '`yum install python3`' in res['msg']
    assert res['benchlab_target_python'] == {'host': 'localhost', 'interpreter': python, 'version': '2.7',
                                             'needs': '3.6'}
    assert 'Traceback' not in proc.stdout + proc.stderr and 'module_stderr' not in res
