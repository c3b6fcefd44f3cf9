# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark matrix (controller side): validation against schemas/matrix-v1.json and the
checks a schema cannot express, then expansion into the plan of runs (docs/architecture.md)."""

from __future__ import annotations

import fractions
import re

from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import DEFAULTS as GUARD_DEFAULTS
from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import system_directory_problem
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.gate import plan_gate
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.validation import MATRIX_SCHEMA_FILE, load_schema, matrix_problems

DEFAULT_REPETITIONS = 3
# Methodology defaults (docs/usage.md); a matrix overrides them globally or per benchmark.
# The not_quiet threshold (other processes' CPU over a run) is the guards' own default (module_utils/run/guards.py).
DEFAULT_METHODOLOGY = {'warmup': False, 'cooldown_s': 2, 'quiesce': True, 'max_load_per_cpu': 0.75,
                       'max_other_cpu_pct': GUARD_DEFAULTS['max_other_cpu_pct'],
                       'quiesce_wait_s': 0, 'drop_hypervisor_caches': True, 'async_after_s': 120}
# A conservative rate (MB/s) for the duration estimate of a run whose length is set by a size (a
# tool's unit says otherwise: its estimate_s or EST_MB_S).
_EST_MB_S = 50.0
# The largest size a matrix may ask for: more than any run on one host could write.
MAX_SIZE_BYTES = 2 ** 50  # 1 PiB
# A size string as the schema admits it (a number, a K/M/G/T prefix, an optional i/B).
_SIZE_PARTS_RE = re.compile(r'^(?P<num>[0-9]+(?:\.[0-9]+)?)(?P<unit>[kKmMgGtT]?)(?P<i>i?)(?P<b>[bB]?)$')


class MatrixError(ValueError):
    """An invalid matrix; the message names every offending field."""

    def __init__(self, problems):
        self.problems = list(problems)
        super(MatrixError, self).__init__('invalid bench_matrix:\n' + '\n'.join('- ' + p for p in self.problems))


def schema_problems(matrix):
    """The matrix's problems against schemas/matrix-v1.json (plugin_utils/common/validation.py)."""
    return matrix_problems(matrix)


def semantic_problems(matrix, inventory_hosts=None):
    problems = []
    cells = matrix.get('cells', [])
    names = [c.get('name') for c in cells]
    for i, name in enumerate(names):
        if name in names[:i]:
            problems.append('bench_matrix.cells[%d].name: duplicate cell name %r' % (i, name))
    bnames = [b.get('name') for b in matrix.get('benchmarks', [])]
    for i, name in enumerate(bnames):
        if name in bnames[:i]:
            problems.append('bench_matrix.benchmarks[%d].name: duplicate benchmark name %r' % (i, name))
    if 'baseline' in matrix and matrix['baseline'] not in names:
        problems.append('bench_matrix.baseline: %r is not one of the cells (%s)' % (matrix['baseline'], ', '.join(map(str, names))))
    problems.extend(_label_key_problems(matrix))
    for i, c in enumerate(cells):
        problem = system_directory_problem(c['path'], resolve=False, device_paths=True) if c.get('path') else None
        if problem:
            problems.append('bench_matrix.cells[%d].path: %s' % (i, problem))
    for i, b in enumerate(matrix.get('benchmarks', [])):
        for j, c in enumerate(b.get('cells') or []):
            if c not in names:
                problems.append('bench_matrix.benchmarks[%d].cells[%d]: %r is not one of the cells' % (i, j, c))
    for i, b in enumerate(matrix.get('benchmarks', [])):
        m = effective_methodology(matrix, b)
        reps = effective_repetitions(matrix, b)
        where = 'bench_matrix.benchmarks[%d]' % i
        for key in ('max_cv', 'target_ci_pct', 'budget_s'):
            if key in m and 'max_repetitions' not in m:
                problems.append('%s: %s needs max_repetitions, the cap on the number of runs' % (where, key))
        if m.get('max_repetitions') is not None and m['max_repetitions'] < reps:
            problems.append('%s: max_repetitions (%s) is below repetitions (%s)' % (where, m['max_repetitions'], reps))
    problems.extend(size_problems(matrix))
    if inventory_hosts is not None:
        for i, c in enumerate(cells):
            if c.get('host') not in inventory_hosts:
                problems.append('bench_matrix.cells[%d].host: %r is not in the inventory' % (i, c.get('host')))
        for i, b in enumerate(matrix.get('benchmarks', [])):
            problems.extend(_host_problems('bench_matrix.benchmarks[%d].params' % i, b.get('tool'), b.get('params'),
                                           inventory_hosts))
        for i, c in enumerate(cells):
            for tool, params in sorted((c.get('params') or {}).items()):
                problems.extend(_host_problems('bench_matrix.cells[%d].params.%s' % (i, tool), tool, params, inventory_hosts))
    return problems


# Labels every cell has without declaring them (analysis.label_value).
PSEUDO_LABELS = ('host', 'cell')


def _label_key_problems(matrix):
    """pivot / baseline_by must name a label some cell carries (or host, cell)."""
    problems = []
    known = sorted(set(k for c in matrix.get('cells', []) if isinstance(c, dict)
                       for k in (c.get('labels') or {}) if isinstance(c.get('labels'), dict)))
    for key in ('pivot', 'baseline_by'):
        label = matrix.get(key)
        if isinstance(label, str) and label not in known and label not in PSEUDO_LABELS:
            problems.append('bench_matrix.%s: %r is not a label of any cell (labels: %s)'
                            % (key, label, ', '.join(known + list(PSEUDO_LABELS))))
    return problems


def _size_fields():
    """{tool: [parameter names the schema types as sizes]}, read from the schema itself."""
    defs = load_schema(MATRIX_SCHEMA_FILE)['$defs']
    return dict((name[:-len('_params')], sorted(k for k, v in d.get('properties', {}).items()
                                                if v.get('$ref') == '#/$defs/size'))
                for name, d in defs.items() if name.endswith('_params'))


def size_problem(value):
    """Why a size parameter is refused (None when it is fine): zero, not a whole number of bytes
    (`0.1`, `1.1k`), or absurd (more than MAX_SIZE_BYTES). Sizes are parsed as the modules do
    (module_utils/run/units.parse_size: K/M/G/T powers of 1024, `MB` powers of 1000)."""
    from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, parse_size
    try:
        n = parse_size(value)
    except (UnitError, TypeError, ValueError) as e:
        return str(e)
    exact = fractions.Fraction(n)
    if isinstance(value, float):
        exact = fractions.Fraction(value)
    elif isinstance(value, str):
        m = _SIZE_PARTS_RE.match(value.strip())
        if m:
            base = 1000 if (m.group('b') and not m.group('i')) else 1024
            power = ('', 'k', 'm', 'g', 't').index(m.group('unit').lower())
            exact = fractions.Fraction(m.group('num')) * base ** power
    if exact <= 0:
        return '%r is zero bytes: give a size of at least 1 byte (e.g. 4k, 256M)' % (value,)
    if exact.denominator != 1:
        return '%r is not a whole number of bytes (%s): give whole bytes (e.g. 512, 4k, 1536M)' % (
            value, float(exact))
    if n > MAX_SIZE_BYTES:
        return '%r is more than 1 PiB (%d bytes): no run writes that much; check the unit' % (value, n)
    return None


def size_problems(matrix):
    """Every size parameter of the benchmarks and of the cells' per-tool params, checked by size_problem."""
    fields = _size_fields()
    problems = []

    def check(where, tool, params):
        if not isinstance(params, dict):
            return
        for key in fields.get(tool, ()):
            if key in params:
                problem = size_problem(params[key])
                if problem:
                    problems.append('%s.%s: %s' % (where, key, problem))

    for i, b in enumerate(matrix.get('benchmarks') or []):
        check('bench_matrix.benchmarks[%d].params' % i, b.get('tool'), b.get('params'))
    for i, c in enumerate(matrix.get('cells') or []):
        for tool, params in sorted((c.get('params') or {}).items()):
            check('bench_matrix.cells[%d].params.%s' % (i, tool), tool, params)
    return problems


def _host_problems(where, tool, params, inventory_hosts):
    """The other hosts a run names (its unit's ``hosts``: iperf's server host and concurrent pairs) must
    be in the inventory."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import unit
    mod = unit(tool)
    if not isinstance(params, dict) or mod is None or not hasattr(mod, 'hosts'):
        return []
    return ['%s.%s: %r is not in the inventory' % (where, field, host)
            for field, host in mod.hosts(params) if host not in inventory_hosts]


def run_params(benchmark, cell):
    """A run's params: the benchmark's, overridden by the cell's params for this tool."""
    params = dict(benchmark.get('params') or {})
    params.update((cell.get('params') or {}).get(benchmark['tool']) or {})
    return params


def effective_methodology(matrix, benchmark):
    """The defaults, overridden by the matrix's methodology, overridden by the benchmark's."""
    m = dict(DEFAULT_METHODOLOGY)
    m.update(matrix.get('methodology') or {})
    m.update(benchmark.get('methodology') or {})
    return m


def effective_repetitions(matrix, benchmark):
    # JSON Schema counts 3.0 as an integer: make it one.
    return int(benchmark.get('repetitions', matrix.get('repetitions', DEFAULT_REPETITIONS)))


def estimate_s(tool, params):
    """A rough upper estimate of one run's duration in seconds, or None when unknown (bonnie++ at
    its default of twice the RAM). Only used to decide which runs go async. The tool's unit says how
    (``estimate_s``; without one: its module's default size at 50 MB/s); an option the matrix leaves
    out has the module's default (plugin_utils/plan/runargs.py reads it from the module)."""
    from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, parse_size
    from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.runargs import option_default
    from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import unit
    p = params or {}

    def opt(name):
        return p.get(name, option_default(tool, name))

    def mb(name):
        try:
            return parse_size(opt(name)) / 1e6
        except (UnitError, TypeError, ValueError):
            return None

    mod = unit(tool)
    if mod is not None and hasattr(mod, 'estimate_s'):
        return mod.estimate_s(p, opt, mb)
    size = mb('size')
    return None if size is None else size / getattr(mod, 'EST_MB_S', _EST_MB_S)


def run_timing(tool, params, methodology):
    """(async_s, poll_s) of a run. Runs expected to last async_after_s or more, runs of unknown
    length and runs with a timeout_s go async: an SSH drop then does not kill the benchmark, and
    the timeout stops it (the run is recorded as failed). Short runs stay synchronous (async
    polling would cost more than they take)."""
    est = estimate_s(tool, params)
    timeout = methodology.get('timeout_s')
    if timeout:
        return int(timeout), int(min(max((est or 60) / 10.0, 2), 30))
    if est is None or est >= methodology['async_after_s']:
        limit = 6 * 3600 if est is None else max(3 * est, est + 600)
        return int(limit), int(min(max((est or 600) / 20.0, 5), 60))
    return 0, 0


def run_guards(methodology, repetition, warmup=False, concurrency=1):
    """The guards option a run's module gets (module_utils/run/guards.py). A matrix that lets
    contending hosts run at once (concurrency > 1) says so in every record."""
    guards = {'quiesce': methodology['quiesce'], 'max_load_per_cpu': methodology['max_load_per_cpu'],
              'max_other_cpu_pct': methodology['max_other_cpu_pct'], 'quiesce_wait_s': methodology['quiesce_wait_s'],
              'cooldown_s': methodology['cooldown_s'] if repetition > 1 else 0, 'warmup': warmup}
    if concurrency > 1:
        guards['concurrency'] = concurrency
    if methodology.get('observe_interval_s') is not None:   # the module's default (1 s) otherwise
        guards['observe_interval_s'] = methodology['observe_interval_s']
    return guards


def unit_checks(matrix):
    """(matrix, problems): every benchmark's params and every cell's ``params.<tool>`` through its
    tool's unit (toolinfo.params_checked: files the matrix names, read and checked on the controller,
    their text carried in the params). The matrix itself when no unit changed a params mapping, else
    a copy in which only the changed mappings and what holds them are new: not copy.deepcopy, since on
    ansible-core 2.19+ the matrix is a lazy template container, and deep-copying one copies its
    templating context too (about a second for a three-run matrix)."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.common import toolinfo
    cache, problems, changed = {}, [], False
    benchmarks, cells = [], []
    for i, b in enumerate(matrix.get('benchmarks') or []):
        if isinstance(b, dict) and isinstance(b.get('params'), dict):
            params, found = toolinfo.params_checked(b.get('tool'), b['params'], 'bench_matrix.benchmarks[%d].params' % i, cache)
            problems.extend(found)
            if params is not b['params']:
                b, changed = dict(b, params=params), True
        benchmarks.append(b)
    for i, c in enumerate(matrix.get('cells') or []):
        if isinstance(c, dict) and isinstance(c.get('params'), dict):
            per_tool = dict(c['params'])
            for tool, given in c['params'].items():
                per_tool[tool], found = toolinfo.params_checked(tool, given, 'bench_matrix.cells[%d].params.%s' % (i, tool), cache)
                problems.extend(found)
            if any(per_tool[k] is not v for k, v in c['params'].items()):
                c, changed = dict(c, params=per_tool), True
        cells.append(c)
    return (dict(matrix, benchmarks=benchmarks, cells=cells) if changed else matrix), problems


def validate_matrix(matrix, inventory_hosts=None):
    """Raise MatrixError listing every problem; return the matrix otherwise (a copy with the text of
    every fio job_file it names, as job_file_content, when it names one)."""
    if not isinstance(matrix, dict):
        raise MatrixError(['bench_matrix: must be a mapping, got %s' % type(matrix).__name__])
    problems = schema_problems(matrix)
    if not problems:
        problems = semantic_problems(matrix, inventory_hosts)
    if not problems:    # files the matrix names (fio job files, dbench load files): checked here, on the controller
        matrix, problems = unit_checks(matrix)
    if problems:
        raise MatrixError(problems)
    return matrix


def expand_plan(matrix, inventory_hosts=None, host_labels=None):
    """Validate, then expand the matrix into the plan: cells, hosts and the ordered runs.

    Repetitions are interleaved (repetition 1 of every benchmark in every cell, then repetition 2,
    ...) so a slow drift of the machine spreads over all cells instead of biasing one. Warm-up runs
    (repetition 0) come first. Benchmarks with a variance gate (max_cv or the precision target
    target_ci_pct, and max_repetitions) are listed in `gates`; the bench_run role adds runs for them
    (plugin_utils/plan/gate.py), never beyond the cap. correction and equivalence_margin_pct (how the
    report concludes its comparisons, plugin_utils/analysis/verdicts.py) go into the plan as they are.
    host_labels ({host: labels}, e.g. the local lab's guests): a cell's labels start from its host's,
    the cell's own win.
    """
    matrix = validate_matrix(matrix, inventory_hosts)
    concurrency = int(matrix.get('concurrency', 1))
    host_labels = host_labels or {}
    cells = [dict(c, labels=dict(host_labels.get(c['host']) or {}, **(c.get('labels') or {}))) for c in matrix['cells']]
    by_name = dict((c['name'], c) for c in cells)
    benchmarks = []
    for b in matrix['benchmarks']:
        b = dict(b, methodology=effective_methodology(matrix, b), repetitions=effective_repetitions(matrix, b))
        b['cells'] = list(b.get('cells') or [c['name'] for c in cells])
        benchmarks.append(b)

    def run(b, cname, rep, warmup=False):
        c = by_name[cname]
        out = dict(host=c['host'], cell=c['name'], path=c['path'], tool=b['tool'], benchmark=b['name'],
                   params=run_params(b, c), repetition=rep,
                   labels=dict(c['labels'], cell=c['name'], benchmark=b['name']),
                   guards=run_guards(b['methodology'], rep, warmup, concurrency),
                   drop_hypervisor_caches=b['methodology']['drop_hypervisor_caches'],
                   **dict(zip(('async_s', 'poll_s'), run_timing(b['tool'], run_params(b, c), b['methodology']))))
        if b['methodology'].get('timeout_s'):
            out['timeout_s'] = int(b['methodology']['timeout_s'])   # the run path stops the run after it
        return out

    runs = [run(b, cname, 0, warmup=True) for b in benchmarks if b['methodology']['warmup'] for cname in b['cells']]
    for rep in range(1, max(b['repetitions'] for b in benchmarks) + 1):
        for b in benchmarks:
            if rep <= b['repetitions']:
                runs.extend(run(b, cname, rep) for cname in b['cells'])
    gates = dict((b['name'], plan_gate(b['methodology'])) for b in benchmarks if plan_gate(b['methodology']))
    hosts = []
    for c in cells:
        if c['host'] not in hosts:
            hosts.append(c['host'])
    reps = int(matrix.get('repetitions', DEFAULT_REPETITIONS))
    plan = dict(name=matrix['name'], baseline=matrix.get('baseline', cells[0]['name']), repetitions=reps,
                concurrency=concurrency, cells=cells, benchmarks=benchmarks, hosts=hosts, runs=runs, gates=gates)
    plan.update((k, matrix[k]) for k in ('pivot', 'baseline_by', 'correction') if matrix.get(k))
    if matrix.get('equivalence_margin_pct') is not None:
        plan['equivalence_margin_pct'] = matrix['equivalence_margin_pct']
    budget = (matrix.get('methodology') or {}).get('budget_s')
    if budget is not None:     # rounds driven by the comparisons (plugin_utils/plan/rounds.py)
        plan['rounds'] = dict(budget_s=float(budget))
    return plan
