# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/tools/dd.copy_input_problem: which test/input/path combinations a block-device to
block-device copy accepts (pure; the module test is tests/unit/plugins/modules/test_dd_block_copy.py)."""

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import copy_input_problem


@pytest.mark.parametrize('test, inp, inp_dev, path_dev, words', [
    ('copy', '/dev/vda', True, True, None),
    ('copy', None, False, False, None),            # a file copy in a directory: no input
    ('write', None, False, True, None),
    ('read', None, False, True, None),
    ('copy', None, False, True, ['input:', 'needs input', '/dev/vdb']),
    ('read', '/dev/vda', True, True, ['input:', 'only test copy', 'test is read']),
    ('write', '/dev/vda', True, True, ['input:', 'test is write']),
    ('copy', '/srv/file', False, True, ['input:', '/srv/file is not a block device']),
    ('copy', '/dev/vda', True, False, ['input:', '/dev/vdb is not one']),
])
def test_copy_input_problem(test, inp, inp_dev, path_dev, words):
    problem = copy_input_problem(test, inp, inp_dev, path_dev, '/dev/vdb')
    if words is None:
        assert problem is None
    else:
        for w in words:
            assert w in problem, problem
