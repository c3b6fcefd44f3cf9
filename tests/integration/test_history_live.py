"""The shared history for real: a private PostgreSQL server (tests/unit/pgserver.py: initdb as the
user postgres into a temporary directory, a free port on 127.0.0.1, a login role with a password
given through PGPASSWORD only; stopped and removed at the end, also on failure), real
ansible-playbook runs into it:

- 8 import.yml runs from 8 directories at the same moment (two of them reusing one run id): every
  run stored once, the counts exact, the second owner of the shared id refused;
- compare.yml and the regression gate reading from PostgreSQL (real dd outputs, files/history-gate:
  a tmpfs baseline, a synchronous-write candidate, the baseline again);
- the database stopped in the middle of a run: the run directory complete, the run failing (exit 1)
  with a clear message and the command that stores it later, and that command (history.yml) storing it once the server is
  back; the password nowhere in any output or file;
- trend.yml over a stored series with a known step, its report.html opened in headless Chromium;
- history_db as a libpq connection string, and as dbname= alone with the rest from PG* variables;
- a SQLite history on a real FUSE sshfs mount (sshfs over a local sftp-server: no network, no
  sshd) refused before any host is touched, naming the PostgreSQL option.
About 60-90 s here."""

import json
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, REPO, ansible_env, run

from ansible_collections.benchlab.bench.plugins.plugin_utils.history.history import list_runs, load_run, open_store, store_run
from ansible_collections.benchlab.bench.tests.unit.pgserver import PgServer, pg_bindir

REFERENCE_000 = REPO / 'playbooks' / 'files' / 'imports' / 'reference-000'
UNIT_FIXTURES = REPO / 'tests' / 'unit' / 'fixtures'
GATE_FILES = Path(__file__).resolve().parent / 'files' / 'history-gate'
pytestmark = pytest.mark.skipif(os.geteuid() != 0 and pg_bindir() is None, reason='needs PostgreSQL (initdb)')


@pytest.fixture(scope='module')
def pg():
    server = PgServer()
    before = os.environ.get('PGPASSWORD')
    try:
        server.start()
        os.environ['PGPASSWORD'] = server.password  # this process reads the history too
        yield server
    finally:
        server.stop()
        if before is None:
            os.environ.pop('PGPASSWORD', None)
        else:
            os.environ['PGPASSWORD'] = before


def _env(tmp, pg, url, **extra):
    env = ansible_env(tmp, BENCHLAB_HISTORY_DB=url, **extra)
    env.update(pg.env())
    return env


def _manifest(tmp, name, cells):
    """A manifest in its own directory over reference-000's real transcripts: {cell: [files]}."""
    d = Path(tmp) / ('manifest-' + name)
    d.mkdir()
    entries = []
    for cell, files in cells.items():
        for f in files:
            shutil.copy(REFERENCE_000 / f, d / f)
            entries.append({'cell': cell, 'tool': 'dd', 'test': 'write', 'bs': 1000000, 'sync_after': True,
                            'params': {'count': 200000, 'data': 'zero'}, 'file': f})
    (d / 'manifest.yml').write_text(json.dumps({'name': name, 'entries': entries}))
    return d / 'manifest.yml'


def _no_password(pg, texts, dirs=()):
    for text in texts:
        assert pg.password not in text
    for d in dirs:
        for path in Path(d).rglob('*'):
            if path.is_file() and not path.is_symlink():
                assert pg.password.encode() not in path.read_bytes(), path


def test_eight_controllers_store_into_one_postgresql_at_once(pg, tmp_path):
    url = pg.new_database('conc')
    manifest = _manifest(tmp_path, 'conc', {'host': ['nohup-test1.out', 'nohup-test2.out']})
    procs = []
    for i in range(8):
        cwd = tmp_path / ('ctl-%d' % i)
        cwd.mkdir()
        env = _env(cwd, pg, url, BENCHLAB_RUN_LABEL='ctl-%d' % i)
        del env['BENCHLAB_REPORT_DIR']  # each controller's own ./benchlab-runs
        if i >= 6:
            env['BENCHLAB_RUN_ID'] = '20261204T000000Z-shared'
        procs.append(subprocess.Popen([str(BIN / 'ansible-playbook'), str(REPO / 'playbooks' / 'import.yml'),
                                       '-e', 'import_manifest=%s' % manifest], cwd=str(cwd), env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=600) for p in procs]
    texts = [o[0] + o[1] for o in outs]
    assert [p.returncode for p in procs[:6]] == [0] * 6, '\n=====\n'.join(t[-3000:] for t in texts)
    _no_password(pg, texts, [tmp_path])
    runs = list_runs(url)
    errors = ['ctl-%d: %s' % (i, line) for i, t in enumerate(texts) for line in t.splitlines() if 'ERROR' in line]
    assert len(runs) == 7 and len(set(r['run_id'] for r in runs)) == 7, '\n'.join(
        [r['label'] + ' ' + r['run_id'] for r in runs] + errors)
    # the shared run id: one controller owns it; the other is refused - before any host when the
    # owner had stored it by its start (the plan stops, rc 2), else at the end (its run directory kept)
    shared = [r for r in runs if r['run_id'] == '20261204T000000Z-shared']
    owner = int(shared[0]['label'].split('-')[1])
    loser = 13 - owner
    assert procs[owner].returncode == 0, texts[owner][-3000:]
    assert 'already in the history' in texts[loser] and 'another controller' in texts[loser], texts[loser][-3000:]
    if 'nothing is run' not in texts[loser]:  # refused at the end: measured, not stored, the run fails
        assert procs[loser].returncode == 1 and 'the run fails: run 20261204T000000Z-shared not stored' in texts[loser]
        assert (tmp_path / ('ctl-%d' % loser) / 'benchlab-runs' / '20261204T000000Z-shared' / 'results.json').is_file()
    else:
        assert procs[loser].returncode == 2
    assert sorted(r['label'] for r in runs) == sorted(['ctl-%d' % i for i in range(6)] + ['ctl-%d' % owner])
    with open_store(url) as store:
        dump = store.dump()
    for row, doc in dump['runs']:
        ctl = row['label']
        run_dir = tmp_path / ctl / 'benchlab-runs' / row['run_id']
        assert row['controller'].endswith(':%s' % run_dir)  # stored by the controller that ran it
        with open(run_dir / 'results.json') as f:
            assert json.load(f)['records'] == doc['records']
    per_run = sum(len(r['metrics']) for r in dump['runs'][0][1]['records'])
    assert per_run > 0 and len(dump['metrics']) == 7 * per_run


def _dd_manifest(tmp, name, files):
    d = Path(tmp) / ('manifest-' + name)
    d.mkdir()
    for f in files:
        shutil.copy(GATE_FILES / f, d / f)
    (d / 'manifest.yml').write_text(json.dumps({'name': 'gate', 'entries': [
        {'cell': 'shm', 'tool': 'dd', 'test': 'write', 'file': f} for f in files]}))
    return d / 'manifest.yml'


def test_compare_and_the_regression_gate_against_postgresql(pg, tmp_path):
    """Real dd outputs (files/history-gate): a baseline run, a slow candidate, the baseline again."""
    url = pg.new_database('gate')
    base = _dd_manifest(tmp_path, 'base', ['fast-1.txt', 'fast-2.txt', 'fast-3.txt'])
    cand = _dd_manifest(tmp_path, 'cand', ['slow-1.txt', 'slow-2.txt', 'slow-3.txt'])
    for label, manifest in (('before', base), ('after', cand), ('before-again', base)):
        proc = run([BIN / 'ansible-playbook', 'playbooks/import.yml', '-e', 'import_manifest=%s' % manifest],
                   _env(tmp_path, pg, url, BENCHLAB_RUN_LABEL=label))
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert 'stored in %s' % url in proc.stdout
    env = _env(tmp_path, pg, url)
    gate = run([BIN / 'ansible-playbook', 'playbooks/compare.yml', '-e', 'baseline=before',
                '-e', 'candidate=after', '-e', 'fail_on_regression=true'], env)
    assert gate.returncode != 0
    assert 'benchlab regression gate' in gate.stdout and 'REGRESSION' in gate.stdout, gate.stdout[-3000:]
    # the same three outputs again: three repetitions cannot rule out a 5% regression, and a gate
    # that cannot judge fails, naming what it could not judge and the repetitions that would settle it
    same = run([BIN / 'ansible-playbook', 'playbooks/compare.yml', '-e', 'baseline=before',
                '-e', 'candidate=before-again', '-e', 'fail_on_regression=true'], env)
    assert same.returncode != 0, same.stdout[-3000:]
    assert 'could not be judged' in same.stdout and 'REGRESSION' not in same.stdout, same.stdout[-3000:]
    assert 'repetitions per side would settle it' in same.stdout, same.stdout[-3000:]
    # with a margin those three repetitions can settle, the same data passes as no regression
    wide = run([BIN / 'ansible-playbook', 'playbooks/compare.yml', '-e', 'baseline=before',
                '-e', 'candidate=before-again', '-e', 'fail_on_regression=true',
                '-e', 'regression_threshold=40'], env)
    assert wide.returncode == 0 and 'no regression' in wide.stdout, wide.stdout[-3000:]
    assert 'could not be judged' not in wide.stdout, wide.stdout[-3000:]
    _no_password(pg, [gate.stdout, gate.stderr, same.stdout, same.stderr, wide.stdout, wide.stderr],
                 [tmp_path / 'runs'])


LOST_PLAYBOOK = """---
- name: Import (the run under test)
  ansible.builtin.import_playbook: {import_yml}
- name: Wait until the test has stopped the database
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Wait for the flag
      ansible.builtin.wait_for:
        path: {flag}
        timeout: 300
"""


def test_a_database_lost_mid_run_keeps_the_run_and_stores_it_later(pg, tmp_path):
    url = pg.new_database('lost')
    manifest = _manifest(tmp_path, 'lost', {'host': ['nohup-test1.out', 'nohup-test2.out'],
                                            'vps': ['nohup-test3.out', 'nohup-test4.out']})
    flag = tmp_path / 'database-stopped'
    playbook = tmp_path / 'lost.yml'
    playbook.write_text(LOST_PLAYBOOK.format(import_yml=REPO / 'playbooks' / 'import.yml', flag=flag))
    env = _env(tmp_path, pg, url, BENCHLAB_RUN_ID='20261204T010000Z-lost', BENCHLAB_RUN_LABEL='nightly')
    run_dir = tmp_path / 'runs' / '20261204T010000Z-lost'
    proc = subprocess.Popen([str(BIN / 'ansible-playbook'), str(playbook), '-e', 'import_manifest=%s' % manifest],
                            cwd=str(REPO), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            jsonl = run_dir / 'results.jsonl'
            if jsonl.exists() and len(jsonl.read_text().splitlines()) == 4:
                break
            time.sleep(0.2)
        pg.pause()  # the database goes away mid-run
        flag.write_text('stopped\n')
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        if not pg.running:
            pg.resume()
    assert proc.returncode == 1, out[-3000:] + err[-3000:]  # measured but not stored: the run fails
    text = out + err
    assert 'the run fails: run 20261204T010000Z-lost not stored in the history' in text
    assert 'run 20261204T010000Z-lost not stored in the history: history database %s: cannot connect' % url in text
    assert 'holds every record' in text
    results = json.loads((run_dir / 'results.json').read_text())
    assert len(results['records']) == 4 and (run_dir / 'report.md').is_file() and (run_dir / 'report.html').is_file()
    line = next(l for l in text.splitlines() if 'to store run 20261204T010000Z-lost later: ' in l)
    command = shlex.split(line.split('later: ', 1)[1])
    assert command[:2] == ['ansible-playbook', 'benchlab.bench.history'] and 'history_label=nightly' in command
    # the server is back: the printed command stores it, as this controller's run
    later = run([BIN / 'ansible-playbook'] + command[1:], env)
    assert later.returncode == 0, later.stdout[-3000:] + later.stderr[-3000:]
    assert 'run 20261204T010000Z-lost stored in %s' % url in later.stdout
    stored = load_run(url, 'nightly')
    assert stored['run_id'] == '20261204T010000Z-lost' and stored['records'] == results['records']
    again = run([BIN / 'ansible-playbook'] + command[1:], env)
    assert again.returncode == 0 and 'already in' in again.stdout
    assert [r['run_id'] for r in list_runs(url)] == ['20261204T010000Z-lost']
    _no_password(pg, [text, later.stdout, later.stderr], [tmp_path / 'runs'])


def test_sqlite_on_an_sshfs_mount_is_refused(tmp_path):
    sshfs = shutil.which('sshfs')
    if sshfs is None or not os.path.exists('/usr/lib/openssh/sftp-server'):
        pytest.skip('sshfs or openssh-sftp-server is not installed (Debian packages sshfs, openssh-sftp-server: '
                    '.ci/run installs them)')
    src, mnt = tmp_path / 'served', tmp_path / 'mnt'
    src.mkdir()
    mnt.mkdir()
    wrapper = tmp_path / 'sftp.sh'
    wrapper.write_text('#!/bin/sh\nexec /usr/lib/openssh/sftp-server\n')  # sshfs talks SFTP to it on a pipe
    wrapper.chmod(0o755)
    subprocess.run([sshfs, '-o', 'ssh_command=%s' % wrapper, 'localhost:%s' % src, str(mnt)], check=True, timeout=60)
    try:
        assert any(' %s ' % mnt in line and ' - fuse.sshfs ' in line for line in open('/proc/self/mountinfo'))
        db = mnt / 'team' / 'history.sqlite'
        proc = run([BIN / 'ansible-playbook', 'playbooks/import.yml', '-e',
                    'import_manifest=%s' % (REFERENCE_000 / 'manifest.yml')],
                   ansible_env(tmp_path, BENCHLAB_HISTORY_DB=str(db)))
        assert proc.returncode != 0
        text = ' '.join((proc.stdout + proc.stderr).split())
        assert 'history_db %s is on a network file system (fuse.sshfs, mounted at %s)' % (db, mnt) in text
        assert 'postgresql://USER@HOST:5432/DBNAME' in text
        # refused before anything was written: nothing on the share (no history file, no directory for
        # it), and no run directory holding records
        assert sorted(str(p.relative_to(src)) for p in src.rglob('*')) == []
        runs = tmp_path / 'runs'
        assert not runs.exists() or list(runs.rglob('results.jsonl')) == [], list(runs.rglob('*'))
    finally:
        for umount in (['fusermount3', '-u'], ['fusermount', '-u'], ['umount']):
            if shutil.which(umount[0]) and subprocess.run(umount + [str(mnt)], capture_output=True, check=False).returncode == 0:
                break


# -- trend.yml over a stored series, in Chromium ---------------------------------------------------------

def _series(url):
    """16 runs of one matrix stored in the history: the records of a real run (fixtures/report) with
    their values scaled - 1.0 for runs 0-8, 0.7 from run 9, when the kernel release changes - and a
    per-run jitter of +-1 %; the run's real environment with the kernel set per run."""
    with open(UNIT_FIXTURES / 'report' / 'local-small-results.jsonl') as f:
        records = [json.loads(line) for line in f]
    with open(UNIT_FIXTURES / 'report' / 'local-small-environment.json') as f:
        environment = json.load(f)
    ids = []
    for i in range(16):
        factor = (1.0 if i < 9 else 0.7) * (1.0 + 0.01 * ((i * 7) % 5 - 2) / 2.0)
        recs = []
        for rec in records:
            metrics = dict((k, dict(m, value=m['value'] * factor if k == 'throughput' and m['value'] else m['value']))
                           for k, m in rec['metrics'].items())
            recs.append(dict(rec, metrics=metrics))
        env = json.loads(json.dumps(environment))
        for cell in env.values():
            cell['kernel']['release'] = '6.18.44-fc-v1045' if i < 9 else '6.18.45-fc-v1046'
        run_id = '202611%02dT220000Z-t%04d' % (i + 1, i)
        ids.append(run_id)
        store_run(url, dict(run_id=run_id, started='2026-11-%02dT22:00:00Z' % (i + 1), finished=None, user='ci',
                            inventory='inventories/local', playbook='bench.yml', matrix='nightly-local',
                            collection_version='0.1.0', status='complete', invalid=[], failed=[], records=recs,
                            environment=env, plan=None, analysis={'benchmarks': []}))
    return ids


def test_trend_playbook_finds_the_step_and_its_kernel_in_chromium(pg, tmp_path):
    from test_report_html import CHROMIUM, NO_CHROMIUM, Browser, _load, png_colours
    url = pg.new_database('trend')
    ids = _series(url)
    env = _env(tmp_path, pg, url)
    proc = run([BIN / 'ansible-playbook', 'playbooks/trend.yml', '-e', 'trend_matrix=nightly-local',
                '-e', 'trend_cell=host-rootfs', '-e', 'trend_benchmark=dd-write', '-e', 'trend_metric=throughput'], env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert 'dd-write / host-rootfs / throughput over 16 run(s): 1 change point' in proc.stdout
    assert 'change at #9 %s' % ids[9] in proc.stdout and 'kernel.release' in proc.stdout
    (rundir,) = [p for p in (tmp_path / 'runs').iterdir() if p.name.startswith('trend-dd-write-host-rootfs-throughput')]
    results = json.loads((rundir / 'results.json').read_text())
    trend = results['trend']
    assert [p['run_id'] for p in trend['series']] == ids
    (cp,) = trend['change_points']
    assert cp['index'] == 9 and cp['run_id'] == ids[9] and -32 < cp['delta_pct'] < -28
    assert cp['changed_environment'] == {'kernel.release': ['6.18.44-fc-v1045', '6.18.45-fc-v1046']}
    for name in ('results.csv', 'report.md', 'report.html'):
        assert (rundir / name).stat().st_size > 0
    _no_password(pg, [proc.stdout, proc.stderr], [tmp_path / 'runs'])
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    browser = Browser(tmp_path / 'trend-chromium-profile')
    try:
        page = (rundir / 'report.html').as_uri()
        session = _load(browser, rundir / 'report.html')
        probe = browser.send('Runtime.evaluate', {'returnByValue': True, 'expression': '''JSON.stringify((() => {
            const box = e => e.getBoundingClientRect();
            const points = Array.from(document.querySelectorAll('svg.trend circle.point'));
            const change = document.querySelector('svg.trend line.change');
            const band = document.querySelector('svg.trend polygon.band');
            return {points: points.length, drawn: points.filter(p => box(p).width > 0).length,
                    xs: points.map(p => box(p).x + box(p).width / 2),
                    changes: document.querySelectorAll('svg.trend line.change').length,
                    changeX: change ? box(change).x + box(change).width / 2 : null,
                    bandHeight: band ? box(band).height : 0,
                    rows: document.querySelectorAll('table.changes tr.change').length,
                    env: Array.from(document.querySelectorAll('table.changes code')).map(c => c.textContent),
                    title: document.title};
        })())'''}, session=session)
        dom = json.loads(probe['result']['value'])
        shot = __import__('base64').b64decode(browser.send('Page.captureScreenshot', {'format': 'png'},
                                                           session=session)['data'])
        (tmp_path / 'trend.png').write_bytes(shot)
    finally:
        browser.close()
    assert dom['points'] == dom['drawn'] == 16, dom
    assert dom['changes'] == 1 and dom['xs'][8] < dom['changeX'] < dom['xs'][9], dom
    assert dom['bandHeight'] > 0 and dom['rows'] == 1 and dom['env'] == ['kernel.release'], dom
    assert dom['title'] == 'benchlab trend: dd-write / host-rootfs / throughput'
    assert len(png_colours(shot)) > 8
    errors = [e for e in browser.events if e.get('method') == 'Runtime.exceptionThrown'
              or (e.get('method') == 'Runtime.consoleAPICalled' and e['params'].get('type') in ('error', 'assert'))]
    assert errors == []
    requests = [e['params']['request']['url'] for e in browser.events if e.get('method') == 'Network.requestWillBeSent']
    assert requests == [page]


def test_a_libpq_connection_string_and_the_pg_variables_reach_postgresql(pg, tmp_path):
    """history_db as a libpq keyword string, and as a bare dbname= with the rest from PGHOST,
    PGPORT and PGUSER: both are the PostgreSQL history (before: taken for relative SQLite paths),
    named as given, the password from PGPASSWORD only."""
    url = pg.new_database('conninfo')
    manifest = _manifest(tmp_path, 'conninfo', {'host': ['nohup-test1.out', 'nohup-test2.out']})
    conninfo = 'host=127.0.0.1 port=%d user=%s dbname=conninfo' % (pg.port, pg.user)
    env = _env(tmp_path, pg, conninfo, BENCHLAB_RUN_ID='20261206T000000Z-conninfo')
    proc = run([BIN / 'ansible-playbook', REPO / 'playbooks' / 'import.yml', '-e', 'import_manifest=%s' % manifest],
               env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert 'run 20261206T000000Z-conninfo stored in %s' % conninfo in proc.stdout
    assert [r['run_id'] for r in list_runs(url)] == ['20261206T000000Z-conninfo']
    bare = _env(tmp_path, pg, 'dbname=conninfo', PGHOST='127.0.0.1', PGPORT=str(pg.port), PGUSER=pg.user)
    listed = run([BIN / 'ansible-playbook', REPO / 'playbooks' / 'history.yml', '-e', 'history_action=list'], bare)
    assert listed.returncode == 0 and '1 run(s) in dbname=conninfo' in listed.stdout, listed.stdout[-3000:]
    assert '20261206T000000Z-conninfo' in listed.stdout
    assert not list(Path(REPO).glob('*conninfo*')) and not list(tmp_path.glob('*conninfo*.sqlite'))
    _no_password(pg, [proc.stdout, proc.stderr, listed.stdout, listed.stderr], [tmp_path / 'runs'])
