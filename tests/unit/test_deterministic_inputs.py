# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every test draws the same inputs on every run: a suite that decides differently from one run to
the next lets a submission fail on an input no earlier run saw (the unit tests run three times in
CI: under the default controller and under ansible-core 2.16 and 2.20).

- Hypothesis runs derandomized, without an example database, unless `make fuzz-explore` asks for
  new inputs (tests/unit/conftest.py);
- no test calls the `random` module's shared generator (unseeded): a seeded `random.Random(seed)`
  instead; the fuzzer's seed is fixed in `make fuzz`.
Exploration is `make fuzz-explore`: what it finds is kept in tests/fuzz/regressions."""

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / 'tests'
# a call of the random module's own (shared, seeded from the clock) generator, or numpy's
SHARED_RANDOM = re.compile(r'(?<![\w.])(?:random\.(?:random|randint|randrange|choice|choices|shuffle|sample|uniform|'
                           r'gauss|normalvariate|getrandbits|randbytes|triangular|expovariate)|random\.SystemRandom|'
                           r'(?:np|numpy)\.random\.(?!default_rng\(\d|seed\(\w)\w+)\s*\(')


def test_hypothesis_is_derandomized_in_make_test():
    hypothesis = pytest.importorskip('hypothesis')
    if os.environ.get('BENCHLAB_HYPOTHESIS', 'ci') != 'ci':
        pytest.skip('BENCHLAB_HYPOTHESIS=%s: an exploration run (make fuzz-explore)' % os.environ['BENCHLAB_HYPOTHESIS'])
    current = hypothesis.settings.default
    assert current.derandomize is True and current.database is None, current


def test_no_test_draws_from_an_unseeded_generator():
    found = []
    for path in sorted(TESTS.rglob('*.py')):
        for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
            code = line.split('#', 1)[0]
            if SHARED_RANDOM.search(code):
                found.append('%s:%d: %s' % (path.relative_to(REPO), number, line.strip()))
    assert found == [], 'draw from random.Random(<fixed seed>) instead:\n' + '\n'.join(found)


def test_the_check_finds_an_unseeded_draw():
    draw = 'random.'   # split: the scan above reads this file too
    assert SHARED_RANDOM.search("mem = " + draw + "randint(1, 10)")
    assert SHARED_RANDOM.search("x = np." + draw + "rand(3)")
    assert not SHARED_RANDOM.search("r = random.Random(3); r.randint(1, 10)")
    assert not SHARED_RANDOM.search("rng = np.random.default_rng(7)")


def test_make_fuzz_is_seeded_and_make_fuzz_explore_is_apart():
    makefile = (REPO / 'Makefile').read_text()
    fuzz = re.search(r'^fuzz:.*\n((?:\t.*\n)+)', makefile, re.M).group(1)
    assert 'fuzz_parsers.py' in fuzz and '--seed' not in fuzz   # its default seed (1): the same inputs
    checks = re.search(r'^CHECKS := ((?:.*\\\n)*.*)$', makefile, re.M).group(1).replace('\\\n', ' ').split()
    assert 'fuzz' in checks and not [c for c in checks if c.startswith('fuzz-explore')]
    assert '$(CHECKS)' in re.search(r'^test:.*\n((?:\t.*\n)+)', makefile, re.M).group(1)
    assert re.search(r'^fuzz-explore:', makefile, re.M)
