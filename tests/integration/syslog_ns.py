"""Run commands with a /dev/log of our own and record what reaches it: the target's syslog socket as
Ansible modules see it (AnsibleModule.log: syslog(3), which writes to /dev/log).

    unshare -m --propagation private python3 syslog_ns.py WORKDIR COMMANDS OUT

Inside its own mount namespace (the machine's /dev and logging are never touched) it mounts an
overlay over /dev: the machine's devtmpfs as the read-only lower layer, a tmpfs of its own (under
WORKDIR) as the upper one, and the submounts of /dev (pts, shm, mqueue, ...) bound back on top. So
every device node is there, and /dev/log is a datagram socket this process listens on (no syslog
daemon runs here, and where one does its socket is hidden, not replaced). Each command runs in turn
(COMMANDS: a JSON file, a list of {argv, env, cwd, timeout}); every datagram received is written to OUT as a JSON list,
with the exit status of each command, once the last one ended and the socket is drained. The
namespace, its mounts and the socket go when this process exits; WORKDIR is the caller's.
"""

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time


def sh(*argv):
    subprocess.run(list(argv), check=True, capture_output=True, text=True)


def submounts(root='/dev'):
    """The mount points below `root` in this namespace, shortest first."""
    found = []
    with open('/proc/self/mountinfo', encoding='utf-8') as f:
        for line in f:
            point = re.sub(r'\\([0-7]{3})', lambda m: chr(int(m.group(1), 8)), line.split()[4])
            if point.startswith(root + '/'):
                found.append(point)
    return sorted(set(found), key=len)


def private_dev(work):
    """/dev as an overlay: the machine's nodes below, our tmpfs above (where /dev/log is made)."""
    lower, upper_fs = os.path.join(work, 'lower'), os.path.join(work, 'upperfs')
    os.makedirs(lower)
    os.makedirs(upper_fs)
    subs = submounts()
    sh('mount', '--rbind', '/dev', lower)
    sh('mount', '-t', 'tmpfs', '-o', 'mode=0755,size=4m', 'benchlab-syslog', upper_fs)
    os.makedirs(os.path.join(upper_fs, 'upper'))
    os.makedirs(os.path.join(upper_fs, 'work'))
    sh('mount', '-t', 'overlay', '-o', 'lowerdir=%s,upperdir=%s/upper,workdir=%s/work' % (lower, upper_fs, upper_fs),
       'benchlab-dev', '/dev')
    for point in subs:
        rel = os.path.relpath(point, '/dev')
        if os.path.isdir(os.path.join('/dev', rel)) and not any(point.startswith(p + '/') for p in subs if p != point):
            sh('mount', '--rbind', os.path.join(lower, rel), os.path.join('/dev', rel))
    if os.path.lexists('/dev/log'):
        os.unlink('/dev/log')   # in the upper layer: a whiteout over the machine's entry, seen only here


class Listener(threading.Thread):
    def __init__(self, path):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        os.chmod(path, 0o666)
        self.sock.settimeout(0.2)
        self.messages = []
        self.stop = threading.Event()

    def run(self):
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except socket.timeout:
                if self.stop.is_set():
                    return
                continue
            self.messages.append(data.decode('utf-8', 'replace'))


def main(argv):
    if len(argv) != 3:
        raise SystemExit('usage: syslog_ns.py WORKDIR COMMANDS OUT')
    work, out = argv[0], argv[2]
    with open(argv[1], encoding='utf-8') as f:
        commands = json.load(f)
    if os.readlink('/proc/self/ns/mnt') == os.readlink('/proc/%d/ns/mnt' % os.getppid()):
        raise SystemExit('syslog_ns.py must run in a mount namespace of its own (unshare -m)')
    private_dev(work)
    listener = Listener('/dev/log')
    listener.start()
    results = []
    for cmd in commands:
        proc = subprocess.run(cmd['argv'], cwd=cmd.get('cwd'), env=cmd.get('env'), capture_output=True, text=True,
                              check=False, timeout=cmd.get('timeout', 600))
        results.append({'argv': cmd['argv'], 'rc': proc.returncode, 'stdout': proc.stdout, 'stderr': proc.stderr})
    time.sleep(0.5)  # the last datagrams of the last module
    listener.stop.set()
    listener.join()
    with open(out, 'w', encoding='utf-8') as f:
        json.dump({'messages': listener.messages, 'results': results}, f)


if __name__ == '__main__':
    main(sys.argv[1:])
