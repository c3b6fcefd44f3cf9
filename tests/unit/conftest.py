# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the checkout importable as ``ansible_collections.benchlab.bench`` for the unit tests.

Two ways, tried in order:
- the checkout symlink ``.collections/ansible_collections/benchlab/bench -> ../../..`` that
  ``make setup`` creates (``make units``: plain pytest on the checkout);
- the normal path: the collection already sits at ``.../ansible_collections/benchlab/bench``
  (``ansible-test units``, an installed collection), whose ``ansible_collections`` parent goes on
  ``sys.path`` if it is not there yet.
Only when neither gives the collection do the tests stop, with a message saying how to make the link.
"""

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
COLLECTION_LINK = REPO_ROOT / '.collections' / 'ansible_collections' / 'benchlab' / 'bench'


def _link_problem():
    if not COLLECTION_LINK.is_symlink() and not COLLECTION_LINK.exists():
        return 'the collection symlink %s is missing' % COLLECTION_LINK
    if not (COLLECTION_LINK / 'galaxy.yml').is_file():
        return 'the collection symlink %s is broken (no galaxy.yml behind it)' % COLLECTION_LINK
    if COLLECTION_LINK.resolve() != REPO_ROOT:
        return 'the collection symlink %s points at %s, not at this checkout %s' % (
            COLLECTION_LINK, COLLECTION_LINK.resolve(), REPO_ROOT)
    return None


def _normal_path():
    """The directory above ``ansible_collections`` when the checkout sits at ansible_collections/benchlab/bench."""
    if len(REPO_ROOT.parts) > 3 and REPO_ROOT.parts[-3] == 'ansible_collections':
        return REPO_ROOT.parents[2]
    return None


def _setup_path():
    problem = _link_problem()
    if not problem:
        root = str(REPO_ROOT / '.collections')
    else:
        normal = _normal_path()
        if normal is None:
            how = ('run `make setup` in %s (or: mkdir -p .collections/ansible_collections/benchlab && '
                   'ln -sfn ../../.. .collections/ansible_collections/benchlab/bench)' % REPO_ROOT)
            return '%s and the checkout is not at ansible_collections/benchlab/bench: %s' % (problem, how)
        root = str(normal)
    if root not in sys.path:
        sys.path.insert(0, root)
    return None


_PROBLEM = _setup_path()

# Property tests draw the same inputs on every run (`make test`, CI, and the compat venvs: each
# decides the same way every time): Hypothesis derandomized, no example database. `make
# fuzz-explore` sets BENCHLAB_HYPOTHESIS=explore: new random inputs, many more of them, a database
# under build/ (its findings become regression inputs in tests/fuzz/regressions, see its README).
HYPOTHESIS_PROFILES = {
    'ci': dict(derandomize=True, database=None, max_examples=150),
    'explore': dict(derandomize=False, max_examples=5000, print_blob=True),
}
HYPOTHESIS_PROFILE = os.environ.get('BENCHLAB_HYPOTHESIS', 'ci')


def _hypothesis_profile():
    try:
        from hypothesis import settings  # pylint: disable=import-outside-toplevel
        from hypothesis.database import DirectoryBasedExampleDatabase  # pylint: disable=import-outside-toplevel
    except ImportError:   # the tests that need it say so themselves
        return
    if HYPOTHESIS_PROFILE not in HYPOTHESIS_PROFILES:
        raise ValueError('BENCHLAB_HYPOTHESIS=%s: one of %s' % (HYPOTHESIS_PROFILE, ', '.join(sorted(HYPOTHESIS_PROFILES))))
    for name, options in HYPOTHESIS_PROFILES.items():
        if name == 'explore':
            options = dict(options, database=DirectoryBasedExampleDatabase(str(REPO_ROOT / 'build' / 'hypothesis')))
        settings.register_profile(name, **options)
    settings.load_profile(HYPOTHESIS_PROFILE)


_hypothesis_profile()


def pytest_sessionstart():
    """Stop before collecting anything (and before import errors) when the collection is not importable."""
    if _PROBLEM:
        pytest.exit('benchlab.bench unit tests: ' + _PROBLEM, returncode=4)


@pytest.fixture
def read_fixture():
    """read_fixture('dd/coreutils-9.1-write-fdatasync.txt') -> the fixture's text."""
    from ansible_collections.benchlab.bench.tests.unit.helpers import fixture_text  # pylint: disable=import-outside-toplevel
    return fixture_text
