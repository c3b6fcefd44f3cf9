# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cells' distributions (plugin_utils/analysis/distributions.py) in the reports beside render.py's tables
of them (render.distribution_tables): each cell's latency CDF drawn over its baseline's
(report.html: inline SVG, log latency axis, no script) and distributions.csv. Pure functions."""

from __future__ import annotations

import csv
import io
import math

from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import ordered_cells
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import DIRECTION_NAMES, fmt_num

# -- the CDF chart ----------------------------------------------------------------------------

CDF_W, CDF_H, CDF_LEFT, CDF_BOTTOM, CDF_TOP, CDF_RIGHT = 440, 220, 44, 30, 10, 26


def cdf_pairs(bench):
    """[(cell, its baseline cell, distribution name)] for each latency histogram a non-baseline cell
    and its baseline both have."""
    by_name = dict((c['cell'], c) for c in bench['cells'])
    out = []
    for c in bench['cells']:
        base = by_name.get(c.get('baseline_cell'))
        if c['baseline'] or not base:
            continue
        for name, d in sorted((c.get('distributions') or {}).items()):
            other = (base.get('distributions') or {}).get(name)
            if d['kind'] == 'histogram' and other and other.get('cdf') and d.get('cdf'):
                out.append((c, base, name))
    return out


def cdf_chart(cell, base, name, esc):
    """One <figure>: the cell's latency CDF (solid) over its baseline's (dashed), the latency on a log
    axis (decades), the cumulative fraction 0..1; esc makes text inert (render_html's escaping)."""
    mine, ref = cell['distributions'][name], base['distributions'][name]
    points = [v for v, _f in mine['cdf'] + ref['cdf'] if v > 0]
    lo = 10 ** math.floor(math.log10(min(points)))
    hi = 10 ** math.ceil(math.log10(max(points)))
    if hi <= lo:
        hi = lo * 10
    plot_w, plot_h = CDF_W - CDF_LEFT - CDF_RIGHT, CDF_H - CDF_TOP - CDF_BOTTOM

    def x(v):
        return CDF_LEFT + (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * plot_w

    def y(f):
        return CDF_TOP + (1.0 - f) * plot_h

    def path(cdf):
        # a step function: each bucket holds its fraction up to the next bucket
        parts, prev = [], 0.0
        for v, f in cdf:
            if v <= 0:
                continue
            parts.append('%s%.1f %.1f' % ('M' if not parts else 'L', x(v), y(prev)))
            parts.append('L%.1f %.1f' % (x(v), y(f)))
            prev = f
        return ''.join(parts)
    direction = DIRECTION_NAMES.get(name, name)
    title = '%s latency CDF: %s over %s' % (direction, cell['cell'], base['cell'])
    p = dict((k, mine['percentiles'][k]['merged']) for k in ('p50', 'p99'))
    q = dict((k, ref['percentiles'][k]['merged']) for k in ('p50', 'p99'))
    caption = 'p50 %s ms (baseline %s), p99 %s ms (baseline %s)' % (fmt_num(p['p50']), fmt_num(q['p50']), fmt_num(p['p99']),
                                                                    fmt_num(q['p99']))
    out = ['<figure class="cdf-chart" data-distribution="%s"><figcaption>%s <span class="muted">%s</span></figcaption>'
           % (esc(name), esc(title), esc(caption)),
           '<svg role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-label="%s">' % (
               CDF_W, CDF_H, CDF_W, CDF_H, esc(title))]
    out.append('<line class="axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>' % (CDF_LEFT, y(0), CDF_W - CDF_RIGHT, y(0)))
    out.append('<line class="axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>' % (CDF_LEFT, y(0), CDF_LEFT, y(1)))
    decade = lo
    while decade <= hi * 1.0001:
        out.append('<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>' % (x(decade), y(0), x(decade), y(1)))
        out.append('<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>' % (
            x(decade), y(0) + 14, esc('%g ms' % decade)))
        decade *= 10
    for f in (0.0, 0.25, 0.5, 0.75, 0.9, 1.0):
        out.append('<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>' % (CDF_LEFT - 4, y(f) + 4, '%g' % f))
    out.append('<path class="cdf baseline" d="%s"><title>%s</title></path>' % (path(ref['cdf']), esc(base['cell'])))
    out.append('<path class="cdf cell" d="%s"><title>%s</title></path>' % (path(mine['cdf']), esc(cell['cell'])))
    out.append('</svg></figure>')
    return ''.join(out)


CSS = """
figure.cdf-chart { margin: 0; border: 1px solid var(--line); border-radius: 4px; padding: .4em; break-inside: avoid; }
figure.cdf-chart figcaption { font-weight: 600; font-size: .9em; max-width: 420px; }
svg path.cdf { fill: none; stroke-width: 1.6; }
svg path.cdf.cell { stroke: var(--bar); }
svg path.cdf.baseline { stroke: var(--base); stroke-dasharray: 4 3; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg text.tick { font-size: 10px; fill: var(--muted); }
"""


# -- distributions.csv ------------------------------------------------------------------------

CSV_COLUMNS = ('benchmark', 'cell', 'baseline_cell', 'distribution', 'kind', 'unit', 'statistic', 'value', 'mean',
               'ci95_low', 'ci95_high', 'repetitions', 'samples')


def render_distributions_csv(analysis, text):
    """distributions.csv: one row per benchmark x cell x distribution x statistic (the latency
    percentiles: value is the merged histogram's, mean and CI95 the repetitions'; the spread of the
    intervals: p10/p50/p90, min, max, cv_within_run); None when no cell has distributions.
    text(value) makes a cell inert (render_csv's rule)."""
    rows = []
    for b in analysis.get('benchmarks') or []:
        for c in ordered_cells(b):
            for name, d in sorted((c.get('distributions') or {}).items()):
                head = [b['name'], c['cell'], c.get('baseline_cell'), name, d['kind'], d['unit']]
                count = d.get('samples') if d['kind'] == 'histogram' else d.get('intervals')
                for stat, p in d['percentiles'].items():
                    if isinstance(p, dict):
                        ci = p.get('ci95') or [None, None]
                        rows.append(head + [stat, p.get('merged'), p.get('mean'), ci[0], ci[1], d['repetitions'], count])
                    else:
                        rows.append(head + [stat, p, None, None, None, d['repetitions'], count])
                for stat in ('min', 'max', 'cv_within_run'):
                    if stat in d:
                        rows.append(head + [stat, d[stat], None, None, None, d['repetitions'], count])
    if not rows:
        return None
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    for r in rows:
        w.writerow([text(v) for v in r])
    return buf.getvalue()
