# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.html: the report contents (render.report_contents) as ONE self-contained HTML file.

It opens with the overview, an inline SVG forest plot ("the cost of each layer": per benchmark and
cell the delta vs its baseline with its 95% CI; significant deltas filled and coloured, noise hollow
and grey), then the pivots, the aggregates of runs started together and the environment keys that
differ (the rest folded away in <details>). Inline CSS, inline SVG bar charts (one per metric that
can differ: a bar per cell with its 95% confidence interval as an error bar), no script, nothing fetched from the network, readable when printed. Every text
is escaped. The charts draw the per-cell summaries, so the file's size depends on the number of
benchmarks, cells and metrics, never on the number of records. A pure function of its input."""

from __future__ import annotations

from html import escape

from ansible_collections.benchlab.bench.plugins.plugin_utils.report import explain_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.explain_html import explained_row
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import (
    ci_half, fmt_ci_pct, fmt_delta, fmt_num, forest_kind, forest_scale, printable, report_contents, sig_mark)
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_distributions import CSS as CDF_CSS, cdf_chart, cdf_pairs
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_verdicts import (
    detectable_text, fmt_pct, settle_text, test_text, verdict_text)

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
.range { display: block; font-size: .85em; color: var(--muted); }
svg .ci { stroke-width: 2; }
svg .worse { stroke: var(--worse); fill: var(--worse); }
svg .better { stroke: #1a7f37; fill: #1a7f37; }
svg .equivalent { stroke: #1f6feb; fill: #1f6feb; }
svg .inconclusive { stroke: var(--base); fill: #fff; }
svg .unknown { stroke: var(--base); fill: var(--base); }
svg .margin { fill: #ddf4ff; stroke: none; }
.verdicts { font-weight: 600; }
svg .zero { stroke: var(--fg); stroke-dasharray: 3 2; }
details > summary { cursor: pointer; color: var(--muted); }
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


VERDICT_CLASSES = ('better', 'worse', 'equivalent', 'inconclusive')


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
    vs = rng = ''
    if e['vs']:
        verdict = e['summary'].get('verdict')
        vs = '<span class="vs%s">%s</span>' % ((' ' + verdict) if verdict in VERDICT_CLASSES else '', _e(e['vs']))
    if e['range']:
        rng = '<span class="range">min–max %s</span>' % _e(e['range'])
    return '<td class="num">%s%s%s</td>' % (_e(e['stat']), vs, rng)


FOREST_ROW, FOREST_LABEL, FOREST_PLOT, FOREST_VALUE = 20, 300, 320, 400


def forest(rows):
    """The overview: an SVG forest plot, a row per (benchmark, cell) with its delta vs its baseline in
    % (a dot), the 95% CI (a line) and the equivalence margin (a pale band); class better or worse
    (filled, coloured), equivalent (blue), inconclusive (hollow) or unknown (no comparison)."""
    scale = forest_scale(rows)
    width, height = FOREST_LABEL + FOREST_PLOT + FOREST_VALUE, TOP * 2 + 16 + len(rows) * FOREST_ROW

    def x(v):
        return FOREST_LABEL + (max(-scale, min(scale, v)) / scale + 1.0) / 2.0 * FOREST_PLOT
    parts = ['<svg id="overview-plot" role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-label="%s">' % (
        width, height, width, height, 'delta vs baseline per benchmark and cell, with 95% CI'),
        '<line class="zero" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>' % (x(0), TOP, x(0), height - TOP - 14),
        '<text x="%.1f" y="%d" text-anchor="middle" class="muted">-%.0f %%</text>' % (x(-scale), height - TOP, scale),
        '<text x="%.1f" y="%d" text-anchor="middle" class="muted">0</text>' % (x(0), height - TOP),
        '<text x="%.1f" y="%d" text-anchor="middle" class="muted">+%.0f %%</text>' % (x(scale), height - TOP, scale)]
    for i, r in enumerate(rows):
        parts.append(_forest_row(r, TOP + i * FOREST_ROW, x))
    parts.append('</svg>')
    return ''.join(parts)


def _forest_row(r, y, x):
    kind, ym = forest_kind(r), y + FOREST_ROW / 2.0
    name = '%s · %s' % (r['benchmark'], r['cell'])
    label = name if len(name) <= 48 else name[:47] + '…'
    tip = '%s vs %s: %s' % (name, r['baseline'], r['metric'])
    out = ['<g class="forest-row %s">' % kind,
           '<text x="%d" y="%.1f" text-anchor="end">%s<title>%s</title></text>' % (FOREST_LABEL - 8, ym + 4, _e(label), _e(tip))]
    if r['delta_pct'] is None:
        out.append('<text x="%d" y="%.1f" class="muted">no comparison (no data)</text></g>' % (FOREST_LABEL + 4, ym + 4))
        return ''.join(out)
    if r.get('equivalence_margin_pct'):
        m = r['equivalence_margin_pct']
        out.append('<rect class="margin" x="%.1f" y="%.1f" width="%.1f" height="%d"><title>equivalence margin ±%.4g%%'
                   '</title></rect>' % (x(-m), y + 3, x(m) - x(-m), FOREST_ROW - 6, m))
    if r.get('ci_pct'):
        lo, hi = r['ci_pct']
        out.append('<line class="ci %s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>' % (kind, x(lo), ym, x(hi), ym))
    value = '%s %s %s' % (fmt_delta(r['delta_pct']), fmt_ci_pct(r), verdict_text(r) or '?')
    detail = '; '.join(t for t in (detectable_text(r), test_text(r)) if t)
    out.append('<circle class="%s" cx="%.1f" cy="%.1f" r="5"><title>%s: %s%s</title></circle>' % (
        kind, x(r['delta_pct']), ym, _e(tip), _e(value), _e(' (%s)' % detail if detail else '')))
    out.append('<text x="%d" y="%.1f">%s%s</text></g>' % (
        FOREST_LABEL + FOREST_PLOT + 8, ym + 4, _e(value),
        _e(' · %s' % fmt_pct(r['mde_pct'])) if r.get('mde_pct') is not None else ''))
    return ''.join(out)


def _html_table(heads, rows, numeric, cls):
    out = ['<table class="%s"><tr>%s</tr>' % (cls, ''.join('<th>%s</th>' % _e(h) for h in heads))]
    for r in rows:
        out.append('<tr>%s</tr>' % ''.join('<td%s>%s</td>' % (' class="num"' if n else '', _e(v)) for v, n in zip(r, numeric)))
    out.append('</table>')
    return out


def render_html(analysis, meta, environment=None, plan=None, series=None):
    """report.html as a string; `series` {id: the observed time series} (reports.observed_series)
    gives each cell's charts over its median repetition."""
    k = report_contents(analysis, meta, environment, plan)
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<title>benchlab report: %s</title>' % _e(k['title']),
           '<style>%s%s%s</style></head><body>' % (CSS, CDF_CSS, explain_html.CSS),
           '<h1>benchlab report: %s</h1>' % _e(k['title']),
           '<table class="header">']
    for key, value in k['header']:
        cls = ' class="status-%s"' % _e(value) if key == 'status' else ''
        out.append('<tr><th>%s</th><td%s>%s</td></tr>' % (_e(key), cls, _e(value)))
    out.append('</table>')
    out.append('<p class="legend">%s</p>' % _e(k['legend']))
    if k['verdicts']:
        out.append('<ul class="verdicts">%s</ul>' % ''.join('<li>%s</li>' % _e(v) for v in k['verdicts']))
    if k['overview']:
        out.append('<section id="overview"><h2>Overview: the cost of each layer</h2><p class="legend">Each cell vs its '
                   'baseline: the difference of the benchmark\'s main metric in %, the line its 95% CI, the pale band '
                   'the equivalence margin. Filled: better (green) or worse (red), significant after the correction; '
                   'blue: equivalent; hollow grey: inconclusive. The last figure is the smallest difference the run '
                   'could detect.</p>')
        out.append(forest(k['overview']))
        out.extend(explain_html.overview_list(k['overview']))
        noisy = [r for r in k['overview'] if r.get('noise')]
        if noisy:
            out.append('<p>Where the spread of the inconclusive rows comes from, and what settling them would take:</p>'
                       '<ul class="noise" id="overview-noise">%s</ul>' % ''.join(
                           '<li><strong>%s · %s</strong>: %s; %s.</li>' % (
                               _e(r['benchmark']), _e(r['cell']), _e(r['noise']['text']), _e(settle_text(r)))
                           for r in noisy))
        out.append('</section>')
    out.extend(_html_views(k))
    out.extend(_html_environment(k['environment']))
    for n, part in enumerate(k['benchmarks']):
        out.extend(_html_benchmark(n, part, series))
    out.extend(_html_tail(k))
    out.append('</body></html>\n')
    return '\n'.join(out)


def _html_views(k):
    """The pivots and the aggregates of runs started together."""
    out = []
    if k['pivots']:
        out.append('<section id="pivots"><h2>Pivots</h2>')
        for p in k['pivots']:
            out.append('<h3>%s</h3>' % _e(p['title']))
            out.extend(_html_table(p['heads'], p['rows'], [i >= p['label_columns'] for i in range(len(p['heads']))], 'pivot'))
        out.append('</section>')
    if k['steps']:
        out.append('<section id="steps"><h2>Runs started together</h2><p class="legend">Cells whose runs started in '
                   'the same step: per step the sum over them, then mean ± CI95 (n steps); next to it the per-guest '
                   'mean.</p>')
        out.extend(_html_table(['benchmark', 'cells', 'guests', 'metric', 'aggregate per step', 'per guest',
                                'vs baseline'],
                               [[st['benchmark'], st['cells'], str(st['guests']), st['metric'], st['aggregate'],
                                 st['per_guest'], st['vs']] for st in k['steps']],
                               [False, False, True, False, True, True, False], 'steps'))
        out.append('</section>')
    return out


def _env_rows(env, rows):
    out = ['<table class="env"><tr><th>key</th>%s</tr>' % ''.join('<th>%s</th>' % _e(c) for c in env['columns'])]
    for r in rows:
        out.append('<tr%s><th>%s</th>%s</tr>' % (' class="differs"' if r['differs'] else '', _e(r['key']),
                                                 ''.join('<td>%s</td>' % _e(v) for v in r['values'])))
    out.append('</table>')
    return out


def _html_environment(env):
    """The keys that differ between the cells, highlighted; the rest folded away in <details>."""
    if not env['columns']:
        return []
    differ = [r for r in env['rows'] if r['differs']]
    same = [r for r in env['rows'] if not r['differs']]
    out = ['<section id="environment"><h2>Environment</h2>']
    if differ:
        out.append('<p>Differs between the cells (highlighted): %s</p>' % ', '.join(
            '<code>%s</code>' % _e(r['key']) for r in differ))
        out.extend(_env_rows(env, differ))
    if same:
        out.append('<details id="environment-same"><summary>%d key(s) the same in every cell</summary>' % len(same)
                   if len(env['columns']) > 1 else '<details id="environment-same" open><summary>%d key(s)</summary>' % len(same))
        out.extend(_env_rows(env, same))
        out.append('</details>')
    out.append('</section>')
    return out


def _html_benchmark(n, part, series=None):
    b, t = part['bench'], part['table']
    versions = ', '.join(b['tool_versions'])
    out = ['<section class="bench" id="bench-%d"><h2>%s</h2>' % (n, _e(b['name'])),
           '<p>%s %s%s — baseline: <strong>%s</strong></p>' % (
               _e(b['tool']), _e(b['test']), _e((' (version %s)' % versions) if versions else ''), _e(part['baseline'])),
           '<table class="side-by-side"><tr><th>metric</th>%s</tr>' % ''.join(
               '<th>%s%s</th>' % (_e(c), _e(' (%s)' % note) if note else '') for c, note in zip(t['columns'], t['notes']))]
    for r in t['rows']:
        arrow = {'higher': ' ↑', 'lower': ' ↓'}.get(r['better'], '')
        out.append('<tr><th>%s <span class="muted">(%s)%s</span></th>%s</tr>' % (
            _e(r['metric']), _e(r['unit']), arrow, ''.join(_entry(e) for e in r['entries'])))
    out.append(explained_row(t) + '</table>')
    for table in part['tables']:
        out.append('<h3>%s</h3><p class="muted">%s</p>' % (_e(table['title']), _e(table['note'])))
        out.extend(_html_table([h for h, _n in table['columns']], table['rows'], [num for _h, num in table['columns']],
                               'tool-table'))
    cells = [c for c in b['cells'] if c['baseline']] + [c for c in b['cells'] if not c['baseline']]
    out.append('<div class="charts">')
    for r in t['rows']:
        if charted(b, r['metric']):
            out.append(chart(r['metric'], r['unit'], r['better'],
                             [(c['cell'], c['metrics'].get(r['metric']), c['baseline']) for c in cells]))
    out.append('</div>')
    pairs = cdf_pairs(b)
    if pairs:
        out.append('<div class="charts cdfs">%s</div>' % ''.join(cdf_chart(c, base, name, _e) for c, base, name in pairs))
    out.extend(explain_html.observed_section(b, series))
    return out + _html_notes(part) + ['</section>']


def _html_notes(part):
    out = []
    if part['traps']:
        out.append('<h3>Traps detected</h3><ul class="traps">')
        out.extend('<li class="flag"><strong>%s</strong> <code>%s</code>: %s</li>' % (_e(cell), _e(f['code']), _e(f['message']))
                   for cell, f in part['traps'])
        out.append('</ul>')
    out.append('<h3>Runs</h3><ul class="gates">')
    for g in part['gates']:
        out.append('<li>%s: n=%d%s, %s</li>' % (_e(g['cell']), g['n'], (', %d warm-up' % g['warmups']) if g['warmups'] else '',
                                                _e(g['gate'])))
    out.append('</ul>')
    if part['warnings']:
        out.append('<h3>Warnings</h3><ul class="warnings">')
        out.extend('<li>%s: %s</li>' % (_e(c), _e(w)) for c, w in part['warnings'])
        out.append('</ul>')
    return out


def _html_tail(k):
    out = []
    if k['trap_help'] or k.get('trap_rates'):
        out.append('<section id="traps"><h2>What the trap flags mean</h2><dl>')
        out.extend('<dt><code>%s</code></dt><dd>%s</dd>' % (_e(code), _e(text)) for code, text in k['trap_help'])
        out.append('</dl>')
        if k.get('trap_rates'):
            out.append('<p class="trap-rates">Runs flagged per trap: %s</p>' % _e('; '.join(k['trap_rates'])))
        out.append('</section>')
    if k['missing'] or k['failed']:
        out.append('<section id="missing"><h2>Failed or missing cells</h2><ul>')
        for m in k['missing']:
            out.append('<li>%s in %s (%s): %s</li>' % (_e(m['benchmark']), _e(m['cell']), _e(m['host'] or '?'), _e(m['reason'])))
        for item in k['failed']:
            out.append('<li>failed run: %s %s: %s</li>' % (_e(item.get('host', '?')), _e(item.get('task', '')),
                                                           _e(item.get('msg', ''))))
        out.append('</ul></section>')
    if k['invalid']:
        out.append('<section id="invalid"><h2>Invalid records</h2><ul>')
        out.extend('<li>%s: %s</li>' % (_e(i.get('host', '?')), _e('; '.join(i['errors']))) for i in k['invalid'])
        out.append('</ul></section>')
    return out


def charted(bench, metric):
    """Whether a metric gets a chart: some cell measured it and it is not fixed by the run's parameters
    (by_design, analysis._by_design)."""
    return any(metric in c['metrics'] and not c['metrics'][metric].get('by_design') for c in bench['cells'])


def bar_count(analysis):
    """How many bars render_html draws: per benchmark, per charted metric, the cells with a measured mean."""
    return sum(1 for b in analysis['benchmarks'] for m in b['metrics'] if charted(b, m) for c in b['cells']
               if m in c['metrics'] and c['metrics'][m]['n'] and c['metrics'][m]['mean'] is not None)
