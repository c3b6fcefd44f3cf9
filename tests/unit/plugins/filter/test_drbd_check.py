# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/filter/drbd_check.py: the controller-side check over module_utils/drbd.py (whose own tests
are in tests/unit/plugins/module_utils/test_drbd.py): same refusals, never a secret printed."""

import json

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.benchlab.bench.plugins.filter.drbd_check import drbd_check
from ansible_collections.benchlab.bench.tests.unit.plugins.module_utils.test_drbd import HOSTILE, hostile_resources, reference


def test_filter_summarizes_without_secret_and_checks_primary():
    res = reference()
    res.update(shared_secret='hush', cram_hmac_alg='sha1', mount='/srv/bench-drbd')
    out = drbd_check([res], 'auto', allow_handlers=True)
    assert out == [{'name': 'drbd0', 'protocol': 'C', 'primary': 'node1', 'nodes': ['node1', 'node2'], 'minors': [0],
                    'mount': '/srv/bench-drbd', 'fstype': 'ext4', 'notes': out[0]['notes']}]
    assert 'hush' not in json.dumps(out)
    res['primary'] = 'node9'
    with pytest.raises(AnsibleFilterError, match="primary: 'node9' is not one of its nodes"):
        drbd_check([res], allow_handlers=True)
    with pytest.raises(AnsibleFilterError, match='drbd_check: drbd_resources must be a list'):
        drbd_check('x')
    bad = reference()
    bad.update(protocol='Z', shared_secret='hush')
    with pytest.raises(AnsibleFilterError) as e:
        drbd_check([bad], allow_handlers=True)
    assert 'protocol' in str(e.value) and 'hush' not in str(e.value)


@pytest.mark.parametrize('case', HOSTILE['cases'], ids=[c['id'] for c in HOSTILE['cases']])
def test_hostile_drbd_input_is_refused_by_the_filter_too(case):
    """The controller-side filter refuses every hostile case the way check_resources does, no secret shown."""
    resources = hostile_resources(case)
    with pytest.raises(AnsibleFilterError) as f:
        drbd_check(resources, case.get('syntax', '9'), allow_handlers=case.get('allow_handlers', False))
    assert case['expect'][0] in str(f.value)
    for res in resources:
        if res.get('shared_secret'):
            assert res['shared_secret'] not in str(f.value)
