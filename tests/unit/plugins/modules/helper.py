# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A YAML-driven harness for the benchmark modules, in the style of community.general's run_command
tests (tests/unit/plugins/modules/helper.py there): each ``<module>.yaml`` beside the test lists
cases of module arguments, the processes the module is expected to start (argv), what each of
them returns (rc, stdout, stderr: real captured output from tests/unit/fixtures), and the expected
result or failure.

The mock sits at the process boundary only: ``BenchRun.run`` (module_utils/run/benchrun.py, the
skeleton's subprocess call) and ``AnsibleModule.run_command`` (module_utils/run/runner.py's ``run``,
used for version probes and by iperf). Everything else is real: argument parsing, validation,
argv building, parsing of the mocked output, the record. The tools never run.

A case::

    - id: write-fdatasync              # the test id
      args: {path: '{tmp}', size: 8M}  # module args; '{tmp}' is a fresh directory
      check_mode: false
      run:                             # every process, in order; argv items are fnmatch patterns,
        - argv: [dd, 'if=/dev/zero', 'of={tmp}/benchlab-dd-*/testfile', ...]   # argv[0] by basename
          rc: 0
          out_fixture: dd/...txt       # or out: '...'; err / err_fixture the same
      dry_run_argv: [...]              # check mode: the argv the dry run names (patterns as above)
      failed: false                    # default false
      msg: [part, ...]                 # parts the failure message must contain
      result:                          # dotted keys -> expected values
        bench_result.metrics.throughput.unit: MB/s
      warnings_contain: [part, ...]    # parts that some warning of bench_result must contain
"""

import fnmatch
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

from ansible.module_utils import basic
from ansible_collections.benchlab.bench.plugins.module_utils.run import benchrun
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import CommandResult
from ansible_collections.benchlab.bench.tests.unit.helpers import fixture_text

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core < 2.19
    import contextlib

    @contextlib.contextmanager
    def patch_module_args(args):
        saved = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = json.dumps({'ANSIBLE_MODULE_ARGS': args}).encode()
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved

HERE = Path(__file__).resolve().parent
QUIET_GUARDS = {'quiesce': False}


def load_cases(module):
    """The cases of <module>.yaml, as pytest params with their ids."""
    cases = yaml.safe_load((HERE / ('%s.yaml' % module)).read_text())
    return [pytest.param(c, id=c['id']) for c in cases]


def _subst(value, tmp):
    if isinstance(value, str):
        return value.replace('{tmp}', tmp)
    if isinstance(value, list):
        return [_subst(v, tmp) for v in value]
    if isinstance(value, dict):
        return dict((k, _subst(v, tmp)) for k, v in value.items())
    return value


def _text(call, key):
    if call.get(key + '_fixture'):
        return fixture_text(call[key + '_fixture'])
    return call.get(key, '')


def argv_matches(expected, actual):
    """Same length; argv[0] compared by basename when the expectation has no '/'; fnmatch patterns."""
    if len(expected) != len(actual):
        return False
    first = actual[0] if '/' in expected[0] else os.path.basename(actual[0])
    return all(fnmatch.fnmatchcase(str(a), str(e)) for e, a in zip(expected, [first] + list(actual[1:])))


class Processes(object):
    """The expected processes, handed out in order; records what the module really asked for."""

    def __init__(self, calls, tmp):
        self.calls = list(_subst(calls or [], tmp))
        self.seen = []

    def next(self, argv):
        argv = [str(a) for a in argv]
        self.seen.append(argv)
        assert self.calls, 'unexpected process %r (no more were expected)' % (argv,)
        call = self.calls.pop(0)
        assert argv_matches(call['argv'], argv), 'argv %r does not match the expected %r' % (argv, call['argv'])
        return call.get('rc', 0), _text(call, 'out'), _text(call, 'err')


def dotted(doc, key):
    for part in key.split('.'):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def run_case(module_name, case, tmp_path, capsys, monkeypatch):
    """Run the module's main() on the case's arguments with the processes mocked; check the outcome.
    ``enterable_tmp: true``: '{tmp}' is a directory every user may enter (pytest's is not: bonnie++
    runs as an unprivileged user), made under /var/tmp and removed afterwards."""
    if case.get('enterable_tmp'):
        tmp = tempfile.mkdtemp(prefix='unit-%s-' % module_name, dir='/var/tmp')
        os.chmod(tmp, 0o755)
        try:
            return _run(module_name, case, tmp, capsys, monkeypatch)
        finally:
            shutil.rmtree(tmp)
    return _run(module_name, case, str(tmp_path), capsys, monkeypatch)


def _run(module_name, case, tmp, capsys, monkeypatch):
    procs = Processes(case.get('run'), tmp)
    case = _subst(case, tmp)

    def fake_benchrun(self, argv, cwd=None, data=None, verdict=True):
        rc, out, err = procs.next(argv)
        return CommandResult([str(a) for a in argv], rc, out, err, 0.5)

    def fake_run_command(self, args, **kwargs):
        return procs.next(args)

    monkeypatch.setattr(benchrun.BenchRun, 'run', fake_benchrun)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', fake_run_command)
    args = dict(_subst(case.get('args', {}), tmp))
    args.setdefault('guards', QUIET_GUARDS)
    # the observation samples this machine's /proc (BenchRun.run is mocked here: nothing to observe);
    # iperf would ask tc for the route's shaping rate, a process the cases do not list
    args.setdefault('observe_interval_s', 0)
    if case.get('check_mode'):
        args['_ansible_check_mode'] = True
    mod = __import__('ansible_collections.benchlab.bench.plugins.modules.%s' % module_name, fromlist=['main'])
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            mod.main()
    result = json.loads(capsys.readouterr().out)
    check_outcome(case, result, procs)
    return result


def check_outcome(case, result, procs):
    assert bool(result.get('failed')) == bool(case.get('failed', False)), result
    assert not procs.calls, 'expected processes that never started: %r (started: %r)' % (procs.calls, procs.seen)
    for part in case.get('msg', []):
        assert part in result.get('msg', ''), (part, result.get('msg'))
    if 'dry_run_argv' in case:
        argv = result['bench_dry_run']['argv']
        assert argv_matches(case['dry_run_argv'], argv), 'dry-run argv %r does not match %r' % (argv, case['dry_run_argv'])
    for key, value in (case.get('result') or {}).items():
        assert dotted(result, key) == value, (key, dotted(result, key), value)
    warnings = result.get('bench_result', {}).get('warnings', [])
    for part in case.get('warnings_contain', []):
        assert any(part in w for w in warnings), (part, warnings)
