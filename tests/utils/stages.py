# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make test`'s stages: groups of make targets, the stages of a group up to --jobs at a time, the
groups one after the other; each stage's time printed as it ends and a table at the end.

    python tests/utils/stages.py [--jobs 2] [--out build/stages.json] GROUP [-- GROUP ...]

A GROUP is make targets; `target:dep1,dep2` starts `target` once those of its group have passed
(the compat venvs before the runs that use them). A stage of a group that runs alone streams its
output as it comes; stages running at once write to build/stages/<target>.log, printed whole when
each ends. A failed stage does not stop the others of its group (their results are wanted too);
no later group starts after a failure. Exit status: 0 when every stage passed, else 1.

Each stage's line gives its wall time and the CPU time of its process tree (what make and its
descendants used, as far as they were waited for: daemons a test starts and leaves to init are not
in it); each group's line gives the machine's busy CPU time over the group's wall time from
/proc/stat (every process, daemons and qemu guests included) against what its cores could give.
The sum of the groups' busy CPU time divided by the cores is the floor no arrangement of the stages
can go below (docs/development.md, "Stage times").

Why groups: the checks (sanity, lint, the unit tests under three controllers, fuzzing, the compat
playbooks) only use the CPU and decide nothing by time, so they share the two cores; the integration
tests measure (quiet verdicts, throttled devices, runs started together) and run with nothing else.
"""

import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_groups(words):
    """[[(target, [deps])]] from the command line words (`--` separates groups)."""
    groups, current = [], []
    for word in words + ['--']:
        if word == '--':
            if current:
                groups.append(current)
            current = []
            continue
        name, _sep, deps = word.partition(':')
        current.append((name, [d for d in deps.split(',') if d]))
    for group in groups:
        names = [n for n, _d in group]
        for name, deps in group:
            unknown = [d for d in deps if d not in names]
            if unknown:
                raise SystemExit('stages: %s waits for %s, which is not in its group (%s)' % (
                    name, ', '.join(unknown), ' '.join(names)))
    return groups


def fmt(seconds):
    return '%d:%02d' % divmod(int(round(seconds)), 60)


def busy_seconds(stat_path='/proc/stat'):
    """(busy, total) CPU seconds of the whole machine since boot: the first line of /proc/stat, idle and
    iowait counted as not busy; None where there is no /proc/stat."""
    try:
        with open(stat_path) as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    hz = os.sysconf('SC_CLK_TCK')
    idle = sum(fields[3:5])
    # guest time is already in user time (and guest_nice in nice): the first eight fields are the total
    total = sum(fields[:8])
    return (total - idle) / float(hz), total / float(hz)


def busy_between(before, after):
    """{'busy_s', 'capacity_s'} between two busy_seconds() readings (None when either is missing)."""
    if before is None or after is None:
        return None
    return {'busy_s': round(after[0] - before[0], 1), 'capacity_s': round(after[1] - before[1], 1)}


class Stage(object):
    def __init__(self, name, deps, logdir, alone):
        self.name, self.deps, self.alone = name, deps, alone
        self.log = os.path.join(logdir, name + '.log')
        self.proc = self.started = self.ended = self.rc = self.cpu_s = None

    def start(self):
        argv = ['make', '--no-print-directory', self.name]
        if self.alone:
            self.proc = subprocess.Popen(argv, cwd=REPO)
        else:
            out = open(self.log, 'w')
            self.proc = subprocess.Popen(argv, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
            out.close()
        self.started = time.monotonic()
        print('stage %s: started%s' % (self.name, '' if self.alone else ' (its output when it ends)'), flush=True)

    def poll(self):
        if self.proc is None or self.rc is not None:
            return self.rc
        # wait4, not poll: its resource usage is the CPU time of make and the descendants it waited for
        pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
        if pid:
            rc = self.proc.returncode = os.waitstatus_to_exitcode(status)
            self.cpu_s = usage.ru_utime + usage.ru_stime
            self.rc, self.ended = rc, time.monotonic()
            if not self.alone:
                with open(self.log, errors='replace') as f:
                    sys.stdout.write(f.read())
            print('stage %s: %s in %s (CPU %s)' % (self.name, 'passed' if rc == 0 else 'FAILED (exit %d)' % rc,
                                                   fmt(self.ended - self.started), fmt(self.cpu_s)), flush=True)
        return self.rc

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run_group(group, jobs, logdir):
    stages = [Stage(name, deps, logdir, alone=len(group) == 1 or jobs == 1) for name, deps in group]
    by_name = dict((s.name, s) for s in stages)
    try:
        while any(s.rc is None for s in stages):
            running = [s for s in stages if s.proc is not None and s.rc is None]
            for s in stages:
                if s.proc is not None or len(running) >= jobs:
                    continue
                deps = [by_name[d] for d in s.deps]
                if any(d.rc not in (None, 0) for d in deps):
                    s.rc, s.started, s.ended = -1, time.monotonic(), time.monotonic()
                    print('stage %s: not run (%s failed)' % (s.name, ', '.join(d.name for d in deps if d.rc)), flush=True)
                elif all(d.rc == 0 for d in deps):
                    s.start()
                    running.append(s)
            for s in running:
                s.poll()
            time.sleep(0.5)
    finally:
        for s in stages:
            s.stop()
    return stages


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--jobs', type=int, default=2, help='stages of a group running at once')
    ap.add_argument('--out', default=os.path.join(REPO, 'build', 'stages.json'))
    ap.add_argument('groups', nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    groups = parse_groups(list(args.groups))
    logdir = os.path.join(REPO, 'build', 'stages')
    os.makedirs(logdir, exist_ok=True)
    t0, done, failed, busy = time.monotonic(), [], False, []
    for i, group in enumerate(groups):
        if failed:
            print('stages not run after a failure: %s' % ' '.join(n for n, _d in group), flush=True)
            continue
        g0, b0 = time.monotonic(), busy_seconds()
        stages = run_group(group, max(1, args.jobs), logdir)
        done.extend(stages)
        failed = any(s.rc != 0 for s in stages)
        cpu = busy_between(b0, busy_seconds())
        busy.append(dict(cpu or {}, group=' '.join(s.name for s in stages), seconds=round(time.monotonic() - g0, 1)))
        used = '' if not cpu else ', the machine busy %s of the %s its cores could give (%.0f %%)' % (
            fmt(cpu['busy_s']), fmt(cpu['capacity_s']), 100.0 * cpu['busy_s'] / max(cpu['capacity_s'], 1))
        print('group %d (%s): %s%s' % (i + 1, busy[-1]['group'], fmt(busy[-1]['seconds']), used), flush=True)
    total = time.monotonic() - t0
    rows = [{'stage': s.name, 'seconds': round(s.ended - s.started, 1), 'rc': s.rc,
             'cpu_s': None if s.cpu_s is None else round(s.cpu_s, 1)} for s in done]
    cores = os.cpu_count() or 1
    busy_s = sum(g.get('busy_s', 0) for g in busy)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, 'w') as f:
        json.dump({'total_s': round(total, 1), 'stages': rows, 'groups': busy, 'cores': cores,
                   'busy_s': round(busy_s, 1)}, f, indent=1)
    print('\n%-22s %8s %8s  %s' % ('stage', 'time', 'CPU', 'result'))
    for row in rows:
        print('%-22s %8s %8s  %s' % (row['stage'], fmt(row['seconds']), '-' if row['cpu_s'] is None else fmt(row['cpu_s']),
                                     'passed' if row['rc'] == 0 else 'FAILED'))
    print('%-22s %8s %8s  (wall; CPU: the machine busy, all processes)' % ('all', fmt(total), fmt(busy_s)))
    print('floor on %d cores (the busy CPU time spread evenly over them): %s' % (cores, fmt(busy_s / cores)))
    return 1 if failed or len(done) < sum(len(g) for g in groups) else 0


if __name__ == '__main__':
    sys.exit(main())
