# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Importing hand-run results (playbooks/import.yml): a manifest of raw tool outputs becomes result
records, through the same module_utils parsers the modules and the parse_* filters use, and a plan
(cells, baseline, pivot, matrix name) for the report callback. Pure functions but for reading the
manifest and its files; controller-only (jsonschema, PyYAML).

Every entry is read and parsed before anything is returned: an output that does not parse is an
ImportProblem naming the entry, its file and its first line, and nothing is stored.

What is read is confined (read_confined): the manifest and the regular files under the manifest's
own directory (after resolving `..` and symlinks), each at most MAX_FILE_BYTES, read in bounded
chunks through a descriptor opened without blocking (a FIFO never hangs the play). Anything else
(a path outside that directory, /dev/*, /proc, a FIFO, a socket, a directory) is refused naming the
entry and the path; nothing of it is read, so nothing of it can be quoted."""

from __future__ import annotations

import errno
import os
import stat

import yaml

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import json_path, shortened_message
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import imports as unit_imports
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.validation import validator

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'schemas', 'import-manifest-v1.json')
DEFAULT_HOST = 'imported'
MAX_FILE_BYTES = 16 * 1024 * 1024
READ_CHUNK = 1024 * 1024
# Pseudo file systems: nothing there is a tool's output (and /proc, /sys, /dev hold secrets, devices
# and endless files). Refused by name even where a bind mount puts the manifest's directory inside.
SYSTEM_TREES = ('/proc', '/sys', '/dev')


def tool_keys():
    """{entry key: (manifest tools whose parser reads it)}: the keys only some tools' parsers read
    (each benchmark unit's IMPORTS)."""
    out = {}
    for name, (_tool, spec) in unit_imports().items():
        for key in spec.get('keys') or ():
            out[key] = out.get(key, ()) + (name,)
    return out


class ImportProblem(ValueError):
    """A manifest or an output that cannot be imported; the message names every problem."""

    def __init__(self, problems, what='import manifest'):
        self.problems = list(problems)
        super(ImportProblem, self).__init__('%s:\n%s' % (what, '\n'.join('- ' + p for p in self.problems)))


def _message(err):
    """The innermost cause of a schema error (if/then, oneOf), worded for the user."""
    if err.validator == 'oneOf' and isinstance(err.instance, dict) and 'cell' in err.instance:
        return err.absolute_path, 'give the output as exactly one of file (relative to the manifest) or text (inline)'
    leaf = err
    while leaf.context:
        leaf = sorted(leaf.context, key=lambda e: -len(e.absolute_path))[0]
    return leaf.absolute_path, shortened_message(leaf.message, leaf.instance)


def schema_problems(manifest):
    """The manifest's schema errors, each naming the entry index and the field."""
    problems = []
    for err in sorted(validator(SCHEMA_FILE).iter_errors(manifest), key=lambda e: [str(p) for p in e.absolute_path]):
        path, message = _message(err)
        problems.append('%s: %s' % (json_path(path, whole='(manifest)'), message))
    return problems


def semantic_problems(manifest):
    """What a schema cannot say: the baseline is one of the cells, the pivot a label some entry has."""
    problems = []
    for index, entry in enumerate(manifest['entries']):
        for key, tools in sorted(tool_keys().items()):
            if key in entry and entry['tool'] not in tools:
                problems.append('entries[%d].%s: only for tool %s, this entry is %s' % (
                    index, key, ' or '.join(tools), entry['tool']))
    cells = [e['cell'] for e in manifest['entries']]
    if manifest.get('baseline') is not None and manifest['baseline'] not in cells:
        problems.append('baseline: %r is not the cell of any entry (cells: %s)' % (
            manifest['baseline'], ', '.join(repr(c) for c in _unique(cells))))
    for key in ('pivot', 'baseline_by'):
        label = manifest.get(key)
        if label is not None and not any(label in (e.get('labels') or {}) for e in manifest['entries']):
            problems.append('%s: no entry has the label %r' % (key, label))
    return problems


def load_manifest(path):
    """(manifest, directory its files are relative to), validated. ImportProblem otherwise."""
    try:
        text = read_confined(path, None).decode('utf-8')
    except UnicodeDecodeError as e:   # a ValueError too: first
        raise ImportProblem(['cannot read %s: not UTF-8 text (%s at byte %d)' % (path, e.reason, e.start)])
    except ValueError as e:
        raise ImportProblem(['manifest %s' % e])
    try:
        manifest = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ImportProblem(['%s is not YAML: %s' % (path, _yaml_problem(e))])
    if not isinstance(manifest, dict) or not ('name' in manifest or 'entries' in manifest):
        # not a manifest at all (a password file, say): its content is never quoted
        raise ImportProblem(['%s: the manifest must be a mapping with name and entries, got %s' % (
            path, type(manifest).__name__ if not isinstance(manifest, dict) else 'a mapping without either')])
    problems = schema_problems(manifest)
    if not problems:
        problems = semantic_problems(manifest)
    if problems:
        raise ImportProblem(problems, 'invalid import manifest %s' % path)
    return manifest, os.path.realpath(os.path.dirname(os.path.abspath(path)))


def _unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _first_line(text):
    for line in (text or '').splitlines():
        if line.strip():
            return repr(line.strip()[:200])
    return '(empty)'


def _yaml_problem(err):
    """A YAML error as its problem and place (line, column), without the snippet of the text that
    PyYAML's own message quotes."""
    mark = getattr(err, 'problem_mark', None)
    problem = getattr(err, 'problem', None) or type(err).__name__
    if mark is not None:
        return '%s (line %d, column %d)' % (problem, mark.line + 1, mark.column + 1)
    return problem


def _inside(path, directory):
    return path == directory or path.startswith(directory.rstrip('/') + '/')


def confined_path(name, base):
    """The real path of `name` (relative to `base`, the manifest's directory), or ValueError when it
    resolves (``..``, an absolute path, a symlink anywhere on the way) outside `base` or into a
    system tree. `base` None: anywhere but a system tree (the manifest itself, which the user
    names). Nothing is opened."""
    real_base = os.path.realpath(base) if base is not None else None
    named = os.path.join(real_base, name) if real_base else os.path.abspath(name)
    real = os.path.realpath(named)
    where = name if real == named else '%s (resolves to %s)' % (name, real)
    for tree in SYSTEM_TREES:
        if _inside(real, tree):
            raise ValueError('%s: under %s, not a tool\'s output: refused, nothing read' % (where, tree))
    if real_base is not None and not _inside(real, real_base):
        raise ValueError('%s: outside the manifest\'s directory %s: refused, nothing read (only files under '
                         'it are imported; copy the output there)' % (where, real_base))
    return real


def read_confined(path, base, limit=MAX_FILE_BYTES):
    """The bytes of the regular file `path` (relative to `base`, or absolute), when it is under
    `base` (symlinks resolved; None: anywhere but a system tree) and at most `limit` bytes. Opened without following a last symlink
    and without blocking (a FIFO or a device never hangs), checked to be a regular file on the open
    descriptor, read in chunks of READ_CHUNK, never more than `limit` + 1 bytes. ValueError naming
    the path otherwise; nothing of a refused file is read."""
    real = confined_path(path, base)
    try:   # a socket or a device is named before any open (opening one can block, or act)
        mode = os.stat(real).st_mode
    except OSError as e:
        raise ValueError('%s: cannot read it (%s)' % (path, e.strerror or e))
    if not stat.S_ISREG(mode):
        raise ValueError('%s: not a regular file (%s), refused, nothing read' % (path, _kind(mode)))
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_NOCTTY', 0)
    try:
        fd = os.open(real, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:   # swapped for a symlink after it was resolved
            raise ValueError('%s: a symlink, refused' % path)
        raise ValueError('%s: cannot read it (%s)' % (path, e.strerror or e))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError('%s: not a regular file (%s), refused, nothing read' % (path, _kind(st.st_mode)))
        if st.st_size > limit:
            raise ValueError('%s: larger than %d bytes, not a tool output' % (path, limit))
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(READ_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:   # grew while read (or a file whose size lies)
            raise ValueError('%s: larger than %d bytes, not a tool output' % (path, limit))
        return b''.join(chunks)
    except OSError as e:
        raise ValueError('%s: cannot read it (%s)' % (path, e.strerror or e))
    finally:
        os.close(fd)


def _kind(mode):
    for test, name in ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'), (stat.S_ISCHR, 'a character device'),
                       (stat.S_ISBLK, 'a block device'), (stat.S_ISSOCK, 'a socket')):
        if test(mode):
            return name
    return 'not a regular file'


def entry_text(entry, base):
    """(output text, where it came from) of one entry. ValueError naming the file."""
    if 'text' in entry:
        return entry['text'], 'inline text'
    try:
        data = read_confined(entry['file'], base)
    except ValueError as e:
        raise ValueError('file %s' % e)
    return data.decode('utf-8', 'replace'), 'file %s' % entry['file']


def parse_entry(entry, text):
    """The records of one entry's output, through the tool's one parser (module_utils), as its
    benchmark unit's IMPORTS names it."""
    test = entry.get('test')
    _tool, spec = unit_imports()[entry['tool']]
    records = spec['parse'](entry, text)
    if test:
        if len(set(r['test'] for r in records)) > 1:
            raise ValueError('test %r given, but the output holds several tests (%s): leave test out' % (
                test, ', '.join(sorted(set(r['test'] for r in records)))))
        for r in records:
            r['test'] = test
    return records


def _mark(records, entry, index, source, manifest):
    """Labels (cell, benchmark, the entry's) and params saying the record was imported, and from where."""
    for rec in records:
        labels = dict(entry.get('labels') or {})
        labels.update(rec.get('labels') or {})
        labels['cell'] = entry['cell']
        labels['benchmark'] = entry.get('benchmark') or '%s %s' % (rec['tool'], rec['test'])
        rec['labels'] = labels
        params = dict(rec.get('params') or {})
        params.update(entry.get('params') or {})
        if entry.get('sync_after'):
            params['sync_after'] = True
        if entry.get('bs') is not None:
            params['bs'] = entry['bs']
        params.update(imported=True, source=source, entry=index)
        if manifest.get('source'):
            params['origin'] = manifest['source']
        rec['params'] = params
    return records


def import_records(manifest, base):
    """(records, hosts): every entry parsed (all of them, before anything is returned), repetitions
    numbered per (cell, tool, test) in manifest order, hosts[i] the host of records[i].
    ImportProblem naming each entry, its file and first line when an output does not parse."""
    records, hosts, problems, reps = [], [], [], {}
    for index, entry in enumerate(manifest['entries']):
        where = 'entries[%d] (cell %r, tool %s)' % (index, entry['cell'], entry['tool'])
        try:
            text, source = entry_text(entry, base)
        except ValueError as e:
            problems.append('%s: %s' % (where, e))
            continue
        try:
            parsed = parse_entry(entry, text)
        except ValueError as e:  # every parser's error is a ValueError naming the line
            problems.append('%s, %s, first line %s: does not parse as %s output: %s' % (
                where, source, _first_line(text), entry['tool'], e))
            continue
        for rec in _mark(parsed, entry, index, source, manifest):
            key = (entry['cell'], rec['tool'], rec['test'])
            reps[key] = reps.get(key, 0) + 1
            rec['repetition'] = reps[key]
            records.append(rec)
            hosts.append(entry.get('host') or manifest.get('host') or DEFAULT_HOST)
    if problems:
        raise ImportProblem(problems, 'nothing imported, %d entr%s did not import' % (
            len(problems), 'y' if len(problems) == 1 else 'ies'))
    return records, hosts


def import_plan(manifest, records, hosts, manifest_path=None):
    """The bench_plan the report callback reads: matrix name, cells in manifest order, baseline,
    pivot, baseline_by, correction, equivalence_margin_pct, one benchmark per (benchmark label, tool);
    no runs (nothing is run). The analysis is the same as a run's: the same verdicts."""
    cells, benchmarks = {}, {}
    for rec, host in zip(records, hosts):
        labels = rec['labels']
        cell = cells.setdefault(labels['cell'], dict(name=labels['cell'], host=host, labels={}))
        cell['labels'].update((k, v) for k, v in labels.items() if k not in ('cell', 'benchmark', 'clients'))
        bench = benchmarks.setdefault(labels['benchmark'],
                                      dict(name=labels['benchmark'], tool=rec['tool'], params=dict(imported=True), cells=[]))
        if labels['cell'] not in bench['cells']:
            bench['cells'].append(labels['cell'])
    plan = dict(name=manifest['name'], baseline=manifest.get('baseline') or manifest['entries'][0]['cell'],
                cells=list(cells.values()), benchmarks=list(benchmarks.values()), runs=[],
                imported=dict(manifest=manifest_path, entries=len(manifest['entries']), records=len(records)))
    for key in ('pivot', 'baseline_by', 'correction'):
        if manifest.get(key):
            plan[key] = manifest[key]
    if manifest.get('equivalence_margin_pct') is not None:
        plan['equivalence_margin_pct'] = manifest['equivalence_margin_pct']
    return plan


def import_manifest(path):
    """(records, hosts, plan) of the manifest at `path`. ImportProblem on any problem."""
    manifest, base = load_manifest(path)
    records, hosts = import_records(manifest, base)
    return records, hosts, import_plan(manifest, records, hosts, os.path.abspath(path))
