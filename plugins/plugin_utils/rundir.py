# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run directory: results.jsonl appended as records arrive, results.json and report.md at the end."""

from __future__ import annotations

import datetime
import json
import os
import re
import secrets

# A run id is one path component: no separators, no '..', nothing a shell or a URL would mangle.
RUN_ID_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$')


def new_run_id(now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime('%Y%m%dT%H%M%SZ') + '-' + secrets.token_hex(3)


class RunDir(object):
    """One run's directory, created (0700) on first use."""

    def __init__(self, base, run_id):
        if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id) or '..' in run_id:
            raise ValueError('run_id %r: use letters, digits, ".", "_" and "-" only (one directory name, at most 128 '
                             'characters, no "..")' % (run_id,))
        self.base = base
        self.run_id = run_id
        self.path = os.path.join(base, run_id)
        self._created = False

    def ensure(self):
        if not self._created:
            # every directory made here is private, the report base too (makedirs applies `mode`
            # to the last one only); an existing base keeps its mode (a team share, say)
            os.makedirs(self.base, mode=0o700, exist_ok=True)
            os.makedirs(self.path, mode=0o700, exist_ok=True)
            self._created = True
        return self.path

    def file(self, name):
        return os.path.join(self.ensure(), name)

    def append_jsonl(self, name, obj):
        """Append one JSON line and flush it to disk at once: a crash later loses nothing."""
        fd = os.open(self.file(name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(obj, sort_keys=True) + '\n').encode('utf-8'))
            os.fsync(fd)
        finally:
            os.close(fd)

    def write_text(self, name, text):
        """Write a file atomically (temp file + rename)."""
        path = self.file(name)
        tmp = path + '.tmp'
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, 'w') as f:
            f.write(text)
        os.replace(tmp, path)
        return path

    def write_json(self, name, obj):
        return self.write_text(name, json.dumps(obj, indent=2, sort_keys=True) + '\n')

    def link_latest(self):
        link = os.path.join(self.base, 'latest')
        try:
            if os.path.islink(link):
                os.unlink(link)
            if not os.path.exists(link):
                os.symlink(self.run_id, link)
        except OSError:
            pass
