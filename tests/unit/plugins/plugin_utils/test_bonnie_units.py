"""bonnie++ results in the unit bonnie++ prints (K/sec, KiB/s) beside the record's MB/s, in the
bonnie table of report.md and report.html and in results.csv (issue 17 section 1). The records
are parsed from reference 003's bonnie++ 1.03 tables (tests/unit/fixtures/bonnie/README.md), so
the K/sec shown must be the figures that report printed."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ansible_collections.benchlab.bench.plugins.module_utils.tools.bonnie import THROUGHPUT_TESTS, bonnie_records, tool_units
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import render_csv
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.tooltables import tool_tables

FIXTURE = Path(__file__).resolve().parents[2] / 'fixtures' / 'bonnie' / 'reference-003-bonnie-1.03-drbd.txt'
# reference 003's first two tables (node1 without DRBD, node1 with DRBD 0.7.10), as printed:
# Output char, Output block, Rewrite, Input char, Input block in K/sec
PRINTED = {'r1': (28657, 44144, 22656, 29378, 51293), 'r2': (20698, 23434, 17667, 29679, 45123)}


def _records():
    recs = bonnie_records(FIXTURE.read_text(), tool_version='1.03')
    for i, rec in enumerate(recs, 1):
        rec['labels'] = dict(rec.get('labels') or {}, cell='r%d' % i, benchmark='bonnie')
        rec['host'] = 'node'
    return recs


def test_tool_units_inverts_the_parser():
    assert tool_units('seq_output_block', 44144 * 1024 / 1e6) == 44144.0
    assert tool_units('random_seeks', 100.6) is None and tool_units('seq_create', 500) is None
    assert tool_units('seq_input_block', None) is None


def test_bonnie_table_shows_the_printed_k_sec_and_mb_s():
    recs = _records()
    analysis = analyze(recs, {'baseline': 'r1'})
    (bench,) = analysis['benchmarks']
    (table,) = tool_tables(bench)
    assert [h for h, _n in table['columns']] == ['cell', 'test', 'K/sec', 'MB/s', 'n']
    for cell, printed in PRINTED.items():
        rows = dict((r[1], r) for r in table['rows'] if r[0].split(' ')[0] == cell)
        assert [rows[t][2] for t in THROUGHPUT_TESTS] == ['%d' % k for k in printed]
        assert [rows[t][3] for t in THROUGHPUT_TESTS] == ['%.2f' % (k * 1024 / 1e6) for k in printed]
    assert table['rows'][0][0] == 'r1 (baseline)'
    md = render_markdown(analysis, {'run_id': 'x', 'matrix': 'ref-003'}, None, {'baseline': 'r1'})
    assert 'bonnie++, in the units it prints (K/sec = KiB/s' in md
    assert '| r2 | seq_output_block | 23434 | 24.00 | 1 |' in md
    html = render_html(analysis, {'run_id': 'x', 'matrix': 'ref-003'}, None, {'baseline': 'r1'})
    assert '<th>K/sec</th>' in html and '>23434<' in html


def test_results_csv_carries_the_tool_unit():
    recs = _records()
    rows = list(csv.DictReader(io.StringIO(render_csv(recs, 'x'))))
    by = dict(((r['cell'], r['metric']), r) for r in rows)
    for cell, printed in PRINTED.items():
        for test, k in zip(THROUGHPUT_TESTS, printed):
            row = by[(cell, test)]
            assert row['unit'] == 'MB/s' and row['tool_unit'] == 'K/sec'
            assert float(row['tool_value']) == k
    seeks = by[('r1', 'random_seeks')]
    assert seeks['tool_value'] == '' and seeks['tool_unit'] == '' and seeks['unit'] == 'seeks/s'


def test_a_test_too_fast_in_every_run_stays_a_row():
    """A captured 2.00a run printed +++++ for Input block and Random seeks
    (tests/unit/fixtures/bonnie/2.00a-b-fast-s256M-n0.txt): the row stays, as bonnie++ printed it."""
    text = (FIXTURE.parent / '2.00a-b-fast-s256M-n0.txt').read_text()
    recs = bonnie_records(text, tool_version='2.00a', labels={'cell': 'c', 'benchmark': 'bonnie'})
    fast = [t for t in THROUGHPUT_TESTS if (recs[0]['metrics'].get(t) or {}).get('too_fast')]
    assert fast, recs[0]['metrics']
    (table,) = tool_tables(analyze(recs)['benchmarks'][0])
    rows = dict((r[1], r) for r in table['rows'])
    for t in fast:
        assert rows[t][2:] == ['+++++', '+++++', '0']
