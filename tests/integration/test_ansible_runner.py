"""The Python way in: ansible_runner.run() with records from the events and the report in the artifacts."""

import json
import signal

from conftest import FILES, REPO, ansible_env, runner_run


def test_runner_gets_records_from_events_and_report_from_artifacts(tmp_path):
    env = ansible_env(tmp_path)
    (tmp_path / 'pdd').mkdir()
    env.pop('BENCHLAB_REPORT_DIR')  # under ansible-runner the run directory goes into the artifacts
    envvars = {k: env[k] for k in ('ANSIBLE_CONFIG', 'PATH')}
    handlers = [signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)]
    r = runner_run(private_data_dir=str(tmp_path / 'pdd'), project_dir=str(REPO),
                   playbook=str(REPO / 'playbooks/bench.yml'), inventory=str(REPO / 'inventories/local'),
                   extravars={'bench_install_tools': False,
                              **__import__('yaml').safe_load((FILES / 'matrix-tiny.yml').read_text())},
                   envvars=envvars, quiet=True)
    # ansible-runner's own signal handlers are gone again: Ctrl-C and a timeout's SIGTERM still stop the session
    assert [signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)] == handlers
    assert r.rc == 0 and r.status == 'successful', r.stdout.read()[-3000:]
    records = [e['event_data']['res']['bench_result'] for e in r.events
               if e.get('event') == 'runner_on_ok' and 'bench_result' in e.get('event_data', {}).get('res', {})]
    assert len(records) == 1 and records[0]['tool'] == 'dd'
    reports = [p for p in (tmp_path / 'pdd' / 'artifacts').glob('*/benchlab/*/report.md') if p.parent.name != 'latest']
    assert len(reports) == 1
    results = json.loads((reports[0].parent / 'results.json').read_text())
    assert results['records'][0]['metrics'] == records[0]['metrics']
    stdout = r.stdout.read()
    assert 'benchlab report: %s' % reports[0] in stdout
    # the progress line of the report callback reaches the runner's stdout, and the events still parse
    assert '[cell 1/1] dd-write #1 on host-rootfs (host) — elapsed ' in stdout
    assert any('[cell 1/1] dd-write' in (e.get('stdout') or '') for e in r.events)
