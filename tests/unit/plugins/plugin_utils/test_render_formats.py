"""The report contents and every format (report.html, results.csv, results.json and its schema, the
progress line) over records captured from a real run (fixtures/report/, see its README)."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import (
    environment_table, fmt_duration, missing_cells, progress_line, render_markdown, render_terminal, report_contents)
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import COLUMNS, render_csv
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import bar_count, render_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import (
    finite, results_json, results_problems, write_reports)
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.rundir import RunDir

REPORT = Path(__file__).resolve().parents[2] / 'fixtures' / 'report'
META = dict(run_id='20261202T141207Z-be3cfb', started='2026-12-02T14:12:07Z', finished='2026-12-02T14:13:10Z',
            user='root', inventory='inventories/local', playbook='playbooks/bench.yml', matrix='it-small',
            collection_version='0.1.0', status='complete', invalid=[], failed=[])


@pytest.fixture
def records():
    return [json.loads(line) for line in (REPORT / 'local-small-results.jsonl').read_text().splitlines()]


@pytest.fixture
def environment():
    return json.loads((REPORT / 'local-small-environment.json').read_text())


@pytest.fixture
def plan():
    return json.loads((REPORT / 'local-small-plan.json').read_text())


@pytest.fixture
def doc(records, environment, plan):
    return dict(META, records=records, environment=environment, plan=plan, analysis=analyze(records, plan, environment))


def test_fixture_records_are_valid(records):
    assert len(records) == 18
    for rec in records:
        assert validate_record({k: v for k, v in rec.items() if k != 'host'}) == []


def test_environment_differences(environment, plan):
    env = environment_table(environment, [c['name'] for c in plan['cells']])
    assert env['columns'] == ['host-rootfs', 'host-tmpfs']
    rows = {r['key']: r for r in env['rows']}
    differ = sorted(k for k, r in rows.items() if r['differs'])
    fst = rows['target.fstype']['values']
    assert fst == [e['target']['fstype'] for e in sorted(environment.values(), key=lambda e: e['labels']['cell'])]
    assert fst[1] == 'tmpfs' and fst[0] != 'tmpfs'
    assert 'target.fstype' in differ and 'target.path' in differ
    assert all(k.startswith('target.') for k in differ), differ
    assert not rows['memory.mem_available_bytes']['differs']  # volatile, never highlighted
    assert rows['kernel.release']['values'][0] == environment['localhost/host-rootfs']['kernel']['release']
    assert rows['memory.mem_total_bytes']['values'][0].endswith('GiB')
    assert 'labels.cell' not in rows


def test_environment_flattens_lists_and_new_keys():
    env = {'a/c1': {'host': 'a', 'labels': {'cell': 'c1'}, 'qemu': {'version': '7.2'},
                    'drbd': [{'name': 'r0', 'disk_state': 'UpToDate'}], 'flags': ['x', 'y']},
           'b/c2': {'host': 'b', 'labels': {'cell': 'c2'}, 'qemu': {'version': '8.0'},
                    'drbd': [{'name': 'r0', 'disk_state': 'Inconsistent'}], 'flags': ['x', 'y']}}
    rows = {r['key']: r for r in environment_table(env)['rows']}
    assert rows['qemu.version'] == {'key': 'qemu.version', 'values': ['7.2', '8.0'], 'differs': True}
    assert rows['drbd[r0].disk_state']['differs']
    assert rows['flags'] == {'key': 'flags', 'values': ['x, y', 'x, y'], 'differs': False}
    assert rows['host']['differs']


def test_missing_and_failed_cells(records, plan, environment):
    plan = copy.deepcopy(plan)
    plan['cells'].append(dict(plan['cells'][0], name='guest-2', labels={'platform': 'kvm'}))
    plan['benchmarks'][0]['cells'].append('guest-2')
    plan['benchmarks'][2]['cells'].append('guest-2')
    # the failure's own cell and benchmark fields (the callback sets them), never its task name
    failed = [{'host': 'localhost', 'task': 'any name', 'cell': 'guest-2', 'benchmark': 'dd-write',
               'msg': 'dd: No space left on device'}]
    a = analyze(records, plan, environment)
    miss = missing_cells(a, plan, failed)
    assert [(m['benchmark'], m['cell']) for m in miss] == [('dd-write', 'guest-2'), ('fio-randread', 'guest-2')]
    assert miss[0]['reason'] == 'failed: dd: No space left on device'
    # the cell's other benchmark: the known failure of its cell, not "play interrupted"
    assert miss[1]['reason'] == 'not run: dd-write in guest-2 failed first: dd: No space left on device'
    meta = dict(META, failed=failed)
    md = render_markdown(a, meta, environment, plan)
    assert '## Failed or missing cells' in md
    assert '- dd-write in guest-2 (localhost): failed: dd: No space left on device' in md
    term = render_terminal(a, meta=meta, plan=plan)
    assert 'missing dd-write in guest-2: failed: dd: No space left on device' in term
    html = render_html(a, meta, environment, plan)
    assert 'dd-write in guest-2 (localhost): failed: dd: No space left on device' in html
    assert missing_cells(a, None, failed) == []


def test_failed_cell_shows_only_its_known_reason(records, plan, environment):
    """A cell that failed with a known reason (DRBD's peer gone: the failure of its preparation, cell
    and benchmark from the run it belongs to) is listed with that reason only, in every format; the
    generic 'not run (play interrupted...)' is left for a cell nothing explains."""
    plan = copy.deepcopy(plan)
    plan['cells'].append(dict(plan['cells'][0], name='drbd-c', host='p1', labels={'drbd': 'C'}))
    plan['cells'].append(dict(plan['cells'][0], name='quiet-c', host='p2', labels={'drbd': 'no'}))
    for b in plan['benchmarks']:
        b['cells'].extend(['drbd-c', 'quiet-c'])
    msg = 'r0/0 peer connection is Connecting (the peer is stopped or unreachable)'
    failed = [{'host': 'p1', 'task': 'Wait until DRBD is UpToDate with no resync running', 'cell': 'drbd-c',
               'benchmark': plan['benchmarks'][0]['name'], 'msg': msg}]
    a = analyze(records, plan, environment)  # the records hold none of the two cells
    assert not [c for b in a['benchmarks'] for c in b['cells'] if c['cell'] in ('drbd-c', 'quiet-c')]
    miss = dict(((m['benchmark'], m['cell']), m['reason']) for m in missing_cells(a, plan, failed))
    first = plan['benchmarks'][0]['name']
    assert miss[(first, 'drbd-c')] == 'failed: ' + msg
    for b in plan['benchmarks'][1:]:
        assert miss[(b['name'], 'drbd-c')] == 'not run: %s in drbd-c failed first: %s' % (first, msg)
        assert miss[(b['name'], 'quiet-c')].startswith('no record: not run (play interrupted')
    meta = dict(META, failed=failed)
    md = render_markdown(a, meta, environment, plan)
    html = render_html(a, meta, environment, plan)
    term = render_terminal(a, meta=meta, plan=plan, width=400)
    for text, line_of in ((md, lambda b: '- %s in drbd-c (p1): ' % b), (html, lambda b: '<li>%s in drbd-c (p1): ' % b),
                          (term, lambda b: 'missing %s in drbd-c: ' % b)):
        drbd_lines = [ln for ln in text.splitlines() if 'drbd-c' in ln and 'play interrupted' in ln]
        assert drbd_lines == [], drbd_lines
        for b in plan['benchmarks']:
            assert line_of(b['name']) in text, (b['name'], text[-3000:])
        assert 'peer connection is Connecting' in text
        assert 'quiet-c' in text and 'play interrupted' in text  # the generic reason still shown where it applies
    # a failure of the host outside any run (no cell): named for the host's cells
    host_down = [{'host': 'p2', 'task': 'Gather the environment', 'cell': None, 'benchmark': None, 'msg': 'lsblk: not found'}]
    miss = dict(((m['benchmark'], m['cell']), m['reason']) for m in missing_cells(a, plan, host_down))
    assert miss[(first, 'quiet-c')] == 'not run: p2 failed first (Gather the environment: lsblk: not found)'


def test_contents_header_and_traps(doc):
    k = report_contents(doc['analysis'], META, doc['environment'], doc['plan'])
    header = dict(k['header'])
    assert header['run id'] == META['run_id'] and header['status'] == 'complete' and header['records'] == '18'
    assert header['collection version'] == '0.1.0' and header['matrix'] == 'it-small'
    codes = [c for c, _t in k['trap_help']]
    flagged = {f['code'] for b in doc['analysis']['benchmarks'] for c in b['cells'] for f in c['flags']}
    assert set(codes) == flagged and all(t for _c, t in k['trap_help'])
    dd = [p for p in k['benchmarks'] if p['bench']['tool'] == 'dd']
    # dd's own table comes from the tool-table registry (tooltables.py); fio registers none
    assert len(dd) == 2 and all(p['tables'][0]['data'][0]['slower_pct'] == 0.0 for p in dd)
    assert [p['tables'] for p in k['benchmarks'] if p['bench']['tool'] == 'fio'] == [[]]


class _Tags(HTMLParser):
    VOID = {'meta', 'br', 'img', 'hr', 'input', 'link', 'rect', 'line', 'path'}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.bars, self.charts = [], [], 0, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == 'rect' and 'bar' in (attrs.get('class') or '').split():
            self.bars += 1
        if tag == 'svg':
            self.charts += 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append('unexpected </%s> (open: %s)' % (tag, self.stack[-3:]))
        else:
            self.stack.pop()


def test_render_html(doc):
    a = doc['analysis']
    html = render_html(a, META, doc['environment'], doc['plan'])
    p = _Tags()
    p.feed(html)
    assert p.errors == [] and p.stack == []
    # the overview's forest plot, then one chart per metric of every benchmark that can differ (dd's
    # bytes only repeat its size parameter: by_design, not charted), one bar per cell with a mean
    charted = [(b['name'], m) for b in a['benchmarks'] for m in b['metrics']
               if not any(c['metrics'][m].get('by_design') for c in b['cells'] if m in c['metrics'])]
    assert ('dd-write', 'bytes') not in charted and ('dd-write', 'throughput') in charted
    assert p.charts == 1 + len(charted) == 1 + 2 + 2 + 4
    assert p.bars == bar_count(a) == 2 * (2 + 2 + 4)
    assert html.count('class="err"') == sum(
        1 for b in a['benchmarks'] for c in b['cells'] for s in c['metrics'].values() if s['ci95'] and s['ci95'][1] > s['ci95'][0])
    assert not re.search(r'(?:src|href)=|url\(|@import|https?://|<script', html)
    assert '@media print' in html
    assert html.count('class="differs"') == sum(1 for r in environment_table(doc['environment'])['rows'] if r['differs'])
    assert 'slower than baseline (%)' in html


def test_render_html_escapes_everything(doc, records, plan):
    evil = '<img src=x onerror=alert(1)>&"'
    recs = copy.deepcopy(records)
    for r in recs:
        if r['labels']['cell'] == 'host-tmpfs':
            r['labels']['cell'] = evil
            r['warnings'] = [evil]
    plan = copy.deepcopy(plan)
    plan['cells'][1]['name'] = evil
    a = analyze(recs, plan)
    html = render_html(a, dict(META, matrix=evil, failed=[{'host': evil, 'task': evil, 'msg': evil}]), {}, plan)
    assert '<img' not in html and 'onerror=alert(1)>' not in html
    assert '&lt;img src=x onerror=alert(1)&gt;&amp;&quot;' in html
    md = render_markdown(a, dict(META, matrix=evil), {}, plan)
    assert '<img' not in md


def test_render_html_size_does_not_grow_with_records(doc, records, plan):
    small = len(render_html(doc['analysis'], META, doc['environment'], plan))
    many = [dict(r) for r in records for _copy in range(20)]
    big = len(render_html(analyze(many, plan), META, doc['environment'], plan))
    assert abs(big - small) < 0.05 * small
    assert small < 100 * 1024


def test_render_csv_is_tidy(records):
    text = render_csv(records, 'r1')
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == sum(len(r['metrics']) for r in records)
    assert list(rows[0])[:len(COLUMNS)] == list(COLUMNS)
    assert list(rows[0])[len(COLUMNS):] == ['label_platform', 'label_storage']
    first = records[0]
    mine = [r for r in rows if r['started'] == first['started'] and r['cell'] == first['labels']['cell']
            and r['benchmark'] == first['labels']['benchmark']]
    assert {r['metric']: float(r['value']) for r in mine} == {k: m['value'] for k, m in first['metrics'].items()}
    assert {r['run_id'] for r in rows} == {'r1'} and {r['counted'] for r in rows} == {'true'}


def test_render_csv_too_fast_and_warmup(records):
    rec = copy.deepcopy(records[0])
    rec['metrics']['throughput'] = {'value': None, 'unit': 'MB/s', 'better': 'higher', 'too_fast': True}
    rec['params']['guards']['warmup'] = True
    rec['labels']['odd,label'] = 'a "quoted", value'
    rows = list(csv.DictReader(io.StringIO(render_csv([rec]))))
    tp = [r for r in rows if r['metric'] == 'throughput'][0]
    assert (tp['value'], tp['too_fast'], tp['counted'], tp['run_id']) == ('', 'true', 'false', '')
    assert tp['label_odd,label'] == 'a "quoted", value'


def test_results_json_is_strict_and_valid(doc):
    text = results_json(doc)
    parsed = json.loads(text)
    assert parsed['results_schema'] == 1
    assert results_problems(parsed) == []
    bad = copy.deepcopy(doc)
    bad['analysis']['benchmarks'][0]['cells'][1]['metrics']['throughput']['delta_pct'] = float('inf')
    bad['analysis']['benchmarks'][0]['cells'][1]['metrics']['throughput']['p'] = float('nan')
    text = results_json(bad)
    assert 'Infinity' not in text and 'NaN' not in text
    parsed = json.loads(text)
    assert parsed['analysis']['benchmarks'][0]['cells'][1]['metrics']['throughput']['delta_pct'] is None
    assert results_problems(parsed) == []


def test_results_schema_refuses_broken_documents(doc):
    good = json.loads(results_json(doc))
    broken = copy.deepcopy(good)
    del broken['analysis']
    broken['records'][0]['metrics']['throughput']['unit'] = 'MiB/s'
    broken['records'][1]['extra'] = 1
    broken['analysis'] = {'benchmarks': [{'name': 'x'}]}
    problems = results_problems(broken)
    assert any(p.startswith('records[0].metrics.throughput.unit: ') for p in problems), problems
    assert any(p.startswith('records[1]: ') and 'extra' in p for p in problems), problems
    assert any(p.startswith('analysis.benchmarks[0]') for p in problems), problems
    no_host = copy.deepcopy(good)
    del no_host['records'][0]['host']
    assert results_problems(no_host)


def test_finite():
    assert finite({'a': [1.0, float('nan'), {'b': float('-inf')}], 'c': 'inf', 'd': None}) == {
        'a': [1.0, None, {'b': None}], 'c': 'inf', 'd': None}


def test_write_reports_writes_every_file(doc, tmp_path):
    paths = write_reports(RunDir(str(tmp_path), 'r1'), doc)
    assert sorted(paths) == ['report.html', 'report.md', 'results.csv', 'results.json', 'summary.csv']
    for name, path in paths.items():
        assert Path(path) == tmp_path / 'r1' / name and Path(path).stat().st_size > 0
    assert results_problems(json.loads((tmp_path / 'r1' / 'results.json').read_text())) == []


@pytest.mark.parametrize('seconds,text', [(0, '0s'), (59.4, '59s'), (130, '2m10s'), (3600 + 300, '1h05m'), (None, '0s')])
def test_fmt_duration(seconds, text):
    assert fmt_duration(seconds) == text


def test_progress_line():
    line = progress_line(3, 24, 'fio randread on guest-2 (loop, bridged)', 130, 360)
    assert line == '[cell 3/24] fio randread on guest-2 (loop, bridged) — elapsed 2m10s, ETA 6m00s'
    assert progress_line(1, 24, 'dd', 2, None).endswith('elapsed 2s, ETA ?')
    assert progress_line(30, 24, 'gate run', 0, 0).startswith('[cell 30/30] ')  # gate runs beyond the plan
    long = progress_line(3, 24, 'x' * 300, 130, 360)
    assert len(long) == 100 and '…' in long and long.endswith('ETA 6m00s')
