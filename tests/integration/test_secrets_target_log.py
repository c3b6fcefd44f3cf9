# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets never reach the target's system log (issue 28 section 1).

Ansible logs every module's arguments to the target's syslog (or journal) when the module starts
(AnsibleModule._log_invocation), masking only the values of options declared no_log; a module that
masks its secrets itself does so too late for that line. This test listens where that line goes:
syslog_ns.py runs the plays in a mount namespace of its own whose /dev/log is a socket it reads (an
overlay over /dev: the machine's /dev is untouched; there is no syslog daemon here), and records
every datagram.

Every module with an option that can carry a secret runs there - today drbd_resource, whose
resources carry DRBD's shared secret at the resource (`shared_secret`) and in `net` (`shared_secret`
and `shared-secret`) - directly (tasks of a playbook, as a user's own playbook calls it) and through
its role (benchlab.bench.drbd), with success, check mode, diff mode (a rotated secret) and three kinds
of failure (drbdadm rejecting the file, the module's own check, Ansible's argument check). A
distinct random secret is planted for each run and place. Positive controls: every run really
happened as intended (its result, its files), the module's start-up lines were captured (one per
module run, with a marker that is no secret), the secrets were masked in them (********), and the
captured text is searched where a secret would be.

Where systemd-journald runs (not on the development machine: no systemd) the journal is read too:
the same module runs outside the namespace log through /dev/log or journal.send to journald, and
journalctl shows the marker but no secret.
"""

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import BIN, REPO, ansible_env

HERE = Path(__file__).resolve().parent
HOST = os.uname()[1]

pytestmark = [pytest.mark.skipif(not shutil.which('drbdadm'), reason='drbd-utils (drbdadm) is not installed'),
              pytest.mark.skipif(os.geteuid() != 0, reason='a mount namespace and an overlay on /dev need root')]


def secret(tag):
    return 'sEcr3t-%s-%s' % (tag, secrets.token_hex(12))


def resource(name, minor, port, **extra):
    """A resource whose first node is this host (the role renders what names it)."""
    res = {'name': name, 'protocol': 'C', 'minor': minor, 'disk': '/dev/sdz%d' % minor, 'meta_disk': 'internal',
           'nodes': [{'name': HOST, 'address': '10.199.7.1:%d' % port}, {'name': 'slog-peer', 'address': '10.199.7.2:%d' % port}]}
    res.update(extra)
    return res


def with_secret(res, where, value):
    """`res` carrying `value` at `where`: the resource's shared_secret, or net's shared_secret / shared-secret."""
    res = json.loads(json.dumps(res))
    if where == 'resource':
        res.update(shared_secret=value, cram_hmac_alg='sha256')
    else:
        res.setdefault('net', {}).update({where: value, 'cram_hmac_alg': 'sha256', 'max_buffers': 8000})
    return res


def direct_play(conf, main, planted, marker):
    """drbd_resource tasks as a user's playbook has them: success, check, diff, failures, absent."""
    d = dict(config_dir=str(conf), main_config=str(main), lab=marker)
    ok = [with_secret(resource('slog1', 71, 7971), 'resource', planted['direct resource shared_secret']),
          with_secret(resource('slog2', 72, 7972), 'shared_secret', planted['direct net shared_secret']),
          with_secret(resource('slog3', 73, 7973), 'shared-secret', planted['direct net shared-secret'])]
    rotated = [with_secret(ok[0], 'resource', planted['direct rotated (check mode)'])] + ok[1:]
    diffed = [with_secret(ok[0], 'resource', planted['direct rotated (diff mode)'])] + ok[1:]
    # drbdadm rejects it: minor 71 is slog1's (installed) on this host
    clash = [with_secret(resource('slog9', 71, 7979), 'resource', planted['direct failure: drbdadm'])]
    no_alg = resource('slog8', 78, 7978, shared_secret=planted['direct failure: module check'])
    unknown = with_secret(resource('slog7', 77, 7977, protocl='A'), 'resource', planted['direct failure: argument spec'])
    tasks = [
        {'name': 'success', 'benchlab.bench.drbd_resource': dict(d, resources=ok), 'register': 'success'},
        {'name': 'check mode', 'benchlab.bench.drbd_resource': dict(d, resources=rotated), 'check_mode': True,
         'register': 'check'},
        {'name': 'diff mode', 'benchlab.bench.drbd_resource': dict(d, resources=diffed), 'diff': True, 'register': 'diff'},
        {'name': 'failure: drbdadm', 'benchlab.bench.drbd_resource': dict(d, resources=clash), 'ignore_errors': True,
         'register': 'fail_drbdadm'},
        {'name': 'failure: module check', 'benchlab.bench.drbd_resource': dict(d, resources=[no_alg]),
         'ignore_errors': True, 'register': 'fail_check'},
        {'name': 'failure: argument spec', 'benchlab.bench.drbd_resource': dict(d, resources=[unknown]),
         'ignore_errors': True, 'register': 'fail_spec'},
        {'name': 'absent', 'benchlab.bench.drbd_resource': dict(d, resources=diffed, state='absent'),
         'register': 'absent'},
        {'name': 'results', 'ansible.builtin.copy': {
            'dest': str(conf.parent / 'direct-results.json'), 'mode': '0600',
            'content': '{{ {"success": success, "check": check, "diff": diff, "fail_drbdadm": fail_drbdadm, '
                       '"fail_check": fail_check, "fail_spec": fail_spec, "absent": absent} | to_json }}'}}]
    return [{'name': 'drbd_resource directly', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]


def role_inventory(tmp_path, conf, main, planted, marker):
    inv = tmp_path / 'role-inventory.yml'
    res = [with_secret(resource('slogr1', 81, 7981), 'resource', planted['role resource shared_secret']),
           with_secret(resource('slogr2', 82, 7982), 'shared-secret', planted['role net shared-secret'])]
    inv.write_text(yaml.safe_dump({'all': {'children': {'drbd_pair': {'hosts': {'localhost': {
        'ansible_connection': 'local', 'ansible_python_interpreter': str(BIN / 'python'),
        'drbd_resources': res, 'drbd_install': False, 'drbd_config_dir': str(conf), 'drbd_main_config': str(main),
        'drbd_lab': marker}}}}}}))
    rotated = tmp_path / 'role-rotated.yml'
    rotated.write_text(yaml.safe_dump({'drbd_resources': [
        with_secret(res[0], 'resource', planted['role rotated (diff mode)']), res[1]]}))
    clash = tmp_path / 'role-clash.yml'   # drbdadm rejects it: minor 81 is slogr1's (installed) on this host
    clash.write_text(yaml.safe_dump({'drbd_resources': [
        with_secret(resource('slogr9', 81, 7989), 'resource', planted['role failure: drbdadm'])]}))
    return inv, rotated, clash


@pytest.fixture(scope='module')
def captured(tmp_path_factory):
    """Every run of the module, directly and through the role, with /dev/log captured."""
    tmp = tmp_path_factory.mktemp('slog')
    planted = dict((place, secret(str(i))) for i, place in enumerate((
        'direct resource shared_secret', 'direct net shared_secret', 'direct net shared-secret',
        'direct rotated (check mode)', 'direct rotated (diff mode)', 'direct failure: drbdadm',
        'direct failure: module check', 'direct failure: argument spec', 'role resource shared_secret',
        'role net shared-secret', 'role rotated (diff mode)', 'role failure: drbdadm')))
    marker = 'slog-%s' % secrets.token_hex(6)  # the lab: in every start-up line, no secret
    conf = tmp / 'drbd.d'
    conf.mkdir()
    main = tmp / 'drbd.conf'
    main.write_text('include "%s/*.res";\n' % conf)
    direct = tmp / 'direct.yml'
    direct.write_text(json.dumps(direct_play(conf, main, planted, marker)))
    role_conf = tmp / 'role.d'
    role_conf.mkdir()
    role_main = tmp / 'role.conf'
    role_main.write_text('include "%s/*.res";\n' % role_conf)
    inv, rotated, clash = role_inventory(tmp, role_conf, role_main, planted, marker)
    env = ansible_env(tmp)
    book = [str(BIN / 'ansible-playbook'), '-i', str(inv), 'playbooks/drbd.yml']
    commands = [
        {'name': 'direct', 'argv': [str(BIN / 'ansible-playbook'), '-i', str(REPO / 'inventories/local'), str(direct)]},
        {'name': 'role', 'argv': book},
        {'name': 'role check', 'argv': book + ['-e', '@%s' % rotated, '--check']},
        {'name': 'role diff', 'argv': book + ['-e', '@%s' % rotated, '--diff']},
        {'name': 'role failure', 'argv': book + ['-e', '@%s' % clash]},
    ]
    for c in commands:
        c.update(env=env, cwd=str(REPO))
    (tmp / 'commands.json').write_text(json.dumps(commands))
    (tmp / 'ns').mkdir()
    t0 = time.time()
    proc = subprocess.run(['unshare', '-m', '--propagation', 'private', sys.executable, str(HERE / 'syslog_ns.py'),
                           str(tmp / 'ns'), str(tmp / 'commands.json'), str(tmp / 'captured.json')],
                          capture_output=True, text=True, check=False, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads((tmp / 'captured.json').read_text())
    runs = dict((c['name'], r) for c, r in zip(commands, out['results']))
    return {'planted': planted, 'marker': marker, 'messages': out['messages'], 'runs': runs, 'since': t0,
            'direct': json.loads((tmp / 'direct-results.json').read_text()), 'conf': conf, 'role_conf': role_conf}


def startup_lines(messages, module='drbd_resource'):
    return [m for m in messages if 'ansible-benchlab.bench.%s' % module in m or
            ('ansible-%s' % module in m and 'Invoked with' in m)]


def test_every_run_happened_as_intended(captured):
    """Positive control: the runs did what each case says (else the search below proves nothing)."""
    runs, direct, planted = captured['runs'], captured['direct'], captured['planted']
    assert runs['direct']['rc'] == 0, runs['direct']['stdout'][-3000:]
    assert direct['success']['changed'] and len(direct['success']['files']) == 3
    assert direct['check']['changed'] and direct['diff']['changed'] and direct['diff']['diff']
    assert 'drbdadm rejected the rendered resource slog9' in direct['fail_drbdadm']['msg'], direct['fail_drbdadm']
    assert 'set without cram_hmac_alg' in direct['fail_check']['msg'], direct['fail_check']
    assert 'resources.protocl' in direct['fail_spec']['msg'], direct['fail_spec']
    assert direct['absent']['changed'] and os.listdir(captured['conf']) == []
    assert runs['role']['rc'] == 0 and runs['role check']['rc'] == 0 and runs['role diff']['rc'] == 0, \
        [runs[k]['stdout'][-2000:] for k in ('role', 'role check', 'role diff')]
    assert '+        shared-secret ********;' in runs['role diff']['stdout'], runs['role diff']['stdout'][-3000:]
    # the rotation reached the file (in the config dir, where the secret belongs)
    assert planted['role rotated (diff mode)'] in (captured['role_conf'] / 'slogr1.res').read_text()
    assert runs['role failure']['rc'] != 0 and 'drbdadm rejected the rendered resource slogr9' in \
        runs['role failure']['stdout'], runs['role failure']['stdout'][-3000:]


def test_the_start_up_lines_were_captured_with_their_arguments_masked(captured):
    """Positive control: what Ansible logs at each start reached our /dev/log, the arguments in it."""
    lines = startup_lines(captured['messages'])
    # 7 direct runs (the argument-spec failure stops before the line is logged) and 4 through the role
    assert len(lines) >= 6 + 4, captured['messages']
    with_marker = [m for m in lines if captured['marker'] in m]
    assert len(with_marker) >= 10, lines
    assert all('********' in m for m in with_marker if 'shared' in m), with_marker
    # net's shared-secret (drbd.conf's spelling) reached the module as its declared shared_secret, masked
    assert any('slog3' in m and "'shared_secret': '********'" in m for m in lines), lines


def test_no_secret_reaches_the_target_log(captured):
    leaks = [(place, m) for place, value in captured['planted'].items() for m in captured['messages'] if value in m]
    assert not leaks, 'secret(s) in the target\'s syslog:\n' + '\n'.join('%s: %s' % (p, m[:600]) for p, m in leaks)


def test_no_secret_in_the_output_either(captured):
    outputs = [(name, run['stdout'] + run['stderr']) for name, run in captured['runs'].items()]
    outputs.append(('direct results', json.dumps(captured['direct'])))
    leaks = [(place, name) for place, value in captured['planted'].items() for name, text in outputs if value in text]
    assert not leaks, leaks


def journald_running():
    return os.path.exists('/run/systemd/journal/socket') and os.path.isdir('/run/systemd/system') and \
        shutil.which('journalctl') is not None


def test_no_secret_reaches_the_journal(tmp_path):
    """Where journald runs: the module started as usual (no namespace: its start-up line goes to the
    journal through /dev/log or journal.send), then the journal is read."""
    if not journald_running():
        pytest.skip('journald is not running here (no /run/systemd/journal/socket, no systemd): the journal is '
                    'not read; the syslog socket is (test_no_secret_reaches_the_target_log)')
    value, marker = secret('journal'), 'slogj-%s' % secrets.token_hex(6)
    conf = tmp_path / 'drbd.d'
    conf.mkdir()
    main = tmp_path / 'drbd.conf'
    main.write_text('include "%s/*.res";\n' % conf)
    args = dict(config_dir=str(conf), main_config=str(main), lab=marker,
                resources=[with_secret(resource('slogj', 74, 7974), 'shared-secret', value)])
    since = time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(time.time() - 2))
    proc = subprocess.run([str(BIN / 'ansible'), 'localhost', '-i', str(REPO / 'inventories/local'), '-m',
                           'benchlab.bench.drbd_resource', '-a', json.dumps(args)], cwd=str(REPO),
                          env=ansible_env(tmp_path), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    time.sleep(1)
    journal = subprocess.run(['journalctl', '--since', since, '-o', 'json', '--no-pager'], capture_output=True,
                             text=True, check=True).stdout
    assert marker in journal, 'the module\'s start-up line is not in the journal: the search proves nothing'
    assert value not in journal
