# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nothing lost (issue 14 section 5) and the dry run (section 8), controller side: the run
directory's writes, the output-directory check, the history's owner, the report callback driven
with task results the way Ansible hands them over."""

from __future__ import annotations

import errno
import json
import re
import os
import signal
import sqlite3
import zlib
from contextlib import contextmanager

import pytest
from ansible.executor.stats import AggregateStats

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.history import history, history_sqlite, history_store
from ansible_collections.benchlab.bench.plugins.plugin_utils.report import reports
from ansible_collections.benchlab.bench.plugins.plugin_utils.run import rundir
from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import HistoryError, list_runs, load_run, store_run
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import (OutputDirError, RunDir, check_output_dir,
                                                                                current_run, read_jsonl, repair_jsonl)
from ansible_collections.benchlab.bench.tests.unit.helpers import CallbackResult, CallbackTask


def record(value=100.0, cell='host-rootfs'):
    return new_record('dd', 'write', {'throughput': metric(value, 'MB/s')}, tool_version='9.1',
                      labels={'benchmark': 'dd-write', 'cell': cell}, params={'size': '8M'})


# -- appends and renames ------------------------------------------------------------------------

def test_append_writes_the_whole_line_when_os_write_writes_less(tmp_path, monkeypatch):
    """os.write on a regular file here never returns short; the short count (a full pipe, a signal,
    some network file systems) is simulated by an os.write that writes at most 7 bytes a call."""
    real_write = os.write
    calls = []

    def short_write(fd, data):
        calls.append(len(data))
        return real_write(fd, bytes(data[:7]))

    monkeypatch.setattr(rundir.os, 'write', short_write)
    d = RunDir(str(tmp_path), 'run-1')
    d.append_jsonl('results.jsonl', {'a': 'x' * 50})
    d.append_jsonl('results.jsonl', {'b': 2})
    monkeypatch.undo()
    records, problems = read_jsonl(str(tmp_path / 'run-1' / 'results.jsonl'))
    assert records == [{'a': 'x' * 50}, {'b': 2}] and problems == []
    assert len(calls) > 8


def test_a_write_that_writes_nothing_is_an_error_not_a_loop(tmp_path, monkeypatch):
    """A zero-byte write (simulated: a regular file does not do it) raises instead of spinning."""
    monkeypatch.setattr(rundir.os, 'write', lambda fd, data: 0)
    with pytest.raises(OSError, match='short write'):
        RunDir(str(tmp_path), 'run-1').append_jsonl('results.jsonl', {'a': 1})


def test_a_file_that_cannot_be_written_whole_leaves_no_temporary_file_and_the_old_one_stands(tmp_path, monkeypatch):
    """A full disk (simulated: os.write writes 5 bytes, then fails with ENOSPC): the error is raised,
    the report already there is unchanged and no half-written temporary file is left beside it."""
    d = RunDir(str(tmp_path), 'run-1')
    d.write_text('report.md', '# the old report\n')
    real_write, calls = os.write, []

    def full(fd, data):
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, bytes(data[:5]))

    monkeypatch.setattr(rundir.os, 'write', full)
    with pytest.raises(OSError) as err:
        d.write_text('report.md', '# the new report, longer\n')
    monkeypatch.undo()
    assert err.value.errno == errno.ENOSPC and len(calls) == 2
    assert sorted(os.listdir(str(tmp_path / 'run-1'))) == ['report.md']
    assert (tmp_path / 'run-1' / 'report.md').read_text() == '# the old report\n'


@contextmanager
def fsync_spy(monkeypatch):
    """Every os.fsync/os.replace of the run directory code, in order: (call, path)."""
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(('fsync', os.readlink('/proc/self/fd/%d' % fd)))
        return real_fsync(fd)

    def replace(src, dst, **kw):
        at = kw.get('dst_dir_fd')   # relative to an open directory: its path
        events.append(('replace', str(dst) if at is None else os.path.join(os.readlink('/proc/self/fd/%d' % at), dst)))
        return real_replace(src, dst, **kw)

    monkeypatch.setattr(rundir.os, 'fsync', fsync)
    monkeypatch.setattr(rundir.os, 'replace', replace)
    yield events
    monkeypatch.undo()


def test_a_renamed_file_is_fsynced_before_the_rename_and_the_directory_after(tmp_path, monkeypatch):
    d = RunDir(str(tmp_path), 'run-1')
    with fsync_spy(monkeypatch) as events:
        path = d.write_text('report.md', '# report\n')
    target = str(tmp_path / 'run-1' / 'report.md')
    assert [e[0] for e in events] == ['fsync', 'replace', 'fsync'] and events[1:] == [
        ('replace', target), ('fsync', str(tmp_path / 'run-1'))]
    # a new temporary file of its own beside it (O_EXCL: never one that was there, never through a link)
    assert re.fullmatch(re.escape(str(tmp_path / 'run-1' / '.report.md.')) + r'[0-9a-f]{8}\.tmp', events[0][1])
    assert open(path).read() == '# report\n'


def test_an_append_is_fsynced_and_a_new_file_s_directory_too(tmp_path, monkeypatch):
    d = RunDir(str(tmp_path), 'run-1')
    with fsync_spy(monkeypatch) as events:
        d.append_jsonl('results.jsonl', {'a': 1})
        d.append_jsonl('results.jsonl', {'a': 2})
    jsonl = str(tmp_path / 'run-1' / 'results.jsonl')
    assert events == [('fsync', jsonl), ('fsync', str(tmp_path / 'run-1')), ('fsync', jsonl)]


# -- a results.jsonl cut short, lines that are not records -------------------------------------

def test_repair_drops_a_partial_last_line_and_keeps_every_complete_record(tmp_path):
    path = tmp_path / 'results.jsonl'
    whole = ''.join(json.dumps(r, sort_keys=True) + '\n' for r in (record(1), record(2)))
    path.write_bytes(whole.encode() + b'{"tool": "dd", "metr')
    message = repair_jsonl(str(path))
    assert message == ('%s: dropped a partial last line of 20 bytes (a write cut short by a crash); every complete '
                       'line before it is kept' % path)
    assert path.read_text() == whole
    assert repair_jsonl(str(path)) is None  # whole now: nothing to do
    assert path.read_text() == whole


def test_repair_completes_a_whole_record_that_lost_only_its_newline(tmp_path):
    path = tmp_path / 'results.jsonl'
    path.write_text('{"a": 1}\n{"b": 2}')
    assert 'completed it' in repair_jsonl(str(path))
    assert read_jsonl(str(path)) == ([{'a': 1}, {'b': 2}], [])


def test_repair_of_a_long_last_line_finds_its_start(tmp_path):
    path = tmp_path / 'results.jsonl'
    path.write_text('{"a": 1}\n' + '{"x": "' + 'y' * 200000)
    assert 'of 200007 bytes' in repair_jsonl(str(path))
    assert path.read_text() == '{"a": 1}\n'


def test_repair_of_a_file_that_is_one_partial_line(tmp_path):
    path = tmp_path / 'results.jsonl'
    path.write_text('{"a": ')
    assert 'there was no complete line' in repair_jsonl(str(path))
    assert path.read_bytes() == b''
    assert repair_jsonl(str(tmp_path / 'missing.jsonl')) is None


def test_lines_that_are_json_but_not_objects_are_named_with_their_line_number(tmp_path):
    path = tmp_path / 'results.jsonl'
    path.write_text('{"a": 1}\n[1, 2]\n"text"\n\nnot json\n{"b": 2}\nnull\n')
    records, problems = read_jsonl(str(path))
    assert records == [{'a': 1}, {'b': 2}]
    assert problems == [
        '%s line 2: JSON but not an object (list), skipped' % path,
        '%s line 3: JSON but not an object (str), skipped' % path,
        '%s line 4: empty line, skipped' % path,
        '%s line 5: not valid JSON (8 bytes), skipped: Expecting value: line 1 column 1 (char 0)' % path,
        '%s line 7: JSON but not an object (NoneType), skipped' % path]


# -- the output directory before any host -------------------------------------------------------

def test_an_output_directory_without_the_free_space_is_refused(tmp_path):
    """(A read-only and a full file system, real tmpfs mounts, are in
    tests/integration/test_hostile_nothing_lost.py.)"""
    with pytest.raises(OutputDirError) as e:
        check_output_dir(str(tmp_path / 'runs'), min_free=2 ** 62)
    assert str(e.value).startswith('output directory %s: only ' % (tmp_path / 'runs'))
    assert str(e.value).endswith(' MiB needed: free some space or choose another one (BENCHLAB_REPORT_DIR) or make '
                                 'it writable')
    info = check_output_dir(str(tmp_path), min_free=1024)
    assert info['free_bytes'] > 1024
    assert list(tmp_path.iterdir()) == []  # the probe file is gone


def test_a_missing_output_directory_is_checked_at_its_parent_and_not_created(tmp_path):
    info = check_output_dir(str(tmp_path / 'a' / 'b' / 'runs'), min_free=1)
    assert info['checked'] == str(tmp_path) and list(tmp_path.iterdir()) == []
    (tmp_path / 'file').write_text('x')
    with pytest.raises(OutputDirError, match='is not a directory'):
        check_output_dir(str(tmp_path / 'file'), min_free=1)


# -- the history: owned by the controller that stored the run ----------------------------------

def doc_of(run_id, records, status='complete'):
    return dict(run_id=run_id, started='2026-12-03T10:00:00Z', finished='2026-12-03T10:01:00Z', user='me',
                inventory='inv', playbook='bench.yml', matrix='m', collection_version='0.1.0', status=status,
                invalid=[], failed=[], records=records, environment={}, plan=None, analysis={'benchmarks': []})


def test_a_second_controller_reusing_a_run_id_is_refused_and_the_stored_run_kept(tmp_path):
    db = str(tmp_path / 'h.sqlite')
    mine = history.controller_fingerprint(str(tmp_path / 'a' / 'runs' / 'r1'), host='ctl-a')
    theirs = history.controller_fingerprint(str(tmp_path / 'b' / 'runs' / 'r1'), host='ctl-b')
    first = doc_of('r1', [record(1), record(2)])
    assert store_run(db, first, fingerprint=mine[0], controller=mine[1]) == 'stored'
    with pytest.raises(HistoryError) as e:
        store_run(db, doc_of('r1', [record(3)] * 5), fingerprint=theirs[0], controller=theirs[1])
    assert 'run id r1 is already in the history' in str(e.value) and 'another controller (ctl-a:' in str(e.value)
    with pytest.raises(HistoryError, match='another controller'):
        history.check_run_id(db, 'r1', theirs[0])
    history.check_run_id(db, 'r1', mine[0])  # the owner may go on
    history.check_run_id(db, 'r2', theirs[0])  # a free id is free
    assert load_run(db, 'r1') == first


def test_only_a_resume_of_the_same_run_may_extend_it(tmp_path):
    db = str(tmp_path / 'h.sqlite')
    fp, ctl = history.controller_fingerprint(str(tmp_path / 'runs' / 'r1'), host='ctl-a')
    interrupted = doc_of('r1', [record(1), record(2)], status='interrupted')
    store_run(db, interrupted, fingerprint=fp, controller=ctl)
    # a new run under the old id, fewer records, not a resume: refused
    with pytest.raises(HistoryError, match='a new run under an old run id does not replace it'):
        store_run(db, doc_of('r1', [record(9)]), fingerprint=fp, controller=ctl)
    assert load_run(db, 'r1') == interrupted
    # the resume (even with fewer records: a changed cell measured again) extends it
    assert store_run(db, doc_of('r1', [record(1)]), fingerprint=fp, controller=ctl, extends=True) == 'replaced'
    # the same run stored again with at least its records (interrupted, then complete)
    assert store_run(db, doc_of('r1', [record(1), record(2)]), fingerprint=fp, controller=ctl) == 'replaced'
    assert [r['status'] for r in list_runs(db)] == ['complete']


def test_a_schema_1_history_gains_the_owner_columns_and_keeps_its_runs(tmp_path):
    db = str(tmp_path / 'h.sqlite')
    conn = sqlite3.connect(db)
    for stmt in history_sqlite.MIGRATIONS[0][1]:  # the schema-1 tables
        conn.execute(stmt)
    doc = doc_of('old', [record(1)])
    text = json.dumps(doc, sort_keys=True, separators=(',', ':'))
    conn.execute('INSERT INTO runs (run_id, status, started, stored, n_records, digest, doc) VALUES (?,?,?,?,?,?,?)',
                 ('old', 'complete', doc['started'], 'x', 1, 'd', zlib.compress(text.encode())))
    conn.execute('PRAGMA user_version = 1')
    conn.commit()
    conn.close()
    assert load_run(db, 'old') == doc
    fp, ctl = history.controller_fingerprint('/runs/old', host='ctl')
    assert store_run(db, doc_of('old', [record(2)]), fingerprint=fp, controller=ctl) == 'replaced'  # no owner yet
    conn = sqlite3.connect(db)
    assert conn.execute('SELECT fingerprint, controller FROM runs').fetchall() == [(fp, ctl)]
    assert conn.execute('PRAGMA user_version').fetchone()[0] == history_store.SCHEMA_VERSION == 3
    assert conn.execute('PRAGMA application_id').fetchone()[0] == history_sqlite.APPLICATION_ID
    conn.close()


# -- the report callback, driven like Ansible drives it -----------------------------------------

class _Playbook(object):
    _file_name = 'playbooks/bench.yml'


PLAN = {'name': 'm', 'baseline': 'host-rootfs', 'cells': [{'name': 'host-rootfs', 'host': 'localhost', 'path': '/var/tmp',
                                                          'labels': {}}],
        'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'size': '8M'}, 'methodology': {},
                        'cells': ['host-rootfs']}],
        'hosts': ['localhost'], 'runs': [{'host': 'localhost', 'cell': 'host-rootfs', 'benchmark': 'dd-write',
                                          'tool': 'dd', 'repetition': 1, 'params': {'size': '8M'}}], 'gates': {}}


@pytest.fixture
def callback(tmp_path, monkeypatch):
    """A benchlab.bench.report callback loaded by Ansible's plugin loader, writing under tmp_path;
    the signal handlers and the atexit hook it installs are undone afterwards."""
    import yaml
    from ansible import constants as C
    from ansible import context
    from ansible.module_utils.common.collections import ImmutableDict
    from ansible_collections.benchlab.bench.plugins.callback import report
    # what Ansible's plugin loader does when it loads the callback: its options from DOCUMENTATION
    C.config.initialize_plugin_configuration_definitions('callback', 'benchlab.bench.report',
                                                         yaml.safe_load(report.DOCUMENTATION)['options'])
    monkeypatch.setenv('BENCHLAB_REPORT_DIR', str(tmp_path / 'runs'))
    monkeypatch.setenv('BENCHLAB_HISTORY_DB', str(tmp_path / 'history.sqlite'))
    monkeypatch.delenv('BENCHLAB_RUN_ID', raising=False)
    monkeypatch.delenv('BENCHLAB_PREFLIGHT_ERROR', raising=False)
    handlers = dict((s, signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM))
    made = []

    def make(check=False, run_id=None):
        monkeypatch.setattr(context, 'CLIARGS', ImmutableDict(check=check))
        if run_id is not None:
            monkeypatch.setenv('BENCHLAB_RUN_ID', run_id)
        cb = report.CallbackModule()
        cb._load_name = 'benchlab.bench.report'
        cb.set_options()
        messages = []
        monkeypatch.setattr(cb._display, 'display', lambda msg, *a, **k: messages.append(('display', msg)))
        monkeypatch.setattr(cb._display, 'warning', lambda msg, *a, **k: messages.append(('warning', msg)))
        monkeypatch.setattr(cb._display, 'error', lambda msg, *a, **k: messages.append(('error', msg)))
        cb.messages = messages
        cb.v2_playbook_on_start(_Playbook())
        made.append(cb)
        return cb

    yield make
    for cb in made:
        cb.reported = True  # no report from the atexit hook when pytest exits
    for s, h in handlers.items():
        signal.signal(s, h)


def bench_ok(cb, rec, host='localhost'):
    cb.v2_runner_on_ok(CallbackResult(host, CallbackTask('Benchmark dd', 'benchlab.bench.dd'), {'bench_result': rec}))


def planned(cb, *values):
    """The plan arrives, then one dd record per value."""
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('plan', 'ansible.builtin.set_fact'),
                                      {'ansible_facts': {'bench_plan': PLAN}}))
    for value in values:
        bench_ok(cb, record(value))
    return cb


def raising(exc):
    def broken(*args, **kwargs):
        raise exc
    return broken


def test_the_history_is_stored_when_a_renderer_fails(callback, tmp_path, monkeypatch):
    cb = planned(callback(), 100.0, 101.0)
    monkeypatch.setattr(reports, 'render_html', raising(RuntimeError('renderer exploded')))
    with pytest.raises(SystemExit) as exited:   # the run fails visibly: ansible-playbook exits 1
        cb.v2_playbook_on_stats(AggregateStats())
    assert exited.value.code == 1
    run_dir = tmp_path / 'runs' / cb.rundir.run_id
    assert sorted(p.name for p in run_dir.iterdir()) == [
        'plan.json', 'report.md', 'results.csv', 'results.json', 'results.jsonl', 'summary.csv']
    assert len(load_run(str(tmp_path / 'history.sqlite'), cb.rundir.run_id)['records']) == 2
    errors = [m for kind, m in cb.messages if kind == 'error']
    assert errors == ['benchlab.bench.report: %s not written: RuntimeError: renderer exploded (results.jsonl and the '
                      'history hold the records)' % (run_dir / 'report.html'),
                      'benchlab.bench.report: the run fails: report.html not written (see above); what was written '
                      'is kept']


def test_a_failed_play_keeps_its_own_exit_code_when_a_renderer_fails(callback, monkeypatch):
    cb = planned(callback(), 100.0)
    monkeypatch.setattr(reports, 'render_html', raising(ZeroDivisionError('division by zero')))
    stats = AggregateStats()
    stats.increment('failures', 'localhost')
    cb.v2_playbook_on_stats(stats)   # no SystemExit: Ansible exits 2 for the failed host itself
    assert cb.unwritten == ['report.html']


def test_an_analysis_that_fails_keeps_results_json_csv_and_history_and_fails_the_run(callback, tmp_path, monkeypatch):
    """The analysis raising (as one Infinity did before records were checked for finite numbers):
    results.json, results.csv and the history keep both records; report.md/html are not written over
    with an empty report; ansible-playbook exits 1."""
    from ansible_collections.benchlab.bench.plugins.callback import report
    cb = planned(callback(), 100.0, 101.0)
    monkeypatch.setattr(report, 'analyze', raising(ValueError('not a finite number: inf')))
    with pytest.raises(SystemExit) as exited:
        cb.v2_playbook_on_stats(AggregateStats())
    assert exited.value.code == 1
    run_dir = tmp_path / 'runs' / cb.rundir.run_id
    assert sorted(p.name for p in run_dir.iterdir()) == ['plan.json', 'results.csv', 'results.json', 'results.jsonl']
    doc = json.loads((run_dir / 'results.json').read_text())
    assert len(doc['records']) == 2 and doc['analysis'] == {
        'benchmarks': [], 'error': 'the analysis failed (ValueError: not a finite number: inf)'}
    assert len(load_run(str(tmp_path / 'history.sqlite'), cb.rundir.run_id)['records']) == 2
    errors = [m for kind, m in cb.messages if kind == 'error']
    assert errors[0] == ('benchlab.bench.report: %s not written: ValueError: the analysis failed (ValueError: not a '
                         'finite number: inf) (results.jsonl and the history hold the records)' % (run_dir / 'report.md'))
    assert errors[-1].startswith('benchlab.bench.report: the run fails: report.md, report.html not written')


def test_a_record_that_cannot_be_appended_waits_and_is_written_with_the_next(callback, tmp_path, monkeypatch):
    """A full disk is simulated (append_jsonl raising ENOSPC once); the record is not only in memory
    for longer than the next append."""
    cb = callback()
    real = RunDir.append_jsonl
    fail = [True]

    def flaky(self, name, obj):
        if fail.pop() if fail else False:
            raise OSError(28, 'No space left on device')
        return real(self, name, obj)

    monkeypatch.setattr(RunDir, 'append_jsonl', flaky)
    bench_ok(cb, record(1.0))
    assert [k for k, _m in cb.messages] == ['error'] and 'No space left on device' in cb.messages[0][1]
    bench_ok(cb, record(2.0))
    records, problems = read_jsonl(str(tmp_path / 'runs' / cb.rundir.run_id / 'results.jsonl'))
    assert [r['metrics']['throughput']['value'] for r in records] == [1.0, 2.0] and problems == []


def test_a_partial_last_line_is_repaired_before_the_first_append(callback, tmp_path):
    run_dir = tmp_path / 'runs' / 'resumed'
    run_dir.mkdir(parents=True)
    earlier = json.dumps(dict(record(1.0), host='localhost'), sort_keys=True) + '\n'
    (run_dir / 'results.jsonl').write_text(earlier + '{"tool": "dd", "me')
    cb = callback(run_id='resumed')
    bench_ok(cb, record(2.0))
    assert ('warning', 'benchlab.bench.report: %s: dropped a partial last line of 18 bytes (a write cut short by a '
            'crash); every complete line before it is kept' % (run_dir / 'results.jsonl')) in cb.messages
    records, problems = read_jsonl(str(run_dir / 'results.jsonl'))
    assert [r['metrics']['throughput']['value'] for r in records] == [1.0, 2.0] and problems == []


def test_the_dry_run_writes_the_plan_and_nothing_else(callback, tmp_path):
    cb = callback(check=True)
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('plan', 'ansible.builtin.set_fact'),
                                      {'ansible_facts': {'bench_plan': PLAN}}))
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('Take this host\'s run', 'ansible.builtin.set_fact'),
                                      {'ansible_facts': {'bench_run_item': PLAN['runs'][0]}}))
    # contract 4: what a benchmark module returns in check mode
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('Benchmark dd', 'benchlab.bench.dd'), {'changed': False, 'bench_dry_run': {
        'tool': 'dd', 'argv': ['dd', 'if=/dev/zero', 'of=/dev/loop9', 'bs=1M'], 'writes': ['/dev/loop9'],
        'creates': [], 'removes': [], 'refused': '/dev/loop9: partition /dev/loop9p1 is mounted on /mnt'},
        'bench_result': record(5.0)}))
    # what the modules return today: their cmd
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('Benchmark fio', 'benchlab.bench.fio'),
                                      {'changed': False, 'cmd': ['fio', '--name=x']}))
    cb.v2_runner_item_on_ok(CallbackResult('localhost', CallbackTask('Define the guest', 'community.libvirt.virt'),
                                           {'changed': True, 'item': 'guest-1', 'msg': 'would define\x1b[31m guest-1'}))
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('Define the guest', 'community.libvirt.virt'),
                                      {'changed': True, 'results': [{'changed': True}]}))  # the loop's summary: not twice
    cb.v2_runner_on_failed(CallbackResult('localhost', CallbackTask('Benchmark dd device', 'benchlab.bench.dd'),
                                          {'msg': 'refusing /dev/loop8: destructive: true is required'}))
    cb.v2_runner_on_failed(CallbackResult('localhost', CallbackTask('Read the key', 'ansible.builtin.slurp'),
                                          {'msg': 'file not found: /etc/benchlab/key'}))
    cb.v2_playbook_on_stats(None)
    run_dir = tmp_path / 'runs' / cb.rundir.run_id
    assert sorted(p.name for p in run_dir.iterdir()) == ['dry-run.json', 'report.md']
    assert not (tmp_path / 'history.sqlite').exists()
    doc = json.loads((run_dir / 'dry-run.json').read_text())
    assert doc['status'] == 'dry run'
    assert doc['counts'] == {'runs': 2, 'hosts': 1, 'refused': 2, 'changes': 1, 'failed': 1}
    dd, fio, change, refused, failed = doc['hosts']['localhost']
    assert failed['kind'] == 'failed' and failed['refused'] == 'file not found: /etc/benchlab/key'
    assert dd['argv'] == ['dd', 'if=/dev/zero', 'of=/dev/loop9', 'bs=1M'] and dd['writes'] == ['/dev/loop9']
    assert (dd['step'], dd['cell'], dd['benchmark'], dd['repetition']) == (1, 'host-rootfs', 'dd-write', 1)
    assert dd['refused'].startswith('/dev/loop9: partition')
    assert fio['argv'] == ['fio', '--name=x'] and fio['tool'] == 'fio'
    assert change['kind'] == 'change' and change['item'] == 'guest-1' and '\x1b' not in change['msg']
    assert refused['kind'] == 'refused' and 'destructive: true' in refused['refused']
    md = (run_dir / 'report.md').read_text()
    assert md.startswith('# DRY RUN\n') and 'status: dry run' in md and 'status: complete' not in md
    assert '`dd if=/dev/zero of=/dev/loop9 bs=1M`' in md and 'would change: Define the guest' in md
    terminal = [m for kind, m in cb.messages if kind == 'display' and 'DRY RUN' in m]
    assert terminal and all(len(line) <= 100 for line in terminal[0].splitlines())
    assert 'REFUSED: /dev/loop9: partition' in terminal[0] and 'FAILED: file not found' in terminal[0]
    assert 'failed in check mode' in md


def test_a_dry_run_of_an_existing_run_leaves_its_files_alone(callback, tmp_path):
    run_dir = tmp_path / 'runs' / 'measured'
    run_dir.mkdir(parents=True)
    for name in ('results.jsonl', 'plan.json', 'report.md'):
        (run_dir / name).write_text('{"kept": "%s"}\n' % name)
    cb = callback(check=True, run_id='measured')
    cb.v2_runner_on_ok(CallbackResult('localhost', CallbackTask('plan', 'ansible.builtin.set_fact'),
                                      {'ansible_facts': {'bench_plan': PLAN}}))
    cb.v2_playbook_on_stats(None)
    for name in ('results.jsonl', 'plan.json', 'report.md'):
        assert (run_dir / name).read_text() == '{"kept": "%s"}\n' % name
    assert (run_dir / 'dry-run.md').read_text().startswith('# DRY RUN')


@pytest.mark.parametrize('run_id', ['run-1\n', ' run-1', 'run-1\t', 'run-1\r\n'])
def test_a_run_id_with_white_space_fails_the_preflight(callback, run_id, tmp_path):
    cb = callback(run_id=run_id)
    assert current_run()['preflight_error'] == (
        'benchlab.bench.report: run_id %r: leading or trailing white space (a newline?) is not part of a run id; '
        'remove it (BENCHLAB_RUN_ID)' % run_id)
    assert ('error', current_run()['preflight_error'] + ' (nothing is run: fix it and start again)') in cb.messages
    cb.v2_playbook_on_stats(None)
    assert not (tmp_path / 'runs').exists()


def test_a_playbook_that_goes_on_after_a_failed_preflight_keeps_its_records(callback, tmp_path):
    """Only bench.yml asserts the preflight. Another playbook with the callback goes on: its records
    and report are still written, and the history entry of the other controller is not replaced."""
    db = str(tmp_path / 'history.sqlite')
    fp, ctl = history.controller_fingerprint('/elsewhere/runs/shared', host='ctl-b')
    theirs = doc_of('shared', [record(1.0)] * 3)
    store_run(db, theirs, fingerprint=fp, controller=ctl)
    cb = callback(run_id='shared')
    assert 'another controller (ctl-b:/elsewhere/runs/shared)' in current_run()['preflight_error']
    bench_ok(cb, record(7.0))
    with pytest.raises(SystemExit) as e:  # measured but not stored: the run fails (exit 1)
        cb.v2_playbook_on_stats(None)
    assert e.value.code == 1
    results = json.loads((tmp_path / 'runs' / 'shared' / 'results.json').read_text())
    assert [r['metrics']['throughput']['value'] for r in results['records']] == [7.0]
    assert load_run(db, 'shared') == theirs
    assert any(kind == 'error' and 'run shared not stored in the history' in m for kind, m in cb.messages)
    assert any(kind == 'error' and 'the run fails: run shared not stored in the history' in m for kind, m in cb.messages)


def test_the_preflight_passes_and_says_so_in_the_environment(callback):
    """The verdict is data for the play (the lookup run_state), no longer an environment variable."""
    callback()
    assert current_run()['preflight_error'] == ''
    assert 'BENCHLAB_PREFLIGHT_ERROR' not in os.environ and 'BENCHLAB_RUN_ID' not in os.environ


def test_a_record_that_waited_for_an_interrupted_report_is_not_appended(tmp_path):
    """The report callback holds results.jsonl's lock while it writes an interrupted run's report; a
    run path worker that waited for the lock appends nothing once its controller is gone (still()
    false), so results.jsonl and results.json hold the same records."""
    import multiprocessing
    d = RunDir(str(tmp_path), 'held')
    d.append_jsonl('results.jsonl', {'n': 1})
    ctx = multiprocessing.get_context('fork')
    got, go = ctx.Queue(), ctx.Event()

    def worker():   # forked before the callback holds the lock, as Ansible's workers are
        go.wait(30)
        got.put(RunDir(str(tmp_path), 'held').append_jsonl('results.jsonl', {'n': 2}, still=lambda: False))

    p = ctx.Process(target=worker)
    p.start()
    fd = d.hold('results.jsonl')
    go.set()
    assert got.empty()
    os.close(fd)                  # the callback's process ended
    p.join(30)
    assert got.get(timeout=5) is False
    records, _problems = read_jsonl(str(tmp_path / 'held' / 'results.jsonl'))
    assert records == [{'n': 1}]
    assert d.append_jsonl('results.jsonl', {'n': 3}, still=lambda: True) is None
    assert [r['n'] for r in read_jsonl(str(tmp_path / 'held' / 'results.jsonl'))[0]] == [1, 3]


def test_a_run_label_beyond_its_limit_fails_the_preflight(callback, monkeypatch, tmp_path):
    monkeypatch.setenv('BENCHLAB_RUN_LABEL', 'n' * 20000)
    callback()
    assert current_run()['preflight_error'] == (
        'benchlab.bench.report: run_label is 20000 characters long: at most 256 (it names the run in the history and '
        'heads every comparison; BENCHLAB_RUN_LABEL)')
    assert not (tmp_path / 'history.sqlite').exists()
