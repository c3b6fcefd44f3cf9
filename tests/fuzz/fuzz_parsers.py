"""Fuzz every parse_* filter: N generated and mutated outputs each (default 10,000).

The contract is the one of tests/unit/plugins/filter/test_parse_filters_fuzz.py: valid result records, or an
AnsibleFilterError naming the tool; any other exception is a finding. Inputs are made from the
real fixtures of each tool by a seeded generator (reproducible: --seed), so a finding can be
replayed. Prints one line per filter and exits 1 on a finding, saving the input under
--findings (default build/fuzz-findings/).

    .venv/bin/python tests/fuzz/fuzz_parsers.py [-n 10000] [--seed 1] [--filter parse_dd]
"""

import argparse
import os
import random
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / '.collections'))
sys.path.insert(0, str(REPO / 'tests' / 'unit' / 'plugins' / 'filter'))

from test_parse_filters_fuzz import FILTERS, SAMPLES, check, mutate  # noqa: E402  pylint: disable=wrong-import-position

ALPHABET = '0123456789.,:;+-eE%/ \t\n{}[]"\'abcdefKMGTsBkib|=()<>#*\\\r\x00\u00b5\u2013'
NUMBERS = ('0', '-1', '1e308', '1e-308', 'nan', 'inf', '-inf', '00', '9' * 40, '0.0', '1,5', '+', '', '-0')


def generate(rng, samples):
    """One input: a mutated real sample (most), a splice of two, or fresh random text."""
    roll = rng.random()
    if roll < 0.8:
        text = rng.choice(samples)
        ops = []
        for _i in range(rng.randint(1, 8)):
            kind = rng.choice(('delete', 'insert', 'replace', 'dupline', 'dropline', 'number'))
            pos = rng.randrange(0, len(text) + 1)
            if kind == 'number':  # replace a run of digits with a hostile number
                digits = [i for i, ch in enumerate(text) if ch.isdigit()]
                if digits:
                    i = rng.choice(digits)
                    j = i
                    while j < len(text) and (text[j].isdigit() or text[j] == '.'):
                        j += 1
                    text = text[:i] + rng.choice(NUMBERS) + text[j:]
                continue
            payload = ''.join(rng.choice(ALPHABET) for _k in range(rng.randint(0, 8)))
            ops.append((kind, pos, payload))
        return mutate(text, ops)
    if roll < 0.9:
        a, b = rng.choice(samples), rng.choice(samples)
        return a[:rng.randrange(len(a) + 1)] + b[rng.randrange(len(b) + 1):]
    return ''.join(rng.choice(ALPHABET) for _k in range(rng.randint(0, 600)))


def fuzz(name, n, seed, findings):
    rng = random.Random('%s/%s' % (seed, name))
    samples = SAMPLES[name]
    counts = {'records': 0, 'error': 0, 'finding': 0}
    for i in range(n):
        text = generate(rng, samples)
        try:
            out = check(name, text)
        except Exception:  # pylint: disable=broad-except  # anything but the contract is a finding
            counts['finding'] += 1
            findings.mkdir(parents=True, exist_ok=True)
            path = findings / ('%s-%s-%d.txt' % (name, seed, i))
            path.write_text(text)
            sys.stderr.write('FINDING %s case %d (input saved to %s):\n%s\n' % (name, i, path, traceback.format_exc()))
            continue
        counts['records' if out is not None else 'error'] += 1
    return counts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-n', type=int, default=10000, help='inputs per filter (default 10000)')
    ap.add_argument('--seed', default='1')
    ap.add_argument('--filter', action='append', choices=sorted(FILTERS))
    ap.add_argument('--findings', default=str(REPO / 'build' / 'fuzz-findings'))
    args = ap.parse_args(argv)
    total = 0
    print('%-16s %8s %8s %8s %8s %7s' % ('filter', 'inputs', 'records', 'errors', 'findings', 'secs'))
    for name in args.filter or sorted(FILTERS):
        t0 = time.monotonic()
        c = fuzz(name, args.n, args.seed, Path(args.findings))
        total += c['finding']
        print('%-16s %8d %8d %8d %8d %7.1f' % (name, args.n, c['records'], c['error'], c['finding'], time.monotonic() - t0))
    return 1 if total else 0


if __name__ == '__main__':
    os.environ.setdefault('PYTHONHASHSEED', '0')
    sys.exit(main())
