# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one table of the benchmark tools: each matrix tool's schema entry
(schemas/matrix-v1.json, ``$defs/<tool>_params``) carries, under ``x-benchlab``, what the code
around the benchmark needs to know about the tool (controller only):

- ``records``: the tool names its records carry (the first is the usual one: ``bonnie`` ->
  ``bonnie++``; iperf's records say which iperf ran, ``iperf3`` or ``iperf``). The record schema's
  ``tool`` enum is made of them (plugin_utils/validation.py).
- ``processes``: the names of the processes it starts, which the quiesce guard of every other run
  counts as a competing benchmark (dd is left out: a dd of anything else is no benchmark). A target
  gets only the module_utils a module imports, never this file: the controller passes them in the
  ``guards`` option (``guards.processes``, added by the action plugin every target module runs
  through, plugin_utils/compat.py, and by run_benchmark).
- ``install``: {install name: {programs, packages: {platform: [package, ...] or null}}}: what the
  role benchlab.bench.bench_tools installs (the filter benchlab.bench.tool_install) and the
  programs playbooks/bench.yml checks before the package manager runs. A platform key is
  ``<os_family>`` or ``<os_family>-<major>`` (the more specific wins); null: no package there.

A new benchmark's schema entry carries its line of the table; nothing else lists the tools.
Private to benchlab.bench (no API promise). Used by runargs, validation, compat, the callback and
the filter tool_install.
"""

from __future__ import annotations

import functools
import json
import os

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'schemas', 'matrix-v1.json')
KEY = 'x-benchlab'
# Load generators that are no benchmark of ours but compete all the same.
OTHER_PROCESSES = ('stress', 'stress-ng')


class ToolTableError(ValueError):
    """A tool's schema entry without its x-benchlab line (the message names the entry)."""


@functools.lru_cache(maxsize=1)
def table():
    """{matrix tool: its x-benchlab entry}, in the order of the schema's tool enum."""
    with open(SCHEMA_FILE, encoding='utf-8') as f:
        defs = json.load(f)['$defs']
    out = {}
    for tool in defs['benchmark']['properties']['tool']['enum']:
        entry = (defs.get('%s_params' % tool) or {}).get(KEY)
        problems = entry_problems(tool, entry)
        if problems:
            raise ToolTableError('; '.join(problems))
        out[tool] = entry
    return out


def entry_problems(tool, entry):
    """What is wrong with one tool's x-benchlab entry, each naming its place; [] when fine."""
    where = 'plugins/plugin_utils/schemas/matrix-v1.json $defs.%s_params.%s' % (tool, KEY)
    if not isinstance(entry, dict):
        return ['%s: missing (records, processes, install)' % where]
    problems = []
    for key in ('records', 'processes'):
        names = entry.get(key)
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names) \
                or (key == 'records' and not names):
            problems.append('%s.%s: expected a list of names%s' % (where, key, ' (one at least)' if key == 'records' else ''))
    install = entry.get('install')
    if not isinstance(install, dict) or not install:
        return problems + ['%s.install: expected {install name: {programs, packages}}' % where]
    for name, spec in install.items():
        spec = spec if isinstance(spec, dict) else {}
        programs, packages = spec.get('programs'), spec.get('packages')
        if not isinstance(programs, list) or not programs or not all(isinstance(p, str) and p for p in programs):
            problems.append('%s.install.%s.programs: expected a list of program names' % (where, name))
        if not isinstance(packages, dict) or not packages or not all(
                v is None or (isinstance(v, list) and all(isinstance(p, str) and p for p in v)) for v in packages.values()):
            problems.append('%s.install.%s.packages: expected {platform: [package, ...] or null}' % (where, name))
    return problems


def record_names():
    """Every tool name a record may carry, in table order."""
    return [rec for entry in table().values() for rec in entry['records']]


def record_tool(matrix_tool):
    """'bonnie' -> 'bonnie++', 'sysbench_fileio' -> 'sysbench'; any other name unchanged."""
    entry = table().get(matrix_tool)
    return entry['records'][0] if entry else matrix_tool


def matrix_tool(record_tool_name):
    """'bonnie++' -> 'bonnie', 'sysbench' -> 'sysbench_fileio', 'iperf3' -> 'iperf'; any other name
    unchanged."""
    for tool, entry in table().items():
        if record_tool_name in entry['records']:
            return tool
    return record_tool_name


def process_names():
    """The processes the quiesce guard counts as a competing benchmark: every tool's, then the
    usual load generators, each once."""
    names = []
    for entry in table().values():
        names.extend(p for p in entry['processes'] if p not in names)
    return names + [p for p in OTHER_PROCESSES if p not in names]


def install_table():
    """{install name: {programs, packages}} of every tool, in table order."""
    out = {}
    for entry in table().values():
        out.update(entry['install'])
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
