# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/modules/ioping.py through its main(): the cases of ioping.yaml (argv expected, the tool's rc and
real captured output mocked at the process boundary; see helper.py)."""

import pytest

from ansible_collections.benchlab.bench.tests.unit.plugins.modules.helper import load_cases, run_case


@pytest.mark.parametrize('case', load_cases('ioping'))
def test_ioping(case, tmp_path, capsys, monkeypatch):
    run_case('ioping', case, tmp_path, capsys, monkeypatch)
