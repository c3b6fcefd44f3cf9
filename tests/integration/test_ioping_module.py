"""benchlab.bench.ioping runs for real on this machine: through `ansible localhost -m ...`, and through
the one run path of playbooks/bench.yml (a batch of repetitions, the unit's report table). ioping
works in a work directory of its own inside the test's directory, on the machine's ext4."""

import json
import os

import pytest

from conftest import BIN, load_run, module, run, run_dirs

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record


@pytest.mark.parametrize('args', [{'count': 20}, {'count': 20, 'mode': 'write', 'sync': True, 'size': '8k', 'work_size': '2m'}])
def test_a_run_gives_ioping_own_figures_and_leaves_nothing(env, tmp_path, args):
    rc, status, res = module(env, 'ioping', dict(args, path=str(tmp_path), labels={'storage': 'ext4'}))
    assert rc == 0, res
    rec = res['bench_result']
    assert validate_record(rec) == [], rec
    assert rec['tool'] == 'ioping' and rec['tool_version'] == '1.3' and rec['test'] == args.get('mode', 'read')
    assert rec['labels'] == {'storage': 'ext4'} and rec['params']['requests'] == 19   # the warm-up is never counted
    m = dict((k, v['value']) for k, v in rec['metrics'].items())
    assert 0 < m['latency_min'] <= m['latency_avg'] <= m['latency_max'] and m['latency_mdev'] >= 0
    # ioping's iops and throughput are its requests over their time: the record keeps its exact figures
    assert m['iops'] * m['latency_avg'] == pytest.approx(1000.0, rel=0.01)
    size = 8192 if args.get('size') == '8k' else 4096
    assert m['throughput'] == pytest.approx(m['iops'] * size / 1e6, rel=0.01)
    argv = rec['cmd']
    assert argv[1:3] == ['-B', '-q'] and ('-W' in argv) == ('mode' in args) and '-D' in argv
    assert argv[-1].startswith(str(tmp_path / 'benchlab-ioping-'))
    assert os.listdir(tmp_path) == []


def test_check_mode_and_bad_arguments(env, tmp_path):
    rc, status, res = module(env, 'ioping', {'path': str(tmp_path), 'mode': 'write'}, check=True)
    assert rc == 0 and res['bench_dry_run']['tool'] == 'ioping' and '-W' in res['bench_dry_run']['argv'], res
    assert os.listdir(tmp_path) == []
    rc, status, res = module(env, 'ioping', {'path': str(tmp_path), 'count': 1})
    assert rc != 0 and res['msg'] == 'count: 1 is less than the minimum of 2', res


MATRIX = """---
bench_matrix:
  name: it-ioping
  repetitions: 3
  baseline: direct
  methodology: {cooldown_s: 0, quiesce: false}
  cells:
    - {name: direct, host: localhost, path: %(path)s, labels: {cache: direct}}
  benchmarks:
    - {name: latency, tool: ioping, params: {count: 30, mode: write, dsync: true}}
"""


def test_ioping_through_the_one_run_path(env, tmp_path):
    scratch = tmp_path / 'scratch'
    scratch.mkdir()
    matrix = tmp_path / 'matrix.yml'
    matrix.write_text(MATRIX % {'path': scratch})
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local', '-e', '@%s' % matrix,
                '-e', 'bench_install_tools=false'], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results, jsonl = load_run(run_dir)
    assert [(r['repetition'], r['step']) for r in jsonl] == [(1, 0), (2, 1), (3, 2)]
    assert all(r['run_id'] == results['run_id'] and r['params']['dsync'] is True for r in jsonl)
    # one call ran the three repetitions (a batch), each stored as it ended
    assert proc.stdout.count('TASK [benchlab.bench.bench_run : Benchmark latency]') == 1
    assert '[cell 3/3] ioping latency write #3 on direct (direct)' in proc.stdout
    report = (run_dir / 'report.md').read_text()
    assert 'ioping, what one request costs' in report
    bench = results['analysis']['benchmarks'][0]
    assert bench['tool'] == 'ioping' and bench['cells'][0]['n'] == 3
    assert os.listdir(scratch) == []
    assert json.loads(json.dumps(results))['status'] == 'complete'
