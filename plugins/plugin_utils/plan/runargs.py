# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The arguments of a run's benchmark module, from the run of a plan (controller only; used by the
action plugin benchlab.bench.run_benchmark).

A tool's matrix params are its module's options but those its unit leaves out
(plugins/plugin_utils/benchmarks/<tool>.py ``NOT_PARAMS``); each is forwarded under its own name,
and the module's argument_spec gives every default. The unit's ``module_args(run)`` adds what the
run path derives from the run (fio: the job's name and a job file's text; iperf: the client of the
run's pair). Nothing here repeats a default.
"""

from __future__ import annotations

import functools
import importlib
import os

from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import SHARED_OPTIONS, unit, units, with_processes

MODULES_PACKAGE = 'ansible_collections.benchlab.bench.plugins.modules'
MODULES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'modules')


class RunArgsError(ValueError):
    """A run the plan could not have made (an unknown tool)."""


def __getattr__(name):
    """MODULES: the matrix tools (each runs the module benchlab.bench.<tool>), read from the units
    when first asked for."""
    if name == 'MODULES':
        return tuple(units())
    raise AttributeError(name)


@functools.lru_cache(maxsize=None)
def module_options(tool):
    """The options of benchlab.bench.<tool>: its option table (the module's ``OPTIONS``: type, default,
    choices, bounds; module_utils/run/options.py), each with its description from the module's
    DOCUMENTATION (ansible-test sanity holds the documentation equal to the argument spec the table
    makes)."""
    from ansible.parsing.plugin_docs import read_docstring
    table = importlib.import_module('%s.%s' % (MODULES_PACKAGE, tool)).OPTIONS
    doc = (read_docstring(os.path.join(MODULES_DIR, '%s.py' % tool)).get('doc') or {}).get('options') or {}
    return dict((name, dict(entry, description=(doc.get(name) or {}).get('description'))) for name, entry in table.items())


def option_default(tool, name):
    """The module's default of one option (None when it has none)."""
    return (module_options(tool).get(name) or {}).get('default')


@functools.lru_cache(maxsize=None)
def param_names(tool):
    """The matrix params of a tool that are module options: every documented option but the
    unit's NOT_PARAMS and the options every benchmark shares."""
    left_out = set(unit(tool).NOT_PARAMS) | set(SHARED_OPTIONS)
    return tuple(name for name in module_options(tool) if name not in left_out)


def tool_args(run):
    """The tool's own options of a run: path, the matrix params that are module options, and what
    the unit derives from the run (module_args)."""
    tool = run.get('tool')
    mod = unit(tool) if isinstance(tool, str) else None
    if mod is None:
        raise RunArgsError('run_benchmark: unknown tool %r (one of %s)' % (tool, ', '.join(units())))
    params = run.get('params') or {}
    args = dict((name, params[name]) for name in param_names(tool) if name in params)
    if run.get('path') and 'path' in module_options(tool):   # iperf's client has none
        args['path'] = run['path']
    if hasattr(mod, 'module_args'):
        args.update(mod.module_args(run))
    return args


def module_args(run, shared):
    """tool_args(run) plus the options every benchmark shares (labels, guards, run_id, run_key);
    what the unit derived (iperf's pair labels) wins over the shared labels."""
    args = dict((k, v) for k, v in (shared or {}).items() if v is not None)
    if args.get('labels') and not run.get('labels'):
        run = dict(run, labels=args['labels'])
    args.update(tool_args(run))
    if run.get('describe'):
        args['describe'] = True   # the cell's first run describes its environment (plan_schedule's describe)
    args['guards'] = with_processes(args.get('guards'))   # the process names the target cannot know
    return args
