# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/plugin_utils/analysis/analysis.py and render.py over records parsed from the real fixtures:
two cells (the example matrix's) x three repetitions of a dd and a fio benchmark."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from ansible_collections.benchlab.bench.tests.unit.helpers import fixture_text

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import dd_record
from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import fio_records
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import (
    analyze, benchmark_of, cell_of, primary_metric)
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import (
    fmt_delta, fmt_num, render_markdown, render_terminal, terminal_verdict)

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'
EXAMPLE = Path(__file__).resolve().parents[4] / 'inventories' / 'local' / 'group_vars' / 'all' / 'matrix.yml'
ROOTFS, TMPFS = 'host-rootfs', 'host-tmpfs'
CELL_LABELS = {ROOTFS: {'platform': 'host', 'storage': 'rootfs'}, TMPFS: {'platform': 'host', 'storage': 'tmpfs'}}

# dd fixtures per cell, one per repetition, with (bytes, seconds) from their summary lines.
DD_RUNS = {
    ROOTFS: [('coreutils-9.1-write-fdatasync.txt', 268435456, 0.766629),
             ('coreutils-9.1-read-iflag-direct.txt', 268435456, 0.212246),
             ('coreutils-9.1-read-after-drop-caches.txt', 268435456, 0.076743)],
    TMPFS: [('coreutils-9.1-tmpfs-GBps.txt', 2147483648, 3.009),
            ('coreutils-9.1-status-progress.txt', 4194304000, 12.277),
            ('coreutils-9.1-kBps-slow-pipe.txt', 3000, 0.607781)],
}
# fio: the seqread job for the root filesystem, the job file's seq-read job for tmpfs.
FIO_RUNS = {ROOTFS: ('fio-3.33-seqread-direct.json', 0, 1890390535), TMPFS: ('fio-3.33-jobfile-two-jobs.json', 0, 3093849427)}


def _read(name):
    return fixture_text(name)


def _labels(cell, benchmark):
    return dict(CELL_LABELS[cell], cell=cell, benchmark=benchmark)


def _dd_throughputs(cell):
    return [b / s / 1e6 for _n, b, s in DD_RUNS[cell]]


def _mean(values):
    return sum(values) / len(values)


@pytest.fixture
def plan():
    with open(EXAMPLE) as f:
        return expand_plan(yaml.safe_load(f)['bench_matrix'], ['localhost'])


@pytest.fixture
def records():
    """Interleaved like the plan, but the tmpfs cell first each time, so ordering must come from the plan."""
    out = []
    for rep in range(3):
        for cell in (TMPFS, ROOTFS):
            rec = dd_record(_read('dd/' + DD_RUNS[cell][rep][0]), test='write', labels=_labels(cell, 'dd-write'))
            out.append(dict(rec, host='localhost'))
        for cell in (TMPFS, ROOTFS):
            name, index, _bw = FIO_RUNS[cell]
            rec = fio_records(_read('fio/' + name), labels=_labels(cell, 'fio-seqread'))[index]
            # the fio module names the job after the matrix benchmark; these fixtures were run by hand
            out.append(dict(rec, host='localhost', test='fio-seqread'))
    return out


def test_records_are_valid(records):
    assert len(records) == 2 * 2 * 3
    for rec in records:
        rec = dict(rec)
        del rec['host']  # added by the callback, not part of the record
        assert validate_record(rec) == []


def test_analysis_structure(records, plan):
    a = analyze(records, plan)
    assert [b['name'] for b in a['benchmarks']] == ['dd-write', 'fio-seqread']
    for b in a['benchmarks']:
        assert [c['cell'] for c in b['cells']] == [ROOTFS, TMPFS]  # the plan's order, not the records'
        assert b['baseline'] == ROOTFS
        assert [c['baseline'] for c in b['cells']] == [True, False]
        for c in b['cells']:
            assert c['n'] == 3
            assert c['hosts'] == ['localhost']
            assert c['labels'] == CELL_LABELS[c['cell']]


def test_dd_statistics_and_delta(records, plan):
    dd = analyze(records, plan)['benchmarks'][0]
    assert (dd['tool'], dd['test'], dd['tool_versions']) == ('dd', 'write', [])
    assert dd['primary'] == 'throughput'
    assert dd['metrics'] == ['throughput', 'bytes', 'elapsed']
    base, other = dd['cells']
    for c in (base, other):
        expected = _dd_throughputs(c['cell'])
        s = c['metrics']['throughput']
        assert s['n'] == 3 and s['too_fast'] == 0
        assert s['values'] == pytest.approx(expected)
        assert s['mean'] == pytest.approx(_mean(expected))
        assert s['min'] == pytest.approx(min(expected))
        assert s['max'] == pytest.approx(max(expected))
        assert (s['unit'], s['better']) == ('MB/s', 'higher')
        assert c['metrics']['elapsed']['better'] == 'lower'
        assert c['metrics']['bytes']['mean'] == pytest.approx(_mean([b for _n, b, _s in DD_RUNS[c['cell']]]))
    assert base['metrics']['throughput']['delta_pct'] is None
    ref = _mean(_dd_throughputs(ROOTFS))
    assert other['metrics']['throughput']['delta_pct'] == pytest.approx((_mean(_dd_throughputs(TMPFS)) - ref) / ref * 100)


def test_fio_statistics_and_delta(records, plan):
    fio = analyze(records, plan)['benchmarks'][1]
    assert fio['tool'] == 'fio'
    assert fio['tool_versions'] == ['3.33']
    assert fio['primary'] == 'read_throughput'
    assert fio['metrics'][0] == 'read_throughput'
    assert sorted(fio['metrics']) == sorted(['read_iops', 'read_throughput', 'read_lat_mean', 'read_lat_p99'])
    base, other = fio['cells']
    b_bw, o_bw = FIO_RUNS[ROOTFS][2] / 1e6, FIO_RUNS[TMPFS][2] / 1e6
    assert base['metrics']['read_throughput']['mean'] == pytest.approx(b_bw)
    assert other['metrics']['read_throughput']['min'] == pytest.approx(o_bw)
    assert other['metrics']['read_throughput']['delta_pct'] == pytest.approx((o_bw - b_bw) / b_bw * 100)


def test_baseline_from_the_plan(records, plan):
    plan = dict(plan, baseline=TMPFS)
    dd = analyze(records, plan)['benchmarks'][0]
    assert dd['baseline'] == TMPFS
    assert [c['cell'] for c in dd['cells']] == [ROOTFS, TMPFS]
    assert [c['baseline'] for c in dd['cells']] == [False, True]
    ref = _mean(_dd_throughputs(TMPFS))
    assert dd['cells'][0]['metrics']['throughput']['delta_pct'] == pytest.approx(
        (_mean(_dd_throughputs(ROOTFS)) - ref) / ref * 100)
    assert dd['cells'][1]['metrics']['throughput']['delta_pct'] is None


def test_without_plan_first_seen_cell_is_baseline(records):
    dd = analyze(records)['benchmarks'][0]
    assert [c['cell'] for c in dd['cells']] == [TMPFS, ROOTFS]
    assert dd['baseline'] == TMPFS


def test_plan_baseline_absent_from_benchmark(records, plan):
    only_tmpfs = [r for r in records if r['labels']['cell'] == TMPFS]
    dd = analyze(only_tmpfs, plan)['benchmarks'][0]
    assert dd['baseline'] == TMPFS
    assert dd['cells'][0]['metrics']['throughput']['delta_pct'] is None


def _with_too_fast(records, cell, reps):
    out = copy.deepcopy(records)
    dd = [r for r in out if r['labels'] == _labels(cell, 'dd-write')]
    for rep in reps:
        dd[rep]['metrics']['throughput'] = metric(None, 'MB/s', 'higher')
        assert validate_record(dict((k, v) for k, v in dd[rep].items() if k != 'host')) == []
    return out


def test_too_fast_values_are_counted_apart(records, plan):
    dd = analyze(_with_too_fast(records, TMPFS, [1]), plan)['benchmarks'][0]
    s = dd['cells'][1]['metrics']['throughput']
    expected = [v for i, v in enumerate(_dd_throughputs(TMPFS)) if i != 1]
    assert dd['cells'][1]['n'] == 3  # records
    assert (s['n'], s['too_fast']) == (2, 1)  # measured values
    assert s['values'][1] is None
    assert s['mean'] == pytest.approx(_mean(expected))
    assert s['min'] == pytest.approx(min(expected))


def test_all_too_fast_cell(records, plan):
    a = analyze(_with_too_fast(records, TMPFS, [0, 1, 2]), plan)
    s = a['benchmarks'][0]['cells'][1]['metrics']['throughput']
    assert (s['n'], s['too_fast'], s['mean'], s['delta_pct']) == (0, 3, None, None)
    md = render_markdown(a, {'matrix': 'm'})
    row = [ln for ln in md.splitlines() if ln.startswith('| throughput (MB/s)')][0]
    assert row.endswith('| +++++ (too fast, n=0) |')
    term = render_terminal(a)
    line = [ln for ln in term.splitlines() if ln.startswith('dd-write') and TMPFS in ln][0]
    assert '+++++' in line


def test_render_markdown(records, plan):
    a = analyze(records, plan)
    md = render_markdown(a, {'matrix': 'local-quick', 'run_id': '20261202T100000Z-abcdef', 'status': 'ok'})
    lines = md.splitlines()
    assert lines[0] == '# benchlab report: local-quick'
    assert '- **run id**: 20261202T100000Z-abcdef' in lines
    assert '- **records**: 12' in lines
    assert '## dd-write' in lines and '## fio-seqread' in lines
    assert lines.index('## dd-write') < lines.index('## fio-seqread')
    # rows = metrics, columns = cells with the baseline first
    assert md.count('| metric | host-rootfs (baseline) | host-tmpfs |') == 2
    assert '|---|---:|---:|' in lines
    assert md.count('baseline: **host-rootfs**') == 2
    assert 'fio fio-seqread (version 3.33)' in md
    dd = a['benchmarks'][0]
    base, other = (c['metrics']['throughput'] for c in dd['cells'])
    row = [ln for ln in lines if ln.startswith('| throughput (MB/s) ↑ | ')][0]
    half_b, half_o = ((s['ci95'][1] - s['ci95'][0]) / 2 for s in (base, other))
    verdict = 'inconclusive, needs %d per side (detectable %.0f%%)' % (other['repetitions_needed'], other['mde_pct'])
    # each entry: mean ± CI95 (n), the delta with its verdict and the detectable effect, then the
    # min–max of the runs (README)
    assert row == '| throughput (MB/s) ↑ | %s ± %s (3) [%s–%s] | %s ± %s (3) %s %s [%s–%s] |' % (
        fmt_num(base['mean']), fmt_num(half_b), fmt_num(base['min']), fmt_num(base['max']),
        fmt_num(other['mean']), fmt_num(half_o), fmt_delta(other['delta_pct']), verdict,
        fmt_num(other['min']), fmt_num(other['max']))
    assert '**Verdicts.** The overview: 2 comparison(s), 2 with a p-value, corrected together (Holm, α 0.05)' in md
    assert [ln for ln in lines if ln.startswith('| elapsed (s) ↓ | ')]
    # the dd table of the field reports: duration, MB/s, % slower (1 - baseline duration / duration)
    el_b, el_o = (c['metrics']['elapsed']['mean'] for c in dd['cells'])
    assert '| 1 | host-rootfs | host, rootfs | %.3f | %.2f | 0.000 %% (baseline) |' % (el_b, base['mean']) in lines
    assert '| 2 | host-tmpfs | host, tmpfs | %.3f | %.2f | %.3f %% |' % (
        el_o, other['mean'], (1 - el_b / el_o) * 100) in lines
    assert md.count('slower than baseline (%)') == 1  # fio has no dd table
    assert 'Runs: host-rootfs: n=3, no variance gate; host-tmpfs: n=3, no variance gate' in lines
    assert 'Invalid records' not in md and 'Failed or missing' not in md


def test_render_markdown_missing_metric_warnings_and_failures(records, plan):
    records = copy.deepcopy(records)
    bb = dd_record(_read('dd/busybox-1.35-write-fsync.txt'), bs=1048576, labels=_labels(TMPFS, 'dd-write'),
                   warnings=['file size 256 MiB | below 2x RAM'], flags=['below_2x_ram'])
    records = [r for r in records if r['labels'] != _labels(TMPFS, 'dd-write')] + [dict(bb, host='localhost')] * 2
    a = analyze(records, plan)
    meta = {'run_id': 'r1', 'invalid': [{'host': 'h1', 'errors': ['metrics.x.unit: bad', 'schema: 2']}],
            'failed': [{'host': 'h2', 'task': 'dd', 'msg': 'dd failed (rc=1)'}]}
    md = render_markdown(a, meta)
    lines = md.splitlines()
    assert lines[0] == '# benchlab report: r1'
    row = [ln for ln in lines if ln.startswith('| elapsed (s) ↓ | ')][0]
    assert row.endswith(' | — |')  # records-only output: no elapsed in the tmpfs cell
    assert [ln for ln in lines if ln.startswith('- **host-tmpfs** `below_2x_ram`: the data set was below 2x RAM in 2 of 2')]
    assert '- host-tmpfs: file size 256 MiB \\| below 2x RAM' in lines  # the warning, escaped
    assert 'Runs flagged per trap: below_2x_ram (data set below 2x RAM): 2 of 11 runs (18%); zero_data' in md
    assert '## What the trap flags mean' in lines
    assert [ln for ln in lines if ln.startswith('- `below_2x_ram`: ')]
    assert '## Invalid records' in lines and '- h1: metrics.x.unit: bad; schema: 2' in lines
    assert '## Failed or missing cells' in lines and '- h2 dd: dd failed (rc=1)' in lines


def test_render_terminal(records, plan):
    a = analyze(records, plan)
    out = render_terminal(a)
    lines = out.splitlines()
    assert all(len(ln) <= 100 for ln in lines), max(len(ln) for ln in lines)
    assert lines[0].split() == ['benchmark', 'cell', 'n', 'metric', 'mean', '±', 'CI95', 'vs', 'base', 'verdict', 'mde']
    assert set(lines[1]) == {'-'}
    body = lines[2:6]
    assert lines[6].startswith('CI95: 95% confidence interval')
    assert lines[7].startswith('verdicts of the overview: 2 comparison(s)')
    for b in a['benchmarks']:
        for c in b['cells']:
            (line,) = [ln for ln in body if ln.startswith(b['name'] + ' ') and ' %s ' % c['cell'] in ln]
            s = c['metrics'][b['primary']]
            assert ' %s' % b['primary'][:8] in line        # cut to fit 100 columns when it must
            assert fmt_num(s['mean']) in line
            if c['baseline']:
                assert line.endswith('baseline')
            else:
                delta, verdict, mde = terminal_verdict(s)
                assert ' %s  %s' % (delta, verdict) in line and line.endswith(mde)


def test_render_terminal_long_names_fit(records, plan):
    long_b, long_c = 'b' * 64, 'c' * 64  # the longest names the matrix schema allows
    renamed = copy.deepcopy(records)
    for r in renamed:
        r['labels']['benchmark'] = long_b + r['labels']['benchmark'][:3]
        r['labels']['cell'] = long_c + r['labels']['cell'][-3:]
    out = render_terminal(analyze(renamed))
    lines = out.splitlines()
    assert len(lines) == 9      # head, rule, 4 rows, the legend, the verdicts of 2 families
    assert all(len(ln) <= 100 for ln in lines), [len(ln) for ln in lines]
    assert all('…' in ln for ln in lines[2:6])


def test_benchmark_and_cell_without_labels():
    rec = {'tool': 'dd', 'test': 'write', 'host': 'h1', 'labels': {'storage': 'drbd', 'platform': 'kvm'}}
    assert benchmark_of(rec) == (None, ('dd write',))
    assert cell_of(rec) == 'h1 platform=kvm,storage=drbd'
    assert cell_of({'tool': 'dd', 'test': 'w'}) == 'host'
    assert cell_of({'labels': {'benchmark': 'x'}}, host='h2') == 'h2'


def test_primary_metric():
    assert primary_metric(['bytes', 'elapsed', 'throughput']) == 'throughput'
    assert primary_metric(['write_iops', 'write_throughput']) == 'write_throughput'
    assert primary_metric(['latency']) == 'latency'
    assert primary_metric([]) is None


@pytest.mark.parametrize('value,text', [
    (None, 'n/a'), (0, '0'), (0.0, '0'), (1234.6, '1235'), (4194304000, '4194304000'), (123.44, '123.4'),
    (1.234, '1.23'), (0.000123, '0.000123'), (0.5, '0.5'), (-12.5, '-12.50'),
])
def test_fmt_num(value, text):
    assert fmt_num(value) == text


@pytest.mark.parametrize('value,text', [(None, ''), (5, '+5.0%'), (-2.26, '-2.3%'), (0, '+0.0%')])
def test_fmt_delta(value, text):
    assert fmt_delta(value) == text
