# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""iperf (iperf3 and iperf 2), as a benchmark unit: what the controller knows about it beside its
module (plugins/modules/iperf.py: the options) and its parser (plugins/module_utils/tools/iperf.py). The
parts and their meaning: plugin_utils/common/toolinfo.py. Private to benchlab.bench (no API promise).

A run is the client on the cell's host; its phases (plugin_utils/plan/runpath.py carries them out, on the
hosts they name): a one-off server on ``server_host`` (default: the cell's host, over 127.0.0.1)
started before and stopped after, whatever happened. ``concurrent`` pairs are measured at the same
time: each pair's server is started, its client started in the background on its client host, and
its record collected after this run's own client. Ansible starts those clients one after the
other, so every client waits for one agreed moment (``guards.start_at``: ``start_delay_s`` after the
pairs' servers started, default 2 s + 1.5 s per pair) and the pairs really run together; the
analysis checks from the records that they did (plugin_utils/analysis/measurements.py). Every pair's record
carries the labels ``pair`` (1..N+1) and ``pairs`` (N+1).
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.tools.iperf import iperf_records

ORDER = 60
RECORDS = ('iperf3', 'iperf')
PROCESSES = ('iperf3', 'iperf')
INSTALL = {'iperf3': {'programs': ['iperf3'], 'packages': {'Debian': ['iperf3'], 'RedHat': ['iperf3']}},
           'iperf': {'programs': ['iperf'], 'packages': {'Debian': ['iperf'], 'RedHat': ['iperf']}}}
METRICS = [
    ('throughput', 'Mbit/s', 'higher', 'what the receiver got (iperf3, iperf 2 UDP), else what the sender wrote'),
    ('retransmits', 'count', 'lower', 'TCP retransmits, where the output has them'),
    ('jitter', 'ms', 'lower', 'UDP jitter'),
    ('lost_pct', '%', 'lower', 'UDP datagrams lost'),
]
NOT_PARAMS = {
    'role': 'the run is the client; the server is a phase of the run',
    'state': "the server phase's",
    'pid': "the server phase's",
    'server': 'server_address (PLAN_PARAMS)',
    'bind': 'server_address (PLAN_PARAMS)',
    'spawn_server': 'the server is a phase of the run (server_host)',
    'server_timeout': "the server phase's: the run's time + 120 s",
    'grace': "the server phase's",
    'incr_dstport': "the server phase's answer (an iperf 2 UDP server that listens on a port per stream)",
}
PARAMS = {
    'window': {'$ref': '#/$defs/size'},
    'bandwidth': {'pattern': '^[0-9]+(\\.[0-9]+)?[kKmMgG]?$'},
}
_ADDRESS = {'type': 'string', 'pattern': '^[0-9A-Za-z.:%-]+$'}
_HOST = {'type': 'string', 'minLength': 1}
PLAN_PARAMS = {
    'server_host': dict(_HOST, description='The inventory host the server runs on (default: the cell\'s host).'),
    'server_address': dict(_ADDRESS, description='The address the server binds to and the client connects to '
                                                 '(default 127.0.0.1).'),
    'start_delay_s': {
        'type': 'number', 'minimum': 0, 'maximum': 600,
        'description': "With concurrent pairs: how long after the last task before the pairs' clients are started every "
                       'pair starts (guards.start_at), so that they run together although Ansible starts them one after '
                       'the other (default 2 s + 1.5 s per concurrent pair; raise it for slow guests: a late start is '
                       'recorded and the analysis refuses to sum pairs that did not run together).'},
    'concurrent': {
        'type': 'array',
        'description': "More client/server pairs measured at the same time as this run's own pair (the 'N guests at "
                       "once' test); each pair yields its own record, labelled pair=2..N+1; the report counts the step "
                       "once, as the sum of the pairs' throughputs (per-pair figures as detail): n = repetitions.",
        'maxItems': 15,
        'items': {'type': 'object', 'required': ['client_host', 'server_host', 'server_address'],
                  'additionalProperties': False,
                  'properties': {'client_host': _HOST, 'server_host': _HOST, 'server_address': _ADDRESS,
                                 'port': {'type': 'integer', 'minimum': 1, 'maximum': 65535}}},
    },
}
# The options of a client the run and its concurrent pairs share.
_CLIENT = ('version', 'time', 'reverse', 'parallel', 'window', 'udp', 'bandwidth')
_SERVER = ('version', 'udp', 'window', 'parallel')


def hosts(params):
    """[(param, inventory host)] of the other hosts a run occupies (its servers, the pairs' clients):
    the matrix check wants them in the inventory, the schedule holds their resources too."""
    out = []
    if params.get('server_host') is not None:
        out.append(('server_host', params['server_host']))
    for j, pair in enumerate(params.get('concurrent') or []):
        if isinstance(pair, dict):
            out.extend(('concurrent[%d].%s' % (j, key), pair[key]) for key in ('client_host', 'server_host')
                       if pair.get(key) is not None)
    return out


def estimate_s(params, opt, mb):
    return float(opt('time')) + 2


def _pick(params, keys):
    return dict((k, params[k]) for k in keys if params.get(k) is not None)


def _base_port(params):
    return int(params.get('port') or (5001 if int(params.get('version') or 3) == 2 else 5201))


def ports_per_server(params):
    """The ports one server may take: an iperf 2 UDP server of several streams listens on a port per
    stream where its iperf 2 can (the module decides on the host; the plan keeps them free)."""
    version, parallel = int(params.get('version') or 3), int(params.get('parallel') or 1)
    return parallel if version == 2 and params.get('udp') and parallel > 1 else 1


def pairs(run):
    """The concurrent pairs of a run, each with its port (default: the run's port + n times the ports
    a server may take) and number."""
    params = run.get('params') or {}
    base, span = _base_port(params), ports_per_server(params)
    return [dict(p, port=int(p.get('port') or base + n * span), pair=n + 1)
            for n, p in enumerate(params.get('concurrent') or [], 1)]


def _labels(run, pair, npairs, client=None):
    labels = dict(run.get('labels') or {})
    if npairs > 1:
        labels.update(pair=pair, pairs=npairs)
    if client:
        labels['client'] = client
    return labels


def module_args(run):
    """The client of this run's own pair (pair 1 when there are concurrent pairs)."""
    params = run.get('params') or {}
    return {'role': 'client', 'server': params.get('server_address') or '127.0.0.1',
            'labels': _labels(run, 1, len(params.get('concurrent') or []) + 1)}


def start_delay_s(run):
    """With concurrent pairs, every client starts at one agreed moment this long after the servers."""
    extra = pairs(run)
    if not extra:
        return None
    params = run.get('params') or {}
    return float(params['start_delay_s']) if params.get('start_delay_s') is not None else 2 + 1.5 * len(extra)


def phases(run, hostvars):
    """The servers (this pair's and every concurrent pair's) before the run and stopped after it;
    the concurrent pairs' clients started in the background on the agreed moment and their records
    collected after this run's own client."""
    params = run.get('params') or {}
    limit = int(params.get('time') or 10) + 120
    server = dict(_pick(params, _SERVER), role='server', state='started', server_timeout=limit)
    stop = dict(_pick(params, ('version',)), role='server', state='stopped')
    extra = pairs(run)
    # a server on a port per stream (iperf 2 UDP, where it can) has its client send each stream to its own
    out = [dict(name='server', at='before', host=params.get('server_host') or run['host'], module='benchlab.bench.iperf',
                args=dict(server, bind=params.get('server_address') or '127.0.0.1', **_pick(params, ('port',))),
                run_args={'incr_dstport': 'incr_dstport'})]
    out.extend(dict(name='server-%d' % p['pair'], at='before', host=p['server_host'], module='benchlab.bench.iperf',
                    args=dict(server, bind=p['server_address'], port=p['port'])) for p in extra)
    client = _pick(params, _CLIENT)
    guards = {'quiesce': False, 'cooldown_s': 0, 'warmup': bool((run.get('guards') or {}).get('warmup'))}
    out.extend(dict(name='pair-%d' % p['pair'], at='start', host=p['client_host'], module='benchlab.bench.iperf',
                    async_s=limit, start_at=True, records=True, args_from={'incr_dstport': 'server-%d.incr_dstport' % p['pair']},
                    args=dict(client, role='client', server=p['server_address'], port=p['port'], guards=guards,
                              labels=_labels(run, p['pair'], len(extra) + 1, p['client_host'])))
               for p in extra)
    out.extend(dict(name='collect-%d' % p['pair'], at='after', host=p['client_host'], collect='pair-%d' % p['pair'],
                    async_s=limit, records=True) for p in extra)
    out.extend(dict(name='stop-%d' % p['pair'], at='after', host=p['server_host'], module='benchlab.bench.iperf',
                    args=stop, args_from={'pid': 'server-%d.pid' % p['pair']}) for p in extra)
    out.append(dict(name='stop', at='after', host=params.get('server_host') or run['host'], module='benchlab.bench.iperf',
                    args=stop, args_from={'pid': 'server.pid'}))
    return out


IMPORTS = {
    'iperf': {'parse': lambda entry, text: iperf_records(text, tool_version=entry.get('tool_version'),
                                                         reverse=entry.get('reverse')), 'keys': ('reverse',)},
    'iperf3': {'parse': lambda entry, text: iperf_records(text, tool_version=entry.get('tool_version'),
                                                          reverse=entry.get('reverse')), 'keys': ('reverse',)},
}
