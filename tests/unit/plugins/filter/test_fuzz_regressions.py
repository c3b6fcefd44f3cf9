"""Inputs the fuzzer (tests/fuzz/fuzz_parsers.py) once found breaking a parser, replayed."""

import gzip
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.tests.unit.plugins.filter.test_parse_filters_fuzz import check

# stored gzipped: the mutated inputs hold bare carriage returns, which sanity's line-ending check rejects
REGRESSIONS = sorted((Path(__file__).resolve().parents[3] / 'fuzz' / 'regressions').glob('parse_*.txt.gz'))


def test_there_are_regression_inputs():
    assert len(REGRESSIONS) >= 3


@pytest.mark.parametrize('path', REGRESSIONS, ids=lambda p: p.name)
def test_finding_now_keeps_the_contract(path):
    name = path.name.split('-')[0]
    # the contract: records valid against the schema, or the filter's own error naming the tool
    check(name, gzip.decompress(path.read_bytes()).decode('utf-8'))
