"""Trap codes a target puts on its record (module_utils/run/trapcodes.py)."""

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fiojob import (
    fio_compressible, fio_zero_warning, options_to_sections, parse_job_file)
from ansible_collections.benchlab.bench.plugins.module_utils.run.trapcodes import TARGET_CODES, record_flags
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.traps import RUN_CODES, VOCABULARY


def test_record_flags_from_params_and_module():
    assert record_flags({}) == []
    assert record_flags({'guards': {'quiet': True}}) == []
    assert record_flags({'guards': {'quiet': False}}) == ['not_quiet']
    assert record_flags({'guards': {'quiet': None}}) == []  # quiesce off: no verdict, no flag
    assert record_flags({'test': 'write', 'data': 'zero'}, ['below_2x_ram', 'below_2x_ram']) == ['below_2x_ram', 'zero_data']
    assert record_flags({'test': 'read', 'data': 'zero'}) == []
    assert record_flags(None, ['source_on_test_storage', None]) == ['source_on_test_storage']


def test_fio_options_that_write_zeros_or_compressible_data():
    assert fio_compressible({'rw': 'write', 'bs': '1M'}) == []
    assert fio_compressible({'zero_buffers': None}) == ['zero_buffers']  # a flag option without value
    assert fio_compressible({'zero_buffers': '0', 'refill_buffers': '1'}) == []
    assert fio_compressible({'buffer_compress_percentage': '50', 'dedupe_percentage': '0'}) == ['buffer_compress_percentage']
    assert fio_compressible({'buffer_pattern': '0xdeadbeef', '--dedupe_percentage': '30'}) == [
        'buffer_pattern', 'dedupe_percentage']


def test_fio_zero_warning_over_job_sections():
    job = parse_job_file('[global]\nzero_buffers\n[w]\nrw=write\n')
    assert 'zero_buffers' in fio_zero_warning(job)
    assert fio_zero_warning(parse_job_file('[w]\nrw=write\nrefill_buffers\n')) is None
    assert 'buffer_compress_percentage' in fio_zero_warning(
        options_to_sections({'buffer_compress_percentage': 70}, base={'name': 'job'}))
    assert fio_zero_warning(options_to_sections({'rw': 'randwrite'}, base={'name': 'job'})) is None


def test_one_vocabulary_explains_every_code():
    for code in TARGET_CODES + RUN_CODES:
        title, text = VOCABULARY[code]
        assert title and len(text) > 40
