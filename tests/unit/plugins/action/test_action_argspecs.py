# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One argument spec per action: an action plugin (plugins/action/<name>.py) validates its task's
arguments with the spec it holds, and plugins/modules/<name>.py is its documentation only (no
argument spec of its own to drift). Every option the action takes is documented there with the
same type, elements, default, choices and required (no_log is the action's: test_no_log_contract.py reads it there), and the documentation names no option the
action does not take."""

import ast
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[4]
ACTIONS = sorted(p.stem for p in (REPO / 'plugins' / 'action').glob('*.py') if not p.stem.startswith('_'))
KEYS = ('type', 'elements', 'default', 'choices', 'required')


def assigned(path, names):
    """The value of the first top-level assignment to one of `names` in a file, as a Python literal
    (dict(...) calls included), or None."""
    tree = ast.parse(path.read_text(encoding='utf-8'))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', None) in names:
            return literal(node.value)
    return None


def literal(node):
    if isinstance(node, ast.Call) and getattr(node.func, 'id', None) == 'dict' and not node.args:
        return dict((kw.arg, literal(kw.value)) for kw in node.keywords)
    return ast.literal_eval(node)


def calls_ansible_module(path):
    return any(isinstance(n, ast.Call) and getattr(n.func, 'id', None) == 'AnsibleModule'
               for n in ast.walk(ast.parse(path.read_text(encoding='utf-8'))))


def documented(name):
    return yaml.safe_load(assigned(REPO / 'plugins' / 'modules' / (name + '.py'), ('DOCUMENTATION',)))['options'] or {}


def spec_of(name):
    return assigned(REPO / 'plugins' / 'action' / (name + '.py'), ('ARGUMENT_SPEC', 'ARGSPEC'))


def drift(spec, options):
    """[what differs] between an action's argument spec and its module's documented options."""
    out = ['%s: taken but not documented' % k for k in sorted(set(spec) - set(options))]
    out += ['%s: documented but not taken' % k for k in sorted(set(options) - set(spec))]
    for key in sorted(set(spec) & set(options)):
        for field in KEYS:
            want, doc = spec[key].get(field), options[key].get(field)
            if field == 'required':
                want, doc = bool(want), bool(doc)
            if field == 'type':
                want, doc = want or 'str', doc or 'str'
            if want != doc:
                out.append('%s.%s: the action says %r, the documentation %r' % (key, field, want, doc))
    return out


@pytest.mark.parametrize('name', [a for a in ACTIONS if spec_of(a) is not None])
def test_the_action_s_spec_is_the_documented_one_and_the_module_holds_none(name):
    assert drift(spec_of(name), documented(name)) == []
    assert not calls_ansible_module(REPO / 'plugins' / 'modules' / (name + '.py')), (
        'plugins/modules/%s.py holds an argument spec of its own: the action validates its arguments' % name)


def test_the_check_names_what_drifted():
    spec = {'a': {'type': 'bool', 'default': False}, 'b': {'type': 'list', 'elements': 'dict'}, 'c': {}}
    options = {'a': {'type': 'bool', 'default': True}, 'b': {'type': 'list'}, 'd': {'type': 'str'}}
    assert drift(spec, options) == ['c: taken but not documented', 'd: documented but not taken',
                                    'a.default: the action says False, the documentation True',
                                    "b.elements: the action says 'dict', the documentation None"]
