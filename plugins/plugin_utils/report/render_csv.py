# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""results.csv: the records as a tidy table, one row per record x metric. A pure function.

Columns: run_id, host, tool, tool_version, test, benchmark, cell, counted (False for warm-up runs),
started, duration_s, metric, value (empty when too fast to measure), unit, better, too_fast, flags (the run's
trap codes, space-separated: plugin_utils/explain/traps.py explains them), tool_value and tool_unit (the
value in the unit the tool prints where that differs from the record's, as its benchmark unit says
(``tool_value``: bonnie++'s throughputs in K/sec); empty otherwise), the evidence of the run's observation (plugin_utils/explain/explain.py CSV_COLUMNS:
limited_by and its figure, the first device below the file system and its utilisation, the bytes
that reached it per byte written and came from it per byte read, the CPU, the tool's CPU, steal,
the evidence codes; empty for a record without an observation), then one label_<name> column per
other label found in the records (sorted).

Cells cannot be turned against the spreadsheet that opens the file (CSV/formula injection): a text
cell whose first character (or first after blanks) is =, +, -, @, a tab or a carriage return gets a
leading single quote, so '=HYPERLINK(...)' stays text. Only text is neutralised: numbers (ints,
floats, and text that is just a number such as '-5' or '+1.5e3') stay numbers, since a spreadsheet
reads those as values, never as formulas. Control characters in text are shown as visible escapes
(render.printable), so `cat results.csv` cannot drive the terminal either.

pivot.csv (render_pivot_csv, written when the analysis has pivots): per pivot a block, the factor's
values as columns as in the reports: a heading row (benchmark, metric, unit, the row labels, then
`<factor>=<value> mean`, `... ci95_low`, `... ci95_high`, `... n` per value), a row per row of the
pivot, and an empty line between blocks.

summary.csv (render_summary_csv): the analysis as a tidy table, one row per benchmark x cell x
metric: the statistics over the repetitions and the comparison with the cell's baseline and its
conclusion (SUMMARY_COLUMNS: verdict, detectable effect, raw and corrected p, the test that decided,
repetitions_needed; empty for a baseline), the family it was corrected in, the parameters that
differ between two compared runs (differs: `bs 1M vs 4k`, baseline first), and then one row per
aggregate of runs started together (cell: the cells joined by +)."""

from __future__ import annotations

import csv
import io
import math
import re

from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.explain import CSV_COLUMNS, record_figures
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.grouping import cell_of, counted
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import printable
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import tool_value_of
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.traps import record_codes

COLUMNS = ('run_id', 'host', 'tool', 'tool_version', 'test', 'benchmark', 'cell', 'counted', 'started',
           'duration_s', 'metric', 'value', 'unit', 'better', 'too_fast', 'flags', 'tool_value', 'tool_unit') + CSV_COLUMNS
_OWN_LABELS = ('benchmark', 'cell')


_FORMULA_START = ('=', '+', '-', '@', '\t', '\r')
_PLAIN_NUMBER = re.compile(r'[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?')


def _text(v):
    """One cell: numbers as numbers, text made inert (see the module docstring)."""
    if v is None:
        return ''
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ''
    if isinstance(v, int):
        return str(v)
    s = str(v)
    if (s[:1] in _FORMULA_START or s.lstrip()[:1] in _FORMULA_START) and not _PLAIN_NUMBER.fullmatch(s):
        return "'" + printable(s)
    return printable(s)


def inert(v):
    """One CSV cell made inert (the rule of the module docstring), for the other CSV files."""
    return _text(v)


def render_csv(records, run_id=None):
    """The CSV text (RFC 4180, \\r\\n line ends, minimal quoting, as the csv module writes them).

    The per-record columns are formatted once per record with the csv module; the per-metric ones
    (name, value, unit, better, too_fast) never need quoting: the record schema restricts metric names
    to [a-z0-9_], units and `better` to fixed words, and values are numbers."""
    label_keys = set()
    for r in records:
        label_keys.update(r.get('labels') or ())
    label_keys = sorted(k for k in label_keys if k not in _OWN_LABELS)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(list(COLUMNS) + ['label_%s' % printable(k) for k in label_keys])
    part = io.StringIO()
    pw = csv.writer(part, lineterminator='')

    def fields(values):
        part.seek(0)
        part.truncate()
        pw.writerow(values)
        return part.getvalue()

    run = _text(run_id)
    out = []
    # the columns up to `counted` take few distinct values in a run: format each combination once
    heads = {}
    tails = {}
    native_of = {}     # record tool -> its unit's tool_value (or None)
    for r in records:
        labels = r.get('labels') or {}
        key = (r.get('host'), r['tool'], r.get('tool_version'), r['test'], labels.get('benchmark'), cell_of(r), counted(r))
        static = heads.get(key)
        if static is None:
            static = heads[key] = fields([run, _text(key[0]), _text(key[1]), _text(key[2]), _text(key[3]), _text(key[4]),
                                          _text(key[5]), 'true' if key[6] else 'false'])
        # started is an ISO time and duration_s a number (record schema): nothing to quote
        head = '%s,%s,%s' % (static, _text(r.get('started')), _text(r.get('duration_s')))
        codes = ' '.join(str(c) for c in record_codes(r))
        flags = ',' + (fields([_text(codes)]) if codes else '')
        tail = ',' + fields([_text(v) for v in record_figures(r)])
        if label_keys:
            lkey = tuple(labels.get(k) for k in label_keys)
            if lkey not in tails:
                tails[lkey] = ',' + fields([_text(v) for v in lkey])
            tail += tails[lkey]
        if r['tool'] not in native_of:
            native_of[r['tool']] = tool_value_of(r['tool'])
        out.extend(_metric_rows(r['metrics'], head, flags, tail, native_of[r['tool']]))
    buf.write(''.join(out))
    return buf.getvalue()


def _metric_rows(metrics, head, flags, tail, native_fn):
    """One record's rows, a row per metric (native_fn: its unit's tool_value, or None)."""
    rows = []
    for name, m in metrics.items():
        v = m.get('value')
        if v is None:
            value = ''
        elif isinstance(v, float):
            value = repr(v) if v - v == 0 else ''  # v - v is nan for inf and nan
        else:
            value = _text(v)
        too_fast = 'true' if m.get('too_fast') else 'false'
        native = native_fn(name, v) if native_fn and isinstance(v, (int, float)) and v - v == 0 else None
        own = ',,' if native is None else ',%s,%s' % (repr(round(native[0], 3)), _text(native[1]))
        rows.append('%s,%s,%s,%s,%s,%s%s%s%s\r\n' % (head, name, value, m.get('unit', ''), m.get('better', ''),
                                                     too_fast, flags, own, tail))
    return rows


def render_pivot_csv(analysis):
    """pivot.csv: the analysis' pivots (see the module docstring), or None when there are none."""
    pivots = analysis.get('pivots') or []
    if not pivots:
        return None
    buf = io.StringIO()
    w = csv.writer(buf)
    for i, p in enumerate(pivots):
        if i:
            w.writerow([])
        keys = list(p['rows'][0]) if p['rows'] else []
        heads = ['benchmark', 'metric', 'unit'] + keys
        for v in p['columns']:
            col = '%s=%s' % (p['factor'], v)
            heads += [col + ' mean', col + ' ci95_low', col + ' ci95_high', col + ' n']
        w.writerow([_text(h) for h in heads])
        for row, cells in zip(p['rows'], p['cells']):
            out = [p['benchmark'], p['metric'], p.get('unit')] + [row.get(k) for k in keys]
            for e in cells:
                ci = (e or {}).get('ci95') or [None, None]
                out += [None, None, None, None] if e is None else [e['mean'], ci[0], ci[1], e['n']]
            w.writerow([_text(v) for v in out])
    return buf.getvalue()


SUMMARY_COLUMNS = ('benchmark', 'cell', 'baseline_cell', 'metric', 'unit', 'better', 'n', 'mean', 'ci95_low', 'ci95_high',
                   'stdev', 'min', 'max', 'delta_pct', 'ci_pct_low', 'ci_pct_high', 'verdict', 'mde_pct',
                   'equivalence_margin_pct', 'repetitions_needed', 'test', 'p', 'p_adjusted', 'p_equivalence',
                   'p_equivalence_adjusted', 'family', 'reason', 'differs')


def _summary_row(bench, cell, baseline, metric, s, family):
    ci, ci_pct = s.get('ci95') or [None, None], s.get('ci_pct') or [None, None]
    row = [bench, cell, baseline, metric, s.get('unit'), s.get('better'), s.get('n'), s.get('mean'), ci[0], ci[1],
           s.get('stdev'), s.get('min'), s.get('max'), s.get('delta_pct'), ci_pct[0], ci_pct[1]]
    row += [s.get(k) for k in SUMMARY_COLUMNS[16:25]]
    return [_text(v) for v in row + [family if s.get('verdict') else None, s.get('reason'), s.get('differs')]]


def render_summary_csv(analysis, charted):
    """summary.csv (see the module docstring); charted(bench) -> the benchmark's charted metric (the
    headline family's), or None when the analysis has no benchmark."""
    if not analysis.get('benchmarks'):
        return None
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(SUMMARY_COLUMNS)
    for b in analysis['benchmarks']:
        head = charted(b)
        for c in b['cells']:
            for m in b['metrics']:
                s = c['metrics'].get(m)
                if s is not None:
                    w.writerow(_summary_row(b['name'], c['cell'], c.get('baseline_cell'), m, s,
                                            'headline' if m == head else 'detail'))
    for st in analysis.get('steps') or []:
        s = dict(st.get('aggregate') or {}, **dict((k, v) for k, v in st.items() if k != 'aggregate'))
        w.writerow(_summary_row(st['benchmark'], ' + '.join(st['cells']), st.get('baseline'), st['metric'], s, 'headline'))
    return buf.getvalue()
