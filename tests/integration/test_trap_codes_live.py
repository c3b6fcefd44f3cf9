"""Trap codes on the records the real modules return on this machine (issue 17 section 2, issue 15
section 2): the codes are data on the record, next to the warning text for people."""

from conftest import module

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record


def _rec(env, name, args):
    rc, _status, res = module(env, name, args)
    assert rc == 0, res
    rec = res['bench_result']
    assert validate_record(rec) == []
    return rec


def test_dd_source_read_from_the_storage_under_test_is_flagged(env, tmp_path):
    # data_dir on the file system dd writes to: the random source is read from the storage under test
    rec = _rec(env, 'dd', {'path': str(tmp_path), 'size': '8M', 'data_dir': str(tmp_path)})
    assert 'source_on_test_storage' in rec['flags']
    assert any('on the storage under test' in w for w in rec['warnings'])
    # the default: the source in /dev/shm (a tmpfs with room for 8 MiB here), nothing to flag
    rec = _rec(env, 'dd', {'path': str(tmp_path), 'size': '8M'})
    assert rec['params']['data_source'] == 'tmpfs' and 'source_on_test_storage' not in rec['flags']
    assert 'zero_data' not in rec['flags']
    rec = _rec(env, 'dd', {'path': str(tmp_path), 'size': '8M', 'data': 'zero'})
    assert 'zero_data' in rec['flags']


def test_fio_zero_buffers_and_dbench_are_flagged_zero_data(env, tmp_path):
    job = {'path': str(tmp_path), 'rw': 'write', 'size': '4M', 'bs': '1M'}
    assert 'zero_data' not in _rec(env, 'fio', job)['flags']
    assert 'zero_data' in _rec(env, 'fio', dict(job, options={'zero_buffers': 1}))['flags']
    assert 'zero_data' in _rec(env, 'fio', dict(job, options={'buffer_compress_percentage': 50}))['flags']
    rec = _rec(env, 'dbench', {'path': str(tmp_path), 'time': 2})
    assert 'zero_data' in rec['flags'] and any('zero' in w for w in rec['warnings'])
