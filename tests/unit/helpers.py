# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Paths and fixture reading shared by the unit tests, wherever a test file sits under tests/unit.

Import it as ``from ansible_collections.benchlab.bench.tests.unit.helpers import ...``: that path
works under pytest (conftest.py makes the checkout importable) and under ``ansible-test units``.
"""

import gzip
from pathlib import Path

UNIT = Path(__file__).resolve().parent
REPO_ROOT = UNIT.parents[1]
FIXTURES = UNIT / 'fixtures'


def fixture_text(name):
    """A fixture's text. Output with carriage returns (dd status=progress) is stored gzipped, byte
    for byte as the tool printed it, because ansible-test's line-endings check refuses bare CRs."""
    path = FIXTURES / name
    if not path.exists() and path.with_name(path.name + '.gz').exists():
        with gzip.open(str(path) + '.gz', 'rt', encoding='utf-8', newline='') as f:
            return f.read()
    return path.read_text(encoding='utf-8')


def collections_root():
    """The directory holding ``ansible_collections`` this run imports the collection from (for
    subprocesses that must import it too)."""
    from ansible_collections.benchlab import bench  # pylint: disable=import-outside-toplevel
    return Path(list(bench.__path__)[0]).parents[2]


# -- a task result as Ansible hands it to a callback (the report callback's unit tests) --------

class CallbackHost(object):
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


class CallbackTask(object):
    def __init__(self, name, action, ignore_errors=False):
        self.name, self.action, self.resolved_action, self.ignore_errors = name, action, action, ignore_errors

    def get_name(self):
        return self.name


class CallbackResult(object):
    def __init__(self, host, task, result):
        self._host, self._task, self._result = CallbackHost(host), task, result
