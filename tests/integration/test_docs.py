"""ansible-doc renders every plugin of the collection, as users will call it."""

import pytest

from conftest import BIN, REPO, run

PLUGINS = sorted(
    [('module', p.stem) for p in (REPO / 'plugins/modules').glob('*.py')]
    + [('filter', p.stem) for p in (REPO / 'plugins/filter').glob('*.py')]
    + [('lookup', p.stem) for p in (REPO / 'plugins/lookup').glob('*.py')]
    + [('callback', p.stem) for p in (REPO / 'plugins/callback').glob('*.py')])


def test_every_public_name_of_design_that_exists_so_far_is_a_plugin():
    assert {('module', 'dd'), ('module', 'fio'), ('module', 'sysinfo'), ('filter', 'parse_dd'),
            ('filter', 'parse_fio'), ('callback', 'report')} <= set(PLUGINS)


@pytest.mark.parametrize('kind,name', PLUGINS)
def test_ansible_doc_renders(env, kind, name):
    proc = run([BIN / 'ansible-doc', '-t', kind, 'benchlab.bench.%s' % name], env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith('> ') and 'benchlab.bench.%s' % name in proc.stdout.splitlines()[0].lower()
    assert 'ERROR' not in proc.stderr
    if kind != 'callback':
        assert 'EXAMPLES' in proc.stdout


def test_roles_have_argument_specs(env):
    proc = run([BIN / 'ansible-doc', '-t', 'role', '-l', 'benchlab.bench'], env)
    assert proc.returncode == 0, proc.stderr
    for role in ('bench_tools', 'bench_run', 'local_lab', 'drbd', 'kvm_guest', 'openvz_ct'):
        assert 'benchlab.bench.%s' % role in proc.stdout


@pytest.mark.parametrize('inventory', ['inventories/local', 'inventories/lab'])
@pytest.mark.parametrize('playbook', sorted(p.name for p in (REPO / 'playbooks').glob('*.yml')))
def test_playbooks_pass_syntax_check(env, playbook, inventory):
    proc = run([BIN / 'ansible-playbook', '--syntax-check', '-i', inventory, 'playbooks/' + playbook], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
