# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""What a backing disk carries before create-md: blkid and wipefs output parsed, and the verdict
(empty, DRBD meta-data, or another signature that safe mode refuses).
"""

import json

from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import DrbdParseError, _first_line


def parse_blkid_export(text):
    """`blkid -p -o export DEV` -> {'TYPE': 'ext4', 'USAGE': 'filesystem', ...} ({} for no output)."""
    out = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition('=')
        if not sep or not key.strip() or not key.strip().replace('_', '').isalnum():
            if line.strip():
                raise DrbdParseError('blkid -o export: cannot read %r' % line.strip())
            continue
        out[key.strip()] = value.strip()
    return out


def parse_wipefs_json(text):
    """`wipefs -J DEV` -> [{'type', 'offset', 'uuid', 'label'}] ([] when it printed nothing)."""
    if not (text or '').strip():
        return []
    try:
        data = json.loads(text)
    except ValueError as e:
        raise DrbdParseError('wipefs -J: not JSON (%s) at %r' % (e, _first_line(text)))
    sigs = data.get('signatures') if isinstance(data, dict) else None
    if not isinstance(sigs, list):
        raise DrbdParseError('wipefs -J: no "signatures" list in %r' % _first_line(text))
    return [{'type': s.get('type'), 'offset': s.get('offset'), 'uuid': s.get('uuid'), 'label': s.get('label')}
            for s in sigs]


def signature_verdict(blkid, wipefs):
    """What the backing disk carries: ('empty'|'drbd'|'other', description).

    'drbd': DRBD meta-data only (create-md already done); 'other': any other signature (filesystem,
    partition table, LVM, RAID, swap, ...)."""
    types = [s['type'] for s in wipefs if s.get('type')]
    if blkid.get('TYPE') and blkid['TYPE'] not in types:
        types.insert(0, blkid['TYPE'])
    if blkid.get('PTTYPE') and blkid['PTTYPE'] not in types:
        types.append(blkid['PTTYPE'])
    others = [t for t in types if t != 'drbd']
    if others:
        desc = ', '.join('%s at offset %s' % (s['type'], s['offset']) for s in wipefs if s['type'] != 'drbd') \
            or ', '.join(others)
        return 'other', desc
    if 'drbd' in types:
        return 'drbd', 'DRBD meta-data %s' % (blkid.get('VERSION') or '')
    return 'empty', 'no signature'
