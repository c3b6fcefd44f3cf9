"""`make test-vm`: the guest image first (built once, cached), then the VM tests at the same time.

Each test file runs in a pytest process of its own, all at once: every test has its own private
libvirtd (own mount and network namespaces, libvirtd_lab.py), so their networks, bridges and
addresses never meet, and much of each test is waiting (guests booting, iperf runs, a paused
resync) that the others fill: 12.5-13.5 minutes at once here (2026-12-04, 2 cores), where one after
the other took about 30 before (2 + 14 + 14 minutes, the four-guest test with longer iperf runs).

What they share is made here, not by the tests:
- the guest image (guest_image.ensure_image), so two tests never build it at once;
- the mount points libvirtd_lab bind-mounts its private state directories onto (/etc/libvirt,
  /var/lib/libvirt, ... when missing): a lab removes the mount points it made when it stops, which
  would pull them from under a lab still running; here they are made before and removed (those
  made here, if empty) after every test ended.

Each process writes its output to <work>/<name>.log (printed when it ends) and its pytest temporary
files under <work>/<name> (<work>: /tmp/bvm-*, short for the labs' sockets); <work> is removed when
everything passed and kept (its path printed) otherwise. The exit status is non-zero when any test
failed or was skipped (a skip means root, a tool or community.libvirt was missing: nothing ran;
--allow-skip accepts that). `-j 1` runs them one after the other.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

sys.path.insert(0, str(HERE.parents[1] / 'tests' / 'utils'))

import guest_image  # noqa: E402  pylint: disable=wrong-import-position
import libvirtd_lab  # noqa: E402  pylint: disable=wrong-import-position
from stages import busy_between, busy_seconds, fmt  # noqa: E402  pylint: disable=wrong-import-position

# the longest first: with -j smaller than their number, it starts at once
TESTS = ['test_drbd_vm.py', 'test_kvm_multi.py', 'test_libvirtd_lab.py']


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-j', '--jobs', type=int, default=len(TESTS), help='tests running at once')
    ap.add_argument('--allow-skip', action='store_true', help='a skipped test is no failure')
    ap.add_argument('tests', nargs='*', default=TESTS, help='test files under tests/vm (default: all)')
    args = ap.parse_args(argv)
    # a SIGTERM (CI's timeout) ends this the way Ctrl-C does: the finally below stops the tests
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    t0, b0 = time.monotonic(), busy_seconds()
    if os.geteuid() == 0:  # the tests skip themselves without root; no image then
        image = guest_image.ensure_image()
        print('guest image %s ready in %.0f s' % (image, time.monotonic() - t0), flush=True)
    made = []
    for target in libvirtd_lab.STATE_DIRS.values():
        if os.geteuid() == 0 and not os.path.isdir(target):
            os.makedirs(target)
            made.append(target)
    # short: the labs' libvirtd sockets live below it (a unix socket path has 107 bytes)
    work = Path(tempfile.mkdtemp(prefix='bvm-', dir='/tmp'))
    pending, running, failed = list(args.tests), {}, []
    try:
        while pending or running:
            while pending and len(running) < max(1, args.jobs):
                name = pending.pop(0)
                short = Path(name).stem[len('test_'):]
                log = open(work / (short + '.log'), 'w', encoding='utf-8')
                argv = [sys.executable, '-m', 'pytest', str(HERE / name), '-q', '-rsP', '--durations=0',
                        '-p', 'no:cacheprovider', '--basetemp', str(work / short)]
                running[name] = (subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                  cwd=str(HERE.parents[1])), log, time.monotonic())
            time.sleep(1)
            for name, (proc, log, started) in list(running.items()):
                if proc.poll() is None:
                    continue
                log.close()
                del running[name]
                print('==== %s: exit %d after %.0f s' % (name, proc.returncode, time.monotonic() - started))
                text = Path(log.name).read_text(errors='replace')
                print(text, flush=True)
                # a skip is a failure here: a machine without a tool would otherwise pass with nothing run
                skipped = re.search(r'\b\d+ skipped\b', text.strip().splitlines()[-1] if text.strip() else '')
                if proc.returncode != 0 or (skipped and not args.allow_skip):
                    failed.append(name)
    except KeyboardInterrupt:
        failed.append('(interrupted: %s)' % ' '.join(sorted(running) + pending))
    finally:
        # interrupted: SIGINT lets each pytest run its test's own teardown (SIGTERM would not)
        for proc, log, _started in running.values():
            proc.send_signal(signal.SIGINT)
        for proc, log, _started in running.values():
            try:
                proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
        for target in reversed(made):
            try:
                os.rmdir(target)
            except OSError as exc:
                print('left %s: %s' % (target, exc))
    cpu = busy_between(b0, busy_seconds())
    print('make test-vm: %s in %.0f s (wall, image included)%s' % (
        'FAILED: ' + ' '.join(failed) if failed else 'all passed', time.monotonic() - t0,
        '' if not cpu else '; the machine busy %s of the %s its cores could give' % (
            fmt(cpu['busy_s']), fmt(cpu['capacity_s']))))
    if failed:
        print('logs and temporary files kept in %s' % work)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
