# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark matrix (controller side): validation against schemas/matrix-v1.json and the
checks a schema cannot express, then expansion into the plan of runs (DESIGN.md section 4)."""

from __future__ import annotations

import json
import os

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'schemas', 'matrix-v1.json')
DEFAULT_REPETITIONS = 3


class MatrixError(ValueError):
    """An invalid matrix; the message names every offending field."""

    def __init__(self, problems):
        self.problems = list(problems)
        super(MatrixError, self).__init__('invalid bench_matrix:\n' + '\n'.join('- ' + p for p in self.problems))


def _where(path):
    out = 'bench_matrix'
    for part in path:
        out += '[%d]' % part if isinstance(part, int) else '.%s' % part
    return out


def schema_problems(matrix):
    import jsonschema
    with open(SCHEMA_FILE) as f:
        schema = json.load(f)
    validator = jsonschema.validators.validator_for(schema)(schema)
    problems = []
    for err in sorted(validator.iter_errors(matrix), key=lambda e: list(e.absolute_path)):
        # For if/then failures report the innermost cause, which names the actual field.
        leaf = err
        while leaf.context:
            leaf = sorted(leaf.context, key=lambda e: -len(e.absolute_path))[0]
        problems.append('%s: %s' % (_where(leaf.absolute_path), leaf.message))
    return problems


def semantic_problems(matrix, inventory_hosts=None):
    problems = []
    cells = matrix.get('cells', [])
    names = [c.get('name') for c in cells]
    for i, name in enumerate(names):
        if name in names[:i]:
            problems.append('bench_matrix.cells[%d].name: duplicate cell name %r' % (i, name))
    bnames = [b.get('name') for b in matrix.get('benchmarks', [])]
    for i, name in enumerate(bnames):
        if name in bnames[:i]:
            problems.append('bench_matrix.benchmarks[%d].name: duplicate benchmark name %r' % (i, name))
    if 'baseline' in matrix and matrix['baseline'] not in names:
        problems.append('bench_matrix.baseline: %r is not one of the cells (%s)' % (matrix['baseline'], ', '.join(map(str, names))))
    for i, b in enumerate(matrix.get('benchmarks', [])):
        for j, c in enumerate(b.get('cells') or []):
            if c not in names:
                problems.append('bench_matrix.benchmarks[%d].cells[%d]: %r is not one of the cells' % (i, j, c))
    if inventory_hosts is not None:
        for i, c in enumerate(cells):
            if c.get('host') not in inventory_hosts:
                problems.append('bench_matrix.cells[%d].host: %r is not in the inventory' % (i, c.get('host')))
    return problems


def validate_matrix(matrix, inventory_hosts=None):
    """Raise MatrixError listing every problem; return the matrix otherwise."""
    if not isinstance(matrix, dict):
        raise MatrixError(['bench_matrix: must be a mapping, got %s' % type(matrix).__name__])
    problems = schema_problems(matrix)
    if not problems:
        problems = semantic_problems(matrix, inventory_hosts)
    if problems:
        raise MatrixError(problems)
    return matrix


def expand_plan(matrix, inventory_hosts=None):
    """Validate, then expand the matrix into the plan: cells, hosts and the ordered runs.

    Repetitions are interleaved (repetition 1 of every benchmark in every cell, then repetition 2,
    ...) so a slow drift of the machine spreads over all cells instead of biasing one.
    """
    validate_matrix(matrix, inventory_hosts)
    reps = int(matrix.get('repetitions', DEFAULT_REPETITIONS))  # JSON Schema counts 3.0 as an integer
    cells = [dict(c, labels=dict(c.get('labels') or {})) for c in matrix['cells']]
    by_name = dict((c['name'], c) for c in cells)
    runs = []
    for rep in range(1, reps + 1):
        for b in matrix['benchmarks']:
            for cname in b.get('cells') or [c['name'] for c in cells]:
                c = by_name[cname]
                labels = dict(c['labels'], cell=c['name'], benchmark=b['name'])
                runs.append(dict(host=c['host'], cell=c['name'], path=c['path'], tool=b['tool'],
                                 benchmark=b['name'], params=dict(b.get('params') or {}),
                                 repetition=rep, labels=labels))
    hosts = []
    for c in cells:
        if c['host'] not in hosts:
            hosts.append(c['host'])
    return dict(name=matrix['name'], baseline=matrix.get('baseline', cells[0]['name']), repetitions=reps,
                cells=cells, benchmarks=[dict(b) for b in matrix['benchmarks']], hosts=hosts, runs=runs)
