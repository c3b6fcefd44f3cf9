"""benchlab.bench.dbench runs for real on this machine through `ansible localhost -m ...`."""

import json
import os
import subprocess

from conftest import module

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record


def _procs_mentioning(text):
    out = subprocess.run(['ps', '-eo', 'pid,args'], capture_output=True, text=True, check=True).stdout
    return [ln for ln in out.splitlines() if text in ln and 'ps -eo' not in ln and 'ansible' not in ln]


def test_client_sweep_gives_one_record_per_count_and_cleans_up(env, tmp_path):
    rc, status, res = module(env, 'dbench', {'path': str(tmp_path), 'clients': [1, 2], 'time': 2,
                                             'labels': {'platform': 'host'}})
    assert rc == 0, res
    recs = res['bench_results']
    assert [r['labels'] for r in recs] == [{'platform': 'host', 'clients': 1}, {'platform': 'host', 'clients': 2}]
    assert res['bench_result'] == recs[0]
    for rec, clients in zip(recs, (1, 2)):
        assert validate_record(rec) == []
        assert rec['tool'] == 'dbench' and rec['test'] == 'client' and rec['tool_version'] == '4.00'
        assert rec['metrics']['throughput']['unit'] == 'MB/s' and rec['metrics']['throughput']['value'] > 0
        assert rec['metrics']['max_latency']['unit'] == 'ms'
        assert 'op_ntcreatex_avg_latency' in rec['metrics'] and 'op_readx_avg_latency' in rec['metrics']
        assert rec['params']['clients'] == clients and rec['params']['loadfile'] == '/usr/share/dbench/client.txt'
        argv = rec['cmd']
        assert argv[argv.index('-D') + 1].startswith(str(tmp_path / 'benchlab-dbench-'))
        assert argv[-1] == str(clients) and '-t' in argv
    assert recs[0]['cmd'][recs[0]['cmd'].index('-D') + 1] != recs[1]['cmd'][recs[1]['cmd'].index('-D') + 1]
    assert res['changed'] is False
    assert os.listdir(tmp_path) == []  # dbench leaves a clients/ tree: the work directories are gone
    assert _procs_mentioning(str(tmp_path)) == []


def test_missing_loadfile_is_a_clear_failure(env, tmp_path):
    rc, status, res = module(env, 'dbench', {'path': str(tmp_path), 'loadfile': str(tmp_path / 'nope.txt'), 'time': 2})
    assert rc != 0
    assert res['msg'] == 'loadfile %s does not exist' % (tmp_path / 'nope.txt')
    assert os.listdir(tmp_path) == []


def test_unusable_loadfile_is_stopped_by_the_timeout(env, tmp_path):
    """dbench loops forever on a loadfile without operations: the timeout stops it, nothing is left."""
    loadfile = tmp_path.parent / ('%s-load.txt' % tmp_path.name)
    loadfile.write_text('this is not a dbench loadfile\n')
    try:
        rc, status, res = module(env, 'dbench', {'path': str(tmp_path), 'loadfile': str(loadfile), 'time': 2,
                                                 'timeout': 5})
    finally:
        loadfile.unlink()
    assert rc != 0
    assert res['msg'].startswith('dbench with 1 client(s) failed (rc=124)')
    assert 'did not finish within 5 s' in res['msg']
    assert res['bench_results'] == []
    assert 'Traceback' not in json.dumps(res)
    assert os.listdir(tmp_path) == []
    assert _procs_mentioning(str(tmp_path)) == []


def test_check_mode_returns_the_commands_and_runs_nothing(env, tmp_path):
    rc, status, res = module(env, 'dbench', {'path': str(tmp_path), 'clients': [1, 4, 16], 'time': 30}, check=True)
    assert rc == 0, res
    assert [c[-1] for c in res['cmds']] == ['1', '4', '16']
    assert res['cmd'] == res['cmds'][0]
    assert any(a.endswith('dbench') for a in res['cmd']) and '-c' in res['cmd']
    # dbench reads the checked copy of /usr/share/dbench/client.txt, in an owned directory of its own
    copy = res['cmd'][res['cmd'].index('-c') + 1]
    assert copy.endswith('/benchlab-dbench-load-XXXXXX/client.txt') and os.path.dirname(copy) in res['bench_dry_run']['creates']
    assert res['cmd'][:4][1:] == ['-k', '10', '180']  # the default timeout: 2 x 30 s + 120 s
    assert 'bench_results' not in res
    assert os.listdir(tmp_path) == []


def test_bad_arguments_name_the_field(env, tmp_path):
    rc, status, res = module(env, 'dbench', {'path': str(tmp_path), 'clients': [1, 0]})
    assert rc != 0 and res['msg'] == 'clients[1]: 0 is less than the minimum of 1', res
    rc, status, res = module(env, 'dbench', {'path': str(tmp_path), 'time': 1})
    assert rc != 0 and res['msg'] == 'time: 1 is less than the minimum of 2', res
    rc, status, res = module(env, 'dbench', {'path': str(tmp_path / 'missing')})
    assert rc != 0 and 'does not exist' in res['msg']
