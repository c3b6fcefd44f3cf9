# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/modules/fio.py through its main(): the cases of fio.yaml (argv expected, the tool's rc and
real captured output mocked at the process boundary; see helper.py)."""

import os

import pytest

from ansible_collections.benchlab.bench.tests.unit.plugins.modules.helper import load_cases, run_case


@pytest.mark.parametrize('case', load_cases('fio'))
def test_fio(case, tmp_path, capsys, monkeypatch):
    run_case('fio', case, tmp_path, capsys, monkeypatch)


def test_a_block_device_as_path_says_how_fio_runs_on_a_device(tmp_path, capsys, monkeypatch):
    """Before: 'path /dev/... does not exist or is not a directory', although a device is a valid fio
    target (as options.filename). A real block device node (mknod, major 7: loop; never opened)."""
    import stat
    node = tmp_path / 'blk'
    os.mknod(str(node), stat.S_IFBLK | 0o600, os.makedev(7, 250))
    case = {'id': 'block-device-path', 'args': {'path': '{tmp}/blk', 'rw': 'write'}, 'failed': True,
            'msg': ['path %s is a block device' % node, 'give a directory as path and the device as options.filename']}
    run_case('fio', case, tmp_path, capsys, monkeypatch)
