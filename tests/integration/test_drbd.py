"""The DRBD modules and role, run for real on this machine.

Real here: rendering + validation with the real drbdadm 9.22 (and its bundled drbdadm-84 for the
8.4 syntax), atomic 0600 installs and idempotence, the secret never printed, the safe create-md /
wipe-md on a real loop device (drbdmeta writes it without a kernel module), and drbdadm's own dry
run (-d) of the lifecycle steps. NOT real here: there is no DRBD kernel module on this machine, so
up/primary/secondary/down/status only run in check mode (plan + `drbdadm -d`) and the states come
from the published fixture (tests/unit/plugins/module_utils/test_drbd.py).
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest
import yaml

from conftest import BIN, REPO, module, run

HOST = os.uname()[1]
SECRET = 'benchlab-Sup3r-s3cret'
pytestmark = pytest.mark.skipif(not shutil.which('drbdadm'), reason='drbd-utils (drbdadm) is not installed')


def reference(**extra):
    res = {
        'name': 'drbd0', 'protocol': 'C',
        'incon_degr_cmd': "echo '!DRBD! pri on incon-degr' | wall ; sleep 60 ; halt -f",
        'startup': {'wfc_timeout': 1, 'degr_wfc_timeout': 1},
        'disk_options': {'on_io_error': 'detach'},
        'net': {'max_epoch_size': 8000, 'max_buffers': 10000},
        'syncer': {'rate': '150M', 'al_extents': 521},
        'device': '/dev/drbd0', 'disk': '/dev/hda4', 'meta_disk': '/dev/hda3 [0]',
        'nodes': [{'name': 'node1', 'address': '10.2.0.1:7788'}, {'name': 'node2', 'address': '10.2.0.2:7788'}],
    }
    res.update(extra)
    return res


MESH3 = {'name': 'r3', 'protocol': 'C', 'minor': 10, 'disk': '/dev/vg0/r3', 'meta_disk': 'internal',
         'options': {'auto_promote': False, 'quorum': 'majority', 'on_no_quorum': 'io-error'},
         'net': {'sndbuf_size': '512k', 'max_buffers': 8000},
         'disk_options': {'c_plan_ahead': 20, 'resync_rate': '100M', 'c_max_rate': '400M'},
         'nodes': [{'name': 'alpha', 'address': '10.1.1.31:7790'}, {'name': 'bravo', 'address': '10.1.1.32:7790'},
                   {'name': 'charlie', 'address': '10.1.1.33:7790'}]}
QUAD = {'name': 'r4', 'protocol': 'A', 'minor': 11, 'disk': '/dev/sdc1', 'meta_disk': {'device': '/dev/sdd1', 'index': 2},
        'shared_secret': SECRET, 'cram_hmac_alg': 'sha256',
        'nodes': [{'name': 'n%d' % i, 'address': '[fd00::%d]:7791' % i, 'node_id': 10 + i} for i in range(1, 5)]}


@pytest.fixture
def conf(tmp_path):
    """A private drbd.conf + drbd.d (the host's /etc/drbd.d is never touched)."""
    d = tmp_path / 'drbd.d'
    d.mkdir()
    main = tmp_path / 'drbd.conf'
    main.write_text('include "%s/*.res";\n' % d)
    # the reference resource carries the 0.7 incon-degr-cmd: a handler, written only when allowed
    return {'config_dir': str(d), 'main_config': str(main), 'allow_handlers': True}


def drbdadm_ok(main, syntax='9'):
    binary = 'drbdadm' if syntax == '9' else '/usr/lib/drbd/drbdadm-84'
    p = subprocess.run([binary, '-c', str(main), 'sh-nop'], capture_output=True, text=True, check=False)
    return p.returncode == 0, p.stderr


def cli(env, name, args, check=False, diff=False, verbose=False):
    argv = [BIN / 'ansible', 'localhost', '-i', REPO / 'inventories/local', '-m', 'benchlab.bench.%s' % name,
            '-a', json.dumps(args)]
    argv += ['--check'] if check else []
    argv += ['--diff'] if diff else []
    argv += ['-vvv'] if verbose else []
    return run(argv, env)


@pytest.mark.parametrize('syntax', ['9', '8.4'])
def test_reference_resource_rendered_validated_installed_once(env, conf, syntax):
    args = dict(conf, resources=[reference()], syntax=syntax)
    rc, status, res = module(env, 'drbd_resource', args)
    assert rc == 0, res
    assert res['changed'] and res['syntax'] == syntax and res['files'][0]['changed']
    path = os.path.join(conf['config_dir'], 'drbd0.res')
    assert oct(os.stat(path).st_mode & 0o777) == '0o600'
    text = open(path).read()
    for line in ('protocol C;', 'max-epoch-size 8000;', 'max-buffers 10000;', 'resync-rate 150M;', 'al-extents 521;',
                 'c-plan-ahead 0;', 'on-io-error detach;', 'wfc-timeout 1;', 'degr-wfc-timeout 1;',
                 'on node1 {', 'on node2 {', 'address ipv4 10.2.0.1:7788;', 'meta-disk /dev/hda3 [0];',
                 'pri-on-incon-degr "echo \'!DRBD! pri on incon-degr\' | wall ; sleep 60 ; halt -f";'):
        assert line in text, line
    assert ('node-id 0;' in text) == (syntax == '9')
    assert any('syncer.rate -> disk resync-rate' in n for n in res['files'][0]['notes'])
    # the real drbdadm (8.4: the bundled drbdadm-84) accepts the installed file
    ok, err = drbdadm_ok(conf['main_config'], syntax)
    assert ok, err
    assert res['validate_cmd'][0].endswith('drbdadm' if syntax == '9' else 'drbdadm-84')
    mtime = os.stat(path).st_mtime_ns
    rc, status, res = module(env, 'drbd_resource', args)
    assert rc == 0 and res['changed'] is False and not res['files'][0]['changed'], res
    assert os.stat(path).st_mtime_ns == mtime


def test_drbd9_multi_node_examples_validate(env, conf):
    rc, status, res = module(env, 'drbd_resource', dict(conf, resources=[MESH3, QUAD], syntax='9'))
    assert rc == 0, res
    assert SECRET not in json.dumps(res)
    r3 = open(os.path.join(conf['config_dir'], 'r3.res')).read()
    assert 'hosts alpha bravo charlie;' in r3 and 'node-id 2;' in r3 and 'quorum majority;' in r3
    r4 = open(os.path.join(conf['config_dir'], 'r4.res')).read()
    assert 'address ipv6 [fd00::4]:7791;' in r4 and 'node-id 14;' in r4 and 'meta-disk /dev/sdd1 [2];' in r4
    assert 'shared-secret %s;' % SECRET in r4 and 'hosts n1 n2 n3 n4;' in r4
    ok, err = drbdadm_ok(conf['main_config'])
    assert ok, err
    dump = subprocess.run(['drbdadm', '-c', conf['main_config'], 'dump', 'all'], capture_output=True, text=True,
                          check=True).stdout
    assert 'connection-mesh' in dump and 'protocol           C;' in dump


@pytest.mark.parametrize('mutate,words', [
    (lambda r: r.pop('nodes'), 'drbd_resources[0] (drbd0).nodes: missing'),
    (lambda r: r['nodes'].pop(), 'only one `on` section (node1)'),
    (lambda r: r.update(protocol='D'), "drbd_resources[0] (drbd0).protocol: 'D' is not a DRBD protocol"),
    (lambda r: r['nodes'][1].update(address='10.2.0.1:7788'), 'address clash: 10.2.0.1:7788'),
    (lambda r: r['syncer'].update(group=1), 'syncer.group: DRBD 8.x removed sync groups'),
])
def test_broken_inputs_fail_before_anything_is_written(env, conf, mutate, words):
    res = reference()
    mutate(res)
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[res]))
    assert rc != 0 and words in out['msg'], out
    assert os.listdir(conf['config_dir']) == []


def test_duplicate_minor_across_resources_fails_before_writing(env, conf):
    other = dict(MESH3, name='r5', minor=0, disk='/dev/vg0/r5',
                 nodes=[{'name': 'node1', 'address': '10.2.0.1:7795'}, {'name': 'node2', 'address': '10.2.0.2:7795'}])
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[reference(), other]))
    assert rc != 0 and 'duplicate minor 0 on node node1: already used by resource drbd0' in out['msg'], out
    assert os.listdir(conf['config_dir']) == []


def test_drbdadm_rejection_fails_with_its_message_and_line(env, conf):
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[reference()]))
    assert rc == 0
    path = os.path.join(conf['config_dir'], 'drbd0.res')
    before = open(path).read()
    bad = reference(net={'max_epoch_size': 8000, 'max_buffers': 5})
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[bad]))
    assert rc != 0
    assert 'drbdadm rejected the rendered resource drbd0 (nothing was installed)' in out['msg']
    assert 'Value is too small' in out['msg'] and '[line 6: max-buffers 5;]' in out['msg'], out['msg']
    assert open(path).read() == before
    assert os.listdir(conf['config_dir']) == ['drbd0.res']


def test_context_validation_catches_a_clash_with_an_installed_resource(env, conf):
    """The pure checks only see the given list; drbdadm -t checks the new file against the others."""
    foreign = os.path.join(conf['config_dir'], 'foreign.res')
    with open(foreign, 'w') as f:
        f.write('resource foreign {\n  on node1 { device /dev/drbd0 minor 0; disk /dev/sdx; '
                'address 10.9.0.1:7000; meta-disk internal; node-id 0; }\n'
                '  on node2 { device /dev/drbd0 minor 0; disk /dev/sdx; address 10.9.0.2:7000; '
                'meta-disk internal; node-id 1; }\n}\n')
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[reference()], syntax='9'))
    assert rc != 0 and 'conflicting use of device-minor' in out['msg'], out
    assert sorted(os.listdir(conf['config_dir'])) == ['foreign.res']


def test_secret_never_printed_check_mode_writes_nothing(env, conf):
    args = dict(conf, resources=[reference(shared_secret=SECRET, cram_hmac_alg='sha1')])
    p = cli(env, 'drbd_resource', args, check=True, diff=True, verbose=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert SECRET not in p.stdout + p.stderr
    assert '+        shared-secret ********;' in p.stdout and 'CHANGED' in p.stdout
    assert os.listdir(conf['config_dir']) == []
    p = cli(env, 'drbd_resource', args, diff=True, verbose=True)
    assert p.returncode == 0 and SECRET not in p.stdout + p.stderr
    assert 'shared-secret %s;' % SECRET in open(os.path.join(conf['config_dir'], 'drbd0.res')).read()
    # a drbdadm rejection quoting the secret's line does not print it either
    bad = reference(shared_secret=SECRET, cram_hmac_alg='no-such-alg')
    p = cli(env, 'drbd_resource', dict(conf, resources=[bad]), verbose=True)
    assert SECRET not in p.stdout + p.stderr


def test_absent_removes_the_file(env, conf):
    assert module(env, 'drbd_resource', dict(conf, resources=[reference()]))[0] == 0
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[{'name': 'drbd0'}], state='absent'))
    assert rc == 0 and out['changed'] and os.listdir(conf['config_dir']) == []
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[{'name': 'drbd0'}], state='absent'))
    assert rc == 0 and not out['changed']


# ---- meta-data on a real loop device ----------------------------------------------------------------------

@pytest.fixture
def loopdev():
    """A 64 MiB loop device (image prefixed drbdh-), detached and removed also on failure."""
    fd, img = tempfile.mkstemp(prefix='drbdh-', suffix='.img', dir='/var/tmp')
    os.close(fd)
    os.truncate(img, 64 * 1024 * 1024)
    dev = subprocess.run(['losetup', '-f', '--show', img], capture_output=True, text=True, check=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(['losetup', '-d', dev], check=False)
        os.unlink(img)


def local_resource(conf, disk, name='drbdhloop', minor=97, secret=None):
    """A resource whose first node is this host (`uname -n`), installed with the module."""
    res = {'name': name, 'protocol': 'C', 'minor': minor, 'disk': disk, 'meta_disk': 'internal',
           'nodes': [{'name': HOST, 'address': '10.199.0.1:7997'}, {'name': 'drbdh-peer', 'address': '10.199.0.2:7997'}]}
    if secret:
        res.update(shared_secret=secret, cram_hmac_alg='sha256')
    return res


def blkid_type(dev):
    return subprocess.run(['blkid', '-p', '-o', 'value', '-s', 'TYPE', dev], capture_output=True, text=True,
                          check=False).stdout.strip()


def test_safe_create_md_refuses_ext4_then_creates_and_wipes(env, conf, loopdev):
    assert module(env, 'drbd_resource', dict(conf, resources=[local_resource(conf, loopdev)]))[0] == 0
    md = {'name': 'drbdhloop', 'config_file': conf['main_config']}
    subprocess.run(['mkfs.ext4', '-q', loopdev], check=True)
    rc, status, out = module(env, 'drbd_md', md)
    assert rc != 0 and 'safe mode: refusing create-md for drbdhloop: %s carries ext4 at offset 0x438' % loopdev \
        in out['msg'], out
    assert blkid_type(loopdev) == 'ext4'
    rc, status, out = module(env, 'drbd_md', md, check=True)
    assert rc != 0 and 'safe mode' in out['msg']
    subprocess.run(['wipefs', '-a', '-q', loopdev], check=True)
    rc, status, out = module(env, 'drbd_md', md, check=True)
    assert rc == 0 and out['changed'] and out['cmd'][-2:] == ['create-md', 'drbdhloop'] and blkid_type(loopdev) == ''
    # no signature left, but drbdmeta itself sees the old data in its meta-data area and refuses
    rc, status, out = module(env, 'drbd_md', md)
    assert rc != 0 and 'Found some data' in out['stdout_tail'] and 'drbdadm create-md failed' in out['msg'], out
    subprocess.run(['dd', 'if=/dev/zero', 'of=' + loopdev, 'bs=1M', 'count=64', 'conv=fsync', 'status=none'], check=True)
    rc, status, out = module(env, 'drbd_md', md)
    assert rc == 0 and out['changed'] and out['devices'][0]['verdict'] == 'empty', out
    assert blkid_type(loopdev) == 'drbd'
    rc, status, out = module(env, 'drbd_md', md)
    assert rc == 0 and not out['changed'] and out['md_exists'], out
    rc, status, out = module(env, 'drbd_md', dict(md, state='absent'))
    assert rc == 0 and out['changed'] and out['cmd'][-4:] == ['--', '--force', 'wipe-md', 'drbdhloop']
    assert blkid_type(loopdev) == ''
    rc, status, out = module(env, 'drbd_md', dict(md, state='absent'))
    assert rc == 0 and not out['changed']


def test_forced_create_md_overrides_safe_mode_but_drbdmeta_still_protects_the_fs(env, conf, loopdev):
    assert module(env, 'drbd_resource', dict(conf, resources=[local_resource(conf, loopdev)]))[0] == 0
    subprocess.run(['mkfs.ext4', '-q', loopdev], check=True)
    rc, status, out = module(env, 'drbd_md', {'name': 'drbdhloop', 'config_file': conf['main_config'], 'force': True},
                             check=True)
    assert rc == 0 and out['cmd'][-3:] == ['create-md', '--force', 'drbdhloop']


# ---- lifecycle: check mode + drbdadm's own dry run (no kernel module here) ----------------------------------

@pytest.mark.parametrize('state,sync,plan,expect', [
    ('up', 'none', ['up'], ['drbdsetup new-resource drbdhloop', 'drbdsetup new-minor drbdhloop 97 0',
                            'drbdsetup new-peer drbdhloop 1 --_name=drbdh-peer', 'drbdsetup new-path drbdhloop 1 '
                            'ipv4:10.199.0.1:7997 ipv4:10.199.0.2:7997', 'drbdmeta 97 v09', 'drbdsetup attach 97',
                            'drbdsetup connect drbdhloop 1']),
    ('primary', 'full', ['up', 'force-primary'], ['drbdsetup primary drbdhloop --force']),
    ('primary', 'skip', ['up', 'skip-initial-sync', 'primary'],
     ['drbdsetup new-current-uuid 97 --clear-bitmap', 'drbdsetup primary drbdhloop']),
    ('disconnected', 'none', ['up', 'disconnect'], ['drbdsetup disconnect drbdhloop 1']),
    ('down', 'none', [], []),
])
def test_lifecycle_check_mode_plan_and_dry_run(env, conf, loopdev, state, sync, plan, expect):
    res = local_resource(conf, loopdev, secret=SECRET)
    assert module(env, 'drbd_resource', dict(conf, resources=[res]))[0] == 0
    p = cli(env, 'drbd_lifecycle', {'name': 'drbdhloop', 'state': state, 'initial_sync': sync,
                                    'config_file': conf['main_config']}, check=True, verbose=True)
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout[p.stdout.index('{'):p.stdout.rindex('}') + 1])
    assert out['plan'] == plan and out['kernel_module'] is False
    assert [c[-1] for c in out['cmd']] == ['drbdhloop'] * len(plan)
    joined = '\n'.join(out['dry_run'])
    for e in expect:
        assert e in joined, (e, joined)
    assert SECRET not in p.stdout + p.stderr
    if 'up' in plan:
        assert '--shared-secret=********' in joined


def test_status_without_kernel_module(env):
    rc, status, out = module(env, 'drbd_status', {'names': ['drbd0']})
    assert rc != 0 and 'DRBD kernel module is not loaded' in out['msg']
    rc, status, out = module(env, 'drbd_status', {'wait': 'uptodate', 'missing_ok': True})
    assert rc == 0 and out['drbd'] == [] and out['kernel_module'] is False


# ---- the role -----------------------------------------------------------------------------------------------

def role_play(tmp_path, env, variables, check=False, tasks_from='main'):
    book = tmp_path / 'drbd-play.yml'
    book.write_text(json.dumps([{'name': 'drbd role', 'hosts': 'localhost', 'gather_facts': True, 'gather_subset': ['!all', 'min'],
                                 'vars': variables, 'tasks': [{'name': 'role', 'ansible.builtin.include_role': {
                                     'name': 'benchlab.bench.drbd', 'tasks_from': tasks_from}}]}]))
    argv = [BIN / 'ansible-playbook', '-i', REPO / 'inventories/local', book, '-v']
    if check:
        argv.append('--check')
    return run(argv, env)


def recap(p):
    m = re.search(r'localhost\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)', p.stdout)
    return {'ok': int(m.group(1)), 'changed': int(m.group(2)), 'failed': int(m.group(4))} if m else None


def test_role_renders_once_and_runs_its_lifecycle_in_check_mode(tmp_path, env, conf, loopdev):
    res = local_resource(conf, loopdev, secret=SECRET)
    res['mount'] = str(tmp_path / 'drbdh-mnt')
    variables = {'drbd_resources': [res], 'drbd_config_dir': conf['config_dir'], 'drbd_main_config': conf['main_config'],
                 'drbd_install': False, 'drbd_initial_sync': 'skip'}
    p = role_play(tmp_path, env, variables)
    assert p.returncode == 0, p.stdout[-3000:]
    assert recap(p)['changed'] == 1 and SECRET not in p.stdout + p.stderr
    p = role_play(tmp_path, env, variables)
    assert p.returncode == 0 and recap(p)['changed'] == 0, p.stdout[-3000:]
    # the whole lifecycle, in check mode: meta-data, up, promote (skip initial sync), mkfs, mount
    p = role_play(tmp_path, env, dict(variables, drbd_manage_lifecycle=True, drbd_install=True), check=True)
    assert p.returncode == 0, p.stdout[-4000:]
    assert SECRET not in p.stdout + p.stderr
    for words in ('Create the meta-data', 'Promote the primaries', '"skip-initial-sync"', '"new-current-uuid", "--clear-bitmap"', 'Make the filesystem'):
        assert words in p.stdout, words
    assert blkid_type(loopdev) == '' and not os.path.exists(res['mount'])
    p = role_play(tmp_path, env, dict(variables, drbd_teardown_wipe_md=True, drbd_teardown_remove_config=True),
                  check=True, tasks_from='teardown')
    assert p.returncode == 0, p.stdout[-3000:]
    assert os.listdir(conf['config_dir']) == ['drbdhloop.res']


def test_role_refuses_a_broken_resource_before_installing(tmp_path, env, conf):
    bad = reference(protocol='X')
    p = role_play(tmp_path, env, {'drbd_resources': [bad], 'drbd_config_dir': conf['config_dir'],
                                  'drbd_main_config': conf['main_config']})
    assert p.returncode != 0
    assert "value of protocol must be one of: A, B, C" in p.stdout or 'not a DRBD protocol' in p.stdout, p.stdout[-2000:]
    assert 'Install drbd-utils' not in p.stdout
    assert os.listdir(conf['config_dir']) == []


# ---- issue 14: only benchlab's own .res files are replaced or removed --------------------------------------

HAND_WRITTEN = ('# written by the storage team, keep\nresource drbd0 {\n  on node1 { device /dev/drbd0 minor 0; '
                'disk /dev/hda4; address 10.2.0.1:7788; meta-disk internal; }\n  on node2 { device /dev/drbd0 minor 0; '
                'disk /dev/hda4; address 10.2.0.2:7788; meta-disk internal; }\n}\n')


def test_unmarked_res_file_survives_and_adopt_replaces_it(env, conf):
    path = os.path.join(conf['config_dir'], 'drbd0.res')
    with open(path, 'w') as f:
        f.write(HAND_WRITTEN)
    for check in (True, False):
        rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[reference()]), check=check)
        assert rc != 0, out
        assert out['msg'].startswith('%s exists and was not written by benchlab' % path), out['msg']
        assert 'adopt: true' in out['msg'] and 'drbd_adopt: true' in out['msg']
        assert open(path).read() == HAND_WRITTEN
    # state absent refuses it too
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[{'name': 'drbd0'}], state='absent'))
    assert rc != 0 and 'refusing to remove it' in out['msg'] and open(path).read() == HAND_WRITTEN
    # adopt: replaced by benchlab's file, which carries the header from now on
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[reference()], adopt=True, lab='lab14'))
    assert rc == 0 and out['changed'] and out['files'][0]['adopted'] is True, out
    text = open(path).read()
    assert text.startswith('# benchlab.bench managed resource drbd0; lab=lab14; do not edit\n')
    # benchlab's own file: updated without adopt, idempotent
    mtime = os.stat(path).st_mtime_ns
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[reference()], lab='lab14'))
    assert rc == 0 and not out['changed'] and not out['files'][0]['adopted'] and os.stat(path).st_mtime_ns == mtime
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[reference(protocol='A')], lab='lab14'))
    assert rc == 0 and out['changed'] and 'protocol A;' in open(path).read()
    # another lab's file is not this lab's
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[reference()], lab='other'))
    assert rc != 0 and 'written by benchlab for lab lab14, not this lab (other)' in out['msg'], out
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[{'name': 'drbd0'}], state='absent',
                                                        lab='lab14'))
    assert rc == 0 and out['changed'] and not os.path.exists(path)


def test_role_keeps_a_hand_written_res_and_fails_clearly(tmp_path, env, conf):
    path = os.path.join(conf['config_dir'], 'drbd0.res')
    with open(path, 'w') as f:
        f.write(HAND_WRITTEN)
    variables = {'drbd_resources': [reference()], 'drbd_config_dir': conf['config_dir'], 'drbd_install': False,
                 'drbd_main_config': conf['main_config'], 'drbd_allow_handlers': True}
    p = role_play(tmp_path, env, variables)
    assert p.returncode != 0 and 'exists and was not written by benchlab' in p.stdout, p.stdout[-3000:]
    assert open(path).read() == HAND_WRITTEN
    p = role_play(tmp_path, env, dict(variables, drbd_adopt=True))
    assert p.returncode == 0, p.stdout[-3000:]
    assert open(path).read().startswith('# benchlab.bench managed resource drbd0; lab=default; do not edit\n')
    p = role_play(tmp_path, env, variables)
    assert p.returncode == 0 and recap(p)['changed'] == 0, p.stdout[-3000:]
    # without drbd_allow_handlers the 0.7 incon-degr-cmd (a shell command) is refused before anything
    p = role_play(tmp_path, env, dict(variables, drbd_allow_handlers=False))
    assert p.returncode != 0 and 'incon_degr_cmd: DRBD runs handler commands as root' in p.stdout, p.stdout[-2000:]


# ---- issue 14: input is data, never syntax -----------------------------------------------------------------

HOSTILE = yaml.safe_load((REPO / 'tests/unit/fixtures/hostile/drbd.yml').read_text())


def tree_state(root):
    """Every file under root with its content and mode: what 'nothing written' compares."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_mode, open(p, 'rb').read() if os.path.isfile(p) else None)
    return out


@pytest.fixture
def logging_drbdadm(tmp_path):
    """A drbdadm that logs each argv, then runs the real one: proves what benchlab let drbdadm see."""
    log = tmp_path / 'drbdadm.log'
    wrapper = tmp_path / 'drbdadm'
    wrapper.write_text('#!/bin/sh\nprintf "%%s\\n" "$*" >> %s\nexec %s "$@"\n' % (log, shutil.which('drbdadm')))
    wrapper.chmod(0o755)
    return str(wrapper), log


def test_hostile_drbd_corpus_is_refused_by_the_module_before_drbdadm_sees_it(env, tmp_path, logging_drbdadm):
    """Each case of the corpus through the real module: refused naming the field, the config dir (with a
    hand-written canary and a benchlab file) unchanged, and drbdadm never ran on a candidate."""
    spec = importlib.util.spec_from_file_location('unit_test_drbd', REPO / 'tests/unit/plugins/module_utils/test_drbd.py')
    unit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(unit)
    hostile_resources = unit.hostile_resources
    drbdadm, log = logging_drbdadm
    d = tmp_path / 'drbd.d'
    d.mkdir()
    (d / 'canary.res').write_text(HAND_WRITTEN.replace('drbd0', 'canary'))
    (d / 'r0.res').write_text('# benchlab.bench managed resource r0; lab=default; do not edit\nresource r0 {}\n')
    main = tmp_path / 'drbd.conf'
    main.write_text('include "%s/*.res";\n' % d)
    before = tree_state(str(d))
    # one play, one task per case (a loop): the module runs once per case, errors ignored and recorded
    cases = [{'id': c['id'], 'args': {'resources': hostile_resources(c), 'config_dir': str(d), 'main_config': str(main),
                                      'syntax': c.get('syntax', '9'), 'allow_handlers': c.get('allow_handlers', False),
                                      'drbdadm': drbdadm}} for c in HOSTILE['cases']]
    results = tmp_path / 'results.json'
    book = tmp_path / 'hostile.yml'
    book.write_text(json.dumps([{'name': 'hostile drbd', 'hosts': 'localhost', 'gather_facts': False,
                                 'vars': {'cases': cases}, 'tasks': [
                                     {'name': 'case', 'benchlab.bench.drbd_resource': '{{ item.args }}',
                                      'loop': '{{ cases }}', 'register': 'out', 'ignore_errors': True},
                                     {'name': 'save', 'ansible.builtin.copy': {
                                         'content': '{{ out.results | to_json }}', 'dest': str(results),
                                         'mode': '0600'}}]}]))
    p = run([BIN / 'ansible-playbook', '-i', REPO / 'inventories/local', book], env)
    assert p.returncode == 0, p.stdout[-3000:]
    outs = json.loads(results.read_text())
    assert len(outs) == len(HOSTILE['cases'])
    for case, out in zip(HOSTILE['cases'], outs):
        assert out.get('failed'), (case['id'], out)
        for part in case.get('module_expect', case['expect'][:1]):
            assert part in out['msg'], (case['id'], out['msg'])
    assert tree_state(str(d)) == before
    # drbdadm was asked for its version at most: no candidate file was ever handed to it
    calls = log.read_text().splitlines() if log.exists() else []
    assert all(c == '--version' for c in calls), calls


def test_injection_into_a_resource_never_reaches_drbdadm(env, conf, logging_drbdadm):
    drbdadm, log = logging_drbdadm
    evil = reference(disk='/dev/hda4;\n}\nresource evil {\n  on node1 { disk /dev/sda; }\n')
    rc, status, out = module(env, 'drbd_resource', dict(conf, resources=[evil], drbdadm=drbdadm))
    assert rc != 0 and out['msg'].startswith('drbd_resources[0] (drbd0).disk:') and "';'" in out['msg'], out
    assert not log.exists() and os.listdir(conf['config_dir']) == []
    # the wrapper does log a valid resource's validation: its empty log above means benchlab stopped the other
    assert module(env, 'drbd_resource', dict(conf, resources=[reference()], drbdadm=drbdadm))[0] == 0
    assert any('sh-nop' in c for c in log.read_text().splitlines())


# ---- issue 14: drbd_md probes every disk of every volume, through the device guard ------------------------

@pytest.fixture
def loopdevs():
    """Three 64 MiB loop devices (images prefixed drbdh-); swap, mounts and loops undone also on failure."""
    made, cleanup = [], []
    try:
        for _n in range(3):
            fd, img = tempfile.mkstemp(prefix='drbdh-', suffix='.img', dir='/var/tmp')
            os.close(fd)
            os.truncate(img, 64 * 1024 * 1024)
            made.append((subprocess.run(['losetup', '-f', '--show', img], capture_output=True, text=True,
                                        check=True).stdout.strip(), img))
        yield [dev for dev, _img in made], cleanup
    finally:
        for argv in reversed(cleanup):
            subprocess.run(argv, check=False, capture_output=True)
        for dev, img in made:
            subprocess.run(['losetup', '-d', dev], check=False)
            os.unlink(img)


def two_volume_config(tmp_path, d0, d1, md1):
    """A hand-written DRBD 9 resource with two volumes on this host: volume 0 internal meta-data on d0,
    volume 1 on d1 with its meta-data on md1."""
    main = tmp_path / 'mv.conf'
    main.write_text('resource mv {\n  volume 0 { device /dev/drbd95 minor 95; disk %s; meta-disk internal; }\n'
                    '  volume 1 { device /dev/drbd96 minor 96; disk %s; meta-disk %s; }\n'
                    '  on %s { node-id 0; address 10.199.0.1:7996; }\n  on drbdh-peer { node-id 1; address 10.199.0.2:7996; }\n}\n'
                    % (d0, d1, md1, HOST))
    return {'name': 'mv', 'config_file': str(main)}


def test_drbd_md_probes_every_volume_and_guards_each_disk(env, tmp_path, loopdevs):
    (d0, d1, md1), cleanup = loopdevs
    md = two_volume_config(tmp_path, d0, d1, md1)
    rc, status, out = module(env, 'drbd_md', md, check=True)
    assert rc == 0 and out['changed'], out
    assert {(x['device'], x['role']) for x in out['devices']} == {(d0, 'disk+meta-disk'), (d1, 'disk'), (md1, 'meta-disk')}
    # the second volume's disk carries data: refused naming it, nothing written anywhere
    subprocess.run(['mkfs.ext4', '-q', d1], check=True)
    rc, status, out = module(env, 'drbd_md', md)
    assert rc != 0 and 'safe mode: refusing create-md for mv: %s carries ext4' % d1 in out['msg'], out
    assert [blkid_type(x) for x in (d0, d1, md1)] == ['', 'ext4', '']
    # in use is refused even with force: active swap on volume 1's disk ...
    subprocess.run(['mkswap', '-q', d1], check=True)
    subprocess.run(['swapon', d1], check=True)
    cleanup.append(['swapoff', d1])
    rc, status, out = module(env, 'drbd_md', dict(md, force=True))
    assert rc != 0 and 'refusing to create DRBD meta-data of resource mv on %s' % d1 in out['msg'] \
        and 'swap' in out['msg'], out
    subprocess.run(['swapoff', d1], check=True)
    # ... and a mounted filesystem on volume 0's disk
    subprocess.run(['mkfs.ext4', '-q', d0], check=True)
    mnt = tmp_path / 'mnt'
    mnt.mkdir()
    subprocess.run(['mount', d0, str(mnt)], check=True)
    cleanup.append(['umount', str(mnt)])
    (mnt / 'keep').write_text('data')
    rc, status, out = module(env, 'drbd_md', dict(md, force=True))
    assert rc != 0 and 'refusing to create DRBD meta-data of resource mv on %s' % d0 in out['msg'] \
        and 'mounted' in out['msg'], out
    subprocess.run(['umount', str(mnt)], check=True)
    subprocess.run(['mount', d0, str(mnt)], check=True)
    assert (mnt / 'keep').read_text() == 'data'
    subprocess.run(['umount', str(mnt)], check=True)
    # clean disks: meta-data for both volumes, then idempotent, then a partial state is refused
    for x in (d0, d1, md1):
        subprocess.run(['dd', 'if=/dev/zero', 'of=' + x, 'bs=1M', 'count=64', 'conv=fsync', 'status=none'], check=True)
    rc, status, out = module(env, 'drbd_md', md)
    assert rc == 0 and out['changed'], out
    # blkid sees internal meta-data only; the module reads the external one's magic itself
    assert [blkid_type(x) for x in (d0, d1, md1)] == ['drbd', '', '']
    rc, status, out = module(env, 'drbd_md', md)
    assert rc == 0 and not out['changed'] and out['md_exists'], out
    assert {x['device']: x['verdict'] for x in out['devices']} == {d0: 'drbd', d1: 'empty', md1: 'drbd'}
    subprocess.run(['drbdadm', '-c', md['config_file'], 'wipe-md', '--force', 'mv/1'], check=True, capture_output=True,
                   input='')
    rc, status, out = module(env, 'drbd_md', md)
    assert rc != 0 and 'DRBD meta-data is on %s but not on %s' % (d0, md1) in out['msg'], out
    rc, status, out = module(env, 'drbd_md', dict(md, state='absent'))
    assert rc == 0 and out['changed'] and [blkid_type(x) for x in (d0, d1, md1)] == ['', '', ''], out
    rc, status, out = module(env, 'drbd_md', dict(md, state='absent'))
    assert rc == 0 and not out['changed'] and not out['md_exists'], out


# ---- issue 14: the lifecycle never prints the secret, also when drbdadm fails ------------------------------

@pytest.mark.parametrize('secret_line', [
    # drbdadm rejects a secret longer than 63 characters, quoting its first 20 in the error
    'shared-secret "S3cret-%s";' % ('x' * 60),
    # a stray second token: drbdadm's parse error quotes it ("but got '<secret>'")
    'shared-secret S3cret-t0ken S3cret-t0ken;',
])
def test_lifecycle_masks_the_secret_when_drbdadm_fails(env, tmp_path, secret_line):
    secret = secret_line.split()[1].strip('";')
    main = tmp_path / 'bad.conf'
    main.write_text('resource bad {\n  net { cram-hmac-alg sha256; %s }\n  device /dev/drbd94 minor 94; disk /dev/sdx9;'
                    ' meta-disk internal;\n  on %s { node-id 0; address 127.0.0.1:7994; }\n'
                    '  on drbdh-peer { node-id 1; address 10.199.0.2:7994; }\n}\n' % (secret_line, HOST))
    # without masking, drbdadm's own output carries the secret (or its first 20 characters)
    raw = subprocess.run(['drbdadm', '-c', str(main), '-d', 'up', 'bad'], capture_output=True, text=True, check=False)
    assert raw.returncode != 0 and secret[:20] in raw.stdout + raw.stderr
    for check in (True, False):
        p = cli(env, 'drbd_lifecycle', {'name': 'bad', 'state': 'up', 'config_file': str(main)}, check=check,
                verbose=True)
        assert p.returncode != 0 and 'up bad failed (rc=' in p.stdout and 'Parse error' in p.stdout, p.stdout[-2000:]
        assert secret[:20] not in p.stdout + p.stderr and secret not in p.stdout + p.stderr, p.stdout[-2000:]


# ---- issue 14: the filesystem step acts only on the resource's own DRBD device -----------------------------

def test_teardown_never_unmounts_a_foreign_filesystem(tmp_path, env, conf, loopdev):
    """A real tmpfs on the resource's mount point (its source even named like the DRBD device): the
    teardown refuses, naming it, and it stays mounted with its data; state mounted refuses it too."""
    res = local_resource(conf, loopdev)
    mnt = tmp_path / 'drbdh-mnt'
    mnt.mkdir()
    res['mount'] = str(mnt)
    variables = {'drbd_resources': [res], 'drbd_config_dir': conf['config_dir'], 'drbd_install': False,
                 'drbd_main_config': conf['main_config']}
    assert role_play(tmp_path, env, variables).returncode == 0
    subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1m', '/dev/drbd97', str(mnt)], check=True)
    try:
        (mnt / 'keep').write_text('data')
        p = role_play(tmp_path, env, variables, tasks_from='teardown')
        assert p.returncode != 0, p.stdout[-3000:]
        assert 'refusing to unmount %s for resource drbdhloop: /dev/drbd97 (tmpfs' % mnt in p.stdout, p.stdout[-3000:]
        assert "not the resource's DRBD device /dev/drbd97 (147:97)" in p.stdout
        lc = {'name': 'drbdhloop', 'mount': str(mnt), 'config_file': conf['main_config']}
        rc, status, out = module(env, 'drbd_lifecycle', dict(lc, state='mounted'))
        assert rc != 0 and 'refusing to use %s' % mnt in out['msg'] and 'neither benchmarks nor unmounts' in out['msg']
        assert (mnt / 'keep').read_text() == 'data'
        assert subprocess.run(['findmnt', '-rn', '-o', 'FSTYPE', '--mountpoint', str(mnt)], capture_output=True,
                              text=True, check=False).stdout.strip() == 'tmpfs'
    finally:
        subprocess.run(['umount', str(mnt)], check=False)
    # nothing mounted there: unmounted has nothing to do; mounted plans mkfs + mount (check mode, no module here)
    lc = {'name': 'drbdhloop', 'mount': str(mnt), 'config_file': conf['main_config']}
    rc, status, out = module(env, 'drbd_lifecycle', dict(lc, state='unmounted'))
    assert rc == 0 and not out['changed'] and out['mounted'] is None, out
    rc, status, out = module(env, 'drbd_lifecycle', dict(lc, state='mounted'), check=True)
    assert rc == 0 and out['plan'] == ['mkfs', 'mount'] and out['device'] == '/dev/drbd97', out


def test_teardown_twice_second_is_a_no_op(tmp_path, env, conf, loopdev):
    """Real meta-data (drbdmeta on a loop device), a mount point: the first teardown wipes it and
    removes the file; the second one, with the same variables and the file gone, changes nothing
    and fails nothing (it used to fail in drbdadm sh-minor / sh-ll-dev: resource not defined)."""
    res = dict(local_resource(conf, loopdev), primary=HOST, mount=str(tmp_path / 'drbdh-mnt'))
    variables = {'drbd_resources': [res], 'drbd_config_dir': conf['config_dir'], 'drbd_install': False,
                 'drbd_main_config': conf['main_config'], 'drbd_lab': 'drbdh'}
    assert role_play(tmp_path, env, variables).returncode == 0
    subprocess.run(['dd', 'if=/dev/zero', 'of=' + loopdev, 'bs=1M', 'count=64', 'conv=fsync', 'status=none'], check=True)
    rc, status, out = module(env, 'drbd_md', {'name': 'drbdhloop', 'config_file': conf['main_config']})
    assert rc == 0 and out['changed'] and blkid_type(loopdev) == 'drbd', out
    down = dict(variables, drbd_teardown_wipe_md=True, drbd_teardown_remove_config=True)
    p = role_play(tmp_path, env, down, tasks_from='teardown')
    assert p.returncode == 0 and recap(p)['changed'] == 2, p.stdout[-3000:]
    assert blkid_type(loopdev) == '' and os.listdir(conf['config_dir']) == []
    p = role_play(tmp_path, env, down, tasks_from='teardown')
    assert p.returncode == 0, p.stdout[-3000:]
    assert recap(p) == dict(recap(p), changed=0, failed=0), p.stdout[-3000:]
    assert 'Wipe the DRBD meta-data' in p.stdout and os.listdir(conf['config_dir']) == []


@pytest.mark.parametrize('mod,args', [
    ('drbd_md', {'name': 'all', 'state': 'absent'}),
    ('drbd_md', {'name': '--force'}),
    ('drbd_lifecycle', {'name': 'all', 'state': 'down'}),
    ('drbd_lifecycle', {'name': 'resource', 'state': 'up'}),
    ('drbd_status', {'names': ['all']}),
])
def test_modules_refuse_all_and_option_like_names_before_drbdadm(env, logging_drbdadm, mod, args):
    """`drbdadm wipe-md --force all` would wipe every resource of the host."""
    drbdadm, log = logging_drbdadm
    if mod != 'drbd_status':
        args = dict(args, drbdadm=drbdadm)
    rc, status, out = module(env, mod, args)
    assert rc != 0 and 'name' in out['msg'] and ('cannot be a resource name' in out['msg']
                                                 or 'is not a resource name' in out['msg']), out
    assert not log.exists()
