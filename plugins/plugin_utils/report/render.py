# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a report says, and the report as Markdown and as the terminal summary. Pure functions.

report_contents() turns the analysis, the run's meta, the environment (sysinfo results) and the
plan into the parts every format shows: the header, the environment per cell with the keys that
differ between the compared cells, per benchmark the side-by-side table (rows = metrics, columns =
cells, baseline first), the tables a tool adds (tooltables.py: dd's table of the field reports),
the overview ("cost of each layer": each cell's delta vs its baseline with its CI), the pivot
tables and the aggregates of runs started together, the trap flags with their
explanations, the variance gate per cell, and the failed or missing cells with their reason.
render_markdown() and render_terminal() draw it; render_html.py draws the same contents as HTML.
"""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.module_utils.run.units import format_bytes
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import ordered_cells
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.distributions import INTERVAL_PERCENTILES, PERCENTILES, percentile_name
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_verdicts import (
    LEGEND, correction_lines, detectable_text, fmt_pct, settle_text, test_text, verdict_kind, verdict_text)
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.tooltables import tool_tables
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.traps import explanation, title

HEADER_KEYS = ('run_id', 'started', 'finished', 'user', 'inventory', 'playbook', 'matrix',
               'collection_version', 'status')

# Verdict marks next to a delta vs the baseline (charts and the terminal): better or worse, equivalent, inconclusive.
SIG_SIGNIFICANT, SIG_EQUIVALENT, SIG_UNKNOWN = '*', '=', '?'

# Environment keys that change from call to call on the same machine: shown, never "different".
ENV_VOLATILE = ('memory.mem_available_bytes', 'cpu.mhz')
ENV_SKIP = ('labels',)
# Distinct warnings listed per cell and benchmark; the rest are counted (all are in results.json).
MAX_WARNINGS = 10


# -- text from outside (labels, host names, tool output) ------------------------------------------

# Control characters (C0, DEL, C1) and the Unicode bidirectional controls ("Trojan Source": they
# reorder what a reader sees) are shown as visible escapes, never passed on to a terminal or a page.
_BIDI = (0x061c, 0x200e, 0x200f) + tuple(range(0x202a, 0x202f)) + tuple(range(0x2066, 0x206a))
_VISIBLE = dict((c, '\\x%02x' % c) for c in tuple(range(0x20)) + (0x7f,) + tuple(range(0x80, 0xa0)))
_VISIBLE.update((c, '\\u%04x' % c) for c in _BIDI)
_VISIBLE.update({0x09: '\\t', 0x0a: '\\n', 0x0d: '\\r'})
_TABLES = {}


def printable(text, newline='\\n'):
    """`text` (any value, None is '') with every control character shown as a visible escape (ESC is
    the four characters \\x1b), so no label, host name or tool output can move the cursor, recolour,
    retitle or rewrite a terminal, or reorder text. A newline becomes `newline` (None keeps it).
    Backslashes are left alone: the escapes read as text, they are not meant to be decoded."""
    text = '' if text is None else str(text)
    table = _TABLES.get(newline)
    if table is None:
        table = _TABLES[newline] = dict(_VISIBLE)
        if newline is None:
            del table[0x0a]
        else:
            table[0x0a] = newline
    return text.translate(table)


# -- numbers ------------------------------------------------------------------------------------

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


def fmt_duration(seconds):
    """2m10s, 1h05m, 45s."""
    seconds = int(round(max(0.0, seconds or 0.0)))
    if seconds >= 3600:
        return '%dh%02dm' % (seconds // 3600, (seconds % 3600) // 60)
    if seconds >= 60:
        return '%dm%02ds' % (seconds // 60, seconds % 60)
    return '%ds' % seconds


def ci_half(s):
    """Half the width of the 95% confidence interval of the mean, or None."""
    ci = s.get('ci95')
    if not ci or ci[0] is None or ci[1] is None:
        return None
    return (ci[1] - ci[0]) / 2.0


def fmt_stat(s):
    """`mean ± CI95 (n)`; n/a or +++++ when nothing was measured."""
    if not s or not s.get('n'):
        if s and s.get('too_fast'):
            return '+++++ (too fast, n=0)'
        return 'n/a'
    half = ci_half(s)
    text = fmt_num(s['mean'])
    if half is not None:
        text += ' ± %s' % fmt_num(half)
    return text + ' (%d)' % s['n']


def sig_mark(s):
    """* better or worse, = equivalent, ? inconclusive; '' without a comparison."""
    kind = verdict_kind(s)
    if kind == 'unknown':
        return ''
    return {'equivalent': SIG_EQUIVALENT, 'inconclusive': SIG_UNKNOWN}.get(kind, SIG_SIGNIFICANT)


def fmt_vs(s):
    """`-4.2% inconclusive, needs 8 per side (detectable 11.6%)`: the delta to the baseline with its
    verdict and the detectable effect; '' for the baseline."""
    if s.get('delta_pct') is None:
        return ''
    text = '%s %s' % (fmt_delta(s['delta_pct']), verdict_text(s))
    mde = detectable_text(s)
    return '%s (%s)' % (text, mde) if mde else text


# -- contents -----------------------------------------------------------------------------------

def _flatten(value, prefix, out):
    if isinstance(value, dict):
        for k, v in value.items():
            if prefix == '' and k in ENV_SKIP:
                continue
            _flatten(v, ('%s.%s' % (prefix, k)) if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            name = v.get('name') if isinstance(v.get('name'), str) else str(i)
            _flatten(dict((k, x) for k, x in v.items() if k != 'name'), '%s[%s]' % (prefix, name), out)
    elif isinstance(value, list):
        out[prefix] = ', '.join(str(v) for v in value)
    elif value is None:
        out[prefix] = ''
    elif isinstance(value, bool):
        out[prefix] = 'yes' if value else 'no'
    elif isinstance(value, (int, float)) and prefix.endswith('_bytes'):
        out[prefix] = format_bytes(value)
    else:
        out[prefix] = str(value)


def flatten_environment(env):
    """One cell's environment (sysinfo) as {dotted key: text}, as the environment table shows it."""
    out = {}
    _flatten(env, '', out)
    return out


def environment_table(environment, cell_order=()):
    """The environment per cell: {columns: [cell names], rows: [{key, values, differs}]}.

    environment: sysinfo results keyed freely ("host/cell"), each with 'host' and 'labels'.
    A key differs when two cells show different values (volatile keys such as the free memory never
    do). Rows keep sysinfo's order; the caller highlights the differing ones."""
    columns, flat = [], {}
    for key, env in (environment or {}).items():
        if not isinstance(env, dict):
            continue
        name = (env.get('labels') or {}).get('cell') or env.get('host') or key
        if name in flat:
            name = '%s@%s' % (name, env.get('host'))
        values = {}
        _flatten(env, '', values)
        flat[name] = values
        columns.append(name)
    order, seen = list(cell_order), list(columns)
    columns.sort(key=lambda n: (order.index(n) if n in order else len(order), seen.index(n)))
    keys = []
    for name in columns:
        keys.extend(k for k in flat[name] if k not in keys)
    rows = []
    for k in keys:
        values = [flat[n].get(k, '') for n in columns]
        differs = len(columns) > 1 and k not in ENV_VOLATILE and len(set(values)) > 1
        rows.append(dict(key=k, values=values, differs=differs))
    return dict(columns=columns, rows=rows)


def _unit(b, metric):
    for c in b['cells']:
        if metric in c['metrics']:
            return c['metrics'][metric]['unit']
    return ''


def _better(b, metric):
    for c in b['cells']:
        if metric in c['metrics']:
            return c['metrics'][metric]['better']
    return None


def fmt_range(s):
    """`min–max` of the measured values ('' for fewer than two)."""
    if not s or (s.get('n') or 0) < 2 or s.get('min') is None:
        return ''
    return '%s–%s' % (fmt_num(s['min']), fmt_num(s['max']))


def column_note(b, c):
    """What a column heading adds to the cell's name: (baseline), or with per-group baselines the
    cell it is compared with."""
    if c['baseline']:
        return 'baseline'
    if b.get('baseline_by') and c.get('baseline_cell'):
        return 'vs %s' % c['baseline_cell']
    return ''


def side_by_side(b):
    """rows = metrics, columns = cells (baselines first, ordered_cells):
    {columns, notes, rows: [{metric, unit, better, entries}]} where an entry is {stat, vs, range,
    summary} or None when the cell has no such metric; notes: column_note per column."""
    cells = ordered_cells(b)
    rows = []
    for m in b['metrics']:
        entries = []
        for c in cells:
            s = c['metrics'].get(m)
            entries.append(None if s is None else dict(stat=fmt_stat(s), vs=fmt_vs(s), range=fmt_range(s), summary=s))
        rows.append(dict(metric=m, unit=_unit(b, m), better=_better(b, m), entries=entries))
    return dict(columns=[c['cell'] for c in cells], notes=[column_note(b, c) for c in cells], rows=rows,
                explained=[(c.get('explained') or {}).get('line') for c in cells])


def baseline_text(b):
    """`host-a` or, with per-group baselines, `per host: host-a (for host-a, host-a-drbd); ...`."""
    if not b.get('baseline_by'):
        return b['baseline']
    groups = []
    for c in ordered_cells(b):
        if c['baseline']:
            members = [c['cell']] + [o['cell'] for o in b['cells'] if o.get('baseline_cell') == c['cell']]
            groups.append('%s (for %s)' % (c['cell'], ', '.join(members)))
    return 'per %s: %s' % (b['baseline_by'], '; '.join(groups))


# -- overview, pivots, steps --------------------------------------------------------------------

FOREST_WIDTH = 25


def forest_scale(rows):
    """The half-width in % of the overview's axis: the largest |CI bound| or |delta| (at least 5)."""
    bounds = [abs(x) for r in rows for x in ([r['delta_pct']] + list(r.get('ci_pct') or [])) if x is not None]
    return max(bounds + [5.0])


def forest_kind(row):
    """The row's verdict: 'worse', 'better', 'equivalent', 'inconclusive', or 'unknown' (no data)."""
    return verdict_kind(row)


FOREST_MARKS = {'better': '●', 'worse': '●', 'equivalent': '◆', 'inconclusive': '○', 'unknown': '○'}


def forest_bar(row, scale, width=FOREST_WIDTH):
    """A text forest-plot row: `·····━━━●━━│·········` (│ is 0, ━ the 95% CI, ● better or worse,
    ◆ equivalent, ○ inconclusive)."""
    if row['delta_pct'] is None:
        return ''

    def at(v):
        return max(0, min(width - 1, int(round((v / scale + 1.0) * (width - 1) / 2.0))))
    line = ['·'] * width
    lo, hi = sorted(row.get('ci_pct') or [row['delta_pct'], row['delta_pct']])
    for i in range(at(lo), at(hi) + 1):
        line[i] = '━'
    line[at(0.0)] = '│'
    line[at(row['delta_pct'])] = FOREST_MARKS[forest_kind(row)]
    return ''.join(line)


def fmt_ci_pct(row):
    ci = row.get('ci_pct')
    return '' if not ci else '[%+.1f, %+.1f]' % (ci[0], ci[1])


def fmt_brief(e):
    """A pivot cell: `mean ± CI95 (n)` and, compared with a baseline, its delta and verdict; — when
    the combination was not measured."""
    if not e:
        return '—'
    text = fmt_stat(dict(e, too_fast=0))
    if e.get('verdict') and e.get('delta_pct') is not None:
        text += ' %s %s' % (fmt_delta(e['delta_pct']), e['verdict'])
    return text


def pivot_view(p):
    """A pivot of the analysis as texts: {title, heads, rows: [[text]]}: the row labels, then one
    column per value of the factor."""
    keys = list(p['rows'][0]) if p['rows'] else []
    heads = keys + ['%s=%s' % (p['factor'], v) for v in p['columns']]
    # a cell without the label (the host's row when the guests carry a network): a dash, not 'None'
    rows = [['—' if r.get(k) is None else str(r[k]) for k in keys] + [fmt_brief(e) for e in cells]
            for r, cells in zip(p['rows'], p['cells'])]
    return dict(title='%s: %s (%s) by %s' % (p['benchmark'], p['metric'], p.get('unit') or '', p['factor']),
                heads=heads or [p['factor']], label_columns=len(keys), rows=rows)


def step_line(st):
    """One aggregate of runs started together, as text."""
    if st.get('aggregate') is None:   # none of its steps ran together (analysis.step_aggregates)
        return dict(benchmark=st['benchmark'], cells=' + '.join(st['cells']), guests=len(st['cells']),
                    aggregate='no figure: the runs did not run together in any of its %d step(s)' % st.get('not_together', 0),
                    per_guest='—', metric=st['metric'], vs='—')
    return dict(benchmark=st['benchmark'], cells=' + '.join(st['cells']), guests=len(st['cells']),
                aggregate='%s %s%s' % (fmt_stat(st['aggregate']), st['unit'],
                                       ' (%d step(s) left out: the runs did not run together)' % st['not_together']
                                       if st.get('not_together') else ''),
                per_guest='%s %s' % (fmt_brief(st['per_guest']), st['unit']), metric=st['metric'],
                vs=('vs %s: %s' % (st['baseline'], fmt_vs(st))) if st.get('baseline') else '—')


def traps(b):
    """[(cell, flag)] of one benchmark, flags as traps.py made them."""
    return [(c['cell'], f) for c in ordered_cells(b) for f in c.get('flags') or []]


def gate_lines(b):
    """Per cell: {cell, n, warmups, gate: text}."""
    out = []
    for c in ordered_cells(b):
        g = c.get('gate')
        text = gate_text(g) if g else 'no variance gate'
        w = c.get('workers')
        if w and (w.get('count') or 1) > 1:
            text += '; each run: %d workers at once (%s), one measurement - their aggregate' % (w['count'], w.get('kind'))
        out.append(dict(cell=c['cell'], n=c['n'], warmups=c.get('warmups') or 0, gate=text,
                        met=(g or {}).get('met')))
    return out


def gate_text(g):
    """`variance gate met: CV 2.1% (max_cv 5.0%), 95% CI +-1.9% of the mean (target +-5%: met) after
    5 runs (cap 8)`."""
    state = 'met' if g['met'] else ('NOT met at the cap' if g['capped'] else 'not met')
    parts = []
    if g.get('max_cv') is not None:
        parts.append('CV %s (max_cv %.1f%%)' % ('n/a' if g.get('cv') is None else '%.1f%%' % (g['cv'] * 100),
                                                g['max_cv'] * 100))
    if g.get('target_ci_pct') is not None:
        parts.append('95%% CI %s of the mean (target ±%.4g%%: %s)' % (
            'n/a' if g.get('ci_pct') is None else '±%.1f%%' % g['ci_pct'], g['target_ci_pct'],
            'met' if g.get('precise') else 'not met'))
    return 'variance gate %s: %s after %d runs (cap %d)' % (state, ', '.join(parts), g['n'], g['max_repetitions'])


def trap_rate_lines(analysis):
    """'not_quiet (machine not quiet): 0 of 12 runs (0%)' per run-level trap code (traps.trap_rates in
    the analysis), [] for an analysis without them."""
    out = []
    for t in analysis.get('traps') or []:
        pct = '%.0f%%' % (100.0 * t['fraction']) if t.get('fraction') is not None else 'n/a'
        out.append('%s (%s): %d of %d runs (%s)' % (t['code'], title(t['code']), t['flagged'], t['runs'], pct))
    return out


def _not_run_reason(failed, pb_name, cell, host):
    """Why a planned run has no record, from the failures the callback kept (each names its own
    cell and benchmark): the run's own failure, its host unreachable, a failure of the same cell
    (its preparation, e.g. DRBD not connected, stops the host before its other runs) or a failure
    of its host outside any run; None when nothing known explains it."""
    failed = [f for f in failed or [] if isinstance(f, dict)]
    own = [f for f in failed if f.get('benchmark') == pb_name and f.get('cell') == cell]
    if own:
        return 'failed: %s' % own[0].get('msg', '')
    down = [f for f in failed if f.get('host') == host and str(f.get('msg', '')).startswith('unreachable')]
    if down:
        return 'host %s %s' % (host, down[0]['msg'])
    same_cell = [f for f in failed if f.get('cell') == cell]
    if same_cell:
        f = same_cell[0]
        if not f.get('benchmark'):
            return 'failed: %s' % f.get('msg', '')
        return 'not run: %s in %s failed first: %s' % (f['benchmark'], cell, f.get('msg', ''))
    on_host = [f for f in failed if host and f.get('host') == host and not f.get('cell')]
    if on_host:
        return 'not run: %s failed first (%s: %s)' % (host, on_host[0].get('task') or '?', on_host[0].get('msg', ''))
    return None


def missing_cells(analysis, plan, failed):
    """Failed or missing cells: every (benchmark, cell) the plan asked for with no counted record,
    with the one reason known (the failure of its task, the host unreachable, an earlier failure
    of its cell or host, only warm-ups recorded), the generic 'not run' only when none is."""
    if not plan:
        return []
    have = set()
    warm = set()
    for b in analysis['benchmarks']:
        for c in b['cells']:
            (have if c['n'] else warm).add((b['benchmark'], c['cell']))
    hosts = dict((c['name'], c.get('host')) for c in plan.get('cells') or [])
    out = []
    for pb in plan.get('benchmarks') or []:
        for cell in pb.get('cells') or []:
            if (pb['name'], cell) in have:
                continue
            host = hosts.get(cell)
            reason = _not_run_reason(failed, pb['name'], cell, host)
            if reason is None:
                reason = ('only warm-up runs recorded' if (pb['name'], cell) in warm
                          else 'no record: not run (play interrupted, host skipped or failed earlier)')
            out.append(dict(benchmark=pb['name'], cell=cell, host=host, reason=reason))
    return out


def _bench_part(b):
    """One benchmark's section: its tables, traps, gates, warnings and warm-ups."""
    t = traps(b)
    shown = set(f['message'] for _c, f in t)
    notes = []
    for c in ordered_cells(b):
        mine = [w for w in c['warnings'] if w not in shown]
        notes.extend((c['cell'], w) for w in mine[:MAX_WARNINGS])
        if len(mine) > MAX_WARNINGS:
            notes.append((c['cell'], '… and %d more distinct warnings (in results.json)' % (len(mine) - MAX_WARNINGS)))
    return dict(bench=b, table=side_by_side(b), tables=tool_tables(b) + distribution_tables(b), traps=t, gates=gate_lines(b),
                baseline=baseline_text(b), warnings=notes,
                warmups=[(c['cell'], c['warmups']) for c in ordered_cells(b) if c.get('warmups')])


# -- the cells' distributions (plugin_utils/analysis/distributions.py) ------------------------------------

DIRECTION_NAMES = {'read_clat': 'read', 'write_clat': 'write'}


def _pct_entry(p):
    """`0.213 (0.210 ± 0.004)`: the merged histogram's percentile, then the mean ± CI95 half-width of
    the repetitions' own."""
    text = fmt_num(p.get('merged'))
    if p.get('ci95') and p['ci95'][0] is not None:
        text += ' (%s ± %s)' % (fmt_num(p['mean']), fmt_num((p['ci95'][1] - p['ci95'][0]) / 2.0))
    return text


def distribution_tables(bench):
    """[{title, note, columns: [(head, numeric)], rows: [[text]]}] of one benchmark: its latency
    percentiles and its network cells' spread within a run; [] without distributions."""
    cells = [c for c in ordered_cells(bench) if c.get('distributions')]
    out = []
    hist = [(c, name, d) for c in cells for name, d in sorted(c['distributions'].items()) if d['kind'] == 'histogram']
    if hist:
        heads = [('cell', False), ('direction', False), ('I/Os', True)] + [(percentile_name(p), True) for p in PERCENTILES]
        rows = [[c['cell'], DIRECTION_NAMES.get(name, name), str(d['samples'])]
                + [_pct_entry(d['percentiles'][percentile_name(p)]) for p in PERCENTILES] for c, name, d in hist]
        out.append(dict(title='Completion latency (ms)', columns=heads, rows=rows,
                        note='fio\'s latency histograms (json+) merged over the workers and the repetitions; in '
                             'brackets the mean ± CI95 half-width of each repetition\'s own percentile'))
    spread = [(c, name, d) for c in cells for name, d in sorted(c['distributions'].items()) if d['kind'] == 'intervals']
    if spread:
        heads = ([('cell', False), ('intervals', True)] + [(percentile_name(p), True) for p in INTERVAL_PERCENTILES]
                 + [('min–max', True), ('CV within a run', True)])
        rows = [[c['cell'], str(d['intervals'])] + [fmt_num(d['percentiles'][percentile_name(p)]) for p in INTERVAL_PERCENTILES]
                + ['%s–%s' % (fmt_num(d['min']), fmt_num(d['max'])),
                   'n/a' if d.get('cv_within_run') is None else '%.1f%%' % (d['cv_within_run'] * 100)]
                for c, name, d in spread]
        out.append(dict(title='Throughput per interval (Mbit/s)', columns=heads, rows=rows,
                        note='iperf3\'s throughput in each reporting interval, pooled over the repetitions '
                             '(concurrent pairs added up interval by interval): how steady the link was inside a run'))
    return out


def import_line(imported):
    """The header line of a run made by playbooks/import.yml (its plan's `imported`: manifest, entries,
    records), None for a run that measured something."""
    if not isinstance(imported, dict):
        return None
    return 'yes: hand-run outputs from the manifest %s (%s entries, %s records); nothing was run' % (
        imported.get('manifest') or '?', imported.get('entries', '?'), imported.get('records', '?'))


def report_contents(analysis, meta, environment=None, plan=None):
    """Everything a report shows, as plain data (the renderers only lay it out)."""
    meta = meta or {}
    cell_order = [c['name'] for c in (plan or {}).get('cells') or []]
    for b in analysis['benchmarks']:
        cell_order.extend(c['cell'] for c in b['cells'] if c['cell'] not in cell_order)
    header = [(k.replace('_', ' '), str(meta[k])) for k in HEADER_KEYS if meta.get(k)]
    imported = import_line((plan or {}).get('imported'))
    if imported:
        header.insert(0, ('imported', imported))
    n_records = sum(c.get('n_records', c['n']) + (c.get('warmups') or 0) for b in analysis['benchmarks'] for c in b['cells'])
    header.append(('records', str(n_records)))
    benches = [_bench_part(b) for b in analysis['benchmarks']]
    codes = []
    for part in benches:
        codes.extend(f['code'] for _c, f in part['traps'] if f['code'] not in codes)
    return dict(
        title=meta.get('matrix') or meta.get('run_id') or 'benchlab run',
        header=header,
        environment=environment_table(environment, cell_order),
        overview=analysis.get('overview') or [],
        pivots=[pivot_view(p) for p in analysis.get('pivots') or []],
        steps=[step_line(st) for st in analysis.get('steps') or []],
        benchmarks=benches,
        trap_help=[(code, explanation(code)) for code in codes],
        trap_rates=trap_rate_lines(analysis),
        missing=missing_cells(analysis, plan, meta.get('failed')),
        failed=list(meta.get('failed') or []),
        invalid=list(meta.get('invalid') or []),
        legend=LEGEND,
        verdicts=correction_lines(analysis),
    )


# -- Markdown -----------------------------------------------------------------------------------

_MD_SPECIAL = '\\`|[]!*~'


def _md(text):
    """Text for report.md, inert: control characters made visible (newlines become spaces);
    backslash, backtick (code spans), `|` (table cells), `[`, `]` and `!` (links, images, reference
    links), `*` and `~` (emphasis, strike-through) backslash-escaped, `_` too unless it sits inside
    a word (where it cannot emphasise: metric names such as read_iops stay as they are); `<` and `>`
    as entities (no HTML, no <autolink>); a leading or trailing blank as &#32; (so the text cannot
    unbalance the report's own **bold**). Parentheses need no escape once no `]` can close a link
    text. A URL stays visible text: GitHub may make a bare http:// URL clickable, never under another
    name."""
    text = printable(text, newline=' ')
    out = []
    last = len(text) - 1
    for i, c in enumerate(text):
        if c in _MD_SPECIAL:
            out.append('\\' + c)
        elif c == '_' and not (0 < i < last and text[i - 1].isalnum() and text[i + 1].isalnum()):
            out.append('\\_')
        elif c == '<':
            out.append('&lt;')
        elif c == '>':
            out.append('&gt;')
        elif c == '&':
            out.append('&amp;')
        elif c == ' ' and (i == 0 or i == last):
            out.append('&#32;')
        else:
            out.append(c)
    return ''.join(out)


def _arrow(better):
    return {'higher': ' ↑', 'lower': ' ↓'}.get(better, '')


def render_markdown(analysis, meta, environment=None, plan=None):
    """report.md (GitHub-flavoured): header, the overview ("cost of each layer"), the pivots and the
    aggregates of runs started together, the environment keys that differ, per benchmark the
    side-by-side table, the tool's own tables, traps, gates and warnings, then failed or missing
    cells, invalid records and the environment keys that are the same everywhere."""
    k = report_contents(analysis, meta, environment, plan)
    lines = ['# benchlab report: %s' % _md(k['title']), '']
    for key, value in k['header']:
        lines.append('- **%s**: %s' % (key, _md(value)))
    lines += ['', LEGEND, '']
    if k['verdicts']:
        lines += ['**Verdicts.** ' + ' '.join(_md(v) + '.' for v in k['verdicts']), '']
    lines += _md_overview(k['overview'])
    lines += _md_pivots(k['pivots']) + _md_steps(k['steps'])
    lines += _md_environment(k['environment'], True)
    for part in k['benchmarks']:
        lines += _md_benchmark(part)
    lines += _md_tail(k)
    lines += _md_environment(k['environment'], False)
    return '\n'.join(lines)


def _md_table(heads, rows, numeric):
    """A GFM table; heads and rows are escaped here; numeric: per column, right-aligned."""
    out = ['| ' + ' | '.join(_md(h) for h in heads) + ' |',
           '|' + ''.join('---:|' if n else '---|' for n in numeric)]
    out.extend('| ' + ' | '.join(_md(v) for v in r) + ' |' for r in rows)
    return out


def _md_overview(rows):
    if not rows:
        return []
    scale = forest_scale(rows)
    out = ['## Overview: the cost of each layer', '',
           'Each cell vs its baseline: the difference of the benchmark\'s main metric in %% with its 95%% CI '
           '(axis ±%.0f %%: │ is no difference, ━ the CI, ● better or worse, ◆ equivalent, ○ inconclusive); '
           'detectable: the smallest difference the run could see; p: raw → corrected.' % scale, '',
           '| benchmark | cell | vs | metric | Δ %% [95%% CI] | ±%.0f %% | verdict | detectable | test | explained |' % scale,
           '|---|---|---|---|---:|:---:|---|---:|---|---|']
    for r in rows:
        kind = forest_kind(r)
        verdict = verdict_text(r) or 'no comparison'
        if kind in ('worse', 'better'):
            verdict = '**%s**' % verdict
        plot = '—' if r['delta_pct'] is None else '`%s`' % forest_bar(r, scale)
        out.append('| %s | %s | %s | %s | %s %s | %s | %s | %s | %s | %s |' % (
            _md(r['benchmark']), _md(r['cell']), _md(r['baseline']), _md(r['metric']), fmt_delta(r['delta_pct']),
            fmt_ci_pct(r), plot, verdict, fmt_pct(r.get('mde_pct')), _md(test_text(r)) or '—',
            _md(r.get('explained') or '—')))
    noisy = [r for r in rows if r.get('noise')]
    if noisy:
        out += ['', 'Where the spread of the inconclusive rows comes from, and what settling them would take:', '']
        out += ['- %s · %s: %s; %s.' % (_md(r['benchmark']), _md(r['cell']), _md(r['noise']['text']), settle_text(r))
                for r in noisy]
    return out + ['']


def _md_pivots(pivots):
    out = []
    for p in pivots:
        out += ['## Pivot: %s' % _md(p['title']), '']
        out += _md_table(p['heads'], p['rows'], [i >= p['label_columns'] for i in range(len(p['heads']))])
        out.append('')
    return out


def _md_steps(steps):
    if not steps:
        return []
    out = ['## Runs started together', '',
           'Cells whose runs started in the same step: per step the sum over them, then mean ± CI95 (n steps); '
           'next to it the per-guest mean.', '']
    out += _md_table(['benchmark', 'cells', 'guests', 'metric', 'aggregate per step', 'per guest', 'vs baseline'],
                     [[st['benchmark'], st['cells'], str(st['guests']), st['metric'], st['aggregate'], st['per_guest'],
                       st['vs']] for st in steps], [False, False, True, False, True, True, False])
    return out + ['']


def _md_environment(env, differing):
    """The environment keys that differ between the cells (differing=True, near the top), or the
    rest (at the end: the same in every cell)."""
    rows = [r for r in env['rows'] if r['differs'] == differing]
    if not env['columns'] or not rows:
        return []
    if differing:
        lines = ['## Environment', '', 'Differs between the cells (**bold**; the keys that are the same everywhere '
                 'are listed at the end):', '']
    else:
        lines = ['## Environment, the same in every cell' if len(env['columns']) > 1 else '## Environment', '']
    lines.append('| key | ' + ' | '.join(_md(c) for c in env['columns']) + ' |')
    lines.append('|---|' + '---|' * len(env['columns']))
    for r in rows:
        if r['differs']:
            lines.append('| **%s** ≠ | ' % _md(r['key']) + ' | '.join('**%s**' % _md(v) if v else '' for v in r['values']) + ' |')
        else:
            lines.append('| %s | ' % _md(r['key']) + ' | '.join(_md(v) for v in r['values']) + ' |')
    return lines + ['']


def _md_benchmark(part):
    b, t = part['bench'], part['table']
    versions = ', '.join(b['tool_versions'])
    version = (' (version %s)' % _md(versions)) if versions else ''
    lines = ['## %s' % _md(b['name']), '',
             '%s %s%s — baseline: **%s**' % (_md(b['tool']), _md(b['test']), version, _md(part['baseline'])), '']
    heads = [_md(c) + ((' (%s)' % _md(n)) if n else '') for c, n in zip(t['columns'], t['notes'])]
    lines.append('| metric | ' + ' | '.join(heads) + ' |')
    lines.append('|---|' + '---:|' * len(t['columns']))
    for r in t['rows']:
        # our own numbers and marks (fmt_stat/fmt_vs/fmt_range): no outside text, so no escaping
        cells = ['—' if e is None else e['stat'] + ((' ' + e['vs']) if e['vs'] else '')
                 + ((' [%s]' % e['range']) if e['range'] else '') for e in r['entries']]
        lines.append('| %s (%s)%s | ' % (_md(r['metric']), _md(r['unit']), _arrow(r['better'])) + ' | '.join(cells) + ' |')
    if any(t.get('explained') or ()):   # every number explained (plugin_utils/explain/explain.py)
        lines.append('| explained | ' + ' | '.join(_md(x or '—') for x in t['explained']) + ' |')
    for table in part['tables']:
        lines += ['', '%s (%s):' % (_md(table['title']), _md(table['note'])), '']
        lines += _md_table([h for h, _n in table['columns']], table['rows'], [n for _h, n in table['columns']])
    if part['traps']:
        lines += ['', 'Traps detected:', '']
        lines.extend('- **%s** `%s`: %s' % (_md(cell), f['code'], _md(f['message'])) for cell, f in part['traps'])
    lines += ['', 'Runs: ' + '; '.join('%s: n=%d, %s' % (_md(g['cell']), g['n'], g['gate']) for g in part['gates'])]
    if part['warmups']:
        lines += ['', 'Warm-up runs (stored, not counted): %s' % ', '.join('%s %d' % (_md(c), n) for c, n in part['warmups'])]
    if part['warnings']:
        lines += ['', 'Warnings:', '']
        lines.extend('- %s: %s' % (_md(cell), _md(w)) for cell, w in part['warnings'])
    return lines + ['']


def _md_tail(k):
    lines = []
    if k['trap_help'] or k.get('trap_rates'):
        lines += ['## What the trap flags mean', '']
        lines.extend('- `%s`: %s' % (code, _md(text)) for code, text in k['trap_help'])
        if k.get('trap_rates'):
            lines += ['', 'Runs flagged per trap: ' + '; '.join(_md(t) for t in k['trap_rates'])]
        lines.append('')
    if k['missing'] or k['failed']:
        lines += ['## Failed or missing cells', '']
        for m in k['missing']:
            lines.append('- %s in %s (%s): %s' % (_md(m['benchmark']), _md(m['cell']), _md(m['host'] or '?'), _md(m['reason'])))
        if k['failed']:
            lines += ['', 'Failed runs:', '']
            for item in k['failed']:
                lines.append('- %s %s: %s' % (_md(item.get('host', '?')), _md(item.get('task', '')), _md(item.get('msg', ''))))
        lines.append('')
    if k['invalid']:
        lines += ['## Invalid records', '']
        lines.extend('- %s: %s' % (_md(item.get('host', '?')), _md('; '.join(item['errors']))) for item in k['invalid'])
        lines.append('')
    return lines


# -- terminal -----------------------------------------------------------------------------------

def _fit(text, width):
    """One terminal field: control characters made visible (printable), cut to `width` columns."""
    text = printable(text)
    return text if len(text) <= width else text[:max(0, width - 1)] + '…'


def render_terminal(analysis, width=100, meta=None, plan=None):
    """The end-of-play summary: per benchmark and cell the primary metric as mean ± CI95 (n), the
    delta to the baseline, its verdict and the detectable effect; the verdict counts; then traps,
    failed or missing cells. Every line fits `width` columns."""
    rows = [('benchmark', 'cell', 'n', 'metric', 'mean ± CI95', 'vs base', 'verdict', 'mde')]
    for b in analysis['benchmarks']:
        m = b['primary']
        for c in ordered_cells(b):
            s = c['metrics'].get(m)
            if s is None:
                continue
            if s['n']:
                half = ci_half(s)
                stat = fmt_num(s['mean']) + ((' ± %s' % fmt_num(half)) if half is not None else '')
            else:
                stat = '+++++' if s.get('too_fast') else 'n/a'
            vs, verdict, mde = ('baseline', '', '') if c['baseline'] else terminal_verdict(s)
            rows.append(tuple(printable(v) for v in (b['name'], c['cell'], str(s['n']), '%s (%s)' % (m, s['unit']),
                                                     stat, vs, verdict, mde)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    # Shrink the free-text columns (benchmark, cell, metric) first so the table fits the terminal.
    while sum(widths) + 2 * (len(widths) - 1) > width and max(widths[0], widths[1], widths[3]) > 8:
        i = max((0, 1, 3), key=lambda j: widths[j])
        widths[i] -= 1
    out = []
    for k, r in enumerate(rows):
        cells = []
        for i, v in enumerate(r):
            v = _fit(v, widths[i])
            cells.append(v.rjust(widths[i]) if i in (2, 4, 5, 7) and k else v.ljust(widths[i]))
        out.append('  '.join(cells).rstrip())
        if k == 0:
            out.append('-' * min(width, len(out[0])))
    out.append(_fit('CI95: 95% confidence interval of the mean; verdict after the correction across the report '
                    '(equivalent: within the margin; inconclusive: repetitions per side that would settle it); '
                    'mde: the smallest difference the run could detect', width))
    out.extend(_fit('verdicts of %s' % line[0].lower() + line[1:], width) for line in correction_lines(analysis))
    flags = {}
    for b in analysis['benchmarks']:
        for cell, f in traps(b):
            flags.setdefault(f['code'], []).append('%s@%s' % (b['name'], cell))
    out.extend(_fit(line, width) for line in terminal_views(analysis))
    for code, where in flags.items():
        out.append(_fit('trap %s (%d): %s' % (code, len(where), ', '.join(where)), width))
    rates = [t for t in analysis.get('traps') or [] if t['flagged']]
    if rates:
        out.append(_fit('runs flagged: ' + ', '.join('%s %d/%d' % (t['code'], t['flagged'], t['runs']) for t in rates),
                        width))
    for m in missing_cells(analysis, plan, (meta or {}).get('failed')):
        out.append(_fit('missing %s in %s: %s' % (m['benchmark'], m['cell'], m['reason']), width))
    return '\n'.join(out)


def terminal_verdict(s):
    """(delta, verdict, detectable) of a compared summary for the terminal's columns:
    ('-4.2%', 'inconclusive (needs 8)', '11.6%')."""
    if s.get('delta_pct') is None:
        return '', verdict_text(s), ''
    verdict = s.get('verdict') or ''
    if verdict == 'inconclusive':
        need = s.get('repetitions_needed')
        verdict = 'inconclusive (n<2)' if s.get('p') is None else ('inconclusive (needs %d)' % need if need else verdict)
    return fmt_delta(s['delta_pct']), verdict, ('' if s.get('mde_pct') is None else fmt_pct(s['mde_pct']))


def terminal_views(analysis):
    """The summary's lines for the pivots (a line per row) and the aggregates of runs started together."""
    out = []
    for p in analysis.get('pivots') or []:
        view = pivot_view(p)
        for r in view['rows']:
            head = ', '.join(r[:view['label_columns']])
            out.append('pivot %s%s: %s' % (view['title'], (' [%s]' % head) if head else '', '; '.join(
                '%s %s' % (h, v) for h, v in zip(view['heads'][view['label_columns']:], r[view['label_columns']:]))))
    for st in analysis.get('steps') or []:
        line = step_line(st)
        out.append('together %s %s (%d guests): %s per step, per guest %s, %s' % (
            line['benchmark'], line['cells'], line['guests'], line['aggregate'], line['per_guest'], line['vs']))
    return out


def progress_line(index, total, what, elapsed_s, eta_s=None, width=100):
    """`[cell 3/24] fio randread on guest-2 (loop, bridged) — elapsed 2m10s, ETA 6m`."""
    eta = 'ETA ?' if eta_s is None else 'ETA %s' % fmt_duration(eta_s)
    tail = ' — elapsed %s, %s' % (fmt_duration(elapsed_s), eta)
    head = '[cell %d/%d] ' % (index, max(total, index))
    return head + _fit(what, max(10, width - len(head) - len(tail))) + tail
