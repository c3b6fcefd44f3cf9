# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/run/common.given_options: the options as the user gave them, after Ansible validated them
against declared sub-options (issue 28: drbd_resource declares every key so its secrets are no_log)."""

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.benchlab.bench.plugins.module_utils.run.common import given_options

SPEC = {'name': {'type': 'raw'}, 'shared_secret': {'type': 'raw', 'no_log': True},
        'incon_degr_cmd': {'type': 'raw', 'aliases': ['incon-degr-cmd']},
        'net': {'type': 'dict', 'options': {
            'max_buffers': {'type': 'raw', 'aliases': ['max-buffers']},
            'shared_secret': {'type': 'raw', 'no_log': True, 'aliases': ['shared-secret']},
            'timeout': {'type': 'raw'}}}}


def test_what_ansible_adds_is_gone_and_the_user_s_keys_stay_in_their_order_and_spelling():
    given = [{'net': {'shared-secret': 'S3CR', 'max-buffers': 8000}, 'name': 'r0', 'incon-degr-cmd': 'x'},
             {'name': 'r1', 'net': None}]
    result = ArgumentSpecValidator({'resources': {'type': 'list', 'elements': 'dict', 'options': SPEC}}).validate(
        {'resources': given})
    assert result.error_messages == [] and result.unsupported_parameters == set()
    validated = result.validated_parameters['resources']
    assert validated[0]['shared_secret'] is None and validated[0]['net']['shared_secret'] == 'S3CR'  # Ansible's additions
    assert 'S3CR' in result._no_log_values  # pylint: disable=protected-access
    out = given_options(validated, SPEC)
    assert out == [{'net': {'shared-secret': 'S3CR', 'max-buffers': 8000}, 'name': 'r0', 'incon-degr-cmd': 'x'},
                   {'name': 'r1'}]
    assert list(out[0]) == ['net', 'name', 'incon-degr-cmd'] and list(out[0]['net']) == ['shared-secret', 'max-buffers']


def test_values_that_are_no_mapping_are_left_to_the_module_s_own_checks():
    assert given_options(['not a dict', 5], SPEC) == ['not a dict', 5]
    assert given_options({'net': 'x', 'name': 'r'}, SPEC) == {'net': 'x', 'name': 'r'}
