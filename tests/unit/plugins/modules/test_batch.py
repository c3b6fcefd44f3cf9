# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A batch: several runs of a benchmark module in one module process (module_utils/run/benchrun.py
run_module, the option batch), through the dd module's main() with the processes mocked at the
boundary (helper.py): each run its own options, result and spool lines; a failed run fails only
itself; a run's timeout_s stops a real tool that is still running."""

import json
import os
import subprocess
import time

import pytest

from ansible.module_utils import basic
from ansible_collections.benchlab.bench.plugins.module_utils.run import benchrun
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import CommandResult
from ansible_collections.benchlab.bench.plugins.modules import dd
from ansible_collections.benchlab.bench.tests.unit.helpers import fixture_text
from ansible_collections.benchlab.bench.tests.unit.plugins.modules.helper import QUIET_GUARDS, patch_module_args

WRITE = fixture_text('dd/coreutils-9.1-write-fdatasync.txt')
VERSION = fixture_text('dd/coreutils-9.1-version.txt')


def _batch(runs, tmp_path, capsys, monkeypatch, spool=True):
    """dd's main() with `batch`: (the module's result, the spool's lines, the argvs it started)."""
    started = []

    def fake_run(self, argv, cwd=None, data=None):
        started.append([str(a) for a in argv])
        return CommandResult(argv, 0, '', WRITE, 0.5)

    def fake_run_command(self, args, **kwargs):
        started.append([str(a) for a in args])
        return 0, VERSION, ''

    monkeypatch.setattr(benchrun.BenchRun, 'run', fake_run)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', fake_run_command)
    path = tmp_path / 'spool.jsonl'
    args = {'batch': {'runs': runs, 'spool': str(path) if spool else None}}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            dd.main()
    result = json.loads(capsys.readouterr().out)
    lines = [json.loads(line) for line in path.read_text().splitlines()] if spool else []
    return result, lines, started


def _run(tmp_path, run_key, **options):
    return {'options': dict({'path': str(tmp_path), 'size': '8M', 'data': 'zero', 'drop_caches': False,
                             'guards': QUIET_GUARDS, 'run_id': 'r1', 'run_key': run_key,
                             'labels': {'cell': 'c', 'benchmark': run_key}}, **options)}


def test_every_run_of_a_batch_has_its_own_options_result_and_spool_lines(tmp_path, capsys, monkeypatch):
    result, lines, started = _batch([_run(tmp_path, 'a'), _run(tmp_path, 'b', bs='64K', size='4M')],
                                    tmp_path, capsys, monkeypatch)
    assert not result.get('failed'), result
    assert [r['bench_result']['labels']['benchmark'] for r in result['runs']] == ['a', 'b']
    assert result['runs'][1]['bench_result']['params']['bs'] == '64K'
    assert [a for a in started if a[1] != '--version'][1][3:5] == ['bs=65536', 'count=64']
    # the module's own process first (the controller stops it by pid and start time when it goes away)
    assert lines[0] == {'pid': os.getpid(), 'pid_start': benchrun.proc_start_time(os.getpid())}
    lines = lines[1:]
    assert [sorted(k for k in line if k != 'result') for line in lines] == [['start'], ['done'], ['start'], ['done']]
    assert [line.get('start', line.get('done')) for line in lines] == [0, 0, 1, 1]
    assert lines[1]['result'] == result['runs'][0] and lines[3]['result'] == result['runs'][1]
    # each run's work directory (marked with its own run key) is gone again
    assert not [n for n in os.listdir(tmp_path) if n.startswith('benchlab-')]


def test_a_failed_run_fails_itself_only(tmp_path, capsys, monkeypatch):
    runs = [_run(tmp_path, 'a'), _run(tmp_path, 'b', size='12 apples'), {'options': 'nonsense'},
            _run(tmp_path, 'c', path=str(tmp_path / 'missing')), _run(tmp_path, 'd')]
    result, lines, _started = _batch(runs, tmp_path, capsys, monkeypatch, spool=False)
    assert not result.get('failed') and lines == []
    failed = [bool(r.get('failed')) for r in result['runs']]
    assert failed == [False, True, True, True, False], result['runs']
    assert 'size' in result['runs'][1]['msg']
    assert 'options' in result['runs'][2]['msg']
    assert 'does not exist' in result['runs'][3]['msg']
    assert result['runs'][4]['bench_result']['labels']['benchmark'] == 'd'


def test_a_missing_required_option_is_named_per_run(tmp_path, capsys, monkeypatch):
    result, _lines, _started = _batch([{'options': {'size': '8M'}}], tmp_path, capsys, monkeypatch, spool=False)
    assert result['runs'][0]['failed'] and 'path' in result['runs'][0]['msg'], result


def test_check_mode_gives_every_run_its_dry_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', lambda self, args, **kw: (0, VERSION, ''))
    with patch_module_args({'batch': {'runs': [_run(tmp_path, 'a'), _run(tmp_path, 'b')]}, '_ansible_check_mode': True}):
        with pytest.raises(SystemExit):
            dd.main()
    result = json.loads(capsys.readouterr().out)
    assert [r['bench_dry_run']['tool'] for r in result['runs']] == ['dd', 'dd']
    assert not os.listdir(tmp_path)


class _Module(object):
    """What BenchRun needs of a module, for a real tool run with a deadline."""
    check_mode = False

    def __init__(self, timeout_s):
        self.params = {'run_id': 'r1', 'run_key': 'k1'}
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.failed = None

    def fail_json(self, **kw):
        self.failed = kw
        raise SystemExit(1)


def test_a_runs_timeout_stops_its_tool_and_fails_the_run(tmp_path):
    module = _Module(0.5)
    with pytest.raises(SystemExit):
        with benchrun.BenchRun(module, 'sleep') as br:
            br.workdir_in(str(tmp_path))
            br.run(['sleep', '30.123'])
    assert 'still running after its timeout_s of 0.5 s: stopped' in module.failed['msg'], module.failed
    # the tool's session is gone, and so is the work directory
    out = subprocess.run(['ps', '-eo', 'args'], capture_output=True, text=True, check=True).stdout
    assert 'sleep 30.123' not in out.splitlines()
    assert os.listdir(tmp_path) == []


def test_without_a_deadline_nothing_changes(tmp_path):
    module = _Module(1)
    module.deadline = None
    with benchrun.BenchRun(module, 'true') as br:
        br.workdir_in(str(tmp_path))
        res = br.run(['sh', '-c', 'sleep 1.2; echo done'])
    assert res.ok and res.stdout.strip() == 'done'


FIO_JSON = fixture_text('fio/fio-3.33-seqread-direct.json')


def test_a_batchs_read_jobs_of_one_path_read_the_file_laid_out_once(tmp_path, capsys, monkeypatch):
    """fio (its output and its file mocked: the file appears the way fio lays it out) in a batch of
    three read jobs of one path and size and a write job: the second and third read the first's
    file, the write job lays out nothing of theirs; nothing is left afterwards."""
    from ansible_collections.benchlab.bench.plugins.modules import fio
    laid, seen = [], []

    def fake_run(self, argv, cwd=None, data=None):
        name = [a for a in argv if a.startswith('--name=')][0][len('--name='):]
        data_file = os.path.join(cwd, '%s.0.0' % name)
        seen.append((name, os.path.exists(data_file)))
        if not os.path.exists(data_file):
            laid.append(name)
            with open(data_file, 'wb') as f:
                f.truncate(1024 * 1024)
        return CommandResult(argv, 0, FIO_JSON, '', 0.5)

    monkeypatch.setattr(benchrun.BenchRun, 'run', fake_run)
    monkeypatch.setattr(fio, 'supports_o_direct', lambda d: True)
    jobs = (('qd1', 'randread'), ('qd4', 'randread'), ('w', 'randwrite'), ('qd16', 'read'))
    runs = [{'options': {'path': str(tmp_path), 'name': n, 'rw': rw, 'size': '1M', 'guards': QUIET_GUARDS,
                         'run_id': 'r1', 'run_key': n}} for n, rw in jobs]
    with patch_module_args({'batch': {'runs': runs}}):
        with pytest.raises(SystemExit):
            fio.main()
    result = json.loads(capsys.readouterr().out)
    assert not any(r.get('failed') for r in result['runs']), result
    assert seen == [('qd1', False), ('qd4', True), ('w', False), ('qd16', True)]
    assert laid == ['qd1', 'w']
    layouts = [r['bench_result']['params'].get('layout') for r in result['runs']]
    assert layouts == [None, 'reused', None, 'reused']
    assert os.listdir(tmp_path) == []   # the held file's directory is gone with the batch


def test_a_stop_file_stops_the_running_tool_and_the_rest_of_the_batch(tmp_path, capsys, monkeypatch):
    """The controller went away (the run path touched <spool>.stop): the tool of the run is stopped,
    the rest of the batch does not run, and nothing is left."""
    import threading
    spool = tmp_path / 'spool.jsonl'
    stop = str(spool) + '.stop'
    module = _Module(30)
    module.deadline, module.stop_file = None, stop
    timer = threading.Timer(0.5, lambda: open(stop, 'w').close())
    timer.start()
    try:
        with pytest.raises(SystemExit):
            with benchrun.BenchRun(module, 'sleep') as br:
                br.workdir_in(str(tmp_path))
                br.run(['sleep', '30.456'])
    finally:
        timer.cancel()
    assert module.failed['msg'].endswith('stopped: the controller that ran the batch went away'), module.failed
    out = subprocess.run(['ps', '-eo', 'args'], capture_output=True, text=True, check=True).stdout
    assert 'sleep 30.456' not in out.splitlines()
    assert sorted(os.listdir(tmp_path)) == ['spool.jsonl.stop']
    # a batch that finds the stop file runs nothing more
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', lambda self, args, **kw: (0, VERSION, ''))
    with patch_module_args({'batch': {'runs': [_run(tmp_path, 'a'), _run(tmp_path, 'b')], 'spool': str(spool)}}):
        with pytest.raises(SystemExit):
            dd.main()
    result = json.loads(capsys.readouterr().out)
    assert [r['msg'] for r in result['runs']] == ['not run: the controller that ran the batch went away'] * 2
    assert [json.loads(line).get('pid') for line in spool.read_text().splitlines()] == [os.getpid()]
    assert sorted(os.listdir(tmp_path)) == ['spool.jsonl', 'spool.jsonl.stop']


def test_sigterm_between_runs_ends_the_batch_cleanly(tmp_path, capsys, monkeypatch):
    """The controller stops the batch's process with SIGTERM: between runs the batch ends with what it
    has, its cleanups done (a run in progress is stopped by BenchRun's own handler)."""
    import signal as sig
    calls = []

    def fake_run(self, argv, cwd=None, data=None):
        calls.append(argv)
        if len(calls) == 1:
            os.kill(os.getpid(), sig.SIGTERM)    # arrives while the run is in progress
        return CommandResult(argv, 0, '', WRITE, 0.5)

    monkeypatch.setattr(benchrun.BenchRun, 'run', fake_run)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', lambda self, args, **kw: (0, VERSION, ''))
    before = sig.getsignal(sig.SIGTERM)
    with patch_module_args({'batch': {'runs': [_run(tmp_path, 'a'), _run(tmp_path, 'b')]}}):
        with pytest.raises(SystemExit):
            dd.main()
    result = json.loads(capsys.readouterr().out)
    assert result['runs'][0]['failed'] and 'interrupted by signal 15' in result['runs'][0]['msg'], result
    assert sig.getsignal(sig.SIGTERM) == before and not os.listdir(tmp_path)
