# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of a dry run (``ansible-playbook bench.yml --check``), collected by the report callback.

In check mode nothing is measured and nothing is stored in the history: the callback writes this
plan instead (``dry-run.json`` and ``report.md`` headed DRY RUN, and a terminal section). Its
entries, per host in the order the host would run them:

- ``run``: a benchmark module's ``bench_dry_run`` (the command it would run, the paths and
  devices it would write, what it would create and remove, and the guard that would refuse it),
  with the run the host announced (cell, benchmark, repetition). A module that does not return
  ``bench_dry_run`` yet is shown with the ``cmd`` it returns.
- ``change``: any other task that reports ``changed`` in check mode (a guest, a container, a DRBD
  resource it would create, reconfigure or remove): "would change".
- ``refused``: a benchmark module that failed in check mode (a guard refusing before anything
  ran); ``failed``: any other task that failed in check mode.
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import _md as _md_text
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import printable

DRY_RUN_STATUS = 'dry run'
DRY_RUN_SCHEMA_VERSION = 1
_LISTS = ('argv', 'writes', 'creates', 'removes')


def _clean(value, limit=2000):
    """A task's value as inert text: control characters shown as visible escapes (render.printable)."""
    text = printable(value)
    return text if len(text) <= limit else text[:limit] + '...'


def _str_list(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [_clean(v, 500) for v in value]
    return [_clean(value, 500)]


def _clean_opt(value):
    return None if value is None else _clean(value, 300)


class DryRun(object):
    """The entries of one dry run, in arrival order."""

    def __init__(self):
        self.entries = []
        self.runs_per_host = {}

    def announce(self, host):
        """A host announced its next run (bench_run_item): its index among that host's runs."""
        self.runs_per_host[host] = self.runs_per_host.get(host, 0) + 1
        return self.runs_per_host[host]

    def _base(self, kind, host, task, action, run, index):
        run = run if isinstance(run, dict) else {}
        return dict(kind=kind, host=_clean(host, 200), task=_clean(task, 300), action=_clean(action, 200),
                    step=index, cell=_clean_opt(run.get('cell')), benchmark=_clean_opt(run.get('benchmark')),
                    repetition=run.get('repetition'))

    def add_run(self, host, task, action, plan, run=None, index=None):
        """A benchmark module's bench_dry_run (contract 4) or, without one, its cmd."""
        entry = self._base('run', host, task, action, run, index)
        plan = plan if isinstance(plan, dict) else {}
        entry['tool'] = _clean(plan.get('tool') or str(action).rsplit('.', 1)[-1], 100)
        for key in _LISTS:
            entry[key] = _str_list(plan.get(key))
        entry['refused'] = None if plan.get('refused') in (None, '') else _clean(plan['refused'])
        self.entries.append(entry)
        return entry

    def add_change(self, host, task, action, msg=None, item=None, run=None, index=None):
        entry = self._base('change', host, task, action, run, index)
        entry['item'] = None if item is None else _clean(item, 300)
        entry['msg'] = None if not msg else _clean(msg, 500)
        self.entries.append(entry)
        return entry

    def add_refused(self, host, task, action, msg, run=None, index=None, kind='refused'):
        """A task that failed in check mode: a benchmark module a guard refused ('refused'), or
        any other task ('failed')."""
        entry = self._base(kind, host, task, action, run, index)
        entry['refused'] = _clean(msg or 'failed in check mode')
        self.entries.append(entry)
        return entry

    def counts(self):
        runs = [e for e in self.entries if e['kind'] == 'run']
        return dict(runs=len(runs), hosts=len(set(e['host'] for e in self.entries)),
                    refused=sum(1 for e in self.entries if e.get('refused') and e['kind'] != 'failed'),
                    failed=sum(1 for e in self.entries if e['kind'] == 'failed'),
                    changes=sum(1 for e in self.entries if e['kind'] == 'change'))

    def by_host(self):
        out = {}
        for e in self.entries:
            out.setdefault(e['host'], []).append(e)
        return out

    def document(self, meta):
        """dry-run.json: the run's meta (status 'dry run') and the entries per host."""
        return dict(meta, dry_run_schema=DRY_RUN_SCHEMA_VERSION, status=DRY_RUN_STATUS, counts=self.counts(),
                    hosts=self.by_host())


def _what(e):
    parts = [str(e.get('benchmark') or e.get('tool') or e.get('task') or '')]
    if e.get('repetition') is not None:
        parts.append('#%s' % e['repetition'])
    if e.get('cell'):
        parts.append('in %s' % e['cell'])
    return ' '.join(p for p in parts if p)


def _code(text):
    """A Markdown code span that no backtick in `text` can close."""
    text = str(text).replace('\n', ' ')
    fence = '`'
    while fence in text:
        fence += '`'
    return '%s %s %s' % (fence, text, fence) if text.startswith('`') or text.endswith('`') else fence + text + fence


def render_markdown(doc):
    """report.md of a dry run."""
    counts = doc['counts']
    lines = ['# DRY RUN', '',
             'Check mode (`--check`): nothing was run, measured or stored in the history. This is what the run '
             'would do.', '',
             '- run id: %s' % _code(doc.get('run_id')),
             '- status: %s' % DRY_RUN_STATUS,
             '- matrix: %s' % _md_text(doc.get('matrix') or '-'),
             '- %d run(s) on %d host(s), %d refused by a guard, %d other task(s) would change something, '
             '%d failed in check mode' % (
                 counts['runs'], counts['hosts'], counts['refused'], counts['changes'], counts['failed']), '']
    for host, entries in sorted(doc['hosts'].items()):
        lines += ['## %s' % _md_text(host), '']
        for e in entries:
            step = ('step %s: ' % e['step']) if e.get('step') else ''
            if e['kind'] == 'run':
                command = _code(' '.join(e['argv'])) if e['argv'] else 'no command'
                lines.append('- %s**%s** (%s): %s' % (step, _md_text(_what(e)), _md_text(e['tool']), command))
                for key in ('writes', 'creates', 'removes'):
                    if e[key]:
                        lines.append('  - %s: %s' % (key, ', '.join(_code(p) for p in e[key])))
            elif e['kind'] == 'change':
                lines.append('- %swould change: %s (%s)%s%s' % (
                    step, _md_text(e['task']), _md_text(e['action']),
                    (' item %s' % _code(e['item'])) if e.get('item') else '',
                    (': %s' % _md_text(e['msg'])) if e.get('msg') else ''))
            else:
                lines.append('- %s**%s**: %s (%s)' % (step, 'refused' if e['kind'] == 'refused' else 'failed in check mode',
                                                      _md_text(e['task']), _md_text(_what(e))))
            if e.get('refused'):
                lines.append('  - refused: %s' % _md_text(e['refused']))
        lines.append('')
    if not doc['hosts']:
        lines += ['No host reported a run or a change.', '']
    return '\n'.join(lines)


def render_terminal(doc, width=100):
    """The terminal section of a dry run: one line per entry, cut to `width` columns."""
    counts = doc['counts']
    lines = ['DRY RUN: nothing run or stored. %d run(s) on %d host(s), %d refused, %d would change%s' % (
        counts['runs'], counts['hosts'], counts['refused'], counts['changes'],
        (', %d failed' % counts['failed']) if counts['failed'] else '')]
    for host, entries in sorted(doc['hosts'].items()):
        lines.append('%s:' % host)
        for e in entries:
            if e['kind'] == 'run':
                line = '  %s: %s' % (_what(e), ' '.join(e['argv']) or 'no command')
            elif e['kind'] == 'change':
                line = '  would change: %s%s' % (e['task'], (' (%s)' % e['item']) if e.get('item') else '')
            else:
                line = '  %s: %s' % ('refused' if e['kind'] == 'refused' else 'failed in check mode', e['task'])
            lines.append(line if len(line) <= width else line[:width - 3] + '...')
            if e.get('refused'):
                line = '    %s: %s' % ('REFUSED' if e['kind'] != 'failed' else 'FAILED', e['refused'])
                lines.append(line if len(line) <= width else line[:width - 3] + '...')
    return '\n'.join(lines)
