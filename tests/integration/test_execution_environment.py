"""The AWX execution environment: `ansible-builder create` (no image build: no container runtime
here) writes a build context whose collection step installs benchlab.bench with community.libvirt
from the tarballs, and whose introspection finds the collection's Python and system needs."""

import shutil
import subprocess
import sys

import yaml

from conftest import BIN, REPO, run

LIBVIRT = REPO / '.collections/ansible_collections/community/libvirt'


def test_ansible_builder_create_makes_a_build_context(tmp_path, env):
    project = tmp_path / 'project'
    (project / 'build/ee-dist').mkdir(parents=True)
    shutil.copy(REPO / 'execution-environment.yml', project)
    shutil.copytree(REPO / 'ee', project / 'ee')
    dist = project / 'build/ee-dist'
    proc = run([BIN / 'ansible-galaxy', 'collection', 'build', '--force', '--output-path', dist, REPO], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([sys.executable, str(REPO / 'tests/utils/collection_tarball.py'), str(LIBVIRT), str(dist)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    # ee/requirements.yml names the tarballs of the versions galaxy.yml builds and depends on
    galaxy = yaml.safe_load((REPO / 'galaxy.yml').read_text())
    wanted = sorted(t.name for t in dist.glob('*.tar.gz'))
    assert wanted == ['benchlab-bench-%s.tar.gz' % galaxy['version'], 'community-libvirt-2.0.0.tar.gz']
    reqs = yaml.safe_load((REPO / 'ee/requirements.yml').read_text())['collections']
    assert sorted(r['name'] for r in reqs) == ['dist/' + n for n in wanted]

    ctx = tmp_path / 'context'
    proc = run([BIN / 'ansible-builder', 'create', '-f', project / 'execution-environment.yml', '-c', ctx], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (containerfile,) = [p for p in (ctx / 'Containerfile', ctx / 'Dockerfile') if p.exists()]
    text = containerfile.read_text()
    assert 'ansible-core==2.19.14 ansible-runner==2.4.3' in text
    assert 'ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml' in text
    assert sorted(p.name for p in (ctx / '_build/dist').iterdir()) == wanted

    # the image's galaxy step, run here as it runs there (from _build, offline: only the tarballs)
    colls = tmp_path / 'collections'
    proc = run([BIN / 'ansible-galaxy', 'collection', 'install', '--offline', '-r', 'requirements.yml',
                '-p', colls], dict(env, ANSIBLE_COLLECTIONS_PATH=str(colls)), cwd=ctx / '_build')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # and its introspection step: the collection's Python and system needs are found
    proc = run([sys.executable, ctx / '_build/scripts/introspect.py', 'introspect', colls], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = yaml.safe_load(proc.stdout)
    assert found['python'] == ['jsonschema>=4.18  # from collection benchlab.bench',
                               'psycopg[binary]>=3.1  # from collection benchlab.bench']  # the PostgreSQL history
    assert 'openssh-clients [platform:rpm]  # from collection benchlab.bench' in found['system']
