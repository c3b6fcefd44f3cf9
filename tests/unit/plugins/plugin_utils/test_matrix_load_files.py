# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A matrix's dbench `loadfile` is checked on the controller when the controller has the file
(the dbench unit's check_params, the module's own check module_utils/tools/dbench.loadfile_problem),
before any host is touched: the problem names the field, the file and the line."""

import pytest

from ansible_collections.benchlab.bench.plugins.plugin_utils.benchmarks import dbench as dbench_unit
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import MatrixError, expand_plan

# load-file lines that reach outside the work directory (issue 27 finding: Deltree/Unlink/WriteX with ..)
HOSTILE_LOAD_LINES = [
    'Deltree "\\..\\..\\dir" NT_STATUS_OK',
    'Unlink "\\..\\..\\file" 0x10 NT_STATUS_OK',
    'NTCreateX "\\..\\..\\file" 0x1 0x2 16385 NT_STATUS_OK',
    'Rename "\\clients\\a" "\\clients\\..\\..\\b" NT_STATUS_OK',
]


def matrix(loadfile, in_cell=False):
    bench = {'name': 'b', 'tool': 'dbench', 'params': {'clients': [1], 'time': 2}}
    cell = {'name': 'c', 'host': 'localhost', 'path': '/var/tmp'}
    if in_cell:
        cell['params'] = {'dbench': {'loadfile': loadfile}}
    else:
        bench['params']['loadfile'] = loadfile
    return {'name': 'm', 'cells': [cell], 'benchmarks': [bench]}


@pytest.mark.parametrize('line', HOSTILE_LOAD_LINES)
def test_a_load_file_that_leaves_the_work_directory_stops_the_plan(line, tmp_path):
    load = tmp_path / 'load.txt'
    load.write_text('Mkdir "\\clients" NT_STATUS_OK\n%s\n' % line)
    with pytest.raises(MatrixError) as e:
        expand_plan(matrix(str(load)), inventory_hosts=['localhost'])
    (problem,) = e.value.problems
    assert problem.startswith('bench_matrix.benchmarks[0].params.loadfile: %s line 2: ' % load), problem
    assert 'leads out of the work directory' in problem
    with pytest.raises(MatrixError) as e:
        expand_plan(matrix(str(load), in_cell=True), inventory_hosts=['localhost'])
    assert e.value.problems[0].startswith('bench_matrix.cells[0].params.dbench.loadfile: %s line 2' % load)


def test_a_clean_load_file_and_one_only_the_target_has_pass(tmp_path):
    load = tmp_path / 'load.txt'
    load.write_text('Deltree "\\clients\\client1" NT_STATUS_OK\nMkdir "\\clients" NT_STATUS_OK\n')
    assert expand_plan(matrix(str(load)), inventory_hosts=['localhost'])['runs']
    # not on the controller: the dbench module checks it on the target
    assert expand_plan(matrix(str(tmp_path / 'only-on-the-target.txt')), inventory_hosts=['localhost'])['runs']


def test_a_load_file_above_the_cap_stops_the_plan_naming_the_field(tmp_path, monkeypatch):
    monkeypatch.setattr(dbench_unit, 'MAX_LOADFILE_BYTES', 16)
    load = tmp_path / 'load.txt'
    load.write_text('Mkdir "\\clients" NT_STATUS_OK\n')
    with pytest.raises(MatrixError) as e:
        expand_plan(matrix(str(load)), inventory_hosts=['localhost'])
    assert e.value.problems == ['bench_matrix.benchmarks[0].params.loadfile: %s is larger than 16 bytes: '
                                'not a dbench load file?' % load]
