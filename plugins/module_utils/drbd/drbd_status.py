# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""DRBD state: drbdsetup status parsed (--json from a DRBD 9 module, text from drbdsetup-84 for an 8.4
module) into one entry per volume, and whether it is settled (UpToDate, no resync, peer there).
"""

import json

from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import DrbdParseError, _first_line


SYNCING = ('SyncSource', 'SyncTarget', 'PausedSyncS', 'PausedSyncT', 'WFBitMapS', 'WFBitMapT',
           'WFSyncUUID', 'StartingSyncS', 'StartingSyncT', 'VerifyS', 'VerifyT')


def status_argv(drbdsetup, name=None, proc_drbd=''):
    """(argv, parser) reading the state of `name` (None: every resource). A DRBD 9 module answers
    `drbdsetup status --json`; an 8.4 module (/proc/drbd says `version: 8.4...`: drbd-utils 9 hand it
    to drbdsetup-84, which has no --json) answers `drbdsetup status --verbose --statistics` in text."""
    base = [drbdsetup, 'status'] + ([name] if name else [])
    if (proc_drbd or '').lstrip().startswith('version: 8.'):
        return base + ['--verbose', '--statistics'], parse_status_text
    return base + ['--json'], parse_status_json


def parse_status_json(text):
    """`drbdsetup status --json` -> one entry per resource volume, the shape sysinfo's `drbd`
    list and the drbd_not_uptodate trap read:

    {name, volume, minor, role, disk_state, peer_disk_state, replication, connection,
     sync_percent, out_of_sync_kib, peers: [{name, node_id, connection, role, disk_state,
     replication, client, sync_percent, out_of_sync_kib}]}

    peer_disk_state / replication / connection summarize the diskful peers that are connected:
    the first one not UpToDate / not Established wins; None when no diskful peer is connected
    (a StandAlone or disconnected baseline has no peer to wait for). Diskless clients are listed
    in peers but do not count.
    """
    stripped = (text or '').strip()
    if not stripped:
        raise DrbdParseError('drbdsetup status --json: empty output')
    try:
        data = json.loads(stripped)
    except ValueError as e:
        raise DrbdParseError('drbdsetup status --json: not JSON (%s) at %r' % (e, _first_line(text)))
    if not isinstance(data, list):
        raise DrbdParseError('drbdsetup status --json: expected a list of resources, got %r' % _first_line(text))
    out = []
    for res in data:
        if not isinstance(res, dict) or 'name' not in res:
            raise DrbdParseError('drbdsetup status --json: a resource without a name: %r' % (res,))
        for dev in res.get('devices') or [{'volume': 0}]:
            out.append(_volume_entry(res, dev))
    return out


def _peers(res, vol):
    peers = []
    for conn in res.get('connections') or []:
        pds = [pd for pd in conn.get('peer_devices') or [] if pd.get('volume', 0) == vol] or [{}]
        for pd in pds:
            peers.append({
                'name': conn.get('name'), 'node_id': conn.get('peer-node-id'),
                'connection': conn.get('connection-state'), 'role': conn.get('peer-role'),
                'disk_state': pd.get('peer-disk-state'), 'replication': pd.get('replication-state'),
                'client': bool(pd.get('peer-client', False)),
                'sync_percent': pd.get('done', pd.get('percent-in-sync')),
                'out_of_sync_kib': pd.get('out-of-sync'),
            })
    return peers


def _volume_entry(res, dev):
    """One resource volume of `drbdsetup status --json`'s shape as a parse_status_json entry."""
    vol = dev.get('volume', 0)
    peers = _peers(res, vol)
    counted = [p for p in peers if not p['client'] and p['connection'] == 'Connected']
    peer_disk = replication = None
    if counted:
        bad = [p for p in counted if p['disk_state'] != 'UpToDate']
        peer_disk = (bad[0] if bad else counted[0])['disk_state']
        moving = [p for p in counted if p['replication'] != 'Established']
        replication = (moving[0] if moving else counted[0])['replication']
    conns = [p['connection'] for p in peers if not p['client']]
    not_conn = [c for c in conns if c != 'Connected']
    syncing = [p for p in counted if p['replication'] in SYNCING]
    return {
        'name': res['name'], 'volume': vol, 'minor': dev.get('minor'), 'role': res.get('role'),
        'disk_state': dev.get('disk-state'), 'peer_disk_state': peer_disk, 'replication': replication,
        'connection': (not_conn[0] if not_conn else (conns[0] if conns else None)),
        'sync_percent': min((p['sync_percent'] for p in syncing if p['sync_percent'] is not None), default=None),
        'out_of_sync_kib': sum(p['out_of_sync_kib'] or 0 for p in counted) if counted else None,
        'peers': peers,
    }


# `drbdsetup status --verbose --statistics` (text) key -> the --json key, and its type.
_TEXT_KEYS = {
    'role': ('role', str), 'disk': ('disk-state', str), 'minor': ('minor', int), 'volume': ('volume', int),
    'connection': ('connection-state', str), 'peer-node-id': ('peer-node-id', int),
    'replication': ('replication-state', str), 'peer-disk': ('peer-disk-state', str), 'done': ('done', float),
    'out-of-sync': ('out-of-sync', int), 'peer-client': ('peer-client', lambda v: v == 'yes'),
}


def _text_pairs(line, where):
    """`key:value key:value` -> {json key: typed value}; the first bare word is returned as `_word`."""
    out = {}
    for i, token in enumerate(line.split()):
        key, sep, value = token.partition(':')
        if not sep:
            if i == 0:
                out['_word'] = token
                continue
            raise DrbdParseError('drbdsetup status: cannot read %r in %r' % (token, where))
        jkey, kind = _TEXT_KEYS.get(key, (key, str))
        try:
            out[jkey] = kind(value)
        except ValueError:
            raise DrbdParseError('drbdsetup status: %s:%s is not a number in %r' % (key, value, where))
    return out


def parse_status_text(text):
    """`drbdsetup status --verbose --statistics` (what drbdsetup-84 prints for an 8.4 module, no
    --json there) -> the same entries as parse_status_json. Lines: `<resource> role:..` at column 0,
    `volume:N minor:M disk:..` (a device), `<peer> connection:.. role:..` (a connection: `peer` for
    8.4), `volume:N replication:.. peer-disk:..` under it (a peer device); statistics lines continue
    the object above them. A StandAlone resource has no connection lines: its connection is StandAlone."""
    if not (text or '').strip():
        raise DrbdParseError('drbdsetup status: empty output')
    data, res, conn, current = [], None, None, None
    for line in text.splitlines():
        if not line.strip():
            continue
        pairs = _text_pairs(line, line.strip())
        if not line[0].isspace():
            if '_word' not in pairs:
                raise DrbdParseError('drbdsetup status: no resource name in %r' % line.strip())
            res = {'name': pairs.pop('_word'), 'role': pairs.get('role'), 'devices': [], 'connections': []}
            data.append(res)
            conn, current = None, res
        elif res is None:
            raise DrbdParseError('drbdsetup status: %r before any resource' % line.strip())
        elif 'connection-state' in pairs:
            conn = {'name': pairs.pop('_word', None), 'peer_devices': [], 'peer-role': pairs.pop('role', None)}
            conn.update(pairs)
            res['connections'].append(conn)
            current = conn
        elif 'volume' in pairs and conn is not None:
            current = dict(pairs)
            conn['peer_devices'].append(current)
        elif 'volume' in pairs:
            current = dict(pairs)
            res['devices'].append(current)
        else:
            pairs.pop('_word', None)
            current.update(pairs)
    out = []
    for r in data:
        for dev in r['devices'] or [{'volume': 0}]:
            entry = _volume_entry(r, dev)
            if not r['connections']:
                # 8.4 prints no peer at all for a StandAlone resource (DRBD 9 lists it as StandAlone)
                entry['connection'] = 'StandAlone'
            out.append(entry)
    return out


def settled(entries):
    """(ok, reason): ok when every volume is UpToDate and no connected peer is resyncing or behind.
    A peer that is configured but not connected (Connecting/WFConnection: stopped or unreachable) is
    not settled: a cell would measure a replication that does not happen. StandAlone (disconnected on
    purpose: the no-replication baseline) is."""
    for e in entries:
        if e.get('connection') not in (None, 'Connected', 'StandAlone'):
            return False, '%s/%s peer connection is %s (the peer is stopped or unreachable)' % (
                e['name'], e['volume'], e['connection'])
        if e['disk_state'] != 'UpToDate':
            return False, '%s/%s disk is %s' % (e['name'], e['volume'], e['disk_state'])
        if e['replication'] in SYNCING:
            return False, '%s/%s is resyncing (%s, %s%% in sync)' % (e['name'], e['volume'], e['replication'],
                                                                     e['sync_percent'])
        if e['peer_disk_state'] not in (None, 'UpToDate'):
            return False, '%s/%s peer disk is %s' % (e['name'], e['volume'], e['peer_disk_state'])
    return True, 'UpToDate'
