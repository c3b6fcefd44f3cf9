# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stop of a batch when the playbook is stopped (plugins/action/run_benchmark.py): the stopper
script the worker runs on the host signals the batch's module process only while it is the process
that started at the recorded time, and returns once that process has ended (its cleanup done), so
that a stopped ansible-playbook returns with nothing of its runs left. Real processes here."""

import subprocess
import sys
import time

import pytest

from ansible_collections.benchlab.bench.plugins.action.run_benchmark import STOPPER
from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import proc_start_time

# A module process whose cleanup takes a while after SIGTERM (a sync under way, its tool's grace
# period): it writes `done` only when its cleanup is finished, then ends.
SLOW_TO_END = r'''
import os, signal, sys, time
def stop(_s, _f):
    time.sleep(1.5)
    with open(sys.argv[1], 'w') as f:
        f.write('cleaned up')
    os._exit(0)
signal.signal(signal.SIGTERM, stop if sys.argv[3] == 'slow' else signal.SIG_IGN)
open(sys.argv[2], 'w').close()
time.sleep(120)
'''


@pytest.fixture
def module_process(tmp_path):
    procs = []

    def start(mode='slow'):
        done, ready = tmp_path / ('done-%d' % len(procs)), tmp_path / ('ready-%d' % len(procs))
        p = subprocess.Popen([sys.executable, '-c', SLOW_TO_END, str(done), str(ready), mode])
        procs.append(p)
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert time.monotonic() < deadline and p.poll() is None, 'the test process did not start'
            time.sleep(0.02)
        return p, done
    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def stopper(pid, start, wait_s):
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, '-c', STOPPER, str(pid), str(start), str(wait_s)], check=True,
                         stdout=subprocess.PIPE, universal_newlines=True, timeout=60).stdout
    return out, time.monotonic() - t0


def test_the_stopper_returns_once_the_module_process_has_ended_and_cleaned_up(module_process):
    proc, done = module_process()
    out, took = stopper(proc.pid, proc_start_time(proc.pid), 30)
    assert out == 'ended' and took >= 1.4
    assert done.read_text() == 'cleaned up'       # at the moment the stopper returned
    assert proc.wait(timeout=5) == 0


def test_a_process_that_started_at_another_time_is_left_alone(module_process):
    proc, done = module_process()
    out, _took = stopper(proc.pid, proc_start_time(proc.pid) - 1, 30)
    assert out == 'ended'                          # the recorded process is not running
    time.sleep(0.3)
    assert proc.poll() is None and not done.exists()


def test_a_module_that_does_not_end_in_time_is_reported_running(module_process):
    proc, _done = module_process(mode='ignore')
    out, took = stopper(proc.pid, proc_start_time(proc.pid), 0.5)
    assert out == 'running' and took < 20 and proc.poll() is None
