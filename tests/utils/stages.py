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


class Stage(object):
    def __init__(self, name, deps, logdir, alone):
        self.name, self.deps, self.alone = name, deps, alone
        self.log = os.path.join(logdir, name + '.log')
        self.proc = self.started = self.ended = self.rc = None

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
        rc = self.proc.poll()
        if rc is not None:
            self.rc, self.ended = rc, time.monotonic()
            if not self.alone:
                with open(self.log, errors='replace') as f:
                    sys.stdout.write(f.read())
            print('stage %s: %s in %s' % (self.name, 'passed' if rc == 0 else 'FAILED (exit %d)' % rc,
                                          fmt(self.ended - self.started)), flush=True)
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
    t0, done, failed = time.monotonic(), [], False
    for i, group in enumerate(groups):
        if failed:
            print('stages not run after a failure: %s' % ' '.join(n for n, _d in group), flush=True)
            continue
        g0 = time.monotonic()
        stages = run_group(group, max(1, args.jobs), logdir)
        done.extend(stages)
        failed = any(s.rc != 0 for s in stages)
        print('group %d (%s): %s' % (i + 1, ' '.join(s.name for s in stages), fmt(time.monotonic() - g0)), flush=True)
    total = time.monotonic() - t0
    rows = [{'stage': s.name, 'seconds': round(s.ended - s.started, 1), 'rc': s.rc} for s in done]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, 'w') as f:
        json.dump({'total_s': round(total, 1), 'stages': rows}, f, indent=1)
    print('\n%-22s %8s  %s' % ('stage', 'time', 'result'))
    for row in rows:
        print('%-22s %8s  %s' % (row['stage'], fmt(row['seconds']), 'passed' if row['rc'] == 0 else 'FAILED'))
    print('%-22s %8s  (wall)' % ('all', fmt(total)))
    return 1 if failed or len(done) < sum(len(g) for g in groups) else 0


if __name__ == '__main__':
    sys.exit(main())
