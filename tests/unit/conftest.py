# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the checkout importable as ``ansible_collections.benchlab.bench`` for the unit tests.

The checkout root IS the collection; ``make setup`` creates the symlink
``.collections/ansible_collections/benchlab/bench -> ../../..`` and this file puts ``.collections``
at the front of ``sys.path``. Without the symlink the tests stop with a message saying how to make it.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
COLLECTIONS = REPO_ROOT / '.collections'
COLLECTION_LINK = COLLECTIONS / 'ansible_collections' / 'benchlab' / 'bench'
FIXTURES = Path(__file__).resolve().parent / 'fixtures'


def fixture_text(name):
    """A fixture's text. Output with carriage returns (dd status=progress) is stored gzipped, byte
    for byte as the tool printed it, because ansible-test's line-endings check refuses bare CRs."""
    path = FIXTURES / name
    if not path.exists() and path.with_name(path.name + '.gz').exists():
        with gzip.open(str(path) + '.gz', 'rt', encoding='utf-8', newline='') as f:
            return f.read()
    return path.read_text(encoding='utf-8')


def _check_link():
    how = ('run `make setup` in %s (or: mkdir -p .collections/ansible_collections/benchlab && '
           'ln -sfn ../../.. .collections/ansible_collections/benchlab/bench)' % REPO_ROOT)
    if not COLLECTION_LINK.is_symlink() and not COLLECTION_LINK.exists():
        return 'the collection symlink %s is missing: %s' % (COLLECTION_LINK, how)
    if not (COLLECTION_LINK / 'galaxy.yml').is_file():
        return 'the collection symlink %s is broken (no galaxy.yml behind it): %s' % (COLLECTION_LINK, how)
    if COLLECTION_LINK.resolve() != REPO_ROOT:
        return ('the collection symlink %s points at %s, not at this checkout %s: %s'
                % (COLLECTION_LINK, COLLECTION_LINK.resolve(), REPO_ROOT, how))
    return None


_PROBLEM = _check_link()
if not _PROBLEM and str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))


def pytest_sessionstart():
    """Stop before collecting anything (and before import errors) when the symlink is not usable."""
    if _PROBLEM:
        pytest.exit('benchlab.bench unit tests: ' + _PROBLEM, returncode=4)


@pytest.fixture
def read_fixture():
    """read_fixture('dd/coreutils-9.1-write-fdatasync.txt') -> the fixture's text."""
    def _read(name):
        return fixture_text(name)
    return _read
