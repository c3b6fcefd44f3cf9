# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fio option table (plugins/module_utils/tools/fio_options.py) against the INSTALLED fio: every option,
alias, engine and engine option fio lists (fio --cmdhelp=all, --cmdhelp=<option>, --enghelp,
--enghelp=<engine>, --enghelp=<engine>,<option>) is classified, so a fio that knows a new option
fails here, and the job check refuses that option until it is classified. (A test of the table
against a program on this machine, made by tests/utils/fio_options.py: it sits in tests/unit itself.)"""

import shutil

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools import fio_options, fiojob
from ansible_collections.benchlab.bench.plugins.module_utils.tools.fiojob import FioJobError, check_fio_job, parse_job_file
from ansible_collections.benchlab.bench.tests.utils import fio_options as generator

needs_fio = pytest.mark.skipif(not shutil.which('fio'), reason='fio is not installed')
WORK = '/work/benchlab-fio-x'


@pytest.fixture(scope='module')
def installed():
    return generator.read_fio()


@needs_fio
def test_the_table_classifies_everything_the_installed_fio_knows(installed):
    table = generator.load_table()
    assert generator.problems(installed, table) == []
    # and it is the table the generator writes from this fio (names sorted, kinds kept)
    if installed['version'] == fio_options.FIO_VERSION:
        text = generator.TABLE.read_text()
        head = text[:text.index(generator.MARKER)]
        assert generator.render(installed, generator.merged(installed, table), head) == text
    assert len(installed['options']) > 200 and 'e4defrag' in installed['engines']
    assert installed['options']['fill_device'] == 'fill_fs'     # an alias is an option too
    assert installed['engines']['e4defrag'] == {'donorname': None, 'inplace': None}


@needs_fio
def test_a_fio_with_an_option_the_table_lacks_fails_the_check(installed):
    """What a newer fio looks like to the check: one more job option, one more engine, one more
    engine option, one more alias: each is named; the generator adds them unclassified."""
    newer = dict(installed, options=dict(installed['options'], evil_new_path=None, bs='blocksize2'),
                 engines=dict(installed['engines'], newengine={'socket_path': None},
                              libaio=dict(installed['engines']['libaio'], ring_file=None)))
    table = generator.load_table()
    assert generator.problems(newer, table) == [
        'alias blocksize2 (of bs) is not in ALIASES',
        'option evil_new_path is not classified',
        'option ring_file of engine libaio is not classified',
        'engine newengine is not classified',
        'option socket_path of engine newengine is not classified']
    merged = generator.merged(newer, table)
    assert merged['OPTIONS']['evil_new_path'] == generator.UNCLASSIFIED
    assert merged['ENGINE_OPTIONS']['libaio']['ring_file'] == generator.UNCLASSIFIED


def test_kinds_are_the_documented_ones():
    assert set(fio_options.OPTIONS.values()) <= set(fio_options.KINDS)
    for opts in fio_options.ENGINE_OPTIONS.values():
        assert set(opts.values()) <= set(fio_options.KINDS)
    assert set(fio_options.ENGINES.values()) <= set(fio_options.ENGINE_KINDS) | {'program'}
    for opts in fio_options.PROFILE_OPTIONS.values():
        assert set(opts.values()) == {'profile'}
    assert all(name in fio_options.OPTIONS for name in fio_options.ALIASES.values())
    # the engines allowed without allow_unsafe_options write only the job's own files
    allowed = sorted(e for e, k in fio_options.ENGINES.items() if k == 'files')
    assert {'psync', 'libaio', 'io_uring', 'sync', 'mmap', 'posixaio', 'null'} <= set(allowed)
    for engine in ('e4defrag', 'nbd', 'rbd', 'rados', 'gfapi', 'http', 'nfs', 'libiscsi', 'net', 'rdma', 'exec'):
        assert fio_options.ENGINES[engine] != 'files', engine


def test_an_unclassified_or_unknown_option_is_refused(monkeypatch):
    monkeypatch.setitem(fio_options.OPTIONS, 'brand_new', 'unclassified')
    with pytest.raises(FioJobError) as e:
        check_fio_job(parse_job_file('[j]\nbrand_new=/etc/x\n'), WORK, origin='n.fio')
    assert 'n.fio line 2 ([j]): brand_new=/etc/x is refused: benchlab has not classified' in str(e.value)
    with pytest.raises(FioJobError) as e:
        check_fio_job(parse_job_file('[j]\nnot_an_option=1\n'), WORK, origin='n.fio')
    assert 'n.fio line 2 ([j]): not_an_option is refused: fio-3.33 has no such option (for the engine psync)' in str(e.value)
    # allowed explicitly, it is let through and noted
    out = check_fio_job(parse_job_file('[j]\nnot_an_option=1\n'), WORK, allow_unsafe=True)
    assert out['unsafe'] == [('j', 'not_an_option', '1')]
    assert fiojob.canonical('fill_fs') == ('fill_device', 'fill')
