# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long things take is said in one place: docs/timings.md, generated from docs/timings.json by
tests/utils/timings.py. The table is what the generator writes; no other document (README.md,
docs/*.md) states a time for a make target, a CI run or a test stage (it links to timings.md);
and docs/usage.md's table of contents lists its sections and every link lands on one."""

import json
import re

import pytest

from ansible_collections.benchlab.bench.tests.utils import timings

REPO = timings.REPO
# Where a time may be stated: the table itself and the changelog (history).
EXEMPT = {'docs/timings.md', 'CHANGELOG.rst', 'changelogs/changelog.yaml'}

# Something whose duration belongs in docs/timings.md: a make target that runs a suite or a matrix,
# CI, a scenario run, a stage of make test.
TARGET = re.compile(r'\bmake (?:bench|test(?:-vm)?|perf|units-ansible-test)\b|\.ci/run\b|\bSCENARIO=|\bstages?\b'
                    r'|\bintegration-(?:lab|wiring|rest)\b|\bcompat-(?:venvs|play|units-core\d+)\b|\bchecks\b')
# A duration: N min / N minutes / N–M minutes / N.N min / N hours, N s of a minute or more (469 s),
# m:ss or h:mm:ss, and a bare whole number or range after takes/took/within ("takes 8–12"; not
# "takes 1.5 s" or "would take 1.04 of bench-fio").
DURATION = re.compile(r'''
    \d+(?:[.,]\d+)?(?:\s*(?:[–-]|to)\s*\d+(?:[.,]\d+)?)?\s*(?:min(?:ute)?s?|hours?|hrs?)\b
  | (?<![\d.,])\d{3,}(?:\.\d+)?\s*(?:s|secs?|seconds?)\b
  | (?<![\d:.])\d{1,3}:\d\d(?::\d\d)?(?![\d:])
  | \b(?:takes?|took|taking|within|lasts?|lasted)\s+(?:about\s+|around\s+|roughly\s+|under\s+|some\s+|up\s+to\s+)?
    \d+(?:\s*[–-]\s*\d+)?(?![.,]?\d|\s*[–-]\s*\d|\s*(?:ms|s|µs|%|×|x|[KMGT]i?B|of|times)\b)
''', re.X)
# Not durations: dates, dates with a time of day, run ids, times of day (06:21 UTC, at 23:41, 17:10–17:16).
CLOCK = re.compile(r'\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d)?Z?(?:\s*UTC)?)?|\d{8}T\d{6}Z'
                   r'|\b\d\d:\d\d(?::\d\d)?(?:\s*[–-]\s*\d\d:\d\d)?\s*(?:UTC|Z)\b|\b\d\d:\d\d\s*[–-]\s*\d\d:\d\d\b'
                   r'|\b(?:at|the|since|until)\s+\d\d:\d\d\b')
HEADING = re.compile(r'^ {0,3}#{1,6} ')
LIST_ITEM = re.compile(r'^\s*(?:[-*+]|\d+\.)\s')
SENTENCE_END = re.compile(r'(?<=[.;])\s+(?=[A-Z`\[(*])')


def units(text):
    """The pieces of a markdown text a statement lives in: each table row (with the heading of its
    section, which often names what the table times); each sentence of a paragraph or list item (its
    lines joined); a fenced block's lines joined as one paragraph."""
    out, para, heading = [], [], ''

    def flush():
        if para:
            out.extend(s for s in SENTENCE_END.split(' '.join(x.strip() for x in para)) if s)
            del para[:]

    fenced = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith('```'):
            flush()
            fenced = not fenced
        elif not stripped:
            flush()
        elif fenced:
            para.append(line)
        elif HEADING.match(line):
            flush()
            heading = stripped
            out.append(stripped)
        elif stripped.startswith('|'):
            flush()
            out.append('%s %s' % (heading, stripped))
        else:
            if LIST_ITEM.match(line):
                flush()
            para.append(line)
    flush()
    return out


def durations_stated(text):
    """[(unit, duration text)] for every piece of `text` that names a target and a duration."""
    found = []
    for unit in units(text):
        if not TARGET.search(unit):
            continue
        match = DURATION.search(CLOCK.sub(' ', unit))
        if match:
            found.append((unit, match.group(0)))
    return found


def documents():
    paths = [REPO / 'README.md'] + sorted((REPO / 'docs').glob('*.md'))
    return [p for p in paths if str(p.relative_to(REPO)) not in EXEMPT]


# --- (a) the table is what the generator writes --------------------------------------------------

def test_timings_md_is_what_the_generator_writes_from_timings_json():
    assert timings.problems(write=False) == [], 'run: python tests/utils/timings.py'


def test_every_figure_has_its_date_machine_and_source():
    data = json.loads((REPO / 'docs' / 'timings.json').read_text(encoding='utf-8'))
    timings.check(data)
    for run in data['runs']:
        for key in ('date', 'on', 'source'):
            assert str(run[key]).strip(), (run['command'], key)


def test_the_check_sees_a_changed_figure_and_a_missing_source():
    data = timings.load()
    text = (REPO / 'docs' / 'timings.md').read_text(encoding='utf-8')
    assert timings.expected(text, data) == text
    data['runs'][0]['seconds'] += 60
    assert timings.expected(text, data) != text
    del data['runs'][0]['source']
    with pytest.raises(ValueError, match='has no source'):
        timings.section(data)
    assert timings.expected(text.replace(timings.END, ''), timings.load()) is None


def test_check_exits_1_on_a_stale_table_and_a_rewrite_makes_it_current(tmp_path, monkeypatch, capsys):
    doc = tmp_path / 'timings.md'
    doc.write_text('intro\n\n%s\n| stale |\n%s\n' % (timings.BEGIN, timings.END), encoding='utf-8')
    monkeypatch.setattr(timings, 'DOC', doc)
    assert timings.main(['--check']) == 1
    assert 'out of date' in capsys.readouterr().out
    assert timings.main([]) == 0
    assert timings.main(['--check']) == 0
    assert doc.read_text(encoding='utf-8').startswith('intro\n\n' + timings.BEGIN) and '| stale |' not in doc.read_text(encoding='utf-8')


@pytest.mark.parametrize('seconds,approx,shown', [(930, False, '15:30'), (3572, False, '59:32'), (2, False, '0:02'),
                                                  (600, True, 'about 10 min'), (240, True, 'about 4 min')])
def test_durations_are_shown_as_ci_prints_them(seconds, approx, shown):
    assert timings.duration(seconds, approx) == shown


# --- (b) no other document states a time for a make target ---------------------------------------

@pytest.mark.parametrize('text', [
    # what README.md, docs/performance.md, docs/usage.md and docs/development.md said before
    'make bench   # set up (.venv, Python deps, the benchmark tools through the collection\'s own role),\n'
    '             # build the local lab (LXC guests on this machine), run the lab matrix, tear the lab\n'
    '             # down; prints a summary and the report paths (10-12 minutes here)\n',
    '`make bench` takes 10–12 min here.',
    'From a fresh clone on the development machine (2 cores) `make bench` takes 8–12 minutes since the\n'
    'host below each guest is observed (2026-12-05: the lab\'s run 9 min 45 s for 164 runs, about 12 with',
    'From a fresh clone `make bench` takes 8–12 here.',
    '  mean, at most 5 per cell, which keeps `make bench` within 10 minutes here); baselines = the host',
    '`make bench` took 15.5 min from a fresh clone this week.',
    '`make bench SCENARIO=ploop_simfs` took 469 s.',
    '`make units-ansible-test` (not part of `make test`) takes about 4 minutes.',
    '`make perf` (a benchmark, not a test; about 8 minutes) measures and writes `perf/results.json`:',
    '| **`make test`** | **44:07** | |',
    '| `make test-vm` (guest image cached; four guests + the DRBD pair at once) | 18:34 | — |',
    '| **`.ci/run`** | **63:01** | |',
    '| integration-rest | 22:07 | — |',
    '| checks: sanity | 2:58 | the other checks, two at a time |',
    '## Comparisons that conclude: `make bench` before and after\n\n| run | runs |\n|---|---:|\n'
    '| after: 2026-12-04 23:41 UTC, precision target ±5 %, at most 5 runs a cell, 7 min 28 s | 158 |',
    'The same stages in the run before (09:02, same machine): checks 10:22, integration-lab 12:46,',
    '`.ci/run` from a fresh clone 59:02 (integration 31:50, test-vm 17:22): at the limit.',
    '`make test-vm` boots the guests; 13-16 minutes here, not part of `make test`.',
    'CI (`.ci/run`) takes about an hour: 1 hour here.',
])
def test_the_check_flags_a_stated_duration(text):
    assert durations_stated(text), text


@pytest.mark.parametrize('text', [
    '`make bench` from a fresh clone, 2026-12-05 06:21 UTC (run `20261205T062155Z-d6f15c`, 187 runs, 38\n'
    'cells, nothing else running): every cell of the report has an explained line.',
    'An excerpt of `report.md` from `make bench` on the development machine (run\n'
    '`20261205T035809Z-584541`, 2026-12-05, Debian 12, 2 vCPUs; 3 to 5 repetitions each):',
    '| time to a result (the `make perf` goals: ≤ 0.25 s per run, a fixed cost at most 0.5 s above a play '
    'of the one run alone, ≤ 1.10 × bench-fio\'s time on three fio jobs) | partly | untested |',
    '`make perf`: `report_100k_s` (analysis and every format for 100,000 records; goal ≤ 5 s, ≤ 500 MB).',
    '`make test` replays 10,000 seeded inputs per parser (`make fuzz`).',
    '`make test` runs every local rendition at its smallest (one repetition, tiny sizes) on one lab.',
    'The quick matrix of `make bench`: 3 repetitions, then `target_ci_pct: 5`, `max_repetitions: 5`.',
    'the module\'s consecutive runs in one module call (a batch: at most 50 runs or 15 min of estimated run time)',
    '`.ci/run` prints the times itself (`.ci/run: <step> passed in m:ss`, `stage <name>: passed in m:ss`).',
    'How long `make bench` and `.ci/run` took: [timings.md](timings.md).',
    '`make test-vm`: four TCG guests (two routed, two bridged), iperf3 with one, two and four guests at once.',
    'measured by `make perf`, which measures the floor too: a play of the one run alone takes 1.5 s.',
    '## `make perf`\n\n| figure | value |\n|---|---|\n'
    '| `time_to_result_vs_bench_fio` | a playbook that did nothing but fio\'s work would take 1.04–1.05 of bench-fio |',
    '`make perf` ran at 23:41 and again at 13:37 UTC, from 17:10–17:16.',
    'in `make test`, the checks two at a time; the integration tests use 0.8 of a core on average.',
])
def test_the_check_leaves_other_numbers_alone(text):
    assert durations_stated(text) == [], text


@pytest.mark.parametrize('path', documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_document_but_timings_md_states_how_long_a_make_target_takes(path):
    found = durations_stated(path.read_text(encoding='utf-8'))
    assert found == [], '%s: link docs/timings.md instead of stating a time: %s' % (path.relative_to(REPO), found)


# --- (c) docs/usage.md's table of contents -------------------------------------------------------

def github_anchor(heading):
    """GitHub's anchor of a heading: the text as rendered (code spans' backticks gone), lowercase,
    every character but letters, digits, spaces, '-' and '_' dropped, spaces turned into '-'."""
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', heading).replace('`', '').strip().lower()
    return re.sub(r'[^\w\- ]', '', text).replace(' ', '-')


def headings(text, level=None):
    """The headings of a markdown text outside fenced blocks: [(level, text)]."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        m = re.match(r'(#{1,6}) (.+?)\s*#*\s*$', line)
        if m and not fenced and (level is None or len(m.group(1)) == level):
            found.append((len(m.group(1)), m.group(2)))
    return found


def anchors(text):
    seen, out = {}, set()
    for _level, heading in headings(text):
        base = github_anchor(heading)
        out.add(base if base not in seen else '%s-%d' % (base, seen[base]))
        seen[base] = seen.get(base, 0) + 1
    return out


def usage_toc(text):
    """[(link text, anchor)] of the list that follows 'Contents:' in docs/usage.md."""
    block = text.split('\nContents:\n', 1)[1].split('\n## ', 1)[0]
    return re.findall(r'^- \[(.+)\]\(#([^)]+)\)$', block, re.M)


@pytest.mark.parametrize('heading,anchor', [
    ('The local lab (`make bench`)', 'the-local-lab-make-bench'),
    ('OpenVZ / Virtuozzo containers (`benchlab.bench.openvz_ct`)', 'openvz--virtuozzo-containers-benchlabbenchopenvz_ct'),
    ('Statistics, the variance gate and traps', 'statistics-the-variance-gate-and-traps'),
    ('Every number explained: the host below the run', 'every-number-explained-the-host-below-the-run'),
])
def test_github_anchor(heading, anchor):
    assert github_anchor(heading) == anchor


def test_usage_md_table_of_contents_lists_every_section_and_every_link_resolves():
    text = (REPO / 'docs' / 'usage.md').read_text(encoding='utf-8')
    toc = usage_toc(text)
    sections = [h for _level, h in headings(text, level=2)]
    assert [name for name, _anchor in toc] == sections
    assert [a for _name, a in toc if a not in anchors(text)] == []
    assert [a for _name, a in toc] == [github_anchor(h) for h in sections]
