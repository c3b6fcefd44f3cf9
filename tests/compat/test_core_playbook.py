# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The quick local matrix (inventories/local), one repetition, through playbooks/bench.yml under the
ansible-core of the venv this runs from (`make compat`: 2.16 on Python 3.11, 2.20 on Python 3.12):
the report is written and results.json is valid against its schema."""

import json
import os

import yaml

from conftest import BIN, CORE, REPO, run

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_problems


def test_core_is_the_one_asked_for(env):
    """`make compat` says which core each venv must be (BENCHLAB_EXPECT_CORE): the run below proves that one."""
    expected = os.environ.get('BENCHLAB_EXPECT_CORE')
    proc = run([BIN / 'ansible-playbook', '--version'], env)
    assert proc.returncode == 0
    assert 'core %d.%d.' % CORE in proc.stdout.splitlines()[0]
    if expected:
        assert '%d.%d' % CORE == expected, proc.stdout


def test_quick_matrix_one_repetition(env, tmp_path):
    matrix = yaml.safe_load((REPO / 'inventories/local/group_vars/all/matrix.yml').read_text())
    matrix['bench_matrix']['repetitions'] = 1
    (tmp_path / 'matrix.yml').write_text(yaml.safe_dump(matrix))
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % (tmp_path / 'matrix.yml'), '-e', 'bench_install_tools=false'], env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert 'does not support Ansible version' not in out  # meta/runtime.yml admits this core
    assert 'Traceback' not in out
    runs = [p for p in (tmp_path / 'runs').iterdir() if p.is_dir() and not p.is_symlink()]
    assert len(runs) == 1
    doc = json.loads((runs[0] / 'results.json').read_text())
    assert results_problems(doc) == []
    bench = matrix['bench_matrix']
    assert len(doc['records']) == len(bench['cells']) * len(bench['benchmarks'])
    for rec in doc['records']:
        assert validate_record({k: v for k, v in rec.items() if k not in ('host', 'cell_key')}) == []
    report = (runs[0] / 'report.md').read_text()
    for b in bench['benchmarks']:
        assert '## %s' % b['name'] in report
    assert 'benchlab report: %s' % (runs[0] / 'report.md') in proc.stdout
    assert 'benchlab summary' in proc.stdout
