#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: history
short_description: List, copy, export and import the runs of a benchlab history
version_added: 0.1.0
description:
  - Works on the history the C(benchlab.bench.report) callback stores every run in - a SQLite file or a
    PostgreSQL database (C(postgresql://USER@HOST:PORT/DBNAME); the password from C(PGPASSWORD),
    C(~/.pgpass) or a service file, never in the URL).
  - V(list) returns the stored runs, newest first.
  - V(copy) copies every run of O(history_db) into O(copy_to) (for example from a SQLite file into the
    team's PostgreSQL history, or back), oldest first, each with its label, owner and the time it was
    first stored; a run already there unchanged is left as it is, and a run id another controller owns
    in the destination is refused and listed, never replaced.
  - V(export) writes one run as a self-contained bundle, the run directory C(<export_dir>/<run id>/)
    with its C(results.json), the report files and C(history.json) (label, owner, store time, digest).
  - V(import) stores a run directory - a bundle, or a run directory the callback wrote whose store
    failed (a database lost mid-run) - its C(results.json) validated first; a run directory is stored
    as the run of this controller, exactly as the callback would have stored it.
  - The action runs on the controller; C(benchlab.bench.history) (C(playbooks/history.yml)) wraps it.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  action:
    description: What to do.
    type: str
    choices: [list, copy, export, import]
    default: list
  history_db:
    description:
      - The history (the source of V(copy)) - a SQLite file or a PostgreSQL URL. By default the
        callback's C(history_db) setting (env C(BENCHLAB_HISTORY_DB)), else
        C($XDG_DATA_HOME/benchlab/history.sqlite).
    type: str
  copy_to:
    description: V(copy) - the history to copy into (a SQLite file or a PostgreSQL URL).
    type: str
  run:
    description: V(export) - the run, referenced like C(benchlab.bench.compare_runs)'s O(benchlab.bench.compare_runs#module:baseline).
    type: str
    default: latest
  export_dir:
    description: V(export) - the directory that receives the bundle. By default the callback's C(output_dir).
    type: path
  run_dir:
    description: V(import) - the run directory or bundle to store.
    type: path
  label:
    description: V(import) - the run label to store it with (a bundle's own label by default).
    type: str
attributes:
  check_mode:
    support: partial
    description: V(list) only; the other actions do nothing in check mode.
  diff_mode:
    support: none
    description: Nothing to diff.
  action:
    support: full
    description: An action plugin of the same name does the work on the controller.
seealso:
  - plugin: benchlab.bench.report
    plugin_type: callback
  - module: benchlab.bench.compare_runs
'''

EXAMPLES = r'''
- name: Move a laptop's SQLite history into the team's PostgreSQL history
  benchlab.bench.history:
    action: copy
    history_db: ~/.local/share/benchlab/history.sqlite
    copy_to: postgresql://bench@db.example.com:5432/benchlab
  environment:
    PGPASSWORD: "{{ vault_benchlab_db_password }}"

- name: Store a run whose store failed (the database was down at the end of the run)
  benchlab.bench.history:
    action: import
    run_dir: benchlab-runs/20261202T220000Z-9b0e33
    label: nightly
'''

RETURN = r'''
runs:
  description: V(list) - the stored runs, newest first (run_id, label, matrix, status, started, n_records ...).
  returned: always
  type: list
  elements: dict
copied:
  description: V(copy) - the run ids by outcome (stored, replaced, unchanged) and the refused ones with the reason.
  returned: when action is copy
  type: dict
  sample: {stored: [20261201T220000Z-4f2a1c], replaced: [], unchanged: [], refused: []}
run_id:
  description: V(export) and V(import) - the run.
  returned: when action is export or import
  type: str
files:
  description: V(export) - the bundle's files by name.
  returned: when action is export
  type: dict
stored:
  description: V(import) - what the history said - stored, replaced or unchanged.
  returned: when action is import
  type: str
'''
