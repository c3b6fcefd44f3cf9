# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Capture what module_utils/observe/layers.py reads of a machine, for the unit tests' fixtures
(tests/unit/fixtures/layers/<name>.json): the sysfs block tree and /proc/self/mountinfo, /proc/swaps.
Stdlib only, Python 3.6+, so it runs inside a container or a guest as it is.

    capture_sysfs.py OUTFILE [--stack TARGET]...

For every block device in /sys/class/block: the links /sys/class/block/<name>, /sys/block/<name>
(whole disks) and /sys/dev/block/<maj:min> (their targets, as links, relative to /sys), and in the
device's own directory the files the resolver reads (dev, size, partition, start, ro, removable,
dm/name, dm/uuid, md/level, loop/backing_file, loop/offset, loop/sizelimit), the links in its
slaves/ and holders/, and whether it has a `device` link (a real disk); /sys/fs/btrfs/*/devices.
Every file's text is kept byte for byte. A symbolic link to a directory is no file a repository may
hold (ansible-test sanity), hence one JSON document: {"sys": {path: text | {"link": target} |
{"dir": true}}, "proc": {path: text}, "meta": {...}}.

With --stack TARGET (repeatable), and the collection importable (PYTHONPATH holding an
ansible_collections tree), meta.stacks[TARGET] is what layers.layer_stack said on the live system
(with its ioctls and st_dev), for the unit test to compare with the walk over the captured tree.
"""

import json
import os
import sys

NODE_FILES = ('dev', 'size', 'partition', 'start', 'ro', 'removable', 'dm/name', 'dm/uuid', 'md/level',
              'loop/backing_file', 'loop/offset', 'loop/sizelimit')
PROC_FILES = ('self/mountinfo', 'swaps')


def _rel(path):
    return os.path.relpath(path, '/sys')


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except (IOError, OSError):
        return None


def capture_sys():
    out = {}

    def link(path):
        out[_rel(path)] = {'link': _rel(os.path.realpath(path))}

    for name in sorted(os.listdir('/sys/class/block')):
        cls = os.path.join('/sys/class/block', name)
        node = os.path.realpath(cls)
        link(cls)
        if os.path.islink(os.path.join('/sys/block', name)):
            link(os.path.join('/sys/block', name))
        majmin = (_read(os.path.join(node, 'dev')) or '').strip()
        if majmin:
            link(os.path.join('/sys/dev/block', majmin))
        out[_rel(node)] = {'dir': True}
        for rel in NODE_FILES:
            text = _read(os.path.join(node, rel))
            if text is not None:
                out[_rel(os.path.join(node, rel))] = text
        for sub in ('slaves', 'holders'):
            d = os.path.join(node, sub)
            if os.path.isdir(d):
                out[_rel(d)] = {'dir': True}
                for entry in sorted(os.listdir(d)):
                    link(os.path.join(d, entry))
        if os.path.exists(os.path.join(node, 'device')):
            out[_rel(os.path.join(node, 'device'))] = {'dir': True}
    btrfs = '/sys/fs/btrfs'
    for fsid in sorted(os.listdir(btrfs)) if os.path.isdir(btrfs) else ():
        d = os.path.join(btrfs, fsid, 'devices')
        if os.path.isdir(d):
            out[_rel(d)] = {'dir': True}
            for entry in sorted(os.listdir(d)):
                link(os.path.join(d, entry))
    return out


def live_stacks(targets):
    if not targets:
        return {}
    from ansible_collections.benchlab.bench.plugins.module_utils.observe.layers import layer_stack
    return dict((t, layer_stack(t)) for t in targets)


def main(argv):
    if not argv or argv[0].startswith('-'):
        sys.exit(__doc__)
    outfile = argv[0]
    targets = [argv[i + 1] for i, a in enumerate(argv) if a == '--stack']
    proc = {}
    for rel in PROC_FILES:
        text = _read(os.path.join('/proc', rel))
        if text is not None:
            proc[rel] = text
    doc = {'meta': {'kernel': os.uname()[2], 'argv': argv, 'stacks': live_stacks(targets)},
           'sys': capture_sys(), 'proc': proc}
    with open(outfile, 'w') as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
