"""The bench_tools role's platform logic, run for real through ansible-playbook.

There is no EL host on this machine: the EL path is covered by resolving its package lists
(vars/RedHat-{7,8,9}.yml) and rendering its repository definition with the role's own task files
(`tasks_from: resolve` / `repos_el`). The Debian path is applied for real (test_bench_playbook.py
applies the role twice and checks the second run changes nothing).
"""

import configparser
import json

import pytest

from conftest import REPO, runner_run

ROLE = REPO / 'roles/bench_tools'


def play(tmp_path, env, tasks, extra=None):
    """Run a one-play playbook through ansible-runner; return (rc, runner)."""
    pdd = tmp_path / 'pdd'
    pdd.mkdir(exist_ok=True)
    book = tmp_path / 'play.yml'
    book.write_text(json.dumps([{'name': 'role logic', 'hosts': 'localhost', 'gather_facts': False,
                                 'vars': extra or {}, 'tasks': tasks}]))
    r = runner_run(private_data_dir=str(pdd), playbook=str(book), inventory=str(REPO / 'inventories/local'),
                   envvars={'ANSIBLE_CONFIG': env['ANSIBLE_CONFIG'], 'PATH': env['PATH']},
                   quiet=True)
    return r.rc, r


def task_results(r, name):
    return [e['event_data']['res'] for e in r.events if e['event'] in ('runner_on_ok', 'runner_on_failed')
            and e['event_data'].get('task') == name]


def failures(r):
    return [e['event_data']['res'] for e in r.events if e['event'] == 'runner_on_failed']


def resolve(tmp_path, env, vars_file, tools=None):
    tasks = [
        {'name': 'platform vars', 'ansible.builtin.include_vars': str(ROLE / 'vars' / vars_file)},
        {'name': 'resolve', 'ansible.builtin.include_role': {'name': 'benchlab.bench.bench_tools', 'tasks_from': 'resolve'}},
        {'name': 'show', 'ansible.builtin.debug': {'var': '__bench_tools_packages'}},
    ]
    return play(tmp_path, env, tasks, {'bench_tools_tools': tools} if tools else None)


@pytest.mark.parametrize('vars_file,expected', [
    ('Debian.yml', ['coreutils', 'fio', 'bonnie++', 'dbench', 'sysbench', 'iperf3', 'iperf', 'bzip2', 'gzip', 'xz-utils', 'zstd', 'time', 'ioping']),
    ('RedHat-7.yml', ['coreutils', 'fio', 'bonnie++', 'dbench', 'sysbench', 'iperf3', 'iperf', 'bzip2', 'gzip', 'xz', 'zstd', 'time', 'ioping']),
    ('RedHat-8.yml', ['coreutils', 'fio', 'bonnie++', 'dbench', 'sysbench', 'iperf3', 'iperf', 'bzip2', 'gzip', 'xz', 'zstd', 'time', 'ioping']),
])
def test_every_tool_resolves_to_packages(tmp_path, env, vars_file, expected):
    rc, out = resolve(tmp_path, env, vars_file)
    assert rc == 0, failures(out)
    assert task_results(out, 'show')[0]['__bench_tools_packages'] == expected


def test_default_list_on_el9_leaves_dbench_out_with_a_warning(tmp_path, env):
    """EL 9 has no dbench package: the default tool list still resolves (the role does not fail),
    the warning names dbench, and bench_tools_skipped says what was left out."""
    rc, out = resolve(tmp_path, env, 'RedHat-9.yml')
    assert rc == 0, failures(out)
    assert task_results(out, 'show')[0]['__bench_tools_packages'] == [
        'coreutils', 'fio', 'bonnie++', 'sysbench', 'iperf3', 'iperf', 'bzip2', 'gzip', 'xz', 'zstd', 'time', 'ioping']
    (warning,) = task_results(out, 'Warn about the tools left out (no package on this platform)')
    assert warning['msg'].startswith('WARNING: bench_tools: no package for dbench on') and 'bench_tools_tools' in warning['msg']
    (found,) = task_results(out, 'Find the tools this platform has no package for')
    assert found['ansible_facts']['bench_tools_skipped'] == ['dbench']


@pytest.mark.parametrize('vars_file', ['Debian.yml', 'RedHat-7.yml', 'RedHat-8.yml', 'RedHat-9.yml'])
def test_default_list_resolves_on_every_platform(tmp_path, env, vars_file):
    rc, out = resolve(tmp_path, env, vars_file)
    assert rc == 0, failures(out)
    assert task_results(out, 'show')[0]['__bench_tools_packages']


def test_a_tool_without_a_package_fails_with_its_name_when_asked(tmp_path, env):
    tasks_vars = {'bench_tools_missing': 'fail'}
    tasks = [
        {'name': 'platform vars', 'ansible.builtin.include_vars': str(ROLE / 'vars' / 'RedHat-9.yml')},
        {'name': 'resolve', 'ansible.builtin.include_role': {'name': 'benchlab.bench.bench_tools', 'tasks_from': 'resolve'}},
    ]
    rc, out = play(tmp_path, env, tasks, tasks_vars)
    assert rc != 0
    failed = failures(out)
    assert 'No package for dbench' in failed[0]['msg'] and 'bench_tools_tools' in failed[0]['msg']


def test_el9_without_dbench_resolves(tmp_path, env):
    rc, out = resolve(tmp_path, env, 'RedHat-9.yml', tools=['fio', 'iperf3', 'compress'])
    assert rc == 0, failures(out)
    assert task_results(out, 'show')[0]['__bench_tools_packages'] == ['fio', 'iperf3', 'bzip2', 'gzip', 'xz', 'zstd', 'time']


def test_rpmforge_repository_definition_is_rendered_once(tmp_path, env):
    repo_dir = tmp_path / 'yum.repos.d'
    repo_dir.mkdir()
    tasks = [{'name': 'repos', 'ansible.builtin.include_role': {'name': 'benchlab.bench.bench_tools', 'tasks_from': 'repos_el'}}]
    extra = {'bench_tools_epel': False, 'bench_tools_rpmforge': True, 'bench_tools_repo_dir': str(repo_dir),
             'bench_tools_rpmforge_baseurl': 'http://mirror.example.invalid/rpmforge/el7/$basearch'}
    for attempt in (1, 2):
        rc, out = play(tmp_path, env, tasks, extra)
        assert rc == 0, failures(out)
        changed = out.stats['changed'].get('localhost', 0)
        assert changed == (1 if attempt == 1 else 0)
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(repo_dir / 'rpmforge.repo')
    assert ini['rpmforge']['baseurl'] == 'http://mirror.example.invalid/rpmforge/el7/$basearch'
    assert ini['rpmforge']['gpgcheck'] == '1' and ini['rpmforge']['gpgkey'].endswith('RPM-GPG-KEY.dag.txt')
    assert oct((repo_dir / 'rpmforge.repo').stat().st_mode & 0o777) == '0o644'
