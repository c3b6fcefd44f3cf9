# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the runs go: the one resolver of the report directory (the directory holding the run
directories) and of the history database, for the report callback, the compare_runs action and
the run_state lookup.

Order, the same for all three: the value given (option or argument), else the environment
(BENCHLAB_REPORT_DIR / BENCHLAB_HISTORY_DB), else the report callback's own setting (ini or env),
else the default (./benchlab-runs; $XDG_DATA_HOME/benchlab/history.sqlite). Under ansible-runner
the callback, when nothing was set, writes into the runner's artifact directory instead.

Private to benchlab.bench (no API promise). Used by callback/report.py, action/compare_runs.py and
lookup/run_state.py.
"""

from __future__ import annotations

import os

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import resolve_db_path

CALLBACK = 'benchlab.bench.report'
DEFAULT_REPORT_DIR = 'benchlab-runs'
REPORT_DIR_ENV = 'BENCHLAB_REPORT_DIR'
HISTORY_DB_ENV = 'BENCHLAB_HISTORY_DB'
RUNNER_ARTIFACTS_ENV = 'AWX_ISOLATED_DATA_DIR'


def callback_setting(name):
    """The report callback's setting `name` (ini or env) or None, for plugins that are not the
    callback (so compare.yml reads the history the runs went to)."""
    try:
        from ansible import constants as C
        from ansible.plugins.loader import callback_loader
        cls = callback_loader.get(CALLBACK, class_only=True)  # registers the callback's option definitions
        return C.config.get_config_value(name, plugin_type='callback', plugin_name=getattr(cls, '_load_name', CALLBACK))
    except Exception:  # pylint: disable=broad-except
        return None


def report_dir(value=None, environ=None, from_callback=False, runner_artifacts=False):
    """The absolute directory holding the run directories.

    `value`: the option or argument given; `from_callback`: fall back on the report callback's
    setting (for plugins other than the callback); `runner_artifacts`: the callback's rule that,
    under ansible-runner and with nothing set, the runs go to <artifacts>/benchlab."""
    environ = os.environ if environ is None else environ
    base = value or environ.get(REPORT_DIR_ENV) or (callback_setting('output_dir') if from_callback else None)
    defaults = (None, '', DEFAULT_REPORT_DIR, os.path.abspath(DEFAULT_REPORT_DIR))
    explicit = bool(environ.get(REPORT_DIR_ENV)) or base not in defaults
    artifacts = environ.get(RUNNER_ARTIFACTS_ENV)
    if runner_artifacts and artifacts and not explicit:
        base = os.path.join(artifacts, 'benchlab')
    return os.path.abspath(os.path.expanduser(base or DEFAULT_REPORT_DIR))


def history_db(value=None, environ=None, from_callback=False):
    """The history database's absolute path, or None when the history is off (V(off))."""
    environ = os.environ if environ is None else environ
    if from_callback:
        value = value or environ.get(HISTORY_DB_ENV) or callback_setting('history_db')
    return resolve_db_path(value, environ)
