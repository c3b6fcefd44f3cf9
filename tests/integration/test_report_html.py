"""A real small run writes all five report files (and pivot.csv: the run asks for a pivot through the
callback's option); report.html is opened in headless Chromium, and so is a report of real records
with per-node baselines (baseline_by) and a pivot: the overview's forest plot, the pivot table and
the per-group baselines are checked as Chromium lays them out.

Chromium is driven over the DevTools protocol through a pipe (--remote-debugging-pipe: NUL-separated
JSON on file descriptors 3 and 4), so no Python package beyond the standard library is needed. The
test counts the chart bars Chromium laid out, takes a screenshot (decoded here to check it is not
blank), and asserts no console error, no exception and no request other than the file itself.
CI needs the Debian package `chromium`; without it the browser test is skipped, saying so."""

import base64
import csv
import io
import json
import os
import select
import shutil
import struct
import subprocess
import time
import zlib

import pytest

from conftest import BIN, FILES, REPO, ansible_env, load_run, run, run_dirs

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import dd_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import forest_kind
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html

from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import bar_count
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_problems

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
FILES_WRITTEN = ('results.json', 'results.csv', 'report.md', 'report.html', 'results.jsonl')


@pytest.fixture(scope='module')
def small_run(tmp_path_factory):
    """One real run of matrix-report.yml (2 cells x dd-write, fio-randread x 2 repetitions)."""
    tmp = tmp_path_factory.mktemp('rpt-html')
    env = ansible_env(tmp, BENCHLAB_REPORT_PIVOT='storage')
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % (FILES / 'matrix-report.yml'), '-e', 'bench_install_tools=false'], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (rundir,) = run_dirs(tmp / 'runs')
    return rundir, proc


def test_all_five_files_and_schema(small_run):
    rundir, proc = small_run
    for name in FILES_WRITTEN:
        assert (rundir / name).is_file() and (rundir / name).stat().st_size > 0, name
    results, jsonl = load_run(rundir)
    assert results_problems(results) == []
    assert results['results_schema'] == 1
    # every record carries the schedule step its run started in (one host: one run per step)
    assert sorted(r['step'] for r in results['records']) == list(range(8))
    assert results['analysis']['steps'] == []   # nothing ran together here
    # the callback's pivot option: storage as columns, in results.json and pivot.csv
    (pivot,) = [p for p in results['analysis']['pivots'] if p['benchmark'] == 'dd-write']
    assert pivot['factor'] == 'storage' and pivot['columns'] == ['rootfs', 'tmpfs'] and pivot['rows'] == [{}]
    assert [c['n'] for c in pivot['cells'][0]] == [2, 2]
    pivot_csv = list(csv.reader(io.StringIO((rundir / 'pivot.csv').read_text())))
    assert pivot_csv[0][:4] == ['benchmark', 'metric', 'unit', 'storage=rootfs mean']
    assert len(results['records']) == len(jsonl) == 8
    rows = list(csv.DictReader(io.StringIO((rundir / 'results.csv').read_text())))
    assert len(rows) == sum(len(r['metrics']) for r in results['records'])
    assert {(r['benchmark'], r['cell']) for r in rows} == {
        (b, c) for b in ('dd-write', 'fio-randread') for c in ('host-rootfs', 'host-tmpfs')}
    by_metric = {(r['cell'], r['metric'], r['started'], r['value']) for r in rows}
    for rec in results['records']:
        for name, m in rec['metrics'].items():
            assert (rec['labels']['cell'], name, rec['started'], repr(m['value'])) in by_metric
    md = (rundir / 'report.md').read_text()
    assert '| metric | host-rootfs (baseline) | host-tmpfs |' in md
    assert '## Environment' in md and '**target.fstype** ≠' in md
    assert 'slower than baseline (%)' in md
    # progress: one line per run started, then the summary
    progress = [ln for ln in proc.stdout.splitlines() if ln.startswith('[cell ')]
    assert len(progress) == 8, progress
    assert progress[0].startswith('[cell 1/8] dd-write #1 on host-rootfs (host, rootfs) — elapsed ')
    assert progress[-1].startswith('[cell 8/8] fio-randread #2 on host-tmpfs')
    assert 'ETA ?' in progress[0] and 'ETA ?' not in progress[1]
    assert 'benchlab report (HTML): %s' % (rundir / 'report.html') in proc.stdout
    html = (rundir / 'report.html').read_text()
    assert 'http://' not in html.replace('http://www.w3.org/2000/svg', '') and 'https://' not in html
    assert '<script' not in html and '<link' not in html


# -- Chromium over the DevTools pipe -----------------------------------------------------------

class Browser(object):
    def __init__(self, user_data_dir):
        cmd_r, self._cmd_w = os.pipe()
        self._resp_r, resp_w = os.pipe()

        def fds():
            os.dup2(cmd_r, 3)
            os.dup2(resp_w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, '--headless=new', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe',
             '--no-first-run', '--no-default-browser-check', '--disable-extensions', '--disable-sync',
             '--disable-background-networking', '--disable-component-update', '--user-data-dir=%s' % user_data_dir,
             'about:blank'],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, pass_fds=(3, 4),
            preexec_fn=fds)
        os.close(cmd_r)
        os.close(resp_w)
        self._buf = b''
        self._id = 0
        self.events = []

    def _read_message(self, deadline):
        while b'\0' not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._resp_r], [], [], left)[0]:
                raise TimeoutError('no answer from chromium')
            chunk = os.read(self._resp_r, 1 << 20)
            if not chunk:
                raise EOFError('chromium closed the pipe: %s' % self.proc.stderr.read()[-2000:])
            self._buf += chunk
        msg, _sep, self._buf = self._buf.partition(b'\0')
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=30):
        self._id += 1
        msg = {'id': self._id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b'\0')
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get('id') == self._id:
                assert 'error' not in reply, (method, reply['error'])
                return reply['result']
            self.events.append(reply)

    def wait_event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        while not any(e.get('method') == method for e in self.events):
            self.events.append(self._read_message(deadline))

    def close(self):
        try:
            self.send('Browser.close', timeout=5)
        except (AssertionError, OSError, TimeoutError, EOFError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        os.close(self._resp_r)
        self.proc.stderr.close()


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def png_colours(data, limit=64):
    """The distinct pixel colours of an 8-bit RGB/RGBA PNG (stops counting at `limit`)."""
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    pos, idat, width, height, bpp = 8, b'', 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            width, height, depth, ctype = struct.unpack('>IIBB', body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xff
        elif f == 2:
            line = bytearray((x + p) & 0xff for x, p in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 0xff
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                c = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + _paeth(a, prev[i], c)) & 0xff
        if y % 4 == 0:
            colours.update(bytes(line[i:i + bpp]) for i in range(0, stride, bpp * 4))
            if len(colours) >= limit:
                return colours
        prev = line
    return colours


NO_CHROMIUM = ('headless Chromium is not installed (Debian package `chromium`): '
               'apt-get install chromium to run the report.html browser test')


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_report_html_renders_in_chromium(small_run, tmp_path):
    rundir, _proc = small_run
    results, _jsonl = load_run(rundir)
    expected = bar_count(results['analysis'])
    # 2 benchmarks x their metrics x 2 cells, every cell measured; dd's bytes (its size parameter,
    # by_design) is not charted
    assert expected == 2 * (2 + 4)
    browser = Browser(tmp_path / 'rpt-chromium-profile')
    try:
        target = browser.send('Target.createTarget', {'url': 'about:blank'})['targetId']
        session = browser.send('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        for domain in ('Page', 'Runtime', 'Log', 'Network'):
            browser.send(domain + '.enable', session=session)
        browser.send('Emulation.setDeviceMetricsOverride',
                     {'width': 1100, 'height': 900, 'deviceScaleFactor': 1, 'mobile': False}, session=session)
        url = (rundir / 'report.html').as_uri()
        browser.send('Page.navigate', {'url': url}, session=session)
        browser.wait_event('Page.loadEventFired')
        probe = browser.send('Runtime.evaluate', {'returnByValue': True, 'expression': '''JSON.stringify({
            bars: document.querySelectorAll('svg rect.bar').length,
            drawn: Array.from(document.querySelectorAll('svg rect.bar')).filter(
                r => r.getBoundingClientRect().width > 0 && r.getBoundingClientRect().height > 0).length,
            charts: document.querySelectorAll('figure.chart svg').length,
            differs: document.querySelectorAll('tr.differs').length,
            title: document.title})'''}, session=session)
        dom = json.loads(probe['result']['value'])
        shot = base64.b64decode(browser.send('Page.captureScreenshot', {'format': 'png'}, session=session)['data'])
        (tmp_path / 'report.png').write_bytes(shot)
        full = base64.b64decode(browser.send('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True},
                                             session=session)['data'])
        (tmp_path / 'report-full.png').write_bytes(full)
    finally:
        browser.close()
    assert dom['bars'] == dom['drawn'] == expected, dom
    assert dom['charts'] == 2 + 4
    assert dom['differs'] >= 1  # target.fstype etc. differ between rootfs and tmpfs
    assert dom['title'] == 'benchlab report: it-report'
    colours = png_colours(shot)
    assert len(colours) > 8, colours  # text, bars, table lines: not a blank page
    assert len(full) > len(shot)
    errors = [e for e in browser.events if e.get('method') == 'Runtime.exceptionThrown'
              or (e.get('method') == 'Runtime.consoleAPICalled' and e['params'].get('type') in ('error', 'assert'))
              or (e.get('method') == 'Log.entryAdded' and e['params']['entry'].get('level') == 'error')]
    assert errors == []
    requests = [e['params']['request']['url'] for e in browser.events if e.get('method') == 'Network.requestWillBeSent']
    assert requests == [url]  # nothing fetched but the file itself


# -- the views of issue 17 §3 on a page Chromium lays out -----------------------------------------

UNIT_FIXTURES = REPO / 'tests' / 'unit' / 'fixtures'
NODE_B_DD = {'rootfs': ['coreutils-9.1-write-fdatasync.txt', 'coreutils-9.1-read-iflag-direct.txt',
                        'coreutils-9.1-read-after-drop-caches.txt'],
             'tmpfs': ['coreutils-9.1-tmpfs-GBps.txt', 'coreutils-9.1-kBps.txt', 'coreutils-9.1-kBps-slow-pipe.txt']}


def _two_nodes():
    """Real records: node a is the captured run of tests/unit/fixtures/report (dd-write, dd-read,
    fio-randread on rootfs and tmpfs), node b dd-write from the coreutils dd outputs of
    tests/unit/fixtures/dd; only the cell labels are set here."""
    records = []
    for line in (UNIT_FIXTURES / 'report' / 'local-small-results.jsonl').read_text().splitlines():
        rec = json.loads(line)
        storage = rec['labels']['storage']
        rec['labels'] = dict(rec['labels'], node='a', cell='a-' + storage)
        records.append(rec)
    for storage, names in NODE_B_DD.items():
        for name in names:
            rec = dd_record((UNIT_FIXTURES / 'dd' / name).read_text(), labels={
                'node': 'b', 'storage': storage, 'platform': 'host', 'cell': 'b-' + storage, 'benchmark': 'dd-write'})
            records.append(dict(rec, host='localhost'))
    plan = {'baseline': 'a-rootfs', 'cells': [{'name': n} for n in ('a-rootfs', 'a-tmpfs', 'b-rootfs', 'b-tmpfs')],
            'pivot': 'storage', 'baseline_by': 'node'}
    return records, plan


def _load(browser, path):
    target = browser.send('Target.createTarget', {'url': 'about:blank'})['targetId']
    session = browser.send('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
    for domain in ('Page', 'Runtime', 'Network'):
        browser.send(domain + '.enable', session=session)
    browser.send('Emulation.setDeviceMetricsOverride',
                 {'width': 1200, 'height': 900, 'deviceScaleFactor': 1, 'mobile': False}, session=session)
    browser.events.clear()
    browser.send('Page.navigate', {'url': path.as_uri()}, session=session)
    browser.wait_event('Page.loadEventFired')
    return session


VIEWS_PROBE = """JSON.stringify((() => {
  // checkVisibility: false inside a closed <details> (its content is skipped, content-visibility)
  const visible = e => !!e && e.checkVisibility() && e.getBoundingClientRect().width > 0
                       && e.getBoundingClientRect().height > 0;
  const plot = document.querySelector('#overview svg#overview-plot');
  const sections = Array.from(document.querySelectorAll('body > section')).map(s => s.id || s.className);
  const rows = Array.from(document.querySelectorAll('#overview g.forest-row'));
  const fill = k => { const c = document.querySelector('#overview g.forest-row.' + k + ' circle');
                      return c ? getComputedStyle(c).fill : null; };
  const pivot = document.querySelector('#pivots table.pivot');
  const details = document.querySelector('details#environment-same');
  return {
    plotVisible: visible(plot), rows: rows.map(r => r.getAttribute('class')),
    dotsDrawn: rows.filter(r => visible(r.querySelector('circle'))).length,
    ciDrawn: rows.filter(r => { const l = r.querySelector('line.ci');      // horizontal: no height
                                return !!l && l.checkVisibility() && l.getBoundingClientRect().width > 0; }).length,
    fills: {inconclusive: fill('inconclusive'), better: fill('better'), worse: fill('worse')},
    sections: sections,
    pivotVisible: visible(pivot),
    pivotHeads: pivot ? Array.from(pivot.querySelectorAll('th')).map(t => t.textContent) : [],
    pivotCells: pivot ? Array.from(pivot.querySelectorAll('tr')).slice(1).map(
      tr => Array.from(tr.querySelectorAll('td')).map(td => td.textContent)) : [],
    heads: Array.from(document.querySelectorAll('table.side-by-side th')).filter(visible).map(t => t.textContent),
    baselineLines: Array.from(document.querySelectorAll('section.bench > p')).filter(visible).map(p => p.textContent),
    detailsOpen: details ? details.open : null,
    detailsTableVisible: details ? visible(details.querySelector('table')) : null,
    differsVisible: Array.from(document.querySelectorAll('tr.differs')).filter(visible).length,
  };
})())"""


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_overview_pivot_and_group_baselines_in_chromium(small_run, tmp_path):
    records, plan = _two_nodes()
    analysis = analyze(records, plan)
    page = tmp_path / 'views.html'
    page.write_text(render_html(analysis, {'run_id': 'views', 'matrix': 'views'}, None, plan))
    rundir, _proc = small_run
    browser = Browser(tmp_path / 'views-chromium-profile')
    try:
        session = _load(browser, page)
        dom = json.loads(browser.send('Runtime.evaluate', {'returnByValue': True, 'expression': VIEWS_PROBE},
                                      session=session)['result']['value'])
        shot = base64.b64decode(browser.send('Page.captureScreenshot', {'format': 'png'}, session=session)['data'])
        session = _load(browser, rundir / 'report.html')
        real = json.loads(browser.send('Runtime.evaluate', {'returnByValue': True, 'expression': VIEWS_PROBE},
                                       session=session)['result']['value'])
    finally:
        browser.close()
    # the overview opens the report: a forest plot row per (benchmark, cell) vs its own baseline
    assert dom['sections'][0] == 'overview', dom['sections']
    kinds = [forest_kind(r) for r in analysis['overview']]
    assert dom['plotVisible'] and dom['rows'] == ['forest-row %s' % k for k in kinds]
    assert dom['dotsDrawn'] == len(kinds) and dom['ciDrawn'] == sum(1 for r in analysis['overview'] if r['ci_pct'])
    # inconclusive and significant deltas look different (the captured run has both: dd-write
    # inconclusive, dd-read better)
    assert 'inconclusive' in kinds and 'better' in kinds
    assert dom['fills']['inconclusive'] != dom['fills']['better']
    assert None not in (dom['fills']['inconclusive'], dom['fills']['better'])
    # the pivot: storage as columns, the node as rows, each cell mean ± CI95 (n)
    dd = next(p for p in analysis['pivots'] if p['benchmark'] == 'dd-write')
    assert dom['pivotVisible'] and dom['pivotHeads'][:3] == ['node', 'storage=rootfs', 'storage=tmpfs']
    assert [r[0] for r in dom['pivotCells'][:2]] == ['a', 'b'] and dd['rows'] == [{'node': 'a'}, {'node': 'b'}]
    assert all('(3)' in c for r in dom['pivotCells'][:2] for c in r[1:])
    # per-node baselines: node b's tmpfs is compared with node b's rootfs, and the page says so
    assert 'b-tmpfs (vs b-rootfs)' in dom['heads'] and 'b-rootfs (baseline)' in dom['heads']
    assert any('per node: a-rootfs (for a-rootfs, a-tmpfs); b-rootfs (for b-rootfs, b-tmpfs)' in t
               for t in dom['baselineLines'])
    assert len(png_colours(shot)) > 8
    # the real run: overview first, the environment's differences shown, the rest folded away
    assert real['sections'][0] == 'overview' and real['plotVisible'] and real['dotsDrawn'] == 2
    assert real['pivotVisible'] and real['pivotHeads'] == ['storage=rootfs', 'storage=tmpfs']
    assert real['differsVisible'] >= 1 and real['detailsOpen'] is False and real['detailsTableVisible'] is False


TABLES_PROBE = """JSON.stringify((() => {
  const visible = e => !!e && e.checkVisibility() && e.getBoundingClientRect().width > 0
                       && e.getBoundingClientRect().height > 0;
  const tables = Array.from(document.querySelectorAll('table.tool-table')).filter(visible);
  const rows = t => Array.from(t.querySelectorAll('tr')).map(tr => Array.from(tr.children).map(c => c.textContent));
  const header = Array.from(document.querySelectorAll('table.header tr')).filter(visible)
                      .map(tr => [tr.querySelector('th').textContent, tr.querySelector('td').textContent]);
  const missing = document.querySelector('#missing');
  return {tables: tables.map(rows), header: header, missingVisible: visible(missing),
          missing: missing ? Array.from(missing.querySelectorAll('li')).map(li => li.textContent) : []};
})())"""


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_bonnie_units_failed_cell_and_import_header_in_chromium(tmp_path):
    """As Chromium lays the page out: the bonnie++ table in K/sec (reference 003's printed figures)
    and MB/s, a failed cell listed with its known reason only, and an imported run's header line."""
    from ansible_collections.benchlab.bench.plugins.module_utils.tools.bonnie import bonnie_records
    from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import import_line
    records = bonnie_records((UNIT_FIXTURES / 'bonnie' / 'reference-003-bonnie-1.03-drbd.txt').read_text(),
                             tool_version='1.03')[:2]
    for i, rec in enumerate(records, 1):
        rec['labels'] = {'cell': 'node1-%d' % i, 'benchmark': 'bonnie'}
        rec['host'] = 'node1'
    plan = {'baseline': 'node1-1', 'cells': [{'name': 'node1-1', 'host': 'node1'}, {'name': 'node1-2', 'host': 'node1'},
                                             {'name': 'drbd-c', 'host': 'p1'}],
            'benchmarks': [{'name': 'bonnie', 'tool': 'bonnie', 'cells': ['node1-1', 'node1-2', 'drbd-c']},
                           {'name': 'dd-write', 'tool': 'dd', 'cells': ['drbd-c']}],
            'imported': {'manifest': '/srv/hand-runs/manifest.yml', 'entries': 2, 'records': 2}}
    failed = [{'host': 'p1', 'task': 'Wait until DRBD is UpToDate with no resync running', 'cell': 'drbd-c',
               'benchmark': 'bonnie', 'msg': 'r0/0 peer connection is Connecting (the peer is stopped or unreachable)'}]
    page = tmp_path / 'bonnie.html'
    page.write_text(render_html(analyze(records, plan), {'run_id': 'b', 'matrix': 'b', 'failed': failed}, None, plan))
    browser = Browser(tmp_path / 'bonnie-chromium-profile')
    try:
        session = _load(browser, page)
        dom = json.loads(browser.send('Runtime.evaluate', {'returnByValue': True, 'expression': TABLES_PROBE},
                                      session=session)['result']['value'])
    finally:
        browser.close()
    (table,) = dom['tables']
    assert table[0] == ['cell', 'test', 'K/sec', 'MB/s', 'n']
    assert table[1] == ['node1-1 (baseline)', 'seq_output_char', '28657', '29.34', '1']
    assert ['node1-2', 'seq_input_block', '45123', '46.21', '1'] in table
    assert dom['header'][0] == ['imported', import_line(plan['imported'])]
    assert dom['missingVisible']
    drbd = [li for li in dom['missing'] if ' in drbd-c ' in li]
    assert drbd == ['bonnie in drbd-c (p1): failed: ' + failed[0]['msg'],
                    'dd-write in drbd-c (p1): not run: bonnie in drbd-c failed first: ' + failed[0]['msg']], dom['missing']


# -- latency as a distribution: each cell's CDF over its baseline's --------------------------------

CDF_PROBE = """JSON.stringify((() => {
  const visible = e => !!e && e.checkVisibility() && e.getBoundingClientRect().width > 0
                       && e.getBoundingClientRect().height > 0;
  const figures = Array.from(document.querySelectorAll('figure.cdf-chart'));
  return figures.map(f => ({
    name: f.getAttribute('data-distribution'), visible: visible(f.querySelector('svg')),
    caption: f.querySelector('figcaption').textContent,
    curves: Array.from(f.querySelectorAll('path.cdf')).map(p => ({
      cls: p.getAttribute('class'), box: [p.getBoundingClientRect().width, p.getBoundingClientRect().height],
      stroke: getComputedStyle(p).stroke, dash: getComputedStyle(p).strokeDasharray})),
    ticks: Array.from(f.querySelectorAll('text.tick')).map(t => t.textContent)}));
})())"""


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_latency_cdf_over_its_baseline_in_chromium(small_run, tmp_path):
    """The real run's fio-randread (fio --output-format=json+): tmpfs's completion-latency CDF drawn
    over the root filesystem's, on a log latency axis; the percentiles in results.json and
    distributions.csv are the merged histograms'."""
    rundir, _proc = small_run
    results, _jsonl = load_run(rundir)
    (fio,) = [b for b in results['analysis']['benchmarks'] if b['name'] == 'fio-randread']
    cells = dict((c['cell'], c) for c in fio['cells'])
    for c in cells.values():
        d = c['distributions']['read_clat']
        assert d['kind'] == 'histogram' and d['repetitions'] == 2 and d['samples'] > 100
        p = d['percentiles']
        assert p['p50']['merged'] <= p['p90']['merged'] <= p['p99']['merged'] <= p['p99.9']['merged']
        assert p['p99']['n'] == 2 and p['p99']['ci95'] is not None
        assert d['cdf'][-1][1] == 1.0 and all(a[0] < b[0] for a, b in zip(d['cdf'], d['cdf'][1:]))
    rows = list(csv.DictReader(io.StringIO((rundir / 'distributions.csv').read_text())))
    p999 = [r for r in rows if r['statistic'] == 'p99.9' and r['distribution'] == 'read_clat']
    assert {r['cell'] for r in p999} == {'host-rootfs', 'host-tmpfs'}
    for r in p999:
        assert float(r['value']) == pytest.approx(cells[r['cell']]['distributions']['read_clat']['percentiles']['p99.9']['merged'])
    md = (rundir / 'report.md').read_text()
    assert 'Completion latency (ms)' in md and '| cell | direction | I/Os | p50 | p90 | p99 | p99.9 |' in md
    browser = Browser(tmp_path / 'cdf-chromium-profile')
    try:
        session = _load(browser, rundir / 'report.html')
        figures = json.loads(browser.send('Runtime.evaluate', {'returnByValue': True, 'expression': CDF_PROBE},
                                          session=session)['result']['value'])
        shot = base64.b64decode(browser.send('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True},
                                             session=session)['data'])
    finally:
        browser.close()
    (fig,) = figures        # one non-baseline cell, one direction
    assert fig['name'] == 'read_clat' and fig['visible']
    assert fig['caption'].startswith('read latency CDF: host-tmpfs over host-rootfs')
    assert [c['cls'] for c in fig['curves']] == ['cdf baseline', 'cdf cell']
    assert all(c['box'][0] > 20 and c['box'][1] > 20 for c in fig['curves'])      # both curves drawn, not flat
    assert fig['curves'][0]['stroke'] != fig['curves'][1]['stroke'] and fig['curves'][0]['dash'] != 'none'
    # the latency axis is logarithmic: a tick per decade
    decades = [t for t in fig['ticks'] if t.endswith(' ms')]
    assert len(decades) >= 2 and all(float(b[:-3]) == pytest.approx(10 * float(a[:-3])) for a, b in zip(decades, decades[1:]))
    assert len(png_colours(shot)) > 8
    errors = [e for e in browser.events if e.get('method') == 'Runtime.exceptionThrown']
    assert errors == []


# -- every number explained: the observed parts on a page Chromium lays out ----------------------

OBSERVED_PROBE = """JSON.stringify((() => {
  const drawn = e => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().height > 0;
  return {
    stacks: document.querySelectorAll('svg.stack').length,
    stackBoxes: Array.from(document.querySelectorAll('svg.stack rect.layer')).filter(drawn).length,
    series: Array.from(document.querySelectorAll('svg.series')).filter(drawn).length,
    lines: Array.from(document.querySelectorAll('svg.series polyline')).filter(
      p => p.getBoundingClientRect().width > 0 || p.getBoundingClientRect().height > 0).length,
    explainedRows: Array.from(document.querySelectorAll('tr.explained')).filter(drawn).length,
    explainedCells: Array.from(document.querySelectorAll('td.explained')).map(td => td.textContent),
    overview: Array.from(document.querySelectorAll('#overview-explained li')).map(li => li.textContent)};
})())"""


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_observed_stack_and_series_render_in_chromium(small_run, tmp_path):
    """The same real run: every record observed; per benchmark and cell the layer stack and the
    charts of the median repetition (from observed/<id>.json.gz), the explained lines in the
    overview and the side-by-side tables, laid out by Chromium without an error."""
    rundir, _proc = small_run
    results, _jsonl = load_run(rundir)
    cells = [c for b in results['analysis']['benchmarks'] for c in b['cells']]
    assert len(cells) == 4 and all(c['explained']['observed'] == c['n'] == 2 for c in cells)
    stored = sorted(p.name for p in (rundir / 'observed').iterdir())
    assert stored == sorted('%s.json.gz' % r['observed']['series'] for r in results['records'])
    rows = list(csv.DictReader(io.StringIO((rundir / 'results.csv').read_text())))
    assert all(r['limited_by'] for r in rows) and all(r['cpu_busy_pct'] for r in rows)
    browser = Browser(tmp_path / 'obs-chromium-profile')
    try:
        session = _load(browser, rundir / 'report.html')
        dom = json.loads(browser.send('Runtime.evaluate', {'returnByValue': True, 'expression': OBSERVED_PROBE},
                                      session=session)['result']['value'])
    finally:
        browser.close()
    # path, file system and disk under /var/tmp; path and file system on the tmpfs
    assert dom['stacks'] == 4 and dom['stackBoxes'] == 2 * 3 + 2 * 2, dom
    # per cell a CPU chart, and a device chart where the path has a block device (rootfs; not tmpfs)
    assert dom['series'] == 4 + 2 and dom['lines'] >= 4 + 2, dom
    assert dom['explainedRows'] == 2 and len(dom['explainedCells']) == 4
    assert all(text.startswith(('limited by', 'nothing saturated')) for text in dom['explainedCells']), dom
    assert len(dom['overview']) == 2 and all(' · host-tmpfs: ' in t for t in dom['overview']), dom
    errors = [e for e in browser.events if e.get('method') == 'Runtime.exceptionThrown'
              or (e.get('method') == 'Runtime.consoleAPICalled' and e['params'].get('type') in ('error', 'assert'))]
    assert errors == []
