"""Reports cannot be turned against their readers (issue 14 section 6), through the real playbook:
a tiny dd matrix on localhost whose cell labels are a spreadsheet formula, a Markdown link and
image, a newline, ANSI escapes (colour, window title, bell) and an HTML tag. The run's results.csv,
report.md (read by a CommonMark parser), report.html (read by an HTML parser) and everything the
play printed (progress line, summary) are inert, while results.json keeps every value exactly."""

import csv
import io
import json
import re
from html.parser import HTMLParser

import pytest
import yaml

from conftest import BIN, load_run, run, run_dirs

LABELS = {
    'ansi': '\x1b[31mred\x1b[0m\x1b]0;pwned\x07',
    'newline': 'a\nb',
    'formula': '=HYPERLINK("http://x","y")',
    'link': '[x](http://evil)',
    'image': '![i](http://evil/p.png)',
    'html': '<img src=x onerror=alert(1)>',
}
CONTROL = re.compile('[\x00-\x09\x0b-\x1f\x7f-\x9f]')


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(name for name, _value in attrs)


@pytest.fixture(scope='module')
def hostile_run(tmp_path_factory):
    from conftest import ansible_env
    tmp = tmp_path_factory.mktemp('inert')
    env = ansible_env(tmp)
    matrix = {'bench_matrix': {
        'name': 'it-inert', 'repetitions': 1,
        'cells': [{'name': 'host-rootfs', 'host': 'localhost', 'path': str(tmp), 'labels': LABELS}],
        'benchmarks': [{'name': 'dd-write', 'tool': 'dd', 'params': {'test': 'write', 'size': '1M'}}]}}
    (tmp / 'matrix.yml').write_text(yaml.safe_dump(matrix))
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % (tmp / 'matrix.yml'), '-e', 'bench_install_tools=false'], env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    (run_dir,) = run_dirs(tmp / 'runs')
    return proc, run_dir


def test_terminal_output_carries_no_control_characters(hostile_run):
    proc, _run_dir = hostile_run
    out = proc.stdout + proc.stderr
    assert not CONTROL.search(out.replace('\r\n', '\n')), [m.group() for m in CONTROL.finditer(out)][:5]
    # the progress line shows the label, made visible
    assert re.search(r'\[cell 1/1\] dd-write #1 on host-rootfs \(\\x1b\[31mred\\x1b\[0m', out), out[-3000:]
    assert 'benchlab summary' in out


def test_results_json_keeps_the_exact_values(hostile_run):
    _proc, run_dir = hostile_run
    results, jsonl = load_run(run_dir)
    for rec in results['records'] + jsonl:
        for key, value in LABELS.items():
            assert rec['labels'][key] == value


def test_results_csv_is_inert(hostile_run):
    _proc, run_dir = hostile_run
    with open(str(run_dir / 'results.csv'), newline='') as f:
        text = f.read()
    assert not CONTROL.search(text.replace('\r\n', '\n'))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows
    for row in rows:
        assert row['label_formula'] == "'=HYPERLINK(\"http://x\",\"y\")"
        assert row['label_newline'] == 'a\\nb' and row['label_ansi'].startswith('\\x1b[31m')
        # (an empty cell is inert: '' is in every string, so test the first character only when there is one)
        assert not [v for v in row.values() if v and v[0] in '=+@\t\r'], row


def test_report_md_is_inert(hostile_run):
    markdown_it = pytest.importorskip('markdown_it', reason='markdown-it-py (tests/requirements.txt) is not installed')
    _proc, run_dir = hostile_run
    md = (run_dir / 'report.md').read_text()
    assert not CONTROL.search(md)
    tokens = markdown_it.MarkdownIt('commonmark').enable('table').parse(md)
    kinds = set(t.type for t in tokens) | set(c.type for t in tokens for c in t.children or ())
    assert not kinds & {'link_open', 'image', 'html_inline', 'html_block'}, kinds
    assert '=HYPERLINK' in md and '\\[x\\](http://evil)' in md


def test_report_html_is_inert(hostile_run):
    _proc, run_dir = hostile_run
    html = (run_dir / 'report.html').read_text()
    assert not CONTROL.search(html.replace('\n', ''))
    p = _Tags()
    p.feed(html)
    assert 'img' not in p.tags and 'a' not in p.tags and 'script' not in p.tags
    assert not set(p.attrs) & {'href', 'src', 'onerror'}
    assert '&lt;img src=x onerror=alert(1)&gt;' in html
    assert json.dumps(LABELS['formula'])[1:-1].replace('\\"', '&quot;') in html
