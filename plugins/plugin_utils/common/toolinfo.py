# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark units: everything the controller knows about a benchmark tool, one file per tool
in ``plugins/plugin_utils/benchmarks/<tool>.py`` beside its module (``plugins/modules/<tool>.py``,
the options: the argument spec is the source of every option) and its parser
(``plugins/module_utils/tools/<tool>.py``). Nothing else lists the tools: this registry finds the units
by their files. Controller only.

A unit is a Python module with these names (docs/development.md, "Adding a benchmark"):

- ``ORDER``: its place in every list of tools (tables, enums, messages);
- ``RECORDS``: the tool names its records carry (the first is the usual one: ``bonnie`` ->
  ``bonnie++``; iperf's records say which iperf ran). The record schema's ``tool`` enum is made of
  them (the matrix schema carries them, generated, for module_utils/run/record.py);
- ``PROCESSES``: the processes it starts, which the quiesce guard of every other run counts as a
  competing benchmark (a target never reads this file: the controller passes the names in the
  ``guards`` option);
- ``INSTALL``: {install name: {programs, packages: {platform: [package, ...] or null}}}: what the
  role benchlab.bench.bench_tools installs and the programs playbooks/bench.yml looks for. A
  platform key is ``<os_family>`` or ``<os_family>-<major>`` (the more specific wins);
- ``METRICS``: [(metric name, unit, better, what it is)] its records carry (``*`` for a part the
  run names, such as a fio job's direction); docs/usage.md's table is generated from them;
- ``PARAMS``: the matrix params are the module's options but ``NOT_PARAMS`` ({option: why not});
  PARAMS adds what the argument spec cannot say (bounds, patterns, a size); ``PLAN_PARAMS``: matrix
  params that are no module option (the run path turns them into options or phases). The matrix
  schema's per-tool params are generated from these and the module's DOCUMENTATION
  (tests/utils/benchmark_units.py; tests/unit/plugins/plugin_utils/test_option_sources.py names any
  drift);
- optional: ``module_args(run)`` (module options the run path adds from the run), ``estimate_s(params,
  opt)`` (a run's length; default: the size at ``EST_MB_S``), ``IMPORTS`` ({manifest tool: {parse,
  keys}}: hand-run output into records, playbooks/import.yml), ``TABLES`` (report tables of its
  own), ``phases(run, hostvars)`` (work on other hosts around a run, plugin_utils/phases.py),
  ``CLEANUP_PATHS`` (where a failed run's work may lie besides the cell's path), ``direction(record)``
  ('read' when the record's own work reads the storage, 'write' when it writes it, None when both or
  unknown: a file the tool laid out before a read is not its work; the explanation of every cell
  asks this, plugin_utils/explain/explain.py); ``synced(record)`` (True when the record's writes end with a
  sync the tool waited for: a durability check compares the bytes on the layers below with them),
  ``tool_value(metric, value)`` ((value, unit) in the unit the tool prints where it differs from the
  record's: results.csv's tool_value and tool_unit);
  ``check_params(params, where, cache)`` ((params, problems): one params mapping of a matrix, a
  benchmark's or a cell's ``params.<tool>``, checked on the controller before any host is touched:
  files the matrix names, read and checked as the module will (fio's job files, dbench's load
  files), their text carried in a new params mapping; each problem names `where` and the field;
  `cache`: a dict of this tool's for the matrix, so that a file named twice is read once).

Private to benchlab.bench (no API promise).
"""

from __future__ import annotations

import functools
import importlib
import os

UNITS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'benchmarks')
UNITS_PACKAGE = 'ansible_collections.benchlab.bench.plugins.plugin_utils.benchmarks'
# Load generators that are no benchmark of ours but compete all the same.
OTHER_PROCESSES = ('stress', 'stress-ng')
REQUIRED = ('ORDER', 'RECORDS', 'PROCESSES', 'INSTALL', 'METRICS', 'NOT_PARAMS')
# The options every benchmark module takes (module_utils/run/common.py COMMON_ARGS): never matrix params
# (the run path sets them; observe_interval_s comes from the matrix's methodology, through guards).
SHARED_OPTIONS = ('labels', 'guards', 'run_id', 'run_key', 'describe', 'batch', 'observe_interval_s')


class ToolTableError(ValueError):
    """A unit that misses a part or holds a wrong one (the message names the file)."""


def unit_file(tool):
    return 'plugins/plugin_utils/benchmarks/%s.py' % tool


def unit_names():
    """The matrix tools: the file names of plugins/plugin_utils/benchmarks/*.py."""
    return sorted(name[:-3] for name in os.listdir(UNITS_DIR)
                  if name.endswith('.py') and not name.startswith('_') and name[:-3].isidentifier())


@functools.lru_cache(maxsize=1)
def units():
    """{matrix tool: its unit module}, in ORDER. ToolTableError naming every broken unit."""
    found, problems = [], []
    for tool in unit_names():
        mod = importlib.import_module('%s.%s' % (UNITS_PACKAGE, tool))
        problems.extend(unit_problems(tool, mod))
        found.append((getattr(mod, 'ORDER', 1000), tool, mod))
    if problems:
        raise ToolTableError('; '.join(problems))
    return dict((tool, mod) for _order, tool, mod in sorted(found, key=lambda t: (t[0], t[1])))


def unit(tool):
    """The unit of one matrix tool, or None."""
    return units().get(tool)


def entry_problems(tool, entry):
    """What is wrong with one tool's records, processes and install entry, each naming its place;
    [] when fine. `entry`: {records, processes, install} (a unit's RECORDS, PROCESSES, INSTALL)."""
    where = unit_file(tool)
    if not isinstance(entry, dict):
        return ['%s: missing (RECORDS, PROCESSES, INSTALL)' % where]
    problems = []
    for key in ('records', 'processes'):
        names = entry.get(key)
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n for n in names) \
                or (key == 'records' and not names):
            problems.append('%s %s: expected a list of names%s' % (where, key.upper(), ' (one at least)' if key == 'records' else ''))
    install = entry.get('install')
    if not isinstance(install, dict) or not install:
        return problems + ['%s INSTALL: expected {install name: {programs, packages}}' % where]
    for name, spec in install.items():
        spec = spec if isinstance(spec, dict) else {}
        programs, packages = spec.get('programs'), spec.get('packages')
        if not isinstance(programs, list) or not programs or not all(isinstance(p, str) and p for p in programs):
            problems.append('%s INSTALL.%s.programs: expected a list of program names' % (where, name))
        if not isinstance(packages, dict) or not packages or not all(
                v is None or (isinstance(v, list) and all(isinstance(p, str) and p for p in v)) for v in packages.values()):
            problems.append('%s INSTALL.%s.packages: expected {platform: [package, ...] or null}' % (where, name))
    return problems


def unit_problems(tool, mod):
    """Every part a unit misses or holds wrong, each naming the file and the part."""
    where = unit_file(tool)
    missing = [n for n in REQUIRED if not hasattr(mod, n)]
    if missing:
        return ['%s: missing %s' % (where, ', '.join(missing))]
    problems = entry_problems(tool, entry(mod))
    for i, m in enumerate(mod.METRICS):
        if not (isinstance(m, tuple) and len(m) == 4 and all(isinstance(x, str) and x for x in m)
                and m[2] in ('higher', 'lower')):
            problems.append('%s METRICS[%d]: expected (name, unit, higher|lower, what it is)' % (where, i))
    for name in ('PARAMS', 'NOT_PARAMS', 'PLAN_PARAMS', 'IMPORTS'):
        if not isinstance(getattr(mod, name, {}), dict):
            problems.append('%s %s: expected a mapping' % (where, name))
    return problems


def entry(mod):
    return dict(records=list(mod.RECORDS), processes=list(mod.PROCESSES), install=mod.INSTALL)


def table():
    """{matrix tool: {records, processes, install}}, in the units' order."""
    return dict((tool, entry(mod)) for tool, mod in units().items())


def record_names():
    """Every tool name a record may carry, in table order."""
    return [rec for entry_ in table().values() for rec in entry_['records']]


def record_tool(matrix_tool_name):
    """'bonnie' -> 'bonnie++', 'sysbench_fileio' -> 'sysbench'; any other name unchanged."""
    entry_ = table().get(matrix_tool_name)
    return entry_['records'][0] if entry_ else matrix_tool_name


@functools.lru_cache(maxsize=1)
def _matrix_tools():
    """{record tool name: matrix tool}, the first unit in table order that names it (built once:
    the analysis asks for every record, several times)."""
    out = {}
    for tool, entry_ in table().items():
        for rec in entry_['records']:
            out.setdefault(rec, tool)
    return out


def matrix_tool(record_tool_name):
    """'bonnie++' -> 'bonnie', 'sysbench' -> 'sysbench_fileio', 'iperf3' -> 'iperf'; any other name
    unchanged."""
    return _matrix_tools().get(record_tool_name, record_tool_name)


def record_direction(record):
    """What a record's own work did to the storage, as its tool's unit says (``direction``): 'read',
    'write', or None (both, unknown, or a unit that does not say)."""
    mod = unit(matrix_tool(record.get('tool')))
    fn = getattr(mod, 'direction', None) if mod is not None else None
    return fn(record) if fn is not None else None


def tool_value_of(record_tool_name):
    """The unit's ``tool_value(metric, value)`` for records of that tool, or None."""
    mod = unit(matrix_tool(record_tool_name))
    return getattr(mod, 'tool_value', None) if mod is not None else None


def record_synced(record):
    """Whether a record's writes ended with a sync its tool waited for, as its unit says (``synced``);
    False where the unit does not say."""
    mod = unit(matrix_tool(record.get('tool')))
    fn = getattr(mod, 'synced', None) if mod is not None else None
    return bool(fn(record)) if fn is not None else False


def params_checked(tool, params, where, cache):
    """(params, problems) of one params mapping of tool `tool` in a matrix: its unit's check_params, or
    the params as they are without one. `cache`: {tool: that unit's cache} over one matrix."""
    mod = unit(tool) if isinstance(tool, str) else None
    fn = getattr(mod, 'check_params', None) if mod is not None else None
    if fn is None or not isinstance(params, dict):
        return params, []
    return fn(params, where, cache.setdefault(tool, {}))


def process_names():
    """The processes the quiesce guard counts as a competing benchmark: every tool's, then the
    usual load generators, each once."""
    names = []
    for entry_ in table().values():
        names.extend(p for p in entry_['processes'] if p not in names)
    return names + [p for p in OTHER_PROCESSES if p not in names]


def install_table():
    """{install name: {programs, packages}} of every tool, in table order."""
    out = {}
    for entry_ in table().values():
        out.update(entry_['install'])
    return out


def packages_for(platforms):
    """{install name: [package, ...] or None (no package there)} for a platform, given as its keys,
    the most specific first (['RedHat-9', 'RedHat'])."""
    out = {}
    for name, spec in install_table().items():
        found = [spec['packages'][p] for p in platforms if p in spec['packages']]
        out[name] = found[0] if found else None
    return out


def programs_for(names=None):
    """{install name: [program, ...]} of `names` (every install name when None; unknown names are
    left out: the role refuses them)."""
    table_ = install_table()
    return dict((n, list(table_[n]['programs'])) for n in (table_ if names is None else names) if n in table_)


def with_processes(guards):
    """A benchmark module's guards option with the competing process names (``processes``) the
    target cannot know by itself; a guards option that already names them (or is no dict: the
    module refuses it) is left as it is."""
    if guards is None:
        guards = {}
    if not isinstance(guards, dict) or 'processes' in guards:
        return guards
    return dict(guards, processes=process_names())


def imports():
    """{manifest tool name: (matrix tool, {parse, keys})} of every unit's IMPORTS, in table order."""
    out = {}
    for tool, mod in units().items():
        for name, spec in (getattr(mod, 'IMPORTS', None) or {}).items():
            out[name] = (tool, spec)
    return out
