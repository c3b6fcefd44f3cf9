# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where an inconclusive comparison's spread comes from, and what settling it would cost. Pure functions.

From what the runs already recorded, per side of the comparison (the cell and its baseline):
- disturbed: repetitions that other work or steal disturbed (the guards saw other processes' CPU,
  `not_quiet`, or the target's CPU had steal during the run); their share and the spread without
  them;
- device: the latency of the device at the bottom of the run's stack varied across repetitions and
  the metric followed it;
- cpu: the tool kept the CPU busy (at least CPU_BOUND_PCT of a core) and its busy share was
  steadier than the metric: the same work took more or less CPU time from run to run, which is the
  CPU's own speed (a VM's neighbours, the clock), not the tool waiting for anything;
- tool: none of these: the tool's own variation in quiet windows.
The noisier side (the larger coefficient of variation) names the source. run_costs() is what one
more run of a cell costs; settle_s() what the repetitions a comparison needs would cost.
"""

from __future__ import annotations

import math

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.grouping import counted

# Steal above this share of the CPU during a run: the hypervisor below took the CPU from it.
STEAL_PCT = 5.0
# Disturbed runs explain a spread when the spread without them is at most this share of it.
QUIETER = 0.8
# A device's latency "varied" when its coefficient of variation across repetitions is at least this,
# and the metric "followed it" when the correlation is at least this strong (either sign).
LATENCY_CV = 0.25
FOLLOWS_R = 0.7
# The tool's CPU share (of one core, summed over its processes) from which a run is CPU-bound, and its
# speed the CPU's: the spread is the CPU's when the share varies at most QUIETER times the metric.
CPU_BOUND_PCT = 50.0
# Seconds a run costs beyond its tool and cooldown (the task, the transfer, the observer) when
# nothing measured says otherwise: a round of the local lab's quick matrix paid 3.3-3.5 a run
# (docs/performance.md); after the first round, run_costs measures it.
RUN_OVERHEAD_S = 3.5


def _cv(values):
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    if not mean:
        return None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return sd / abs(mean)


def _corr(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if not sx or not sy:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy)


def disturbance(rec):
    """Why a record's run was disturbed ('not_quiet', 'steal 12%'), or None."""
    guards = (rec.get('params') or {}).get('guards') or {}
    if 'not_quiet' in (rec.get('flags') or ()) or guards.get('quiet') is False:
        return 'other work'
    steal = (((rec.get('observed') or {}).get('cpu')) or {}).get('steal_pct')
    if isinstance(steal, (int, float)) and steal >= STEAL_PCT:
        return 'steal %.0f%%' % steal
    return None


def _bottom_latency(rec):
    """(device name, await_ms) of the deepest device of the run's observation that completed
    requests (a device without any has no latency to speak of), or None."""
    devices = [d for d in ((rec.get('observed') or {}).get('devices') or [])
               if isinstance(d.get('await_ms'), (int, float)) and d['await_ms'] > 0
               and (d.get('read_ios') or 0) + (d.get('write_ios') or 0) > 0]
    if not devices:
        return None
    d = max(devices, key=lambda x: x.get('layer') or 0)
    return d.get('name'), float(d['await_ms'])


def _tool_cpu_pct(rec):
    pct = (((rec.get('observed') or {}).get('cpu')) or {}).get('tool_cpu_pct')
    return float(pct) if is_number(pct) else None


def side_spread(records, metric):
    """What one side's records say about its spread: {cv, n, disturbed: [(index, why)], cv_quiet,
    device, await_range, r, tool_cpu: (mean, cv) of the tool's CPU share when every run has one}."""
    recs = [r for r in records if counted(r) and isinstance(((r.get('metrics') or {}).get(metric) or {}).get('value'), (int, float))]
    values = [float(r['metrics'][metric]['value']) for r in recs]
    out = dict(cv=_cv(values), n=len(values), disturbed=[], cv_quiet=None, device=None, await_range=None, r=None,
               tool_cpu=None)
    shares = [_tool_cpu_pct(r) for r in recs]
    if len(shares) >= 3 and all(x is not None for x in shares):
        out['tool_cpu'] = (sum(shares) / len(shares), _cv(shares))
    for i, r in enumerate(recs):
        why = disturbance(r)
        if why:
            out['disturbed'].append((i, why))
    if out['disturbed']:
        skip = set(i for i, _why in out['disturbed'])
        out['cv_quiet'] = _cv([v for i, v in enumerate(values) if i not in skip])
    lat = [_bottom_latency(r) for r in recs]
    if len(values) >= 3 and all(lat) and len(set(name for name, _a in lat)) == 1:
        awaits = [a for _name, a in lat]
        out['device'], out['await_range'] = lat[0][0], (min(awaits), max(awaits))
        out['r'] = _corr(awaits, values)
        out['await_cv'] = _cv(awaits)
    return out


def _pct(x):
    return 'n/a' if x is None else '%.1f%%' % (100.0 * x)


def noise_of(cell, cell_records, baseline, base_records, metric):
    """{source: disturbed | device | cpu | tool, side (the cell whose spread it is), text} for an
    inconclusive comparison, or None without a spread on either side."""
    sides = [(cell, side_spread(cell_records, metric)), (baseline, side_spread(base_records, metric))]
    sides = [(name, s) for name, s in sides if s['cv'] is not None]
    if not sides:
        return None
    name, s = max(sides, key=lambda pair: pair[1]['cv'])
    others = [(n, o) for n, o in sides if n != name]
    also = ' (%s: %s)' % (others[0][0], _pct(others[0][1]['cv'])) if others else ''
    if s['disturbed'] and s['cv_quiet'] is not None and s['cv_quiet'] <= QUIETER * s['cv']:
        whys = sorted(set(why for _i, why in s['disturbed']))
        text = ('%d of %d runs of %s were disturbed (%s): the spread is %s with them, %s without them%s'
                % (len(s['disturbed']), s['n'], name, ', '.join(whys), _pct(s['cv']), _pct(s['cv_quiet']), also))
        return dict(source='disturbed', side=name, text=text)
    if s['device'] and (s.get('await_cv') or 0) >= LATENCY_CV and s['r'] is not None and abs(s['r']) >= FOLLOWS_R:
        low, high = s['await_range']
        text = ('the latency of %s under %s varied (%.3g to %.3g ms a request) and %s followed it (r = %.2f): the '
                'spread of %s is %s%s' % (s['device'], name, low, high, metric, s['r'], name, _pct(s['cv']), also))
        return dict(source='device', side=name, text=text)
    cpu = s['tool_cpu']
    if cpu and cpu[0] >= CPU_BOUND_PCT and cpu[1] is not None and cpu[1] <= QUIETER * s['cv']:
        text = ('the CPU\'s own speed: the spread of %s is %s while its tool kept %.0f%% of a core busy in every run '
                '(varying %s), so the same work took more or less CPU time from run to run: the speed of the CPU below '
                'it (on a virtual machine, its neighbours), not the tool waiting%s' % (name, _pct(s['cv']), cpu[0], _pct(cpu[1]), also))
        return dict(source='cpu', side=name, text=text)
    if s['disturbed']:
        why = '%d disturbed run(s) do not explain it (without them: %s)' % (len(s['disturbed']), _pct(s['cv_quiet']))
    else:
        why = 'no run was disturbed'
    device = ('the latency of %s did not follow it' % s['device']) if s['device'] else 'no device latency was recorded'
    text = 'the tool\'s own variation: the spread of %s is %s; %s, %s%s' % (name, _pct(s['cv']), why, device, also)
    return dict(source='tool', side=name, text=text)


def run_costs(plan, records, spent_s=0.0, runs_done=0):
    """{(bench, cell): seconds one more run costs}: the mean duration of its counted records, its
    cooldown and the overhead a run pays beyond them (measured from the rounds so far: their wall
    time over their runs minus the mean tool time; RUN_OVERHEAD_S before any)."""
    cooldown = dict((b['name'], float((b.get('methodology') or {}).get('cooldown_s') or 0)) for b in plan['benchmarks'])
    seen = {}
    for r in records:
        labels = r.get('labels') or {}
        if counted(r) and labels.get('benchmark') in cooldown:
            seen.setdefault((labels['benchmark'], labels.get('cell')), []).append(float(r.get('duration_s') or 0.0))
    tool = dict((k, sum(v) / len(v) + cooldown[k[0]]) for k, v in seen.items())
    overhead = RUN_OVERHEAD_S
    if runs_done and tool:
        overhead = max(0.0, spent_s / runs_done - sum(tool.values()) / len(tool))
    cost = {}
    for b in plan['benchmarks']:
        for cell in b.get('cells') or []:
            cost[(b['name'], cell)] = tool.get((b['name'], cell), cooldown[b['name']]) + overhead
    return cost


def settle_s(need, n_cell, n_base, cost_cell, cost_base):
    """Seconds the runs short of `need` per side would cost (None when need is)."""
    if need is None:
        return None
    return max(0, need - n_cell) * cost_cell + max(0, need - n_base) * cost_base
