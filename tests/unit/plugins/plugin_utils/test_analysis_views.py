# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 17 §3: pivots, per-group baselines (baseline_by), the aggregate of runs started together and
the overview (forest plot) rows, in the analysis and in every format. Records are real: the run of
tests/unit/fixtures/report (README there says how it was captured), dd outputs of tests/unit/fixtures/dd
and iperf3 JSON of tests/unit/fixtures/iperf, parsed by the modules' own record builders; only their
labels (which cell they belong to) and the step they ran in are set here."""

import csv
import io
import json
import statistics
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import dd_record
from ansible_collections.benchlab.bench.plugins.module_utils.tools.iperf import iperf_records
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.inference import compare
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import summarize
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze, baselines, ordered_cells
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import MatrixError, expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import (
    forest_bar, forest_kind, forest_scale, pivot_view, render_markdown, render_terminal, step_line)
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import render_pivot_csv
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_problems
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.tooltables import tool_table, tool_tables

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'
META = {'run_id': '20261203T170000Z-abcdef', 'matrix': 'views', 'status': 'complete', 'started': '2026-12-03T17:00:00Z',
        'finished': '2026-12-03T17:05:00Z'}


def _jsonl(name):
    return [json.loads(line) for line in (FIXTURES / 'report' / name).read_text().splitlines()]


@pytest.fixture
def small():
    """The real run: cells host-rootfs (baseline) and host-tmpfs; dd-write, dd-read, fio-randread; 3 reps."""
    plan = json.loads((FIXTURES / 'report' / 'local-small-plan.json').read_text())
    env = json.loads((FIXTURES / 'report' / 'local-small-environment.json').read_text())
    return _jsonl('local-small-results.jsonl'), plan, env


# -- two nodes x two storages: dd-write records of the real run for node a, coreutils dd outputs for node b

DD_B = {'rootfs': ['coreutils-9.1-write-fdatasync.txt', 'coreutils-9.1-read-iflag-direct.txt',
                   'coreutils-9.1-read-after-drop-caches.txt'],
        'tmpfs': ['coreutils-9.1-tmpfs-GBps.txt', 'coreutils-9.1-kBps.txt', 'coreutils-9.1-kBps-slow-pipe.txt']}
CELLS = ['a-rootfs', 'a-tmpfs', 'b-rootfs', 'b-tmpfs']


def _cell_labels(name):
    node, storage = name.split('-')
    return {'node': node, 'storage': storage, 'cell': name, 'benchmark': 'dd-write'}


def _node_labels(name):
    return dict((k, v) for k, v in _cell_labels(name).items() if k in ('node', 'storage'))


def _plan(**keys):
    matrix = dict(name='views', baseline='a-rootfs', repetitions=3,
                  cells=[dict(name=n, host='localhost', path='/var/tmp', labels=_node_labels(n)) for n in CELLS],
                  benchmarks=[dict(name='dd-write', tool='dd', params=dict(test='write', size='32M'))], **keys)
    return expand_plan(matrix, ['localhost'])


@pytest.fixture
def nodes(read_fixture):
    out = []
    for rec in _jsonl('local-small-results.jsonl'):
        if rec['labels']['benchmark'] == 'dd-write':
            storage = rec['labels']['storage']
            out.append(dict(rec, labels=_cell_labels('a-' + storage)))
    for storage, names in DD_B.items():
        for name in names:
            out.append(dict(dd_record(read_fixture('dd/' + name), labels=_cell_labels('b-' + storage)), host='localhost'))
    return out


def _values(records, cell, metric='throughput'):
    return [r['metrics'][metric]['value'] for r in records if r['labels']['cell'] == cell]


def _bench_values(records, bench, cell, metric):
    return [r['metrics'][metric]['value'] for r in records
            if (r['labels']['benchmark'], r['labels']['cell']) == (bench, cell)]


def _cells(analysis, name='dd-write'):
    b = next(b for b in analysis['benchmarks'] if b['name'] == name)
    return b, dict((c['cell'], c) for c in b['cells'])


def test_matrix_keys_are_carried_in_the_plan_and_checked():
    plan = _plan(pivot='storage', baseline_by='node')
    assert (plan['pivot'], plan['baseline_by']) == ('storage', 'node')
    assert 'pivot' not in _plan() and 'baseline_by' not in _plan()
    assert _plan(baseline_by='host')['baseline_by'] == 'host'      # a pseudo-label every cell has
    with pytest.raises(MatrixError) as e:
        _plan(pivot='kvm_build')
    assert "bench_matrix.pivot: 'kvm_build' is not a label of any cell" in str(e.value)
    with pytest.raises(MatrixError) as e:
        _plan(baseline_by='Bad Label')
    assert 'bench_matrix.baseline_by' in str(e.value)


def test_without_baseline_by_one_global_baseline(nodes):
    b, cells = _cells(analyze(nodes, _plan()))
    assert [c['cell'] for c in b['cells'] if c['baseline']] == ['a-rootfs']
    assert all(cells[n]['baseline_cell'] == 'a-rootfs' for n in CELLS[1:])
    expect = compare(_values(nodes, 'b-tmpfs'), _values(nodes, 'a-rootfs'))
    assert cells['b-tmpfs']['metrics']['throughput']['delta_pct'] == pytest.approx(expect['delta_pct'])


def test_baseline_by_compares_each_cell_with_its_groups_baseline(nodes):
    a = analyze(nodes, _plan(baseline_by='node'))
    b, cells = _cells(a)
    assert a['baseline_by'] == 'node' and b['baseline_by'] == 'node' and b['baseline'] == 'a-rootfs'
    # node b's baseline is its cell with the global baseline's other labels (storage=rootfs)
    assert [c['cell'] for c in b['cells'] if c['baseline']] == ['a-rootfs', 'b-rootfs']
    assert cells['a-tmpfs']['baseline_cell'] == 'a-rootfs' and cells['b-tmpfs']['baseline_cell'] == 'b-rootfs'
    for cell, base in (('a-tmpfs', 'a-rootfs'), ('b-tmpfs', 'b-rootfs')):
        expect = compare(_values(nodes, cell), _values(nodes, base))
        got = cells[cell]['metrics']['throughput']
        assert got['delta_pct'] == pytest.approx(expect['delta_pct'])
        assert got['ci_pct'] == pytest.approx(expect['ci_pct']) and got['p'] == pytest.approx(expect['p'])
    assert cells['b-rootfs']['metrics']['throughput']['delta_pct'] is None
    # the tables: each baseline followed by the cells compared with it
    assert [c['cell'] for c in ordered_cells(b)] == ['a-rootfs', 'a-tmpfs', 'b-rootfs', 'b-tmpfs']
    # the option overrides the plan's key
    assert analyze(nodes, _plan(baseline_by='node'), baseline_by='storage')['baseline_by'] == 'storage'


def test_baseline_by_group_without_the_global_baselines_labels_takes_its_first_cell():
    cells = [dict(cell=n, labels=_node_labels(n), hosts=['h']) for n in ('a-rootfs', 'a-tmpfs', 'c-tmpfs', 'c-zfs')]
    expect = {'a-rootfs': 'a-rootfs', 'a-tmpfs': 'a-rootfs', 'c-tmpfs': 'c-tmpfs', 'c-zfs': 'c-tmpfs'}
    assert baselines(cells, 'a-rootfs', 'node') == expect
    # a label no cell has: everyone keeps the global baseline; host is a label every cell has
    assert set(baselines(cells, 'a-rootfs', 'kvm_build').values()) == {'a-rootfs'}
    assert set(baselines(cells, 'a-rootfs', 'host').values()) == {'a-rootfs'}


def test_pivot_cells_are_the_cells_statistics(nodes):
    a = analyze(nodes, _plan(pivot='storage'))
    (p,) = a['pivots']
    assert (p['factor'], p['benchmark'], p['metric'], p['unit']) == ('storage', 'dd-write', 'throughput', 'MB/s')
    assert p['columns'] == ['rootfs', 'tmpfs'] and p['rows'] == [{'node': 'a'}, {'node': 'b'}]
    for i, node in enumerate('ab'):
        for j, storage in enumerate(('rootfs', 'tmpfs')):
            values = _values(nodes, '%s-%s' % (node, storage))
            s = summarize(values)
            entry = dict((k, v) for k, v in p['cells'][i][j].items() if k in ('mean', 'ci95', 'n'))
            assert entry == {'mean': pytest.approx(statistics.mean(values)), 'ci95': pytest.approx(s['ci95']), 'n': 3}
            # the comparison with the cell's baseline, as the cell's table has it
            cell = next(c for b in a['benchmarks'] for c in b['cells'] if c['cell'] == '%s-%s' % (node, storage))
            assert p['cells'][i][j].get('verdict') == cell['metrics']['throughput']['verdict']
    # the other way round, and a combination that was not measured is null
    (q,) = analyze([r for r in nodes if r['labels']['cell'] != 'b-tmpfs'], _plan(), pivot='node')['pivots']
    assert q['columns'] == ['a', 'b'] and q['rows'] == [{'storage': 'rootfs'}, {'storage': 'tmpfs'}]
    assert q['cells'][1][1] is None and q['cells'][1][0]['n'] == 3
    assert analyze(nodes, _plan())['pivots'] == []


def test_pivot_rows_leave_out_labels_that_follow_the_factor(nodes):
    """A label that is the same for every cell of a column (the machine's own disk when the factor is
    the machine, as the lab's host labels are) is no row: one row per value would put every cell on
    a line of its own (a diagonal, seen in make bench SCENARIO=vps_bonnie_bzip2)."""
    disk = {'a': 'sda', 'b': 'vda'}
    recs = [dict(r, labels=dict(r['labels'], disk=disk[r['labels']['node']])) for r in nodes]
    (p,) = analyze(recs, _plan(), pivot='node')['pivots']
    assert p['columns'] == ['a', 'b'] and p['rows'] == [{'storage': 'rootfs'}, {'storage': 'tmpfs'}]
    assert all(c is not None for row in p['cells'] for c in row)
    # the other way round, disk varies within each column and goes with node (a label the lab adds for
    # the client host): node is needed (without it two cells would share a place) and disk splits the
    # rows exactly as node does, so it is shown beside it: the table cannot tell which of the two it is
    (q,) = analyze(recs, _plan(), pivot='storage')['pivots']
    assert q['rows'] == [{'disk': 'sda', 'node': 'a'}, {'disk': 'vda', 'node': 'b'}]
    assert analyze(recs, _plan(), pivot='disk')['pivots'][0]['rows'] == [{'storage': 'rootfs'}, {'storage': 'tmpfs'}]
    # the KVM rendition's shape: the direction places a cell, the client guest's own storage (dir in the
    # bridged column, loop in the routed one) only splits it: rows by direction, every cell filled
    kvm = dict((c, {'net': 'bridged' if c.startswith('a') else 'routed',
                    'direction': 'vm-vm' if c.endswith('rootfs') else 'host-vm',
                    'storage': {'a-rootfs': 'dir', 'b-rootfs': 'loop'}.get(c)}) for c in CELLS)
    shaped = [dict(r, labels=dict(kvm[r['labels']['cell']], cell=r['labels']['cell'], benchmark='dd-write'))
              for r in nodes]
    (k,) = analyze(shaped, _plan(), pivot='net')['pivots']
    assert k['columns'] == ['bridged', 'routed'] and k['rows'] == [{'direction': 'vm-vm'}, {'direction': 'host-vm'}]
    assert all(c is not None for row in k['cells'] for c in row)
    # every other label follows the factor (machine = cell): one row with every column filled
    machine = [dict(r, labels=dict(r['labels'], machine=r['labels']['cell'])) for r in recs]
    (m,) = analyze(machine, _plan(), pivot='machine')['pivots']
    assert m['rows'] == [{}] and m['columns'] == CELLS and all(c['n'] == 3 for c in m['cells'][0])
    a = analyze(machine, _plan(), pivot='machine')
    md = render_markdown(a, META).splitlines()
    head = md.index('## Pivot: dd-write: throughput (MB/s) by machine')
    assert md[head + 2] == '| ' + ' | '.join('machine=%s' % c for c in CELLS) + ' |'
    assert md[head + 4].count('(3)') == len(CELLS) and md[head + 5] == ''
    rows = list(csv.reader(io.StringIO(render_pivot_csv(a))))
    assert rows[0][:4] == ['benchmark', 'metric', 'unit', 'machine=%s mean' % CELLS[0]] and len(rows) == 2
    assert '<table class="pivot">' in render_html(a, META)


def test_pivot_rows_show_two_labels_that_vary_together(nodes):
    """Two factors that vary together in the measured cells (cache mode and network, as four TCG guests
    of two disk buses have them): either would place the cells, and a row by one alone would credit it
    with what the other may have done. Both are the row; a label that splits the rows further is not."""
    env = {'a-rootfs': ('none', 'routed', 'g1'), 'a-tmpfs': ('none', 'routed', 'g2'),
           'b-rootfs': ('writeback', 'bridged', 'g3'), 'b-tmpfs': ('writeback', 'bridged', 'g4')}
    recs = []
    for r in nodes:
        cache, net, guest = env[r['labels']['cell']]
        recs.append(dict(r, labels=dict(r['labels'], disk_cache=cache, net=net, guest=guest)))
    (p,) = analyze(recs, _plan(), pivot='storage')['pivots']
    assert p['columns'] == ['rootfs', 'tmpfs'], p
    assert p['rows'] == [{'disk_cache': 'none', 'net': 'routed', 'node': 'a'},
                         {'disk_cache': 'writeback', 'net': 'bridged', 'node': 'b'}], p['rows']
    assert all(c is not None for row in p['cells'] for c in row)
    md = render_markdown(analyze(recs, _plan(), pivot='storage'), META)
    assert '| disk_cache | net | node | storage=rootfs | storage=tmpfs |' in md, md


def test_pivot_rows_keep_two_crossed_labels_that_would_each_place_the_cells(nodes):
    """Cache mode and network crossed within the columns (the factor node: a has none/routed and
    writeback/bridged, b writeback/routed and none/bridged): rows by network alone would read as
    'routed vs bridged' while the cache modes differ within a row, rows by cache mode alone the other
    way round. Neither is dropped: a row per combination, the combinations not measured empty."""
    env = {'a-rootfs': ('none', 'routed'), 'a-tmpfs': ('writeback', 'bridged'),
           'b-rootfs': ('writeback', 'routed'), 'b-tmpfs': ('none', 'bridged')}
    recs = []
    for r in nodes:
        cache, net = env[r['labels']['cell']]
        labels = dict((k, v) for k, v in r['labels'].items() if k != 'storage')
        recs.append(dict(r, labels=dict(labels, disk_cache=cache, net=net)))
    (p,) = analyze(recs, _plan(), pivot='node')['pivots']
    assert p['columns'] == ['a', 'b'], p
    assert sorted((r['disk_cache'], r['net']) for r in p['rows']) == [
        ('none', 'bridged'), ('none', 'routed'), ('writeback', 'bridged'), ('writeback', 'routed')], p['rows']
    # every measured cell in its own place, once; the combinations not measured empty
    assert sum(1 for row in p['cells'] for c in row if c) == 4 and sum(1 for row in p['cells'] for c in row if not c) == 4
    # a cell without one of the labels (the host beside guests that carry a network): a dash, not None
    view = pivot_view(dict(p, rows=[dict(r, net=None) if i == 0 else r for i, r in enumerate(p['rows'])]))
    assert view['rows'][0][:2] == [p['rows'][0]['disk_cache'], '—'] and 'None' not in repr(view['rows']), view
    # a label the pivot does not need (storage, the same within each row) still goes, as before
    (q,) = analyze(nodes, _plan(), pivot='node')['pivots']
    assert q['rows'] == [{'storage': 'rootfs'}, {'storage': 'tmpfs'}]


def test_by_design_metric_is_not_charted_nor_in_the_overview(small):
    records, plan, env = small
    a = analyze(records, plan, env)
    for b in a['benchmarks']:
        for c in b['cells']:
            for m, s in c['metrics'].items():
                assert s['by_design'] == (b['tool'] == 'dd' and m == 'bytes'), (b['name'], m)
    assert {r['metric'] for r in a['overview']} == {'throughput', 'read_throughput'}


def test_overview_rows_are_the_deltas_vs_each_cells_baseline(small):
    records, plan, env = small
    a = analyze(records, plan, env)
    assert [(r['benchmark'], r['cell'], r['baseline']) for r in a['overview']] == [
        ('dd-write', 'host-tmpfs', 'host-rootfs'), ('dd-read', 'host-tmpfs', 'host-rootfs'),
        ('fio-randread', 'host-tmpfs', 'host-rootfs')]
    for r in a['overview']:
        _b, cells = _cells(a, r['benchmark'])
        s = cells['host-tmpfs']['metrics'][r['metric']]
        metric = r['metric']
        expect = compare(_bench_values(records, r['benchmark'], 'host-tmpfs', metric),
                         _bench_values(records, r['benchmark'], 'host-rootfs', metric), better=s['better'])
        assert r['delta_pct'] == pytest.approx(expect['delta_pct']) == pytest.approx(s['delta_pct'])
        assert r['ci_pct'] == pytest.approx(expect['ci_pct'])
        # the verdict is the comparison's after the correction across the report's 3 overview rows
        assert r['p'] == pytest.approx(expect['p']) and r['p_adjusted'] >= r['p']
        assert r['worse'] == (r['verdict'] == 'worse') and r['mde_pct'] == pytest.approx(expect['mde_pct'])
    # the captured run: dd-write on tmpfs is +286 % but inconclusive (p 0.15, one slow repetition),
    # dd-read +117 % and significant after the correction: both kinds are in the figure
    assert [forest_kind(r) for r in a['overview']] == ['inconclusive', 'better', 'better']
    assert a['correction']['families'][0]['tested'] == 3


def test_forest_bar_marks_each_verdict_differently():
    sig = dict(delta_pct=-20.0, ci_pct=[-30.0, -10.0], significant=True, worse=True, verdict='worse')
    noise = dict(delta_pct=3.0, ci_pct=[-8.0, 14.0], significant=False, worse=False, verdict='inconclusive')
    same = dict(delta_pct=0.5, ci_pct=[-2.0, 3.0], significant=False, worse=False, verdict='equivalent')
    scale = forest_scale([sig, noise, same])
    assert scale == 30.0
    a, b, c = forest_bar(sig, scale), forest_bar(noise, scale), forest_bar(same, scale)
    assert len(a) == len(b) == 25
    assert a.index('●') < a.index('│') and '○' not in a       # worse, left of zero
    assert '○' in b and '●' not in b                          # inconclusive: hollow
    assert b.index('━') < b.index('│') < b.rindex('━')         # its CI spans zero
    assert '◆' in c
    assert [forest_kind(r) for r in (sig, noise, same)] == ['worse', 'inconclusive', 'equivalent']
    assert forest_kind(dict(delta_pct=None, significant=None)) == 'unknown'


# -- runs started together: four guests, two steps per repetition of two guests each, real iperf3 output

IPERF = {'g1': 'iperf3-3.12-tcp.json', 'g2': 'iperf3-3.12-tcp-w256k.json', 'g3': 'iperf3-3.12-tcp-P2.json',
         'g4': 'iperf3-3.12-tcp-server.json'}


@pytest.fixture
def together(read_fixture):
    """Repetitions 1..3; in each, g1+g2 start together (steps 0, 2, 4) and g3+g4 (steps 1, 3, 5); the
    single guest g1-alone runs on its own (no aggregate)."""
    out = []
    base = {}
    for guest, name in IPERF.items():
        (rec,) = iperf_records(read_fixture('iperf/' + name), labels={'cell': guest, 'benchmark': 'net'})
        base[guest] = rec
    for rep in (1, 2, 3):
        for guest in IPERF:
            step = 2 * (rep - 1) + (0 if guest in ('g1', 'g2') else 1)
            out.append(dict(base[guest], host=guest, repetition=rep, step=step))
        out.append(dict(base['g1'], labels={'cell': 'g1-alone', 'benchmark': 'net'}, host='g1', repetition=rep, step=10 + rep))
    return out


def test_step_aggregates_sum_per_step_then_summarize(together):
    a = analyze(together)
    assert [(s['cells'], s['n'], s['guests']) for s in a['steps']] == [(['g1', 'g2'], 3, 2), (['g3', 'g4'], 3, 2)]
    tp = dict((g, together[i]['metrics']['throughput']['value']) for i, g in enumerate(IPERF))
    for st, pair in zip(a['steps'], (('g1', 'g2'), ('g3', 'g4'))):
        assert st['metric'] == 'throughput' and st['unit'] == 'Mbit/s'
        assert st['aggregate']['values'] == pytest.approx([tp[pair[0]] + tp[pair[1]]] * 3)
        assert st['aggregate']['mean'] == pytest.approx(tp[pair[0]] + tp[pair[1]])
        assert st['per_guest']['mean'] == pytest.approx((tp[pair[0]] + tp[pair[1]]) / 2)
        assert st['per_guest']['n'] == 6
    # without step ids there is nothing to aggregate
    assert analyze([dict((k, v) for k, v in r.items() if k != 'step') for r in together])['steps'] == []


def test_a_step_whose_runs_did_not_run_together_is_not_summed(together):
    """Runs of one step that started 5 s apart and ran 10 s each overlapped half their time: that step
    is left out of the aggregate (counted in not_together), the others still sum; the report says so."""
    recs = []
    for r in together:
        r = json.loads(json.dumps(r))
        r['duration_s'] = 10.0
        r['started'] = '2026-12-04T03:00:%02d.000Z' % (r['step'] * 2)
        if r['step'] == 2 and r['host'] == 'g2':
            r['started'] = '2026-12-04T03:00:09.000Z'   # 5 s after g1 of the same step
        recs.append(r)
    a = analyze(recs)
    g12 = [s for s in a['steps'] if s['cells'] == ['g1', 'g2']][0]
    assert (g12['n'], g12['not_together']) == (2, 1)
    assert [s['not_together'] for s in a['steps'] if s['cells'] == ['g3', 'g4']] == [0]
    assert '1 step(s) left out: the runs did not run together' in step_line(g12)['aggregate']


def test_cells_that_never_ran_together_get_an_entry_without_a_figure(together):
    """Every step of g3+g4 started 5 s apart (10 s runs): no aggregate for them, but an entry that
    says so (n 0, aggregate and per-guest null), valid against the results schema, in every view."""
    recs = []
    for r in together:
        r = json.loads(json.dumps(r))
        r['duration_s'] = 10.0
        r['started'] = '2026-12-04T03:%02d:00.000Z' % r['step']
        if r['host'] == 'g4':
            r['started'] = '2026-12-04T03:%02d:05.000Z' % r['step']
        recs.append(r)
    a = analyze(recs)
    g34 = [s for s in a['steps'] if s['cells'] == ['g3', 'g4']]
    assert [dict((k, v) for k, v in s.items() if v is not None) for s in g34] == [dict(
        benchmark='net', metric='throughput', unit='Mbit/s', cells=['g3', 'g4'], guests=2, n=0, not_together=3)]
    assert g34[0]['aggregate'] is None and g34[0]['per_guest'] is None and g34[0]['verdict'] is None
    assert [s['n'] for s in a['steps'] if s['cells'] == ['g1', 'g2']] == [3]
    line = step_line(g34[0])
    assert line['aggregate'] == 'no figure: the runs did not run together in any of its 3 step(s)' and line['per_guest'] == '—'
    assert results_problems(json.loads(json.dumps(_doc(recs, None, a)))) == []
    for text in (render_markdown(a, META), render_html(a, META), render_terminal(a, width=200)):
        assert 'no figure: the runs did not run together in any of its 3 step(s)' in text


def test_step_aggregate_with_distinct_values(together):
    """Scaled per repetition so mean and CI over the steps are not trivial."""
    recs = []
    for r in together:
        r = json.loads(json.dumps(r))
        r['metrics']['throughput']['value'] *= r['repetition']
        recs.append(r)
    st = analyze(recs)['steps'][0]
    sums = [sum(r['metrics']['throughput']['value'] for r in recs if r['step'] == s and r['host'] in ('g1', 'g2'))
            for s in (0, 2, 4)]
    assert st['aggregate']['values'] == pytest.approx(sums)
    assert st['aggregate']['ci95'] == pytest.approx(summarize(sums)['ci95'])


# -- every format ------------------------------------------------------------------------------

def _doc(records, plan, analysis, env=None):
    return dict(META, results_schema=1, records=records, environment=env or {}, plan=plan, analysis=analysis,
                invalid=[], failed=[], user='t', inventory='i', playbook='p', collection_version='0.1.0')


def test_results_schema_accepts_the_new_analysis(nodes, together, small):
    a = analyze(nodes, _plan(pivot='storage', baseline_by='node'))
    assert a['pivots'] and a['overview']
    assert results_problems(json.loads(json.dumps(_doc(nodes, _plan(), a)))) == []
    b = analyze(together)
    assert b['steps']
    assert results_problems(json.loads(json.dumps(_doc(together, None, b)))) == []
    records, plan, env = small
    assert results_problems(json.loads(json.dumps(_doc(records, plan, analyze(records, plan, env), env)))) == []


def test_markdown_opens_with_the_overview_and_shows_pivot_and_group_baselines(nodes):
    a = analyze(nodes, _plan(pivot='storage', baseline_by='node'))
    md = render_markdown(a, META, None, _plan())
    lines = md.splitlines()
    first_section = next(ln for ln in lines if ln.startswith('## '))
    assert first_section == '## Overview: the cost of each layer'
    assert '| benchmark | cell | vs | metric | Δ % [95% CI] |' in md
    assert any(ln.startswith('| dd-write | b-tmpfs | b-rootfs | throughput |') for ln in lines)
    assert '## Pivot: dd-write: throughput (MB/s) by storage' in lines
    assert '| node | storage=rootfs | storage=tmpfs |' in lines
    assert 'baseline: **per node: a-rootfs (for a-rootfs, a-tmpfs); b-rootfs (for b-rootfs, b-tmpfs)**' in md
    assert '| metric | a-rootfs (baseline) | a-tmpfs (vs a-rootfs) | b-rootfs (baseline) | b-tmpfs (vs b-rootfs) |' in lines
    term = render_terminal(a, width=160)
    assert 'pivot dd-write: throughput (MB/s) by storage [a]: storage=rootfs ' in term


def test_markdown_and_html_show_the_step_aggregate(together):
    a = analyze(together)
    md = render_markdown(a, META)
    assert '## Runs started together' in md and '| net | g1 + g2 | 2 | throughput |' in md
    html = render_html(a, META)
    assert '<section id="steps">' in html and 'g3 + g4' in html
    assert 'together net g1 + g2 (2 guests): ' in render_terminal(a, width=200)


def test_html_overview_forest_plot_and_environment_details(small):
    records, plan, env = small
    a = analyze(records, plan, env)
    html = render_html(a, META, env, plan)
    assert html.index('id="overview"') < html.index('id="environment"') < html.index('id="bench-0"')
    assert html.count('<g class="forest-row') == len(a['overview']) == 3
    assert html.count('<g class="forest-row better">') == sum(1 for r in a['overview'] if forest_kind(r) == 'better')
    assert '<details id="environment-same">' in html
    same = html[html.index('<details id="environment-same">'):html.index('</details>')]
    assert 'class="differs"' not in same


def test_pivot_csv(nodes):
    a = analyze(nodes, _plan(), pivot='storage')
    rows = list(csv.reader(io.StringIO(render_pivot_csv(a))))
    assert rows[0] == ['benchmark', 'metric', 'unit', 'node', 'storage=rootfs mean', 'storage=rootfs ci95_low',
                       'storage=rootfs ci95_high', 'storage=rootfs n', 'storage=tmpfs mean', 'storage=tmpfs ci95_low',
                       'storage=tmpfs ci95_high', 'storage=tmpfs n']
    assert [r[3] for r in rows[1:]] == ['a', 'b']
    assert float(rows[2][8]) == pytest.approx(statistics.mean(_values(nodes, 'b-tmpfs'))) and rows[2][11] == '3'
    assert render_pivot_csv(analyze(nodes, _plan())) is None


def test_tool_table_registry(nodes):
    a = analyze(nodes, _plan())
    b = a['benchmarks'][0]
    (dd,) = tool_tables(b)
    assert dd['columns'][-1] == ('slower than baseline (%)', True) and len(dd['rows']) == 4
    assert dd['rows'][0][-1] == '0.000 % (baseline)'

    @tool_table('iperf3')
    def _retransmits(bench):
        return dict(title='retransmits', note='test', columns=[('cell', False)], rows=[[c['cell']] for c in bench['cells']],
                    data=[])
    try:
        (rec,) = iperf_records((FIXTURES / 'iperf' / 'iperf3-3.12-tcp.json').read_text(), labels={'cell': 'x', 'benchmark': 'n'})
        a = analyze([dict(rec, host='h')])
        assert [t['title'] for t in tool_tables(a['benchmarks'][0])] == ['retransmits']
        assert 'retransmits (test):' in render_markdown(a, META) and '<h3>retransmits</h3>' in render_html(a, META)
    finally:
        from ansible_collections.benchlab.bench.plugins.plugin_utils.report import tooltables
        tooltables._REGISTRY['iperf3'].remove(_retransmits)


# -- a sweep (dbench over client counts) as one table: real dbench 4.0 outputs, two cells

SWEEP = {'a-simfs': ['dbench-4.0-1client.txt', 'dbench-4.0-2clients.txt', 'dbench-4.0-4clients.txt'],
         'b-ploop': ['dbench-4.0-sync-2clients.txt', 'dbench-4.0-3clients-warmup.txt']}


@pytest.fixture
def sweep(read_fixture):
    from ansible_collections.benchlab.bench.plugins.module_utils.tools.dbench import dbench_record
    recs = []
    for cell, files in SWEEP.items():
        for f in files:
            rec = dbench_record(read_fixture('dbench/' + f), labels={'cell': cell, 'benchmark': 'dbench',
                                                                     'layout': cell.split('-')[1]})
            recs.append(dict(rec, host='ct-' + cell))
    return recs


def test_a_sweep_is_one_table_across_its_points(sweep):
    """ploop vs simfs (reference 002): dbench over client counts reads as one table, counts as columns
    in numeric order, each cell a row, a count a cell did not run empty."""
    analysis = analyze(sweep)
    (p,) = [p for p in analysis['pivots'] if p['factor'] == 'clients']
    assert p['benchmark'] == 'dbench' and p['metric'] == 'throughput'
    assert p['columns'] == [1, 2, 3, 4]
    assert p['rows'] == [{'cell': 'a-simfs'}, {'cell': 'b-ploop'}]
    by = dict(((r['labels']['cell'], r['labels']['clients']), r['metrics']['throughput']['value']) for r in sweep)
    for i, row in enumerate(p['rows']):
        for j, n in enumerate(p['columns']):
            got = p['cells'][i][j]
            if (row['cell'], n) in by:
                assert got['n'] == 1 and got['mean'] == pytest.approx(by[row['cell'], n])
            else:
                assert got is None
    # the per-count tables stay, and the sweep is drawn like any pivot in every format
    assert sorted(b['name'] for b in analysis['benchmarks']) == ['dbench clients=%d' % n for n in (1, 2, 3, 4)]
    lines = render_markdown(analysis, META).splitlines()
    assert '## Pivot: dbench: throughput (MB/s) by clients' in lines
    assert '| cell | clients=1 | clients=2 | clients=3 | clients=4 |' in lines
    html = render_html(analysis, META)
    assert '<section id="pivots">' in html and 'dbench: throughput (MB/s) by clients' in html
    rows = list(csv.reader(io.StringIO(render_pivot_csv(analysis))))
    assert rows[0][:4] == ['benchmark', 'metric', 'unit', 'cell'] and [r[3] for r in rows[1:]] == ['a-simfs', 'b-ploop']
    assert results_problems(_doc(sweep, {}, analysis)) == []


def test_one_point_is_no_sweep(sweep):
    assert [p for p in analyze(sweep[:1])['pivots'] if p['factor'] == 'clients'] == []
