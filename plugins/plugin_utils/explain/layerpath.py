# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each layer's bytes, judged between layers: the way one run's bytes went from the tool down through
every block device observed under its path, and where they stopped.

The layers, top down: the target's own block devices in its layer stack (``observed.devices`` by
``layer``: a loop device, then the disk under its backing file), then, below a guest, the host's
devices under the guest's disk (``observed.host.guest_devices``, observed on the hypervisor at the
same time; a container shares its host's kernel, so a device both see is counted once; a DRBD
peer is no layer below). Each layer's bytes (read or written, as the run's own work did) are set
beside the layer's above: a layer that got less than half of what the layer above it moved is where
the bytes stopped, and what sits between the two is named (the page cache, a loop device's backing
file in the page cache, the host under a guest's disk). The layers against the tool decide:
plugin_utils/explain/explain.py makes ``served_from_cache``, ``writes_elided`` and ``not_durable`` of the
narrowest layer (the fewest bytes: a shared disk below counts other work's bytes too).
Pure functions. Private to benchlab.bench (no API promise)."""

from __future__ import annotations

STOPPED_BELOW = 0.5     # a layer that got less than this share of the layer above's bytes: they stopped there
DURABLE_SHARE = 0.9     # a sync that returned with less than this share of its bytes on the narrowest layer
MB = 1e6


def _devices(devices, layers, where):
    found = [d for d in devices or [] if isinstance(d, dict) and isinstance(d.get('layer'), int)]
    kinds = dict((l.get('name'), l) for l in layers or [] if isinstance(l, dict))
    out = []
    for d in sorted(found, key=lambda d: d['layer']):
        entry = {'name': d['name'], 'kind': d.get('kind'), 'where': where,
                 'read_bytes': d.get('read_bytes') or 0, 'write_bytes': d.get('write_bytes') or 0}
        below = _backing(layers, d['name'])
        if below:
            entry['backing_file'] = below
        if d['name'] in kinds and kinds[d['name']].get('kind'):
            entry['kind'] = kinds[d['name']]['kind']
        out.append(entry)
    return out


def _backing(layers, name):
    """The backing file of loop device `name` in a layer stack, or None."""
    for l in layers or []:
        if isinstance(l, dict) and l.get('name') == name and l.get('backing_file'):
            return l['backing_file']
    for l in layers or []:
        if isinstance(l, dict) and l.get('kind') == 'file' and l.get('above') == name:
            return l['name']
    return None


def layers_of(observed):
    """The block layers a run's bytes went through, top down: [{name, kind, where ('target' or the
    host's name), read_bytes, write_bytes, backing_file (a loop device's)}]."""
    out = _devices(observed.get('devices'), observed.get('stack'), 'target')
    host = observed.get('host') if isinstance(observed.get('host'), dict) else None
    if host and host.get('role') != 'drbd_peer' and host.get('guest_devices'):
        mine = set(host['guest_devices'])
        shared = (host.get('guest') or {}).get('kind') != 'libvirt'     # a container: the same kernel
        seen = set(d['name'] for d in out)
        below = [d for d in host.get('devices') or [] if isinstance(d, dict) and d.get('name') in mine]
        out.extend(d for d in _devices(below, host.get('stack'), host.get('name') or 'host')
                   if not (shared and d['name'] in seen))
    return out


def _between(above, at):
    """What sits between layer `above` (None: the tool) and layer `at` and held the bytes: a text."""
    if above is None:
        return 'the page cache above %s' % at['name']
    if above['where'] == 'target' and at['where'] != 'target':
        return ('the host under the guest\'s disk %s (its page cache of the guest\'s image, or the hypervisor\'s '
                'cache mode)' % above['name'])
    if above.get('kind') == 'loop':
        backing = ' (%s)' % above['backing_file'] if above.get('backing_file') else ''
        owner = 'the host\'s ' if at['where'] != 'target' else 'the '
        return '%spage cache of %s\'s backing file%s' % (owner, above['name'], backing)
    return 'a cache between %s and %s' % (above['name'], at['name'])


def judge(observed, kind, tool_bytes):
    """Each layer's bytes beside the layer's above, for a run whose tool read (`kind` 'read') or wrote
    ('write') `tool_bytes`: {kind, tool_bytes, layers: [{name, where, bytes, ratio (to the layer above;
    the tool's for the first), of_tool}], narrowest: the layer with the fewest bytes per byte of the
    tool (the lowest such; its {name, where, bytes}), ratio: its bytes per byte of the tool, stopped:
    {above (None: the tool), at, where, ratio, held_by} for the first layer that got less than half of
    what the layer above moved, or None}; None without a layer or bytes.

    The narrowest layer, not the bottom one, says what reached the storage: a layer below cannot pass
    on bytes the one above it never got, but a disk shared with other work (the host's, under a
    guest's image) counts theirs too."""
    layers = layers_of(observed)
    if not layers or not tool_bytes:
        return None
    key = 'read_bytes' if kind == 'read' else 'write_bytes'
    out, prev, prev_bytes, stopped = [], None, float(tool_bytes), None
    for layer in layers:
        moved = layer[key]
        ratio = moved / prev_bytes if prev_bytes else None
        out.append({'name': layer['name'], 'where': layer['where'], 'bytes': moved,
                    'ratio': None if ratio is None else round(ratio, 4), 'of_tool': round(moved / float(tool_bytes), 4)})
        if stopped is None and ratio is not None and ratio < STOPPED_BELOW:
            stopped = {'above': prev['name'] if prev else None, 'at': layer['name'], 'where': layer['where'],
                       'ratio': round(ratio, 4), 'held_by': _between(prev, layer)}
        prev, prev_bytes = layer, float(moved)
    narrowest = min(reversed(out), key=lambda l: l['bytes'])
    return {'kind': kind, 'tool_bytes': tool_bytes, 'layers': out,
            'narrowest': dict((k, narrowest[k]) for k in ('name', 'where', 'bytes')),
            'ratio': narrowest['bytes'] / float(tool_bytes), 'stopped': stopped}


def pending_at(observed, where):
    """Dirty and writeback memory when the window closed on the machine `where` ('target', or the
    host below): what may still be on its way down from there."""
    if where == 'target':
        mem = observed.get('memory') or {}
    else:
        mem = ((observed.get('host') or {}).get('memory') or {})
    return sum(max(0, mem.get('%s_end_bytes' % k) or 0) for k in ('dirty', 'writeback'))


def stop_text(judged):
    """(layer name, 'X of Y MB <verb> <layer>[ under <above>]' parts) of where a judged run's bytes
    stopped: the first layer that got less than half of the layer above's, else the narrowest layer."""
    stopped = judged.get('stopped')
    name = stopped['at'] if stopped else judged['narrowest']['name']
    where = stopped['where'] if stopped else judged['narrowest']['where']
    layer = next(l for l in judged['layers'] if l['name'] == name and l['where'] == where)
    under = ' under %s' % stopped['above'] if stopped and stopped.get('above') else ''
    return name, '%s of %s MB' % (mb(layer['bytes']), mb(judged['tool_bytes'])), '%s%s' % (name, under)


def mb(n):
    return '%.0f' % (n / MB) if n >= 10 * MB else '%.1f' % (n / MB)
