# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A trend report (trend.trend_document) in the usual formats: results.json (the document),
results.csv (one row per run of the series), report.md, report.html (one self-contained file: an
inline SVG line chart of the means with their 95% intervals as a band and the change points marked,
no script, nothing fetched) and the terminal's lines. Every text is made inert the way the run
reports do it (render._md, render_html._e, render_csv._text). Pure functions of the document."""

from __future__ import annotations

import csv
import io
import json

from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import _md, fmt_delta, fmt_num, printable
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import _text as csv_text
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import CSS, _e
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import finite

CSV_COLUMNS = ('index', 'run_id', 'started', 'mean', 'ci95_low', 'ci95_high', 'n', 'unit', 'change_point',
               'delta_pct', 'changed_environment')
W, H, LEFT, RIGHT, TOP, BOTTOM = 760, 300, 70, 20, 20, 40


def _title(doc):
    q = doc['trend_query']
    return '%s / %s / %s' % (q['benchmark'], q['cell'], q['metric'])


def _selection(q):
    parts = []
    if q.get('matrix'):
        parts.append('matrix %s' % q['matrix'])
    if q.get('label'):
        parts.append('run label %s' % q['label'])
    return ', '.join(parts)


def _env_text(changed):
    return '; '.join('%s: %s → %s' % (k, v[0] if v[0] is not None else '(none)', v[1] if v[1] is not None else '(none)')
                     for k, v in sorted(changed.items())) or 'no environment key changed'


def _points(doc):
    return dict((cp['index'], cp) for cp in doc['trend']['change_points'])


def _ci(p):
    return p['ci95'] if p.get('ci95') else [None, None]


def trend_json(doc):
    return json.dumps(finite(doc), indent=2, sort_keys=True, allow_nan=False) + '\n'


def trend_csv(doc):
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    cps = _points(doc)
    unit = doc['trend_query'].get('unit')
    for i, p in enumerate(doc['trend']['series']):
        cp = cps.get(i)
        low, high = _ci(p)
        w.writerow([i, csv_text(p['run_id']), csv_text(p['started']), csv_text(p['mean']), csv_text(low),
                    csv_text(high), p['n'], csv_text(unit), 'true' if cp else 'false',
                    csv_text(cp['delta_pct']) if cp else '', csv_text(_env_text(cp['changed_environment'])) if cp else ''])
    return buf.getvalue()


def _header(doc):
    q = doc['trend_query']
    m = q['method']
    return [('Runs', '%s: %d stored, %d with this metric' % (_selection(q), q['runs_selected'], len(doc['trend']['series']))),
            ('Metric', '%s (%s, %s is better)' % (q['metric'], q.get('unit') or '', q.get('better') or '?')),
            ('Change points', 'E-divisive means (Matteson & James 2014, as in MongoDB\'s CI), p ≤ %s, %d permutations'
             % (m['pvalue'], m['permutations'])),
            ('Made', '%s by %s' % (doc.get('finished') or '', doc.get('user') or ''))]


def trend_markdown(doc):
    q = doc['trend_query']
    series, cps = doc['trend']['series'], doc['trend']['change_points']
    lines = ['# benchlab trend: %s' % _md(_title(doc)), '']
    lines += ['- **%s**: %s' % (k, _md(v)) for k, v in _header(doc)]
    lines += ['', '## Change points', '']
    if not cps:
        lines.append('None found: the series has no significant change.')
    else:
        lines += ['| # | run | started | change | what changed in the environment |', '|---:|---|---|---:|---|']
        for cp in cps:
            p = series[cp['index']]
            lines.append('| %d | %s | %s | %s | %s |' % (cp['index'], _md(cp['run_id']), _md(p['started']),
                                                         _md(fmt_delta(cp['delta_pct'])), _md(_env_text(cp['changed_environment']))))
    lines += ['', '## Series (oldest first)', '', '| # | run | started | mean ± CI95 (n) | |', '|---:|---|---|---:|---|']
    marks = _points(doc)
    for i, p in enumerate(series):
        low, high = _ci(p)
        ci = ' ± %s' % fmt_num((high - low) / 2.0) if low is not None else ''
        lines.append('| %d | %s | %s | %s%s %s (%d) | %s |' % (
            i, _md(p['run_id']), _md(p['started']), fmt_num(p['mean']), ci, _md(q.get('unit') or ''), p['n'],
            ('**change point** %s' % _md(fmt_delta(marks[i]['delta_pct']))) if i in marks else ''))
    return '\n'.join(lines) + '\n'


def trend_svg(doc):
    """The line chart: means joined by a line, the 95% intervals as a band, change points as dashed
    vertical lines with their change in percent."""
    series = doc['trend']['series']
    unit = doc['trend_query'].get('unit') or ''
    lows = [(_ci(p)[0] if _ci(p)[0] is not None else p['mean']) for p in series]
    highs = [(_ci(p)[1] if _ci(p)[1] is not None else p['mean']) for p in series]
    lo, hi = min(lows), max(highs)
    if hi == lo:
        lo, hi = lo - 1.0, hi + 1.0
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    n = len(series)

    def x(i):
        return LEFT + (W - LEFT - RIGHT) * (i / float(n - 1) if n > 1 else 0.5)

    def y(v):
        return TOP + (H - TOP - BOTTOM) * (1.0 - (v - lo) / (hi - lo))
    out = ['<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
           'aria-label="%s">' % (W, H, W, H, _e('%s over %d runs' % (_title(doc), n)))]
    out.append('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>' % (LEFT, TOP, LEFT, H - BOTTOM))
    out.append('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>' % (LEFT, H - BOTTOM, W - RIGHT, H - BOTTOM))
    for v in (lo + pad, hi - pad):
        out.append('<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>' % (LEFT - 4, y(v) + 4, _e(fmt_num(v))))
    out.append('<text class="unit" x="4" y="%d">%s</text>' % (TOP - 6 if TOP > 12 else 12, _e(unit)))
    band = ['%.1f,%.1f' % (x(i), y(highs[i])) for i in range(n)]
    band += ['%.1f,%.1f' % (x(i), y(lows[i])) for i in reversed(range(n))]
    out.append('<polygon class="band" points="%s"/>' % ' '.join(band))
    line = ' '.join('%.1f,%.1f' % (x(i), y(p['mean'])) for i, p in enumerate(series))
    out.append('<polyline class="series" points="%s"/>' % line)
    for i, p in enumerate(series):
        out.append('<circle class="point" cx="%.1f" cy="%.1f" r="2.5"><title>%s</title></circle>' % (
            x(i), y(p['mean']), _e('#%d %s: %s %s (n=%d)' % (i, p['run_id'], fmt_num(p['mean']), unit, p['n']))))
    for cp in doc['trend']['change_points']:
        cx = (x(cp['index'] - 1) + x(cp['index'])) / 2.0
        what = 'change point at #%d (%s): %s' % (cp['index'], cp['run_id'], fmt_delta(cp['delta_pct']))
        out.append('<line class="change" x1="%.1f" y1="%d" x2="%.1f" y2="%d"><title>%s</title></line>' % (
            cx, TOP, cx, H - BOTTOM, _e(what)))
        out.append('<text class="change-label" x="%.1f" y="%d" text-anchor="middle">%s</text>' % (
            cx, H - BOTTOM + 14, _e(fmt_delta(cp['delta_pct']))))
    out.append('<text class="tick" x="%d" y="%d">%s</text>' % (LEFT, H - 6, _e(series[0]['started'] or '')))
    out.append('<text class="tick" x="%d" y="%d" text-anchor="end">%s</text>' % (
        W - RIGHT, H - 6, _e(series[-1]['started'] or '')))
    out.append('</svg>')
    return ''.join(out)


TREND_CSS = """
svg .band { fill: #3b6fb6; fill-opacity: .18; stroke: none; }
svg .series { fill: none; stroke: var(--bar); stroke-width: 1.5; }
svg .point { fill: var(--bar); }
svg .change { stroke: var(--worse); stroke-width: 2; stroke-dasharray: 5 3; }
svg .change-label { fill: var(--worse); font-weight: 600; }
"""


def trend_html(doc):
    series, cps = doc['trend']['series'], doc['trend']['change_points']
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<title>%s</title>' % _e('benchlab trend: %s' % _title(doc)), '<style>%s%s</style></head><body>' % (CSS, TREND_CSS),
           '<h1>%s</h1>' % _e('benchlab trend: %s' % _title(doc)), '<table class="header">']
    out += ['<tr><th>%s</th><td>%s</td></tr>' % (_e(k), _e(v)) for k, v in _header(doc)]
    out.append('</table>')
    if series:
        out.append('<figure class="chart">%s<figcaption>%s</figcaption></figure>' % (
            trend_svg(doc), _e('mean per run with its 95% interval (band); dashed: change points')))
    out.append('<h2>Change points</h2>')
    if not cps:
        out.append('<p>None found: the series has no significant change.</p>')
    else:
        out.append('<table class="changes"><tr><th>#</th><th>run</th><th>started</th><th>change</th>'
                   '<th>what changed in the environment</th></tr>')
        for cp in cps:
            env = ''.join('<li><code>%s</code>: %s → %s</li>' % (_e(k), _e(v[0] if v[0] is not None else '(none)'),
                                                                 _e(v[1] if v[1] is not None else '(none)'))
                          for k, v in sorted(cp['changed_environment'].items())) or '<li>no environment key changed</li>'
            out.append('<tr class="change"><td class="num">%d</td><td>%s</td><td>%s</td><td class="num">%s</td>'
                       '<td><ul>%s</ul></td></tr>' % (cp['index'], _e(cp['run_id']), _e(series[cp['index']]['started']),
                                                      _e(fmt_delta(cp['delta_pct'])), env))
        out.append('</table>')
    out.append('<h2>Series</h2><table class="series"><tr><th>#</th><th>run</th><th>started</th><th>mean</th>'
               '<th>CI95</th><th>n</th></tr>')
    for i, p in enumerate(series):
        low, high = _ci(p)
        out.append('<tr><td class="num">%d</td><td>%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td>'
                   '<td class="num">%d</td></tr>' % (i, _e(p['run_id']), _e(p['started']), _e(fmt_num(p['mean'])),
                                                     _e('%s – %s' % (fmt_num(low), fmt_num(high)) if low is not None else ''),
                                                     p['n']))
    out.append('</table></body></html>')
    return '\n'.join(out) + '\n'


def trend_terminal(doc):
    """The lines the playbook prints."""
    series, cps = doc['trend']['series'], doc['trend']['change_points']
    unit = doc['trend_query'].get('unit') or ''
    lines = ['benchlab trend: %s over %d run(s): %s' % (printable(_title(doc)), len(series),
                                                        ('%d change point(s)' % len(cps)) if cps else 'no change point')]
    if series:
        first, last = series[0], series[-1]
        lines.append('  first %s %s (%s), last %s %s (%s)' % (
            fmt_num(first['mean']), printable(unit), printable(first['run_id']), fmt_num(last['mean']),
            printable(unit), printable(last['run_id'])))
    for cp in cps:
        lines.append('  change at #%d %s (%s): %s; %s' % (
            cp['index'], printable(cp['run_id']), printable(series[cp['index']]['started']),
            fmt_delta(cp['delta_pct']), printable(_env_text(cp['changed_environment']))))
    return lines


def write_trend(rundir, doc):
    """Write results.json, results.csv, report.md and report.html into rundir; {name: path}."""
    paths = {}
    for name, render in (('results.json', trend_json), ('results.csv', trend_csv), ('report.md', trend_markdown),
                         ('report.html', trend_html)):
        paths[name] = rundir.write_text(name, render(doc))
    return paths
