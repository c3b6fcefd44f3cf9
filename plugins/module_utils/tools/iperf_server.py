# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The one-off iperf server's life on the target: start it detached and wait until it listens,
read what it printed, recognise it, stop it (SIGTERM, then SIGKILL).
"""

import os
import signal
import subprocess
import tempfile
import time

from ansible_collections.benchlab.bench.plugins.module_utils.observe.procfs import is_listening, proc_cmdline, proc_state
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import C_LOCALE, tail


def is_iperf_server(pid):
    """The process is alive (not a zombie) and is an iperf/iperf3 server (-s)."""
    state = proc_state(pid)
    if state is None or state in ('Z', 'X'):
        return False
    argv = proc_cmdline(pid)
    return bool(argv) and os.path.basename(argv[0]) in ('iperf', 'iperf3') and ('-s' in argv or '--server' in argv)


def start_server(argv, port, udp_socket=False, ready_timeout=10.0):
    """Start the server in its own session, detached from the caller's pipes; wait until it listens
    on `port` (an int, or a list: every port of a server that listens on a range).

    Returns (Popen, None) or (None, error message with the server's output). Its output goes to a
    file that is unlinked once the server listens: nothing is left on disk, and the output is
    still readable through /proc/<pid>/fd/1 until the server stops.
    """
    ports = port if isinstance(port, list) else [port]
    logdir = tempfile.mkdtemp(prefix='benchlab-iperf-server-')
    logpath = os.path.join(logdir, 'server.log')
    env = dict(os.environ)
    env.update(C_LOCALE)
    proc = None
    try:
        with open(logpath, 'wb') as log, open(os.devnull, 'rb') as devnull:
            proc = subprocess.Popen(argv, stdin=devnull, stdout=log, stderr=subprocess.STDOUT, close_fds=True,
                                    start_new_session=True, env=env)
        deadline = time.monotonic() + ready_timeout
        while True:
            if proc.poll() is not None:
                with open(logpath, 'rb') as f:
                    output = f.read().decode('utf-8', 'replace')
                return None, 'the iperf server exited at once (rc=%s): %s\noutput:\n%s' % (
                    proc.returncode, ' '.join(argv), tail(output) or '(none)')
            if all(is_listening(proc.pid, one, udp_socket) for one in ports):
                return proc, None
            if time.monotonic() > deadline:
                output = ''
                with open(logpath, 'rb') as f:
                    output = f.read().decode('utf-8', 'replace')
                kill_server(proc.pid, grace=1.0)
                proc.wait()
                return None, 'the iperf server did not listen on port %s within %ss: %s\noutput:\n%s' % (
                    '-'.join(str(p) for p in sorted(set([ports[0], ports[-1]]))), ready_timeout, ' '.join(argv), tail(output) or '(none)')
            time.sleep(0.05)
    except OSError as e:
        if proc is not None and proc.poll() is None:
            kill_server(proc.pid, grace=1.0)
            proc.wait()
        return None, 'cannot start the iperf server %s: %s' % (' '.join(argv), e)
    finally:
        if os.path.exists(logpath):
            os.unlink(logpath)
        os.rmdir(logdir)


def server_output(pid):
    """What a running server printed (its stdout is an unlinked file), or ''."""
    try:
        with open('/proc/%d/fd/1' % pid, 'rb') as f:
            return f.read().decode('utf-8', 'replace')
    except (IOError, OSError):
        return ''


def kill_server(pid, grace=2.0):
    """SIGTERM, then SIGKILL after `grace` seconds (iperf2 servers can ignore SIGTERM while a
    thread is blocked). Returns the signal that ended it ('SIGTERM'/'SIGKILL') or None when it was
    already gone."""
    if proc_state(pid) in (None, 'Z', 'X'):
        return None
    used = None
    try:
        os.kill(pid, signal.SIGTERM)
        used = 'SIGTERM'
    except OSError:
        return None
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if proc_state(pid) in (None, 'Z', 'X'):
            return used
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
        used = 'SIGKILL'
    except OSError:
        return used
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and proc_state(pid) not in (None, 'Z', 'X'):
        time.sleep(0.05)
    return used
