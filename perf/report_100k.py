# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test) of the report: 100,000 generated records -> analyze -> every format.

    cd /work/main && .venv/bin/python perf/report_100k.py [--records N] [--keep DIR]

Prints the time of each step and the peak memory of the process (ru_maxrss, so it includes the
records themselves), against the goals: under 5 s in total and under 500 MB. The records are valid
result records (record.validate_record is checked on a sample): dd, fio and iperf3 benchmarks in
6 cells, the first cell the baseline, every (benchmark, cell) repeated many times."""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, '.collections'))

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record, validate_record  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown, render_terminal  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import render_csv  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_json  # noqa: E402

GOAL_S, GOAL_MB = 5.0, 500
CELLS = [('host-rootfs', 'host', 'rootfs', 1.0), ('host-drbd', 'host', 'drbd', 0.92), ('ct-simfs', 'openvz', 'simfs', 0.95),
         ('ct-ploop', 'openvz', 'ploop', 0.97), ('kvm-virtio', 'kvm', 'virtio', 0.85), ('kvm-ide', 'kvm', 'ide', 0.6)]
BENCHMARKS = [
    ('dd-write', 'dd', 'write', lambda f, r: {'throughput': metric(250 * f * r, 'MB/s'), 'bytes': metric(268435456, 'bytes'),
                                              'elapsed': metric(268435456 / (250e6 * f * r), 's', 'lower')}),
    ('fio-randread', 'fio', 'fio-randread', lambda f, r: {
        'read_iops': metric(12000 * f * r, 'ops/s'), 'read_throughput': metric(49 * f * r, 'MB/s'),
        'read_lat_mean': metric(0.08 / (f * r), 'ms', 'lower'), 'read_lat_p99': metric(0.5 / (f * r), 'ms', 'lower')}),
    ('iperf-tcp', 'iperf3', 'tcp', lambda f, r: {'throughput': metric(9400 * f * r, 'Mbit/s'),
                                                 'retransmits': metric(int(20 / r), 'count', 'lower')}),
]


def make_records(n, seed=1):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        bench, tool, test, metrics = BENCHMARKS[i % len(BENCHMARKS)]
        cell, platform, storage, factor = CELLS[(i // len(BENCHMARKS)) % len(CELLS)]
        rec = new_record(tool, test, metrics(factor, rnd.gauss(1.0, 0.03)), tool_version='1.0',
                         labels={'platform': platform, 'storage': storage, 'cell': cell, 'benchmark': bench},
                         params={'size': '256M', 'guards': {'warmup': False, 'quiet': True}},
                         cmd=[tool, '--run', str(i)], started='2026-12-02T10:%02d:%02dZ' % (i // 60 % 60, i % 60),
                         duration_s=1.0 + rnd.random(), raw_tail='%s run %d done' % (tool, i),
                         warnings=['machine not quiet: load average %.2f' % (1.5 + rnd.random())] if i % 10 == 0 else [])
        rec['host'] = 'node-%d' % (CELLS.index((cell, platform, storage, factor)) // 2)
        out.append(rec)
    return out


def mb(kib):
    return kib / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--records', type=int, default=100000)
    ap.add_argument('--keep', help='write the report files into this directory')
    args = ap.parse_args()

    t0 = time.perf_counter()
    records = make_records(args.records)
    gen = time.perf_counter() - t0
    sample = records[::max(1, len(records) // 50)]
    bad = [e for r in sample for e in validate_record({k: v for k, v in r.items() if k != 'host'})]
    assert not bad, bad
    base_rss = mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    plan = {'name': 'perf-100k', 'baseline': CELLS[0][0], 'cells': [{'name': c[0], 'host': 'node'} for c in CELLS],
            'benchmarks': [{'name': b[0], 'cells': [c[0] for c in CELLS]} for b in BENCHMARKS], 'runs': []}
    meta = dict(run_id='perf', started='2026-12-02T10:00:00Z', finished='2026-12-02T12:00:00Z', user='perf',
                inventory=None, playbook=None, matrix='perf-100k', collection_version='0.1.0', status='complete',
                invalid=[], failed=[])

    steps = []
    outputs = {}

    def step(name, fn):
        t, c = time.perf_counter(), time.process_time()
        value = fn()
        steps.append((name, time.perf_counter() - t, time.process_time() - c))
        return value

    analysis = step('analyze', lambda: analyze(records, plan, {}))
    doc = dict(meta, records=records, environment={}, plan=plan, analysis=analysis)
    outputs['terminal'] = step('render_terminal', lambda: render_terminal(analysis, meta=meta, plan=plan))
    outputs['report.md'] = step('render_markdown', lambda: render_markdown(analysis, meta, {}, plan))
    outputs['report.html'] = step('render_html', lambda: render_html(analysis, meta, {}, plan))
    outputs['results.csv'] = step('render_csv', lambda: render_csv(records, 'perf'))
    outputs['results.json'] = step('results_json', lambda: results_json(doc))
    total = sum(s for _n, s, _c in steps)
    cpu = sum(c for _n, _s, c in steps)
    peak = mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        for name, text in outputs.items():
            with open(os.path.join(args.keep, name if '.' in name else name + '.txt'), 'w') as f:
                f.write(text)
    else:
        with tempfile.TemporaryDirectory(prefix='rpt-perf-') as d:
            for name, text in outputs.items():
                with open(os.path.join(d, name.replace('terminal', 'terminal.txt')), 'w') as f:
                    f.write(text)

    print('records: %d generated in %.2f s (%d benchmarks x %d cells; %.0f MB resident after generating)'
          % (len(records), gen, len(BENCHMARKS), len(CELLS), base_rss))
    print('load average before: %s (other work on the machine slows the wall-clock figures)' % ' '.join(
        '%.2f' % x for x in os.getloadavg()))
    for name, secs, cpu_s in steps:
        print('  %-16s %6.2f s wall  %6.2f s CPU' % (name, secs, cpu_s))
    for name, text in outputs.items():
        print('  %-16s %9.1f KiB' % (name, len(text.encode('utf-8')) / 1024.0))
    print('total (analyze + every format): %.2f s wall, %.2f s CPU  goal < %.0f s  %s' % (
        total, cpu, GOAL_S, 'OK' if total < GOAL_S else 'MISSED'))
    print('peak memory (ru_maxrss, records included): %.0f MB  goal < %d MB  %s'
          % (peak, GOAL_MB, 'OK' if peak < GOAL_MB else 'MISSED'))
    return 0 if total < GOAL_S and peak < GOAL_MB else 1


if __name__ == '__main__':
    sys.exit(main())
