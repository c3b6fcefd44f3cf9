# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hostile corpus has at least 80 cases (issue 14 section 9).

A case is
- an entry with an `id` in a fixture file under tests/unit/fixtures/hostile/ (YAML or JSON, any
  layout: every mapping with an `id` inside a list counts), or
- a value of a `pytest.mark.parametrize` list written in a hostile test module: tests/unit or
  tests/integration `test_hostile*.py`, or any test module whose parametrize list is a module-level
  name containing HOSTILE. Lists built from the fixture files are not counted twice (only literal
  lists, or names bound to literal lists, count), or
- a test function of a tests/integration `test_hostile*.py` module that is not parametrized (one
  playbook case each).

Run it as a script to print the count per file: `python tests/unit/test_hostile_corpus_size.py`.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import yaml

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / 'unit' / 'fixtures' / 'hostile'
MINIMUM = 80


def _ids_in(node, found):
    """Every `id` of a mapping that sits in a list, anywhere in a loaded document."""
    if isinstance(node, list):
        for item in node:
            if isinstance(item, dict) and isinstance(item.get('id'), (str, int)):
                found.append(str(item['id']))
            _ids_in(item, found)
    elif isinstance(node, dict):
        for value in node.values():
            _ids_in(value, found)
    return found


def fixture_cases():
    """{relative path: [case ids]} of the fixture files."""
    out = {}
    for path in sorted(FIXTURES.rglob('*')):
        if path.suffix in ('.yml', '.yaml'):
            doc = yaml.safe_load(path.read_text())
        elif path.suffix == '.json':
            doc = json.loads(path.read_text())
        else:
            continue
        out[str(path.relative_to(TESTS))] = _ids_in(doc, [])
    return out


def _literal_lists(tree):
    """{name: length} of module-level names bound to a list or tuple literal."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = len(node.value.elts)
    return names


def _is_parametrize(dec):
    return (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == 'parametrize')


def module_cases(path):
    """[case ids] of the literal parametrize lists of a test module (hostile ones only unless the
    module is named test_hostile*)."""
    tree = ast.parse(path.read_text())
    names = _literal_lists(tree)
    hostile_module = path.name.startswith('test_hostile')
    ids = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if (hostile_module and path.parent.name == 'integration' and node.name.startswith('test_')
                and not any(_is_parametrize(d) for d in node.decorator_list)):
            ids.append(node.name)  # one playbook case
        for dec in node.decorator_list:
            if not _is_parametrize(dec) or len(dec.args) < 2:
                continue
            values = dec.args[1]
            if isinstance(values, (ast.List, ast.Tuple)) and hostile_module:
                n = len(values.elts)
            elif isinstance(values, ast.Name) and values.id in names and (hostile_module or 'HOSTILE' in values.id.upper()):
                n = names[values.id]
            else:
                continue
            ids.extend('%s[%d]' % (node.name, i) for i in range(n))
    return ids


def hostile_module_cases():
    out = {}
    for sub in ('unit', 'integration'):
        for path in sorted((TESTS / sub).rglob('test_*.py')):
            if path.name == Path(__file__).name:
                continue
            ids = module_cases(path)
            if ids:
                out[str(path.relative_to(TESTS))] = ids
    return out


def corpus():
    out = fixture_cases()
    out.update(hostile_module_cases())
    return out


def table(cases):
    lines = ['%5d  %s' % (len(ids), name) for name, ids in sorted(cases.items())]
    lines.append('%5d  hostile corpus cases in all (at least %d)' % (sum(len(i) for i in cases.values()), MINIMUM))
    return '\n'.join(lines)


def test_the_hostile_corpus_has_at_least_80_cases():
    cases = corpus()
    print('\n' + table(cases))
    total = sum(len(ids) for ids in cases.values())
    assert total >= MINIMUM, table(cases)
    # the fixture files this helper knows of are all there and counted
    for name in ('matrices.yml', 'results_jsonl.yml', 'run_ids.yml'):
        assert len(cases['unit/fixtures/hostile/' + name]) >= 15, table(cases)


def test_case_ids_are_unique_within_each_fixture_file():
    for name, ids in fixture_cases().items():
        duplicates = sorted(set(i for i in ids if ids.count(i) > 1))
        assert not duplicates, '%s: duplicate case ids %s' % (name, duplicates)


def test_the_counter_counts_what_it_should(tmp_path):
    """The counter itself: literal lists and names bound to them count, lists built from files do not."""
    module = tmp_path / 'test_hostile_example.py'
    module.write_text('import pytest\nCASES = load()\nLIT = [1, 2, 3]\n'
                      '@pytest.mark.parametrize("x", [1, 2])\ndef test_a(x): pass\n'
                      '@pytest.mark.parametrize("x", LIT)\ndef test_b(x): pass\n'
                      '@pytest.mark.parametrize("x", CASES)\ndef test_c(x): pass\n')
    assert module_cases(module) == ['test_a[0]', 'test_a[1]', 'test_b[0]', 'test_b[1]', 'test_b[2]']
    assert _ids_in({'cases': [{'id': 'a'}, {'id': 'b', 'sub': [{'id': 'c'}]}], 'x': [1, 2]}, []) == ['a', 'b', 'c']


if __name__ == '__main__':
    print(table(corpus()))
