# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Schema validation on the controller: load a schema of the collection once (with the schemas it
refers to by $id), keep its validator, and report problems one way (module_utils/record.py's
``json_path``: ``root.key[0].key``, the innermost cause of a failed if/then or oneOf).

Private to benchlab.bench (no API promise). Used by plugin_utils/matrix.py (bench_matrix) and
plugin_utils/reports.py (results.json); records are validated by module_utils/record.py the same way.
"""

from __future__ import annotations

import json
import os

from ansible_collections.benchlab.bench.plugins.module_utils.record import SCHEMA_FILE as RECORD_SCHEMA_FILE
from ansible_collections.benchlab.bench.plugins.module_utils.record import load_schema as load_record_schema
from ansible_collections.benchlab.bench.plugins.module_utils.record import schema_problems, schema_validator

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'schemas')
MATRIX_SCHEMA_FILE = os.path.join(SCHEMAS, 'matrix-v1.json')
RESULTS_SCHEMA_FILE = os.path.join(SCHEMAS, 'results-v1.json')

_schemas = {}
_validators = {}


def load_schema(path):
    """The parsed schema file (read once)."""
    if path not in _schemas and path == RECORD_SCHEMA_FILE:
        _schemas[path] = load_record_schema()     # its tool names: the tool table (toolinfo.py)
    elif path not in _schemas:
        with open(path, encoding='utf-8') as f:
            _schemas[path] = json.load(f)
    return _schemas[path]


def validator(path, refs=()):
    """The (cached) validator of the schema in `path`; `refs`: schema files it refers to by $id."""
    key = (path, tuple(refs))
    if key not in _validators:
        kwargs = {}
        if refs:
            from referencing import Registry, Resource
            registry = Registry()
            for ref in refs:
                doc = load_schema(ref)
                registry = registry.with_resource(doc['$id'], Resource.from_contents(doc))
            kwargs['registry'] = registry
        _validators[key] = schema_validator(load_schema(path), **kwargs)
    return _validators[key]


def problems(path, instance, root='', whole='(document)', refs=()):
    """'<where>: <message>' for everything in `instance` the schema in `path` refuses, in path order."""
    return schema_problems(validator(path, refs), instance, root=root, whole=whole)


def matrix_problems(matrix):
    """Problems of a bench_matrix against schemas/matrix-v1.json, named from ``bench_matrix``."""
    return problems(MATRIX_SCHEMA_FILE, matrix, root='bench_matrix')


def results_problems(doc):
    """Problems of a results.json document against schemas/results-v1.json (with the record schema)."""
    return problems(RESULTS_SCHEMA_FILE, doc, refs=(RECORD_SCHEMA_FILE,))
