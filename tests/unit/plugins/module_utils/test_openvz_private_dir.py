# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/guests/openvz.py private_dir: a container made on a given volume (the DRBD-backed /vz or an
equal plain volume, scenarios/drbd_2x2), as exact argv; no OpenVZ kernel needed."""

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.guests import openvz

SPEC = {'tool': 'vzctl', 'ctid': '101', 'ostemplate': 'centos-6-x86_64', 'layout': 'simfs', 'state': 'started'}
NONE = {'exists': False, 'running': False}


def test_vzctl_creates_the_private_area_under_the_given_directory():
    create = openvz.plan(dict(SPEC, private_dir='/vz-plain/private/'), NONE)[0]
    assert create == ['vzctl', 'create', '101', '--ostemplate', 'centos-6-x86_64', '--layout', 'simfs',
                      '--private', '/vz-plain/private/101']


def test_prlctl_creates_the_container_in_the_given_directory():
    create = openvz.plan(dict(SPEC, tool='prlctl', ctid='ct101', layout='ploop', private_dir='/vz/private'), NONE)[0]
    assert create == ['prlctl', 'create', 'ct101', '--vmtype', 'ct', '--ostemplate', 'centos-6-x86_64', '--dst', '/vz/private']


def test_without_private_dir_the_host_default_is_used():
    assert '--private' not in openvz.plan(SPEC, NONE)[0]


@pytest.mark.parametrize('bad', ['vz/private', '/vz/../etc', '/vz/private;rm', '/vz/pri vate', '/vz,x'])
def test_a_bad_private_dir_is_refused_naming_the_option(bad):
    with pytest.raises(openvz.OpenVZError, match='private_dir'):
        openvz.plan(dict(SPEC, private_dir=bad), NONE)
