#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: iperf
short_description: Network throughput with iperf3 or iperf2, with a one-off server that is always stopped
version_added: 0.1.0
description:
  - With O(role=client) (the default), runs the iperf3 or iperf2 client once against O(server) and
    returns a result record (C(bench_result)) with the metrics C(throughput) (Mbit/s, 10^6 bits/s,
    what the receiver got where the tool reports it), C(retransmits) (count, iperf3 TCP sender;
    iperf2 only with C(-e) output), and for UDP C(jitter) (ms) and C(lost_pct) (%).
  - With O(role=server), starts (O(state=started)) a one-off server bound to O(bind) and O(port) in
    the background and returns its C(pid) while it listens, or stops it (O(state=stopped), O(pid)).
    Meant for C(delegate_to) the server host, with the stop in an C(always) section. iperf3 runs
    with C(-1) (one test, then it exits) and C(--idle-timeout); iperf2 has no one-off mode, so its
    life is bounded by C(-t) O(server_timeout), and it is stopped with SIGTERM, then SIGKILL after
    O(grace) seconds.
  - With O(spawn_server=true) the client starts that server itself on this host (bound to O(bind),
    default O(server), for example V(127.0.0.1)), runs, and stops it, also on failure.
  - Connection failures make both tools exit 0 (iperf3 C(-J) prints an C(error) key, iperf2 prints
    C(connect failed) or, for UDP, no server report); the module fails with the tool's message.
  - The module reads iperf3 C(-J), iperf2 C(-y C) (CSV) for TCP and iperf2 text with C(-f k) for UDP, because
    iperf 2.1's CSV carries no server report (no jitter or loss) on the client side.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  role:
    description: V(client) runs a measurement; V(server) starts or stops a one-off server.
    type: str
    choices: [client, server]
    default: client
  state:
    description:
      - Server only. V(started) starts the server and returns its C(pid); V(stopped) stops the
        server O(pid) (a process that is no longer an iperf server is left alone, with a warning).
    type: str
    choices: [started, stopped]
    default: started
  pid:
    description: Server, O(state=stopped) only. The C(pid) that O(state=started) returned.
    type: int
  server:
    description: Client only. The address of the server to connect to.
    type: str
  bind:
    description:
      - The address the server binds to (C(-B)). Required for O(role=server) O(state=started);
        with O(spawn_server=true) it defaults to O(server). Wildcard addresses are refused; the
        server listens on the test address only.
    type: str
  port:
    description: The server port. Default V(5201) for iperf3, V(5001) for iperf2. From 1 to 65535.
    type: int
  version:
    description: V(3) runs C(iperf3), V(2) runs C(iperf) (iperf2).
    type: int
    choices: [3, 2]
    default: 3
  time:
    description: Seconds to transmit (C(-t)). From 1 to 86400.
    type: int
    default: 10
  reverse:
    description:
      - Measure the other direction, server to client (C(-R)), on the same connection. iperf2
        supports C(-R) from version 2.1; with an older iperf2 the module fails and tells you to swap
        the roles (run the client on the other host) instead. C(-r)/C(-d) are not used, because
        they need the server to connect back to the client.
    type: bool
    default: false
  parallel:
    description:
      - Number of parallel streams (C(-P)); the record's throughput is their sum.
      - With iperf 2 and O(udp=true), a stream that received nothing while another did fails the run
        (the sum would count it as 0). The iperf 2 UDP server connects its socket to each stream it
        accepts and then opens its port again, so a second stream arriving in between is refused;
        an iperf 2 that has port ranges (2.1, C(-p port-port) on the server and C(--incr-dstport) on
        the client, read from its C(--help)) gives each stream a port of its own instead (see
        O(incr_dstport); a server started with O(role=server) or O(spawn_server=true) listens on
        O(port) to O(port) + O(parallel) - 1 then). Otherwise a stream refused at its start runs
        the client again, up to 3 times in all, half a second apart; the record's warnings say so.
      - Server, iperf 2 with O(udp=true) only - the streams the clients will run. With more than
        one, the server listens on a port per stream where the installed iperf 2 can, and returns
        C(incr_dstport=true).
      - From 1 to 128.
    type: int
    default: 1
  window:
    description:
      - Socket buffer / TCP window size (C(-w)), passed as given, for example V(256k). iperf3 reads
        V(k) as 1024; iperf2 reads V(k) as 1000 and V(K) as 1024. With iperf2 the same value is
        given to the server (its receive window).
    type: str
  udp:
    description: Use UDP (C(-u)); the record then has C(jitter) and C(lost_pct).
    type: bool
    default: false
  bandwidth:
    description:
      - UDP target bandwidth (C(-b)), for example V(100M) (bits/s). Without it both tools send at
        1 Mbit/s, and the record carries a warning.
    type: str
  incr_dstport:
    description:
      - Client, iperf 2 with O(udp=true) and O(parallel) > 1 only. The server listens on a port per
        stream (O(port) to O(port) + O(parallel) - 1, the C(incr_dstport) a O(role=server) start
        returned), so stream k is sent to O(port) + k - 1 (C(--incr-dstport)). An iperf 2 without
        C(--incr-dstport) sends every stream to O(port), with a warning.
    type: bool
    default: false
  spawn_server:
    description: Client only. Start a one-off server on this host around the client run (loopback tests).
    type: bool
    default: false
  server_timeout:
    description:
      - Seconds after which a server that is left behind ends by itself (iperf3 C(--idle-timeout),
        iperf2 C(-t)). For iperf2 this bounds the whole server life, the test included, so it must
        exceed the client's O(time) plus the delay until the client starts. Default V(300), or
        O(time) + 30 with O(spawn_server=true).
    type: int
  grace:
    description: Seconds between SIGTERM and SIGKILL when a server is stopped.
    type: float
    default: 2.0
notes:
  - Linux targets only (the server's readiness and identity are read from C(/proc)).
  - Check mode returns C(cmd), the argv that would run, without starting anything.
  - Measuring over loopback (V(127.0.0.1)) measures the host's network stack and CPU, not a network;
    the record carries a warning then.
seealso:
  - plugin: benchlab.bench.parse_iperf
    plugin_type: filter
extends_documentation_fragment:
  - benchlab.bench.common
'''

EXAMPLES = r'''
- name: Start a one-off iperf3 server on the server host
  benchlab.bench.iperf:
    role: server
    bind: 192.0.2.10
    port: 5201
  delegate_to: server1
  register: iperf_server

- name: Measure, and always stop the server
  block:
    - name: Client run, 4 streams, 256k window, both directions
      benchlab.bench.iperf:
        server: 192.0.2.10
        port: 5201
        time: 30
        parallel: 4
        window: 256k
        labels:
          net: bridged
      register: iperf_run
  always:
    - name: Stop the server
      benchlab.bench.iperf:
        role: server
        state: stopped
        pid: "{{ iperf_server.pid }}"
      delegate_to: server1
      when: iperf_server.pid is defined

- name: iperf2 UDP at 100 Mbit/s over loopback, server started and stopped by the module
  benchlab.bench.iperf:
    server: 127.0.0.1
    spawn_server: true
    version: 2
    udp: true
    bandwidth: 100M
    time: 5
'''

RETURN = r'''
bench_result:
  description: The result record (schema version 1). C(tool) is V(iperf3) or V(iperf).
  returned: client, success, not in check mode
  type: dict
  contains:
    test:
      description: V(tcp), V(udp), V(tcp_reverse) or V(udp_reverse).
      type: str
      returned: always
      sample: tcp
    metrics:
      description: C(throughput) (Mbit/s), C(retransmits) (count), C(jitter) (ms), C(lost_pct) (%).
      type: dict
      returned: always
      sample: {"throughput": {"value": 9412.3, "unit": "Mbit/s", "better": "higher"}}
    params:
      description: C(server), C(port), C(version), C(protocol), C(direction), C(streams), C(window), C(time), C(bandwidth).
      type: dict
      returned: always
    distributions:
      description: iperf3 only - the throughput of each reporting interval (C(throughput), Mbit/s), the spread within the run.
      type: dict
      returned: iperf3 with at least two intervals
      sample: {"throughput": {"kind": "intervals", "unit": "Mbit/s", "interval_s": 1.0, "values": [9310.2, 9498.7]}}
bench_results:
  description: The same record in a one-element list.
  returned: client, success, not in check mode
  type: list
  elements: dict
cmd:
  description: The client argv (or the server argv with O(role=server)) that ran or would run.
  returned: always except O(state=stopped)
  type: list
  elements: str
  sample: ["/usr/bin/iperf3", "-c", "192.0.2.10", "-p", "5201", "-t", "10", "-J"]
pid:
  description: The server's process id.
  returned: role server
  type: int
ports:
  description: The ports the server listens on (one, or a port per stream of an iperf 2 UDP server).
  returned: role server, state started
  type: list
  elements: int
  sample: [5001, 5002]
incr_dstport:
  description: Whether the server listens on a port per stream, so its clients run with O(incr_dstport=true).
  returned: role server, state started
  type: bool
stopped:
  description: With O(state=stopped), whether a running server was stopped.
  returned: role server, state stopped
  type: bool
signal:
  description: The signal that ended the server (V(SIGTERM) or V(SIGKILL)), or null.
  returned: role server, state stopped; client with spawn_server
  type: str
server_output:
  description: The last lines the server printed.
  returned: role server, state stopped; client with spawn_server
  type: str
bench_dry_run:
  description:
    - What the run would do, in check mode - C(tool), C(argv), C(writes), C(creates), C(removes),
      C(refused) (see the C(check_mode) attribute); C(argvs) lists every command when it runs several.
  returned: check mode
  type: dict
'''

import os
import subprocess
import time

from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun, new_dry_run, run_module
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import COMMON_ARGS, version_tuple
from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import competing_names, competing_processes
from ansible_collections.benchlab.bench.plugins.module_utils.tools.iperf import (
    START_ATTEMPTS, START_PAUSE_S, IperfParseError, client_argv, error_lines, iperf_records, parse_iperf3_json,
    port_per_stream, server_argv, server_ports, udp_stream_refused, version_from_output)
from ansible_collections.benchlab.bench.plugins.module_utils.tools.iperf_server import (
    is_iperf_server, kill_server, server_output, start_server)
from ansible_collections.benchlab.bench.plugins.module_utils.observe.observe import route_interfaces, shaping_rates
from ansible_collections.benchlab.bench.plugins.module_utils.observe.procfs import proc_cmdline
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import utc_now
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import run, tail

WILDCARDS = ('', '0.0.0.0', '::', '[::]', '*')
LOOPBACK_PREFIXES = ('127.', '::1', 'localhost')


def binary(module, version):
    return module.get_bin_path('iperf3' if version == 3 else 'iperf', required=True)


def tool_version(module, path):
    res = run(module, [path, '-v'])
    return version_from_output((res.stdout or '') + '\n' + (res.stderr or ''))


def ports_per_stream(module, path, p):
    """How many ports an iperf 2 UDP server of `p` listens on: one per stream (p['parallel']) when
    the installed iperf 2 takes a port range and --incr-dstport (its --help says so), else 1."""
    if p['version'] != 2 or not p['udp'] or p['parallel'] < 2:
        return 1
    res = run(module, [path, '--help'])
    return p['parallel'] if port_per_stream((res.stdout or '') + '\n' + (res.stderr or '')) else 1


def competing_except_own_server(port, guards):
    """Competing benchmark processes (the names of competing_names(guards)), leaving out the iperf
    server of this very test (one listening on this port, alone or in its range)."""
    def competing():
        return [(pid, name) for pid, name in competing_processes(names=competing_names(guards))
                if not (is_iperf_server(pid) and port in server_ports(proc_cmdline(pid)))]
    return competing


def default_port(p):
    return p['port'] or (5201 if p['version'] == 3 else 5001)


def check_bind(module, bind):
    if bind is None or bind.strip() in WILDCARDS:
        module.fail_json(msg='bind: the server must be bound to the test address (got %r); a wildcard '
                             'address would expose it on every interface' % (bind,))


def server_main(module, p):
    if p['state'] == 'stopped':
        if p['pid'] is None:
            module.fail_json(msg='pid is required with state=stopped')
        pid = p['pid']
        result = dict(changed=False, pid=pid, stopped=False, signal=None, server_output='')
        if module.check_mode:
            module.exit_json(bench_dry_run=dict(new_dry_run('iperf'), removes=['process %d' % pid]), **result)
        if not is_iperf_server(pid):
            module.warn('process %d is not a running iperf server (it ended already): nothing to stop' % pid)
            module.exit_json(**result)
        result['server_output'] = tail(server_output(pid))
        result['signal'] = kill_server(pid, grace=p['grace'])
        result['stopped'] = result['signal'] is not None
        result['changed'] = result['stopped']
        if is_iperf_server(pid):
            module.fail_json(msg='iperf server %d survived SIGKILL' % pid, **result)
        module.exit_json(**result)

    check_bind(module, p['bind'])
    path = binary(module, p['version'])
    port = default_port(p)
    timeout = p['server_timeout'] or 300
    nports = ports_per_stream(module, path, p)
    argv = server_argv(path, p['version'], p['bind'], port, udp=p['udp'], window=p['window'],
                       server_timeout=timeout, ports=nports)
    # incr_dstport: the clients send each stream to a port of its own (the run path passes it on)
    facts = dict(cmd=argv, ports=server_ports(argv), incr_dstport=nports > 1)
    if module.check_mode:
        module.exit_json(changed=False, bench_dry_run=dict(new_dry_run('iperf'), argv=argv), **facts)
    proc, err = start_server(argv, facts['ports'], udp_socket=p['version'] == 2 and p['udp'])
    if err:
        module.fail_json(msg=err, cmd=argv)
    module.exit_json(changed=True, pid=proc.pid, bind=p['bind'], port=port, **facts)


def client_params(p, port, version):
    """The record's params: what the client was asked to do."""
    params = dict(server=p['server'], port=port, version=version, protocol='udp' if p['udp'] else 'tcp',
                  direction='reverse' if p['reverse'] else 'forward', streams=p['parallel'],
                  window=p['window'], time=p['time'])
    if p['udp']:
        params['bandwidth'] = p['bandwidth']
    if version == 2:
        params['format'] = 'text' if p['udp'] else 'csv'
    return params


def client_warnings(p):
    warnings = []
    if p['udp'] and not p['bandwidth']:
        warnings.append('UDP without bandwidth: the tool sends at its default of 1 Mbit/s')
    if p['server'].startswith(LOOPBACK_PREFIXES):
        warnings.append('server %s is a loopback address: this measures the host network stack and CPU, '
                        'not a network' % p['server'])
    return warnings


def check_client(module, p):
    if not p['server']:
        module.fail_json(msg='server is required with role=client')


def measure_client(br, argv, p, records_args):
    """Run the client; fail with iperf's own error, else return its records. The client runs
    through br.run without the quiet verdict (its peer, an iperf server of this host started by an
    earlier task, would read as other load), so that in a batch it is stopped at its run's
    timeout_s like every tool. An iperf 2 UDP stream refused at its start (udp_stream_refused)
    starts the client again, up to START_ATTEMPTS times in all, each time said in the record's
    warnings."""
    version = p['version']
    for attempt in range(1, START_ATTEMPTS + 1):
        if attempt > 1:
            time.sleep(START_PAUSE_S)   # the server's port opens again
        started = utc_now()
        res = br.run(argv, verdict=False)
        refused = udp_stream_refused(version, p['udp'], p['parallel'], res.stdout, res.stderr)
        if attempt == START_ATTEMPTS or not refused:
            break
        records_args['warnings'].append(
            'iperf 2 UDP: a stream was refused at its start (the iperf 2 server opens its UDP port again after '
            'each stream it accepts; a stream arriving in between is refused; this iperf 2 has no port per stream): '
            'the client ran again (attempt %d of %d)' % (attempt + 1, START_ATTEMPTS))
    what = br.what
    if attempt > 1:
        what = '%s (started %d times: a UDP stream was refused at its start %s)' % (
            what, attempt, 'every time' if refused else 'the first %d' % (attempt - 1))
    if version == 3 and (not res.ok or '"error"' in (res.stdout or '')):
        msg = None
        try:
            parse_iperf3_json(res.stdout or '')
        except IperfParseError as e:
            msg = str(e)
        br.fail(what, res, extra=msg)
    elif version == 2 and not res.ok:
        br.fail(what, res, extra='; '.join(error_lines(res.stderr, res.stdout)) or None)
    return br.parse(what, res, iperf_records, res.stdout, res.stderr, started=started, duration_s=res.duration_s,
                    cmd=argv, **records_args)


def stop_spawned_server(proc, p, version, result):
    """Keep what the spawned server printed, then stop it (iperf3 -1 exits by itself after the
    test: it gets a moment before the signals)."""
    result['server_output'] = tail(server_output(proc.pid))
    if version == 3:
        try:
            proc.wait(timeout=p['grace'])
        except subprocess.TimeoutExpired:
            pass
    result['signal'] = kill_server(proc.pid, grace=p['grace'])
    proc.wait()


def client_argvs(module, p, path):
    """(port, client argv, server argv, bind, warnings) of a client run with the binary at `path`.
    Each stream of an iperf 2 UDP client gets a port of its own where this iperf 2 can (its spawned
    server listens on the range) or where the server's start said so (incr_dstport)."""
    port, warnings = default_port(p), []
    nports = ports_per_stream(module, path, p) if p['spawn_server'] or p['incr_dstport'] else 1
    if p['incr_dstport'] and nports == 1 and p['version'] == 2 and p['udp'] and p['parallel'] > 1:
        warnings.append('incr_dstport: this iperf 2 has no --incr-dstport: every stream went to port %d (a stream '
                        'may be refused at its start)' % port)
    argv = client_argv(path, p['version'], p['server'], port, time_s=p['time'], reverse=p['reverse'],
                       parallel=p['parallel'], window=p['window'], udp=p['udp'], bandwidth=p['bandwidth'],
                       incr_dstport=nports > 1)
    bind = p['bind'] or p['server']
    timeout = p['server_timeout'] or p['time'] + 30
    sargv = server_argv(path, p['version'], bind, port, udp=p['udp'], window=p['window'], server_timeout=timeout,
                        ports=nports)
    return port, argv, sargv, bind, warnings


def checked_version(br, path, p):
    """The client's version (iperf -v); iperf 2 before 2.1 has no -R: refused."""
    tv = tool_version(br.module, path)
    if p['version'] == 2 and p['reverse'] and version_tuple(tv) and version_tuple(tv) < (2, 1):
        br.module.fail_json(msg='iperf %s has no -R (reverse): run the client on the other host instead '
                                '(swap the server and client hosts)' % tv, **br.result)
    return tv


def client_main(module, p):
    """One client run over the BenchRun skeleton (module_utils/run/benchrun.py): dry run, guards,
    parse-or-fail, trap codes; a server it spawned is stopped whatever happens (also on a stop
    signal)."""
    check_client(module, p)
    version = p['version']
    path = binary(module, version)
    port, argv, sargv, bind, port_warnings = client_argvs(module, p, path)
    with BenchRun(module, 'iperf', what='iperf3' if version == 3 else 'iperf') as br:
        br.result['cmd'] = argv
        if p['spawn_server']:
            check_bind(module, bind)
            br.result['server_cmd'] = sargv
        br.dry_run(argv, argvs=[sargv, argv] if p['spawn_server'] else None)
        tv = checked_version(br, path, p)
        params, warnings = client_params(p, port, version), client_warnings(p) + port_warnings
        records_args = dict(tool_version=tv, labels=p['labels'], params=params, warnings=warnings, reverse=p['reverse'])
        proc = None
        try:
            if p['spawn_server']:
                proc, err = start_server(sargv, server_ports(sargv), udp_socket=version == 2 and p['udp'])
                if err:
                    module.fail_json(msg=err, **br.result)
                br.result['pid'] = proc.pid
            if br.observe_interval() > 0:
                # observed: the interface towards the server, and its shaping rate where tc shows one;
                # found before the guards, which end at the agreed moment (tc costs seconds in a slow guest)
                br.observe_interfaces = route_interfaces(p['server'])
                br.link_rates = shaping_rates(module, br.observe_interfaces)
            br.measure(params, warnings, competing=competing_except_own_server(port, p['guards']))
            records = measure_client(br, argv, p, records_args)
        finally:
            if proc is not None:
                stop_spawned_server(proc, p, version, br.result)
        br.exit(bench_result=records[0], bench_results=records)


# The options, once (module_utils/run/options.py): the argument spec and the bounds the module
# checks; the matrix schema's params and the plan's option names are read from here too.
OPTIONS = dict(
    role=dict(type='str', choices=['client', 'server'], default='client'),
    state=dict(type='str', choices=['started', 'stopped'], default='started'),
    pid=dict(type='int'),
    server=dict(type='str'),
    bind=dict(type='str'),
    port=dict(type='int', minimum=1, maximum=65535),
    version=dict(type='int', choices=[3, 2], default=3),
    time=dict(type='int', default=10, minimum=1, maximum=86400),
    reverse=dict(type='bool', default=False),
    parallel=dict(type='int', default=1, minimum=1, maximum=128),
    window=dict(type='str'),
    udp=dict(type='bool', default=False),
    bandwidth=dict(type='str'),
    incr_dstport=dict(type='bool', default=False),
    spawn_server=dict(type='bool', default=False),
    server_timeout=dict(type='int'),
    grace=dict(type='float', default=2.0),
)
OPTIONS.update(COMMON_ARGS)


def main():
    run_module(OPTIONS, one_run)


def one_run(module):
    """One run of the module (module_utils/run/benchrun.py run_module: alone, or one of a batch)."""
    p = module.params
    if not os.path.isdir('/proc/self/fd'):
        module.fail_json(msg='benchlab.bench.iperf needs a Linux /proc')
    if p['role'] == 'server':
        server_main(module, p)
    else:
        client_main(module, p)


if __name__ == '__main__':
    main()
