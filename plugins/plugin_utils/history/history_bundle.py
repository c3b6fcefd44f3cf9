# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stored run as a self-contained bundle, and back (the action behind benchlab.bench.history).

A bundle is a run directory: ``results.json`` (the stored results document, as the callback
writes it), the report files rendered from it, and ``history.json`` (what the history keeps beside
the document: label, owner, the time it was first stored, digest). import_run_dir() stores a
bundle, or any run directory the report callback wrote (a run whose store failed, e.g. a database
lost mid-run), under the same owner the callback would have given it (this host and the run
directory), so nothing is lost either way and the ownership rules hold.
"""

from __future__ import annotations

import json
import os
import stat

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history_store import HistoryError, controller_fingerprint, encode
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_problems, write_reports
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import OutputDirError, RunDir

ENTRY_FILE = 'history.json'
MAX_RESULTS_BYTES = 1024 ** 3


def export_run(store, ref, dest):
    """Write the run `ref` stands for as a bundle <dest>/<run id>/; returns (run id, {name: path}).
    The bundle's directory is one the export creates (or an empty one), never a link, and no file
    in it is replaced (RunDir fresh): HistoryError otherwise, naming the directory."""
    run_id = store.find(ref)
    entry = store.entry(run_id)
    doc = entry.pop('doc')
    rundir = RunDir(os.path.abspath(dest), run_id, fresh=True)
    try:
        rundir.ensure()
        paths = write_reports(rundir, doc)
        paths[ENTRY_FILE] = rundir.write_json(ENTRY_FILE, dict(
            (k, entry[k]) for k in ('run_id', 'label', 'stored', 'fingerprint', 'controller', 'digest')))
    except (OutputDirError, OSError) as e:
        raise HistoryError('export of run %s: %s' % (run_id, e))
    return run_id, paths


def _read_json(path, what, limit=MAX_RESULTS_BYTES):
    nofollow = getattr(os, 'O_NOFOLLOW', 0)
    try:
        fd = os.open(path, os.O_RDONLY | nofollow | getattr(os, 'O_NONBLOCK', 0))
    except OSError as e:
        raise HistoryError('%s %s cannot be read: %s' % (what, path, e.strerror or e))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise HistoryError('%s %s is not a regular file' % (what, path))
        if st.st_size > limit:
            raise HistoryError('%s %s is larger than %d MiB' % (what, path, limit // 2 ** 20))
        with os.fdopen(os.dup(fd), 'rb') as f:
            data = f.read(limit + 1)
    finally:
        os.close(fd)
    try:
        return json.loads(data.decode('utf-8'))
    except (UnicodeDecodeError, ValueError) as e:
        raise HistoryError('%s %s is not valid JSON: %s' % (what, path, e))


def read_run_dir(run_dir):
    """(results document, history entry or None) of a run directory or bundle; HistoryError when
    its results.json is missing or not a valid results document."""
    run_dir = os.path.abspath(run_dir)
    if not os.path.isdir(run_dir):
        raise HistoryError('run directory %s does not exist' % run_dir)
    path = os.path.join(run_dir, 'results.json')
    if not os.path.lexists(path):
        raise HistoryError('%s holds no results.json: only a run the report callback finished (or a bundle) can be '
                           'stored; its records are in results.jsonl' % run_dir)
    doc = _read_json(path, 'results file')
    if not isinstance(doc, dict):
        raise HistoryError('%s is not a results document (a JSON object)' % path)
    problems = results_problems(doc)
    if problems:
        raise HistoryError('%s is not a valid results document: %s' % (path, '; '.join(problems[:5])))
    doc.pop('results_schema', None)  # results.json's own header, not part of the stored document
    entry = None
    if os.path.lexists(os.path.join(run_dir, ENTRY_FILE)):
        entry = _read_json(os.path.join(run_dir, ENTRY_FILE), 'history entry', 1024 * 1024)
        if not isinstance(entry, dict) or entry.get('run_id') != doc.get('run_id'):
            raise HistoryError('%s does not belong to the run of %s' % (os.path.join(run_dir, ENTRY_FILE), path))
    return doc, entry


def import_run_dir(store, run_dir, label=None):
    """Store a run directory or bundle in `store`. A bundle keeps its label, owner and store time;
    a run directory the callback wrote is stored as this controller's (controller_fingerprint of
    the directory: the owner the callback would have given it). Returns (run id, what store()
    said: 'stored', 'replaced' or 'unchanged')."""
    doc, entry = read_run_dir(run_dir)
    if entry:
        if entry.get('digest') and entry['digest'] != encode(doc)[0]:
            raise HistoryError('%s: results.json is not the document the history held (its digest differs from %s): '
                               'store it as a run of this controller by removing %s' % (run_dir, ENTRY_FILE, ENTRY_FILE))
        what = store.store(doc, label=label or entry.get('label'), fingerprint=entry.get('fingerprint'),
                           controller=entry.get('controller'), stored=entry.get('stored'))
    else:
        fingerprint, controller = controller_fingerprint(os.path.abspath(run_dir))
        what = store.store(doc, label=label, fingerprint=fingerprint, controller=controller)
    return doc['run_id'], what
