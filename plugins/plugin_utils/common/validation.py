# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Schema validation on the controller: load a schema of the collection once (with the schemas it
refers to by $id), keep its validator, and report problems one way (module_utils/run/record.py's
``json_path``: ``root.key[0].key``, the innermost cause of a failed if/then or oneOf).

Private to benchlab.bench (no API promise). Used by plugin_utils/plan/matrix.py (bench_matrix) and
plugin_utils/report/reports.py (results.json); records are validated by module_utils/run/record.py the same way,
and record_problems() adds what a schema cannot say (finite numbers, each within its unit's physical
range, label names) for every record
the report callback keeps: new ones as they arrive and resumed ones read back from results.jsonl.
"""

from __future__ import annotations

import json
import math
import os
import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import SCHEMA_FILE as RECORD_SCHEMA_FILE
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import load_schema as load_record_schema
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import json_path, schema_problems, schema_validator
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import plausibility_problems, validate_record

SCHEMAS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'schemas')
MATRIX_SCHEMA_FILE = os.path.join(SCHEMAS, 'matrix-v1.json')
RESULTS_SCHEMA_FILE = os.path.join(SCHEMAS, 'results-v1.json')

# What the report callback adds to a record when it keeps it (results.jsonl): the host it ran on and
# the plan's key of its cell. Everything else is the record schema's.
STORED_KEYS = ('host', 'cell_key')
# A label name is a name (the matrix's and the import manifest's rule): never text a spreadsheet,
# a terminal or Markdown would read as something else.
LABEL_NAME_RE = re.compile(r'\A[A-Za-z_][A-Za-z0-9_]*\Z')

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
    """Problems of a results.json document against schemas/results-v1.json (with the record schema),
    and every record's number outside its physical range (record.plausibility_problems)."""
    found = problems(RESULTS_SCHEMA_FILE, doc, refs=(RECORD_SCHEMA_FILE,))
    records = doc.get('records') if isinstance(doc, dict) else None
    for i, rec in enumerate(records if isinstance(records, list) else []):
        found.extend('records[%d].%s' % (i, p) for p in plausibility_problems(rec))
    return found


def nonfinite_paths(obj, path=()):
    """The paths (lists of keys and indexes) of every NaN or infinite number in `obj`."""
    if isinstance(obj, float):
        return [] if math.isfinite(obj) else [list(path)]
    found = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            found.extend(nonfinite_paths(value, path + (key,)))
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            found.extend(nonfinite_paths(value, path + (i,)))
    return found


def record_problems(rec, stored=False):
    """'<field>: <message>' for everything wrong with a result record: the record schema (tool, test,
    metric names and units as names, types), every number finite (a NaN or Infinity, which JSON
    cannot hold and the statistics refuse, names its field), label names as names. With `stored`,
    the record as results.jsonl holds it: the callback's own keys (host, cell_key) must be non-empty
    strings and are not part of the record schema. Empty when the record may be kept."""
    if not isinstance(rec, dict):
        return ['(record): not an object (%s)' % type(rec).__name__]
    problems = []
    core = rec
    if stored:
        core = dict((k, v) for k, v in rec.items() if k not in STORED_KEYS)
        for key in STORED_KEYS:
            if key in rec and not (isinstance(rec[key], str) and rec[key]):
                problems.append('%s: %r is not a non-empty string' % (key, rec[key]))
    problems.extend(validate_record(core))
    problems.extend(plausibility_problems(core))
    for path in nonfinite_paths(rec):
        problems.append('%s: not a finite number (NaN and infinities are refused)' % json_path(path))
    labels = rec.get('labels')
    if isinstance(labels, dict):
        for name in sorted((k for k in labels if not (isinstance(k, str) and LABEL_NAME_RE.match(k))), key=repr):
            problems.append('labels: %r is not a label name (letters, digits and _, not starting with a digit)'
                            % (name,))
    return problems


def checked_records(numbered, where):
    """Split records read back (resumed) into the ones that pass record_problems(stored=True) and the
    ones set aside. `numbered`: [(line number, record)]; `where`: the file, for the messages.
    Returns (records, set_aside [{line, errors, record}], problems [one message per set-aside line])."""
    records, set_aside, problems = [], [], []
    for line, rec in numbered:
        errors = record_problems(rec, stored=True)
        if errors:
            set_aside.append(dict(line=line, errors=errors, record=rec))
            problems.append('%s line %d: not a valid record, set aside (never rendered): %s' % (
                where, line, '; '.join(errors)))
        else:
            records.append(rec)
    return records, set_aside, problems
