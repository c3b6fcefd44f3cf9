"""playbooks/import.yml for real: the field reports' raw outputs shipped in playbooks/files/imports
imported through ansible-playbook with the report callback; the five report files, results.json
valid against its schema, the run in the history, compare.yml between two imported runs, and a
manifest with an output that does not parse storing nothing.

Reproduced means derived: what each field report concluded from its outputs is asserted from the
imported records (the transcripts' durations, the bonnie++ tables' figures), and the analysis is
checked against those records, never against the figures that were read in:
- reference 000: the "slower than Test 1 (in %)" column (1 - baseline duration / duration, the
  post's published 0.000 / 5.888 / 9.004 / 13.887) and its two conclusions, writing in a VPS about
  5-6 % slower than on the host, with DRBD about 8-9 % slower than without, at both levels of the
  other factor;
- reference 003: each node against its own run without DRBD (baseline_by: node), and what the post
  saw in its results: per-char reads faster with DRBD on node1, block reads slower with DRBD on both
  nodes, the two DRBD versions about the same for block reads, creates and deletes far lower with
  DRBD and deletes lower still with 0.7.19 than with 0.7.10.
The KVM-versions report (three builds side by side) ships no figures (scenarios/kvm_versions:
written, not imported), so there is no import whose ordering of the builds could be derived."""

import csv
import json

import pytest

from conftest import BIN, REPO, ansible_env, run, run_dirs

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import list_runs
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_problems

EXAMPLES = REPO / 'playbooks' / 'files' / 'imports'
REPORT_FILES = ('results.json', 'results.csv', 'report.md', 'report.html', 'plan.json', 'results.jsonl')


def import_run(tmp_path, manifest, run_id, inventory=None):
    env = ansible_env(tmp_path, BENCHLAB_RUN_ID=run_id)
    # the command of the issue: the playbook by its FQCN
    argv = [BIN / 'ansible-playbook', 'benchlab.bench.import', '-e', 'import_manifest=%s' % manifest]
    if inventory:
        argv += ['-i', inventory]
    return run(argv, env)


@pytest.fixture(scope='module')
def imported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('imp')
    # any inventory: one that holds no localhost at all
    inventory = tmp / 'hosts.ini'
    inventory.write_text('[far]\nfar-away ansible_host=192.0.2.1\n')
    procs = dict((run_id, import_run(tmp, EXAMPLES / name / 'manifest.yml', run_id, str(inventory)))
                 for run_id, name in (('imp-000-a', 'reference-000'), ('imp-003', 'reference-003'),
                                      ('imp-000-b', 'reference-000')))
    return tmp, procs


def test_imports_succeed(imported):
    _tmp, procs = imported
    for run_id, proc in procs.items():
        assert proc.returncode == 0, (run_id, proc.stdout[-3000:], proc.stderr[-3000:])
        assert 'benchlab history: run %s stored in' % run_id in proc.stdout


def test_report_files_and_schema(imported):
    tmp, _procs = imported
    for run_id, n in (('imp-000-a', 4), ('imp-003', 6)):
        rundir = tmp / 'runs' / run_id
        for name in REPORT_FILES:
            assert (rundir / name).is_file() and (rundir / name).stat().st_size > 0, (run_id, name)
        doc = json.loads((rundir / 'results.json').read_text())
        assert results_problems(doc) == []  # plugins/plugin_utils/schemas/results-v1.json
        assert doc['status'] == 'complete' and len(doc['records']) == n
        assert doc['environment'] == {} and doc['invalid'] == [] and doc['failed'] == []
        assert all(r['params']['imported'] is True for r in doc['records'])
        assert len((rundir / 'results.jsonl').read_text().splitlines()) == n
        rows = list(csv.DictReader((rundir / 'results.csv').open()))
        assert rows and all(r['cell'] and r['host'] != 'localhost' for r in rows)
        assert '</html>' in (rundir / 'report.html').read_text()
        # the header says the run was imported, and from which manifest
        manifest = EXAMPLES / ('reference-000' if run_id.startswith('imp-000') else 'reference-003') / 'manifest.yml'
        said = 'imported**: yes: hand-run outputs from the manifest %s (' % manifest
        assert said in (rundir / 'report.md').read_text().split('\n\n')[1]
        assert '<tr><th>imported</th><td>yes: hand-run outputs from the manifest %s (' % manifest in (
            rundir / 'report.html').read_text()


def test_reference_000_table_in_the_report(imported):
    tmp, _procs = imported
    rundir = tmp / 'runs' / 'imp-000-a'
    report = (rundir / 'report.md').read_text()
    # the post's table: duration incl. sync, MB/sec, slower than Test 1 (in %)
    for row in ('| 1 | host w/o DRBD | host, plain | 4720.096 | 42.37 | 0.000 % (baseline) |',
                '| 2 | VPS w/o DRBD | vps, plain | 5015.390 | 39.88 | 5.888 % |',
                '| 3 | host with DRBD | host, drbd | 5187.163 | 38.56 | 9.004 % |',
                '| 4 | VPS with DRBD | vps, drbd | 5481.256 | 36.49 | 13.887 % |'):
        assert row in report
    doc = json.loads((rundir / 'results.json').read_text())
    assert doc['matrix'] == 'reference-000-dd-drbd-vps' and doc['plan']['baseline'] == 'host w/o DRBD'
    assert set(r['host'] for r in doc['records']) == {'werner-node'}
    assert [r['repetition'] for r in doc['records']] == [1, 1, 1, 1]


def records_by_cell(tmp, run_id):
    doc = json.loads((tmp / 'runs' / run_id / 'results.json').read_text())
    by_cell = dict((r['labels']['cell'], r) for r in doc['records'])
    assert len(by_cell) == len(doc['records'])
    return doc, by_cell


def test_reference_000_conclusions_derived_from_the_records(imported):
    tmp, _procs = imported
    doc, recs = records_by_cell(tmp, 'imp-000-a')
    # the durations the transcripts give: dd's real time plus the final sync's
    duration = dict((cell, r['metrics']['elapsed']['value']) for cell, r in recs.items())

    def slower(cell, base):
        return (1 - duration[base] / duration[cell]) * 100

    cells = ['host w/o DRBD', 'VPS w/o DRBD', 'host with DRBD', 'VPS with DRBD']
    # the post's column "slower than Test 1 (in %)", as it published it, from the records
    assert ['%.3f' % slower(c, 'host w/o DRBD') for c in cells] == ['0.000', '5.888', '9.004', '13.887']
    # the analysis says the same, computed from the same records
    (bench,) = doc['analysis']['benchmarks']
    analysed = dict((c['cell'], c['metrics']['throughput']) for c in bench['cells'])
    for cell in cells[1:]:
        assert abs(analysed[cell]['slower_pct'] - slower(cell, 'host w/o DRBD')) < 1e-9, cell
        assert analysed[cell]['delta_pct'] < 0 and analysed[cell]['better'] == 'higher'
    assert sorted(cells, key=duration.get) == cells   # each layer added made the write slower
    # "Writing within a VPS was about 5-6% slower than on the host system": without and with DRBD
    vps = [slower('VPS w/o DRBD', 'host w/o DRBD'), slower('VPS with DRBD', 'host with DRBD')]
    assert [round(x) for x in vps] == [6, 5], vps
    # "Writing with using DRBD was about 8-9% slower than without DRBD": on the host and in the VPS
    drbd = [slower('host with DRBD', 'host w/o DRBD'), slower('VPS with DRBD', 'VPS w/o DRBD')]
    assert [round(x) for x in drbd] == [9, 8], drbd


def test_reference_003_conclusions_derived_from_the_records(imported):
    tmp, _procs = imported
    doc, recs = records_by_cell(tmp, 'imp-003')
    (bench,) = doc['analysis']['benchmarks']
    analysed = dict((c['cell'], c) for c in bench['cells'])

    def value(cell, metric):
        return recs[cell]['metrics'][metric]['value']

    def rel(cell, metric, base=None):
        """The cell against its own node's run without DRBD (or `base`), from the records: %."""
        base = base or '%s without DRBD' % cell.split()[0]
        return (value(cell, metric) / value(base, metric) - 1) * 100

    drbd_cells = ['%s DRBD %s' % (n, v) for n in ('node1', 'node2') for v in ('0.7.10-4', '0.7.19-1')]
    # each node against its own baseline (baseline_by: node): the analysis' figures are the records'
    for cell in drbd_cells:
        assert analysed[cell]['baseline_cell'] == '%s without DRBD' % cell.split()[0]
        for metric in ('seq_output_block', 'seq_input_char', 'seq_input_block', 'seq_create', 'seq_delete',
                       'random_create', 'random_delete'):
            assert abs(analysed[cell]['metrics'][metric]['delta_pct'] - rel(cell, metric)) < 1e-9, (cell, metric)
    # node2 against node1's baseline would say something else (its disk writes blocks slower)
    assert abs(rel('node2 DRBD 0.7.10-4', 'seq_output_block', 'node1 without DRBD')
               - analysed['node2 DRBD 0.7.10-4']['metrics']['seq_output_block']['delta_pct']) > 10
    # the nodes' relative figures: DRBD costs each node 40-47 % of its block writes, with both versions
    losses = dict((cell, rel(cell, 'seq_output_block')) for cell in drbd_cells)
    assert all(-47.5 < x < -40 for x in losses.values()), losses
    # 4.1 "the reading per character with DRBD (both versions) is faster than without": on node1
    assert rel('node1 DRBD 0.7.10-4', 'seq_input_char') > 0 and rel('node1 DRBD 0.7.19-1', 'seq_input_char') > 0
    # 4.2 reads differ with and without DRBD: block reads slower with DRBD, on both nodes
    assert all(rel(cell, 'seq_input_block') < -10 for cell in drbd_cells)
    # 4.3 "the results between DRBD 0.7.10-4 and DRBD 0.7.19-1 seem a bit similar" (block reads)
    for node in ('node1', 'node2'):
        assert abs(rel('%s DRBD 0.7.19-1' % node, 'seq_input_block')
                   - rel('%s DRBD 0.7.10-4' % node, 'seq_input_block')) < 1
    # 4.4 creates and deletes "really decreased" with DRBD, deletes lower still with 0.7.19-1
    for cell in drbd_cells:
        for metric in ('seq_create', 'random_create', 'seq_delete', 'random_delete'):
            assert rel(cell, metric) < -30, (cell, metric, rel(cell, metric))
    for node in ('node1', 'node2'):
        for metric in ('seq_delete', 'random_delete'):
            assert value('%s DRBD 0.7.19-1' % node, metric) < value('%s DRBD 0.7.10-4' % node, metric), (node, metric)


def test_reference_003_hosts_and_plan(imported):
    tmp, _procs = imported
    doc = json.loads((tmp / 'runs' / 'imp-003' / 'results.json').read_text())
    assert [r['host'] for r in doc['records']] == ['node1'] * 3 + ['node2'] * 3
    assert doc['plan']['pivot'] == 'drbd' and doc['plan']['baseline_by'] == 'node'
    bench = doc['analysis']['benchmarks'][0]
    assert bench['tool'] == 'bonnie++' and bench['tool_versions'] == ['1.03']
    cells = dict((c['cell'], c) for c in bench['cells'])
    # 44144 K/sec (KiB/s) printed for node1's block writes without DRBD
    assert round(cells['node1 without DRBD']['metrics']['seq_output_block']['mean'] * 1e6 / 1024) == 44144


def test_history_holds_the_imported_runs(imported):
    tmp, _procs = imported
    runs = dict((r['run_id'], r) for r in list_runs(str(tmp / 'history.sqlite')))
    assert {'imp-000-a', 'imp-003', 'imp-000-b'} <= set(runs)
    assert runs['imp-000-a']['matrix'] == 'reference-000-dd-drbd-vps'


def test_compare_two_imported_runs(imported):
    tmp, _procs = imported
    env = ansible_env(tmp)
    proc = run([BIN / 'ansible-playbook', 'playbooks/compare.yml', '-e', 'baseline=imp-000-a',
                '-e', 'candidate=imp-000-b'], env)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert 'candidate imp-000-b (complete) vs baseline imp-000-a (complete)' in proc.stdout
    assert 'no regression, 12 not judged' in proc.stdout
    compare_dir = tmp / 'runs' / 'compare-imp-000-b-vs-imp-000-a'
    doc = json.loads((compare_dir / 'results.json').read_text())
    cells = [c['cell'] for b in doc['analysis']['benchmarks'] for c in b['cells']]
    assert 'host w/o DRBD @ baseline' in cells and 'VPS with DRBD @ candidate' in cells
    assert doc['comparison']['regressions'] == [] and doc['comparison']['missing'] == []
    # one transcript per cell: n=1 on each side, nothing the gate can judge, so the gate does not pass
    assert {u['reason'] for u in doc['comparison']['cannot_judge']} == {'too little data: n=1 vs n=1 (needs 2 on each side)'}
    gate = run([BIN / 'ansible-playbook', 'playbooks/compare.yml', '-e', 'baseline=imp-000-a',
                '-e', 'candidate=imp-000-b', '-e', 'fail_on_regression=true'], env)
    assert gate.returncode != 0 and 'benchlab regression gate: 12 could not be judged' in gate.stdout


def test_an_output_that_does_not_parse_stores_nothing(tmp_path):
    (tmp_path / 'raw').mkdir()
    (tmp_path / 'raw' / 'ok.txt').write_text((EXAMPLES / 'reference-000' / 'nohup-test1.out').read_text())
    (tmp_path / 'raw' / 'notes.txt').write_text('Tuesday: iperf gave about 900 Mbit/s\n')
    manifest = tmp_path / 'm.yml'
    manifest.write_text('name: broken\nentries:\n'
                        '  - {cell: a, tool: dd, bs: 1000000, file: raw/ok.txt}\n'
                        '  - {cell: b, tool: iperf, file: raw/notes.txt}\n')
    proc = import_run(tmp_path, manifest, 'imp-broken')
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert ("entries[1] (cell 'b', tool iperf), file raw/notes.txt, first line "
            "'Tuesday: iperf gave about 900 Mbit/s': does not parse as iperf output") in out
    assert 'Traceback' not in out
    assert run_dirs(tmp_path / 'runs') == []
    assert not (tmp_path / 'history.sqlite').exists() or list_runs(str(tmp_path / 'history.sqlite')) == []


def test_manifest_error_names_the_entry_field(tmp_path):
    manifest = tmp_path / 'm.yml'
    manifest.write_text('name: t\nentries:\n  - {cell: a, tool: dd, text: x}\n  - {cell: b, tool: ddd, text: x}\n')
    proc = import_run(tmp_path, manifest, 'imp-invalid')
    assert proc.returncode != 0
    assert "entries[1].tool: 'ddd' is not one of" in proc.stdout + proc.stderr
    assert run_dirs(tmp_path / 'runs') == []
