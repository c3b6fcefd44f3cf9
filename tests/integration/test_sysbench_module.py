"""benchlab.bench.sysbench_fileio runs for real on this machine through `ansible localhost -m ...`."""

import json
import os
import subprocess

from conftest import module

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.module_utils.tools.sysbench import ZERO_DATA_WARNING

SMALL = {'size': '16M', 'files': 4, 'time': 2}


def _procs_mentioning(text):
    out = subprocess.run(['ps', '-eo', 'pid,args'], capture_output=True, text=True, check=True).stdout
    return [ln for ln in out.splitlines() if text in ln and 'ps -eo' not in ln and 'ansible' not in ln]


def test_rndrw_record_and_cleanup(env, tmp_path):
    args = dict(SMALL, path=str(tmp_path), mode='rndrw', labels={'platform': 'host'})
    rc, status, res = module(env, 'sysbench_fileio', args)
    assert rc == 0, res
    rec = res['bench_result']
    assert validate_record(rec) == []
    assert rec['tool'] == 'sysbench' and rec['test'] == 'rndrw' and rec['tool_version'] == '1.0.20'
    assert rec['labels'] == {'platform': 'host'}
    assert set(rec['metrics']) == {'reads_per_s', 'writes_per_s', 'fsyncs_per_s', 'read_throughput',
                                   'write_throughput', 'latency_avg', 'latency_p95'}
    assert rec['metrics']['read_throughput']['unit'] == 'MB/s' and rec['metrics']['reads_per_s']['value'] > 0
    assert ZERO_DATA_WARNING in rec['warnings']
    assert any('below 2x RAM' in w for w in rec['warnings'])
    assert rec['params']['bytes'] == 16 * 1024 * 1024 and rec['params']['drop_caches'] is True
    assert '--file-total-size=16777216' in rec['cmd'] and rec['cmd'][-1] == 'run'
    assert [c[-1] for c in res['cmds']] == ['prepare', 'run', 'cleanup']
    assert res['changed'] is False
    assert os.listdir(tmp_path) == []
    assert _procs_mentioning('sysbench fileio --file-total-size=16777216') == []


def test_seqwr_direct_by_events(env, tmp_path):
    args = dict(SMALL, path=str(tmp_path), mode='seqwr', direct=True, bs='4K', threads=2, fsync_freq=0,
                time=0, events=500)
    rc, status, res = module(env, 'sysbench_fileio', args)
    assert rc == 0, res
    rec = res['bench_result']
    assert validate_record(rec) == []
    assert rec['test'] == 'seqwr'
    assert set(rec['metrics']) >= {'writes_per_s', 'write_throughput'} and 'reads_per_s' not in rec['metrics']
    assert '--file-extra-flags=direct' in rec['cmd'] and '--events=500' in rec['cmd'] and '--threads=2' in rec['cmd']
    assert os.listdir(tmp_path) == []


def test_fatal_fails_clearly_and_still_cleans_up(env, tmp_path):
    # O_DIRECT refuses writes that are not aligned to the sector size: sysbench prints FATAL
    # already while preparing the files
    args = dict(SMALL, path=str(tmp_path), mode='rndrd', direct=True, bs='1000', time=1)
    rc, status, res = module(env, 'sysbench_fileio', args)
    assert rc != 0
    assert res['msg'].startswith('sysbench fileio prepare failed (rc=1)')
    assert 'FATAL: Failed to write file! errno = 22 (Invalid argument)' in res['msg']
    assert [c[-1] for c in res['cmds']] == ['prepare', 'run', 'cleanup']
    assert 'bench_result' not in res and 'Traceback' not in json.dumps(res)
    assert os.listdir(tmp_path) == []


def test_check_mode_returns_the_commands_and_writes_nothing(env, tmp_path):
    rc, status, res = module(env, 'sysbench_fileio', dict(SMALL, path=str(tmp_path), mode='seqrd'), check=True)
    assert rc == 0, res
    assert [c[-1] for c in res['cmds']] == ['prepare', 'run', 'cleanup']
    assert res['cmd'] == res['cmds'][1] and '--file-test-mode=seqrd' in res['cmd']
    assert 'bench_result' not in res
    assert os.listdir(tmp_path) == []


def test_bad_arguments_name_the_field(env, tmp_path):
    rc, status, res = module(env, 'sysbench_fileio', {'path': str(tmp_path), 'time': 0, 'events': 0})
    assert rc != 0 and 'time and events are both 0' in res['msg']
    rc, status, res = module(env, 'sysbench_fileio', {'path': str(tmp_path), 'size': 'lots'})
    assert rc != 0 and res['msg'].startswith('size/bs:') and "'lots'" in res['msg']
    rc, status, res = module(env, 'sysbench_fileio', {'path': str(tmp_path), 'size': '64K', 'files': 8})
    assert rc != 0 and 'less than one block' in res['msg']
    assert os.listdir(tmp_path) == []
