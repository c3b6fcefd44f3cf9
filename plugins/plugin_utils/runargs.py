# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The arguments of a run's benchmark module, from the run of a plan (controller only; used by the
action plugin benchlab.bench.run_benchmark).

The matrix schema (schemas/matrix-v1.json, `<tool>_params`) lists the options a matrix may set for
a tool; each is forwarded under its own name (RENAMES: the exceptions), and the module's
argument_spec gives every default (tests/unit/plugins/plugin_utils/test_option_sources.py checks
that the schema's params are a subset of the argspec with the same types). Nothing here repeats a
default.
"""

from __future__ import annotations

import functools
import json
import os

from ansible_collections.benchlab.bench.plugins.plugin_utils.toolinfo import with_processes

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'schemas', 'matrix-v1.json')
MODULES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules')


def _schema_defs():
    with open(SCHEMA_FILE) as f:
        return json.load(f)['$defs']


# The matrix tools (the matrix schema's `tool` enum); each runs the module benchlab.bench.<tool>.
MODULES = tuple(_schema_defs()['benchmark']['properties']['tool']['enum'])
# Matrix param -> module option, where the names differ.
RENAMES = {'fio': {'job_file': 'job_file_name'}}
# Options the plan adds to a run's params (not in the matrix): forwarded as they are.
PLANNED = {'fio': ('job_file_content',)}


class RunArgsError(ValueError):
    """A run the plan could not have made (an unknown tool)."""


@functools.lru_cache(maxsize=1)
def schema_params():
    """{tool: (matrix param names)} from the matrix schema."""
    defs = _schema_defs()
    return dict((tool, tuple(sorted(defs['%s_params' % tool].get('properties') or {}))) for tool in MODULES)


@functools.lru_cache(maxsize=None)
def module_options(tool):
    """The options of benchlab.bench.<tool> as its DOCUMENTATION states them (read without running
    the module; ansible-test sanity holds the documentation equal to the argument_spec)."""
    from ansible.parsing.plugin_docs import read_docstring
    doc = read_docstring(os.path.join(MODULES_DIR, '%s.py' % tool)).get('doc') or {}
    return dict(doc.get('options') or {})


def option_default(tool, name):
    """The module's default of one option (None when it has none)."""
    return (module_options(tool).get(name) or {}).get('default')


def tool_args(run):
    """The tool's own options of a run: path, the matrix params under their module names, and what
    the plan added (fio: the job's name, a job file's text)."""
    tool = run.get('tool')
    if tool not in MODULES:
        raise RunArgsError('run_benchmark: unknown tool %r (one of %s)' % (tool, ', '.join(MODULES)))
    params = run.get('params') or {}
    renames = RENAMES.get(tool, {})
    args = dict((renames.get(name, name), params[name]) for name in schema_params()[tool] if name in params)
    args.update((name, params[name]) for name in PLANNED.get(tool, ()) if name in params)
    if run.get('path'):
        args['path'] = run['path']
    if tool == 'fio':
        args['name'] = run['benchmark']
    return args


def module_args(run, shared):
    """tool_args(run) plus the options every benchmark shares (labels, guards, run_id, run_key:
    the module_defaults of the benchlab.bench.benchmarks group, given to this task)."""
    args = tool_args(run)
    args.update((k, v) for k, v in (shared or {}).items() if v is not None)
    if run.get('describe'):
        args['describe'] = True   # the cell's first run describes its environment (plan_schedule's describe)
    args['guards'] = with_processes(args.get('guards'))   # the process names the target cannot know
    return args
