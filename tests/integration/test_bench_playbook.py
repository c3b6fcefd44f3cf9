"""The real playbook on this machine: matrix -> modules -> callback -> run directory."""

import glob
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import BIN, FILES, REPO, load_run, run, run_dirs
from netns_hosts import RUN_DIRS, ssh_hosts

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.measurements import TOGETHER_MIN, together


def scratch():
    """The module's scratch files in the benchmark directories (dd's random source lives in /dev/shm)."""
    return {p for d in ('/var/tmp', '/dev/shm') for p in glob.glob(d + '/benchlab-*')}


def test_bench_playbook_writes_a_valid_report(tmp_path, env):
    # other processes on the machine (a killed `make perf`, another checkout's tests) may own some
    before = scratch()
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % (FILES / 'matrix-small.yml'), '-e', 'bench_install_tools=false'], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    runs = run_dirs(tmp_path / 'runs')
    assert len(runs) == 1
    results, jsonl = load_run(runs[0])
    # every record arrived in results.jsonl and in results.json, and each is valid
    assert len(jsonl) == len(results['records']) == 3 * 3 * 2
    for rec in jsonl:
        assert validate_record({k: v for k, v in rec.items() if k not in ('host', 'cell_key')}) == []
        assert rec['host'] == 'localhost'
        assert len(rec['cell_key']) == 16  # stamped by the callback: what resume matches on
    per_cell = Counter((r['labels']['benchmark'], r['labels']['cell']) for r in jsonl)
    assert set(per_cell.values()) == {3}, per_cell
    for rec in jsonl:
        if rec['tool'] == 'dd':
            assert rec['metrics']['throughput']['value'] > 0
            assert rec['metrics']['bytes']['value'] == 32 * 1024 * 1024
            assert 'conv=fdatasync' in rec['cmd'] or rec['test'] == 'read'
        else:
            assert rec['metrics']['read_iops']['value'] > 0
    # the analysis compares against the baseline cell the matrix names
    bench = {b['name']: b for b in results['analysis']['benchmarks']}
    assert set(bench) == {'dd-write', 'dd-read', 'fio-randread'}
    for b in bench.values():
        assert b['baseline'] == 'host-rootfs'
        cells = {c['cell']: c for c in b['cells']}
        assert cells['host-tmpfs']['metrics'][b['primary']]['delta_pct'] is not None
        assert cells['host-rootfs']['n'] == 3
    # the environment of both cells was described
    fstypes = {v['labels']['cell']: v['target']['fstype'] for v in results['environment'].values()}
    assert fstypes['host-tmpfs'] == 'tmpfs' and set(fstypes) == {'host-tmpfs', 'host-rootfs'}
    # ... by each cell's first run itself (the one run path: the option describe), not by a sysinfo task
    describe_task = proc.stdout.split('Describe the environment of each cell', 1)[1].split('TASK [', 1)[0]
    assert 'ok: [' not in describe_task and 'changed: [' not in describe_task, describe_task
    report = (runs[0] / 'report.md').read_text()
    assert '## dd-write' in report and 'host-rootfs (baseline)' in report
    assert 'benchlab report: %s' % (runs[0] / 'report.md') in proc.stdout
    assert 'benchlab summary' in proc.stdout
    # the run left nothing behind in the benchmark directories
    assert sorted(scratch() - before) == []


def test_invalid_matrix_is_rejected_before_any_host_is_touched(tmp_path, env):
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % (FILES / 'matrix-bad-path.yml')], env)
    assert proc.returncode != 0
    assert 'bench_matrix.cells[1].path' in proc.stdout
    # the failure happened in the planning play: no tool was installed, no benchmark ran
    assert 'Install the tools' not in proc.stdout
    assert 'Benchmark dd' not in proc.stdout
    assert not (tmp_path / 'runs').exists() or not any(p.name == 'results.jsonl' for p in (tmp_path / 'runs').rglob('*'))


def test_install_role_is_idempotent(tmp_path, env):
    for attempt in (1, 2):
        proc = run([BIN / 'ansible-playbook', 'playbooks/install.yml', '-i', 'inventories/local'], env)
        assert proc.returncode == 0, proc.stdout[-3000:]
    recap = [line for line in proc.stdout.splitlines() if line.startswith('localhost') and 'ok=' in line][-1]
    assert 'changed=0' in recap and 'failed=0' in recap, recap
    assert (REPO / 'roles/bench_tools/meta/argument_specs.yml').exists()


WORKERS_MATRIX = """---
bench_matrix:
  name: it-workers
  repetitions: 2
  methodology: {cooldown_s: 0, quiesce: false}
  cells:
    - name: host-rootfs
      host: localhost
      path: /var/tmp
      labels: {platform: host}
  benchmarks:
    - name: tio
      tool: fio
      params: {job_file: %s}
    - name: net
      tool: iperf
      params:
        time: 1
        port: 5391
        # more than the default 2 + 1.5 s per pair: under CI load a module took longer to start
        start_delay_s: 8
        concurrent: [{client_host: localhost, server_host: localhost, server_address: 127.0.0.1}]
"""


def test_workers_are_one_measurement_and_n_is_repetitions(tmp_path, env):
    """A matrix job file with numjobs=4 in 4 stonewalled groups and two concurrent iperf pairs, 2
    repetitions each: every table says n=2 (it said n=8 for fio and n=4 for iperf)."""
    job = tmp_path / 'tio.fio'
    job.write_text((REPO / 'tests/unit/fixtures/fio/jobs/tiobench-style.fio').read_text())
    matrix = tmp_path / 'matrix.yml'
    matrix.write_text(WORKERS_MATRIX % job)
    before = scratch()
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % matrix, '-e', 'bench_install_tools=false'], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results, jsonl = load_run(run_dir)
    fio = [r for r in jsonl if r['tool'] == 'fio']
    assert sorted((r['test'], r['repetition']) for r in fio) == sorted(
        (t, rep) for t in ('seq-write', 'seq-read', 'rand-write', 'rand-read') for rep in (1, 2))
    assert all(r['workers']['count'] == 4 and len(r['workers']['detail']) == 4 for r in fio)
    assert all(r['params']['job_file'] == str(job) for r in fio)
    pairs = [r for r in jsonl if r['tool'] == 'iperf3']
    assert sorted((r['labels']['pair'], r['repetition']) for r in pairs) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    # the pairs of a repetition waited for one agreed moment and ran together from it (guards.start_at;
    # the analysis' own overlap rule, measurements.together)
    for rep in (1, 2):
        recs = [r for r in pairs if r['repetition'] == rep]
        guards = [r['params']['guards'] for r in recs]
        assert len(set(g['start_at'] for g in guards)) == 1, guards
        assert together(recs)['fraction'] >= TOGETHER_MIN, (together(recs), guards)
    for rec in jsonl:
        assert validate_record({k: v for k, v in rec.items() if k not in ('host', 'cell_key')}) == []
    tables = {b['name']: b for b in results['analysis']['benchmarks']}
    assert set(tables) == {'tio seq-write', 'tio seq-read', 'tio rand-write', 'tio rand-read', 'net'}
    for b in tables.values():
        (cell,) = b['cells']
        assert cell['n'] == 2, (b['name'], cell['n'])
        assert cell['metrics'][b['primary']]['n'] == 2
    # the network figure is the step's: the sum of both pairs' throughputs, per repetition
    sums = [sum(r['metrics']['throughput']['value'] for r in pairs if r['repetition'] == rep) for rep in (1, 2)]
    net = tables['net']['cells'][0]['metrics']['throughput']
    assert net['values'] == [pytest.approx(s) for s in sums]   # they ran together: summed, not flagged
    assert 'not_together' not in [f['code'] for f in tables['net']['cells'][0]['flags']]
    report = (run_dir / 'report.md').read_text()
    assert '(8)' not in report and '(4)' not in report
    assert sorted(scratch() - before) == []


TASK_FILE_FIRST_MATRIX = """---
bench_matrix:
  name: it-task-file-first
  repetitions: 2
  methodology: {cooldown_s: 0, quiesce: false}
  cells:
    - name: host-rootfs
      host: localhost
      path: /var/tmp
      labels: {platform: host}
  benchmarks:
    - name: net
      tool: iperf
      params: {time: 1, port: 5393, server_host: localhost, server_address: 127.0.0.1}
    - name: dd-write
      tool: dd
      params: {size: 4M, data: zero}
"""


def test_a_one_task_run_after_a_task_file_run_runs_its_own_run(tmp_path, env):
    """A run with phases (iperf: its server on another task) followed by batched steps: each step runs
    its own run (the old task-file path set the fact bench_run_item, and a set_fact outranks task
    vars: `make bench` re-ran an iperf run in every later one-task step of the host, and the
    dd/compress runs after it never ran)."""
    matrix = tmp_path / 'matrix.yml'
    matrix.write_text(TASK_FILE_FIRST_MATRIX)
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % matrix, '-e', 'bench_install_tools=false'], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    jsonl = load_run(run_dir)[1]
    got = sorted((r['labels']['benchmark'], r['repetition']) for r in jsonl)
    assert got == [('dd-write', 1), ('dd-write', 2), ('net', 1), ('net', 2)], got
    assert all(r['metrics']['bytes']['value'] == 4 * 1024 * 1024 for r in jsonl if r['tool'] == 'dd')


ONE_RUN_MATRIX = """---
bench_matrix:
  name: it-one-run
  repetitions: 1
  methodology: {cooldown_s: 0, quiesce: false}
  cells: [{name: shm, host: localhost, path: /dev/shm, expected_faster: true}]
  benchmarks: [{name: dd-write, tool: dd, params: {test: write, size: 1M}}]
"""


@pytest.mark.parametrize('tools', ['[dd, fio]', '[]'])
def test_install_check_skips_the_package_manager_when_every_tool_is_there(tmp_path, env, tools):
    """The install check is one shell command (ansible.builtin.raw) on the target: with dd and fio
    installed here the facts and the bench_tools role are skipped; an empty tool list is no shell
    syntax error."""
    matrix = tmp_path / 'matrix.yml'
    matrix.write_text(ONE_RUN_MATRIX)
    proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', 'inventories/local', '-v',
                '-e', '@%s' % matrix, '-e', 'bench_install_tools=true', '-e', '{"bench_tools_tools": %s}' % tools], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    check = out[out.index('TASK [Find the tools that are not installed]'):]
    assert check.split('TASK [', 2)[1].count('ok: [localhost]') == 1, check[:2000]
    # the facts are gathered by the role, which is skipped as one task: neither runs
    role = out[out.index("TASK [Install the tools with the collection's role]"):]
    assert 'skipping: [localhost]' in role.split('TASK [', 2)[1], role[:2000]
    assert 'TASK [benchlab.bench.bench_tools' not in out and 'Gather the facts the role needs' not in out
    assert len(run_dirs(tmp_path / 'runs')) == 1


def test_install_check_over_ssh(tmp_path, env):
    """The same check on a host reached over SSH (a network namespace with its own sshd,
    tests/integration/netns_hosts.py; needs the lab lock): ansible.builtin.raw runs it through a
    pty there, whose CR LF line ends and any login banner must not count as a missing tool."""
    if not Path('/usr/sbin/sshd').exists():
        pytest.skip('openssh-server is not installed (.ci/run installs it)')
    absent = [d for d in RUN_DIRS if not d.exists()]
    with ssh_hosts(1, tmp_path / 'fleet') as fleet:
        (tmp_path / 'inventory.yml').write_text(yaml.safe_dump(fleet.inventory()))
        matrix = tmp_path / 'matrix.yml'
        matrix.write_text(ONE_RUN_MATRIX.replace('host: localhost', 'host: node01'))
        proc = run([BIN / 'ansible-playbook', 'playbooks/bench.yml', '-i', tmp_path / 'inventory.yml',
                    '-e', '@%s' % matrix, '-e', 'bench_install_tools=true', '-e', '{"bench_tools_tools": [dd, fio]}'],
                   dict(env, **fleet.env()))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # nothing left behind: /run/netns (ip netns add) and /run/sshd go again when the fleet made them
    assert [d for d in absent if d.exists()] == []
    role = proc.stdout[proc.stdout.index("TASK [Install the tools with the collection's role]"):].split('TASK [', 2)[1]
    assert 'skipping: [node01]' in role, role
    assert 'TASK [benchlab.bench.bench_tools' not in proc.stdout and 'Gather the facts the role needs' not in proc.stdout
    results, _jsonl = load_run(run_dirs(tmp_path / 'runs')[0])
    assert [r['host'] for r in results['records']] == ['node01']
