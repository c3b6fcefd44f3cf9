# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/tools/dbench.loadfile_problem: a dbench load file read the way dbench 4.0 reads it (child.c,
util.c next_token), every path kept inside the work directory. The hostile corpus is
tests/unit/fixtures/hostile/dbench_loadfiles.yml; dbench's own client.txt (when installed) passes."""

import os
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dbench import TOO_LARGE, loadfile_problem, read_capped

HOSTILE = yaml.safe_load((Path(__file__).resolve().parents[2] / 'fixtures' / 'hostile' / 'dbench_loadfiles.yml')
                         .read_text())['cases']
WORKDIR = '/srv/bench/benchlab-dbench-abcdefgh'
CLIENT_TXT = '/usr/share/dbench/client.txt'


def data_of(case):
    text = case['text'].replace('{pad}', 'a' * case.get('pad', 0))
    return text.encode('latin-1' if case.get('latin1') else 'utf-8')


def test_the_corpus_is_unique_and_large_enough():
    ids = [c['id'] for c in HOSTILE]
    assert len(ids) >= 15 and len(set(ids)) == len(ids)


@pytest.mark.parametrize('case', HOSTILE, ids=[c['id'] for c in HOSTILE])
def test_hostile_load_file(case):
    problem = loadfile_problem(data_of(case), name='l.txt', workdir=WORKDIR)
    if case.get('ok'):
        assert problem is None
        return
    assert problem is not None
    for part in case['refused']:
        assert part in problem, problem


@pytest.mark.skipif(not os.path.isfile(CLIENT_TXT), reason='dbench is not installed')
def test_dbenchs_own_load_file_passes():
    with open(CLIENT_TXT, 'rb') as f:
        data = f.read()
    assert loadfile_problem(data, name=CLIENT_TXT, workdir=WORKDIR) is None
    # the same file with one hostile line in the middle is refused at that line
    lines = data.split(b'\n')
    lines.insert(1000, b'Deltree "\\clients\\..\\..\\..\\x" NT_STATUS_OK')
    problem = loadfile_problem(b'\n'.join(lines), name=CLIENT_TXT, workdir=WORKDIR)
    assert problem.startswith('%s line 1001: ' % CLIENT_TXT), problem


def test_the_work_directory_decides_too():
    assert 'contains "client1"' in loadfile_problem(b'', workdir='/srv/client1/benchlab-dbench-x')
    # a path dbench would cut at 1023 bytes (directory + path) is refused: the cut may point elsewhere
    deep = b'Mkdir "' + b'\\d' * 45 + b'" NT_STATUS_OK\n'
    assert loadfile_problem(deep, workdir='/' + 'w' * 960) is not None
    assert loadfile_problem(deep, workdir=WORKDIR) is None


def test_a_load_file_is_read_up_to_its_cap(tmp_path):
    """read_capped: the one read of a load file, by the module on the target and by the matrix's check
    on the controller."""
    load = tmp_path / 'load.txt'
    load.write_bytes(b'x' * 8)
    assert read_capped(str(load), cap=8) == b'x' * 8
    assert read_capped(str(load), cap=7) is None
    assert TOO_LARGE % 7 == 'is larger than 7 bytes: not a dbench load file?'
    with pytest.raises(OSError):
        read_capped(str(tmp_path / 'missing.txt'))
