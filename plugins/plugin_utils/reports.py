# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every report file of a run, written from one results document.

The results document (what results.json holds) is
``dict(meta..., records=[...], environment={...}, plan={...} or None, analysis={...})``
where meta is run_id, started, finished, user, inventory, playbook, matrix, collection_version,
status, invalid, failed. Both the report callback (at the end of a play) and compare.yml (two
stored runs) call write_reports(); nothing else writes report files."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.plugin_utils.render import render_markdown

META_KEYS = ('run_id', 'started', 'finished', 'user', 'inventory', 'playbook', 'matrix',
             'collection_version', 'status', 'invalid', 'failed')


def meta_of(doc):
    """The header part of a results document."""
    return dict((k, doc.get(k)) for k in META_KEYS)


def write_reports(rundir, doc):
    """Write results.json and report.md into rundir (a RunDir); return {name: path}."""
    paths = {}
    paths['results.json'] = rundir.write_json('results.json', doc)
    paths['report.md'] = rundir.write_text('report.md', render_markdown(doc['analysis'], meta_of(doc)))
    return paths
