# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The history store's figures (`make perf`, `perf/perf.py --only history`): 1,000 stored runs on
each backend - a SQLite file on the local disk and a private PostgreSQL server on 127.0.0.1
(tests/unit/pgserver.py, the same the tests start).

Each run is the real run of tests/unit/fixtures/report (18 records: dd write/read and fio randread in
two cells, 3 metrics each) under its own run id, its throughput scaled (a 30 % step at run 600).
Measured, per backend:
- store: storing the 1,000 runs one after the other, each in its own connection and transaction,
  as 1,000 controllers would (total and per run);
- find: loading 200 runs by reference (run id, run id prefix, label, latest; open, find, load, close);
- compare: compare.yml's work for two stored runs (load both, compare_runs), per comparison;
- trend: trend.yml's work over the 1,000 runs (select, series, E-divisive, environment at the change).
Prints a table and, on its last line, the figures as JSON (perf.py reads that line)."""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, '.collections'))

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import load_run, open_store, store_run  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.regress import compare_runs  # noqa: E402
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.trend import trend_document  # noqa: E402
from ansible_collections.benchlab.bench.tests.unit.pgserver import PgServer  # noqa: E402

RUNS = 1000
FINDS = 200
COMPARES = 5
FIXTURE = os.path.join(HERE, 'tests', 'unit', 'fixtures', 'report')


def docs():
    with open(os.path.join(FIXTURE, 'local-small-results.jsonl')) as f:
        records = [json.loads(line) for line in f]
    with open(os.path.join(FIXTURE, 'local-small-environment.json')) as f:
        environment = json.load(f)
    rng = random.Random(9)
    for i in range(RUNS):
        factor = (1.0 if i < 600 else 0.7) * rng.uniform(0.98, 1.02)
        recs = [dict(r, metrics=dict((k, dict(m, value=m['value'] * factor if k == 'throughput' and m['value'] else
                                              m['value'])) for k, m in r['metrics'].items())) for r in records]
        env = json.loads(json.dumps(environment))
        for cell in env.values():
            cell['kernel']['release'] = 'k1' if i < 600 else 'k2'
        started = '2026-%02d-%02dT%02d:%02d:00Z' % (1 + i // 300, 1 + (i // 12) % 25, i % 24, i % 60)
        yield dict(run_id='perf-%04d' % i, started=started, finished=started, user='perf', inventory='local',
                   playbook='bench.yml', matrix='perf-matrix', collection_version='0.1.0', status='complete',
                   invalid=[], failed=[], records=recs, environment=env, plan=None, analysis={'benchmarks': []})


def measure(location):
    t0 = time.monotonic()
    for i, doc in enumerate(docs()):
        store_run(location, doc, label='nightly' if i % 2 else None)
    store_s = time.monotonic() - t0
    rng = random.Random(1)
    refs = []
    for _find in range(FINDS):
        kind = rng.randrange(4)
        n = rng.randrange(RUNS)
        refs.append(('perf-%04d' % n, 'perf-%04d' % n, 'nightly', 'latest')[kind])
    t0 = time.monotonic()
    for ref in refs:
        load_run(location, ref)
    find_s = (time.monotonic() - t0) / FINDS
    t0 = time.monotonic()
    for k in range(COMPARES):
        compare_runs(load_run(location, 'perf-%04d' % (590 - k)), load_run(location, 'perf-%04d' % (610 + k)), 5.0)
    compare_s = (time.monotonic() - t0) / COMPARES
    t0 = time.monotonic()
    with open_store(location, create=False) as store:
        doc = trend_document(store, 'dd-write', 'host-rootfs', 'throughput', matrix='perf-matrix')
    trend_s = time.monotonic() - t0
    found = [cp['index'] for cp in doc['trend']['change_points']]
    return dict(store_1000_s=store_s, store_per_run_ms=store_s / RUNS * 1000, find_ms=find_s * 1000,
                compare_s=compare_s, trend_1000_s=trend_s, trend_points=len(doc['trend']['series']),
                trend_change_points=found)


def main():
    figures = {}
    with tempfile.TemporaryDirectory(prefix='benchlab-perf-history-') as tmp:
        for name, value in measure(os.path.join(tmp, 'history.sqlite')).items():
            figures['history_sqlite_%s' % name] = value
    server = PgServer()
    try:
        server.start()
        os.environ.update(server.env())
        for name, value in measure(server.url()).items():
            figures['history_postgresql_%s' % name] = value
    finally:
        server.stop()
    for name in sorted(figures):
        print('%-42s %s' % (name, ('%.3f' % figures[name]) if isinstance(figures[name], float) else figures[name]))
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
