# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""A normalized resource rendered as a .res file (DRBD 8.4 or 9 syntax) with benchlab's ownership
header, and the ownership check before a file is replaced or removed.
"""

import re

from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_config import SECTIONS
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import _token_or_quoted


# The header line of every .res file benchlab writes: its mark of ownership (docs/safety.md).
HEADER_PREFIX = '# benchlab.bench managed resource '

# Files written before the header carried name and lab (still benchlab's: they said so).
LEGACY_HEADER_PREFIX = '# Managed by benchlab.bench (role drbd)'

_HEADER_RE = re.compile(r'# benchlab\.bench managed resource (?P<name>\S+); lab=(?P<lab>\S+); do not edit\Z')


def _meta_text(meta):
    kind, dev, idx = meta
    if kind == 'internal':
        return 'internal'
    dev = _token_or_quoted(dev)
    return dev if idx is None else '%s [%d]' % (dev, idx)


def _address_text(node):
    if node['family'] == 'ipv6':
        return 'ipv6 [%s]:%d' % (node['ip'], node['port'])
    return 'ipv4 %s:%d' % (node['ip'], node['port'])


def header_line(name, lab='default'):
    """The first line of every .res file benchlab writes: its mark (name and lab)."""
    return '%s%s; lab=%s; do not edit' % (HEADER_PREFIX, name, lab)


def file_mark(text):
    """The benchlab mark of a .res file's text: {'name', 'lab'} (both None for the older header
    without them), or None when the file was not written by benchlab."""
    first = (text or '').split('\n', 1)[0]
    m = _HEADER_RE.match(first)
    if m:
        return {'name': m.group('name'), 'lab': m.group('lab')}
    if first.startswith(LEGACY_HEADER_PREFIX):
        return {'name': None, 'lab': None}
    return None


def ownership_problem(path, text, name, lab, adopt=False, action='overwrite'):
    """None when benchlab may `action` (overwrite/remove) the existing file `path` (content `text`)
    for resource `name` of lab `lab`; else the refusal, naming the file and the option adopt."""
    if text is None or adopt:
        return None
    mark = file_mark(text)
    how = ('move it away, or set adopt: true (role: drbd_adopt: true) to let benchlab %s it' % action)
    if mark is None:
        return ('%s exists and was not written by benchlab (its first line is not the header "%s"): '
                'refusing to %s it; %s' % (path, header_line(name, lab), action, how))
    if mark['name'] is not None and mark['name'] != name:
        return ('%s carries the benchlab header of resource %s, not %s: refusing to %s it; %s'
                % (path, mark['name'], name, action, how))
    if mark['lab'] is not None and mark['lab'] != lab:
        return ('%s was written by benchlab for lab %s, not this lab (%s): refusing to %s it; set lab: %s '
                '(role: drbd_lab), or %s' % (path, mark['lab'], lab, action, mark['lab'], how))
    return None


def render_resource(norm, lab='default'):
    """The drbd.conf text of one normalized resource (deterministic: sorted options), starting
    with benchlab's header line (header_line)."""
    lines = [header_line(norm['name'], lab),
             '# DRBD %s syntax, rendered by benchlab.bench (role drbd); local changes are refused or replaced.'
             % norm['syntax'],
             'resource %s {' % norm['name']]
    net = dict(norm['sections'].get('net', {}))
    lines.append('    net {')
    lines.append('        protocol %s;' % norm['protocol'])
    for k in sorted(net):
        lines.append('        %s %s;' % (k, net[k]))
    lines.append('    }')
    for section, _rkey in SECTIONS[1:]:
        opts = norm['sections'].get(section)
        if not opts:
            continue
        lines.append('    %s {' % section)
        for k in sorted(opts):
            lines.append('        %s %s;' % (k, opts[k]))
        lines.append('    }')
    for node in norm['nodes']:
        lines.append('    on %s {' % node['name'])
        if norm['syntax'] == '9':
            lines.append('        node-id %d;' % node['node_id'])
        lines.append('        device /dev/drbd%d minor %d;' % (node['minor'], node['minor']))
        lines.append('        disk %s;' % _token_or_quoted(node['disk']))
        lines.append('        address %s;' % _address_text(node))
        lines.append('        meta-disk %s;' % _meta_text(node['meta_disk']))
        lines.append('    }')
    if norm['connection_mesh']:
        lines.append('    connection-mesh {')
        lines.append('        hosts %s;' % ' '.join(n['name'] for n in norm['nodes']))
        lines.append('    }')
    lines.append('}')
    return '\n'.join(lines) + '\n'
