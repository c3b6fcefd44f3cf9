# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one run path, its plan side (pure functions, controller only): which runs go together in one
call of benchlab.bench.run_benchmark (a batch), and the work a run needs on other hosts (its phases).

Every run goes through the action benchlab.bench.run_benchmark, in roles/bench_run/tasks/run.yml:

- A **batch** is one call per host: that host's runs of consecutive schedule steps, run one after
  the other in one module process on the host (module_utils/run/benchrun.py run_module), each record
  streamed back and stored the moment its run ends. Steps join a batch when the plan allows it:
  every host of the batch has a run in each of its steps (so hosts that contend are never in it
  together), no step starts its runs together on purpose, no run has phases, each host's runs are
  of one tool, at most BATCH_MAX_RUNS runs per host. Anything else is a batch of one step.
- A **phase** is work on a host around a run, declared as data: by the path itself (a guest's
  hypervisor host drops its caches before the run; a DRBD host waits until its resources are
  UpToDate) and by the tool's unit (``phases(run, hostvars)``: iperf's servers, its concurrent
  pairs). run.yml carries the phases out with the same action, delegated to the phase's host, in
  the order of their ``at``: ``before`` (in turn, before the run), ``start`` (started in the
  background on the agreed moment, before the run), ``after`` (always, after the run, also when it
  failed: collect what started, stop what was started). A phase is::

      {name, at, host, module (a benchlab.bench module), args,
       args_from: {option: '<phase name>.<result key>'},   # after: from an earlier phase's result
       guard: {guard name: '<result key>'},                 # before: the run's guards option takes it
       run_args: {option: '<result key>'},                  # before: the run's module option takes it
       ignore_errors: bool,                                 # a failure is recorded, not the run's
       async_s: seconds, start_at: bool,                    # start: in the background, on the moment
       collect: '<start phase name>', records: bool,        # after: the records of a started phase
       observes: 'hypervisor' | 'drbd_peer'}                # an observer of the run on another host

  An observer of the timed window on another host is the same (``observer_phases``): a ``start``
  phase before the run (benchlab.bench.observe on the guest's hypervisor host, on a DRBD host's
  peers) and an ``after`` phase that stops it, cut to the target's own window (its
  ``observed.wall_start`` and ``window_s``). The run's records wait for it (the action returns
  them held, ``bench_results_held``) and are stored with ``observed.host`` by ``amend_records``.

A run as the path carries it is the plan's run plus its context: ``index`` (its place in the plan's
runs), ``step`` (its schedule step), ``key`` (the stable key of its benchmark and cell, which the
work directory's marker names), ``describe`` (the cell's first run describes its environment),
``limit_s`` (how long its module may take at most) and ``phases``. The action puts ``run_id``,
``repetition``, ``step`` and ``cell_key`` on every record the run makes.
"""

from __future__ import annotations

import functools
import math
import os

import yaml

from ansible_collections.benchlab.bench.plugins.module_utils.run.guards import is_address
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import unit

# The most runs of one host in one batch: a longer batch saves nothing more, and one module
# process holds them all.
BATCH_MAX_RUNS = 50
# How long a run without a timeout or an async limit of its own may take at most (the plan made
# it synchronous: it is expected to end well within its benchmark's async_after_s).
SYNC_LIMIT_S = 900
PHASE_AT = ('before', 'start', 'after')
# The names under which Ansible reaches this controller without an inventory entry (implicit localhost).
LOCALHOST = ('localhost', '127.0.0.1', '::1')
PHASE_KEYS = ('name', 'at', 'host', 'module', 'args', 'args_from', 'guard', 'run_args', 'ignore_errors', 'async_s',
              'start_at', 'collect', 'records', 'observes')
DRBD_DEFAULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
                             'roles', 'drbd', 'defaults', 'main.yml')


class PhaseError(ValueError):
    """A phase a unit declared wrongly (the message names the tool and the phase)."""


@functools.lru_cache(maxsize=1)
def drbd_wait_defaults():
    """The DRBD role's defaults of the wait for UpToDate (drbd_wait_timeout, _interval, _missing_ok):
    a host's own values win."""
    with open(DRBD_DEFAULTS, encoding='utf-8') as f:
        defaults = yaml.safe_load(f) or {}
    return dict((k, defaults[k]) for k in ('drbd_wait_timeout', 'drbd_wait_interval', 'drbd_wait_missing_ok'))


def host_phases(run, hostvars):
    """The path's own phases of a run on its host: the guest's hypervisor host drops its caches (the
    run's guards.hypervisor_caches_dropped says whether it did), a DRBD host waits until its
    resources are UpToDate with no resync (guards.drbd: their state then)."""
    v = hostvars.get(run['host']) or {}
    out = []
    hv = v.get('bench_hypervisor_host')
    if hv and run.get('drop_hypervisor_caches', True):
        out.append(dict(name='hypervisor-caches', at='before', host=hv, module='benchlab.bench.drop_caches', args={},
                        guard={'hypervisor_caches_dropped': 'dropped'}, ignore_errors=True))
    resources = v.get('drbd_resources') or []
    if resources:
        d = dict(drbd_wait_defaults())
        d.update((k, v[k]) for k in d if v.get(k) is not None)
        out.append(dict(name='drbd-uptodate', at='before', host=run['host'], module='benchlab.bench.drbd_status',
                        args=dict(names=[r['name'] for r in resources if isinstance(r, dict) and r.get('name')],
                                  wait='uptodate', timeout=d['drbd_wait_timeout'], interval=d['drbd_wait_interval'],
                                  missing_ok=d['drbd_wait_missing_ok']),
                        guard={'drbd': 'drbd'}))
    return out


def observe_interval_s(run):
    """The run's observation interval (the matrix's methodology through guards, else the run's own
    option, else 1 s); 0 turns observation off, on the target and on the hosts below it."""
    value = (run.get('guards') or {}).get('observe_interval_s')
    if value is None:
        value = (run.get('params') or {}).get('observe_interval_s')
    return 1.0 if value is None else float(value or 0)


def _address(addr):
    """The host part of a DRBD node address (10.0.0.1:7788, [fd00::1]:7788, 10.0.0.1)."""
    addr = str(addr or '')
    if addr.startswith('['):
        return addr[1:].split(']', 1)[0]
    return addr.rsplit(':', 1)[0] if addr.count(':') == 1 else addr


def _drbd_nodes(host, v):
    """[(the resource's nodes, those of them that are this host)] of a DRBD host's drbd_resources (a
    node is this host by its name: drbd_node_name, the inventory name or its first label)."""
    me = set(str(x) for x in (v.get('drbd_node_name'), host, host.split('.')[0]) if x)
    out = []
    for res in v.get('drbd_resources') or []:
        nodes = [n for n in (res.get('nodes') or []) if isinstance(n, dict)] if isinstance(res, dict) else []
        out.append((nodes, [n for n in nodes if str(n.get('name')) in me]))
    return out


def drbd_peers(host, v, hostvars):
    """[(peer inventory host, [its backing disks], this host's replication address)] of a DRBD host's
    resources: the other nodes the inventory names (a node's name, as `uname -n` prints it, that is an
    inventory host); a peer no host of the inventory is named after is not observed."""
    out = {}
    for res, (nodes, mine) in zip(v.get('drbd_resources') or [], _drbd_nodes(host, v)):
        for n in nodes:
            name = str(n.get('name'))
            if n in mine or name not in hostvars:
                continue
            disks, toward = out.setdefault(name, ([], []))
            disk = n.get('disk') or res.get('disk')
            if disk and disk not in disks:
                disks.append(disk)
            for m in mine:
                a = _address(m.get('address'))
                if a and a not in toward:
                    toward.append(a)
    return [(peer, disks, toward) for peer, (disks, toward) in sorted(out.items())]


def drbd_links(host, v):
    """The addresses of a DRBD host's peers in the resources it is a node of (inventory hosts or
    not): the target observes its own interfaces toward them (guards.observe_toward), so the bytes
    its replication link carried during the run are counted on the target's own clock."""
    out = []
    for nodes, mine in _drbd_nodes(host, v):
        for n in nodes if mine else ():
            a = _address(n.get('address'))
            # an address the guard would refuse (say DRBD's `ipv4 10.0.0.2:7788` form) is not
            # observed rather than failing the run
            if n not in mine and is_address(a) and a not in out:
                out.append(a)
    return out


def observer_phases(run, hostvars):
    """The observers of a run on the hosts below it, at the run's observation interval: its
    hypervisor host (bench_hypervisor_host: the host-side path of the guest's disk,
    bench_hypervisor_disk, and the guest, bench_hypervisor_guest {kind, name}, whose own CPU is told
    apart) and a DRBD host's peers (their backing disks, the link toward this host); only hosts of
    the inventory. None when observation is off."""
    interval = observe_interval_s(run)
    if interval <= 0:
        return []
    v = hostvars.get(run['host']) or {}
    who = []
    hv = v.get('bench_hypervisor_host')
    # a hypervisor host the inventory does not name (a label for contention only) is not observed:
    # there is no connection to run an observer through; this controller (Ansible's implicit
    # localhost) always has one
    if hv and (hv in hostvars or hv in LOCALHOST):
        args = dict(paths=[v['bench_hypervisor_disk']] if v.get('bench_hypervisor_disk') else [])
        if isinstance(v.get('bench_hypervisor_guest'), dict):
            args['guest'] = dict((k, str(v['bench_hypervisor_guest'][k])) for k in ('kind', 'name')
                                 if v['bench_hypervisor_guest'].get(k) is not None)
        who.append((hv, 'hypervisor', args))
    for peer, disks, toward in drbd_peers(run['host'], v, hostvars):
        if peer != hv:
            who.append((peer, 'drbd_peer', dict(paths=disks, toward=toward)))
    out = []
    for host, role, args in who:
        start = 'observe@%s' % host
        out.append(dict(name=start, at='start', host=host, module='benchlab.bench.observe', observes=role,
                        args=dict(args, state='started', interval_s=interval, max_s=limit_s(run) + 60),
                        ignore_errors=True))
        out.append(dict(name='observed@%s' % host, at='after', host=host, module='benchlab.bench.observe',
                        observes=role, args=dict(state='stopped'), args_from={'id': '%s.observe_id' % start},
                        ignore_errors=True))
    return out


def phase_problems(tool, phases):
    """What is wrong with a run's phases, each naming the tool's unit and the phase."""
    problems, names = [], []
    for i, ph in enumerate(phases):
        where = 'plugins/plugin_utils/benchmarks/%s.py phases()[%d]' % (tool, i)
        if not isinstance(ph, dict):
            problems.append('%s: expected a mapping' % where)
            continue
        unknown = sorted(set(ph) - set(PHASE_KEYS))
        if unknown:
            problems.append('%s: unknown key(s) %s' % (where, ', '.join(unknown)))
        if ph.get('at') not in PHASE_AT:
            problems.append('%s: at must be one of %s' % (where, ', '.join(PHASE_AT)))
        if not ph.get('name') or ph.get('name') in names:
            problems.append('%s: a name of its own is needed' % where)
        names.append(ph.get('name'))
        if not ph.get('host'):
            problems.append('%s: no host' % where)
        if ph.get('collect'):
            if ph['collect'] not in names:
                problems.append('%s: collects %r, no earlier phase of that name' % (where, ph['collect']))
        elif not str(ph.get('module') or '').startswith('benchlab.bench.'):
            problems.append('%s: module must be one of benchlab.bench, got %r' % (where, ph.get('module')))
        for source in (ph.get('args_from') or {}).values():
            if str(source).split('.', 1)[0] not in names[:-1]:
                problems.append('%s: args_from %r names no earlier phase' % (where, source))
    return problems


def run_phases(run, hostvars):
    """The phases of a run: the path's own, then its unit's. PhaseError when a unit declared one wrongly."""
    mod = unit(run['tool'])
    declared = list(mod.phases(run, hostvars)) if mod is not None and hasattr(mod, 'phases') else []
    problems = phase_problems(run['tool'], declared)
    if problems:
        raise PhaseError('; '.join(problems))
    return host_phases(run, hostvars) + observer_phases(run, hostvars) + declared


def start_delay_s(run):
    """Seconds after the phases before every client of the run starts on one agreed moment (iperf's
    concurrent pairs), or None."""
    mod = unit(run['tool'])
    return mod.start_delay_s(run) if mod is not None and hasattr(mod, 'start_delay_s') else None


def limit_s(run):
    """How long the run's module may take at most: its timeout, its async limit, or SYNC_LIMIT_S."""
    return int(run.get('timeout_s') or run.get('async_s') or SYNC_LIMIT_S)


def carried(run, index, step, keys, describe, hostvars):
    """The run as the path carries it (see the module docstring)."""
    out = dict(run, index=index, key=keys.get((run['benchmark'], run['cell'])), describe=index in describe,
               limit_s=limit_s(run), phases=run_phases(run, hostvars))
    if step is not None:
        out['step'] = step
    v = hostvars.get(run['host']) or {}
    if v.get('bench_hypervisor_host') and not run.get('drop_hypervisor_caches', True):
        out['guards'] = dict(run.get('guards') or {}, hypervisor_caches_dropped=False)
    toward = drbd_links(run['host'], v) if observe_interval_s(run) > 0 else []
    if toward:
        out['guards'] = dict(out.get('guards') or run.get('guards') or {}, observe_toward=toward)
    return out


def batchable(run):
    return not run['phases'] and start_delay_s(run) is None


def batch_of(runs):
    """One host's share of a batch: its runs, and (for a batch of one run) that run's phases and agreed start."""
    one = runs[0] if len(runs) == 1 else None
    return dict(runs=runs, phases=one['phases'] if one else [], start_delay_s=start_delay_s(one) if one else None)


def plan_batches(plan, steps, together, keys, describe, hostvars):
    """The batches of a schedule: [{step, steps, together, hosts: {host: {runs, phases, start_delay_s}}}],
    in order (see the module docstring)."""
    batches, current = [], None
    for n, step in enumerate(steps):
        runs = dict((host, carried(plan['runs'][i], i, n, keys, describe, hostvars)) for host, i in step.items())
        if together[n] and len(runs) > 1:
            # guests measured at once on purpose: each one's host observer would count the others'
            # work as the host's (host_busy); not observed
            for r in runs.values():
                r['phases'] = [ph for ph in r['phases'] if not ph.get('observes')]
        joinable = not together[n] and all(batchable(r) for r in runs.values())
        if (current is not None and joinable and current['joinable'] and set(runs) == set(current['hosts'])
                and all(r['tool'] == current['hosts'][h][0]['tool'] and len(current['hosts'][h]) < BATCH_MAX_RUNS
                        for h, r in runs.items())):
            for host, r in runs.items():
                current['hosts'][host].append(r)
            current['steps'] += 1
            continue
        current = dict(step=n, steps=1, together=bool(together[n]), joinable=joinable,
                       hosts=dict((host, [r]) for host, r in runs.items()))
        batches.append(current)
    out = []
    for b in batches:
        hosts = dict((h, batch_of(rs)) for h, rs in b['hosts'].items())
        if b['together']:
            # one moment for the whole step (agreed once): the longest delay any of its runs asks
            # for (an iperf run's params.start_delay_s, past a slow guest's module start-up), which
            # the role's bench_run_start_delay_s can only lengthen
            delays = [x['start_delay_s'] for x in hosts.values() if x['start_delay_s'] is not None]
            for x in hosts.values():
                x['start_delay_s'] = max(delays) if delays else None
        out.append(dict(step=b['step'], steps=b['steps'], together=b['together'], hosts=hosts))
    return out


def gate_batches(plan, runs, keys, hostvars):
    """The batches of the runs a variance gate asks for on one host, in order: consecutive runs of
    one tool without phases go together."""
    out = []
    for r in runs:
        r = carried(r, None, None, keys, (), hostvars)
        last = out[-1] if out else None
        if (last is not None and batchable(r) and all(batchable(x) for x in last) and last[0]['tool'] == r['tool']
                and len(last) < BATCH_MAX_RUNS):
            last.append(r)
        else:
            out.append([r])
    return [batch_of(b) for b in out]


# -- the action's side: what a batch's runs get, and what becomes of their results --------------

def by_name(done):
    """{phase name: its result} of the registered loop results of earlier phase tasks."""
    out = {}
    for res in done or []:
        if isinstance(res, dict) and isinstance(res.get('item'), dict) and res['item'].get('name'):
            out[res['item']['name']] = res
    return out


def result_value(results, source):
    """'<phase>.<key>' of the phase results, or None (the phase did not run, failed or has no such key)."""
    name, _dot, key = str(source).partition('.')
    res = results.get(name) or {}
    if res.get('failed') or res.get('skipped') or res.get('phase_failed'):
        return None
    return res.get(key)


def run_guards(run, results, start_at=None, clock=None):
    """A run's guards option: the plan's, what its phases found (guard: the hypervisor host dropped its
    caches, DRBD's state), the agreed start (with the host's clock reading, start_guards)."""
    guards = dict(run.get('guards') or {})
    for ph in run.get('phases') or []:
        for guard, key in (ph.get('guard') or {}).items():
            value = result_value(results, '%s.%s' % (ph['name'], key))
            guards[guard] = bool(value) if guard == 'hypervisor_caches_dropped' else value
    guards.update(start_guards(start_at, clock))
    return guards


def start_guards(start_at, clock):
    """The guards of the agreed start (the controller's moment, start_at) on a host whose clock was read
    (clock_reading): start_at and clock_offset_s, the host's clock less the controller's where the
    reading tells them apart (its offset beyond its error), else 0; {} without an agreed start."""
    if start_at is None:
        return {}
    out = {'start_at': float(start_at)}
    if _is_reading(clock):
        out['clock_offset_s'] = clock['offset_s'] if abs(clock['offset_s']) > abs(clock['error_s']) else 0.0
    return out


def phase_run_args(run, results):
    """The run's module options its phases decided (run_args: an iperf 2 UDP server that listens on a
    port per stream has its client send each stream to its own port); what a phase did not say is left
    to the module's default."""
    args = {}
    for ph in run.get('phases') or []:
        for option, key in (ph.get('run_args') or {}).items():
            value = result_value(results, '%s.%s' % (ph['name'], key))
            if value is not None:
                args[option] = value
    return args


def phase_args(phase, results, start_at=None, clock=None):
    """A phase's module options, with what it takes from earlier phases (args_from) and the agreed
    start (with its host's clock reading, start_guards); None when an earlier phase it needs did not
    run (nothing to stop)."""
    args = dict(phase.get('args') or {})
    for option, source in (phase.get('args_from') or {}).items():
        value = result_value(results, source)
        if value is None:
            return None
        args[option] = value
    if phase.get('start_at') and start_at is not None:
        args['guards'] = dict(args.get('guards') or {}, **start_guards(start_at, clock))
    return args


def records_of(result):
    if isinstance(result.get('bench_results'), list):
        return [r for r in result['bench_results'] if isinstance(r, dict)]
    if isinstance(result.get('bench_result'), dict):
        return [result['bench_result']]
    return []


def stamp(records, run, run_id):
    """The run's context on each record it made: run id, repetition, step (runs of one step ran at
    once), cell key. A record's own value stays (a concurrent pair says its own labels)."""
    for rec in records:
        if run_id:
            rec.setdefault('run_id', run_id)
        for field, value in (('repetition', run.get('repetition')), ('step', run.get('step')), ('cell_key', run.get('key'))):
            if value is not None:
                rec.setdefault(field, value)
    return records


def failed_run(run, msg):
    return dict(benchmark=run.get('benchmark'), cell=run.get('cell'), repetition=run.get('repetition'),
                msg=str(msg or 'failed')[:2000])


def run_title(run):
    """What the progress line says of a run: `fio randread #1 on var-tmp (host, rootfs)`."""
    labels = run.get('labels') if isinstance(run.get('labels'), dict) else {}
    labels = dict((k, v) for k, v in labels.items() if k not in ('cell', 'benchmark'))
    params = run.get('params') if isinstance(run.get('params'), dict) else {}
    test = params.get('test') or params.get('rw') or params.get('mode')
    tool, bench = str(run.get('tool') or ''), str(run.get('benchmark') or '')
    what = bench if bench.startswith(tool) else ('%s %s' % (tool, bench)).strip()
    if test and str(test) not in what:
        what += ' ' + str(test)
    what += ' #%s%s on %s' % (run.get('repetition'), ' (gate)' if run.get('gate') is True else '', run.get('cell'))
    if labels:
        what += ' (%s)' % ', '.join(str(v) for v in labels.values())
    return what


class Outcome(object):
    """What a batch's runs came to, built as each run ends: the records (with their context), whether
    each was stored in the run's results.jsonl at once (`store(record)` returns True), the observed
    time series the run directory does not hold yet (`store_series(id, series)` stores one, True when
    it did, before the record that names it), the failed runs, the environments the runs described;
    and the task's result."""

    def __init__(self, runs, run_id, store=None, announce=None, store_series=None):
        self.runs = runs
        self.run_id = run_id
        self.store = store
        self.store_series = store_series
        self.announce = announce
        self.results = [None] * len(runs)
        self.records, self.stored, self.failed, self.sysinfo, self.dry_runs = [], [], [], [], []
        self.observed = {}
        self.started = set()

    def start(self, i):
        if i not in self.started and 0 <= i < len(self.runs):
            self.started.add(i)
            if self.announce:
                self.announce(self.runs[i])

    def spool_lines(self, docs):
        for doc in docs:
            if isinstance(doc, dict) and isinstance(doc.get('start'), int):
                self.start(doc['start'])
            elif isinstance(doc, dict) and isinstance(doc.get('done'), int) and isinstance(doc.get('result'), dict):
                self.finish(doc['done'], doc['result'])

    def finish(self, i, result):
        """Run i ended with `result` (its module's result): its records stamped and stored, once."""
        if not 0 <= i < len(self.runs) or self.results[i] is not None:
            return
        self.start(i)
        run = self.runs[i]
        self.results[i] = result
        series = result.get('bench_observed')
        for series_id, data in sorted(series.items()) if isinstance(series, dict) else ():
            if not (self.store_series and self.store_series(series_id, data)):
                self.observed[series_id] = data
        for rec in stamp(records_of(result), run, self.run_id):
            self.records.append(rec)
            self.stored.append(bool(self.store and self.store(rec)))
        if isinstance(result.get('sysinfo'), dict):
            self.sysinfo.append(dict(labels=result.get('labels') or run.get('labels') or {}, sysinfo=result['sysinfo']))
        if isinstance(result.get('bench_dry_run'), dict) or isinstance(result.get('cmd'), list):
            self.dry_runs.append(dict(run=dict((k, run.get(k)) for k in ('cell', 'benchmark', 'repetition', 'tool')),
                                      plan=result.get('bench_dry_run') or dict(argv=result.get('cmd'))))
        if result.get('failed'):
            self.failed.append(failed_run(run, result.get('msg')))

    def finish_all(self, result):
        """The module's final result: every run's result it holds; a run it holds none for (the module
        died, or could not start) failed with the module's message."""
        runs = result.get('runs') if isinstance(result.get('runs'), list) else []
        for i, res in enumerate(runs):
            if isinstance(res, dict):
                self.finish(i, res)
        msg = result.get('msg') or 'the module ended without a result for this run'
        for i in range(len(self.runs)):
            if self.results[i] is None:
                self.finish(i, dict(failed=True, msg=msg, lost=True))

    def lost(self):
        """The runs whose module ended without their result (their work may be left behind)."""
        return [run for run, res in zip(self.runs, self.results) if res is not None and res.get('lost')]

    def result(self):
        out = dict(changed=any(r.get('changed') for r in self.results if r), bench_results=self.records,
                   bench_results_stored=self.stored, bench_failed_runs=self.failed, bench_sysinfo=self.sysinfo)
        if self.dry_runs:
            out['bench_dry_runs'] = self.dry_runs
        if self.observed:   # the report callback stores them (observed/<id>.json.gz)
            out['bench_observed'] = self.observed
        warnings = [w for r in self.results if r for w in r.get('warnings') or []]
        if warnings:
            out['warnings'] = warnings
        if len(self.runs) == 1 and self.results[0]:
            for key in ('cmd', 'bench_dry_run'):
                if key in self.results[0]:
                    out[key] = self.results[0][key]
        if self.failed:
            out.update(failed=True, msg='%d of %d run(s) failed: %s' % (len(self.failed), len(self.runs), '; '.join(
                '%s in %s #%s: %s' % (f['benchmark'], f['cell'], f['repetition'], f['msg']) for f in self.failed)))
        return out


# -- an observer on a host below the run --------------------------------------------------------

def _window(records):
    """(since, until): the Unix times that bracket the target's observed window over a run's records
    (observed.wall_start, window_s), or (None, None)."""
    spans = []
    for rec in records:
        obs = rec.get('observed') if isinstance(rec.get('observed'), dict) else {}
        if isinstance(obs.get('wall_start'), (int, float)) and isinstance(obs.get('window_s'), (int, float)):
            spans.append((obs['wall_start'], obs['wall_start'] + obs['window_s']))
    if not spans:
        return None, None
    return min(s for s, _e in spans), max(e for _s, e in spans)


def of_run(records, run):
    """The records a run made (its cell key and repetition), out of those a task held."""
    return [r for r in records if isinstance(r, dict) and r.get('cell_key', run.get('key')) == run.get('key')
            and r.get('repetition', run.get('repetition')) == run.get('repetition')]


# How the clock of a host below is carried onto the target's: each is read over its own connection
# (CLOCK_COMMAND), bracketed by the controller's clock, the target's right after its runs and the
# host's right before its observer stops: each one's offset from the controller's clock, to within
# half its round trip (clock_reading). The target's window is moved by the difference and widened by
# the two readings' errors and CLOCK_SLACK_S (what a clock may drift between a reading and the run:
# a TCG guest's clock is not kept by kvm-clock, and it starts from the emulated RTC, whole seconds
# behind its host's; more than a second apart was seen minutes after boot). Where a side could not be read (a
# target without GNU date, an older record), the window is widened by CLOCK_TOLERANCE_S, the guess
# of old. The host's byte counts can only grow by the widening (a cache or a skip below is never
# made up by a clock; a layer's verdict errs toward none). A container (kind lxc) reads its host's
# own clock: its host's window is the target's, nothing is read.
CLOCK_COMMAND = 'date +%s.%N'
CLOCK_SLACK_S = 0.1
CLOCK_TOLERANCE_S = 1.0


def clock_reading(before, out, after):
    """{'offset_s', 'error_s'}: a host's clock less the controller's, from its reading `out`
    (CLOCK_COMMAND's output) taken between the controller's times `before` and `after` (its offset
    from their middle, to within half the round trip); None for anything else."""
    try:
        value = float(str(out).strip())
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or not after >= before:
        return None
    return {'offset_s': round(value - (before + after) / 2.0, 4), 'error_s': round((after - before) / 2.0, 4)}


def _is_reading(clock):
    return isinstance(clock, dict) and all(is_number(clock.get(k)) for k in ('offset_s', 'error_s'))


def clocks_apart(run):
    """Whether a run has an observer on a host below with a clock of its own (to be read)."""
    return any(ph.get('observes') and ph.get('at') == 'after' and _clock_tolerance_s(ph, run)
               for ph in run.get('phases') or [] if isinstance(ph, dict))


def with_clock(records, clock):
    """The records with the target's clock reading (clock_reading) as ``observed.clock``."""
    if not _is_reading(clock):
        return list(records)
    return [dict(r, observed=dict(r['observed'], clock=clock)) if isinstance(r.get('observed'), dict) else r
            for r in records]


def _clock_tolerance_s(phase, run):
    """The widening of a stop phase's window when the clocks were not read (CLOCK_TOLERANCE_S; 0 under
    a container)."""
    start = next((ph for ph in run.get('phases') or [] if isinstance(ph, dict) and ph.get('at') == 'start'
                  and ph.get('observes') and ph.get('host') == phase.get('host')), None)
    guest = ((start or {}).get('args') or {}).get('guest') or {}
    return 0.0 if phase.get('observes') == 'hypervisor' and guest.get('kind') == 'lxc' else CLOCK_TOLERANCE_S


def clock_shift(phase, run, records, clock):
    """(shift, margin) in seconds: the target's window in the clock of the stop phase's host is its
    own plus shift, widened by margin on each side (the two clocks' readings, else the tolerance)."""
    tolerance = _clock_tolerance_s(phase, run)
    if not tolerance:
        return 0.0, 0.0
    target = next((r['observed']['clock'] for r in records
                   if isinstance(r.get('observed'), dict) and _is_reading(r['observed'].get('clock'))), None)
    if not (_is_reading(clock) and target):
        return 0.0, tolerance
    return (round(clock['offset_s'] - target['offset_s'], 4),
            round(abs(clock['error_s']) + abs(target['error_s']) + CLOCK_SLACK_S, 4))


def observer_args(phase, margs, run, held, run_id, clock=None):
    """An observer phase's module options: the run id and key its owner marker carries, and for the
    stop the target's window out of the run's held records (its samples are cut to it), carried onto
    the clock of the host below (clock: its reading, clock_shift)."""
    margs = dict(margs, run_id=run_id or 'unknown', run_key=run.get('key'))
    if phase.get('at') == 'after':
        records = of_run(held, run)
        since, until = _window(records)
        if since is not None:
            shift, margin = clock_shift(phase, run, records, clock)
            margs.update(since=since + shift - margin, until=until + shift + margin)
    return margs


def amend_records(held, run, done, host_of=None):
    """The run's held records with what the observers below it saw (the after phases' results in
    done): ``observed.host`` the first (the hypervisor host, else a DRBD peer), ``observed.peers``
    the others; each with its name, role and the host-side cost (explain.host_cost). An observer that
    failed or saw nothing is named in the target's ``observed.missing``."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.explain import host_cost
    seen, missing = [], []
    for res in done or []:
        item = res.get('item') if isinstance(res, dict) else None
        if not (isinstance(item, dict) and item.get('observes') and item.get('at') == 'after'):
            continue
        if isinstance(res.get('observed'), dict) and not res.get('skipped'):
            seen.append(dict(res['observed'], name=item['host'], role=item['observes']))
        else:
            missing.append({'source': 'observer on %s' % item['host'], 'why': str(res.get('msg') or 'it did not run')[:300]})
    out = []
    for rec in of_run(held, run):
        rec = dict(rec)
        obs = rec.get('observed')
        if isinstance(obs, dict):
            obs = rec['observed'] = dict(obs, missing=list(obs.get('missing') or []) + missing)
            hosts = []
            for h in seen:
                h = dict(h)
                cost = host_cost(rec, h)
                if cost:
                    h['cost'] = cost
                hosts.append(h)
            if hosts:
                obs['host'] = hosts[0]
            if len(hosts) > 1:
                obs['peers'] = hosts[1:]
        out.append(rec)
    return out


def local_observers(results, hostvars):
    """[(pid, pid_start, state directory)] of the observers the run's start phases started on this
    controller (a host reached with the local connection), from their results: what the run path
    stops by their recorded pid when the playbook is stopped before its after phases, and what the
    report callback stops at the end when those phases never came (stop_left_observers)."""
    out = []
    for res in results.values():
        item = res.get('item') if isinstance(res.get('item'), dict) else {}
        if not (item.get('observes') and item.get('at') == 'start') or res.get('phase_failed') or res.get('failed'):
            continue
        v = hostvars.get(item.get('host')) or {}
        local = v.get('ansible_connection') == 'local' or (item.get('host') in LOCALHOST and not v.get('ansible_host'))
        if local and isinstance(res.get('pid'), int) and res.get('pid_start') is not None:
            out.append((res['pid'], res['pid_start'], res.get('observe_id')))
    return out


def stop_left_observers(observers, proc='/proc'):
    """At the end of a playbook: of `observers` (local_observers'), each whose state directory is
    still there is stopped and its directory removed. Its stop after the run never came: the run's
    target became unreachable during the run, and Ansible runs nothing more for such a host (no
    `always`), so the sampler would go on until its max_s and leave its directory in /var/tmp. Only a
    directory named as the observe module names its own, whose owner marker (ours, not a symlink)
    records that very process and start time and no keep, is touched. Returns [directories removed]."""
    from ansible_collections.benchlab.bench.plugins.module_utils.run.workdir import (
        PREFIX, read_marker, remove_tree, stop_recorded)
    out = []
    for pid, pid_start, workdir in observers:
        real = os.path.realpath(workdir) if isinstance(workdir, str) else ''
        if not os.path.basename(real).startswith(PREFIX + 'observe-') or not os.path.isdir(real):
            continue    # stopped and removed by its after phase, as it should be
        doc, _reason = read_marker(real)
        if doc is None or doc.get('keep') or doc.get('pgid') != pid or str(doc.get('pid_start')) != str(pid_start):
            continue
        stop_recorded(pid, pid_start, grace=5.0, proc=proc)
        remove_tree(real)
        out.append(real)
    return out
