# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report callback builds the schema validators at the playbook's start, in the controller's
main process, so that the plan task's worker (a fork of it) finds the matrix validator ready."""

from ansible_collections.benchlab.bench.plugins.callback.report import CallbackModule
from ansible_collections.benchlab.bench.plugins.module_utils.run import record
from ansible_collections.benchlab.bench.plugins.plugin_utils.common import validation


def test_warm_validators_builds_the_record_and_matrix_validators(monkeypatch):
    monkeypatch.setattr(validation, '_validators', {})
    monkeypatch.setattr(record, '_VALIDATOR', [])
    CallbackModule._warm_validators()
    assert (validation.MATRIX_SCHEMA_FILE, ()) in validation._validators
    assert len(record._VALIDATOR) == 1
    # the one the plan uses: validating a matrix now takes the cached validator
    built = validation._validators[(validation.MATRIX_SCHEMA_FILE, ())]
    assert validation.matrix_problems({'name': 'x'}) and validation.validator(validation.MATRIX_SCHEMA_FILE) is built


def test_warm_validators_never_raises(monkeypatch):
    def broken(*_args, **_kwargs):
        raise ImportError('no jsonschema')
    monkeypatch.setattr(validation, 'validator', broken)
    CallbackModule._warm_validators()      # the real use reports the problem, not the warm-up
