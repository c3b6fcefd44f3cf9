# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A skip is not a pass (tests/utils/skip_policy.py, tests/skips-allowed.yml).

The failing direction is shown on the real Makefile: a temporary copy of it, of the plugin and of the
allow-list gets a throwaway test that skips, and `make units` there (this venv, never reinstalled)
must fail naming the test, its reason and the allow-list; a reason on the list passes and is listed
with what the machine lacks. The other direction: without pyenv (PATH without it) the target-Python
checks end as allowed skips naming what is missing and how to get it. And the list itself: every
entry names a docs/support.md row that says the check is not run there.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
UTILS = REPO / 'tests' / 'utils'
ALLOW = REPO / 'tests' / 'skips-allowed.yml'
VENV = Path(sys.executable).parent.parent
# what a plain Debian machine has on its PATH: no pyenv, no shims
PLAIN_PATH = '%s:/usr/sbin:/usr/bin:/sbin:/bin' % Path(sys.executable).parent

sys.path.insert(0, str(UTILS))
import skip_policy  # noqa: E402  pylint: disable=wrong-import-position


def copy_repo(tmp_path, tests, allow=None):
    """The Makefile, the plugin, the allow-list (or `allow`) and `tests` {path under tests/unit: text}."""
    root = tmp_path / 'repo'
    for rel in ('Makefile', 'requirements.txt', 'tests/requirements.txt', 'tests/utils/skip_policy.py',
                'tests/skips-allowed.yml'):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(str(REPO / rel), str(root / rel))  # mtimes kept: make never sees the venv as stale
    if allow is not None:
        (root / 'tests/skips-allowed.yml').write_text(yaml.safe_dump(allow))
    for rel, text in tests.items():
        (root / 'tests/unit' / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / 'tests/unit' / rel).write_text(text)
    return root


def make_units(root):
    """`make units` in the copy with this venv (-o: never reinstalled)."""
    dropped = ('BENCHLAB_SKIPS_ALLOWED', 'PYTEST_ADDOPTS', 'PYTHONPATH', 'MAKEFLAGS', 'MFLAGS')
    env = dict((k, v) for k, v in os.environ.items() if k not in dropped)
    return subprocess.run(['make', '--no-print-directory', '-C', str(root), '-o', '%s/.installed' % VENV,
                           'VENV=%s' % VENV, 'units'], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)


THROWAWAY = '''import pytest


def test_runs():
    assert True


def test_throwaway_skip():
    pytest.skip(%r)
'''


def test_make_units_fails_on_a_skip_whose_reason_is_not_on_the_list(tmp_path):
    reason = 'the frobnicator is not installed'
    root = copy_repo(tmp_path, {'test_throwaway.py': THROWAWAY % reason})
    proc = make_units(root)
    assert proc.returncode != 0, proc.stdout
    assert 'SKIPPED, NOT ALLOWED: tests/unit/test_throwaway.py::test_throwaway_skip: %s' % reason in proc.stdout
    assert '%s/tests/skips-allowed.yml' % root in proc.stdout
    assert '1 passed, 1 skipped' in proc.stdout  # the test itself did pass: only the policy failed the run
    # -rs: pytest's own summary line names the reason too
    assert re.search(r'SKIPPED \[1\] tests/unit/test_throwaway\.py:\d+: %s' % reason, proc.stdout), proc.stdout


def test_a_module_level_skip_fails_too_and_an_allowed_reason_passes(tmp_path):
    allowed = 'no Python 3.6 for the target (pyenv prefix 3.6: not installed): pyenv install 3.6.15'
    root = copy_repo(tmp_path, {
        'test_allowed.py': THROWAWAY % allowed,
        'test_module.py': 'import pytest\npytest.skip("no frobnicator", allow_module_level=True)\n'})
    proc = make_units(root)
    assert proc.returncode != 0, proc.stdout
    assert 'SKIPPED, NOT ALLOWED: tests/unit/test_module.py: no frobnicator' in proc.stdout, proc.stdout
    assert 'allowed skip: tests/unit/test_allowed.py::test_throwaway_skip: %s (lacks: ' % allowed in proc.stdout
    (root / 'tests/unit/test_module.py').unlink()
    proc = make_units(root)
    assert proc.returncode == 0, proc.stdout
    assert 'NOT ALLOWED' not in proc.stdout and 'skip policy: 1 allowed skip(s)' in proc.stdout


def test_a_broken_allow_list_fails_the_run_naming_the_entry(tmp_path):
    root = copy_repo(tmp_path, {'test_ok.py': 'def test_ok():\n    pass\n'},
                     allow={'allowed': [{'reason': 'x', 'lacks': 'y'}]})
    proc = make_units(root)
    assert proc.returncode != 0, proc.stdout
    assert 'allowed[0].support: missing or empty' in proc.stdout, proc.stdout


def test_the_command_for_steps_that_are_no_pytest_run(tmp_path, capsys):
    assert skip_policy.main(['--skip', 'no Python 3.12 for ansible-core 2.20 (the venv .venv-core220): '
                                       'pyenv install 3.12']) == 0
    assert 'allowed skip: no Python 3.12' in capsys.readouterr().out
    assert skip_policy.main(['--skip', 'no frobnicator']) == 1
    assert 'SKIPPED, NOT ALLOWED: no frobnicator' in capsys.readouterr().out
    assert skip_policy.main(['--check']) == 0
    bad = tmp_path / 'bad.yml'
    bad.write_text(yaml.safe_dump({'allowed': [{'reason': '(', 'lacks': 'a', 'support': 'b'}]}))
    assert skip_policy.main(['--check', '--allow-list', str(bad)]) == 1
    assert 'allowed[0].reason' in capsys.readouterr().out


def test_without_pyenv_target_py36_is_an_allowed_skip_naming_how_to_get_python36(tmp_path):
    env = dict(os.environ, PATH=PLAIN_PATH)
    for var in ('TARGET_PY36', 'BENCHLAB_SKIPS_ALLOWED', 'PYENV_VERSION'):
        env.pop(var, None)
    if subprocess.run(['sh', '-c', 'command -v pyenv'], env=env, check=False).returncode == 0:
        pytest.fail('pyenv is on %s' % PLAIN_PATH)
    script = [sys.executable, str(UTILS / 'target_py36.py')]
    proc = subprocess.run(script, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout
    assert "allowed skip: no Python 3.6 for the target code's compile check (vermin ran): pyenv install 3.6.15" \
        in proc.stdout, proc.stdout
    assert 'run on Python 3.6+ (vermin --target=3.6- only)' in proc.stdout
    # the same machine with an allow-list that does not allow it: the step fails, saying why
    empty = tmp_path / 'empty.yml'
    empty.write_text('allowed: []\n')
    proc = subprocess.run(script, env=dict(env, BENCHLAB_SKIPS_ALLOWED=str(empty)), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert proc.returncode == 1 and 'SKIPPED, NOT ALLOWED: no Python 3.6' in proc.stdout, proc.stdout


@pytest.mark.parametrize('version,env_name,how', [('3.6', 'TARGET_PY36', 'pyenv install 3.6.15'),
                                                  ('3.13', 'TARGET_PY313', 'pyenv install 3.13.0'),
                                                  ('2.7', 'TARGET_PY27', 'pyenv install 2.7.18')])
def test_without_pyenv_the_target_python_runs_are_allowed_skips(monkeypatch, version, env_name, how):
    spec = importlib.util.spec_from_file_location('benchlab_compat_conftest', str(REPO / 'tests/compat/conftest.py'))
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)
    monkeypatch.setenv('PATH', PLAIN_PATH)
    monkeypatch.delenv(env_name, raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        compat.pyenv_python(version, env_name)
    reason = str(skipped.value)
    assert reason.startswith('no Python %s for the target' % version) and how in reason and env_name in reason
    assert skip_policy.allowed(reason, skip_policy.load(str(ALLOW))) is not None, reason


def test_the_makefile_sends_every_pytest_run_of_make_test_through_the_policy():
    text = (REPO / 'Makefile').read_text()
    # a recipe runs pytest itself or through $(INTEGRATION_PYTEST), whose definition is checked like a recipe line
    pytest_var = re.search(r'^INTEGRATION_PYTEST := (.*)$', text, re.M).group(1)
    text = text.replace('$(INTEGRATION_PYTEST)', pytest_var)
    recipes = [(name, body) for name, body in re.findall(r'^([a-z0-9-]+):.*\n((?:\t.*\n)+)', text, re.M)
               if '-m pytest' in body]
    names = sorted(name for name, _body in recipes)
    assert {'units', 'integration-lab', 'integration-wiring', 'integration-rest', 'compat-units-core216',
            'compat-core220-units', 'compat-play', 'compat-core220'} <= set(names), names
    for name, body in recipes:
        for line in body.splitlines():
            if '-m pytest' in line:
                assert '$(SKIP_POLICY)' in line and '$(PYTEST_ARGS)' in line, (name, line)
    assert re.search(r'^PYTEST_ARGS := -rs -p skip_policy$', text, re.M)
    # the reason make compat gives without a Python 3.12 is on the list
    reason = re.search(r'^NO_PYTHON312 := (.*)$', text, re.M).group(1).replace('$(CORE220)', '.venv-core220')
    assert skip_policy.allowed(reason, skip_policy.load(str(ALLOW))) is not None, reason


def support_rows():
    rows = {}
    for line in (REPO / 'docs/support.md').read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split(' | ')]
        if line.startswith('| ') and len(cells) >= 3:
            rows[cells[0]] = line
    return rows


def test_every_allowed_skip_names_a_support_row_that_says_it_is_not_run_there():
    entries = skip_policy.load(str(ALLOW))
    assert 0 < len(entries) <= 8, 'keep the allow-list short'
    rows = support_rows()
    for entry in entries:
        assert entry['support'] in rows, 'tests/skips-allowed.yml: %r is no row of docs/support.md' % entry['support']
        assert 'not run' in rows[entry['support']], (
            'docs/support.md row %r must say where the check is not run (tests/skips-allowed.yml allows its skip)'
            % entry['support'])
