# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The waiter that follows a batch running in the background (plugins/action/run_benchmark.py) carries
the run's mark (guards.OWNER_ENV): the batch's quiet verdict then counts it, and the Ansible
processes above it, as the run's own harness (guards.harness_processes), not as other load. Seen in
CI: a 0.08 s dd run flagged not_quiet by 'python[77] 0.0s', the waiter started during it. The command
the plugin builds is run here for real."""

import json
import shlex
import subprocess
import sys

from ansible_collections.benchlab.bench.plugins.action.run_benchmark import ActionModule
from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import OWNER_ENV


def _action(mark):
    action = object.__new__(ActionModule)   # only what _wait uses: the interpreter, the mark, the command
    action._used_interpreter = sys.executable   # pylint: disable=protected-access
    action._mark = mark                          # pylint: disable=protected-access
    ran = []

    def execute(cmd, sudoable=False):
        ran.append(cmd)
        proc = subprocess.run(['sh', '-c', cmd], capture_output=True, text=True, check=False, timeout=30)
        return {'rc': proc.returncode, 'stdout': proc.stdout, 'stderr': proc.stderr}
    action._low_level_execute_command = execute  # pylint: disable=protected-access
    return action, ran


def test_the_waiter_carries_the_runs_mark_and_still_returns_the_result(tmp_path):
    status = tmp_path / 'job'
    status.write_text(json.dumps({'started': 1, 'finished': 1, 'rc': 0}))
    spool = tmp_path / 'spool.jsonl'
    spool.write_text('{"run": 0}\n')
    action, ran = _action('20261206T050000Z-ab12')
    out = action._wait(str(status), str(spool), 0, 1.0)   # pylint: disable=protected-access
    assert out['done'] == {'started': 1, 'finished': 1, 'rc': 0} and out['spool'] == '{"run": 0}\n'
    assert shlex.split(ran[0])[:2] == ['env', '%s=20261206T050000Z-ab12' % OWNER_ENV]


def test_the_environment_of_the_waiter_holds_the_mark(tmp_path):
    # the waiter's own environment, as guards.process_mark reads it from /proc/<pid>/environ
    status = tmp_path / 'job'
    status.write_text('{}')
    action, ran = _action('run-A')
    action._wait(str(status), '', 0, 0.1)   # pylint: disable=protected-access
    argv = shlex.split(ran[0])
    probe = argv[:argv.index('-c') + 1] + ['import os, sys; sys.stdout.write(os.environ.get(%r, "none"))' % OWNER_ENV]
    assert subprocess.run(probe, capture_output=True, text=True, check=True).stdout == 'run-A'


def test_a_run_without_an_id_starts_a_plain_waiter(tmp_path):
    status = tmp_path / 'job'
    status.write_text('{}')
    action, ran = _action(None)
    action._wait(str(status), '', 0, 0.1)   # pylint: disable=protected-access
    assert shlex.split(ran[0])[0] == sys.executable
