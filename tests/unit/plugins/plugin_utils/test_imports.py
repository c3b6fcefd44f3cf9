# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/plugin_utils/run/imports.py: hand-run outputs through the tools' own parsers (captured
fixtures and the field reports' raw outputs shipped in playbooks/files/imports), the manifest's
validation errors, and the reference reports' printed figures reproduced."""

import shutil
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.module_utils.tools.bonnie import bonnie_records
from ansible_collections.benchlab.bench.plugins.module_utils.tools.dbench import dbench_record
from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import dd_record
from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import fio_records
from ansible_collections.benchlab.bench.plugins.module_utils.tools.iperf import iperf_records
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.module_utils.tools.sysbench import sysbench_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.imports import ImportProblem, import_manifest
from ansible_collections.benchlab.bench.plugins.plugin_utils.benchmarks.dd import dd_table

REPO = Path(__file__).resolve().parents[4]
FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'
EXAMPLES = REPO / 'playbooks' / 'files' / 'imports'


def write_manifest(tmp_path, manifest, files=()):
    """The manifest in tmp_path, with the named fixtures copied next to it (basename)."""
    for name in files:
        shutil.copy(str(FIXTURES / name), str(tmp_path / Path(name).name))
    path = tmp_path / 'manifest.yml'
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return str(path)


def problems_of(tmp_path, manifest, files=()):
    with pytest.raises(ImportProblem) as e:
        import_manifest(write_manifest(tmp_path, manifest, files))
    return e.value.problems


def analysed(records, hosts, plan):
    return analyze([dict(r, host=h) for r, h in zip(records, hosts)], plan)


# ---------------------------------------------------------------- the field reports' figures

# Reference 000's table: test, cell, duration incl. sync (s), MB/sec, slower than Test 1 (in %).
REFERENCE_000 = [
    (1, 'host w/o DRBD', 4720.096, 42.37, 0.000),
    (2, 'VPS w/o DRBD', 5015.390, 39.88, 5.888),
    (3, 'host with DRBD', 5187.163, 38.56, 9.004),
    (4, 'VPS with DRBD', 5481.256, 36.49, 13.887),
]


def test_reference_000_reproduces_the_posts_table():
    records, hosts, plan = import_manifest(str(EXAMPLES / 'reference-000' / 'manifest.yml'))
    assert [validate_record(r) for r in records] == [[]] * 4
    assert hosts == ['werner-node'] * 4
    assert plan['baseline'] == 'host w/o DRBD' and plan['name'] == 'reference-000-dd-drbd-vps'
    rows = dd_table(analysed(records, hosts, plan)['benchmarks'][0])['data']
    assert [(r['test'], r['cell']) for r in rows] == [(t, c) for t, c, _d, _m, _s in REFERENCE_000]
    for row, (_t, _c, duration, mb_s, slower) in zip(rows, REFERENCE_000):
        assert round(row['duration'], 3) == duration
        assert round(row['mb_s'], 2) == mb_s
        assert round(row['slower_pct'], 3) == slower
    rec = records[0]
    assert rec['params']['imported'] is True and rec['params']['source'] == 'file nohup-test1.out'
    assert rec['params']['sync_after'] is True and rec['params']['data'] == 'zero'
    assert rec['metrics']['bytes']['value'] == 200000 * 1000000


# Reference 003: per table, the Sequential Output/Input K/sec, the seeks and the file rates it printed.
REFERENCE_003 = {
    'node1 without DRBD': (28657, 44144, 22656, 29378, 51293, 100.6, 510, 5329, 516, 2502),
    'node1 DRBD 0.7.10-4': (20698, 23434, 17667, 29679, 45123, 93.1, 324, 856, 331, 722),
    'node1 DRBD 0.7.19-1': (23315, 25195, 17857, 32066, 45423, 97.7, 324, 387, 329, 297),
    'node2 without DRBD': (28951, 34923, 18772, 30286, 42595, 113.0, 552, 5850, 551, 1952),
    'node2 DRBD 0.7.10-4': (18555, 20250, 12203, 30021, 30243, 98.1, 306, 1260, 307, 851),
    'node2 DRBD 0.7.19-1': (21861, 20758, 12278, 30462, 30524, 101.4, 312, 346, 317, 287),
}
KSEC = ('seq_output_char', 'seq_output_block', 'seq_rewrite', 'seq_input_char', 'seq_input_block')
RATES = ('random_seeks', 'seq_create', 'seq_delete', 'random_create', 'random_delete')


def test_reference_003_reproduces_the_posts_tables():
    records, hosts, plan = import_manifest(str(EXAMPLES / 'reference-003' / 'manifest.yml'))
    assert [r['labels']['cell'] for r in records] == list(REFERENCE_003)
    assert hosts == ['node1'] * 3 + ['node2'] * 3
    assert plan['pivot'] == 'drbd' and plan['baseline_by'] == 'node'
    for rec in records:
        assert validate_record(rec) == []
        assert rec['tool'] == 'bonnie++' and rec['tool_version'] == '1.03' and rec['repetition'] == 1
        printed = REFERENCE_003[rec['labels']['cell']]
        m = rec['metrics']
        # bonnie++'s K/sec is KiB/s; the record holds MB/s (10^6 bytes/s)
        assert [round(m[k]['value'] * 1e6 / 1024) for k in KSEC] == list(printed[:5])
        assert [m[k]['value'] for k in RATES] == list(printed[5:])
        assert m['seq_read']['value'] is None and m['seq_read']['too_fast'] is True  # +++++
    # the post's question 4.4: deletes with DRBD far slower than without (node1: 5329 -> 856 files/s)
    bench = analysed(records, hosts, plan)['benchmarks'][0]
    node1 = dict((c['cell'], c) for c in bench['cells'])['node1 DRBD 0.7.10-4']
    assert round(node1['metrics']['seq_delete']['delta_pct'], 1) == round((856 / 5329.0 - 1) * 100, 1)


def test_examples_ship_the_raw_outputs_not_pointers():
    for path in EXAMPLES.rglob('*'):
        if path.is_file():
            assert '../shared' not in path.read_text() and 'reference/' not in path.read_text()


# ---------------------------------------------------------------- every tool, its own parser

def _text(name):
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize('entry, fixture, expected', [
    (dict(tool='dd', test='write'), 'dd/coreutils-9.1-write-fdatasync.txt',
     lambda t: [dd_record(t, test='write')]),
    (dict(tool='dd', test='read'), 'dd/coreutils-9.1-read-after-drop-caches.txt',
     lambda t: [dd_record(t, test='read')]),
    (dict(tool='dd', test='write', bs='4k'), 'dd/busybox-1.35-write-fsync.txt',
     lambda t: [dd_record(t, test='write', bs='4k')]),
    (dict(tool='bonnie++'), 'bonnie/2.00a-s512M-n1.txt', bonnie_records),
    (dict(tool='bonnie++'), 'bonnie/public-1.96-perfkit-sample.csv', bonnie_records),
    (dict(tool='dbench'), 'dbench/dbench-4.0-2clients.txt', lambda t: [dbench_record(t)]),
    (dict(tool='sysbench'), 'sysbench/sysbench-1.0.20-rndrw.txt', lambda t: [sysbench_record(t)]),
    (dict(tool='fio'), 'fio/fio-3.33-jobfile-two-jobs.json', fio_records),
    (dict(tool='iperf'), 'iperf/iperf-2.1.8-tcp-w256k.txt', iperf_records),
    (dict(tool='iperf'), 'iperf/iperf-2.1.8-tcp-csv.csv', iperf_records),
    (dict(tool='iperf', reverse=True), 'iperf/iperf-2.1.8-tcp-reverse-csv.csv',
     lambda t: iperf_records(t, reverse=True)),
    (dict(tool='iperf3'), 'iperf/iperf3-3.12-tcp.json', iperf_records),
])
def test_each_tool_goes_through_its_own_parser(tmp_path, entry, fixture, expected):
    entry = dict(entry, cell='c1', labels={'platform': 'host'}, file=Path(fixture).name)
    records, hosts, _plan = import_manifest(write_manifest(tmp_path, dict(name='t', entries=[entry]), [fixture]))
    direct = expected(_text(fixture))
    assert len(records) == len(direct) >= 1
    for rec, ref in zip(records, direct):
        assert validate_record(rec) == []
        assert (rec['tool'], rec['test']) == (ref['tool'], ref['test'])
        assert dict((k, v['value']) for k, v in rec['metrics'].items()) == \
            dict((k, v['value']) for k, v in ref['metrics'].items())
        assert rec['labels']['platform'] == 'host' and rec['labels']['cell'] == 'c1'
        assert rec['params']['imported'] is True
    assert hosts == ['imported'] * len(records)


def test_old_coreutils_wording_inline(tmp_path):
    # the summary line of coreutils before 8.24 (no "MiB" part), as test_dd reads it
    text = '512+0 records in\n512+0 records out\n268435456 bytes (268 MB) copied, 0.766629 s, 350 MB/s\n'
    records, _h, _p = import_manifest(write_manifest(tmp_path, dict(name='t', entries=[
        dict(cell='old', tool='dd', text=text)])))
    assert records[0]['metrics']['throughput']['value'] == pytest.approx(268435456 / 0.766629 / 1e6)
    assert records[0]['params']['source'] == 'inline text'


def test_time_blocks_are_repetitions(tmp_path):
    fixture = 'time/bash-5.2-three-blocks-with-output.txt'
    entry = dict(cell='c', tool='time', test='bzip2-9-compress', bytes=1000000, file=Path(fixture).name)
    records, _h, plan = import_manifest(write_manifest(tmp_path, dict(name='t', entries=[entry]), [fixture]))
    assert [r['repetition'] for r in records] == [1, 2, 3]
    assert all(r['tool'] == 'compress' and r['test'] == 'bzip2-9-compress' for r in records)
    assert all(validate_record(r) == [] for r in records)
    r = records[0]['metrics']
    assert r['throughput']['value'] == pytest.approx(1.0 / r['elapsed']['value'])
    assert plan['benchmarks'][0]['tool'] == 'compress'


def test_same_cell_tool_test_are_repetitions(tmp_path):
    fixtures = ['dd/coreutils-9.1-write-fdatasync.txt', 'dd/coreutils-9.1-kBps.txt']
    entries = [dict(cell='a', tool='dd', file=Path(f).name) for f in fixtures]
    entries.append(dict(cell='b', tool='dd', file=Path(fixtures[0]).name))
    records, _h, plan = import_manifest(write_manifest(tmp_path, dict(name='t', baseline='b', entries=entries),
                                                       fixtures))
    assert [r['repetition'] for r in records] == [1, 2, 1]
    assert plan['baseline'] == 'b'
    cells = dict((c['cell'], c) for c in analysed(records, ['imported'] * 3, plan)['benchmarks'][0]['cells'])
    assert cells['a']['n'] == 2 and cells['b']['n'] == 1 and cells['b']['baseline'] is True


def test_baseline_defaults_to_the_first_cell(tmp_path):
    fixture = 'dd/coreutils-9.1-write-fdatasync.txt'
    entries = [dict(cell='z', tool='dd', file=Path(fixture).name), dict(cell='a', tool='dd', file=Path(fixture).name)]
    _r, _h, plan = import_manifest(write_manifest(tmp_path, dict(name='t', entries=entries), [fixture]))
    assert plan['baseline'] == 'z' and [c['name'] for c in plan['cells']] == ['z', 'a']


# ---------------------------------------------------------------- errors name the entry

def test_unparseable_output_names_entry_file_and_first_line_and_nothing_is_returned(tmp_path):
    (tmp_path / 'notes.txt').write_text('\n  my notes from tuesday\nsecond line\n')
    good = 'dd/coreutils-9.1-write-fdatasync.txt'
    problems = problems_of(tmp_path, dict(name='t', entries=[
        dict(cell='ok', tool='dd', file=Path(good).name),
        dict(cell='bad', tool='bonnie++', file='notes.txt'),
    ]), [good])
    assert len(problems) == 1
    assert problems[0].startswith("entries[1] (cell 'bad', tool bonnie++), file notes.txt, first line "
                                  "'my notes from tuesday': does not parse as bonnie++ output")


def test_every_bad_entry_is_named(tmp_path):
    problems = problems_of(tmp_path, dict(name='t', entries=[
        dict(cell='a', tool='fio', text='not json'),
        dict(cell='b', tool='iperf', file='missing.txt'),
        dict(cell='c', tool='dd', text='dd: error writing /dev/full: No space left on device\n'),
    ]))
    assert [p.split(' ', 1)[0] for p in problems] == ['entries[0]', 'entries[1]', 'entries[2]']
    assert 'file missing.txt: cannot read it' in problems[1]
    assert 'No space left on device' in problems[2]


@pytest.mark.parametrize('manifest, expected', [
    (dict(entries=[dict(cell='a', tool='dd', text='x')]), "(manifest): 'name' is a required property"),
    (dict(name='t', entries=[]), 'entries: [] should be non-empty'),
    (dict(name='t', entries=[dict(cell='a', tool='dd')]),
     'entries[0]: give the output as exactly one of file (relative to the manifest) or text (inline)'),
    (dict(name='t', entries=[dict(cell='a', tool='dd', file='f', text='x')]),
     'entries[0]: give the output as exactly one of file'),
    (dict(name='t', entries=[dict(cell='a', tool='dd', text='x'), dict(cell='b', tool='bonie', text='x')]),
     "entries[1].tool: 'bonie' is not one of"),
    (dict(name='t', entries=[dict(tool='dd', text='x')]), "entries[0]: 'cell' is a required property"),
    (dict(name='t', entries=[dict(cell='a', tool='dd', text='x', colour='red')]),
     "entries[0]: Additional properties are not allowed ('colour' was unexpected)"),
    (dict(name='t', entries=[dict(cell='a', tool='dd', text='x', labels={'cell': 'b'})]), 'entries[0].labels'),
    (dict(name='t', entries=[dict(cell='a', tool='dd', text='x', labels={'net': ['a']})]), 'entries[0].labels.net'),
    (dict(name='t', entries=[dict(cell='a', tool='time', text='real 1.0')]),
     "entries[0]: 'test' is a required property"),
    (dict(name='t', entries=[dict(cell='a', tool='dd', text='x', bs='nope-not-a-number', sync_after='yes')]),
     "entries[0].sync_after: 'yes' is not of type 'boolean'"),
    (dict(name='t', entries=[dict(cell='a', tool='iperf', text='x', bs=4096)]),
     'entries[0].bs: only for tool dd, this entry is iperf'),
    (dict(name='t', entries=[dict(cell='a', tool='dd', text='x', reverse=True)]),
     'entries[0].reverse: only for tool iperf or iperf3, this entry is dd'),
    (dict(name='t', baseline='nope', entries=[dict(cell='a', tool='dd', text='x')]),
     "baseline: 'nope' is not the cell of any entry (cells: 'a')"),
    (dict(name='t', pivot='build', entries=[dict(cell='a', tool='dd', text='x', labels={'net': 'br'})]),
     "pivot: no entry has the label 'build'"),
    (dict(name='t\nx', entries=[dict(cell='a', tool='dd', text='x')]), 'name: '),
])
def test_manifest_errors_name_the_entry_and_field(tmp_path, manifest, expected):
    problems = problems_of(tmp_path, manifest)
    assert any(p.startswith(expected) for p in problems), problems


def test_manifest_not_yaml_or_not_a_mapping(tmp_path):
    path = tmp_path / 'm.yml'
    path.write_text('name: [unclosed\n')
    with pytest.raises(ImportProblem, match='is not YAML'):
        import_manifest(str(path))
    path.write_text('- just\n- a list\n')
    with pytest.raises(ImportProblem, match='must be a mapping with name and entries, got list'):
        import_manifest(str(path))
    with pytest.raises(ImportProblem, match='cannot read'):
        import_manifest(str(tmp_path / 'absent.yml'))


def test_test_given_for_an_output_with_several_tests_is_refused(tmp_path):
    fixture = 'fio/fio-3.33-jobfile-two-jobs.json'
    problems = problems_of(tmp_path, dict(name='t', entries=[
        dict(cell='a', tool='fio', test='mine', file=Path(fixture).name)]), [fixture])
    assert 'test \'mine\' given, but the output holds several tests' in problems[0]


def test_report_header_says_imported_and_from_which_manifest():
    """A run made by playbooks/import.yml says so at the top of report.md and report.html, naming
    its manifest; a run that measured something has no such line."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown
    from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
    path = EXAMPLES / 'reference-000' / 'manifest.yml'
    records, _hosts, plan = import_manifest(str(path))
    analysis = analyze(records, plan)
    meta = {'run_id': 'imp', 'matrix': plan['name'], 'playbook': 'playbooks/import.yml', 'status': 'complete'}
    line = 'yes: hand-run outputs from the manifest %s (%d entries, %d records); nothing was run' % (
        path, plan['imported']['entries'], len(records))
    md = render_markdown(analysis, meta, None, plan)
    header = md.split('\n\n')[1].splitlines()
    assert header[0] == '- **imported**: ' + line and '- **playbook**: playbooks/import.yml' in header
    html = render_html(analysis, meta, None, plan)
    assert '<table class="header">\n<tr><th>imported</th><td>%s</td></tr>' % line in html
    measured = dict(plan)
    del measured['imported']
    assert 'imported' not in render_markdown(analysis, meta, None, measured).split('\n\n')[1]


def test_a_manifest_error_names_an_over_long_value_without_repeating_it():
    """Before: the manifest's schema error quoted the offending value verbatim (a whole file pasted
    into a label, a 20,000-character label)."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.run.imports import schema_problems
    manifest = {'name': 'm', 'entries': [{'cell': 'a', 'tool': 'dd', 'text': '1 bytes copied, 1 s, 1 B/s',
                                          'labels': {'note': 'z' * 20000}}]}
    (problem,) = schema_problems(manifest)
    assert problem == "entries[0].labels.note: '%s... (20002 characters) is too long" % ('z' * 59)
