# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Renderers: the analysis as Markdown and as the terminal summary. Pure functions of their input."""

from __future__ import annotations


def fmt_num(value):
    """A number with about four significant digits, no exponent for everyday magnitudes."""
    if value is None:
        return 'n/a'
    a = abs(value)
    if a >= 1000:
        return '%.0f' % value
    if a >= 100:
        return '%.1f' % value
    if a >= 1:
        return '%.2f' % value
    if a == 0:
        return '0'
    return '%.3g' % value


def fmt_delta(d):
    return '' if d is None else '%+.1f%%' % d


def _cell_value(s):
    if s['n'] == 0:
        return '+++++ (too fast)' if s.get('too_fast') else 'n/a'
    text = fmt_num(s['mean'])
    if s['n'] > 1:
        text += ' [%s–%s]' % (fmt_num(s['min']), fmt_num(s['max']))
    if s.get('delta_pct') is not None:
        text += ' %s' % fmt_delta(s['delta_pct'])
    return text


def _md_escape(text):
    return str(text).replace('|', '\\|')


def render_markdown(analysis, meta):
    """report.md: a header, then per benchmark a table (rows = cells, columns = metrics)."""
    lines = ['# benchlab report: %s' % _md_escape(meta.get('matrix') or meta.get('run_id')), '']
    for key in ('run_id', 'started', 'finished', 'user', 'inventory', 'matrix', 'collection_version', 'status'):
        if meta.get(key):
            lines.append('- **%s**: %s' % (key.replace('_', ' '), _md_escape(meta[key])))
    lines += ['', 'Each value is the mean over the repetitions, [min–max] when there are several, and the '
              'difference to the baseline cell of the benchmark.', '']
    for b in analysis['benchmarks']:
        versions = ', '.join(b['tool_versions'])
        lines.append('## %s' % _md_escape(b['name']))
        lines.append('')
        version = (' (version %s)' % versions) if versions else ''
        lines.append('%s %s%s — baseline: **%s**' % (b['tool'], b['test'], version, _md_escape(b['baseline'])))
        lines.append('')
        header = ['cell', 'host', 'n'] + ['%s (%s)' % (m, _unit(b, m)) for m in b['metrics']]
        lines.append('| ' + ' | '.join(header) + ' |')
        lines.append('|' + '|'.join(['---'] * 3 + ['---:'] * len(b['metrics'])) + '|')
        for c in b['cells']:
            name = c['cell'] + (' (baseline)' if c['baseline'] else '')
            row = [name, ', '.join(c['hosts']), str(c['n'])]
            for m in b['metrics']:
                row.append(_cell_value(c['metrics'][m]) if m in c['metrics'] else '—')
            lines.append('| ' + ' | '.join(_md_escape(x) for x in row) + ' |')
        flags = [(c['cell'], f) for c in b['cells'] for f in c.get('flags') or []]
        if flags:
            lines.append('')
            lines.append('Traps detected:')
            lines.append('')
            for cell, f in flags:
                lines.append('- **%s** `%s`: %s' % (_md_escape(cell), f['code'], _md_escape(f['message'])))
        gates = [(c['cell'], c['gate']) for c in b['cells'] if c.get('gate')]
        if gates:
            lines.append('')
            for cell, g in gates:
                cv = 'n/a' if g['cv'] is None else '%.1f%%' % (g['cv'] * 100)
                lines.append('- variance gate %s: CV %s after %d runs (max_cv %.1f%%, cap %d): %s' % (
                    _md_escape(cell), cv, g['n'], g['max_cv'] * 100, g['max_repetitions'],
                    'met' if g['met'] else ('NOT met at the cap' if g['capped'] else 'not met')))
        warm = [(c['cell'], c['warmups']) for c in b['cells'] if c.get('warmups')]
        if warm:
            lines.append('')
            lines.append('Warm-up runs (stored, not counted): %s' % ', '.join('%s %d' % (_md_escape(c), k) for c, k in warm))
        shown = set(f['message'] for c in b['cells'] for f in c.get('flags') or [])
        notes = [(c['cell'], w) for c in b['cells'] for w in c['warnings'] if w not in shown]
        if notes:
            lines.append('')
            lines.append('Warnings:')
            lines.append('')
            for cell, w in notes:
                lines.append('- %s: %s' % (_md_escape(cell), _md_escape(w)))
        lines.append('')
    if meta.get('invalid'):
        lines.append('## Invalid records')
        lines.append('')
        for item in meta['invalid']:
            lines.append('- %s: %s' % (_md_escape(item.get('host', '?')), _md_escape('; '.join(item['errors']))))
        lines.append('')
    if meta.get('failed'):
        lines.append('## Failed runs')
        lines.append('')
        for item in meta['failed']:
            lines.append('- %s %s: %s' % (_md_escape(item.get('host', '?')), _md_escape(item.get('task', '')),
                                          _md_escape(item.get('msg', ''))))
        lines.append('')
    return '\n'.join(lines)


def _unit(b, metric):
    for c in b['cells']:
        if metric in c['metrics']:
            return c['metrics'][metric]['unit']
    return ''


def render_terminal(analysis, width=100):
    """The end-of-play summary: one line per benchmark and cell with the primary metric."""
    rows = [('benchmark', 'cell', 'n', 'metric', 'mean', 'min–max', 'vs baseline')]
    for b in analysis['benchmarks']:
        m = b['primary']
        for c in b['cells']:
            s = c['metrics'].get(m)
            if s is None:
                continue
            rng = '%s–%s' % (fmt_num(s['min']), fmt_num(s['max'])) if s['n'] else ''
            vs = 'baseline' if c['baseline'] else fmt_delta(s.get('delta_pct'))
            rows.append((b['name'], c['cell'], str(s['n']), '%s (%s)' % (m, s['unit']), fmt_num(s['mean']), rng, vs))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    # Shrink the free-text columns first so the table fits the terminal.
    while sum(widths) + 2 * (len(widths) - 1) > width and max(widths[0], widths[1]) > 8:
        i = 0 if widths[0] >= widths[1] else 1
        widths[i] -= 1
    out = []
    for k, r in enumerate(rows):
        cells = []
        for i, v in enumerate(r):
            v = v if len(v) <= widths[i] else v[:widths[i] - 1] + '…'
            cells.append(v.rjust(widths[i]) if i in (2, 4, 6) and k else v.ljust(widths[i]))
        out.append('  '.join(cells).rstrip())
        if k == 0:
            out.append('-' * min(width, len(out[0])))
    return '\n'.join(out)
