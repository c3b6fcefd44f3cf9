"""The field reports' scenarios, local renditions, for real (scenarios/<name>/local.yml): each runs
through playbooks/lab_bench.yml on the integration tests' shared LXC lab (conftest.shared_lab: built
by the first run, used as it is by the next ones with local_lab_reuse), at its smallest (one
repetition, tiny sizes: the wiring, not the numbers), and the records show each report's method.

`make bench SCENARIO=<name>` runs the same file at its own sizes with the default lab (prefix bl,
198.18.0.0/16). Here the lab has its own prefix `bls` and addresses (198.19.64.0/24 bridged,
198.19.65.x routed), so a `make bench` lab or test_local_lab's `blt` lab can exist at the same time;
the rendition files are rewritten accordingly (guest names bl-gN -> bls-gN, addresses) and shrunk
by smallest() below. The lab has the five guests the KVM rendition needs; the others use two.
No mock: DRBD, OpenVZ and KVM do not exist here, and the renditions say what stands in for them
(scenarios/<name>/README.md)."""

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from conftest import BIN, REPO, SHARED_LAB_PREFIX, ansible_env, load_run, run, run_dirs

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

PREFIX = SHARED_LAB_PREFIX
HOST_ADDR = '198.19.64.1'
RENAMES = [('bl-g', PREFIX + '-g'), ('198.18.0.', '198.19.64.'), ('198.18.1.', '198.19.65.')]
SCENARIOS = REPO / 'scenarios'

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which('lxc-start') or not shutil.which('mmdebstrap'),
    reason='the local lab needs root, lxc and mmdebstrap')


def renamed(obj):
    """The rendition with this test's lab names and addresses."""
    if isinstance(obj, str):
        for old, new in RENAMES:
            obj = obj.replace(old, new)
        return obj
    if isinstance(obj, dict):
        return {k: renamed(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [renamed(v) for v in obj]
    return obj


# Per tool, the smallest parameters that still run the tool as the rendition asks it to.
SMALLEST = {
    'dd': {'size': '16M'},
    'bonnie': {'size': '64', 'ram': '32', 'files': '1'},
    'dbench': {'time': 2},
    'sysbench_fileio': {'size': '16M', 'time': 2},
    'iperf': {'time': 1},
    'compress': {},
    'fio': {'size': '16M', 'runtime': 1},
}


def smallest(matrix):
    """One repetition, no cool-down, tiny sizes; a client sweep keeps its first two counts."""
    m = dict(matrix, repetitions=1)
    m['methodology'] = dict(m.get('methodology') or {}, cooldown_s=0)
    m['methodology'].pop('budget_s', None)     # one repetition each: no extra rounds (test_gate_live.py runs them)
    benchmarks = []
    for b in m['benchmarks']:
        params = dict(b.get('params') or {}, **SMALLEST[b['tool']])
        if b['tool'] == 'dbench':
            params['clients'] = params.get('clients', [1])[:2]
        benchmarks.append(dict(b, params=params))
    m['benchmarks'] = benchmarks
    return m


def lab_vars(shared):
    """The shared lab's variables (conftest.SHARED_LAB_VARS), whose guests are the KVM rendition's renamed."""
    guests = yaml.safe_load((SCENARIOS / 'kvm_versions' / 'local.yml').read_text())['local_lab_guests']
    assert renamed(guests) == shared['local_lab_guests'], (renamed(guests), shared['local_lab_guests'])
    return shared


@pytest.fixture(scope='module')
def lab(shared_lab):
    """One lab for every rendition: built by the first run, used as it is by the next ones
    (local_lab_reuse), torn down at the end of the session."""
    return lab_vars(shared_lab)


def run_rendition(tmp_path, lab, matrix, extra=None, history=None):
    env = ansible_env(tmp_path, **({'BENCHLAB_HISTORY_DB': str(history)} if history else {}))
    vars_file = tmp_path / 'vars.json'
    vars_file.write_text(json.dumps(dict(lab, bench_lab_matrix=smallest(renamed(matrix)), **(extra or {}))))
    proc = run([BIN / 'ansible-playbook', 'playbooks/lab_bench.yml', '-i', 'inventories/local',
                '-e', '@%s' % vars_file], env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    runs = run_dirs(tmp_path / 'runs')
    assert len(runs) == 1
    results, jsonl = load_run(runs[0])
    assert jsonl, 'no records'
    for rec in jsonl:
        assert validate_record({k: v for k, v in rec.items() if k not in ('host', 'cell_key')}) == []
    return results, jsonl, runs[0]


def rendition(name):
    return yaml.safe_load((SCENARIOS / name / 'local.yml').read_text())['bench_lab_matrix']


def warning_texts(rec):
    """Warnings as text, whether plain strings or {code, message} mappings."""
    return [w if isinstance(w, str) else '%s %s' % (w.get('code', ''), w.get('message', ''))
            for w in rec.get('warnings') or []]


def assert_source_off_the_storage_under_test(rec):
    """A random write read its source from the guest's or host's tmpfs, and no trap says otherwise."""
    assert rec['params']['data'] == 'random'
    assert rec['params']['data_source'] in ('tmpfs', '/dev/shm'), rec['params']
    assert not [w for w in warning_texts(rec) if 'source' in w and 'storage under test' in w], rec['warnings']
    flags = (rec.get('params') or {}).get('flags') or []
    assert 'source_on_test_storage' not in flags


def per_cell(jsonl, benchmark=None):
    return Counter(r['labels']['cell'] for r in jsonl if benchmark is None or r['labels']['benchmark'] == benchmark)


def test_drbd_2x2(tmp_path, lab):
    _results, jsonl, _run_dir = run_rendition(tmp_path, lab, rendition('drbd_2x2'))
    assert per_cell(jsonl) == {'host-nodrbd': 1, 'vps-nodrbd': 1, 'host-drbd': 1, 'vps-drbd': 1}
    by = {r['labels']['cell']: r for r in jsonl}
    for rec in jsonl:
        assert rec['tool'] == 'dd' and rec['test'] == 'write'
        assert 'conv=fdatasync' in rec['cmd']
        assert_source_off_the_storage_under_test(rec)
    # host-drbd writes into the loop guest's file system from the host: the loop stand-in
    assert by['host-drbd']['host'] == 'localhost'
    assert '/var/lib/lxc/%s-g2/rootfs/var/tmp/' % PREFIX in ' '.join(by['host-drbd']['cmd'])
    assert by['vps-drbd']['labels']['storage'] == 'loop' and by['vps-nodrbd']['labels']['storage'] == 'dir'


def options(cmd):
    """bonnie++'s size, RAM and file-count options of a command line."""
    return {opt: cmd[cmd.index(opt) + 1] for opt in ('-s', '-r', '-n')}


def test_vps_bonnie_bzip2(tmp_path, lab):
    _results, jsonl, _run_dir = run_rendition(tmp_path, lab, rendition('vps_bonnie_bzip2'))
    bonnie = [r for r in jsonl if r['tool'] == 'bonnie++']
    assert per_cell(bonnie) == {'host': 1, 'ct-dir': 1, 'ct-loop': 1}
    # the same invocation on every machine: -s, -r and -n equal, -u given (its uid:gid is the
    # machine's own), only the directory differs
    assert [options(r['cmd']) for r in bonnie] == [{'-s': '64', '-r': '32', '-n': '1'}] * 3, [r['cmd'] for r in bonnie]
    assert all('-u' in r['cmd'] for r in bonnie)
    bzip = [r for r in jsonl if r['tool'] == 'compress']
    assert sorted(Counter(r['test'] for r in bzip).items()) == [('bzip2-9-compress', 3), ('bzip2-decompress', 3)]
    for rec in bzip:
        assert rec['params']['input'] == 'file' and rec['params']['input_path'] == '/usr/bin/python3.11'
        assert rec['params']['bytes'] > 1000000 and len(rec['params']['input_sha256']) == 64
        assert rec['metrics']['elapsed']['value'] > 0 and rec['metrics']['user']['value'] >= 0


def test_ploop_simfs(tmp_path, lab):
    results, jsonl, _run_dir = run_rendition(tmp_path, lab, rendition('ploop_simfs'))
    cells = {'vzhost', 'simfs-ct', 'ploop-ct'}
    # the client sweep is one table across the counts, the cells as rows
    (sweep,) = [p for p in results['analysis']['pivots'] if p['factor'] == 'clients']
    assert sweep['columns'] == [1, 2] and {r['cell'] for r in sweep['rows']} == cells
    assert all(e and e['n'] == 1 for row in sweep['cells'] for e in row), sweep['cells']
    assert set(per_cell(jsonl, 'dd-write')) == set(per_cell(jsonl, 'dd-write-zeros')) == cells
    for rec in jsonl:
        if rec['labels']['benchmark'] == 'dd-write':
            assert_source_off_the_storage_under_test(rec)
        if rec['labels']['benchmark'] == 'dd-write-zeros':
            assert rec['params']['data'] == 'zero' and 'if=/dev/zero' in rec['cmd']
            assert any('zero' in w for w in warning_texts(rec)), rec['warnings']
    dbench = Counter((r['labels']['cell'], r['params']['clients']) for r in jsonl if r['tool'] == 'dbench')
    assert dbench == {(c, n): 1 for c in cells for n in (1, 2)}, dbench
    assert per_cell(jsonl, 'sysbench-fileio') == {c: 1 for c in cells}
    for rec in jsonl:
        if rec['tool'] == 'sysbench':
            assert rec['params']['mode'] == 'rndrw'


def test_bonnie_drbd(tmp_path, lab):
    """Both nodes with and without the layer, per-node baselines; then the same rendition as a second
    "generation" into the same history, and compare.yml compares the two stored runs (reference 003)."""
    db = tmp_path / 'history.sqlite'
    ids = []
    for gen in ('dio', 'buffered'):
        (tmp_path / gen).mkdir()
        _results, jsonl, run_dir = run_rendition(tmp_path / gen, lab, rendition('bonnie_drbd'),
                                                 {'scen_drbd_generation': gen}, history=db)
        ids.append(run_dir.name)
        assert per_cell(jsonl) == {'host-nodrbd': 1, 'host-drbd': 1, 'guest-nodrbd': 1, 'guest-drbd': 1}
        for rec in jsonl:
            assert rec['tool'] == 'bonnie++'
            assert rec['labels']['drbd_gen'] == gen
            assert rec['labels']['node'] == ('host' if rec['labels']['cell'].startswith('host') else 'guest')
            assert rec['metrics']['seq_output_block']['value'] is None or rec['metrics']['seq_output_block']['value'] > 0
    proc = run([BIN / 'ansible-playbook', 'playbooks/compare.yml', '-e', 'history_db=%s' % db,
                '-e', 'baseline=%s' % ids[0], '-e', 'candidate=%s' % ids[1], '-e', 'output_dir=%s' % (tmp_path / 'compare')],
               ansible_env(tmp_path, BENCHLAB_HISTORY_DB=str(db)))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    out = tmp_path / 'compare' / ('compare-%s-vs-%s' % (ids[1], ids[0]))
    report = (out / 'report.md').read_text()
    for cell in ('host-nodrbd', 'host-drbd', 'guest-nodrbd', 'guest-drbd'):
        assert '%s @ baseline' % cell in report and '%s @ candidate' % cell in report, cell


def test_kvm_versions(tmp_path, lab):
    _results, jsonl, _run_dir = run_rendition(tmp_path, lab, rendition('kvm_versions'))
    dd = Counter((r['labels']['cell'], r['test']) for r in jsonl if r['tool'] == 'dd')
    assert dd == {('host-disk', 'read'): 1, ('ct-disk', 'read'): 1, ('host-disk', 'copy'): 1, ('ct-disk', 'copy'): 1}
    for rec in jsonl:
        if rec['tool'] == 'dd':
            assert 'bs=%d' % (16 * 1024 * 1024) in rec['cmd']
    iperf = [r for r in jsonl if r['labels']['benchmark'] == 'iperf']
    assert {r['tool'] for r in iperf} == {'iperf'}   # iperf 2, as the report
    directions = Counter((r['labels']['net'], r['labels']['direction']) for r in iperf)
    for net in ('bridged', 'routed'):
        for d in ('ext-vm', 'host-vm', 'vm-vm', 'vm-ext'):
            assert directions[(net, d)] == 1, directions
        assert directions[(net, 'vm-host')] == 1 + 2, directions   # one guest, then two at once
    assert directions[('host', 'host-ext')] == directions[('host', 'ext-host')] == 1
    assert directions[('mixed', 'vm-host')] == 4
    for rec in iperf:
        assert rec['metrics']['throughput']['value'] > 0
        assert rec['cmd'][rec['cmd'].index('-w') + 1] in ('256k', '256K', '262144')


def test_default_lab_matrix_reads_no_source_from_the_storage_under_test(tmp_path, lab):
    """Issue 17 section 2: the dd writes of the default `make bench` matrix, in every guest, read their
    random source from the guest's tmpfs (the lab gives each guest /dev/shm with room)."""
    default = yaml.safe_load((REPO / 'inventories/local/group_vars/all/lab_matrix.yml').read_text())['bench_lab_matrix']
    matrix = dict(default, benchmarks=[b for b in default['benchmarks'] if b['tool'] == 'dd'])
    _results, jsonl, run_dir = run_rendition(tmp_path, lab, matrix)
    writes = [r for r in jsonl if r['test'] == 'write']
    assert {r['labels']['cell'] for r in writes} == {'host-rootfs', 'ct-dir', 'ct-loop'}
    for rec in writes:
        assert_source_off_the_storage_under_test(rec)
    # the report names the trap only in its per-trap rate line, and there with 0 runs flagged
    report = Path(run_dir / 'report.md').read_text()
    rate = 'source_on_test_storage (source read from the storage under test): 0 of '
    assert rate in report
    assert [line for line in report.splitlines() if 'storage under test' in line and rate not in line] == []
