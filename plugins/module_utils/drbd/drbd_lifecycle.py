# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The lifecycle of a resource as a plan: drbdadm steps from its current state to the wanted one (up,
primary with initial sync or skip, disconnected, down), and the mount check.
"""

from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import DRBD_MAJOR


def mount_verdict(mounts, mountpoint, minor):
    """What is mounted on `mountpoint` (parse_mountinfo entries; the last one mounted there is the
    one visible): ('none', None), ('ours', entry) when it is DRBD device `minor` (by major:minor,
    never by the source name, which anyone can choose), else ('foreign', entry)."""
    top = None
    for m in mounts:
        if m['mountpoint'] == mountpoint:
            top = m
    if top is None:
        return 'none', None
    return ('ours' if top['major_minor'] == '%d:%d' % (DRBD_MAJOR, minor) else 'foreign'), top


STEPS = ('create-md', 'force-create-md', 'up', 'adjust', 'skip-initial-sync', 'force-primary', 'primary',
         'secondary', 'disconnect', 'connect', 'down', 'wipe-md')


def step_argv(step, name, drbdadm='drbdadm', config=None):
    """The drbdadm argv of one lifecycle step. drbdadm expands it into drbdsetup/drbdmeta calls
    (drbdadm -d prints them without running)."""
    if step not in STEPS:
        raise ValueError('unknown DRBD lifecycle step %r (one of %s)' % (step, ', '.join(STEPS)))
    base = [drbdadm] + (['-c', config] if config else [])
    tail = {
        'create-md': ['create-md', name],
        'force-create-md': ['create-md', '--force', name],
        'up': ['up', name],
        'adjust': ['adjust', name],
        'skip-initial-sync': ['new-current-uuid', '--clear-bitmap', name],
        'force-primary': ['primary', '--force', name],
        'primary': ['primary', name],
        'secondary': ['secondary', name],
        'disconnect': ['disconnect', name],
        'connect': ['connect', name],
        'down': ['down', name],
        # drbdadm-84 knows no `wipe-md --force` (drbd-utils 9.22: "unrecognized option"); the options after
        # `--` reach drbdmeta with 8.4 and 9 alike (drbdadm -d: `drbdmeta 0 v08 ... wipe-md --force`)
        'wipe-md': ['--', '--force', 'wipe-md', name],
    }[step]
    return base + tail


def is_fresh(entry):
    """Both sides Inconsistent and connected: a brand-new resource that has never synced."""
    if not entry or entry.get('disk_state') != 'Inconsistent':
        return False
    peers = [p for p in entry.get('peers', []) if not p.get('client')]
    return bool(peers) and all(p.get('connection') == 'Connected' and p.get('disk_state') == 'Inconsistent'
                               for p in peers)


def lifecycle_plan(state, current, initial_sync='none'):
    """The steps that take a resource from `current` (its parse_status_json entry, None when it is
    not up) to `state`; [] when it is there already (idempotence).

    state: up | primary | secondary | disconnected | connected | down.
    initial_sync (state primary, brand-new resource only): none | full (primary --force: a full
    initial sync from this node) | skip (new-current-uuid --clear-bitmap: only for disks that are
    identical, e.g. both freshly zeroed or both unused).
    """
    if state not in ('up', 'primary', 'secondary', 'disconnected', 'connected', 'down'):
        raise ValueError('unknown DRBD state %r' % state)
    if initial_sync not in ('none', 'full', 'skip'):
        raise ValueError('initial_sync %r is not one of none, full, skip' % initial_sync)
    if state == 'down':
        return ['down'] if current else []
    steps = [] if current else ['up']
    role = (current or {}).get('role', 'Secondary')
    if state == 'primary' and role != 'Primary':
        fresh = is_fresh(current) if current else False
        if initial_sync == 'skip' and (fresh or not current):
            steps += ['skip-initial-sync', 'primary']
        elif initial_sync == 'full' and (fresh or not current):
            steps += ['force-primary']
        else:
            steps += ['primary']
    elif state == 'secondary' and role == 'Primary':
        steps += ['secondary']
    elif state == 'disconnected':
        if not current or any(p.get('connection') not in ('StandAlone',) for p in current.get('peers', [])):
            steps += ['disconnect']
    elif state == 'connected' and current and any(p.get('connection') == 'StandAlone'
                                                  for p in current.get('peers', [])):
        steps += ['connect']
    return steps
