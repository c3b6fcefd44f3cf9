# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared secret masked in the module's start-up log line under the ansible-core of this venv
(`make compat`: 2.16, 2.20 and the default 2.19): drbd_resource declares it no_log at every depth, and
each core honours that in AnsibleModule._log_invocation. The line is captured on a /dev/log of the
test's own (tests/integration/syslog_ns.py: a mount namespace of its own, the machine's /dev untouched);
tests/integration/test_secrets_target_log.py runs every case (role, check, diff, failures) under 2.19."""

import json
import os
import secrets
import shutil
import subprocess
import sys

import pytest

from conftest import BIN, CORE, REPO

SYSLOG_NS = REPO / 'tests' / 'integration' / 'syslog_ns.py'


@pytest.mark.skipif(not shutil.which('drbdadm') or os.geteuid() != 0,
                    reason='needs root (a mount namespace) and drbd-utils (drbdadm)')
def test_the_secret_is_masked_in_the_start_up_line(env, tmp_path):
    values = ['sEcr3t-%d-%s' % (i, secrets.token_hex(10)) for i in range(3)]
    marker = 'compat-%s' % secrets.token_hex(6)
    conf = tmp_path / 'drbd.d'
    conf.mkdir()
    main = tmp_path / 'drbd.conf'
    main.write_text('include "%s/*.res";\n' % conf)
    nodes = [{'name': 'n1', 'address': '10.199.8.1:7990'}, {'name': 'n2', 'address': '10.199.8.2:7990'}]
    resources = [{'name': 'cmp0', 'minor': 90, 'disk': '/dev/sdz90', 'shared_secret': values[0], 'cram_hmac_alg': 'sha256',
                  'nodes': nodes},
                 {'name': 'cmp1', 'minor': 91, 'disk': '/dev/sdz91', 'net': {'shared-secret': values[1], 'cram_hmac_alg': 'sha1'},
                  'nodes': [dict(n, address=n['address'][:-1] + '1') for n in nodes]},
                 {'name': 'cmp2', 'minor': 92, 'disk': '/dev/sdz92', 'net': {'shared_secret': values[2], 'cram_hmac_alg': 'sha1'},
                  'nodes': [dict(n, address=n['address'][:-1] + '2') for n in nodes]}]
    args = {'config_dir': str(conf), 'main_config': str(main), 'lab': marker, 'resources': resources}
    commands = [{'argv': [str(BIN / 'ansible'), 'localhost', '-i', 'inventories/local', '-m',
                          'benchlab.bench.drbd_resource', '-a', json.dumps(args), '--diff'], 'env': env, 'cwd': str(REPO)}]
    (tmp_path / 'commands.json').write_text(json.dumps(commands))
    (tmp_path / 'ns').mkdir()
    proc = subprocess.run(['unshare', '-m', '--propagation', 'private', sys.executable, str(SYSLOG_NS),
                           str(tmp_path / 'ns'), str(tmp_path / 'commands.json'), str(tmp_path / 'out.json')],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout
    out = json.loads((tmp_path / 'out.json').read_text())
    (result,) = out['results']
    assert result['rc'] == 0, result['stdout'] + result['stderr']
    assert sorted(os.listdir(str(conf))) == ['cmp0.res', 'cmp1.res', 'cmp2.res']
    lines = [m for m in out['messages'] if 'ansible-benchlab.bench.drbd_resource' in m and marker in m]
    assert len(lines) == 1, (CORE, out['messages'])
    assert lines[0].count('********') >= 3, lines[0]
    for value in values:
        assert value not in lines[0] and value not in result['stdout'] + result['stderr'], (CORE, lines[0])
