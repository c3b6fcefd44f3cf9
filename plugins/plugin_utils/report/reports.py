# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every report file of a run, written from one results document.

The results document (what results.json holds) is
``dict(meta..., records=[...], environment={...}, plan={...} or None, analysis={...})``
where meta is run_id, started, finished, user, inventory, playbook, matrix, collection_version,
status, invalid, failed. Both the report callback (at the end of a play) and compare.yml (two
stored runs) call write_reports(); nothing else writes report files.

The files: results.json (the document, valid against schemas/results-v1.json, NaN and infinities
written as null), results.csv (one row per record x metric), summary.csv (one row per benchmark x
cell x metric: the statistics and the comparison's verdict), report.md, report.html, pivot.csv with
pivots, distributions.csv when a cell has distributions (latency percentiles, the spread per interval)."""

from __future__ import annotations

import json
import math

from ansible_collections.benchlab.bench.plugins.plugin_utils.common.validation import results_problems as validation_problems
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import charted_metric
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import (
    inert as csv_text, render_csv, render_pivot_csv, render_summary_csv)
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_distributions import render_distributions_csv
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html

META_KEYS = ('run_id', 'started', 'finished', 'user', 'inventory', 'playbook', 'matrix',
             'collection_version', 'status', 'invalid', 'failed')
RESULTS_SCHEMA_VERSION = 1
# Above this many records results.json is written without indentation (the indenting encoder is
# pure Python and several times slower).
INDENT_MAX_RECORDS = 5000


def meta_of(doc):
    """The header part of a results document."""
    return dict((k, doc.get(k)) for k in META_KEYS)


def finite(obj):
    """obj with every NaN or infinite float replaced by None (JSON has no such numbers)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return dict((k, finite(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def results_json(doc):
    """results.json's text: the document with its schema version; strict JSON (no NaN/Infinity)."""
    doc = dict(doc, results_schema=RESULTS_SCHEMA_VERSION)
    small = len(doc.get('records') or ()) <= INDENT_MAX_RECORDS
    # large documents: no indentation and no key sorting (both cost more than the encoding itself)
    opts = dict(indent=2 if small else None, sort_keys=small, allow_nan=False)
    if not small:  # a tree from analyze() has no cycles; compact separators write 10% less
        opts.update(check_circular=False, separators=(',', ':'))
    try:
        text = json.dumps(doc, **opts)
    except ValueError:
        text = json.dumps(finite(doc), **opts)
    return text + '\n'


def results_problems(doc):
    """Messages for everything in a results document (as parsed from results.json) the schema
    refuses (plugin_utils/common/validation.py)."""
    return validation_problems(doc)


def observed_series(rundir, doc):
    """{series id: series} of each cell's median repetition (analysis cells' explained.median_series),
    read from the run directory's observed/ (rundir.read_series); missing ones are left out."""
    out = {}
    read = getattr(rundir, 'read_series', None)
    for b in (doc.get('analysis') or {}).get('benchmarks') or []:
        for c in b.get('cells') or []:
            sid = (c.get('explained') or {}).get('median_series')
            if sid and sid not in out and read is not None:
                data = read(sid)
                if isinstance(data, dict):
                    out[sid] = data
    return out


def write_reports(rundir, doc, errors=None, skip=()):
    """Write results.json, results.csv, report.md and report.html into rundir (a RunDir); return
    {name: path}.

    With a list `errors`, a file that cannot be rendered or written is appended to it as
    (name, exception) and the other files are still written; without it the first failure raises.
    Names in `skip` (already written) are left out."""
    meta = meta_of(doc)
    env, plan = doc.get('environment'), doc.get('plan')
    renderers = (
        ('results.json', lambda: results_json(doc)),
        ('results.csv', lambda: render_csv(doc.get('records') or [], doc.get('run_id'))),
        ('report.md', lambda: render_markdown(doc['analysis'], meta, env, plan)),
        ('report.html', lambda: render_html(doc['analysis'], meta, env, plan, series=observed_series(rundir, doc))),
        ('pivot.csv', lambda: render_pivot_csv(doc['analysis'])),   # only with pivots (None otherwise)
        ('summary.csv', lambda: render_summary_csv(doc['analysis'], charted_metric)),
        ('distributions.csv', lambda: render_distributions_csv(doc['analysis'], csv_text)),   # None without any
    )
    paths = {}
    for name, render in renderers:
        if name in skip:
            continue
        try:
            text = render()
            if text is not None:
                paths[name] = rundir.write_text(name, text)
        except Exception as e:  # pylint: disable=broad-except
            if errors is None:
                raise
            errors.append((name, e))
    return paths
