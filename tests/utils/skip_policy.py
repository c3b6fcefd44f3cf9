# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A skip is not a pass: the pytest plugin (and command) that fails a test run on a skipped test
whose reason is not on the reviewed allow-list tests/skips-allowed.yml.

    pytest -p skip_policy ...         (tests/utils on PYTHONPATH: the Makefile's $(PYTEST) does that)
        every skip (a test's, a module's, a collection's) is printed with its reason; one whose
        reason matches no entry of the allow-list makes the run fail (exit 1), naming the test, the
        reason and the file to edit; allowed ones are listed with what the machine lacks.
    python tests/utils/skip_policy.py --skip REASON
        the same verdict for a step that is no pytest run (make target-py36, the parts of
        make compat that need an interpreter the machine lacks): prints the skip, exit 0 when its
        reason is allowed, 1 when it is not.
    python tests/utils/skip_policy.py --check
        the allow-list itself: every entry has a reason pattern (a valid regular expression), what
        the machine lacks, and the docs/support.md row that says the check is not run there.

An entry of the allow-list is {reason: <Python regular expression, searched in the skip reason>,
lacks: <what a machine that skips it does not have>, support: <the first cell of the docs/support.md
row that says so>}.
"""

import argparse
import os
import re
import sys

import yaml

# BENCHLAB_SKIPS_ALLOWED: another allow-list (the policy's own tests use one in a temporary copy)
ALLOW_LIST = os.environ.get('BENCHLAB_SKIPS_ALLOWED') or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'skips-allowed.yml')
FIELDS = ('reason', 'lacks', 'support')


class AllowListError(Exception):
    """The allow-list cannot be used; str(e) names the file, the entry and the field."""


def load(path=ALLOW_LIST):
    """The entries of the allow-list at `path`, each checked (see the module docstring)."""
    try:
        with open(path, encoding='utf-8') as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise AllowListError('%s: cannot read the skip allow-list: %s' % (path, e))
    entries = (doc or {}).get('allowed') if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise AllowListError('%s: needs `allowed:`, a list of entries with %s' % (path, ', '.join(FIELDS)))
    for i, entry in enumerate(entries):
        where = '%s: allowed[%d]' % (path, i)
        if not isinstance(entry, dict):
            raise AllowListError('%s: must be a mapping with %s' % (where, ', '.join(FIELDS)))
        for field in FIELDS:
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise AllowListError('%s.%s: missing or empty (every entry says %s)' % (where, field, ', '.join(FIELDS)))
        unknown = sorted(set(entry) - set(FIELDS))
        if unknown:
            raise AllowListError('%s: unknown field(s) %s (only %s)' % (where, ', '.join(unknown), ', '.join(FIELDS)))
        try:
            re.compile(entry['reason'])
        except re.error as e:
            raise AllowListError('%s.reason: %r is not a regular expression: %s' % (where, entry['reason'], e))
    return entries


def allowed(reason, entries):
    """The first entry whose pattern is found in `reason`, or None."""
    for entry in entries:
        if re.search(entry['reason'], reason or ''):
            return entry
    return None


def skip_reason(report):
    """The reason of a skipped pytest report ('Skipped: ' removed)."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr or '')
    return reason[len('Skipped: '):] if reason.startswith('Skipped: ') else reason


# ---- the pytest plugin ----------------------------------------------------------------------------

class _State(object):
    def __init__(self):
        self.entries = None
        self.error = None
        self.path = ALLOW_LIST
        self.skips = []         # (nodeid, reason, entry or None)


STATE = _State()


def pytest_addoption(parser):
    parser.addoption('--skips-allowed', default=ALLOW_LIST,
                     help='the reviewed allow-list of skip reasons (default: %(default)s)')


def pytest_configure(config):
    STATE.__init__()
    STATE.path = config.getoption('--skips-allowed')
    try:
        STATE.entries = load(STATE.path)
    except AllowListError as e:
        STATE.error = str(e)
        STATE.entries = []


def _record(report):
    if report.skipped and not hasattr(report, 'wasxfail'):
        reason = skip_reason(report)
        STATE.skips.append((report.nodeid, reason, allowed(reason, STATE.entries)))


def pytest_runtest_logreport(report):
    _record(report)


def pytest_collectreport(report):
    _record(report)


def _refused():
    return [(nodeid, reason) for nodeid, reason, entry in STATE.skips if entry is None]


def pytest_sessionfinish(session, exitstatus):
    if (STATE.error or _refused()) and session.exitstatus in (0, 5):
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    tr = terminalreporter
    if STATE.error:
        tr.write_sep('=', 'skip policy: the allow-list is broken', red=True)
        tr.write_line(STATE.error, red=True)
    refused = _refused()
    if refused:
        tr.write_sep('=', 'skip policy: %d skip(s) not on the allow-list' % len(refused), red=True)
        for nodeid, reason in refused:
            tr.write_line('SKIPPED, NOT ALLOWED: %s: %s' % (nodeid or '(collection)', reason), red=True)
        tr.write_line('A skipped test is not a pass: make it run here, or (reviewed) add its reason to %s '
                      'with what the machine lacks and the docs/support.md row that says it is not run.'
                      % STATE.path, red=True)
    ok = [(nodeid, reason, entry) for nodeid, reason, entry in STATE.skips if entry is not None]
    if ok:
        tr.write_sep('-', 'skip policy: %d allowed skip(s) (%s)' % (len(ok), STATE.path))
        for nodeid, reason, entry in ok:
            tr.write_line('allowed skip: %s: %s (lacks: %s; support: %s)'
                          % (nodeid or '(collection)', reason, entry['lacks'], entry['support']))


# ---- the command ----------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--allow-list', default=ALLOW_LIST)
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument('--skip', metavar='REASON', help='a step skipped for REASON: exit 0 only if allowed')
    group.add_argument('--check', action='store_true', help='check the allow-list')
    args = ap.parse_args(argv)
    try:
        entries = load(args.allow_list)
    except AllowListError as e:
        print('skip policy: %s' % e)
        return 1
    if args.check:
        print('skip policy: %s: %d allowed reason(s)' % (args.allow_list, len(entries)))
        return 0
    entry = allowed(args.skip, entries)
    if entry is None:
        print('SKIPPED, NOT ALLOWED: %s\nA skipped check is not a pass: make it run here, or (reviewed) add its '
              'reason to %s.' % (args.skip, args.allow_list))
        return 1
    print('allowed skip: %s (lacks: %s; support: %s)' % (args.skip, entry['lacks'], entry['support']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
