# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The compatibility runs (`make compat`): this suite runs under each controller venv
(.venv-core216, .venv-core220, ...) against this checkout; `ansible-*` are the venv's own."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FILES = Path(__file__).resolve().parent / 'files'
sys.path.insert(0, str(REPO / '.collections'))

from ansible.release import __version__ as CORE_VERSION  # noqa: E402  pylint: disable=wrong-import-position

CORE = tuple(int(x) for x in CORE_VERSION.split('.')[:2])
# the pyenv versions the compat runs were made with (`pyenv install <version>`)
PYENV_VERSIONS = {'3.6': '3.6.15', '3.13': '3.13.0', '2.7': '2.7.18'}


def pyenv_python(version, env_name):
    """The interpreter of a pyenv version ('3.6' -> .../versions/3.6.15/bin/python3.6), or the path
    in the environment variable `env_name` (which must then be an executable Python). Without either
    (a plain Debian machine has no pyenv) the test is skipped, naming what is missing and how to get
    it: an allowed skip (tests/skips-allowed.yml), so `make test` still passes there."""
    exe = os.environ.get(env_name)
    if not exe:
        try:
            prefix = subprocess.run(['pyenv', 'prefix', version], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    universal_newlines=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError) as e:
            pytest.skip('no Python %s for the target (pyenv prefix %s: %s): pyenv install %s, or set %s'
                        % (version, version, getattr(e, 'stderr', None) or e, PYENV_VERSIONS[version], env_name))
        exe = os.path.join(prefix, 'bin', 'python' + version)
    if not os.access(exe, os.X_OK):
        pytest.fail('%s is not an executable Python %s (set %s)' % (exe, version, env_name))
    return exe


@pytest.fixture
def env(tmp_path):
    env = dict(os.environ)
    env.update(ANSIBLE_CONFIG=str(REPO / 'ansible.cfg'), ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1',
               BENCHLAB_REPORT_DIR=str(tmp_path / 'runs'), BENCHLAB_HISTORY_DB=str(tmp_path / 'history.sqlite'),
               PATH='%s:%s' % (BIN, env.get('PATH', '')))
    return env


def run(argv, env, timeout=900):
    return subprocess.run([str(a) for a in argv], cwd=str(REPO), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=False, timeout=timeout)
