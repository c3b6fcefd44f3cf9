# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one adapter between the report callback and the parts of Ansible it reads.

- A task result: ansible-core 2.19 and later give the public ``result.host``, ``result.task`` and
  ``result.result``; 2.16-2.18 only ``_host``, ``_task`` and ``_result``.
- The playbook's file and the inventory sources: no core (2.16-2.20) makes them public; they are
  read here, and only here, from ``Playbook._file_name`` and ``InventoryManager._sources``, and a
  missing attribute gives None instead of an error.

Private to benchlab.bench (no API promise). Used by callback/report.py.
"""

from __future__ import annotations


def _public_or_private(obj, name):
    try:
        return getattr(obj, name)  # ansible-core >= 2.19
    except AttributeError:
        return getattr(obj, '_' + name)  # ansible-core 2.16-2.18


def result_host(result):
    """The Host of a task result."""
    return _public_or_private(result, 'host')


def result_task(result):
    """The Task of a task result."""
    return _public_or_private(result, 'task')


def result_data(result):
    """The dict a task returned (what callbacks see)."""
    return _public_or_private(result, 'result')


def playbook_file(playbook):
    """The path the playbook was loaded from, or None."""
    return getattr(playbook, '_file_name', None)


def inventory_sources(play):
    """The inventory sources of a play's run (as given on the command line, resolved), or None."""
    try:
        return list(play.get_variable_manager()._inventory._sources)
    except (AttributeError, TypeError):
        return None
