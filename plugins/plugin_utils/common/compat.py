# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the ansible-core versions benchlab.bench supports (2.16 to 2.20) differ, in one place.

The target's Python: the collection's modules run on Python 3.6 or newer, and each core's module
wrapper has its own floor (2.16 drives 2.7 and 3.6, 2.17 needs 3.7, 2.18 and 2.19 need 3.8, 2.20
needs 3.9). A module that cannot even start on a host (a Python 2.7, or a 3.6 under a newer core)
would fail with a traceback from the wrapper; TargetModuleAction, the action plugin every target
module of the collection runs through, turns that into one message naming the host, its Python
and what to install or which core to use. It costs nothing when the module runs: the target's
Python is asked for its version (one command) only after a module produced no result at all, and
for async tasks once they are started (the failure would otherwise surface in async_status).

A benchmark module also gets the names of every benchmark's processes in its guards option here
(benchmark_args): the quiesce guard counts them as competing, and the target cannot read the tool
table (the benchmark units, plugin_utils/common/toolinfo.py) itself. drbd_resource gets its resources'
keys in the spelling it declares (drbd_resource_args: drbd.conf's dashes become underscores),
which is what lets Ansible mask the shared secret in the line it logs on the target.
"""

from __future__ import annotations

import re
import shlex

from ansible.plugins.action.normal import ActionModule as NormalAction
from ansible.release import __version__ as CORE_VERSION

# What the collection's target code needs (tests/utils/target_py36.py checks the code against it).
COLLECTION_TARGET_MIN = (3, 6)
# The oldest target Python each ansible-core line's module wrapper runs on; a newer core than the
# table knows is taken to need what the newest line in it needs.
CORE_TARGET_MIN = {(2, 16): (2, 7), (2, 17): (3, 7), (2, 18): (3, 8), (2, 19): (3, 8), (2, 20): (3, 9)}
# The newest core that drives a target of that Python (to name in the message).
NEWEST_CORE_FOR = {(3, 6): '2.16', (3, 7): '2.17', (3, 8): '2.19'}

INSTALL_PYTHON3 = ('install python3 on it (EL7, OpenVZ 7 / Virtuozzo 7: `yum install python3`; EL8: `dnf install '
                   'python3` or use /usr/libexec/platform-python; Debian/Ubuntu: `apt-get install python3`) and set '
                   'the host variable ansible_python_interpreter to it (for example /usr/bin/python3)')
_PROBE = "import sys; sys.stdout.write('%d.%d' % sys.version_info[:2])"
_VERSION_RE = re.compile(r'^(\d+)\.(\d+)$')


def core_version(version=CORE_VERSION):
    """'2.19.14' -> (2, 19)."""
    major, minor = re.match(r'^(\d+)\.(\d+)', version).groups()
    return int(major), int(minor)


def core_target_min(core=None):
    """The oldest target Python the running (or the given) ansible-core line drives."""
    core = core or core_version()
    known = sorted(k for k in CORE_TARGET_MIN if k <= core)
    return CORE_TARGET_MIN[known[-1]] if known else CORE_TARGET_MIN[min(CORE_TARGET_MIN)]


def _dotted(version):
    return '%d.%d' % tuple(version)


def target_python_problem(host, interpreter, version, core=None):
    """One message for a target whose Python cannot run the collection's modules under this core,
    or None when (version) is fine. `version` is (major, minor), or None when there is no Python at
    `interpreter`."""
    core = core or core_version()
    if version is None:
        return ('host %s has no Python at %s (the interpreter Ansible used): %s.'
                % (host, interpreter, INSTALL_PYTHON3))
    version = tuple(version)
    need = core_target_min(core)
    if version < COLLECTION_TARGET_MIN:
        core_note = ''
        if need > COLLECTION_TARGET_MIN:
            core_note = (' (and ansible-core %s drives Python %s or newer only; for hosts whose python3 is 3.6, '
                         'as on EL7, run from ansible-core 2.16)' % (_dotted(core), _dotted(need)))
        return ('host %s: its Python at %s is %s; benchlab.bench needs Python %s or newer on the target%s: %s.'
                % (host, interpreter, _dotted(version), _dotted(COLLECTION_TARGET_MIN), core_note, INSTALL_PYTHON3))
    if version < need:
        return ('host %s: its Python at %s is %s, and ansible-core %s drives Python %s or newer only. '
                'Run the playbook from ansible-core %s (the newest core that drives Python %s; benchlab.bench '
                'supports 2.16 to 2.20), or install Python %s or newer on the host and set the host variable '
                'ansible_python_interpreter to it.'
                % (host, interpreter, _dotted(version), _dotted(core), _dotted(need),
                   NEWEST_CORE_FOR.get(version[:2], '2.16'), _dotted(version), _dotted(need)))
    return None


def benchmark_args(module, args):
    """A benchmark module's args with the process names its quiesce guard counts as competing
    (guards.processes, plugin_utils/common/toolinfo.py): a target knows no other tool's names. Any other
    module's args unchanged."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import units, with_processes
    prefix, _dot, name = (module or '').rpartition('.')
    if prefix not in ('benchlab.bench', '') or name not in units() or not isinstance(args, dict):
        return args
    return dict(args, guards=with_processes(args.get('guards')))


def _underscored(options, where):
    """(options with every dashed key in its underscore spelling, None) or (None, why not)."""
    out = {}
    for key, value in options.items():
        name = key.replace('-', '_') if isinstance(key, str) else key
        if name in out:
            # never a value: one of them may be the secret
            return None, '%s: %s given twice (%s and %s): keep one' % (where, name, name, name.replace('_', '-'))
        out[name] = value
    return out, None


def drbd_resource_args(module, args):
    """(args, problem): drbd_resource's resources with the keys of each resource and of its `net`
    spelled as the module declares them. drbd.conf spells options with dashes (shared-secret), and
    the role's variables may too; the module declares every key with underscores (Ansible's option
    names are identifiers) so that Ansible masks the shared secret in its start-up log line. Any
    other module's args unchanged."""
    prefix, _dot, name = (module or '').rpartition('.')
    if prefix not in ('benchlab.bench', '') or name != 'drbd_resource' or not isinstance(args, dict) \
            or not isinstance(args.get('resources'), list):
        return args, None
    resources = []
    for i, res in enumerate(args['resources']):
        if isinstance(res, dict):
            res, problem = _underscored(res, 'resources[%d]' % i)
            if problem:
                return args, problem
            if isinstance(res.get('net'), dict):
                net, problem = _underscored(res['net'], 'resources[%d].net' % i)
                if problem:
                    return args, problem
                res['net'] = net
        resources.append(res)
    return dict(args, resources=resources), None


def task_module(task, module_loader):
    """The FQCN of the module a task runs. ansible-core 2.16 to 2.18 set a task's resolved_action to
    the action plugin the module's routing names (benchlab.bench.sysinfo for every target module),
    2.19 and later to the module itself: the module loader answers the same on all of them."""
    try:
        context = module_loader.find_plugin_with_context(task.action, collection_list=task.collections)
    except Exception:  # pylint: disable=broad-except  # an action without a module: its own name
        context = None
    if context is not None and context.resolved and context.resolved_fqcn:
        return context.resolved_fqcn
    return task.resolved_action or task.action


class TargetModuleAction(NormalAction):
    """ansible.builtin.normal (what runs a module that has no action plugin), plus the check of the
    target's Python when the module could not start (see the module docstring)."""

    def run(self, tmp=None, task_vars=None):
        module = task_module(self._task, self._shared_loader_obj.module_loader)
        self._task.args, problem = drbd_resource_args(module, benchmark_args(module, self._task.args))
        if problem:
            return dict(failed=True, changed=False, msg=problem)
        result = super(TargetModuleAction, self).run(tmp, task_vars)
        return self._target_python_check(result, task_vars)

    def _target_python_check(self, result, task_vars):
        """The module's result, or one message naming the host and what to install when the module
        could not start there (see the module docstring)."""
        no_result = result.get('failed') and result.get('_ansible_parsed') is False
        started_async = bool(self._task.async_val) and result.get('started') and not result.get('failed')
        if not (no_result or started_async) or not self._used_interpreter:
            return result
        interpreter = shlex.split(self._used_interpreter.lstrip('#!').strip())
        probe = ' '.join(shlex.quote(a) for a in interpreter + ['-c', _PROBE])
        try:
            res = self._low_level_execute_command(probe, sudoable=False)
        except Exception:  # pylint: disable=broad-except  # an unreachable host: keep the module's own result
            return result
        found = _VERSION_RE.match((res.get('stdout') or '').strip())
        if found:
            version = (int(found.group(1)), int(found.group(2)))
        elif res.get('rc') == 127:
            version = None
        else:
            return result
        host = self._task.delegate_to or (task_vars or {}).get('inventory_hostname') or '?'
        problem = target_python_problem(host, ' '.join(interpreter), version)
        if problem is None:
            return result
        return dict(failed=True, changed=False, msg=problem,
                    benchlab_target_python=dict(host=host, interpreter=' '.join(interpreter),
                                                version=_dotted(version) if version else None,
                                                needs=_dotted(max(COLLECTION_TARGET_MIN, core_target_min()))))
