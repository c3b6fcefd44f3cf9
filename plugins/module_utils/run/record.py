# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The result record (docs/architecture.md): the one place that builds and validates it.

Modules build records on the target with `new_record`; the callback and tests validate them on
the controller with `validate_record` against `schemas/record-v1.json` (jsonschema is needed
there only, never on a target).
"""

import datetime
import json
import math
import os
import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import record_flags

SCHEMA_VERSION = 1
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'schemas', 'record-v1.json')
# The record names of the tool table (each benchmark unit's RECORDS, plugin_utils/common/toolinfo.py, generated
# into the matrix schema's x-benchlab entries by tests/utils/benchmark_units.py): read as data by the
# controller-side validation here; a target has no such file and never validates.
MATRIX_SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                  'plugin_utils', 'schemas', 'matrix-v1.json')
RAW_TAIL_LINES = 15


def utc_now():
    """The current time as the record's ISO 8601 UTC string, to the millisecond (the analysis checks
    from it that runs meant to run together overlapped)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (now.microsecond // 1000)


def metric(value, unit, better='higher'):
    """One metric: {value, unit, better}; a value of None means "too fast to measure"."""
    m = {'value': None if value is None else float(value), 'unit': unit, 'better': better}
    if value is None:
        m['too_fast'] = True
    return m


def new_record(tool, test, metrics, tool_version=None, labels=None, params=None, warnings=None,
               raw_tail=None, cmd=None, started=None, duration_s=None, workers=None, flags=None):
    """Assemble a record. Optional parts are left out when unknown (parse_* filters have no cmd).

    `flags` are trap codes (module_utils/run/trapcodes.py) the module found; the record's ``flags`` also
    get the codes its params say as data (guards.quiet false, data zero). The warnings stay the
    text for people; the controller reads the codes.

    `workers` ({count, kind, aggregate, detail}) is given where the tool ran several workers at once
    (fio numjobs, iperf parallel streams, ...): the record's metrics are then their aggregate, the
    measurement, and `detail` holds each worker's own figures."""
    rec = {
        'schema': SCHEMA_VERSION,
        'tool': tool,
        'tool_version': tool_version,
        'test': test,
        'labels': dict(labels or {}),
        'params': dict(params or {}),
        'metrics': dict(metrics),
        'warnings': list(warnings or []),
        'flags': record_flags(params, flags or ()),
    }
    if cmd is not None:
        rec['cmd'] = [str(a) for a in cmd]
    if started is not None:
        rec['started'] = started
    if duration_s is not None:
        rec['duration_s'] = round(float(duration_s), 6)
    if raw_tail is not None:
        rec['raw_tail'] = raw_tail
    if workers:
        rec['workers'] = workers
    return rec


def table_record_names(path=MATRIX_SCHEMA_FILE):
    """The tool names records may carry: the ``records`` of every matrix tool's x-benchlab entry, in
    the order of the matrix schema's tool enum (generated from the benchmark units)."""
    with open(path) as f:
        defs = json.load(f)['$defs']
    return [name for tool in defs['benchmark']['properties']['tool']['enum']
            for name in defs['%s_params' % tool]['x-benchlab']['records']]


def load_schema(path=SCHEMA_FILE, tool_names=None):
    """The record schema, its ``tool`` an enum of `tool_names` (default: table_record_names(), the
    tool table in the matrix schema: a new benchmark does not edit the record schema)."""
    with open(path) as f:
        schema = json.load(f)
    tool = schema.get('properties', {}).get('tool')
    if tool is not None and 'enum' not in tool:
        tool['enum'] = list(tool_names if tool_names is not None else table_record_names())
    return schema


_VALIDATOR = []
_STRICT = {}


def ecma_pattern(pattern):
    """A JSON Schema `pattern` (an ECMA-262 regex) for Python's re: every `$` anchor (not escaped,
    not in a [class]) becomes \\Z. ECMA's `$` is the end of the text; Python's also matches before a
    final newline, so '^[a-z]+$' would let 'name\\n' through."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == '\\':
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != ']'
        elif c == '[':
            in_class = True
            if pattern[i + 1:i + 2] == ']':     # '[]...]': a leading ] is literal
                out.append('[]')
                i += 2
                continue
        elif c == '$':
            c = '\\Z'
        out.append(c)
        i += 1
    return ''.join(out)


def schema_validator(schema, **kwargs):
    """A jsonschema validator for `schema` whose `pattern` keyword matches as JSON Schema says
    (ECMA-262: `$` is the end of the text), so a name with a trailing newline is refused. Every
    schema of the collection is checked through this. Controller-side only (needs jsonschema)."""
    import jsonschema  # controller-side only; imported lazily so targets never need it
    base = jsonschema.validators.validator_for(schema)
    cls = _STRICT.get(base)
    if cls is None:
        def pattern(validator, patrn, instance, _schema):
            if validator.is_type(instance, 'string') and not re.search(ecma_pattern(patrn), instance):
                yield jsonschema.ValidationError('%r does not match %r' % (instance, patrn))
        cls = _STRICT[base] = jsonschema.validators.extend(base, {'pattern': pattern})
    return cls(schema, **kwargs)


def _validator():
    if not _VALIDATOR:
        _VALIDATOR.append(schema_validator(load_schema()))
    return _VALIDATOR[0]


def json_path(parts, root='', whole='(record)'):
    """The one way every schema problem names its place: ``root.key[0].key`` (``key[0].key``
    without a root); `whole` when the problem is the document itself (no parts, no root)."""
    where = root
    for part in parts:
        where += '[%d]' % part if isinstance(part, int) else ('.%s' % part if where else part)
    return where or whole


def schema_problems(validator, instance, root='', whole='(record)'):
    """'<path>: <message>' for every error `validator` finds in `instance`, in path order. For a
    failed if/then, oneOf or anyOf the innermost cause is reported: it names the actual field."""
    problems = []
    for err in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)):
        leaf = err
        while leaf.context:
            leaf = sorted(leaf.context, key=lambda e: -len(e.absolute_path))[0]
        problems.append('%s: %s' % (json_path(leaf.absolute_path, root, whole), shortened_message(leaf.message, leaf.instance)))
    return problems


SHOWN_VALUE = 60


def shortened_message(message, instance):
    """The schema's message with the offending value cut to its first SHOWN_VALUE characters of
    repr (and its length said): a 20,000-character label, or a whole file pasted into a field, is
    named, never repeated whole."""
    text = repr(instance)
    if len(text) <= SHOWN_VALUE + 20 or text not in message:
        return message
    return message.replace(text, '%s... (%d characters)' % (text[:SHOWN_VALUE], len(text)))


def validate_record(rec):
    """Validate a record against the schema; return a list of messages, each naming the field."""
    return schema_problems(_validator(), rec)


# The physical range of each metric unit: no measurement is negative, and none is beyond what any
# machine measures (a record claiming it is damaged or forged; accepting it would skew every
# statistic over it, and 1e308 overflows them). Generous upper bounds: 500 GB/s of storage, 4 Tbit/s
# of network, ten billion operations a second, a run of 115 days, a whole CPU count of 100 % each.
UNIT_RANGES = {
    'MB/s': 5e5, 'Mbit/s': 4e6, 'ops/s': 1e10, 'files/s': 1e10, 'seeks/s': 1e10, 's': 1e7, 'ms': 1e10,
    '%': 1e6, 'bytes': 2.0 ** 63, 'count': 1e15,
}
# bytes / elapsed against a record's own throughput: they come from one measurement, so they agree
# but for rounding; beyond this relative difference the record contradicts itself.
SELF_CONSISTENCY = 0.10


def is_number(x):
    """An int or a float, not a bool (which Python counts as an int): the one test of a number every
    parser, check and renderer uses."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def plausibility_problems(rec):
    """'<field>: <message>' for each number of a record outside the physical range of its unit
    (UNIT_RANGES; duration_s in seconds) and for bytes / elapsed that disagree with the record's
    throughput by more than SELF_CONSISTENCY. Non-finite numbers and types are the schema's and
    validation's business: they are skipped here."""
    problems = []
    metrics = rec.get('metrics') if isinstance(rec, dict) and isinstance(rec.get('metrics'), dict) else {}
    for name in sorted(metrics, key=str):
        m = metrics[name]
        if not isinstance(m, dict) or not is_number(m.get('value')) or m.get('unit') not in UNIT_RANGES:
            continue
        value, unit = m['value'], m['unit']
        if not math.isfinite(value):
            continue
        if value < 0:
            problems.append('metrics.%s.value: %r %s is negative: no measurement in %s can be' % (name, value, unit, unit))
        elif value > UNIT_RANGES[unit]:
            problems.append('metrics.%s.value: %.6g %s is beyond what any machine measures (at most %.6g %s): a '
                            'damaged or forged record' % (name, value, unit, UNIT_RANGES[unit], unit))
    duration = rec.get('duration_s') if isinstance(rec, dict) else None
    if is_number(duration) and UNIT_RANGES['s'] < duration < float('inf'):  # a negative one: the schema's minimum
        problems.append('duration_s: %.6g s is beyond what any run lasts (at most %.6g s)' % (duration, UNIT_RANGES['s']))
    problems.extend(_self_consistency(metrics))
    return problems


def _self_consistency(metrics):
    values = dict((k, metrics[k].get('value')) for k, unit in (('bytes', 'bytes'), ('elapsed', 's'), ('throughput', 'MB/s'))
                  if isinstance(metrics.get(k), dict) and metrics[k].get('unit') == unit)
    if len(values) < 3 or not all(is_number(v) and 0 < v < float('inf') for v in values.values()):
        return []
    implied = values['bytes'] / values['elapsed'] / 1e6
    if abs(implied - values['throughput']) <= SELF_CONSISTENCY * max(implied, values['throughput']):
        return []
    return ['metrics.throughput.value: %.6g MB/s, but bytes / elapsed is %.6g MB/s (%.6g bytes in %.6g s): the record '
            'contradicts itself' % (values['throughput'], implied, values['bytes'], values['elapsed'])]
