#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: observe
short_description: Observe a machine for a window of time that other tasks agree on
version_added: 0.3.0
description:
  - Samples what a machine does from an agreed start until a stop, with a sampler of its own, for a
    machine that runs no benchmark itself but holds what one measures (the hypervisor host under a
    guest, a DRBD peer). The benchmark modules observe their own runs (their C(observe_interval_s)
    option); this module observes the same kind of figures for a window that other tasks decide.
  - O(state=started) resolves the layer stack of each of O(paths) (block devices down to the disks,
    through partitions, loop devices and their backing files, device-mapper, md, DRBD), makes an owned
    state directory C(<parent>/benchlab-observe-<random>/) with the benchlab owner marker (O(run_id),
    O(run_key)), and starts a detached sampler process recorded in that marker. The sampler takes its
    first sample at O(start_at) (or at once) and one every O(interval_s) until it is stopped or
    O(max_s) has passed.
  - O(state=stopped) stops the sampler of O(id) (only the process recorded in that directory's marker,
    while it still has its recorded start time), which takes its last sample right then, and returns
    the summary (the shape of a record's C(observed)) and the time series (C(bench_observed)), then
    removes the state directory unless O(keep). A directory without benchlab's marker, of another run
    id or run key, is refused.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  state:
    description: Start the sampler, or stop it and return what it saw.
    type: str
    choices: [started, stopped]
    required: true
  paths:
    description:
      - Paths or block devices whose layer stacks are watched (with O(state=started)). With O(guest), a file
        that backs loop devices (a guest's disk image) is watched from each such loop device down.
    type: list
    elements: path
    default: []
  interfaces:
    description: Network interfaces to watch (bytes, packets, drops), such as a DRBD replication link.
    type: list
    elements: str
    default: []
  toward:
    description:
      - Addresses whose route is watched too (the interface the kernel sends to each from, such as a DRBD
        peer's replication address), added to O(interfaces).
    type: list
    elements: str
    default: []
  interval_s:
    description: Seconds between samples.
    type: float
    default: 1.0
  start_at:
    description:
      - The agreed start (Unix time in seconds); the sampler waits until then. Default at once.
    type: float
  max_s:
    description: The sampler stops by itself after this many seconds (a stop that never comes).
    type: float
    default: 3600
  parent:
    description:
      - The directory the owned state directory is made in.
      - A directory for temporary files, C(/tmp), C(/var/tmp), C(/dev/shm), C(/run) or C($TMPDIR), or one
        below them; any other (C(/etc), say) is refused.
    type: path
    default: /var/tmp
  id:
    description: The state directory O(state=started) returned (C(observe_id)); required with O(state=stopped).
    type: path
  run_id:
    description: The run id written into the owner marker; O(state=stopped) must name the same.
    type: str
    required: true
  run_key:
    description: The run key written into the owner marker; O(state=stopped) must name the same.
    type: str
  keep:
    description: Keep the state directory (its samples) after the stop.
    type: bool
    default: false
  guest:
    description:
      - The guest this machine holds, with O(state=started). The CPU its own cgroup uses is sampled with the
        rest, so that the summary tells the guest's share of the host's CPU (C(cpu.guest_pct), C(cpu.guest_cpu_s))
        from the work that is not the guest's. C(kind=lxc) finds the container's init process with
        C(lxc-info), C(kind=libvirt) reads the domain's pid file C(/run/libvirt/qemu/<name>.pid),
        C(kind=pid) takes a process id; the cgroup is that process's (C(/proc/<pid>/cgroup), cgroup v1
        cpuacct or v2 cpu.stat).
      - A guest whose cgroup cannot be found is named in C(missing); the rest is observed all the same.
    type: dict
    suboptions:
      kind:
        description: How the guest is found.
        type: str
        choices: [lxc, libvirt, pid]
        required: true
      name:
        description: The container's or domain's name, or the process id.
        type: str
        required: true
  since:
    description:
      - With O(state=stopped), the start of the window to summarize (Unix time, the target's C(observed.wall_start)),
        so that a sampler started before a run on another machine is cut to that run's window (clocks in sync).
    type: float
  until:
    description: With O(state=stopped), the end of the window to summarize (Unix time).
    type: float
notes:
  - Reads /proc and sysfs only; root is needed for the loop devices' backing files of other users.
attributes:
  check_mode:
    support: full
    description: Starts and stops nothing; says what it would watch.
  diff_mode:
    support: none
    description: Nothing to diff.
'''

EXAMPLES = r'''
- name: Observe the hypervisor host while the guest runs its benchmark
  benchlab.bench.observe:
    state: started
    paths: [/var/lib/libvirt/images]
    start_at: "{{ agreed_start }}"
    run_id: "{{ bench_run_id }}"
  delegate_to: kvm-host-1
  register: host_observer

- name: Stop it and keep what it saw
  benchlab.bench.observe:
    state: stopped
    id: "{{ host_observer.observe_id }}"
    run_id: "{{ bench_run_id }}"
  delegate_to: kvm-host-1
  register: host_observed
# host_observed.observed ->
#   {interval_s: 1.0, samples: 31, window_s: 30.2,
#    devices: [{name: vdb, kind: disk, layer: 2, read_bytes: 0, write_bytes: 536870912,
#               util_pct_mean: 97.1, util_pct_max: 100, await_ms: 4.2, ...}],
#    cpu: {busy_pct_mean: 31.0, max_core_pct: 62.0, iowait_pct: 12.0, steal_pct: 0.0, ...},
#    memory: {...}, psi: {...}, net: [...], missing: []}
'''

RETURN = r'''
observe_id:
  description: The owned state directory of the sampler (pass it as O(id) to stop it).
  returned: with state=started
  type: str
pid:
  description: The sampler's process id.
  returned: with state=started, not in check mode
  type: int
pid_start:
  description: The sampler's start time (/proc/<pid>/stat field 22), with which a stop makes sure it signals that process.
  returned: with state=started, not in check mode
  type: int
layers:
  description: The layer stacks watched (module_utils/observe/layers.py).
  returned: with state=started
  type: list
  elements: dict
guest:
  description: The guest found for O(guest) (C(kind), C(name), C(pid), C(cgroup)), or its C(error).
  returned: with state=started and O(guest)
  type: dict
observed:
  description:
    - What the machine did in the window, in the shape of a record's C(observed) (without a tool); with
      O(guest) also C(guest), C(cpu.guest_cpu_s) and C(cpu.guest_pct); and C(guest_devices), the block
      devices of the stacks of O(paths) (what holds the guest's disk).
  returned: with state=stopped, when the sampler took two samples or more
  type: dict
bench_observed:
  description: The window's time series, by series id (the report callback stores them).
  returned: with state=stopped, when observed is returned
  type: dict
signalled:
  description: The processes the stop signalled ([{pid, signal}]).
  returned: with state=stopped
  type: list
  elements: dict
'''

import json
import os
import sys

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.benchlab.bench.plugins.module_utils.observe.layers import block_layers, image_stack
from ansible_collections.benchlab.bench.plugins.module_utils.observe.observe import (
    STATE_FILE, Observer, cgroup_of_pid, crop_samples, route_interfaces, read_samples, sampler_loop, summarize_samples, target_layers)
from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import (
    PREFIX, create_workdir, marker_matches, proc_start_time, read_marker, remove_tree, stop_recorded, update_marker)

TOOL = 'observe'


def _detach(workdir, state):
    """Fork the sampler: a session of its own, stdio on /dev/null (Ansible waits for the module's
    output to close), then sampler_loop until it is stopped. Returns its pid in the parent."""
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.chdir(workdir)
        sampler_loop(workdir, state)
    finally:
        os._exit(0)


def find_guest(module, guest):
    """{kind, name, pid, cgroup} of the guest, or {kind, name, error}."""
    out = dict(kind=guest['kind'], name=guest['name'])
    pid = None
    if guest['kind'] == 'pid':
        pid = guest['name']
    elif guest['kind'] == 'libvirt':
        path = os.path.join('/run/libvirt/qemu', os.path.basename(guest['name']) + '.pid')
        try:
            with open(path) as f:
                pid = f.read().strip()
        except (IOError, OSError) as e:
            out['error'] = 'cannot read %s (%s)' % (path, e)
    else:
        lxc_info = module.get_bin_path('lxc-info')
        if lxc_info is None:
            out['error'] = 'lxc-info not found'
        else:
            rc, stdout, _err = module.run_command([lxc_info, '-n', guest['name'], '-p', '-H'])
            pid = stdout.strip() if rc == 0 else None
            if not pid:
                out['error'] = 'lxc-info found no running container %s' % guest['name']
    if pid is not None and 'error' not in out:
        if not str(pid).isdigit():
            out['error'] = 'not a process id: %r' % pid
        else:
            out['pid'] = int(pid)
            out['cgroup'] = cgroup_of_pid(int(pid))
            if out['cgroup'] is None:
                out['error'] = 'process %s is in no cgroup of its own (its CPU would be the whole machine\'s)' % pid
    return out


# Where an observer's state directory may go: a directory for temporary files (the state is a few
# small files, removed at the stop), never a system directory such as /etc.
TEMP_ROOTS = ('/tmp', '/var/tmp', '/dev/shm', '/run')


def parent_problem(parent, tmpdir=None):
    """None when `parent` (resolved) is a temporary-files directory or below one (TEMP_ROOTS, or an
    absolute TMPDIR), else the message refusing it."""
    real = os.path.realpath(parent)
    roots = TEMP_ROOTS + ((os.path.realpath(tmpdir),) if tmpdir and os.path.isabs(tmpdir) else ())
    if any(real == r or real.startswith(r.rstrip('/') + '/') for r in roots):
        return None
    return ('parent: %s%s is not a directory for temporary files: the observer\'s state directory goes only in '
            '%s or $TMPDIR, or below them' % (parent, '' if real == parent else ' (%s)' % real, ', '.join(TEMP_ROOTS)))


def start(module, p):
    layers = []
    for path in p['paths']:
        if not os.path.exists(path):
            module.fail_json(msg='paths: %s does not exist' % path)
        try:    # an image a loop device holds: from that loop device down
            layers.extend(image_stack(path) if p['guest'] else target_layers(path))
        except (OSError, ValueError):
            pass
    for address in p['toward']:
        for name in route_interfaces(address):
            if name not in p['interfaces']:
                p['interfaces'].append(name)
    if p['interval_s'] <= 0 or p['max_s'] <= 0:
        module.fail_json(msg='interval_s and max_s must be greater than zero')
    if not os.path.isdir(p['parent']):
        module.fail_json(msg='parent: %s is not a directory' % p['parent'])
    problem = parent_problem(p['parent'], os.environ.get('TMPDIR'))
    if problem:
        module.fail_json(msg=problem)
    probe = Observer(0, layers, interfaces=p['interfaces'])
    probe.start()
    state = {'interval_s': p['interval_s'], 'layers': layers, 'interfaces': p['interfaces'], 'link_rates': {},
             'start_at': p['start_at'], 'max_s': p['max_s'], 'missing': probe.missing_sources(),
             'guest_devices': [l['name'] for l in block_layers(layers)]}
    if p['guest']:
        state['guest'] = find_guest(module, p['guest'])
        if state['guest'].get('error'):
            state['missing'].append({'source': 'guest cgroup', 'what': p['guest']['name'], 'why': state['guest']['error']})
    if module.check_mode:
        module.exit_json(changed=False, observe_id=os.path.join(p['parent'], '%s%s-XXXXXX' % (PREFIX, TOOL)),
                         layers=layers, missing=state['missing'])
    workdir = create_workdir(p['parent'], TOOL, run_id=p['run_id'], run_key=p['run_key'], keep=p['keep'])
    with open(os.path.join(workdir, STATE_FILE), 'w') as f:
        json.dump(state, f)
    sys.stdout.flush()
    pid = _detach(workdir, state)
    pid_start = proc_start_time(pid)
    update_marker(workdir, pgid=pid, pid_start=pid_start)
    extra = dict(guest=state['guest']) if 'guest' in state else {}
    module.exit_json(changed=True, observe_id=workdir, pid=pid, pid_start=pid_start, layers=layers,
                     missing=state['missing'], **extra)


def stop(module, p):
    workdir = p['id']
    if not workdir:
        module.fail_json(msg='id is required with state=stopped (the observe_id state=started returned)')
    real = os.path.realpath(workdir)
    if not os.path.basename(real).startswith('%s%s-' % (PREFIX, TOOL)) or not os.path.isdir(real):
        module.fail_json(msg='id: %s is no benchlab observe state directory' % workdir)
    doc, reason = read_marker(real)
    if doc is None or not marker_matches(doc, p['run_id'], p['run_key']):
        module.fail_json(msg='id: %s has no benchlab owner marker of run id %r and run key %r (%s): not ours, left '
                             'alone' % (workdir, p['run_id'], p['run_key'], reason or 'another run\'s marker'))
    if module.check_mode:
        module.exit_json(changed=False)
    signalled = stop_recorded(doc.get('pgid'), doc.get('pid_start'), grace=5.0)
    try:
        with open(os.path.join(real, STATE_FILE)) as f:
            state = json.load(f)
    except (IOError, OSError, ValueError) as e:
        module.fail_json(msg='id: %s: cannot read its state (%s)' % (workdir, e), signalled=signalled)
    observed, series = summarize_samples(crop_samples(read_samples(real), p['since'], p['until']), state)
    if not p['keep']:
        remove_tree(real)
    result = dict(changed=True, signalled=signalled)
    if observed is not None:
        series_id = os.urandom(6).hex()
        observed['series'] = series_id
        observed['guest_devices'] = state.get('guest_devices') or []
        if state.get('guest'):
            observed['guest'] = state['guest']
        result.update(observed=observed, bench_observed={series_id: series})
    else:
        result['msg'] = 'the sampler took fewer than two samples (stopped before start_at?): nothing to summarize'
    module.exit_json(**result)


def main():
    module = AnsibleModule(argument_spec=dict(
        state=dict(type='str', choices=['started', 'stopped'], required=True),
        paths=dict(type='list', elements='path', default=[]),
        interfaces=dict(type='list', elements='str', default=[]),
        toward=dict(type='list', elements='str', default=[]),
        interval_s=dict(type='float', default=1.0),
        start_at=dict(type='float'),
        max_s=dict(type='float', default=3600),
        parent=dict(type='path', default='/var/tmp'),
        id=dict(type='path'),
        run_id=dict(type='str', required=True),
        run_key=dict(type='str', no_log=False),
        keep=dict(type='bool', default=False),
        guest=dict(type='dict', options=dict(kind=dict(type='str', choices=['lxc', 'libvirt', 'pid'], required=True),
                                             name=dict(type='str', required=True))),
        since=dict(type='float'),
        until=dict(type='float'),
    ), supports_check_mode=True)
    p = module.params
    if p['state'] == 'started':
        start(module, p)
    stop(module, p)


if __name__ == '__main__':
    main()
