# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reports cannot be turned against their readers (issue 14 section 6): the hostile corpus
tests/unit/fixtures/hostile/labels.yml through the real renderers (results.csv, report.md read by a
real CommonMark parser, report.html read by an HTML parser, the terminal summary and the progress
line), plus full-match name guards (a trailing newline is refused) and comparison ids of any length."""

import copy
import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import ecma_pattern, validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import MatrixError, expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.regress import MAX_RUN_ID, comparison_id
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import (
    printable, progress_line, render_markdown, render_terminal)
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import render_csv
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_problems
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RUN_ID_RE, RunDir

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'
CASES = yaml.safe_load((FIXTURES / 'hostile' / 'labels.yml').read_text())['cases']
META = dict(run_id='20261202T141207Z-be3cfb', started='2026-12-02T14:12:07Z', finished='2026-12-02T14:13:10Z',
            user='root', inventory='inventories/local', playbook='playbooks/bench.yml', matrix='it-small',
            collection_version='0.1.0', status='complete', invalid=[], failed=[])
# C0 controls but the line feed, DEL, C1 controls, the bidi controls: none may reach a reader
CONTROL = re.compile('[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]')
FORMULA = ('=', '+', '-', '@', '\t', '\r')
NUMBER = re.compile(r'[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?')


def hostile_inputs(value):
    """The captured real run (fixtures/report), with `value` everywhere a user or a tool can put text."""
    report = FIXTURES / 'report'
    records = [json.loads(line) for line in (report / 'local-small-results.jsonl').read_text().splitlines()]
    plan = json.loads((report / 'local-small-plan.json').read_text())
    environment = json.loads((report / 'local-small-environment.json').read_text())
    text = str(value)
    for r in records:
        r['labels']['note'] = value
        if r['labels']['cell'] == 'host-tmpfs':
            r['labels']['cell'] = text
            r['host'] = text
            r['tool_version'] = text
            r['test'] = text
            r['warnings'] = [text]
    plan = copy.deepcopy(plan)
    plan['cells'][1]['name'] = text
    meta = dict(META, matrix=text, failed=[{'host': text, 'task': text, 'msg': text}])
    return records, plan, environment, meta


@pytest.fixture(params=CASES, ids=[c['id'] for c in CASES])
def case(request):
    return request.param


def test_the_corpus():
    ids = [c['id'] for c in CASES]
    assert len(ids) >= 20 and len(set(ids)) == len(ids)


def test_csv_cells_are_never_formulas(case):
    records, _plan, _env, _meta = hostile_inputs(case['value'])
    text = render_csv(records, META['run_id'])
    assert not CONTROL.search(text.replace('\r\n', '\n'))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == sum(len(r['metrics']) for r in records)
    for row in rows:
        for column, cell in row.items():
            lead = cell.lstrip()[:1]
            assert not (cell[:1] in FORMULA or lead in FORMULA) or NUMBER.fullmatch(cell), (column, cell)
    if 'csv' in case:
        assert set(row['label_note'] for row in rows) == {str(case['csv'])}
    elif isinstance(case['value'], str) and case['value'].lstrip()[:1] in FORMULA + ('\t', '\r'):
        assert all(row['label_note'].startswith("'") for row in rows)


def _markdown_parser():
    markdown_it = pytest.importorskip('markdown_it', reason='markdown-it-py (tests/requirements.txt) is not installed')
    return markdown_it.MarkdownIt('commonmark').enable('table')


def _tokens(tokens):
    for t in tokens:
        yield t
        yield from t.children or ()


def test_markdown_is_inert_for_a_commonmark_reader(case):
    records, plan, environment, meta = hostile_inputs(case['value'])
    plain_records, plain_plan, _e, plain_meta = hostile_inputs('plainvalue')
    md = render_markdown(analyze(records, plan, environment), meta, environment, plan)
    plain = render_markdown(analyze(plain_records, plain_plan, environment), plain_meta, environment, plain_plan)
    assert not CONTROL.search(md)
    parser = _markdown_parser()

    def shape(text):
        """What a reader's renderer makes of it: every element but the text inside."""
        return [(t.type, t.tag, t.markup if t.type != 'text' else '') for t in _tokens(parser.parse(text))
                if t.type not in ('text', 'softbreak')]
    found = [t for t in _tokens(parser.parse(md)) if t.type in ('link_open', 'image', 'html_inline', 'html_block')]
    assert found == [], found
    # the hostile value adds no element at all: no link, image, HTML, code span, heading, table
    # cell or line; it only ever changes text
    assert shape(md) == shape(plain)
    # and what the reader sees is the value itself (newlines as spaces, controls as \x.. escapes)
    texts = [''.join(c.content for c in t.children or () if c.type == 'text')
             for t in parser.parse(md) if t.type == 'inline']
    shown = printable(case['value'], newline=' ')
    assert any(shown in t for t in texts), shown


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_inert(case):
    records, plan, environment, meta = hostile_inputs(case['value'])
    plain_records, plain_plan, _e, plain_meta = hostile_inputs('plainvalue')
    html = render_html(analyze(records, plan, environment), meta, environment, plan)
    plain = render_html(analyze(plain_records, plain_plan, environment), plain_meta, environment, plain_plan)
    assert not CONTROL.search(html.replace('\n', ''))
    got, want = _Collect(), _Collect()
    got.feed(html)
    want.feed(plain)
    assert got.tags == want.tags
    assert [a for a in got.attrs if a[0] in ('href', 'src', 'onerror', 'style')] == \
        [a for a in want.attrs if a[0] in ('href', 'src', 'onerror', 'style')]
    assert printable(case['value'], newline=None) in ''.join(got.text)


def test_terminal_summary_and_progress_line_carry_no_control_characters(case):
    records, plan, environment, meta = hostile_inputs(case['value'])
    out = render_terminal(analyze(records, plan, environment), meta=meta, plan=plan)
    assert not CONTROL.search(out)
    assert all(len(line) <= 100 for line in out.splitlines())
    line = progress_line(3, 24, 'fio randread on %s' % case['value'], 130, 360)
    assert not CONTROL.search(line) and '\n' not in line


def test_printable():
    assert printable('a\x1b[31mb') == 'a\\x1b[31mb'
    assert printable('x\ny\tz\r') == 'x\\ny\\tz\\r'
    assert printable('x\ny', newline=' ') == 'x y' and printable('x\ny', newline=None) == 'x\ny'
    assert printable('\x9b\u202e\x7f') == '\\x9b\\u202e\\x7f'
    assert printable('é ü 中 ↑ ±') == 'é ü 中 ↑ ±'
    assert printable(None) == '' and printable(-5) == '-5'


# ---- names: full matches, a trailing newline is refused ----------------------------------------

@pytest.mark.parametrize('pattern,python', [
    ('^[a-z]+$', '^[a-z]+\\Z'),
    ('(^|/)\\.\\.(/|$)', '(^|/)\\.\\.(/|\\Z)'),
    ('^[$]\\$x$', '^[$]\\$x\\Z'),
    ('^[]$]$', '^[]$]\\Z'),
])
def test_ecma_pattern(pattern, python):
    assert ecma_pattern(pattern) == python


def test_run_id_with_a_trailing_newline_is_refused(tmp_path):
    assert RUN_ID_RE.match('nightly-1\n')          # Python's $ alone would let it through ...
    with pytest.raises(ValueError):                 # ... RunDir uses a full match
        RunDir(str(tmp_path), 'nightly-1\n')
    assert list(tmp_path.iterdir()) == []


def _record(**kw):
    rec = {'schema': 1, 'tool': 'dd', 'tool_version': '9.1', 'test': 'write', 'labels': {},
           'started': '2026-12-02T14:12:07Z', 'duration_s': 1.0,
           'metrics': {'throughput': {'value': 1.0, 'unit': 'MB/s', 'better': 'higher'}}}
    rec.update(kw)
    return rec


def test_record_schema_patterns_are_full_matches():
    assert validate_record(_record()) == []
    assert any('started' in e for e in validate_record(_record(started='2026-12-02T14:12:07Z\n')))
    bad = _record(metrics={'throughput\n': {'value': 1.0, 'unit': 'MB/s', 'better': 'higher'}})
    assert validate_record(bad)
    # a label NAME is free text in the record schema: the CSV header shows it inert
    text = render_csv([dict(_record(labels={'note\n\x1b[2J': 'x'}), host='h')], 'r1')
    assert not CONTROL.search(text.replace('\r\n', '\n')) and 'label_note\\n\\x1b[2J' in text


def test_results_schema_patterns_are_full_matches():
    doc = {'schema': 1, 'run_id': 'r1', 'started': '2026-12-02T14:12:07Z\n', 'records': []}
    assert any('started' in p for p in results_problems(doc))


def test_matrix_names_with_a_trailing_newline_are_refused():
    matrix = {'name': 'm', 'cells': [{'name': 'c\n', 'host': 'localhost', 'path': '/var/tmp'}],
              'benchmarks': [{'name': 'b', 'tool': 'dd'}]}
    with pytest.raises(MatrixError) as e:
        expand_plan(matrix, inventory_hosts=['localhost'])
    assert 'bench_matrix.cells[0].name' in str(e.value)


# ---- comparison ids of any length --------------------------------------------------------------

@pytest.mark.parametrize('a,b', [
    ('r1', 'r2'),
    ('a' * 60, 'b' * 60),
    ('a' * 128, 'b' * 128),
    ('compare-%s-vs-%s' % ('x' * 50, 'y' * 50), 'z' * 128),
    ('a' * 127 + '.', 'b-' * 64),
])
def test_comparison_ids_of_any_length_make_a_run_directory(a, b, tmp_path):
    cid = comparison_id(a, b)
    assert len(cid) <= MAX_RUN_ID and RUN_ID_RE.fullmatch(cid) and '..' not in cid
    d = RunDir(str(tmp_path), cid)
    d.write_text('x.txt', 'x')
    assert (tmp_path / cid / 'x.txt').read_text() == 'x'
    if len('compare-%s-vs-%s' % (b, a)) <= MAX_RUN_ID:
        assert cid == 'compare-%s-vs-%s' % (b, a)


def test_long_comparison_ids_stay_distinct():
    a, b, c = 'a' * 128, 'a' * 127 + 'b', 'c' * 128
    assert len({comparison_id(a, c), comparison_id(b, c), comparison_id(c, a)}) == 3


@pytest.mark.parametrize('spec,field', [
    ({'ctid': '101\n'}, 'ctid'),
    ({'ctid': 'web\n', 'tool': 'prlctl'}, 'ctid'),
    ({'ctid': '101', 'ip_address': ['10.0.0.5\n']}, 'ip_address'),
])
def test_openvz_names_are_full_matches(spec, field):
    """A value with a trailing newline would reach vzctl/prlctl argv and the container's config."""
    from ansible_collections.benchlab.bench.plugins.module_utils.guests.openvz import OpenVZError, normalize
    with pytest.raises(OpenVZError) as e:
        normalize(dict(spec, ostemplate='debian-12'))
    assert str(e.value).startswith(field)
