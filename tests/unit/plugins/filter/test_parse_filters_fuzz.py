"""Every parse_* filter on hostile input: empty, garbage, truncated, random and mutated real output.

The contract (issue 3): a filter either returns result records valid against the schema, or raises
AnsibleFilterError naming its tool — never any other exception. The mutations start from the real
fixtures of each tool (tests/unit/fixtures/<tool>/). The number of inputs and whether they are
new comes from the Hypothesis profile (tests/unit/conftest.py): the same 150 per test in every
`make test`; `make fuzz-explore` draws new ones, many more.
"""

import hashlib
import importlib
import os
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.benchlab.bench.tests.unit.helpers import fixture_text

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import validate_record

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'

# filter name -> (tool word its errors must name, fixture directory, file patterns)
FILTERS = {
    'parse_dd': ('dd', 'dd', ('*.txt', '*.txt.gz')),
    'parse_fio': ('fio', 'fio', ('*.json',)),
    'parse_bonnie': ('bonnie', 'bonnie', ('*.txt', '*.csv', '*.stderr')),
    'parse_dbench': ('dbench', 'dbench', ('*.txt',)),
    'parse_sysbench': ('sysbench', 'sysbench', ('*.txt',)),
    'parse_iperf': ('iperf', 'iperf', ('*.json', '*.txt', '*.csv')),
    'parse_time': ('time', 'time', ('*.txt',)),
    'parse_ioping': ('ioping', 'ioping', ('*.txt',)),
}


def load_filter(name):
    mod = importlib.import_module('ansible_collections.benchlab.bench.plugins.filter.%s' % name)
    return mod.FilterModule().filters()[name]


def samples(name):
    _tool, folder, patterns = FILTERS[name]
    files = sorted(p for pat in patterns for p in (FIXTURES / folder).glob(pat))
    return [fixture_text('%s/%s' % (folder, p.name[:-3] if p.name.endswith('.gz') else p.name)) for p in files]


SAMPLES = dict((name, samples(name)) for name in FILTERS)


def check(name, text):
    """The contract: valid records, or AnsibleFilterError naming the tool."""
    try:
        out = load_filter(name)(text)
    except AnsibleFilterError as e:
        assert FILTERS[name][0] in str(e).lower(), str(e)
        return None
    records = out if isinstance(out, list) else [out]
    assert records, 'an empty result instead of an error'
    if name == 'parse_time':  # plain {real, user, sys} timings, not result records
        for t in records:
            assert all(t[k] is None or (isinstance(t[k], float) and t[k] >= 0) for k in ('real', 'user', 'sys')), t
        return records
    for rec in records:
        assert validate_record(rec) == [], rec
    return records


@pytest.mark.parametrize('name', sorted(FILTERS))
def test_there_are_real_samples(name):
    assert len(SAMPLES[name]) >= 3


@pytest.mark.parametrize('name', sorted(FILTERS))
def test_empty_and_garbage_name_the_tool_and_quote_the_line(name):
    for text in ('', '\n\n', 'hello world\nsecond line\n'):
        with pytest.raises(AnsibleFilterError) as e:
            load_filter(name)(text)
        msg = str(e.value)
        assert msg.startswith('%s:' % name) and FILTERS[name][0] in msg.lower()
        if text.strip():
            assert 'hello world' in msg, msg


@pytest.mark.parametrize('name', sorted(FILTERS))
def test_non_text_input(name):
    for bad in (None, 42, ['x'], {'a': 1}):
        with pytest.raises(AnsibleFilterError):
            load_filter(name)(bad)


@pytest.mark.parametrize('name', sorted(FILTERS))
def test_truncated_real_output(name):
    """Cut each sample at a quarter, half and three quarters: records or a clean error."""
    for text in SAMPLES[name]:
        for frac in (0.25, 0.5, 0.75):
            check(name, text[:int(len(text) * frac)])


def mutate(text, ops):
    for kind, pos, payload in ops:
        i = pos % (len(text) + 1)
        if kind == 'delete':
            text = text[:i] + text[i + 1 + len(payload):]
        elif kind == 'insert':
            text = text[:i] + payload + text[i:]
        elif kind == 'replace':
            text = text[:i] + payload + text[i + len(payload):]
        elif kind == 'dupline':
            lines = text.splitlines(True)
            if lines:
                k = pos % len(lines)
                lines.insert(k, lines[k])
            text = ''.join(lines)
        elif kind == 'dropline':
            lines = text.splitlines(True)
            if lines:
                del lines[pos % len(lines)]
            text = ''.join(lines)
    return text


KINDS = st.sampled_from(['delete', 'insert', 'replace', 'dupline', 'dropline'])
PAYLOAD = st.text(alphabet=st.sampled_from(list('0123456789.,:+-eE%/ \n{}[]"abcKMGs|')), max_size=6)
OPS = st.lists(st.tuples(KINDS, st.integers(min_value=0, max_value=100000), PAYLOAD), min_size=1, max_size=6)


@pytest.mark.parametrize('name', sorted(FILTERS))
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_mutated_real_output(name, data):
    text = data.draw(st.sampled_from(SAMPLES[name]))
    checked(name, mutate(text, data.draw(OPS)))


@pytest.mark.parametrize('name', sorted(FILTERS))
@settings(deadline=None)
@given(text=st.text(max_size=400))
def test_random_text(name, text):
    checked(name, text)


FINDINGS = Path(__file__).resolve().parents[4] / 'build' / 'fuzz-findings'


def checked(name, text):
    """check(), and in an exploration run (make fuzz-explore) the input that broke the contract saved
    where fuzz_parsers.py saves its findings (the shrunk one, as Hypothesis replays it last), to be
    kept as a regression input (tests/fuzz/regressions/README.md)."""
    try:
        return check(name, text)
    except Exception:
        if os.environ.get('BENCHLAB_HYPOTHESIS') == 'explore' and _final_example():
            FINDINGS.mkdir(parents=True, exist_ok=True)
            path = FINDINGS / ('%s-hypothesis-%s.txt' % (name, hashlib.sha1(text.encode('utf-8', 'surrogatepass')).hexdigest()[:12]))
            path.write_text(text, encoding='utf-8', errors='surrogatepass')
            print('FINDING %s: input saved to %s' % (name, path))
        raise


def _final_example():
    try:
        from hypothesis.control import current_build_context  # pylint: disable=import-outside-toplevel
        return current_build_context().is_final
    except Exception:  # pylint: disable=broad-except  # outside Hypothesis, or another version's internals
        return True
