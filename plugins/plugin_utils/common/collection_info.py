# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's own version, read from its metadata: MANIFEST.json in an installed collection
(what ansible-galaxy builds), galaxy.yml in a checkout. Never a copy in code.

Private to benchlab.bench (no API promise). Used by callback/report.py (the run's
collection_version).
"""

from __future__ import annotations

import json
import os

import yaml

COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

_cache = {}


def collection_version(root=COLLECTION_ROOT):
    """'0.1.0', or None when neither MANIFEST.json nor galaxy.yml can be read."""
    if root not in _cache:
        _cache[root] = _read_version(root)
    return _cache[root]


def _read_version(root):
    try:
        with open(os.path.join(root, 'MANIFEST.json'), encoding='utf-8') as f:
            return str(json.load(f)['collection_info']['version'])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        with open(os.path.join(root, 'galaxy.yml'), encoding='utf-8') as f:
            return str(yaml.safe_load(f)['version'])
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return None
