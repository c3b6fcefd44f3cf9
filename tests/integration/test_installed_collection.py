"""The collection as users get it: built, installed into a collections path, used by FQCN."""

import shutil
import subprocess

import pytest

from conftest import BIN, FILES, REPO, load_run, run, run_dirs


@pytest.fixture(scope='module')
def tarball(tmp_path_factory):
    out = tmp_path_factory.mktemp('build')
    proc = subprocess.run([str(BIN / 'ansible-galaxy'), 'collection', 'build', '--force', '--output-path', str(out),
                           str(REPO)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = list(out.glob('benchlab-bench-*.tar.gz'))
    assert len(found) == 1
    return found[0]


def install(tarball, path, env):
    proc = run([BIN / 'ansible-galaxy', 'collection', 'install', '--offline', '--force', '-p', path, tarball], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (path / 'ansible_collections/benchlab/bench/plugins/modules/dd.py').exists()


def test_tarball_holds_the_collection_and_no_dev_files(tarball):
    names = subprocess.run(['tar', '-tzf', str(tarball)], capture_output=True, text=True, check=True).stdout.split()
    assert 'plugins/callback/report.py' in names
    assert 'plugins/module_utils/schemas/record-v1.json' in names
    assert 'playbooks/bench.yml' in names
    assert not [n for n in names if n.startswith(('.venv', '.collections', 'benchlab-runs', 'build/'))]


def test_fqcn_playbook_from_installed_collection(tmp_path, tarball):
    colls = tmp_path / 'collections'
    env = dict(__import__('conftest').ansible_env(tmp_path), ANSIBLE_COLLECTIONS_PATH=str(colls))
    env.pop('ANSIBLE_CONFIG')
    install(tarball, colls, env)
    cfg = tmp_path / 'ansible.cfg'
    cfg.write_text('[defaults]\ncallbacks_enabled = benchlab.bench.report\ncollections_path = %s\n' % colls)
    env['ANSIBLE_CONFIG'] = str(cfg)
    proc = run([BIN / 'ansible-playbook', 'benchlab.bench.bench', '-i', REPO / 'inventories/local',
                '-e', '@%s' % (FILES / 'matrix-tiny.yml'), '-e', 'bench_install_tools=false'], env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results, jsonl = load_run(run_dir)
    assert [r['labels']['benchmark'] for r in jsonl] == ['dd-write']
    assert jsonl[0]['metrics']['throughput']['value'] > 0
    # the modules ran from the installed copy, not from the checkout
    assert str(REPO) not in proc.stdout


def test_embedded_in_a_users_infra_repo(tmp_path, tarball):
    """A repo of the user's own: bench.yml importing benchlab.bench.bench, an inventory named lab."""
    infra = tmp_path / 'infra'
    (infra / 'collections').mkdir(parents=True)
    env = __import__('conftest').ansible_env(tmp_path)
    env.pop('ANSIBLE_CONFIG')
    env.pop('BENCHLAB_REPORT_DIR')
    install(tarball, infra / 'collections', env)
    (infra / 'ansible.cfg').write_text(
        '[defaults]\ncollections_path = ./collections\ncallbacks_enabled = benchlab.bench.report\n'
        '\n[callback_benchlab_report]\noutput_dir = ./reports\n')
    (infra / 'bench.yml').write_text('---\n- name: Benchmark our lab\n  ansible.builtin.import_playbook: benchlab.bench.bench\n')
    (infra / 'lab').write_text('[bench]\nlocalhost ansible_connection=local ansible_python_interpreter=%s\n'
                               % (BIN / 'python'))
    shutil.copy(FILES / 'matrix-tiny.yml', infra / 'matrix.yml')
    proc = run([BIN / 'ansible-playbook', 'bench.yml', '-i', 'lab', '-e', '@matrix.yml', '-e', 'bench_install_tools=false'],
               env, cwd=infra)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    (run_dir,) = run_dirs(infra / 'reports')
    results, jsonl = load_run(run_dir)
    assert len(jsonl) == 1 and jsonl[0]['tool'] == 'dd'
    assert (run_dir / 'report.md').read_text().count('| host-rootfs (baseline) |') == 1
