# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No function in plugins/ is longer than 60 lines (issue 15: a function a person can hold in
their head). The allow-list names the long functions other engineers own while they shorten them;
it only shrinks: an entry whose function is short again, or gone, fails too."""

import ast
from pathlib import Path

PLUGINS = Path(__file__).resolve().parents[3] / 'plugins'
MAX_LINES = 60

# (path under plugins/, function name): who shortens it. Empty it, never add to it.
ALLOWED = {}


def long_functions():
    found = {}
    for path in sorted(PLUGINS.rglob('*.py')):
        tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_LINES:
                    found[(path.relative_to(PLUGINS).as_posix(), node.name)] = length
    return found


def test_no_function_longer_than_60_lines():
    too_long = dict((k, v) for k, v in long_functions().items() if k not in ALLOWED)
    assert not too_long, 'functions longer than %d lines (split them): %s' % (
        MAX_LINES, ', '.join('%s:%s (%d)' % (p, n, length) for (p, n), length in sorted(too_long.items())))


def test_allow_list_only_shrinks():
    stale = sorted(set(ALLOWED) - set(long_functions()))
    assert not stale, 'short now (or gone): remove from ALLOWED in %s: %s' % (Path(__file__).name, stale)
