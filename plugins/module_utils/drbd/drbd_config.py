# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""DRBD resource definitions as data: normalize and check each resource and the set (legacy 0.7-era
keys translated or refused, handlers refused unless allowed, clashes between resources).
"""

from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import (
    check_name, check_path, DrbdConfigError, format_quoted, format_value, _FSTYPE_RE, _key, _minor,
    NET_OPTIONS, parse_address, parse_meta_disk, PROTOCOLS, _refuse, SYNTAXES, _where)


# Sections the role renders, in this order; resource keys that hold them.
SECTIONS = (('net', 'net'), ('disk', 'disk_options'), ('startup', 'startup'), ('options', 'options'),
            ('handlers', 'handlers'))

# DRBD 0.7/8.3 `syncer { ... }` keys and where DRBD 8.4/9 took them.
SYNCER_MOVED = {
    'rate': ('disk', 'resync-rate'),
    'al-extents': ('disk', 'al-extents'),
    'after': ('disk', 'resync-after'),
    'c-plan-ahead': ('disk', 'c-plan-ahead'),
    'c-fill-target': ('disk', 'c-fill-target'),
    'c-delay-target': ('disk', 'c-delay-target'),
    'c-max-rate': ('disk', 'c-max-rate'),
    'c-min-rate': ('disk', 'c-min-rate'),
    'verify-alg': ('net', 'verify-alg'),
    'csums-alg': ('net', 'csums-alg'),
    'use-rle': ('net', 'use-rle'),
    'cpu-mask': ('options', 'cpu-mask'),
    'on-no-data-accessible': ('options', 'on-no-data-accessible'),
}

SYNCER_REFUSED = {
    'group': ('DRBD 8.x removed sync groups; order resyncs with disk_options.resync_after: <name of the '
              'resource that must sync first> instead'),
}

# Other 0.7-era keys with no modern spelling.
REFUSED = {
    ('net', 'on-disconnect'): ('DRBD 8.0 removed on-disconnect with no replacement: a lost connection is '
                               'retried by connect-int/ping-int; use a fencing policy (disk_options.fencing '
                               'in 8.4, net.fencing in 9) to react to it'),
    ('disk', 'on-io-error', 'panic'): ('on-io-error panic is gone since DRBD 8.0: use on-io-error '
                                       'call-local-io-error with a handlers.local_io_error command'),
}

HANDLERS_REFUSED = ('DRBD runs handler commands as root through a shell, so benchlab writes them only when '
                    'you allow it: set allow_handlers: true (role: drbd_allow_handlers: true)')


def _options(section, value, where, out, notes, secrets, allow_handlers=False):
    if value is None:
        return
    if not isinstance(value, dict):
        raise DrbdConfigError('%s: must be a mapping of option: value' % where)
    for k, v in value.items():
        key = _key(k, where)
        if section == 'handlers':
            if not allow_handlers:
                raise DrbdConfigError('%s.%s: %s' % (where, k, HANDLERS_REFUSED))
            out.setdefault(section, {})[key] = format_quoted(v, '%s.%s' % (where, k), 'handler command')
            continue
        if section == 'net' and key == 'shared-secret':
            if isinstance(v, str) and v:
                secrets.append(v)
            out.setdefault(section, {})[key] = format_quoted(v, '%s.%s' % (where, k), 'shared secret', 63)
            continue
        refused = REFUSED.get((section, key)) or REFUSED.get((section, key, str(v)))
        if refused:
            raise DrbdConfigError('%s.%s: %s' % (where, k, refused))
        if section == 'net' and key not in NET_OPTIONS:
            raise DrbdConfigError('%s.%s: %r is not a net option drbd-utils knows (one of %s)'
                                  % (where, k, k, ', '.join(o.replace('-', '_') for o in NET_OPTIONS)))
        if section == 'net' and key == 'protocol':
            raise DrbdConfigError('%s.protocol: set the protocol with the resource key `protocol`' % where)
        out.setdefault(section, {})[key] = format_value(v, '%s.%s' % (where, k))


def normalize_resource(res, index=0, syntax='9', allow_handlers=False):
    """Check one resource definition and return its normalized form (see render_resource).

    Raises DrbdConfigError naming the field for: a missing name, a bad protocol, fewer than two
    `on` sections (nodes), duplicate node names or node-ids, two nodes on one address:port, a bad
    device/minor, a missing backing disk, a secret without cram_hmac_alg, a refused legacy key, and
    any value that is drbd.conf syntax rather than data (see the module docstring). Handlers (and the
    legacy incon_degr_cmd) are shell commands DRBD runs as root: refused unless allow_handlers.
    """
    if syntax not in SYNTAXES:
        raise DrbdConfigError('drbd_syntax: %r is not one of %s' % (syntax, ', '.join(SYNTAXES)))
    if not isinstance(res, dict):
        raise DrbdConfigError('%s: must be a mapping' % _where(index))
    name = check_name(res.get('name'), _where(index) + '.name', 'resource name', syntax)
    where = _where(index, res)
    protocol = res.get('protocol', 'C')
    protocol = protocol.upper() if isinstance(protocol, str) else protocol
    if protocol not in PROTOCOLS:
        raise DrbdConfigError('%s.protocol: %r is not a DRBD protocol (A, B or C)' % (where, res.get('protocol')))
    notes, secrets, sections = [], [], {}
    for section, rkey in SECTIONS:
        _options(section, res.get(rkey), '%s.%s' % (where, rkey), sections, notes, secrets, allow_handlers)
    _legacy_syncer(res.get('syncer'), where, sections, notes)
    _legacy_incon_degr(res, where, sections, notes, allow_handlers)
    _shared_secret(res, where, sections, secrets)
    out_nodes = _nodes(res, where, syntax, notes)
    mesh = res.get('connection_mesh')
    if mesh is None:
        mesh = syntax == '9' and len(out_nodes) > 2
    if mesh and syntax != '9':
        raise DrbdConfigError("%s.connection_mesh: a DRBD 9 feature: use drbd_syntax '9'" % where)
    primary, mount, fstype = _on_primary(res, where, [n['name'] for n in out_nodes])
    return {'name': name, 'protocol': protocol, 'syntax': syntax, 'sections': sections, 'nodes': out_nodes,
            'connection_mesh': bool(mesh), 'secrets': [s for s in secrets if s], 'notes': notes,
            'primary': primary, 'mount': mount, 'fstype': fstype}


def _legacy_syncer(syncer, where, sections, notes):
    """Legacy (0.7/8.3) `syncer` keys: translated where DRBD has a modern spelling, the others refused."""
    if syncer is None:
        return
    if not isinstance(syncer, dict):
        raise DrbdConfigError('%s.syncer: must be a mapping' % where)
    for k, v in syncer.items():
        key = _key(k, where + '.syncer')
        if key in SYNCER_REFUSED:
            raise DrbdConfigError('%s.syncer.%s: %s' % (where, k, SYNCER_REFUSED[key]))
        if key not in SYNCER_MOVED:
            raise DrbdConfigError('%s.syncer.%s: the syncer section is gone since DRBD 8.4 and %s has no '
                                  'known new place: set it in disk_options or net yourself' % (where, k, key))
        section, new = SYNCER_MOVED[key]
        if new in sections.get(section, {}):
            raise DrbdConfigError('%s.syncer.%s: also set as %s.%s; keep only the modern one'
                                  % (where, k, section, new))
        sections.setdefault(section, {})[new] = format_value(v, '%s.syncer.%s' % (where, k))
        notes.append('syncer.%s -> %s %s' % (key, section, new))
        if key == 'rate' and 'c-plan-ahead' not in sections.get('disk', {}) \
                and not any(str(x).replace('_', '-') == 'c-plan-ahead' for x in syncer):
            # 0.7 synced at a fixed rate; 8.4/9 default to the dynamic controller, which treats
            # resync-rate only as a start value. c-plan-ahead 0 keeps the fixed rate.
            sections['disk']['c-plan-ahead'] = '0'
            notes.append('syncer.rate is a fixed rate: c-plan-ahead 0 added (set disk_options.c_plan_ahead '
                         'to use the dynamic resync controller)')


def _legacy_incon_degr(res, where, sections, notes, allow_handlers):
    incon = res.get('incon_degr_cmd', res.get('incon-degr-cmd'))
    if incon is None:
        return
    if not allow_handlers:
        raise DrbdConfigError('%s.incon_degr_cmd: %s' % (where, HANDLERS_REFUSED))
    if 'pri-on-incon-degr' in sections.get('handlers', {}):
        raise DrbdConfigError('%s.incon_degr_cmd: also set as handlers.pri_on_incon_degr; keep only that one'
                              % where)
    sections.setdefault('handlers', {})['pri-on-incon-degr'] = format_quoted(incon, where + '.incon_degr_cmd',
                                                                             'handler command')
    notes.append('incon-degr-cmd -> handlers pri-on-incon-degr')


def _shared_secret(res, where, sections, secrets):
    secret = res.get('shared_secret')
    if secret is not None:
        if not isinstance(secret, str) or not secret:
            raise DrbdConfigError('%s.shared_secret: must be a non-empty string' % where)
        secrets.append(secret)
        if 'shared-secret' in sections.get('net', {}):
            raise DrbdConfigError('%s.shared_secret: also set as net.shared_secret; keep only one' % where)
        if len(secret) > 63:
            raise DrbdConfigError('%s.shared_secret: longer than the 63 characters DRBD accepts' % where)
        sections.setdefault('net', {})['shared-secret'] = format_quoted(secret, where + '.shared_secret',
                                                                        'shared secret', 63)
    if res.get('cram_hmac_alg') is not None:
        sections.setdefault('net', {})['cram-hmac-alg'] = format_value(res['cram_hmac_alg'], where + '.cram_hmac_alg')
    net = sections.get('net', {})
    if 'shared-secret' in net:
        if 'cram-hmac-alg' not in net:
            raise DrbdConfigError('%s.shared_secret: set without cram_hmac_alg (e.g. sha256): the peers would '
                                  'not authenticate each other' % where)


def _nodes(res, where, syntax, notes):
    """The `on` sections, checked against each other (names, addresses, node-ids)."""
    nodes = res.get('nodes')
    if not isinstance(nodes, list) or not nodes:
        raise DrbdConfigError('%s.nodes: missing: a resource needs an `on` section (a node with name and '
                              'address) for each of its nodes' % where)
    if len(nodes) < 2:
        only = nodes[0].get('name') if isinstance(nodes[0], dict) else nodes[0]
        raise DrbdConfigError('%s.nodes: only one `on` section (%s): add the peer node it replicates to'
                              % (where, only))
    if syntax == '8.4' and len(nodes) > 2:
        raise DrbdConfigError('%s.nodes: DRBD 8.4 replicates between exactly two nodes, %d given: use '
                              "drbd_syntax '9' for more" % (where, len(nodes)))
    ctx = {'res': res, 'where': where, 'syntax': syntax, 'notes': notes, 'nodes': nodes,
           'minor': _minor(res, where), 'meta': parse_meta_disk(res.get('meta_disk', 'internal'), where),
           'names': {}, 'ids': {}, 'addrs': {}}
    return [_node(node, i, ctx) for i, node in enumerate(nodes)]


def _node(node, i, ctx):
    """One `on` section (ctx: the resource, its defaults and what earlier nodes took)."""
    res, where, syntax = ctx['res'], ctx['where'], ctx['syntax']
    nwhere = '%s.nodes[%d]' % (where, i)
    if not isinstance(node, dict):
        raise DrbdConfigError('%s: must be a mapping with name and address' % nwhere)
    nname = check_name(node.get('name'), nwhere + '.name', "node name (the node's `uname -n`)", syntax)
    nwhere = '%s.nodes[%d] (%s)' % (where, i, nname)
    if nname in ctx['names']:
        raise DrbdConfigError('%s.name: two `on %s` sections' % (nwhere, nname))
    ctx['names'][nname] = i
    family, ip, port = parse_address(node.get('address'), node.get('port', res.get('port')), nwhere)
    if (ip, port) in ctx['addrs']:
        raise DrbdConfigError('%s.address: address clash: %s:%d is also the address of node %s'
                              % (nwhere, ip, port, ctx['addrs'][(ip, port)]))
    ctx['addrs'][(ip, port)] = nname
    minor = _minor(node, nwhere, ctx['minor'])
    if minor is None:
        raise DrbdConfigError('%s: no device/minor (set minor: or device: /dev/drbd<minor> on the resource)'
                              % nwhere)
    disk = node.get('disk', res.get('disk'))
    if disk is None:
        raise DrbdConfigError('%s.disk: missing or not a device path (the backing disk, e.g. /dev/sdb1)'
                              % nwhere)
    check_path(disk, nwhere + '.disk' if 'disk' in node else where + '.disk', 'backing disk path')
    meta = parse_meta_disk(node['meta_disk'], nwhere) if 'meta_disk' in node else ctx['meta']
    return {'name': nname, 'family': family, 'ip': ip, 'port': port, 'minor': minor,
            'disk': disk, 'meta_disk': meta, 'node_id': _node_id(node, i, nname, nwhere, ctx)}


def _node_id(node, i, nname, nwhere, ctx):
    """DRBD 9: the node-id (given on every node or on none: then its index), unique; 8.4 has none."""
    node_id = node.get('node_id')
    if ctx['syntax'] != '9':
        if node_id is not None:
            ctx['notes'].append('node_id of %s ignored: DRBD 8.4 has no node-id' % nname)
        return None
    if node_id is None:
        if any(isinstance(n, dict) and n.get('node_id') is not None for n in ctx['nodes']):
            raise DrbdConfigError('%s.node_id: set on some nodes but not this one: give every node one' % nwhere)
        node_id = i
    if isinstance(node_id, bool) or not isinstance(node_id, int) or not 0 <= node_id <= 31:
        raise DrbdConfigError('%s.node_id: %r is not a node-id (0-31)' % (nwhere, node_id))
    if node_id in ctx['ids']:
        raise DrbdConfigError('%s.node_id: %d is also the node-id of %s' % (nwhere, node_id, ctx['ids'][node_id]))
    ctx['ids'][node_id] = nname
    return node_id


def _on_primary(res, where, names):
    """What the role does with it on the primary (drbd_lifecycle states mounted/unmounted)."""
    primary = res.get('primary')
    if primary is None:
        primary = names[0]
    elif primary not in names:
        raise _refuse(where + '.primary', primary, 'is not one of its nodes (%s)' % ', '.join(names))
    mount = res.get('mount')
    if mount is not None:
        check_path(mount, where + '.mount', 'mount point')
    fstype = res.get('fstype', 'ext4')
    if not isinstance(fstype, str) or not _FSTYPE_RE.fullmatch(fstype):
        raise _refuse(where + '.fstype', fstype, 'is not a filesystem type (ext4, xfs, ...)')
    return primary, mount, fstype


def check_resources(resources, syntax='9', allow_handlers=False):
    """Normalize every resource and check them against each other: resource names, and per node
    the minor, the backing disk, external meta-data slots, and every address:port only once.
    Returns the normalized list; raises DrbdConfigError naming the second user of a clash."""
    if not isinstance(resources, list):
        raise DrbdConfigError('drbd_resources: must be a list of resources')
    out, names, minors, disks, metas, addrs = [], {}, {}, {}, {}, {}
    for i, res in enumerate(resources):
        norm = normalize_resource(res, i, syntax, allow_handlers)
        where = _where(i, res)
        if norm['name'] in names:
            raise DrbdConfigError('%s.name: resource %s is defined twice (also drbd_resources[%d])'
                                  % (where, norm['name'], names[norm['name']]))
        names[norm['name']] = i
        for node in norm['nodes']:
            h = node['name']
            owner = minors.get((h, node['minor']))
            if owner:
                raise DrbdConfigError('%s: duplicate minor %d on node %s: already used by resource %s'
                                      % (where, node['minor'], h, owner))
            minors[(h, node['minor'])] = norm['name']
            owner = disks.get((h, node['disk']))
            if owner:
                raise DrbdConfigError('%s: backing disk %s on node %s is already the disk of resource %s'
                                      % (where, node['disk'], h, owner))
            disks[(h, node['disk'])] = norm['name']
            kind, mdev, midx = node['meta_disk']
            if kind == 'external':
                owner = metas.get((h, mdev, midx))
                if owner:
                    raise DrbdConfigError('%s: meta-disk %s [%s] on node %s is already used by resource %s'
                                          % (where, mdev, midx, h, owner))
                metas[(h, mdev, midx)] = norm['name']
            owner = addrs.get((node['ip'], node['port']))
            if owner:
                raise DrbdConfigError('%s: address clash: %s:%d (node %s) is already used by resource %s'
                                      % (where, node['ip'], node['port'], h, owner))
            addrs[(node['ip'], node['port'])] = norm['name']
        out.append(norm)
    return out
