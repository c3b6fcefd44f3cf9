"""The collection as users get it: built, installed with its dependencies into a collections path,
used by FQCN."""

import json
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

from conftest import BIN, FILES, REPO, load_run, run, run_dirs

LIBVIRT = REPO / '.collections/ansible_collections/community/libvirt'


@pytest.fixture(scope='module')
def tarball(tmp_path_factory):
    out = tmp_path_factory.mktemp('build')
    proc = subprocess.run([str(BIN / 'ansible-galaxy'), 'collection', 'build', '--force', '--output-path', str(out),
                           str(REPO)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = list(out.glob('benchlab-bench-*.tar.gz'))
    assert len(found) == 1
    return found[0]


@pytest.fixture(scope='module')
def dist(tarball, tmp_path_factory):
    """A local directory with the collection's tarball and one for each collection it depends on,
    packed from the copies this checkout has (no Galaxy here): what an offline install uses."""
    out = tmp_path_factory.mktemp('dist')
    shutil.copy(tarball, out)
    assert (LIBVIRT / 'MANIFEST.json').is_file(), 'community.libvirt is missing: make setup extracts it'
    proc = subprocess.run([sys.executable, str(REPO / 'tests/utils/collection_tarball.py'), str(LIBVIRT), str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def requirements(dist, path):
    """A requirements.yml naming every tarball in `dist` (type: file), as an offline site would."""
    path.write_text(yaml.safe_dump({'collections': [{'name': str(t), 'type': 'file'}
                                                    for t in sorted(dist.glob('*.tar.gz'))]}))
    return path


def install(dist, path, env):
    req = requirements(dist, path.parent / ('requirements-%s.yml' % path.name))
    proc = run([BIN / 'ansible-galaxy', 'collection', 'install', '--force', '-r', req, '-p', path], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (path / 'ansible_collections/benchlab/bench/plugins/modules/dd.py').exists()
    assert (path / 'ansible_collections/community/libvirt/plugins/modules/virt.py').exists()


def isolated_env(tmp_path, colls):
    """Ansible that sees only `colls` (not the checkout's .collections) and the report callback."""
    env = dict(__import__('conftest').ansible_env(tmp_path), ANSIBLE_COLLECTIONS_PATH=str(colls))
    cfg = tmp_path / 'ansible.cfg'
    cfg.write_text('[defaults]\ncallbacks_enabled = benchlab.bench.report\ncollections_path = %s\n' % colls)
    env['ANSIBLE_CONFIG'] = str(cfg)
    return env


def test_artifact_declares_the_collections_it_calls(tarball, tmp_path):
    with tarfile.open(str(tarball)) as tar:
        manifest = json.load(tar.extractfile('MANIFEST.json'))
    deps = manifest['collection_info']['dependencies']
    assert deps == {'community.libvirt': '>=2.0.0,<3.0.0'}
    # every collection the roles and playbooks call by FQCN is declared (or is ansible.builtin)
    called = set()
    for path in list((REPO / 'roles').rglob('*.yml')) + list((REPO / 'playbooks').glob('*.yml')):
        for word in path.read_text().split():
            parts = word.rstrip(':').split('.')
            if word.endswith(':') and len(parts) == 3 and all(p.isidentifier() for p in parts):
                called.add('.'.join(parts[:2]))
    assert called - {'ansible.builtin', 'benchlab.bench'} <= set(deps), called
    # without its dependency at hand, an offline install says which collection it needs
    env = isolated_env(tmp_path, tmp_path / 'empty')  # not the checkout's .collections, which has it
    proc = run([BIN / 'ansible-galaxy', 'collection', 'install', '--offline', '-p', tmp_path / 'c', tarball], env)
    assert proc.returncode != 0 and 'community.libvirt' in proc.stdout + proc.stderr


def test_installed_with_dependencies_documents_and_parses(tmp_path, dist):
    colls = tmp_path / 'collections'
    env = isolated_env(tmp_path, colls)
    install(dist, colls, env)
    docs = [('module', 'benchlab.bench.dd'), ('filter', 'benchlab.bench.parse_fio'),
            ('callback', 'benchlab.bench.report'), ('module', 'community.libvirt.virt')]
    docs += [('role', 'benchlab.bench.' + r.name) for r in sorted((REPO / 'roles').iterdir()) if r.is_dir()]
    assert len(docs) >= 4 + 6
    for kind, name in docs:
        proc = run([BIN / 'ansible-doc', '-t', kind, name], env, cwd=tmp_path)
        assert proc.returncode == 0 and proc.stdout.strip(), (kind, name, proc.stdout[-2000:] + proc.stderr[-2000:])
        assert str(REPO) not in proc.stdout, 'ansible-doc read %s from the checkout' % name
    proc = run([BIN / 'ansible-playbook', 'benchlab.bench.bench', '--syntax-check', '-i', 'localhost,'], env,
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_tarball_holds_the_collection_and_no_dev_files(tarball):
    names = subprocess.run(['tar', '-tzf', str(tarball)], capture_output=True, text=True, check=True).stdout.split()
    assert not [n for n in names if n.startswith(('.venv', 'ee/', 'execution-environment.yml'))]
    # what ansible-builder reads from an installed collection (meta/execution-environment.yml)
    assert {'meta/execution-environment.yml', 'meta/ee-requirements.txt', 'bindep.txt'} <= set(names)
    assert 'plugins/callback/report.py' in names
    assert 'plugins/module_utils/schemas/record-v1.json' in names
    assert 'playbooks/bench.yml' in names
    assert not [n for n in names if n.startswith(('.venv', '.collections', 'benchlab-runs', 'build/'))]


def test_fqcn_playbook_from_installed_collection(tmp_path, dist):
    colls = tmp_path / 'collections'
    env = isolated_env(tmp_path, colls)
    install(dist, colls, env)
    proc = run([BIN / 'ansible-playbook', 'benchlab.bench.bench', '-i', REPO / 'inventories/local',
                '-e', '@%s' % (FILES / 'matrix-tiny.yml'), '-e', 'bench_install_tools=false'], env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    (run_dir,) = run_dirs(tmp_path / 'runs')
    results, jsonl = load_run(run_dir)
    assert [r['labels']['benchmark'] for r in jsonl] == ['dd-write']
    assert jsonl[0]['metrics']['throughput']['value'] > 0
    # the modules ran from the installed copy, not from the checkout
    assert str(REPO) not in proc.stdout


def test_embedded_in_a_users_infra_repo(tmp_path, dist):
    """A repo of the user's own: bench.yml importing benchlab.bench.bench, an inventory named lab."""
    infra = tmp_path / 'infra'
    (infra / 'collections').mkdir(parents=True)
    env = __import__('conftest').ansible_env(tmp_path)
    env.pop('ANSIBLE_CONFIG')
    env.pop('BENCHLAB_REPORT_DIR')
    install(dist, infra / 'collections', env)
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
