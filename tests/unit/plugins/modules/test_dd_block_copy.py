# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/modules/dd.py test copy with input: a block device copied onto another (dd if=/dev/vda
of=/dev/vdb), through main() with the helper.py harness (dd's rc and real captured output mocked at
the process boundary).

Mocked, and why: a unit test has no block devices to write. The two devices are plain files in
tmp named vda/vdb whose "block device" answers (is_block_device, their size, major:minor for the
overlap check) come from a table, and the device guard (devguard.check_device_writable, called by
BenchRun.device) is replaced by a recorder that answers as the real guard does for an unused
device, or refuses with the real guard's wording. The same copy on real loop devices, with the real
guard's refusals, is tests/integration/test_dd_block_copy_live.py.
"""

import os

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run import benchrun, devguard
from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import DeviceGuardError
from ansible_collections.benchlab.bench.plugins.modules import dd
from ansible_collections.benchlab.bench.tests.unit.plugins.modules.helper import run_case

MiB = 1024 * 1024
VERSION = {'argv': ['dd', '--version'], 'out_fixture': 'dd/coreutils-9.1-version.txt'}


@pytest.fixture
def devices(tmp_path, monkeypatch):
    """vda (64 MiB), vdb (64 MiB), small (16 MiB) and vdb-alias (the same device as vdb) in tmp."""
    table = {'vda': ('254:0', 64 * MiB), 'vdb': ('254:16', 64 * MiB), 'small': ('254:32', 16 * MiB),
             'vdb-alias': ('254:16', 64 * MiB)}
    for name in table:
        (tmp_path / name).write_bytes(b'')

    def known(p):
        return table.get(os.path.basename(str(p)))
    monkeypatch.setattr(dd, 'is_block_device', lambda p: known(p) is not None)
    monkeypatch.setattr(dd, 'block_device_size', lambda p: known(p)[1])
    monkeypatch.setattr(dd, 'overlap', lambda a, b: devguard.overlap(
        a, b, sysfs=str(tmp_path / 'no-sysfs'), resolve=lambda p: (known(p) or (None,))[0]))
    calls = []
    refusal = {}

    def guard(path, destructive, force=False):
        calls.append({'path': path, 'destructive': destructive, 'force': force})
        if refusal.get('msg'):
            raise DeviceGuardError(refusal['msg'])
        if not destructive:  # the real guard's wording (devguard.check_device_writable)
            raise DeviceGuardError('refusing to write %s: it is a block device and writing it destroys its data; '
                                   'set destructive: true to allow it' % path)
        return {'path': path, 'size_bytes': known(path)[1], 'signature': None}

    monkeypatch.setattr(benchrun, 'check_device_writable', guard)
    return calls, refusal


def case(args, **kw):
    base = {'path': '{tmp}/vdb', 'input': '{tmp}/vda', 'test': 'copy', 'size': '64M', 'bs': '16M',
            'drop_caches': False}
    base.update(args)
    return dict(kw, args=base)


def test_copy_vda_onto_vdb_argv_and_record(devices, tmp_path, capsys, monkeypatch):
    calls = devices[0]
    result = run_case('dd', case({'destructive': True}, run=[
        VERSION,
        {'argv': ['dd', 'if={tmp}/vda', 'of={tmp}/vdb', 'bs=16777216', 'count=4', 'conv=fdatasync'],
         'err_fixture': 'dd/coreutils-9.1-write-fdatasync.txt'}]), tmp_path, capsys, monkeypatch)
    assert calls == [{'path': str(tmp_path / 'vdb'), 'destructive': True, 'force': False}]
    rec = result['bench_result']
    assert rec['test'] == 'copy' and rec['params']['input'] == str(tmp_path / 'vda')
    assert rec['metrics']['throughput']['unit'] == 'MB/s'
    assert not [n for n in os.listdir(tmp_path) if n.startswith('benchlab-')]  # no work directory made
    # the copied head (input's partition table / superblock) is zeroed again, after the timing
    assert result['cleared_bytes'] == MiB and (tmp_path / 'vdb').read_bytes() == b'\0' * MiB


def test_copy_without_destructive_is_refused_by_the_guard_and_nothing_runs(devices, tmp_path, capsys, monkeypatch):
    calls = devices[0]
    run_case('dd', case({}, run=[], failed=True, msg=['refusing to write', 'vdb', 'destructive: true']),
             tmp_path, capsys, monkeypatch)
    assert calls and calls[0]['destructive'] is False


def test_copy_onto_a_device_in_use_is_refused_even_destructive(devices, tmp_path, capsys, monkeypatch):
    calls, refusal = devices
    refusal['msg'] = 'refusing to write /dev/vdb: it is in use ... - mounted on /srv/vdb'
    run_case('dd', case({'destructive': True, 'force': True}, run=[], failed=True, msg=['in use', 'mounted on /srv/vdb']),
             tmp_path, capsys, monkeypatch)
    assert calls[0]['force'] is True


@pytest.mark.parametrize('args, words', [
    ({'path': '{tmp}/vdb-alias', 'input': '{tmp}/vdb'}, ['share blocks', 'same device (254:16)']),
    ({'input': '{tmp}/small'}, ['larger than the input device', 'small']),
    ({'input': None}, ['input:', 'needs input']),
    ({'test': 'read'}, ['input:', 'only test copy']),
])
def test_copy_refusals_before_the_guard(devices, tmp_path, capsys, monkeypatch, args, words):
    calls = devices[0]
    c = case(dict(args, destructive=True), run=[], failed=True, msg=words)
    if c['args'].get('input') is None:
        del c['args']['input']
    run_case('dd', c, tmp_path, capsys, monkeypatch)
    assert calls == []  # refused before the device guard: nothing was opened for writing


def test_copy_input_that_is_a_file_is_refused(devices, tmp_path, capsys, monkeypatch):
    (tmp_path / 'image.raw').write_bytes(b'x')
    run_case('dd', case({'input': '{tmp}/image.raw', 'destructive': True}, run=[], failed=True,
                        msg=['input:', 'image.raw is not a block device']), tmp_path, capsys, monkeypatch)


def test_copy_check_mode_names_the_argv_and_the_device_written(devices, tmp_path, capsys, monkeypatch):
    result = run_case('dd', case({'destructive': True}, check_mode=True, run=[],
                                 dry_run_argv=['dd', 'if={tmp}/vda', 'of={tmp}/vdb', 'bs=16777216', 'count=4',
                                               'conv=fdatasync']), tmp_path, capsys, monkeypatch)
    assert result['bench_dry_run']['writes'] == [str(tmp_path / 'vdb')]
    assert result['bench_dry_run']['creates'] == [] and result['bench_dry_run']['refused'] is None
