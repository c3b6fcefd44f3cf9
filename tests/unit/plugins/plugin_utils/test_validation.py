# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/common/validation.py: one loader/cache and one path style for the matrix, results.json
and the record (module_utils/run/record.py) problems."""

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import json_path, metric, new_record, validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.common import validation


def test_one_path_style():
    assert json_path(['records', 0, 'metrics', 'x']) == 'records[0].metrics.x'
    assert json_path([0, 'a'], root='bench_matrix') == 'bench_matrix[0].a'
    assert json_path([]) == '(record)'
    assert json_path([], whole='(document)') == '(document)'


def test_matrix_problems_named_from_bench_matrix():
    problems = validation.matrix_problems({'benchmarks': [{'name': 'x', 'tool': 'nope', 'cells': ['a']}]})
    assert any(p.startswith('bench_matrix.benchmarks[0].tool: ') for p in problems), problems


def test_results_problems_same_style():
    problems = validation.results_problems({'records': [{'tool': 1}]})
    assert any(p.startswith('records[0]') for p in problems), problems
    assert all('/' not in p.split(':', 1)[0] for p in problems), problems


def test_record_problems_same_style():
    rec = new_record('dd', 'write', {'throughput': metric(1.0, 'MB/s')})
    rec['metrics']['throughput']['better'] = 'sideways'
    assert any(p.startswith('metrics.throughput.better: ') for p in validate_record(rec))


def test_schema_loaded_and_validator_built_once():
    first = validation.validator(validation.MATRIX_SCHEMA_FILE)
    assert validation.validator(validation.MATRIX_SCHEMA_FILE) is first
    assert validation.load_schema(validation.MATRIX_SCHEMA_FILE) is validation.load_schema(validation.MATRIX_SCHEMA_FILE)


def test_results_schema_takes_the_record_tool_names_from_the_registry():
    """results.json refers to the record schema's tool: the record names of the tool table."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import record_names
    assert validation.load_schema(validation.RECORD_SCHEMA_FILE)['properties']['tool']['enum'] == record_names()
