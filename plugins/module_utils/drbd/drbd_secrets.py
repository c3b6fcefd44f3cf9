# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""Shared secrets kept out of output: found in the installed configuration and in drbdadm argv, masked
in any text shown.
"""

import glob
import os
import re


REDACTED = '********'

# drbdadm prints at most this many characters of a value it rejects ("value ('SSSS...') too long").
DRBDADM_VALUE_PREFIX = 20

_CONFIG_SECRET_RE = re.compile(r'shared-secret\s+(?:"([^"\n]*)"|([^\s;"{}]+))')

_INCLUDE_RE = re.compile(r'^\s*include\s+(?:"([^"\n]+)"|([^\s;"]+))\s*;', re.M)


def config_secrets(text):
    """The shared secrets a DRBD configuration text holds (each `shared-secret <value>` , quoted or
    not, also in a file drbdadm cannot parse): an installed file's old secret is masked too."""
    found = []
    for m in _CONFIG_SECRET_RE.finditer(text or ''):
        value = m.group(2) if m.group(1) is None else m.group(1)
        if value and value not in found:
            found.append(value)
    return found


def secret_forms(secrets):
    """Every form of the secrets that may show up in drbdadm's output: the secret itself and, for
    a long one, the first characters drbdadm quotes when it rejects the value ("('SSSS...') too long")."""
    out = []
    for s in secrets or []:
        if not s:
            continue
        for form in (s, s[:DRBDADM_VALUE_PREFIX] if len(s) > DRBDADM_VALUE_PREFIX else None):
            if form and form not in out:
                out.append(form)
    return out


def config_files_secrets(main_config, extra_dirs=(), read=None):
    """The secrets of the DRBD configuration on this host: `main_config` and the files its
    `include` lines name (globs), plus every *.res/*.conf in `extra_dirs`. Read as text (no drbdadm:
    also a configuration drbdadm rejects). Unreadable files are skipped."""
    def _read(path):
        try:
            with open(path, 'rb') as f:
                return f.read().decode('utf-8', 'replace')
        except (IOError, OSError):
            return None
    read = read or _read
    paths, found = [], []
    queue = [main_config] if main_config else []
    for d in extra_dirs:
        if d and os.path.isdir(d):
            queue += sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(('.res', '.conf')))
    while queue and len(paths) < 1000:
        path = queue.pop(0)
        if path in paths:
            continue
        paths.append(path)
        text = read(path)
        if text is None:
            continue
        found += [s for s in config_secrets(text) if s not in found]
        for m in _INCLUDE_RE.finditer(text):
            pattern = m.group(1) or m.group(2)
            if not os.path.isabs(pattern):
                pattern = os.path.join(os.path.dirname(path), pattern)
            queue += sorted(glob.glob(pattern))
    return found


_DRBDADM_SECRET_RE = re.compile(r'(--shared-secret[= ])(\S+)')


def drbdadm_secrets(text):
    """The secrets drbdadm put on the drbdsetup command lines it printed (`--shared-secret=...`)."""
    found = []
    for m in _DRBDADM_SECRET_RE.finditer(text or ''):
        if m.group(2) != REDACTED and m.group(2) not in found:
            found.append(m.group(2))
    return found


def redact(text, secrets, mask=REDACTED):
    """`text` with every secret replaced by `mask` (********)."""
    if not text:
        return text
    for s in sorted(secret_forms(secrets), key=len, reverse=True):
        text = text.replace(s, mask)
    return text


def redact_output(text, secrets, mask=REDACTED):
    """drbdadm/drbdsetup output with the secrets (and their quoted prefixes) masked, and any
    `--shared-secret=<value>` argument masked whatever its value."""
    return _DRBDADM_SECRET_RE.sub(lambda m: m.group(1) + mask, redact(text, secrets, mask)) if text else text
