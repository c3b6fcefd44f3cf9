"""The variance gate (plugin_utils/plan/gate.py) and trap detection (plugin_utils/explain/traps.py)."""

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record, validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.gate import gate_status, next_runs
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan

MATRIX = {
    'name': 'gate', 'repetitions': 3, 'baseline': 'quiet',
    'methodology': {'cooldown_s': 1},
    'cells': [{'name': 'quiet', 'host': 'h1', 'path': '/a'}, {'name': 'noisy', 'host': 'h1', 'path': '/b'},
              {'name': 'far', 'host': 'h2', 'path': '/c'}],
    'benchmarks': [{'name': 'w', 'tool': 'dd', 'methodology': {'max_cv': 0.05, 'max_repetitions': 6}},
                   {'name': 'r', 'tool': 'dd'}],
}


def rec(bench, cell, value, warmup=False, **params):
    guards = {'warmup': warmup}
    return new_record('dd', 'write', {'throughput': metric(value, 'MB/s')},
                      labels={'benchmark': bench, 'cell': cell}, params=dict(params, guards=guards))


def test_gate_status():
    assert gate_status([rec('w', 'q', v) for v in (100, 101, 99)], 0.05, 6)['met'] is True
    noisy = gate_status([rec('w', 'n', v) for v in (100, 150, 60)], 0.05, 6)
    assert noisy['met'] is False and noisy['capped'] is False and noisy['n'] == 3 and noisy['metric'] == 'throughput'
    assert gate_status([rec('w', 'n', v) for v in (100, 150, 60, 100, 150, 60)], 0.05, 6)['capped'] is True
    # warm-ups never count
    assert gate_status([rec('w', 'n', 500, warmup=True)] + [rec('w', 'n', v) for v in (100, 101)], 0.05, 6)['n'] == 2


def test_the_gate_adds_runs_to_noisy_cells_only_and_never_beyond_the_cap():
    plan = expand_plan(MATRIX)
    records = [rec(r['benchmark'], r['cell'], 100 + (50 * (r['repetition'] % 2) if r['cell'] == 'noisy' else 0))
               for r in plan['runs']]
    rounds = 0
    while True:
        more = next_runs(plan, records, 'h1')
        if not more:
            break
        rounds += 1
        assert [(m['benchmark'], m['cell']) for m in more] == [('w', 'noisy')]
        assert more[0]['gate'] is True and more[0]['guards']['cooldown_s'] == 1 and not more[0]['guards']['warmup']
        assert more[0]['repetition'] == 3 + rounds
        records.append(rec('w', 'noisy', 100 + 50 * (more[0]['repetition'] % 2)))
    counted = [r for r in records if r['labels'] == {'benchmark': 'w', 'cell': 'noisy'}]
    assert rounds == 3 and len(counted) == 6  # the cap, exactly
    quiet = [r for r in records if r['labels'] == {'benchmark': 'w', 'cell': 'quiet'}]
    assert len(quiet) == 3  # the default count
    # the other host's cells are that host's business
    assert [m['cell'] for m in next_runs(plan, [], 'h2')] == ['far']
    assert next_runs(dict(plan, gates={}), records, 'h1') == []


def test_the_gate_leaves_cells_with_a_failed_run_alone():
    """A cell whose run failed gives no record: without the exclusion the gate would ask for it
    again and again (bench_run's gate.yml passes the failed pairs)."""
    from ansible_collections.benchlab.bench.plugins.filter.gate_runs import gate_runs
    plan = expand_plan(MATRIX)
    records = [rec('w', 'quiet', 100), rec('w', 'quiet', 150)]  # noisy's runs all failed
    assert sorted(m['cell'] for m in gate_runs(plan, records, 'h1')) == ['noisy', 'quiet']
    assert [m['cell'] for m in gate_runs(plan, records, 'h1', exclude=[['w', 'noisy']])] == ['quiet']


def test_analysis_reports_the_gate_and_flags_the_cap():
    plan = expand_plan(MATRIX)
    records = [rec('w', 'quiet', v) for v in (100, 101, 99)] + [rec('w', 'noisy', v) for v in (100, 150) * 3]
    a = analyze(records, plan)
    (w,) = a['benchmarks']
    cells = {c['cell']: c for c in w['cells']}
    assert cells['quiet']['gate']['met'] is True and cells['quiet']['flags'] == []
    assert cells['noisy']['gate']['capped'] is True
    assert [f['code'] for f in cells['noisy']['flags']] == ['gate_not_met']
    assert 'after 6 runs (the cap)' in cells['noisy']['flags'][0]['message']


def flags_of(records, plan=None, environment=None, cell='up'):
    a = analyze(records, plan, environment)
    return {c['cell']: [f['code'] for f in c['flags']] for c in a['benchmarks'][0]['cells']}[cell]


def test_faster_than_baseline_beyond_noise_is_suspicious_unless_expected():
    records = [rec('w', 'base', v) for v in (100, 101, 99)] + [rec('w', 'up', v) for v in (500, 505, 495)]
    assert flags_of(records) == ['faster_than_baseline']
    plan = {'baseline': 'base', 'cells': [{'name': 'base'}, {'name': 'up', 'expected_faster': True}]}
    assert flags_of(records, plan) == []
    # within noise: no flag
    records = [rec('w', 'base', v) for v in (100, 140, 70)] + [rec('w', 'up', v) for v in (110, 90, 130)]
    assert flags_of(records) == []
    # slower beyond noise is what a layer costs, not a trap
    records = [rec('w', 'base', v) for v in (100, 101, 99)] + [rec('w', 'up', v) for v in (80, 81, 79)]
    assert flags_of(records) == []


def test_zero_data_busy_machine_and_small_data_set_flags():
    records = [rec('w', 'base', v) for v in (100, 101, 99)]
    up = [rec('w', 'up', v, data='zero') for v in (100, 102, 98)]
    assert all(r['flags'] == ['zero_data'] for r in up)  # the record says it as data
    up[0]['flags'].append('below_2x_ram')
    up[1]['flags'].append('not_quiet')
    up[2]['flags'].append('source_on_test_storage')
    assert flags_of(records + up) == ['below_2x_ram', 'zero_data', 'not_quiet', 'source_on_test_storage']
    # the codes, never the text: a warning that reads like a trap flags nothing on a record with flags
    records[0]['warnings'].append('data set 256 MiB is below 2x RAM (4 GiB)')
    assert flags_of(records, cell='base') == []


def test_records_from_before_the_codes_keep_their_flags():
    """History holds records without `flags` (plain-string warnings): their codes come from the old fields."""
    records = [rec('w', 'base', v) for v in (100, 101, 99)]
    up = [rec('w', 'up', v, data='zero') for v in (100, 102, 98)]
    for r in up:
        del r['flags']
        assert validate_record(r) == []
    up[0]['warnings'].append('data set 256 MiB is below 2x RAM (4 GiB): the page cache may inflate the result')
    up[1]['params']['guards']['quiet'] = False
    assert flags_of(records + up) == ['below_2x_ram', 'zero_data', 'not_quiet']
    rates = dict((t['code'], (t['flagged'], t['runs'])) for t in analyze(records + up)['traps'])
    assert rates == {'below_2x_ram': (1, 6), 'zero_data': (3, 6), 'not_quiet': (1, 6), 'source_on_test_storage': (0, 6),
                     'unsafe_options': (0, 6), 'not_together': (0, 6)}


def test_too_fast_and_cpu_bound_bonnie_cells():
    def bonnie(cell, cpu):
        return new_record('bonnie++', 'bonnie', {'seq_output_block': metric(300, 'MB/s'),
                                                 'seq_output_char_cpu': metric(cpu, '%', 'lower'),
                                                 'seq_create': metric(None, 'files/s')},
                          labels={'benchmark': 'b', 'cell': cell})
    records = [bonnie('base', 50), bonnie('up', 97), bonnie('up', 95)]
    assert flags_of(records) == ['too_fast', 'cpu_bound']


def test_drbd_resync_during_the_cell():
    records = [rec('w', 'base', v) for v in (100, 101)] + [rec('w', 'up', v) for v in (99, 100)]
    env = {'h/up': {'labels': {'cell': 'up'}, 'drbd': [{'name': 'r0', 'disk_state': 'UpToDate',
                                                        'peer_disk_state': 'Inconsistent', 'replication': 'SyncSource'}]},
           'h/base': {'labels': {'cell': 'base'}, 'drbd': [{'name': 'r0', 'disk_state': 'UpToDate',
                                                            'peer_disk_state': 'UpToDate', 'replication': 'Established'}]}}
    assert flags_of(records, environment=env) == ['drbd_not_uptodate']
    assert flags_of(records, environment=env, cell='base') == []


# r1 and r0 as benchlab.bench.drbd_status returned them in the two-guest qemu test (tests/vm/
# test_drbd_vm.py, kvmt-drbd1, drbd-utils 9.22 on DRBD 8.4.11): r1 invalidated on the peer, its
# resync paused; r0 in sync
R1_PAUSED = {'connection': 'Connected', 'disk_state': 'UpToDate', 'minor': 1, 'name': 'r1', 'out_of_sync_kib': 14296,
             'peer_disk_state': 'Inconsistent', 'replication': 'PausedSyncS', 'role': 'Primary', 'sync_percent': 56.32,
             'volume': 0}
R0_OK = {'connection': 'Connected', 'disk_state': 'UpToDate', 'minor': 0, 'name': 'r0', 'out_of_sync_kib': 0,
         'peer_disk_state': 'UpToDate', 'replication': 'Established', 'role': 'Primary', 'sync_percent': None, 'volume': 0}


def test_drbd_state_at_each_run_start_wins_over_the_cells_environment():
    """The environment is taken once before the cell's first run; bench_run waits for UpToDate before
    each run and records the state then (params.guards.drbd): a resync that ended before the runs
    started flags nothing, a run that started during one is flagged and counted."""
    env = {'h/up': {'labels': {'cell': 'up'}, 'drbd': [R0_OK, R1_PAUSED]},
           'h/base': {'labels': {'cell': 'base'}, 'drbd': [R0_OK, R1_PAUSED]}}
    synced = dict(R1_PAUSED, peer_disk_state='UpToDate', replication='Established', out_of_sync_kib=0,
                  sync_percent=None)
    base = [rec('w', 'base', v) for v in (100, 101)]
    up = [rec('w', 'up', v) for v in (99, 100)]
    for r in base + up:
        r['params']['guards']['drbd'] = [R0_OK, synced]
    assert flags_of(base + up, environment=env) == []
    up[1]['params']['guards']['drbd'] = [R0_OK, R1_PAUSED]
    assert flags_of(base + up, environment=env) == ['drbd_not_uptodate']
    cell = [c for b in analyze(base + up, environment=env)['benchmarks'] for c in b['cells'] if c['cell'] == 'up'][0]
    assert [f['message'] for f in cell['flags']] == [
        'DRBD r1 was UpToDate/Inconsistent (PausedSyncS) at the start of 1 of 2 run(s): resync traffic distorts it']


def test_warmups_are_stored_but_not_counted():
    records = [rec('w', 'base', 1000, warmup=True)] + [rec('w', 'base', v) for v in (100, 101, 99)]
    (b,) = analyze(records)['benchmarks']
    (c,) = b['cells']
    assert c['n'] == 3 and c['warmups'] == 1 and c['metrics']['throughput']['mean'] == pytest.approx(100)


def test_zeros_faster_than_real_data_in_the_same_cell_is_the_ploop_trap():
    def run(bench, cell, value, data):
        r = rec(bench, cell, value, data=data, test='write', size='256M')
        return r
    records = ([run('zero', 'host', v, 'zero') for v in (200, 201, 199)] + [run('real', 'host', v, 'random') for v in (200, 202, 198)]
               + [run('zero', 'ploop', v, 'zero') for v in (1000, 1010, 990)] + [run('real', 'ploop', v, 'random') for v in (190, 200, 195)])
    a = analyze(records, {'baseline': 'host', 'cells': [{'name': 'host'}, {'name': 'ploop'}]})
    flags = {(b['name'], c['cell']): [f['code'] for f in c['flags']] for b in a['benchmarks'] for c in b['cells']}
    assert 'zero_elision' in flags[('zero', 'ploop')] and 'faster_than_baseline' in flags[('zero', 'ploop')]
    assert 'zero_elision' not in flags[('zero', 'host')] and flags[('real', 'ploop')] == []
    msg = next(f['message'] for b in a['benchmarks'] for c in b['cells'] for f in c['flags'] if f['code'] == 'zero_elision')
    assert msg.startswith('zeros went 5.1x as fast as real data (real')


def test_tables_per_test_and_sweep_point():
    """A benchmark with several tests (compress) or a sweep (dbench clients) gets a table for each;
    a benchmark with one test keeps its name."""
    def r(bench, test, value, **labels):
        return new_record('compress', test, {'throughput': metric(value, 'MB/s')},
                          labels=dict(labels, benchmark=bench, cell='c'))
    records = [r('cpu', 'bzip2-9-compress', 5), r('cpu', 'bzip2-decompress', 20), r('dd-write', 'write', 300),
               r('db', 'client', 50, clients=1), r('db', 'client', 90, clients=4)]
    names = [b['name'] for b in analyze(records)['benchmarks']]
    assert names == ['cpu bzip2-9-compress', 'cpu bzip2-decompress', 'dd-write', 'db clients=1', 'db clients=4']
    # the gate judges each series on its own: a steady compress and decompress meet it together
    steady = [r('cpu', t, v) for t, vals in (('bzip2-9-compress', (5, 5.1, 4.9)), ('bzip2-decompress', (20, 20.2, 19.8)))
              for v in vals]
    assert gate_status(steady, 0.05, 6) == dict(gate_status(steady, 0.05, 6), met=True, n=3)


def test_every_format_shows_the_fraction_of_runs_flagged():
    from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown, render_terminal
    from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import render_csv
    from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
    records = [rec('w', 'base', v) for v in (100, 101, 99)] + [rec('w', 'up', v) for v in (100, 102, 98)]
    for r in records[3:5]:
        r['params']['guards']['quiet'] = False
        r['flags'] = ['not_quiet']
    a = analyze(records)
    line = 'not_quiet (machine not quiet): 2 of 6 runs (33%)'
    assert line in render_markdown(a, {'run_id': 'r'})
    assert line in render_html(a, {'run_id': 'r'}, {}, None)
    assert 'runs flagged: not_quiet 2/6' in render_terminal(a)
    csv_rows = render_csv([dict(r, host='h') for r in records]).splitlines()
    assert csv_rows[0].split(',')[15] == 'flags' and sum(1 for row in csv_rows if ',not_quiet' in row) == 2
