# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The observed part of report.html (plugin_utils/explain/explain.py's evidence), inert like the rest:
inline SVG, no script, every text escaped.

- ``overview_list``: the explained line of every overview row;
- ``explained_row``: the side-by-side table's last row, a cell's explained line per column;
- ``observed_section``: per cell, its layer stack (layer 0 at the top, down to a hypervisor's devices
  under a guest's disk; each block device with the bytes written and read as two bars, the longest
  of the stack the box's width, so a cache or a skip is seen where the bars shrink, and its
  utilisation during the median repetition's window) and two small
  charts over that run: the devices' throughput (MB/s per interval) and the CPU (all cores busy,
  the tool's own CPU) from the stored series (observed/<id>.json.gz)."""

from __future__ import annotations

import math
from html import escape

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number
from ansible_collections.benchlab.bench.plugins.module_utils.run.units import format_bytes
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import printable

CSS = """
.explained { font-size: .9em; }
td.explained { color: var(--fg); background: #f6f8fa; white-space: normal; min-width: 12em; }
ul.explained { margin-top: .2em; }
.observed { display: flex; flex-wrap: wrap; gap: 1em; }
figure.stack, figure.series { margin: 0; border: 1px solid var(--line); border-radius: 4px; padding: .4em; }
figure.stack figcaption, figure.series figcaption { font-weight: 600; font-size: .9em; }
svg .layer { fill: #eef3fb; stroke: var(--muted); }
svg .layer.device { fill: #dbe7f7; }
svg .layer.busy { fill: #fde2cf; }
svg .link { stroke: var(--muted); }
svg .layer-bytes.w { fill: #3b6fb6; }
svg .layer-bytes.r { fill: #1a7f37; }
svg .layer-bytes.none { fill: none; stroke: var(--muted); stroke-dasharray: 2 2; }
svg .line0 { fill: none; stroke: #3b6fb6; stroke-width: 1.5; }
svg .line1 { fill: none; stroke: #c2410c; stroke-width: 1.5; }
svg .line2 { fill: none; stroke: #1a7f37; stroke-width: 1.5; }
svg .line3 { fill: none; stroke: #8250df; stroke-width: 1.5; }
"""

STACK_W, STACK_ROW, STACK_BOX_H = 360, 46, 38
SERIES_W, SERIES_H, PAD_L, PAD_B = 320, 120, 42, 18
MAX_LINES = 4


def _e(text):
    return escape(printable(text, newline=None), quote=True)


def overview_list(rows):
    """<ul> of "benchmark · cell: explained line" for the overview rows that have one."""
    items = [r for r in rows if r.get('explained')]
    if not items:
        return []
    out = ['<ul class="explained" id="overview-explained">']
    out.extend('<li><strong>%s · %s</strong>: %s</li>' % (_e(r['benchmark']), _e(r['cell']), _e(r['explained']))
               for r in items)
    out.append('</ul>')
    return out


def explained_row(table):
    """The side-by-side table's "explained" row (one cell's line per column), or ''."""
    lines = table.get('explained') or []
    if not any(lines):
        return ''
    return '<tr class="explained"><th>explained</th>%s</tr>' % ''.join(
        '<td class="explained">%s</td>' % _e(x or '—') for x in lines)


def observed_section(bench, series):
    """Per cell with an observation: its layer stack and its charts over the median repetition."""
    cells = [c for c in bench['cells'] if (c.get('explained') or {}).get('observed')]
    if not cells:
        return []
    out = ['<h3>Observed (the median repetition of each cell)</h3>']
    for c in cells:
        ex = c['explained']
        out.append('<p class="explained"><strong>%s</strong>: %s</p>' % (_e(c['cell']), _e(ex['line'])))
        out.append('<div class="observed">')
        if ex.get('stack'):
            out.append(stack_svg(c['cell'], ex['stack']))
        data = (series or {}).get(ex.get('median_series'))
        if data:
            if data.get('devices'):
                out.append(device_chart(c['cell'], data))
            else:
                out.append('<p class="muted">no block device under this path</p>')
            out.append(cpu_chart(c['cell'], data))
        elif ex.get('median_series'):
            out.append('<p class="muted">the time series %s is not in the run directory</p>' % _e(ex['median_series']))
        out.append('</div>')
    return out


def _layer_text(layer):
    name = layer['name'] if len(layer['name']) <= 38 else '…' + layer['name'][-37:]
    kind = layer['kind'] + (' %s' % layer['fstype'] if layer.get('fstype') else '')
    return name, kind


def _byte_bars(layer, x, y, width, most):
    """A device's bytes written (upper bar) and read (lower), against the most any layer of the stack
    moved: a layer whose bar shrinks against the one above got fewer bytes (a cache or a skip). Class
    layer-bytes, never bar: report.html colours and counts its charts' bars by that class."""
    out = []
    for i, (key, cls) in enumerate((('write_bytes', 'w'), ('read_bytes', 'r'))):
        share = layer[key] / float(most) if most else 0.0
        what = '%s %s' % ('written' if cls == 'w' else 'read', format_bytes(layer[key]))
        if share <= 0:
            out.append('<rect class="layer-bytes none" x="%.1f" y="%d" width="%.1f" height="2"><title>%s</title></rect>' % (
                x, y + 3 * i, width, _e(what)))
        else:
            out.append('<rect class="layer-bytes %s" x="%.1f" y="%d" width="%.1f" height="2"><title>%s</title></rect>' % (
                cls, x, y + 3 * i, max(0.5, width * share), _e(what)))
    return out


def stack_svg(cell, stack):
    """The layer stack as boxes, layer 0 at the top; layers of the same depth side by side."""
    depths = sorted(set(l['layer'] for l in stack))
    rows = dict((d, [l for l in stack if l['layer'] == d]) for d in depths)
    height = len(depths) * STACK_ROW + 4
    most = max([max(l['write_bytes'], l['read_bytes']) for l in stack if 'write_bytes' in l] or [0])
    parts = ['<figure class="stack"><figcaption>%s: layers</figcaption>' % _e(cell),
             '<svg class="stack" role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-label="%s">' % (
                 STACK_W, height, STACK_W, height, _e('layer stack of %s' % cell))]
    for i, d in enumerate(depths):
        members = rows[d]
        w = (STACK_W - 4) / float(len(members))
        for j, layer in enumerate(members):
            x, y = 2 + j * w, 2 + i * STACK_ROW
            device = 'write_bytes' in layer
            busy = (layer.get('util_pct_mean') or 0) >= 90
            name, kind = _layer_text(layer)
            tip = '%s (%s), layer %d%s' % (layer['name'], kind, layer['layer'],
                                           ', on %s' % layer['host'] if layer.get('host') else '')
            figures = ''
            if device:
                figures = 'W %s · R %s' % (format_bytes(layer['write_bytes']), format_bytes(layer['read_bytes']))
                if layer.get('util_pct_mean') is not None:
                    figures += ' · %.0f %% busy' % layer['util_pct_mean']
                tip += ': ' + figures
            if layer.get('backing_file'):
                tip += ', over %s at offset %s' % (layer['backing_file'], layer.get('offset', 0))
            parts.append('<g class="layer-box"><rect class="layer%s%s" x="%.1f" y="%d" width="%.1f" height="%d" rx="3">'
                         '<title>%s</title></rect>' % (' device' if device else '', ' busy' if busy else '', x, y,
                                                       w - 4, STACK_BOX_H, _e(tip)))
            parts.append('<text x="%.1f" y="%d">%s <tspan class="muted">%s</tspan></text>' % (
                x + 5, y + 15, _e(name), _e(kind)))
            if figures:
                parts.append('<text x="%.1f" y="%d" class="muted">%s</text>' % (x + 5, y + 28, _e(figures)))
                parts.extend(_byte_bars(layer, x + 5, y + STACK_BOX_H - 7, w - 14, most))
            parts.append('</g>')
    parts.append('</svg></figure>')
    return ''.join(parts)


def _lines_chart(title, t, lines, unit, cap=None):
    """A small line chart: t (sample times; a value per interval, drawn at the interval's end),
    lines [(label, values)]."""
    xs = t[1:]
    values = [v for _l, vs in lines for v in vs if v is not None]
    top = max(values + [cap or 0.0, 1e-9])
    if cap:
        top = max(cap, top)
    span_t = (xs[-1] if xs else 1.0) or 1.0
    plot_w, plot_h = SERIES_W - PAD_L - 6, SERIES_H - PAD_B - 20

    def px(x):
        return PAD_L + x / span_t * plot_w

    def py(v):
        return 6 + plot_h - v / top * plot_h
    parts = ['<figure class="series"><figcaption>%s</figcaption>' % _e(title),
             '<svg class="series" role="img" width="%d" height="%d" viewBox="0 0 %d %d" aria-label="%s">' % (
                 SERIES_W, SERIES_H, SERIES_W, SERIES_H, _e(title)),
             '<line class="axis" x1="%d" y1="6" x2="%d" y2="%.1f"/>' % (PAD_L, PAD_L, 6 + plot_h),
             '<line class="axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>' % (PAD_L, 6 + plot_h, SERIES_W - 6, 6 + plot_h),
             '<text x="%d" y="12" text-anchor="end">%s</text>' % (PAD_L - 4, _e(_tick(top))),
             '<text x="%d" y="%.1f" text-anchor="end">0</text>' % (PAD_L - 4, 6 + plot_h),
             '<text x="%d" y="%.1f" text-anchor="end" class="muted">%s s</text>' % (
                 SERIES_W - 6, 6 + plot_h + 13, _e(_tick(span_t))),
             '<text x="%d" y="%.1f" class="muted">%s</text>' % (PAD_L, 6 + plot_h + 13, _e(unit))]
    legend_x = PAD_L + 40
    for i, (label, vs) in enumerate(lines[:MAX_LINES]):
        pts = ['%.1f,%.1f' % (px(x), py(v)) for x, v in zip(xs, vs) if v is not None]
        if len(pts) == 1:
            pts = ['%.1f,%.1f' % (PAD_L, float(pts[0].split(',')[1])), pts[0]]
        if pts:
            parts.append('<polyline class="line%d" points="%s"><title>%s</title></polyline>' % (i, ' '.join(pts), _e(label)))
        parts.append('<text x="%d" y="%.1f" class="line%d-label">%s</text>' % (legend_x, SERIES_H - 2, i, _e(label)))
        legend_x += 8 + 7 * len(label)
    parts.append('</svg></figure>')
    return ''.join(parts)


def _nums(values):
    """The numbers of a stored series (anything else, such as text a changed file holds, as a gap)."""
    if not isinstance(values, list):
        return []
    return [v if is_number(v) and math.isfinite(v) else None
            for v in values]


def _tick(v):
    return ('%.0f' % v) if v >= 10 else ('%.1f' % v)


def device_chart(cell, data):
    """Each device's throughput (write + read MB/s) per interval."""
    lines = []
    devices = data.get('devices') if isinstance(data.get('devices'), dict) else {}
    for name, d in sorted(devices.items()):
        if not isinstance(d, dict):
            continue
        total = [None if w is None and r is None else (w or 0) + (r or 0)
                 for w, r in zip(_nums(d.get('write_mbs')), _nums(d.get('read_mbs')))]
        lines.append((str(name), total))
    return _lines_chart('%s: devices' % cell, _times(data), lines, 'MB/s read + written')


def cpu_chart(cell, data):
    """All cores busy and the tool's own CPU (% of one core) per interval."""
    cpu = data.get('cpu') if isinstance(data.get('cpu'), dict) else {}
    lines = [('all cores busy', _nums(cpu.get('busy_pct')))]
    if any(v is not None for v in _nums(cpu.get('tool_pct'))):
        lines.append(('tool (% of a core)', _nums(cpu.get('tool_pct'))))
    if any(_nums(cpu.get('iowait_pct'))):
        lines.append(('iowait', _nums(cpu.get('iowait_pct'))))
    return _lines_chart('%s: CPU' % cell, _times(data), lines, '%', cap=100.0)


def _times(data):
    t = [v for v in _nums(data.get('t')) if v is not None]
    return t if t else [0.0]
