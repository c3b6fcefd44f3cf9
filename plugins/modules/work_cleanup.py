#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: work_cleanup
short_description: Remove exactly the work directories (and stop exactly the processes) of one run
version_added: 0.1.0
description:
  - Every benchmark module of this collection works in a private directory
    C(<path>/benchlab-<tool>-<random>/) holding an ownership marker C(.benchlab-owner.json) with the
    O(run_id) and O(run_key) it ran for, whether it is to be kept, and, while the tool runs, the
    tool's process group and the start time of its leader.
  - For each directory in O(path), this module removes only the work directories directly inside it
    whose marker is a regular file owned by the user running the module and names both O(run_id)
    and O(run_key), and says C(keep) false. Before removing one it stops the processes recorded in it
    (the recorded process group and the leader's descendants), only while the recorded leader still
    has the recorded start time (a reused pid is never signalled) - SIGTERM, up to O(grace) seconds,
    then SIGKILL. A process is never chosen by its working directory - a user's shell that sits in
    the work directory is left alone.
  - Everything else is left alone and listed in RV(kept) - directories without a marker, other
    runs' work, kept work, user files and directories that happen to be named C(benchlab-*).
    Nothing is ever selected by a name or command-line pattern.
  - The C(benchlab.bench.bench_run) role runs it when a run fails (the tool failed or its timeout
    killed the module).
author:
  - benchlab.bench maintainers (@benchlab)
options:
  path:
    description:
      - The directories whose work directories to clean (the cell's path; dd also keeps its random
        source in C(/dev/shm)). A path that is not a directory (a block device, a missing path) is
        listed in RV(kept) and skipped.
    type: list
    elements: path
    required: true
  run_id:
    description: The run id the markers must name.
    type: str
    required: true
  run_key:
    description: The run key (the plan's key of the benchmark and cell) the markers must name.
    type: str
    required: true
  grace:
    description: Seconds between SIGTERM and SIGKILL for the recorded processes.
    type: float
    default: 3.0
attributes:
  check_mode:
    support: full
    description: Reports what would be stopped and removed, without doing it.
  diff_mode:
    support: none
    description: Nothing to diff.
notes:
  - Run it as the same user as the benchmark modules (markers of other users are not trusted).
seealso:
  - module: benchlab.bench.dd
  - module: benchlab.bench.fio
'''

EXAMPLES = r'''
- name: Remove what the failed run left in its cell
  benchlab.bench.work_cleanup:
    path: /srv/bench
    run_id: 20260101T120000Z-ab12
    run_key: 3f2a9c0d1e2b4a5c
'''

RETURN = r'''
removed:
  description: The work directories removed (in check mode, that would be removed).
  returned: always
  type: list
  elements: str
  sample: ["/srv/bench/benchlab-fio-k2j3h4"]
stopped:
  description: The processes signalled, with the work directory that recorded them and the last signal.
  returned: always
  type: list
  elements: dict
  sample: [{"dir": "/srv/bench/benchlab-fio-k2j3h4", "pid": 4242, "signal": "SIGTERM"}]
kept:
  description: What was left alone, with the reason (no marker, another run's marker, keep true, ...).
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/srv/bench/benchlab-keepme", "reason": "no marker (No such file or directory)"}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import cleanup_owned


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='list', elements='path', required=True),
            run_id=dict(type='str', required=True),
            run_key=dict(type='str', required=True, no_log=False),
            grace=dict(type='float', default=3.0),
        ),
        supports_check_mode=True,
    )
    p = module.params
    for key in ('run_id', 'run_key'):
        if not p[key] or not p[key].strip():
            module.fail_json(msg='%s must not be empty: cleanup acts only on work directories of one named run' % key)
    if p['grace'] < 0:
        module.fail_json(msg='grace must not be negative, got %s' % p['grace'])
    try:
        out = cleanup_owned(p['path'], p['run_id'], p['run_key'], grace=p['grace'], check=module.check_mode)
    except OSError as e:
        module.fail_json(msg='cleaning the work directories of run %s in %s failed: %s'
                             % (p['run_id'], ', '.join(p['path']), e))
    module.exit_json(changed=bool(out['removed'] or out['stopped']), **out)


if __name__ == '__main__':
    main()
