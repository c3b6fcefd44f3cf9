"""The canary of the integration tests (issue 14 section 9): things benchlab did not make, which
every test session must leave exactly as they were.

At session start (a session-scoped autouse fixture, wired from conftest.py) this makes, none of
it through benchlab:
- a file tree `benchlab-canary-<pid>/` in /var/tmp and in /dev/shm (the cell paths the matrices
  use; the name begins with `benchlab-` like a work directory, so a cleanup by pattern would take
  it), files and a sub-directory with content whose SHA-256 is recorded;
- a process whose argv names `/var/tmp/benchlab-canary-<pid>/...` (a `sleep`, started through a
  symlink in the tree so argv[0] carries the path: `pkill -f <cell>/benchlab-` would kill it);
- a loop device attached to an image `/var/tmp/benchlab-canary-<pid>.img` of random data, its
  content's SHA-256 recorded;
- an LXC container `bl-benchlab-canary-<pid>` (`lxc-create -t none`: a configuration, no root file system)
  named with the local lab's default prefix `bl`, so a lab teardown by name pattern would take it;
  its configuration's SHA-256 recorded.

At session end it checks all of them untouched (every file's checksum and no file added or
removed, the process alive with the same argv, the loop device attached to its image with the
same content, the container still defined with the same configuration), then removes them. A touched canary fails the session (exit status 1) with a
message saying what was touched; the terminal summary says `benchlab canary: ...` either way.
"""

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOTS = ('/var/tmp', '/dev/shm')
SLEEP = shutil.which('sleep') or '/bin/sleep'
IMAGE_BYTES = 4 * 1024 * 1024
LXC_PATH = Path('/var/lib/lxc')


def _sha256(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def _tree(root):
    """{relative path: ('file', sha256) | ('dir',) | ('link', target)} of a tree."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                out[rel] = ('link', os.readlink(path))
            elif os.path.isdir(path):
                out[rel] = ('dir',)
            else:
                out[rel] = ('file', _sha256(path))
    return out


def _cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().split(b'\0')[:-1]
    except OSError:
        return None


class Canary(object):
    """One canary: made by make(), checked by problems(), removed by remove()."""

    def __init__(self, tag=None, roots=ROOTS, loop=True, lxc=True):
        self.tag = tag or 'benchlab-canary-%d' % os.getpid()
        self.want_lxc = lxc
        self.container = None
        self.container_sha = None
        self.trees = [Path(r) / self.tag for r in roots]
        self.image = Path(roots[0]) / (self.tag + '.img')
        self.want_loop = loop
        self.expected = {}
        self.proc = None
        self.argv = None
        self.loop = None
        self.loop_sha = None
        self.notes = []

    # -- making ---------------------------------------------------------------------------------

    def make(self):
        try:
            for root in self.trees:
                root.mkdir(mode=0o755)
                (root / 'data.bin').write_bytes(os.urandom(64 * 1024))
                (root / 'README').write_text('A canary of the benchlab integration tests: must stay untouched.\n')
                (root / 'benchlab-dd-notmine').mkdir()
                (root / 'benchlab-dd-notmine' / '.benchlab-owner.json').write_text(
                    '{"benchlab": 1, "run_id": "not-this-one", "run_key": "canary", "tool": "dd"}\n')
                (root / 'benchlab-dd-notmine' / 'dd.bin').write_bytes(os.urandom(16 * 1024))
            first = self.trees[0]
            (first / 'bin').mkdir()
            os.symlink(SLEEP, str(first / 'bin' / 'sleep'))
            for root in self.trees:
                self.expected[str(root)] = _tree(str(root))
            self.argv = [str(first / 'bin' / 'sleep'), '86400']
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)
            if self.want_loop:
                self._make_loop()
            if self.want_lxc:
                self._make_container()
        except BaseException:
            self.remove()
            raise
        return self

    def _make_loop(self):
        if os.geteuid() != 0 or not shutil.which('losetup'):
            self.notes.append('no loop device (needs root and losetup)')
            return
        with open(str(self.image), 'wb') as f:
            f.write(os.urandom(IMAGE_BYTES))
        proc = subprocess.run(['losetup', '--find', '--show', str(self.image)], capture_output=True, text=True,
                              check=False)
        if proc.returncode != 0:
            self.notes.append('no loop device (losetup: %s)' % proc.stderr.strip())
            return
        self.loop = proc.stdout.strip()
        self.loop_sha = _sha256(self.loop)

    def _make_container(self):
        if os.geteuid() != 0 or not shutil.which('lxc-create'):
            self.notes.append('no LXC container (needs root and lxc-create)')
            return
        name = 'bl-' + self.tag
        proc = subprocess.run(['lxc-create', '-n', name, '-t', 'none'], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            self.notes.append('no LXC container (lxc-create: %s)' % proc.stderr.strip())
            return
        self.container = name
        self.container_sha = _sha256(str(LXC_PATH / name / 'config'))

    # -- checking -------------------------------------------------------------------------------

    def problems(self):
        """What was touched, one message each (empty when nothing was)."""
        out = []
        for root in self.trees:
            if not root.is_dir():
                out.append('file tree %s was removed' % root)
                continue
            now = _tree(str(root))
            want = self.expected.get(str(root), {})
            for rel in sorted(set(want) - set(now)):
                out.append('%s/%s was removed' % (root, rel))
            for rel in sorted(set(now) - set(want)):
                out.append('%s/%s was added' % (root, rel))
            for rel in sorted(set(now) & set(want)):
                if now[rel] != want[rel]:
                    out.append('%s/%s was changed' % (root, rel))
        if self.proc is not None:
            if self.proc.poll() is not None:
                out.append('process %d (%s) was killed (exit status %s)' % (
                    self.proc.pid, ' '.join(self.argv), self.proc.returncode))
            elif _cmdline(self.proc.pid) != [a.encode() for a in self.argv]:
                out.append('process %d no longer runs %s' % (self.proc.pid, ' '.join(self.argv)))
        if self.loop:
            backing = self._backing()
            if backing != str(self.image):
                out.append('loop device %s was detached from %s (backing file now %s)' % (self.loop, self.image, backing))
            elif _sha256(self.loop) != self.loop_sha:
                out.append('loop device %s was written (its content changed)' % self.loop)
        if self.container:
            config = LXC_PATH / self.container / 'config'
            if not config.is_file():
                out.append('LXC container %s was destroyed' % self.container)
            elif _sha256(str(config)) != self.container_sha:
                out.append('LXC container %s was reconfigured' % self.container)
        return out

    def _backing(self):
        try:
            return Path('/sys/block/%s/loop/backing_file' % os.path.basename(self.loop)).read_text().strip()
        except OSError:
            return None

    def summary(self):
        parts = ['%d file trees (%s)' % (len(self.trees), ', '.join(str(t) for t in self.trees))]
        if self.proc is not None:
            parts.append('process %d' % self.proc.pid)
        if self.loop:
            parts.append('loop device %s on %s' % (self.loop, self.image))
        if self.container:
            parts.append('LXC container %s' % self.container)
        return ', '.join(parts) + ''.join('; %s' % n for n in self.notes)

    # -- removing -------------------------------------------------------------------------------

    def remove(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()  # by the pid this object started, nothing else
            self.proc.wait()
        if self.loop and self._backing() == str(self.image):  # still ours: never detach a reused loop number
            subprocess.run(['losetup', '-d', self.loop], check=False)
            for _i in range(50):  # detaching is asynchronous
                if not Path('/sys/block/%s/loop' % os.path.basename(self.loop)).exists():
                    break
                time.sleep(0.1)
            self.loop = None
        if self.container and (LXC_PATH / self.container / 'config').is_file():
            subprocess.run(['lxc-destroy', '-n', self.container], capture_output=True, check=False)
        self.container = None
        for root in self.trees:
            shutil.rmtree(str(root), ignore_errors=True)
        if self.image.exists():
            self.image.unlink()


# The session's canary and what its check found (for the summary and the exit status).
STATE = {'canary': None, 'problems': None, 'summary': None}


@pytest.fixture(scope='session', autouse=True)
def benchlab_canary():
    """The session's canary: made before the first test, checked and removed after the last."""
    canary = Canary().make()
    STATE['canary'] = canary
    try:
        yield canary
    finally:
        STATE['problems'] = canary.problems()
        STATE['summary'] = canary.summary()
        canary.remove()
    if STATE['problems']:
        raise AssertionError('benchlab canary TOUCHED: ' + '; '.join(STATE['problems']))


def pytest_sessionfinish(session, exitstatus):
    if STATE['problems']:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    canary = STATE['canary']
    if canary is None:
        return
    if STATE['problems']:
        terminalreporter.write_sep('=', 'benchlab canary TOUCHED', red=True)
        for problem in STATE['problems']:
            terminalreporter.write_line('benchlab canary: %s' % problem, red=True)
    elif STATE['problems'] is not None:
        terminalreporter.write_line('benchlab canary: checked, untouched: %s' % STATE['summary'], green=True)
