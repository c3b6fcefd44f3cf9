# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/utils/target_py36.py: --fix removes the future import, the check refuses 3.7+ constructs."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip('vermin', reason='vermin is in tests/requirements.txt (the default venv)')

SCRIPT = Path(__file__).resolve().parents[1] / 'utils' / 'target_py36.py'


def check(*args):
    return subprocess.run([sys.executable, str(SCRIPT)] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)


def test_fix_removes_the_future_import_and_the_blank_line(tmp_path):
    src = tmp_path / 'mod.py'
    src.write_text('# header\n\nfrom __future__ import annotations\n\nimport os\n\n\ndef f(x):\n    return os.sep\n')
    proc = check('--fix', tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert src.read_text() == '# header\n\nimport os\n\n\ndef f(x):\n    return os.sep\n'
    assert 'removed `from __future__ import annotations` from 1 file(s)' in proc.stdout


@pytest.mark.parametrize('code,needs', [
    ('from __future__ import annotations\n', 'annotations'),
    ('import subprocess\nsubprocess.run(["true"], capture_output=True)\n', 'capture_output'),
    ('import subprocess\nsubprocess.run(["true"], text=True)\n', 'subprocess.run(text)'),
    ('def f(a):\n    if (n := a):\n        return n\n', 'named expressions'),
    ('def f(a: list[str]):\n    return a\n', 'list[..]'),
    ('import dataclasses\n', 'dataclasses'),
    ('def f(a, /):\n    return a\n', 'positional-only'),
])
def test_check_refuses_what_36_cannot_run(tmp_path, code, needs):
    (tmp_path / 'bad.py').write_text(code)
    proc = check(tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert needs in proc.stdout and 'needs more than Python 3.6' in proc.stdout


def test_check_passes_36_code(tmp_path):
    (tmp_path / 'ok.py').write_text('import subprocess\n\n\ndef f(x):\n    return "%s" % f"{x}"\n\n\n'
                                    'subprocess.run(["true"], stdout=subprocess.PIPE, universal_newlines=True)\n')
    proc = check(tmp_path)
    assert proc.returncode == 0, proc.stdout
