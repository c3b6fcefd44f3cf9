# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.html: the report contents (render.report_contents) as ONE self-contained HTML file.

Inline CSS, inline SVG bar charts (one per metric: a bar per cell with its 95% confidence interval
as an error bar), no script, nothing fetched from the network, readable when printed. Every text
is escaped. The charts draw the per-cell summaries, so the file's size depends on the number of
benchmarks, cells and metrics, never on the number of records. A pure function of its input."""

from __future__ import annotations

from html import escape

from ansible_collections.benchlab.bench.plugins.plugin_utils.render import (
    ci_half, fmt_delta, fmt_num, printable, report_contents, sig_mark)

CSS = """
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --base: #8c959f; --bar: #3b6fb6;
        --worse: #c2410c; --differs: #fff3bf; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
       margin: 0 auto; padding: 1.5em; max-width: 1200px; }
h1 { font-size: 1.6em; margin: 0 0 .4em; }
h2 { font-size: 1.25em; border-bottom: 1px solid var(--line); padding-bottom: .2em; margin-top: 1.8em; }
h3 { font-size: 1.05em; margin: 1.2em 0 .4em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: .25em .6em; vertical-align: top; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; white-space: nowrap; }
tr.differs td, tr.differs th { background: var(--differs); font-weight: 600; }
.muted, .legend { color: var(--muted); }
.vs { display: block; font-size: .9em; color: var(--muted); }
.vs.worse { color: var(--worse); font-weight: 600; }
.flag code, code { background: #f6f8fa; padding: 0 .25em; border-radius: 3px; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
figure.chart { margin: 0; border: 1px solid var(--line); border-radius: 4px; padding: .4em; }
figure.chart figcaption { font-weight: 600; font-size: .9em; }
svg text { font: 11px system-ui, sans-serif; fill: var(--fg); }
svg .bar { fill: var(--bar); }
svg .bar.baseline { fill: var(--base); }
svg .err { stroke: var(--fg); stroke-width: 1.5; }
svg .axis { stroke: var(--muted); stroke-width: 1; }
.status-complete { color: #1a7f37; }
section.bench { break-inside: avoid-page; }
@media print {
  body { padding: 0; max-width: none; font-size: 11px; }
  h2 { break-after: avoid; }
  figure.chart, table { break-inside: avoid; }
  tr.differs td, tr.differs th, svg .bar { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
}
"""

BAR_H, GAP, LABEL_W, PLOT_W, VALUE_W, TOP = 18, 6, 150, 260, 120, 6


def _e(text):
    """Text for report.html, inert: control and bidi characters made visible (render.printable),
    then &, <, >, " and ' as entities. The page has no script and loads nothing, so text can only
    ever be text."""
    return escape(printable(text, newline=None), quote=True)


def _worse(s):
    d = s.get('delta_pct')
    if d is None or not s.get('significant'):
        return False
    return d < 0 if s.get('better') == 'higher' else d > 0


def chart(metric, unit, better, cells):
    """One SVG bar chart: cells = [(name, summary, is_baseline)], a bar per cell with a mean and its
    CI95 as an error bar. Returns the <figure> markup."""
    drawn = [(n, s, base) for n, s, base in cells if s and s.get('n') and s.get('mean') is not None]
    lo, hi = 0.0, 0.0
    for _n, s, _b in drawn:
        half = ci_half(s) or 0.0
        hi = max(hi, s['mean'] + half)
        lo = min(lo, s['mean'] - half)
    span = (hi - lo) or 1.0

    def x(v):
        return LABEL_W + (v - lo) / span * PLOT_W

    height = TOP * 2 + len(cells) * (BAR_H + GAP)
    width = LABEL_W + PLOT_W + VALUE_W
    arrow = {'higher': 'higher is better', 'lower': 'lower is better'}.get(better, '')
    title = '%s (%s)' % (metric, unit)
    parts = ['<figure class="chart"><figcaption>%s <span class="muted">%s</span></figcaption>' % (_e(title), _e(arrow)),
             '<svg role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-label="%s">' % (
                 width, height, width, height, _e(title + ' per cell'))]
    zero = x(0.0)
    parts.append('<line class="axis" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>' % (zero, TOP, zero, height - TOP))
    for i, (name, s, base) in enumerate(cells):
        y = TOP + i * (BAR_H + GAP)
        label = name if len(name) <= 24 else name[:23] + '…'
        parts.append('<text x="%d" y="%.1f" text-anchor="end">%s<title>%s</title></text>' % (
            LABEL_W - 6, y + BAR_H * 0.7, _e(label), _e(name)))
        if not (s and s.get('n') and s.get('mean') is not None):
            parts.append('<text x="%.1f" y="%.1f" class="muted">%s</text>' % (
                zero + 4, y + BAR_H * 0.7, '+++++ too fast' if s and s.get('too_fast') else 'no value'))
            continue
        x0, x1 = sorted((zero, x(s['mean'])))
        tip = '%s: %s' % (name, fmt_num(s['mean']))
        half = ci_half(s)
        if half is not None:
            tip += ' ± %s' % fmt_num(half)
        tip += ' %s (n=%d)' % (unit, s['n'])
        if s.get('delta_pct') is not None:
            tip += ', %s %s vs baseline' % (fmt_delta(s['delta_pct']), sig_mark(s))
        parts.append('<rect class="bar%s" x="%.1f" y="%d" width="%.1f" height="%d"><title>%s</title></rect>' % (
            ' baseline' if base else '', x0, y, max(x1 - x0, 0.5), BAR_H, _e(tip)))
        if half:
            ya, yb, ym = y + 3, y + BAR_H - 3, y + BAR_H / 2.0
            a, b = x(s['mean'] - half), x(s['mean'] + half)
            parts.append('<path class="err" d="M%.1f %.1fH%.1fM%.1f %dV%dM%.1f %dV%d"/>' % (a, ym, b, a, ya, yb, b, ya, yb))
        value = fmt_num(s['mean'])
        if s.get('delta_pct') is not None:
            value += ' %s%s' % (fmt_delta(s['delta_pct']), sig_mark(s))
        parts.append('<text x="%d" y="%.1f">%s</text>' % (LABEL_W + PLOT_W + 6, y + BAR_H * 0.7, _e(value)))
    parts.append('</svg></figure>')
    return ''.join(parts)


def _entry(e):
    if e is None:
        return '<td class="num muted">—</td>'
    vs = ''
    if e['vs']:
        vs = '<span class="vs%s">%s</span>' % (' worse' if _worse(e['summary']) else '', _e(e['vs']))
    return '<td class="num">%s%s</td>' % (_e(e['stat']), vs)


def render_html(analysis, meta, environment=None, plan=None):
    """report.html as a string."""
    k = report_contents(analysis, meta, environment, plan)
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<title>benchlab report: %s</title>' % _e(k['title']),
           '<style>%s</style></head><body>' % CSS,
           '<h1>benchlab report: %s</h1>' % _e(k['title']),
           '<table class="header">']
    for key, value in k['header']:
        cls = ' class="status-%s"' % _e(value) if key == 'status' else ''
        out.append('<tr><th>%s</th><td%s>%s</td></tr>' % (_e(key), cls, _e(value)))
    out.append('</table>')
    out.append('<p class="legend">%s</p>' % _e(k['legend']))
    env = k['environment']
    if env['columns']:
        differ = [r['key'] for r in env['rows'] if r['differs']]
        out.append('<section id="environment"><h2>Environment</h2>')
        if differ:
            out.append('<p>Differs between the cells (highlighted): %s</p>' % ', '.join(
                '<code>%s</code>' % _e(d) for d in differ))
        out.append('<table class="env"><tr><th>key</th>%s</tr>' % ''.join('<th>%s</th>' % _e(c) for c in env['columns']))
        for r in env['rows']:
            out.append('<tr%s><th>%s</th>%s</tr>' % (' class="differs"' if r['differs'] else '', _e(r['key']),
                                                     ''.join('<td>%s</td>' % _e(v) for v in r['values'])))
        out.append('</table></section>')
    for n, part in enumerate(k['benchmarks']):
        b, t = part['bench'], part['table']
        versions = ', '.join(b['tool_versions'])
        out.append('<section class="bench" id="bench-%d"><h2>%s</h2>' % (n, _e(b['name'])))
        out.append('<p>%s %s%s — baseline: <strong>%s</strong></p>' % (
            _e(b['tool']), _e(b['test']), _e((' (version %s)' % versions) if versions else ''), _e(b['baseline'])))
        out.append('<table class="side-by-side"><tr><th>metric</th>%s</tr>' % ''.join(
            '<th>%s%s</th>' % (_e(c), ' (baseline)' if i == 0 else '') for i, c in enumerate(t['columns'])))
        for r in t['rows']:
            arrow = {'higher': ' ↑', 'lower': ' ↓'}.get(r['better'], '')
            out.append('<tr><th>%s <span class="muted">(%s)%s</span></th>%s</tr>' % (
                _e(r['metric']), _e(r['unit']), arrow, ''.join(_entry(e) for e in r['entries'])))
        out.append('</table>')
        if part['dd']:
            out.append('<h3>dd, as in the field reports</h3><table class="dd"><tr><th>test</th><th>cell</th>'
                       '<th>description</th><th>duration incl. sync (s)</th><th>MB/s</th>'
                       '<th>slower than baseline (%)</th></tr>')
            for r in part['dd']:
                slower = 'n/a' if r['slower_pct'] is None else '%.3f %%' % r['slower_pct']
                out.append('<tr><td class="num">%d</td><td>%s</td><td>%s</td><td class="num">%s</td>'
                           '<td class="num">%s</td><td class="num">%s%s</td></tr>' % (
                               r['test'], _e(r['cell']), _e(r['description']),
                               'n/a' if r['duration'] is None else '%.3f' % r['duration'],
                               'n/a' if r['mb_s'] is None else '%.2f' % r['mb_s'],
                               slower, ' (baseline)' if r['baseline'] else ''))
            out.append('</table>')
        cells = [c for c in b['cells'] if c['baseline']] + [c for c in b['cells'] if not c['baseline']]
        out.append('<div class="charts">')
        for r in t['rows']:
            out.append(chart(r['metric'], r['unit'], r['better'],
                             [(c['cell'], c['metrics'].get(r['metric']), c['baseline']) for c in cells]))
        out.append('</div>')
        if part['traps']:
            out.append('<h3>Traps detected</h3><ul class="traps">')
            for cell, f in part['traps']:
                out.append('<li class="flag"><strong>%s</strong> <code>%s</code>: %s</li>' % (
                    _e(cell), _e(f['code']), _e(f['message'])))
            out.append('</ul>')
        out.append('<h3>Runs</h3><ul class="gates">')
        for g in part['gates']:
            out.append('<li>%s: n=%d%s, %s</li>' % (_e(g['cell']), g['n'],
                                                    (', %d warm-up' % g['warmups']) if g['warmups'] else '', _e(g['gate'])))
        out.append('</ul>')
        if part['warnings']:
            out.append('<h3>Warnings</h3><ul class="warnings">')
            out.extend('<li>%s: %s</li>' % (_e(c), _e(w)) for c, w in part['warnings'])
            out.append('</ul>')
        out.append('</section>')
    if k['trap_help'] or k.get('trap_rates'):
        out.append('<section id="traps"><h2>What the trap flags mean</h2><dl>')
        for code, text in k['trap_help']:
            out.append('<dt><code>%s</code></dt><dd>%s</dd>' % (_e(code), _e(text)))
        out.append('</dl>')
        if k.get('trap_rates'):
            out.append('<p class="trap-rates">Runs flagged per trap: %s</p>' % _e('; '.join(k['trap_rates'])))
        out.append('</section>')
    if k['missing'] or k['failed']:
        out.append('<section id="missing"><h2>Failed or missing cells</h2><ul>')
        for m in k['missing']:
            out.append('<li>%s in %s (%s): %s</li>' % (
                _e(m['benchmark']), _e(m['cell']), _e(m['host'] or '?'), _e(m['reason'])))
        for item in k['failed']:
            out.append('<li>failed run: %s %s: %s</li>' % (_e(item.get('host', '?')), _e(item.get('task', '')),
                                                           _e(item.get('msg', ''))))
        out.append('</ul></section>')
    if k['invalid']:
        out.append('<section id="invalid"><h2>Invalid records</h2><ul>')
        out.extend('<li>%s: %s</li>' % (_e(i.get('host', '?')), _e('; '.join(i['errors']))) for i in k['invalid'])
        out.append('</ul></section>')
    out.append('</body></html>\n')
    return '\n'.join(out)


def bar_count(analysis):
    """How many bars render_html draws: per benchmark, per metric, the cells with a measured mean."""
    return sum(1 for b in analysis['benchmarks'] for m in b['metrics'] for c in b['cells']
               if m in c['metrics'] and c['metrics'][m]['n'] and c['metrics'][m]['mean'] is not None)
