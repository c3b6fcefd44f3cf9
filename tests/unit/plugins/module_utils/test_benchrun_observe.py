# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BenchRun's observation (module_utils/run/benchrun.py with module_utils/observe/observe.py) around a real
process on this machine: the tool's totals come from its zombie (what it wrote, its CPU), every run
after measure() is observed and none before, the record gets `observed` and `limited_by` and the
result the series, and observe_interval_s 0 (or guards.observe_interval_s) turns it off."""

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.run.benchrun import BenchRun
from ansible_collections.benchlab.bench.plugins.module_utils.observe.observe import DEFAULT_INTERVAL_S


class Exited(Exception):
    pass


class FakeModule(object):
    """What BenchRun uses of AnsibleModule; exit_json/fail_json raise with the result."""

    def __init__(self, **params):
        self.params = dict(guards={'quiesce': False}, keep=False, run_id='unit', run_key='k', labels={},
                           observe_interval_s=DEFAULT_INTERVAL_S)
        self.params.update(params)
        self.check_mode = False
        self.result = None

    def exit_json(self, **result):
        self.result = result
        raise Exited()

    def fail_json(self, **result):
        self.result = dict(result, failed=True)
        raise Exited()


WRITE = ['sh', '-c', 'head -c 3000000 /dev/urandom > out.bin; cat out.bin > /dev/null']


def observed_run(tmp_path, **params):
    module = FakeModule(path=str(tmp_path), **params)
    with pytest.raises(Exited):
        with BenchRun(module, 'unit') as br:
            work = br.workdir_in(str(tmp_path))
            before = br.run(['true'], cwd=work)            # not measured: not observed
            br.measure({})
            res = br.run(WRITE, cwd=work)
            assert res.ok and before.observed is None
            br.exit(bench_result={'cmd': res.argv, 'metrics': {}}, bench_results=[{'cmd': ['other'], 'metrics': {}}])
    return module.result, res


def test_a_measured_run_is_observed_from_its_zombie(tmp_path):
    result, res = observed_run(tmp_path)
    obs = res.observed
    assert obs['samples'] >= 2 and obs['window_s'] > 0 and obs['interval_s'] == 1.0
    # the shell's own /proc/<pid>/io with its reaped children's (head, cat): 3 MB written, then read back
    assert obs['tool']['wchar'] >= 3000000 and obs['tool']['rchar'] >= 2 * 3000000
    assert obs['cpu']['tool_cpu_s'] >= 0 and obs['cpu']['cores'] >= 1
    assert [l['kind'] for l in obs['stack']][:2] == ['path', 'filesystem'] and obs['stack'][0]['name'] == str(tmp_path)
    assert obs['observer_cpu_s'] < obs['window_s']
    rec = result['bench_result']
    assert rec['observed'] is obs and rec['limited_by']['unit'] == '%'
    assert result['bench_observed'] == {obs['series']: result['bench_observed'][obs['series']]}
    assert result['bench_observed'][obs['series']]['t'][0] == 0.0
    # a record of another command is not given this run's observation
    assert 'observed' not in result['bench_results'][0]


@pytest.mark.parametrize('params', [{'observe_interval_s': 0}, {'guards': {'quiesce': False, 'observe_interval_s': 0}}])
def test_observation_off(tmp_path, params):
    result, res = observed_run(tmp_path, **params)
    assert res.observed is None and 'observed' not in result['bench_result'] and 'bench_observed' not in result


def test_the_matrix_interval_wins_over_the_option(tmp_path):
    _result, res = observed_run(tmp_path, observe_interval_s=0, guards={'quiesce': False, 'observe_interval_s': 0.2})
    assert res.observed['interval_s'] == 0.2


# -- a batch's run under observation still ends at its deadline or the batch's stop file ---------------

def _observed_long_run(tmp_path, module):
    with pytest.raises(Exited):
        with BenchRun(module, 'unit') as br:
            work = br.workdir_in(str(tmp_path))
            br.measure({})
            br.run(['sleep', '30.789'], cwd=work)
    return module.result


def _sleep_gone():
    import subprocess
    out = subprocess.run(['ps', '-eo', 'args'], capture_output=True, text=True, check=True).stdout
    return 'sleep 30.789' not in out.splitlines()


def test_an_observed_run_of_a_batch_is_stopped_at_its_timeout(tmp_path):
    import time
    module = FakeModule(path=str(tmp_path), observe_interval_s=0.2)
    module.timeout_s, module.deadline = 0.6, time.monotonic() + 0.6
    t0 = time.monotonic()
    result = _observed_long_run(tmp_path, module)
    assert time.monotonic() - t0 < 10, 'the observed tool ran on past its deadline'
    assert result['failed'] and 'still running after its timeout_s of 0.6 s: stopped' in result['msg'], result
    assert _sleep_gone() and list(tmp_path.iterdir()) == []


def test_an_observed_run_of_a_batch_is_stopped_by_the_stop_file(tmp_path):
    import threading
    stop = str(tmp_path.parent / ('%s.stop' % tmp_path.name))
    module = FakeModule(path=str(tmp_path), observe_interval_s=0.2)
    module.deadline, module.stop_file = None, stop
    timer = threading.Timer(0.5, lambda: open(stop, 'w').close())
    timer.start()
    try:
        result = _observed_long_run(tmp_path, module)
    finally:
        timer.cancel()
    assert result['failed'] and result['msg'].endswith('stopped: the controller that ran the batch went away'), result
    assert _sleep_gone() and list(tmp_path.iterdir()) == []


def test_what_is_watched_is_found_before_the_agreed_moment(tmp_path, monkeypatch):
    """The guards end at guards.start_at; the layer stack and the routes toward a peer (seconds of
    work in a slow guest: CI's TCG guest started its iperf 2.7 s past the agreed moment while tc
    ran after it) are found before, not between that moment and the tool."""
    import time
    from ansible_collections.benchlab.bench.plugins.module_utils.run import benchrun
    calls = []
    layers, routes = benchrun.target_layers, benchrun.route_interfaces
    monkeypatch.setattr(benchrun, 'target_layers', lambda t: calls.append(('layers', time.time())) or layers(t))
    monkeypatch.setattr(benchrun, 'route_interfaces', lambda a: calls.append(('route', time.time())) or routes(a))
    start_at = time.time() + 0.5
    result, res = observed_run(tmp_path, guards={'quiesce': False, 'start_at': start_at,
                                                 'observe_toward': ['127.0.0.1']})
    assert sorted(name for name, _t in calls) == ['layers', 'route'], calls
    assert all(t < start_at for _name, t in calls), (start_at, calls)
    assert res.observed['stack'][0]['name'] == str(tmp_path) and [n['name'] for n in res.observed['net']] == ['lo'], res.observed['net']
