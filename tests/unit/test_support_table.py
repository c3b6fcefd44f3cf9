# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/support.md says what is verified and by which test: every row that claims a check (really
run, unit tests, argv or check-mode tests, a test driver, a make target) names the test file(s)
backing it as `tests/.../test_*.py`, optionally `::function` (or `::Class::method`), and each named
file and function exists. A row that names no test says in words that it is untested, and claims
nothing else. Every `tests/...` path a row mentions exists; a row naming a test under tests/vm says
`make test-vm` (that suite is not part of `make test`). Rows stay readable (a length cap)."""

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUPPORT = REPO / 'docs' / 'support.md'

# A row longer than this is a report, not a table row: put the detail in the test's docstring.
MAX_ROW_CHARS = 1400

TEST_REF = re.compile(r'(?<![\w/.-])(tests/[\w./-]+?\.py)(?:::([\w:]+))?(?![\w/.-])')
ANY_REF = re.compile(r'(?<![\w/.-])(tests/[\w./-]*[\w-])(?:::[\w:]+)?')
CLAIM = re.compile(r'really run|unit[- ]test|\btested\b|\bchecked\b|check mode|check-mode|\bargv\b|validated|'
                   r'verified|test driver|make (?:test|compat|test-vm|target-py36|fuzz)\b', re.I)


def table_rows(text):
    """(line number, header cells, row cells) of every body row of every table in text."""
    lines = text.splitlines()
    header = None
    for number, line in enumerate(lines, 1):
        if not line.startswith('|'):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip('|').split(' | ')]
        if header is None:
            header = cells
        elif not set(line.replace('|', '').strip()) <= set('-: '):
            yield number, header, cells


def defined_names(path):
    """Top-level functions and classes of a Python file, and Class::method for their methods."""
    names = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names.update('%s::%s' % (node.name, n.name) for n in node.body
                         if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return names


def row_problems(header, cells, repo):
    """What is wrong with one row, as sentences (empty when the row holds)."""
    if len(cells) != len(header):
        return ['has %d cells, the table has %d columns' % (len(cells), len(header))]
    column = next((i for i, h in enumerate(header) if 'verified' in h.lower()), len(header) - 1)
    verification = cells[column]
    row = ' | '.join(cells)
    problems = []
    if len(row) > MAX_ROW_CHARS:
        problems.append('is %d characters long (at most %d): say it shorter and leave the detail to the test'
                        % (len(row), MAX_ROW_CHARS))
    for ref in sorted(set(m.group(1) for m in ANY_REF.finditer(row))):
        if not (repo / ref).exists():
            problems.append('names %s, which does not exist' % ref)
    tests = []
    for path, name in TEST_REF.findall(verification):
        file = repo / path
        if not Path(path).name.startswith('test_') or not file.is_file():
            continue
        if name and name not in defined_names(file):
            problems.append('names %s::%s, but %s defines no %s' % (path, name, path, name))
            continue
        tests.append(path)
    if tests:
        if any(p.startswith('tests/vm/') for p in tests) and 'make test-vm' not in row:
            problems.append('names a test under tests/vm/ but does not say `make test-vm` (not part of `make test`)')
    elif not verification.lower().startswith('untested'):
        problems.append('names no test (tests/.../test_*.py[::name]) in its "%s" cell; if nothing backs it, '
                        'say "untested" first' % header[column])
    elif CLAIM.search(verification):
        problems.append('says it is untested but claims a check (%r) without naming the test'
                        % CLAIM.search(verification).group(0))
    return problems


def table_problems(text, repo):
    found = []
    for number, header, cells in table_rows(text):
        found.extend('docs/support.md line %d (%s): %s' % (number, cells[0][:80], p)
                     for p in row_problems(header, cells, repo))
    return found


def test_every_row_names_the_tests_that_back_it():
    problems = table_problems(SUPPORT.read_text(), REPO)
    assert not problems, '\n'.join(problems)


def test_the_table_is_read_whole():
    rows = list(table_rows(SUPPORT.read_text()))
    assert len(rows) > 80, len(rows)
    assert all(header[-1] == 'how it is verified' for _n, header, _cells in rows)
    # most rows name more than one test: the checker sees them all
    assert sum(len(TEST_REF.findall(cells[-1])) for _n, _h, cells in rows) > 2 * len(rows)


SAMPLE = '''# t

| feature | status | how it is verified |
|---|---|---|
| good | supported | really run (`tests/unit/test_support_table.py::test_every_row_names_the_tests_that_back_it`) |
| untested one | written | untested (no such host) |
| bare claim | supported | really run in tests |
| missing file | supported | unit tests (`tests/unit/test_nowhere.py`) |
| missing function | supported | unit tests (`tests/unit/test_support_table.py::test_nothing_like_this`) |
| untested but claims | written | untested here; argv checked |
| vm without target | supported | really run (`tests/vm/test_kvm_multi.py`) |
| missing fixture | supported | unit tests (`tests/unit/test_support_table.py`, `tests/unit/fixtures/nothing/README.md`) |
| helper only | supported | really run through `tests/integration/iothrottle.py` |
| long | supported | really run (`tests/unit/test_support_table.py`) %s |
| two | cells |
'''


def test_the_checker_names_each_kind_of_bad_row():
    problems = table_problems(SAMPLE % ('x' * MAX_ROW_CHARS), REPO)
    by_row = {}
    for p in problems:
        row = re.match(r'docs/support.md line \d+ \(([^)]*)\)', p).group(1)
        by_row.setdefault(row, []).append(p)
    assert set(by_row) == {'bare claim', 'missing file', 'missing function', 'untested but claims',
                           'vm without target', 'missing fixture', 'helper only', 'long', 'two'}, problems
    assert 'names no test' in by_row['bare claim'][0]
    assert 'names tests/unit/test_nowhere.py, which does not exist' in by_row['missing file'][0]
    assert 'defines no test_nothing_like_this' in by_row['missing function'][0]
    assert "claims a check ('argv')" in by_row['untested but claims'][0]
    assert 'make test-vm' in by_row['vm without target'][0]
    assert 'tests/unit/fixtures/nothing/README.md, which does not exist' in by_row['missing fixture'][0]
    assert 'names no test' in by_row['helper only'][0]
    assert 'characters long' in by_row['long'][0]
    assert 'has 2 cells' in by_row['two'][0]
