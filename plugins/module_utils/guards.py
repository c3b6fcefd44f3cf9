# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Methodology guards a benchmark module applies right before it measures (DESIGN.md section 5).

- quiescence: the load average per CPU and other benchmark processes running on the target; warn,
  or wait up to `quiesce_wait_s` for the machine to calm down;
- cool-down: sleep `cooldown_s` before the measurement (the bench_run role asks for it between
  repetitions);
- warm-up: a run marked `warmup` is measured and stored but not counted by the analysis;
- `hypervisor_caches_dropped`: set by the bench_run role when it dropped the caches of the guest's
  hypervisor host before the run (the module cannot reach that host itself).
What was done is returned for the record's ``params.guards``; what went wrong becomes a warning.
"""

import os
import time

# Processes whose presence means another benchmark (or a compressor) competes for the machine.
BENCH_PROCESSES = ('fio', 'bonnie++', 'dbench', 'sysbench', 'iperf3', 'iperf', 'bzip2', 'xz', 'zstd', 'stress',
                   'stress-ng')

DEFAULTS = {
    'quiesce': True,
    'max_load_per_cpu': 0.75,
    'quiesce_wait_s': 0,
    'cooldown_s': 0,
    'warmup': False,
    'hypervisor_caches_dropped': None,
    'concurrency': None,
}
_TYPES = {'quiesce': bool, 'max_load_per_cpu': (int, float), 'quiesce_wait_s': (int, float),
          'cooldown_s': (int, float), 'warmup': bool, 'hypervisor_caches_dropped': (bool, type(None)),
          'concurrency': (int, type(None))}


class GuardError(ValueError):
    """A guards option of the wrong name or type; the message names it."""


def normalize(guards):
    """Defaults merged with `guards`; unknown keys and wrong types raise GuardError naming them."""
    out = dict(DEFAULTS)
    for key, value in (guards or {}).items():
        if key not in DEFAULTS:
            raise GuardError('guards.%s: unknown guard (known: %s)' % (key, ', '.join(sorted(DEFAULTS))))
        if isinstance(value, bool) and key in ('max_load_per_cpu', 'quiesce_wait_s', 'cooldown_s', 'concurrency'):
            raise GuardError('guards.%s: expected a number, got %r' % (key, value))
        if not isinstance(value, _TYPES[key]):
            raise GuardError('guards.%s: expected %s, got %r' % (key, 'true/false' if _TYPES[key] is bool else 'a number', value))
        if key in ('max_load_per_cpu', 'quiesce_wait_s', 'cooldown_s') and value < 0:
            raise GuardError('guards.%s: must not be negative, got %r' % (key, value))
        if key == 'concurrency' and value is not None and value < 1:
            raise GuardError('guards.concurrency: must be 1 or more, got %r' % (value,))
        out[key] = value
    return out


def competing_processes(proc='/proc', own_pid=None):
    """[(pid, name)] of benchmark processes running now, other than `own_pid` and its children."""
    own_pid = own_pid or os.getpid()
    found = []
    try:
        entries = os.listdir(proc)
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == own_pid:
            continue
        try:
            with open(os.path.join(proc, entry, 'comm')) as f:
                name = f.read().strip()
            if name not in BENCH_PROCESSES:
                continue
            with open(os.path.join(proc, entry, 'stat')) as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid != own_pid:
            found.append((int(entry), name))
    return sorted(found)


def quiet_verdict(load1, cpus, max_load_per_cpu, competing):
    """(quiet, reason): is the machine quiet enough to measure? Pure."""
    reasons = []
    limit = max_load_per_cpu * max(1, cpus)
    if load1 > limit:
        reasons.append('load average %.2f is above %.2f (%.2f per CPU x %d CPUs)' % (load1, limit, max_load_per_cpu, cpus))
    if competing:
        reasons.append('other benchmark processes are running: %s' % ', '.join('%s[%d]' % (n, p) for p, n in competing))
    return (not reasons), '; '.join(reasons)


def apply_guards(guards, sleep=time.sleep, now=time.monotonic, loadavg=os.getloadavg, cpus=None,
                 competing=competing_processes):
    """Apply the guards before a measurement. Returns (params for the record, warnings)."""
    g = normalize(guards)
    cpus = cpus or os.cpu_count() or 1
    warnings = []
    record = {'quiesce': g['quiesce'], 'cooldown_s': g['cooldown_s'], 'warmup': g['warmup'],
              'hypervisor_caches_dropped': g['hypervisor_caches_dropped']}
    if g['concurrency'] is not None:
        record['concurrency'] = g['concurrency']
    if g['cooldown_s']:
        sleep(g['cooldown_s'])
    if g['quiesce']:
        start = now()
        while True:
            load1 = loadavg()[0]
            others = competing()
            quiet, reason = quiet_verdict(load1, cpus, g['max_load_per_cpu'], others)
            waited = now() - start
            if quiet or waited >= g['quiesce_wait_s']:
                break
            sleep(min(2.0, g['quiesce_wait_s'] - waited))
        record.update(load_before=round(load1, 2), waited_s=round(waited, 1), quiet=quiet)
        if not quiet:
            warnings.append('machine not quiet before the measurement: %s%s' % (
                reason, ' (waited %.0f s)' % waited if g['quiesce_wait_s'] else ''))
    if g['warmup']:
        warnings.append('warm-up run: stored, not counted in the statistics')
    return record, warnings
