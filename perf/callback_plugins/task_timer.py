# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a play's time goes, for `make perf` (perf/perf.py --breakdown): the wall time of every task
(from its start to the next task's start, so the strategy's own work between tasks counts to the
task before it), summed by task name, written as JSON to $BENCHLAB_PERF_TIMER. Not part of the
collection: perf.py enables it with ANSIBLE_CALLBACK_PLUGINS."""

from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = '''
name: task_timer
type: aggregate
short_description: wall time per task name, for perf/perf.py
description: [Wall time per task name, written as JSON to $BENCHLAB_PERF_TIMER.]
'''


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'task_timer'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.start = time.monotonic()
        self.current = None
        self.tasks = {}
        self.startup = _since_process_start()

    def _close(self, now):
        if self.current:
            name, t0 = self.current
            entry = self.tasks.setdefault(name, {'s': 0.0, 'count': 0})
            entry['s'] += now - t0
            entry['count'] += 1

    def _start(self, name):
        now = time.monotonic()
        self._close(now)
        self.current = (name, now)

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._start('%s | %s' % (task.get_path() and os.path.basename(task.get_path().split(':')[0]) or '', task.get_name()))

    def v2_playbook_on_handler_task_start(self, task):
        self._start(task.get_name())

    def v2_playbook_on_play_start(self, play):
        if not self.tasks and self.current is None:   # from this callback's load to the first play
            self.tasks['startup: callbacks loaded to the first play'] = {'s': time.monotonic() - self.start, 'count': 1}
        self._start('play start: %s' % play.get_name())

    def v2_playbook_on_stats(self, stats):
        now = time.monotonic()
        self._close(now)
        self.current = None
        path = os.environ.get('BENCHLAB_PERF_TIMER')
        if path:
            with open(path, 'w') as f:
                json.dump({'wall_s': now - self.start, 'tasks': self.tasks, 'process_to_callback_s': self.startup}, f, indent=1)


def _since_process_start():
    """Seconds from this process's start (/proc/self/stat field 22, the boot clock) to now, or None."""
    try:
        with open('/proc/self/stat') as f:
            start_ticks = int(f.read().rsplit(')', 1)[1].split()[19])
        with open('/proc/uptime') as f:
            uptime = float(f.read().split()[0])
        return uptime - start_ticks / os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError, IndexError):
        return None
