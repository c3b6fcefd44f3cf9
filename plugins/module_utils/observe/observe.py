# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""What the machine did during a run's timed window: a sampler (a thread, stdlib only) that reads

- /proc/diskstats for the block devices of the layer stack under the path (module_utils/observe/layers.py):
  bytes and I/Os read and written, busy time (utilisation), time spent (average wait), queue;
- /proc/stat, per CPU: user, system, iowait, steal, irq + softirq;
- the tool's own process tree: CPU per interval (/proc/<pid>/stat of its session); at its end, the
  exited tool's totals, read from its zombie before it is reaped (utime/stime with its reaped
  children's, and /proc/<pid>/io: the bytes it read and wrote, also its children's);
- /proc/meminfo: Dirty, Writeback, Cached; /proc/pressure/{cpu,io,memory} where present;
- /proc/net/dev for the interfaces in the path (with their speed from sysfs and a shaping rate the
  caller read from tc).

The first sample is taken right before the tool starts and the last right after it exited, so the
window is exactly the tool's. A source the machine does not show (no /proc/pressure, a device a
container's /proc/diskstats leaves out) or shows virtualised (lxcfs over /proc/stat, /proc/meminfo)
is named in ``missing``; nothing is guessed.

``summarize`` turns the samples into the record's ``observed`` summary and a compact series
(columns of per-interval figures); ``limited_by`` names the resource that limited the run. Both are
pure functions; the controller (plugin_utils/explain/explain.py) reads the same summary.
"""

import os
import re
import socket
import threading
import time

from ansible_collections.benchlab.bench.plugins.module_utils.observe.layers import Sys, block_layers, layer_stack

SECTOR = 512
SATURATED_PCT = 90.0
DEFAULT_INTERVAL_S = 1.0
MAX_POINTS = 600          # the series returned: at most this many intervals (older ones merged)
CPU_FIELDS = ('user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal')
MEM_KEYS = ('Dirty', 'Writeback', 'Cached')
PSI = ('cpu', 'io', 'memory')
NET_FIELDS = ('rx_bytes', 'rx_packets', 'rx_errs', 'rx_drop', 'tx_bytes', 'tx_packets', 'tx_errs', 'tx_drop')
IO_FIELDS = ('rchar', 'wchar', 'syscr', 'syscw', 'read_bytes', 'write_bytes', 'cancelled_write_bytes')


# ---- parsers of the /proc files (pure) ----------------------------------------------------------

def parse_diskstats(text, names=None):
    """/proc/diskstats -> {name: [reads, reads merged, sectors read, ms reading, writes, writes merged,
    sectors written, ms writing, in flight, ms doing I/O, weighted ms]} (of `names` only, if given)."""
    out = {}
    for line in (text or '').splitlines():
        f = line.split()
        if len(f) < 14 or (names is not None and f[2] not in names):
            continue
        try:
            out[f[2]] = [int(x) for x in f[3:14]]
        except ValueError:
            continue
    return out


def parse_cpu_stat(text):
    """/proc/stat -> {'cpu': [user, nice, system, idle, iowait, irq, softirq, steal], 'cpu0': [...], ...}
    (fields a kernel does not have are 0)."""
    out = {}
    for line in (text or '').splitlines():
        if not line.startswith('cpu'):
            continue
        f = line.split()
        try:
            values = [int(x) for x in f[1:9]]
        except ValueError:
            continue
        out[f[0]] = values + [0] * (8 - len(values))
    return out


def parse_meminfo_keys(text, keys=MEM_KEYS):
    """/proc/meminfo -> {key: bytes} for `keys`."""
    out = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition(':')
        if sep and key in keys:
            parts = value.split()
            if parts and parts[0].isdigit():
                out[key] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == 'kB' else 1)
    return out


def parse_pressure(text):
    """/proc/pressure/<resource> -> {'some': total µs, 'full': total µs} (what the file has)."""
    out = {}
    for line in (text or '').splitlines():
        f = line.split()
        if not f or f[0] not in ('some', 'full'):
            continue
        for item in f[1:]:
            k, _sep, v = item.partition('=')
            if k == 'total' and v.isdigit():
                out[f[0]] = int(v)
    return out


def parse_net_dev(text, names=None):
    """/proc/net/dev -> {interface: {rx_bytes, rx_packets, rx_errs, rx_drop, tx_bytes, ...}}."""
    out = {}
    for line in (text or '').splitlines()[2:]:
        name, sep, rest = line.partition(':')
        name = name.strip()
        if not sep or (names is not None and name not in names):
            continue
        f = rest.split()
        if len(f) < 16:
            continue
        try:
            v = [int(x) for x in f]
        except ValueError:
            continue
        out[name] = dict(zip(NET_FIELDS, v[0:4] + v[8:12]))
    return out


def parse_pid_stat(text):
    """/proc/<pid>/stat -> {comm, state, ppid, pgrp, session, utime, stime, cutime, cstime} (ticks)."""
    head, sep, rest = (text or '').rpartition(')')
    if not sep:
        return None
    f = rest.split()
    try:
        return {'comm': head.partition('(')[2], 'state': f[0], 'ppid': int(f[1]), 'pgrp': int(f[2]),
                'session': int(f[3]), 'utime': int(f[11]), 'stime': int(f[12]), 'cutime': int(f[13]),
                'cstime': int(f[14])}
    except (IndexError, ValueError):
        return None


def parse_pid_io(text):
    """/proc/<pid>/io -> {rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes}."""
    out = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition(':')
        if sep and key.strip() in IO_FIELDS and value.strip().isdigit():
            out[key.strip()] = int(value.strip())
    return out


_RATE = re.compile(r'\b(?:rate|ceil)\s+([0-9.]+)([KMGT]?)(bit|bps)\b')
_RATE_SCALE = {'': 1, 'K': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12}


def parse_tc_rates(text):
    """`tc qdisc show dev X` / `tc class show dev X` -> the smallest rate or ceil in Mbit/s, or None.
    tc prints rates in bit/s units (Kbit, Mbit, Gbit) or, with -iec/bps, bytes per second."""
    rates = []
    for m in _RATE.finditer(text or ''):
        value = float(m.group(1)) * _RATE_SCALE[m.group(2)]
        if m.group(3) == 'bps':
            value *= 8
        rates.append(value / 1e6)
    return min(rates) if rates else None


def shaping_rates(module, interfaces):
    """{interface: the smallest shaping rate tc shows on it, in Mbit/s} (qdiscs and classes: tbf,
    htb, netem, ...); interfaces without one are left out, and so is everything when tc is missing."""
    from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import run
    tc = module.get_bin_path('tc')
    out = {}
    for name in interfaces if tc else ():
        text = ''
        for what in ('qdisc', 'class'):
            res = run(module, [tc, what, 'show', 'dev', name])
            text += res.stdout if res.ok else ''
        rate = parse_tc_rates(text)
        if rate:
            out[name] = rate
    return out


def virtualised_sources(mountinfo_mounts):
    """The /proc and /sys files a container mounts over with its own view (lxcfs): their paths."""
    return sorted(m['mountpoint'] for m in mountinfo_mounts
                  if m['mountpoint'].startswith(('/proc/', '/sys/'))
                  and (m['fstype'] == 'fuse.lxcfs' or (m['fstype'].startswith('fuse') and 'lxcfs' in m['source'])))


# ---- reading the machine ------------------------------------------------------------------------

def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except (IOError, OSError, UnicodeDecodeError):
        return None


def tree_ticks(pid, proc='/proc'):
    """CPU ticks (utime + stime + reaped children's) of process `pid`, its session and its
    descendants now; 0 when it is gone."""
    members = set([pid])
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        st = parse_pid_stat(_read(os.path.join(proc, str(p), 'stat')))
        if st is None:
            continue
        total += st['utime'] + st['stime'] + st['cutime'] + st['cstime']
        for task in _listdir(os.path.join(proc, str(p), 'task')):
            for child in (_read(os.path.join(proc, str(p), 'task', task, 'children')) or '').split():
                if child.isdigit() and int(child) not in members:
                    members.add(int(child))
                    todo.append(int(child))
    return total


def kthread_ticks(proc='/proc'):
    """CPU ticks (utime + stime) of the machine's kernel threads now (kthreadd's children: loop and
    DRBD workers, kworkers doing writeback, jbd2, vhost); a thread that exited takes its ticks along."""
    total = 0
    for child in (_read(os.path.join(proc, '2', 'task', '2', 'children')) or '').split():
        st = parse_pid_stat(_read(os.path.join(proc, child, 'stat'))) if child.isdigit() else None
        if st is not None:
            total += st['utime'] + st['stime']
    return total


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def exited_totals(pid, proc='/proc'):
    """The totals of an exited, not yet reaped process (its zombie): {cpu_ticks, io: {...}} — its
    own CPU and I/O and those of the children it reaped. None when it cannot be read."""
    st = parse_pid_stat(_read(os.path.join(proc, str(pid), 'stat')))
    if st is None:
        return None
    out = {'cpu_ticks': st['utime'] + st['stime'] + st['cutime'] + st['cstime'],
           'io': parse_pid_io(_read(os.path.join(proc, str(pid), 'io')))}
    sched = parse_schedstat(_read(os.path.join(proc, str(pid), 'schedstat')))
    if sched:
        out['sched_ns'] = sched
    return out


def parse_schedstat(text):
    """/proc/<pid>/schedstat -> (ns on a CPU, ns waiting for one) of the process's main thread, or None."""
    f = (text or '').split()
    if len(f) < 2 or not (f[0].isdigit() and f[1].isdigit()):
        return None
    return int(f[0]), int(f[1])


def link_speed_mbit(name, sysfs='/sys'):
    """The speed a network interface reports in sysfs (Mbit/s) when it is a real device; None for
    virtual ones (veth, bridges, tun say 10000 or nothing: no link limit)."""
    base = os.path.join(sysfs, 'class', 'net', name)
    if not os.path.exists(os.path.join(base, 'device')):
        return None
    text = (_read(os.path.join(base, 'speed')) or '').strip()
    try:
        speed = int(text)
    except ValueError:
        return None
    return speed if speed > 0 else None


def route_interfaces(address, proc='/proc', sysfs='/sys'):
    """The interface the kernel sends to `address` from (a UDP socket connected to it: nothing is
    sent), found by the local address it picked; [] when it cannot be told."""
    try:
        infos = socket.getaddrinfo(address, 9, 0, socket.SOCK_DGRAM)
    except (socket.error, UnicodeError):
        return []
    for family, kind, proto, _canon, sockaddr in infos:
        s = socket.socket(family, kind, proto)
        try:
            s.connect(sockaddr)
            local = s.getsockname()[0]
        except (socket.error, OSError):
            continue
        finally:
            s.close()
        found = _interface_of(local, family, proc, sysfs)
        if found:
            return [found]
    return []


def _interface_of(local, family, proc, sysfs):
    if family == socket.AF_INET6:
        packed = socket.inet_pton(socket.AF_INET6, local.split('%')[0])
        hexaddr = ''.join('%02x' % (b if isinstance(b, int) else ord(b)) for b in packed)
        for line in (_read(os.path.join(proc, 'net', 'if_inet6')) or '').splitlines():
            f = line.split()
            if len(f) >= 6 and f[0] == hexaddr:
                return f[5]
        return None
    if local.startswith('127.'):
        return 'lo'
    # IPv4: /proc/net/fib_trie lists each local address under its prefix; /proc/net/route gives the
    # interface of the most specific route that holds it
    return _route_v4(local, proc)


def _route_v4(address, proc):
    ip = _v4(address)
    best = None
    for line in (_read(os.path.join(proc, 'net', 'route')) or '').splitlines()[1:]:
        f = line.split()
        if len(f) < 8:
            continue
        try:
            dest, mask = int(f[1], 16), int(f[7], 16)
        except ValueError:
            continue
        dest, mask = _swap32(dest), _swap32(mask)
        if ip & mask == dest and (best is None or bin(mask).count('1') > best[0]):
            best = (bin(mask).count('1'), f[0])
    return best[1] if best else None


def _v4(address):
    a, b, c, d = [int(x) for x in address.split('.')]
    return (a << 24) | (b << 16) | (c << 8) | d


def _swap32(n):
    return int.from_bytes(n.to_bytes(4, 'little'), 'big')


# ---- the sampler --------------------------------------------------------------------------------

class Observer(object):
    """Samples the machine every `interval_s` from start() to stop(), in a thread of its own.

    devices: the names of the block devices to watch (kernel names as in /proc/diskstats);
    interfaces: the network interfaces in the path; link_rates: {interface: shaping rate in Mbit/s}."""

    def __init__(self, interval_s=DEFAULT_INTERVAL_S, layers=None, interfaces=(), link_rates=None, root='/',
                 clock=time.monotonic, guest_cgroup=None, kernel_threads=False):
        self.interval = float(interval_s)
        self.layers = list(layers or [])
        self.devices = [l['name'] for l in block_layers(self.layers)]
        self.interfaces = list(interfaces or ())
        self.link_rates = dict(link_rates or {})
        self.guest_cgroup = guest_cgroup    # a guest's CPU cgroup directory (on its host), or None
        self.kernel_threads = kernel_threads    # a host below a run: its kernel threads' CPU (the layers' work)
        self.sys = Sys(root)
        self.clock = clock
        self.samples = []
        self.peaks = {}
        self.pid = None
        self.ticks = os.sysconf('SC_CLK_TCK') if hasattr(os, 'sysconf') else 100
        self.missing = []
        self.own_cpu_s = 0.0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None
        self._psi = [r for r in PSI if os.path.exists(self.sys.proc('pressure', r))]

    # one snapshot of everything watched
    def snapshot(self):
        cpu0 = _thread_cpu()
        s = self.sys
        snap = {'t': self.clock(), 'wall': round(time.time(), 3)}
        snap['disk'] = parse_diskstats(_read(s.proc('diskstats')), set(self.devices))
        snap['cpu'] = parse_cpu_stat(_read(s.proc('stat')))
        snap['mem'] = parse_meminfo_keys(_read(s.proc('meminfo')))
        snap['psi'] = dict((r, parse_pressure(_read(s.proc('pressure', r)))) for r in self._psi)
        snap['net'] = parse_net_dev(_read(s.proc('net', 'dev')), set(self.interfaces)) if self.interfaces else {}
        if self.pid is not None:
            snap['tool'] = tree_ticks(self.pid, s.procfs)
        if self.guest_cgroup:
            snap['guest_ns'] = cgroup_cpu_ns(self.guest_cgroup)
        if self.kernel_threads:
            snap['kthreads'] = kthread_ticks(s.procfs)
        self.own_cpu_s += _thread_cpu() - cpu0
        return snap

    def _add(self, snap):
        with self._lock:
            if self.samples:
                _track_peaks(self.peaks, self.samples[-1], snap, self.ticks)
            self.samples.append(snap)
            if len(self.samples) > 4 * MAX_POINTS:
                # keep the first and the last, every other one between: sums stay exact (counters),
                # the peaks were taken at the full interval already
                self.samples = self.samples[:1] + self.samples[2:-1:2] + self.samples[-1:]

    def start(self):
        """The first sample (right before the tool starts), then the thread."""
        self._add(self.snapshot())
        if self.interval > 0:
            self._thread = threading.Thread(target=self._loop, name='benchlab-observer')
            self._thread.daemon = True
            self._thread.start()

    def watch(self, pid):
        """The tool's process (its session leader): its tree's CPU is sampled from now on (it did
        not exist at the samples before: 0)."""
        with self._lock:
            for snap in self.samples:
                snap.setdefault('tool', 0)
            self.pid = pid

    def _loop(self):
        while not self._stop.wait(self.interval):
            self._add(self.snapshot())

    def stop(self, tool=None):
        """The last sample (right after the tool exited); `tool`: its exited_totals. Returns
        (observed summary, series)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        last = self.snapshot()
        if tool is not None and 'tool' in last:
            last['tool'] = tool['cpu_ticks']     # the exited tool's own total: exact
        self._add(last)
        return summarize(self.samples, self.layers, self.interval, self.ticks, tool=tool, peaks=self.peaks,
                         interfaces=self.interfaces, link_rates=self.link_rates, missing=self.missing_sources(),
                         observer_cpu_s=self.own_cpu_s, sysfs=self.sys.sysfs)

    def cancel(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def missing_sources(self):
        """The sources this machine does not show, or shows virtualised."""
        s = self.sys
        out = []
        first = self.samples[0] if self.samples else {}
        for name in self.devices:
            if name not in first.get('disk', {}):
                out.append({'source': '/proc/diskstats', 'what': name,
                            'why': 'the device is not in /proc/diskstats here (a container that hides it?)'})
        if not first.get('cpu'):
            out.append({'source': '/proc/stat', 'why': 'unreadable'})
        if not self._psi:
            out.append({'source': '/proc/pressure', 'why': 'not present (a kernel without PSI, or a container '
                                                           'that hides it)'})
        for name in self.interfaces:
            if name not in first.get('net', {}):
                out.append({'source': '/proc/net/dev', 'what': name, 'why': 'the interface is not listed'})
        if self.pid is not None and not first.get('tool') and first.get('tool') != 0:
            out.append({'source': '/proc/<pid>/stat', 'why': 'the tool\'s processes could not be read'})
        for path in virtualised_sources(s.mounts()):
            out.append({'source': path, 'why': 'virtualised (lxcfs): the container\'s own view, not the host\'s'})
        return out


def _thread_cpu():
    try:
        return time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID)
    except (AttributeError, OSError):
        return 0.0


# ---- from samples to figures (pure) ----------------------------------------------------------------

def _pct(part, whole):
    return 100.0 * part / whole if whole > 0 else None


def _cpu_busy(a, b):
    """(busy, total) jiffies between two /proc/stat cpu rows."""
    d = [y - x for x, y in zip(a, b)]
    total = sum(d)
    return total - d[3] - d[4], total


def _track_peaks(peaks, a, b, ticks):
    """Per-interval maxima between consecutive samples a and b (device utilisation, core busy,
    link rate, tool CPU)."""
    dt = b['t'] - a['t']
    if dt <= 0:
        return
    for name, row in b.get('disk', {}).items():
        prev = a.get('disk', {}).get(name)
        if prev:
            util = min(100.0, (row[9] - prev[9]) / (dt * 1000.0) * 100.0)
            peaks[('util', name)] = max(peaks.get(('util', name), 0.0), util)
    for name, row in b.get('cpu', {}).items():
        prev = a.get('cpu', {}).get(name)
        if prev and name != 'cpu':
            busy, total = _cpu_busy(prev, row)
            if total > 0:
                peaks[('core', name)] = max(peaks.get(('core', name), 0.0), 100.0 * busy / total)
    for name, row in b.get('net', {}).items():
        prev = a.get('net', {}).get(name)
        if prev:
            mbit = max(row['rx_bytes'] - prev['rx_bytes'], row['tx_bytes'] - prev['tx_bytes']) * 8 / 1e6 / dt
            peaks[('net', name)] = max(peaks.get(('net', name), 0.0), mbit)
            # the intervals the link carried traffic in (the tool's start and end are no link time)
            if mbit > 0.1:
                active = peaks.setdefault(('net_active', name), [0.0, 0.0])
                active[0] += mbit * dt
                active[1] += dt
    if 'tool' in a and 'tool' in b:
        pct = (b['tool'] - a['tool']) / float(ticks) / dt * 100.0
        peaks['tool'] = max(peaks.get('tool', 0.0), pct)


def _r(x, n=1):
    return None if x is None else round(x, n)


def summarize(samples, layers, interval_s, ticks=100, tool=None, peaks=None, interfaces=(), link_rates=None,
              missing=None, observer_cpu_s=None, sysfs='/sys'):
    """(the record's ``observed`` summary, the series) from the samples of one window."""
    first, last = samples[0], samples[-1]
    window = max(last['t'] - first['t'], 1e-9)
    peaks = peaks if peaks is not None else {}
    if peaks == {}:
        for a, b in zip(samples, samples[1:]):
            _track_peaks(peaks, a, b, ticks)
    obs = {'interval_s': interval_s, 'samples': len(samples), 'window_s': round(window, 3),
           'stack': [dict((k, v) for k, v in l.items()) for l in layers]}
    if first.get('wall') is not None:
        obs['wall_start'] = first['wall']     # when the window began (Unix time): a host's sampler is cut to it
    obs['devices'] = _devices(first, last, window, layers, peaks)
    obs['cpu'] = _cpu(first, last, window, ticks, tool, peaks)
    if tool and tool.get('io'):
        io = tool['io']
        obs['tool'] = dict((k, io[k]) for k in IO_FIELDS if k in io)
    obs['memory'] = _memory(first, last)
    obs['psi'] = _psi(first, last, window)
    obs['net'] = _net(first, last, window, interfaces, link_rates or {}, peaks, sysfs)
    obs['missing'] = list(missing or [])
    if observer_cpu_s is not None:
        obs['observer_cpu_s'] = round(observer_cpu_s, 4)
    return obs, series(samples, ticks, interval_s)


def _devices(first, last, window, layers, peaks):
    out = []
    for layer in block_layers(layers):
        a, b = first.get('disk', {}).get(layer['name']), last.get('disk', {}).get(layer['name'])
        if a is None or b is None:
            continue
        d = [y - x for x, y in zip(a, b)]
        ios = d[0] + d[4]
        out.append({'name': layer['name'], 'kind': layer['kind'], 'layer': layer['layer'],
                    'read_bytes': d[2] * SECTOR, 'write_bytes': d[6] * SECTOR, 'read_ios': d[0], 'write_ios': d[4],
                    'util_pct_mean': _r(min(100.0, d[9] / (window * 1000.0) * 100.0)),
                    'util_pct_max': _r(peaks.get(('util', layer['name']))),
                    'await_ms': _r((d[3] + d[7]) / float(ios), 2) if ios else None,
                    'queue_mean': _r(d[10] / (window * 1000.0), 2)})
    return out


def _cpu(first, last, window, ticks, tool, peaks):
    a, b = first.get('cpu', {}).get('cpu'), last.get('cpu', {}).get('cpu')
    out = {}
    if a and b:
        d = dict(zip(CPU_FIELDS, [y - x for x, y in zip(a, b)]))
        total = float(sum(d.values())) or 1.0
        busy = total - d['idle'] - d['iowait']
        out.update(busy_pct_mean=_r(100 * busy / total), user_pct=_r(100 * (d['user'] + d['nice']) / total),
                   system_pct=_r(100 * d['system'] / total), iowait_pct=_r(100 * d['iowait'] / total),
                   irq_pct=_r(100 * (d['irq'] + d['softirq']) / total), steal_pct=_r(100 * d['steal'] / total))
        cores = [n for n in last['cpu'] if n != 'cpu' and n in first['cpu']]
        out['cores'] = len(cores)
        per_core = [_cpu_busy(first['cpu'][n], last['cpu'][n]) for n in cores]
        out['max_core_pct'] = _r(max([100.0 * x / t for x, t in per_core if t > 0] or [0.0]))
    if tool is not None:
        out['tool_cpu_pct'] = _r(tool['cpu_ticks'] / float(ticks) / window * 100.0)
        out['tool_cpu_s'] = round(tool['cpu_ticks'] / float(ticks), 2)
        if tool.get('sched_ns'):
            # the tool's main thread on a CPU or waiting for one: near 100 % is a CPU-bound thread, also
            # on a machine where others took part of the CPU (what it waited is not its own CPU time)
            out['tool_runnable_pct'] = _r(min(100.0, sum(tool['sched_ns']) / 1e9 / window * 100.0))
    elif 'tool' in first and 'tool' in last:
        out['tool_cpu_pct'] = _r((last['tool'] - first['tool']) / float(ticks) / window * 100.0)
    if 'tool' in peaks:
        out['tool_cpu_pct_max'] = _r(peaks['tool'])
    if a and b and first.get('guest_ns') is not None and last.get('guest_ns') is not None:
        # a host's observation: the CPU its guest's own cgroup used (its processes, or its VM's
        # threads), in seconds and of all cores (comparable with busy_pct_mean)
        guest_s = max(0, last['guest_ns'] - first['guest_ns']) / 1e9
        out['guest_cpu_s'] = round(guest_s, 3)
        out['guest_pct'] = _r(min(100.0, 100.0 * guest_s / (window * (out.get('cores') or 1))))
    if a and b and first.get('kthreads') is not None and last.get('kthreads') is not None:
        # a host's observation: its kernel threads' CPU (the layers' work: loop, DRBD, writeback)
        k_s = max(0, last['kthreads'] - first['kthreads']) / float(ticks)
        out['kthread_cpu_s'] = round(k_s, 3)
        out['kthread_pct'] = _r(min(100.0, 100.0 * k_s / (window * (out.get('cores') or 1))))
    return out


def _memory(first, last):
    a, b = first.get('mem', {}), last.get('mem', {})
    out = {}
    for key, name in (('Dirty', 'dirty'), ('Writeback', 'writeback'), ('Cached', 'cached')):
        if key in a and key in b:
            out['%s_end_bytes' % name] = b[key]
            out['%s_delta_bytes' % name] = b[key] - a[key]
    return out


def _psi(first, last, window):
    out = {}
    for res, b in last.get('psi', {}).items():
        a = first.get('psi', {}).get(res, {})
        for kind in ('some', 'full'):
            if kind in a and kind in b:
                out['%s_%s_pct' % (res, kind)] = _r((b[kind] - a[kind]) / (window * 1e6) * 100.0)
    return out


def _net(first, last, window, interfaces, link_rates, peaks, sysfs):
    out = []
    for name in interfaces:
        a, b = first.get('net', {}).get(name), last.get('net', {}).get(name)
        if a is None or b is None:
            continue
        d = dict((k, b[k] - a[k]) for k in NET_FIELDS)
        speed = link_speed_mbit(name, sysfs)
        rate = link_rates.get(name)
        limit = min([x for x in (speed, rate) if x] or [0]) or None
        mean = max(d['rx_bytes'], d['tx_bytes']) * 8 / 1e6 / window
        peak = peaks.get(('net', name))
        active = peaks.get(('net_active', name))
        busy = active[0] / active[1] if active and active[1] > 0 else None
        out.append({'name': name, 'rx_bytes': d['rx_bytes'], 'tx_bytes': d['tx_bytes'],
                    'rx_packets': d['rx_packets'], 'tx_packets': d['tx_packets'],
                    'drops': d['rx_drop'] + d['tx_drop'], 'errors': d['rx_errs'] + d['tx_errs'],
                    'mbit_mean': _r(mean, 2), 'mbit_max': _r(peak, 2), 'speed_mbit': speed, 'rate_mbit': rate,
                    'mbit_active': _r(busy, 2), 'active_s': _r(active[1], 2) if active else 0.0,
                    'util_pct_mean': _r(_pct(mean, limit)) if limit else None,
                    'util_pct_active': _r(_pct(busy, limit)) if limit and busy is not None else None,
                    'util_pct_max': _r(_pct(peak, limit)) if limit and peak is not None else None})
    return out


def series(samples, ticks=100, interval_s=DEFAULT_INTERVAL_S, max_points=MAX_POINTS):
    """The time series of a window, compact: ``t`` (seconds since the first sample, one per sample)
    and per interval (between two samples) the device rates and utilisation, the CPU, the tool's CPU,
    the link rates; the memory levels per sample. At most `max_points` intervals: more are merged
    (the counters are cumulative, so a merged interval is exact)."""
    if len(samples) - 1 > max_points:
        step = (len(samples) - 1 + max_points - 1) // max_points
        samples = samples[:-1:step] + samples[-1:]
    t0 = samples[0]['t']
    out = {'v': 1, 'interval_s': interval_s, 't': [round(s['t'] - t0, 3) for s in samples],
           'devices': {}, 'cpu': {'busy_pct': [], 'max_core_pct': [], 'iowait_pct': [], 'steal_pct': []},
           'memory': {'dirty_bytes': [], 'writeback_bytes': []}, 'net': {}}
    pairs = list(zip(samples, samples[1:]))
    for name in samples[-1].get('disk', {}):
        dev = out['devices'][name] = {'read_mbs': [], 'write_mbs': [], 'util_pct': []}
        for a, b in pairs:
            dt = b['t'] - a['t']
            x, y = a.get('disk', {}).get(name), b.get('disk', {}).get(name)
            ok = x is not None and y is not None and dt > 0
            dev['read_mbs'].append(_r((y[2] - x[2]) * SECTOR / 1e6 / dt, 2) if ok else None)
            dev['write_mbs'].append(_r((y[6] - x[6]) * SECTOR / 1e6 / dt, 2) if ok else None)
            dev['util_pct'].append(_r(min(100.0, (y[9] - x[9]) / (dt * 1000.0) * 100.0)) if ok else None)
    cpu = out['cpu']
    for a, b in pairs:
        x, y = a.get('cpu', {}), b.get('cpu', {})
        if 'cpu' in x and 'cpu' in y:
            d = [q - p for p, q in zip(x['cpu'], y['cpu'])]
            total = float(sum(d)) or 1.0
            cpu['busy_pct'].append(_r(100 * (total - d[3] - d[4]) / total))
            cpu['iowait_pct'].append(_r(100 * d[4] / total))
            cpu['steal_pct'].append(_r(100 * d[7] / total))
            cores = [_cpu_busy(x[n], y[n]) for n in y if n != 'cpu' and n in x]
            cpu['max_core_pct'].append(_r(max([100.0 * p / t for p, t in cores if t > 0] or [0.0])))
        else:
            for k in cpu:
                cpu[k].append(None)
    if all('tool' in s for s in samples):
        cpu['tool_pct'] = [_r((b['tool'] - a['tool']) / float(ticks) / (b['t'] - a['t']) * 100.0)
                           if b['t'] > a['t'] else None for a, b in pairs]
    for s in samples:
        out['memory']['dirty_bytes'].append(s.get('mem', {}).get('Dirty'))
        out['memory']['writeback_bytes'].append(s.get('mem', {}).get('Writeback'))
    for name in samples[-1].get('net', {}):
        net = out['net'][name] = {'rx_mbit': [], 'tx_mbit': []}
        for a, b in pairs:
            dt = b['t'] - a['t']
            x, y = a.get('net', {}).get(name), b.get('net', {}).get(name)
            ok = x is not None and y is not None and dt > 0
            net['rx_mbit'].append(_r((y['rx_bytes'] - x['rx_bytes']) * 8 / 1e6 / dt, 2) if ok else None)
            net['tx_mbit'].append(_r((y['tx_bytes'] - x['tx_bytes']) * 8 / 1e6 / dt, 2) if ok else None)
    return out


# ---- the verdict on one run ---------------------------------------------------------------------

def link_util(net):
    """A link's utilisation while it carried traffic (util_pct_active: the tool's start-up and end are
    no link time), else over the whole window; None without a known speed or rate."""
    if net.get('util_pct_active') is not None:
        return net['util_pct_active']
    return net.get('util_pct_mean')


def limited_by(observed):
    """The resource that limited the run: {resource, name, figure, unit, saturated}.

    Saturated (>= 90 %), in this order: the tool's own CPU (one core's worth: a single-threaded
    tool at its limit, or its main thread on a CPU or waiting for one that much of the window) or
    all cores busy mostly with the tool; a link at its known speed or shaping
    rate; a device layer (the deepest saturated one: it holds up those above it); all cores busy
    mostly with other work (kernel threads working for the run, such as a file system compressing
    its writes, or other processes). Nothing saturated: the busiest of these (saturated false).
    None without figures."""
    if not observed:
        return None
    cands = []      # (figure, rank, depth, resource, name)
    cpu = observed.get('cpu') or {}
    tool = cpu.get('tool_cpu_pct')
    if tool is not None and tool <= 110.0:   # one core's worth; a tool on several cores: all cores below
        # its main thread on a CPU or waiting for one counts: under competition it gets less than a core
        cands.append((max(min(tool, 100.0), cpu.get('tool_runnable_pct') or 0.0), 0, 0, 'cpu', 'tool'))
    busy, cores = cpu.get('busy_pct_mean'), cpu.get('cores') or 1
    if busy is not None:
        mostly_tool = tool is not None and tool / float(cores) >= busy / 2.0
        cands.append((busy, 0 if mostly_tool else 3, 0, 'cpu', 'all cores'))
    for n in observed.get('net') or []:
        util = link_util(n)
        if util is not None:
            cands.append((util, 1, 0, 'link', n['name']))
    for d in observed.get('devices') or []:
        if d.get('util_pct_mean') is not None:
            cands.append((d['util_pct_mean'], 2, d.get('layer', 0), 'device', d['name']))
    if not cands:
        return None
    saturated = [c for c in cands if c[0] >= SATURATED_PCT]
    if saturated:
        best = sorted(saturated, key=lambda c: (c[1], -c[2], -c[0]))[0]
    else:
        best = sorted(cands, key=lambda c: (-c[0], c[1], -c[2]))[0]
    return {'resource': best[3], 'name': best[4], 'figure': round(best[0], 1), 'unit': '%',
            'saturated': best[0] >= SATURATED_PCT}


# ---- a sampler of its own (the benchlab.bench.observe module) ---------------------------------------

SAMPLES_FILE = 'samples.jsonl'
STATE_FILE = 'state.json'


def sampler_loop(workdir, state, clock=time.monotonic, wall=time.time):
    """The body of a detached sampler (modules/observe.py forks it): waits until state['start_at']
    (Unix time) if given, then appends one snapshot per interval to <workdir>/samples.jsonl until
    SIGTERM (the stop: one last snapshot right then) or state['max_s'] seconds."""
    import json
    import signal
    obs = Observer(state['interval_s'], state.get('layers'), interfaces=state.get('interfaces'),
                   link_rates=state.get('link_rates'), guest_cgroup=(state.get('guest') or {}).get('cgroup'),
                   kernel_threads=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _s, _f: stop.set())
    if state.get('start_at'):
        stop.wait(max(0.0, state['start_at'] - wall()))
    deadline = clock() + float(state.get('max_s') or 3600)
    path = os.path.join(workdir, SAMPLES_FILE)
    with open(path, 'a') as f:
        while True:
            snap = obs.snapshot()
            snap['observer_cpu_s'] = obs.own_cpu_s
            f.write(json.dumps(snap, separators=(',', ':')) + '\n')
            f.flush()
            if stop.is_set() or clock() >= deadline:
                break
            stop.wait(min(obs.interval, max(0.0, deadline - clock())))


def read_samples(workdir):
    """The samples a detached sampler wrote (a line cut short by its end is left out)."""
    import json
    out = []
    for line in (_read(os.path.join(workdir, SAMPLES_FILE)) or '').splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def crop_samples(samples, since=None, until=None):
    """The samples that bracket the window [since, until] (Unix times; another machine's window, such
    as a guest's run): the last one taken at or before `since`, every one inside, the first one at or
    after `until`. Samples without a wall time, or no bounds: all of them."""
    if not samples or any(s.get('wall') is None for s in samples):
        return list(samples)
    lo, hi = 0, len(samples) - 1
    if since is not None:
        lo = max([i for i, s in enumerate(samples) if s['wall'] <= since] or [0])
    if until is not None:
        hi = min([i for i, s in enumerate(samples) if s['wall'] >= until] or [len(samples) - 1])
    return samples[lo:hi + 1] if hi > lo else []


def summarize_samples(samples, state, sysfs='/sys'):
    """(observed, series) of a detached sampler's window, or (None, None) with fewer than two samples."""
    if len(samples) < 2:
        return None, None
    ticks = os.sysconf('SC_CLK_TCK') if hasattr(os, 'sysconf') else 100
    return summarize(samples, state.get('layers') or [], state['interval_s'], ticks,
                     interfaces=state.get('interfaces') or (), link_rates=state.get('link_rates'),
                     missing=state.get('missing'), observer_cpu_s=samples[-1].get('observer_cpu_s'), sysfs=sysfs)


def cgroup_cpu_ns(directory):
    """The CPU time (ns) a cgroup's processes used: cgroup v2 cpu.stat usage_usec, v1 cpuacct.usage;
    None when neither is readable."""
    text = _read(os.path.join(directory, 'cpu.stat'))
    for line in (text or '').splitlines():
        if line.startswith('usage_usec '):
            return int(line.split()[1]) * 1000
    text = (_read(os.path.join(directory, 'cpuacct.usage')) or '').strip()
    return int(text) if text.isdigit() else None


def cgroup_of_pid(pid, proc='/proc', cgroupfs='/sys/fs/cgroup'):
    """The directory of the CPU cgroup a process is in (/proc/<pid>/cgroup): v1's cpuacct hierarchy
    where mounted, else the v2 one; None when it cannot be read."""
    text = _read(os.path.join(proc, str(int(pid)), 'cgroup'))
    v1, v2 = None, None
    for line in (text or '').splitlines():
        parts = line.split(':', 2)
        if len(parts) != 3:
            continue
        if parts[2].strip('/') == '':
            continue    # the root cgroup: the whole machine, not a guest of its own
        if parts[0] == '0' and parts[1] == '':
            v2 = parts[2]
        elif 'cpuacct' in parts[1].split(','):
            v1 = (parts[1], parts[2])
    if v1 is not None:
        for mount in (v1[0], 'cpuacct', 'cpu,cpuacct'):
            d = os.path.join(cgroupfs, mount, v1[1].lstrip('/'))
            if os.path.exists(os.path.join(d, 'cpuacct.usage')):
                return d
    if v2 is not None:
        for base in (cgroupfs, os.path.join(cgroupfs, 'unified')):
            d = os.path.join(base, v2.lstrip('/'))
            if os.path.exists(os.path.join(d, 'cpu.stat')):
                return d
    return None


def target_layers(target, root='/'):
    """The layer stack of the path or device a run writes or reads ([] when it cannot be resolved)."""
    try:
        return layer_stack(target, root=root)
    except (OSError, ValueError):
        return []
