# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No import cycle among the collection's own files: every import of a benchlab.bench module in
plugins/ (at the top of a file or inside a function: a deferred import hides a cycle, it does not
remove it) is an edge, and the graph has no strongly connected component of more than one file."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PREFIX = 'ansible_collections.benchlab.bench.'


def module_name(path, base=REPO):
    return PREFIX + '.'.join(path.relative_to(base).with_suffix('').parts)


def edges(root=REPO / 'plugins'):
    """{module: {module it imports}} for every .py file under root (benchlab.bench's own modules only;
    root is the plugins/ directory of a checkout or of a copy of one)."""
    files = dict((module_name(p, root.parent), p) for p in root.rglob('*.py'))
    graph = {}
    for name, path in files.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
                for alias in node.names:   # `from package import module` names a module too
                    sub = '%s.%s' % (node.module, alias.name)
                    found.add(sub if sub in files else node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith(PREFIX))
        graph[name] = set(m for m in found if m in files and m != name)
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_collection_has_no_import_cycle():
    graph = edges()
    assert len(graph) > 100
    assert cycles(graph) == []


def test_the_walk_finds_a_cycle_made_of_a_deferred_import():
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}, 'e': set()}
    assert cycles(graph) == [['a', 'b', 'c']]
    assert cycles({'x': {'y'}, 'y': set()}) == []
