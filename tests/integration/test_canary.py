"""The canary itself (tests/integration/canary.py): it is in place while the tests run, and its
check finds every kind of touch (a file changed, added or removed, a tree removed, the process
killed, the loop device written or detached, the LXC container destroyed). The session's own canary is checked at the end;
the terminal summary says `benchlab canary: checked, untouched: ...`."""

import os
import subprocess
import time
from pathlib import Path

from canary import STATE, Canary


def test_the_session_canary_is_in_place():
    canary = STATE['canary']
    assert canary is not None
    for root in canary.trees:
        assert (root / 'data.bin').is_file() and root.name == 'benchlab-canary-%d' % os.getpid()
    assert canary.proc.poll() is None
    assert str(canary.trees[0]).encode() in open('/proc/%d/cmdline' % canary.proc.pid, 'rb').read()
    if os.geteuid() == 0:
        assert canary.loop and Path('/sys/block/%s/loop/backing_file' % os.path.basename(canary.loop)).read_text().strip() \
            == str(canary.image)
        assert canary.container and (Path('/var/lib/lxc') / canary.container / 'config').is_file()
    assert canary.problems() == []


def test_the_canary_check_finds_every_touch(tmp_path):
    canary = Canary(tag='benchlab-canary-selftest-%d' % os.getpid(), roots=(str(tmp_path / 'a'), str(tmp_path / 'b')))
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    canary.make()
    try:
        a, b = canary.trees
        assert canary.problems() == []
        (a / 'data.bin').write_bytes(b'changed')
        (a / 'new-file').write_text('x')
        (a / 'README').unlink()
        subprocess.run(['rm', '-rf', str(b)], check=True)
        canary.proc.kill()
        canary.proc.wait()
        expected = ['%s/README was removed' % a, '%s/new-file was added' % a, '%s/data.bin was changed' % a,
                    'file tree %s was removed' % b]
        problems = canary.problems()
        assert problems[:4] == expected
        assert problems[4].startswith('process %d (%s/bin/sleep 86400) was killed' % (canary.proc.pid, a))
        if canary.loop:
            with open(canary.loop, 'r+b') as f:
                f.write(b'overwritten')
            assert canary.problems()[-1] == 'loop device %s was written (its content changed)' % canary.loop
            subprocess.run(['losetup', '-d', canary.loop], check=True)
            loop = canary.loop
            for _i in range(50):  # detaching is asynchronous
                if not Path('/sys/block/%s/loop' % os.path.basename(loop)).exists():
                    break
                time.sleep(0.1)
            assert canary.problems()[-1].startswith('loop device %s was detached from %s' % (loop, canary.image))
        if canary.container:
            subprocess.run(['lxc-destroy', '-n', canary.container], capture_output=True, check=True)
            assert canary.problems()[-1] == 'LXC container %s was destroyed' % canary.container
    finally:
        canary.remove()
    assert not any(t.exists() for t in canary.trees) and not canary.image.exists()
