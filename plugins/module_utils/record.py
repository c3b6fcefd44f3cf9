# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The result record (DESIGN.md section 3): the one place that builds and validates it.

Modules build records on the target with `new_record`; the callback and tests validate them on
the controller with `validate_record` against `schemas/record-v1.json` (jsonschema is needed
there only, never on a target).
"""

import datetime
import json
import os

SCHEMA_VERSION = 1
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'schemas', 'record-v1.json')
RAW_TAIL_LINES = 15


def utc_now():
    """The current time as the record's ISO 8601 UTC string."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.strftime('%Y-%m-%dT%H:%M:%SZ')


def metric(value, unit, better='higher'):
    """One metric: {value, unit, better}; a value of None means "too fast to measure"."""
    m = {'value': None if value is None else float(value), 'unit': unit, 'better': better}
    if value is None:
        m['too_fast'] = True
    return m


def new_record(tool, test, metrics, tool_version=None, labels=None, params=None, warnings=None,
               raw_tail=None, cmd=None, started=None, duration_s=None):
    """Assemble a record. Optional parts are left out when unknown (parse_* filters have no cmd)."""
    rec = {
        'schema': SCHEMA_VERSION,
        'tool': tool,
        'tool_version': tool_version,
        'test': test,
        'labels': dict(labels or {}),
        'params': dict(params or {}),
        'metrics': dict(metrics),
        'warnings': list(warnings or []),
    }
    if cmd is not None:
        rec['cmd'] = [str(a) for a in cmd]
    if started is not None:
        rec['started'] = started
    if duration_s is not None:
        rec['duration_s'] = round(float(duration_s), 6)
    if raw_tail is not None:
        rec['raw_tail'] = raw_tail
    return rec


def load_schema(path=SCHEMA_FILE):
    with open(path) as f:
        return json.load(f)


_VALIDATOR = []


def _validator():
    if not _VALIDATOR:
        import jsonschema  # controller-side only; imported lazily so targets never need it
        schema = load_schema()
        cls = jsonschema.validators.validator_for(schema)
        _VALIDATOR.append(cls(schema))
    return _VALIDATOR[0]


def _where(path):
    where = ''
    for part in path:
        where += '[%d]' % part if isinstance(part, int) else ('.%s' % part if where else part)
    return where or '(record)'


def validate_record(rec):
    """Validate a record against the schema; return a list of messages, each naming the field."""
    errors = sorted(_validator().iter_errors(rec), key=lambda e: list(e.absolute_path))
    return ['%s: %s' % (_where(e.absolute_path), e.message) for e in errors]
