# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where an inconclusive comparison's spread comes from (plugin_utils/analysis/spread.py), and the report
saying it with what settling it would cost."""

from __future__ import annotations

import json

from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.plan.matrix import expand_plan
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_problems
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.spread import noise_of, run_costs, settle_s, side_spread


def rec(cell, rep, value, await_ms=1.0, flags=(), steal=0.0, quiet=True, duration=2.0, ios=64, tool_cpu=None):
    r = new_record('dd', 'write', labels={'benchmark': 'dd-write', 'cell': cell},
                   metrics={'throughput': metric(value, 'MB/s', 'higher')})
    r.update(repetition=rep, duration_s=duration, host='h1', flags=list(flags))
    r['params']['guards'] = {'quiet': quiet, 'warmup': False}
    r['observed'] = {'cpu': dict({'steal_pct': steal}, **({} if tool_cpu is None else {'tool_cpu_pct': tool_cpu})),
                     'devices': [{'name': 'loop0', 'layer': 2, 'kind': 'loop', 'await_ms': await_ms, 'write_ios': 64},
                                 {'name': 'vda', 'layer': 3, 'kind': 'disk', 'await_ms': await_ms * 2, 'write_ios': ios}]}
    return r


BASE = [rec('base', i + 1, v) for i, v in enumerate([100.0, 101.0, 99.0, 100.5])]


def test_disturbed_runs_are_named_with_the_spread_without_them():
    cell = [rec('ct', 1, 90.0), rec('ct', 2, 55.0, flags=['not_quiet'], quiet=False), rec('ct', 3, 91.0), rec('ct', 4, 89.0)]
    n = noise_of('ct', cell, 'base', BASE, 'throughput')
    assert n['source'] == 'disturbed' and n['side'] == 'ct'
    assert n['text'].startswith('1 of 4 runs of ct were disturbed (other work): the spread is 21.6% with them, 1.1% '
                                'without them (base: 0.9%)'), n['text']
    steal = [rec('ct', 1, 90.0), rec('ct', 2, 60.0, steal=20.0), rec('ct', 3, 91.0)]
    assert '(steal 20%)' in noise_of('ct', steal, 'base', BASE, 'throughput')['text']
    # a disturbed run that is not where the spread comes from (without it the spread is no smaller)
    beside = [rec('ct', 1, 70.0), rec('ct', 2, 90.0, flags=['not_quiet'], quiet=False), rec('ct', 3, 110.0), rec('ct', 4, 90.0)]
    n = noise_of('ct', beside, 'base', BASE, 'throughput')
    assert n['source'] == 'tool' and '1 disturbed run(s) do not explain it (without them: 22.2%)' in n['text'], n['text']


def test_a_device_whose_latency_varied_and_the_metric_followed_it():
    awaits = [1.0, 4.0, 1.2, 3.8]
    cell = [rec('ct', i + 1, v, await_ms=a) for i, (v, a) in enumerate(zip([100.0, 52.0, 97.0, 55.0], awaits))]
    s = side_spread(cell, 'throughput')
    assert s['device'] == 'vda' and s['await_range'] == (2.0, 8.0) and s['r'] < -0.99
    n = noise_of('ct', cell, 'base', BASE, 'throughput')
    assert n['source'] == 'device'
    assert n['text'].startswith('the latency of vda under ct varied (2 to 8 ms a request) and throughput followed it '
                                '(r = -1.00)'), n['text']


def test_otherwise_the_tools_own_variation():
    cell = [rec('ct', i + 1, v) for i, v in enumerate([100.0, 80.0, 95.0, 85.0])]
    n = noise_of('ct', cell, 'base', BASE, 'throughput')
    assert n['source'] == 'tool'
    assert n['text'].startswith("the tool's own variation: the spread of ct is 10.1%; no run was disturbed, "
                                "the latency of vda did not follow it"), n['text']
    # the noisier side names the source, whichever it is
    quiet_cell = [rec('ct', i + 1, v) for i, v in enumerate([100.0, 100.2, 99.9, 100.1])]
    wild_base = [rec('base', i + 1, v) for i, v in enumerate([100.0, 70.0, 120.0, 90.0])]
    assert noise_of('ct', quiet_cell, 'base', wild_base, 'throughput')['side'] == 'base'
    # a device that completed no request has no latency to follow
    idle = [rec('ct', i + 1, v, await_ms=a, ios=0) for i, (v, a) in enumerate(zip([100.0, 52.0, 97.0, 55.0], [1, 4, 1, 4]))]
    assert side_spread(idle, 'throughput')['device'] == 'loop0'
    # no spread on either side: nothing to name; a run too fast to time has no value and is left out
    assert noise_of('ct', cell[:1], 'base', BASE[:1], 'throughput') is None
    too_fast = rec('ct', 5, 1.0)
    too_fast['metrics']['throughput']['value'] = None
    assert side_spread(cell + [too_fast], 'throughput')['n'] == 4


def test_a_cpu_bound_tool_at_a_steady_share_meets_the_cpus_own_speed():
    """The same work in the same share of a core, done faster or slower: the CPU's speed varied (the
    compress runs of a `make bench` here: bzip2's elapsed and CPU seconds varied 9-15 % together at
    99 % of a core); a share that follows the metric (the tool waited), a tool that is not CPU-bound,
    or a run without a share is not that."""
    values = [100.0, 80.0, 95.0, 85.0]
    steady = [rec('ct', i + 1, v, tool_cpu=c) for i, (v, c) in enumerate(zip(values, [99.0, 99.5, 98.6, 99.2]))]
    assert side_spread(steady, 'throughput')['tool_cpu'][0] == 99.075
    n = noise_of('ct', steady, 'base', BASE, 'throughput')
    assert n['source'] == 'cpu' and n['side'] == 'ct'
    assert n['text'].startswith("the CPU's own speed: the spread of ct is 10.1% while its tool kept 99% of a core busy "
                                "in every run (varying 0.4%), so the same work took more or less CPU time"), n['text']
    waited = [rec('ct', i + 1, v, tool_cpu=v) for i, v in enumerate(values)]
    assert noise_of('ct', waited, 'base', BASE, 'throughput')['source'] == 'tool'
    light = [rec('ct', i + 1, v, tool_cpu=30.0 + i * 0.1) for i, v in enumerate(values)]
    assert noise_of('ct', light, 'base', BASE, 'throughput')['source'] == 'tool'
    unseen = steady[:3] + [rec('ct', 4, 85.0)]
    assert side_spread(unseen, 'throughput')['tool_cpu'] is None
    assert noise_of('ct', unseen, 'base', BASE, 'throughput')['source'] == 'tool'
    # the row of the report says so, and results.json's schema knows the source
    plan = expand_plan(dict(name='m', repetitions=4, baseline='base',
                            cells=[dict(name='base', host='h1', path='/var/tmp'), dict(name='ct', host='h1', path='/var/tmp')],
                            benchmarks=[dict(name='dd-write', tool='dd', params=dict(test='write', size='16M'))]))
    a = analyze(BASE + steady, plan)
    (row,) = a['overview']
    assert row['verdict'] == 'inconclusive' and row['noise']['source'] == 'cpu'
    doc = dict(run_id='20261207T140000Z-abcdef', matrix='m', status='complete', started='2026-12-07T14:00:00Z',
               finished='2026-12-07T14:05:00Z', results_schema=1, records=[], environment={}, plan=plan,
               analysis=a, invalid=[], failed=[], user='t', inventory='i', playbook='p', collection_version='0.1.0')
    assert results_problems(json.loads(json.dumps(doc))) == []


def test_settling_costs_the_runs_each_side_is_short():
    assert settle_s(10, 3, 5, 2.0, 3.0) == 7 * 2.0 + 5 * 3.0
    assert settle_s(None, 3, 3, 1.0, 1.0) is None


def test_the_report_names_the_noise_and_the_cost_of_each_inconclusive_row():
    matrix = dict(name='m', repetitions=4, baseline='base', methodology=dict(cooldown_s=1),
                  cells=[dict(name='base', host='h1', path='/var/tmp'), dict(name='ct', host='h1', path='/var/tmp')],
                  benchmarks=[dict(name='dd-write', tool='dd', params=dict(test='write', size='16M'))])
    plan = expand_plan(matrix)
    cell = [rec('ct', 1, 97.0), rec('ct', 2, 60.0, flags=['not_quiet'], quiet=False), rec('ct', 3, 98.0), rec('ct', 4, 96.0)]
    a = analyze(BASE + cell, plan)
    (row,) = a['overview']
    assert row['verdict'] == 'inconclusive' and row['noise']['source'] == 'disturbed'
    # each side short of repetitions_needed, at its runs' duration (2 s), cooldown (1 s) and the overhead
    per_run = run_costs(plan, BASE + cell)[('dd-write', 'ct')]
    assert per_run == 2.0 + 1.0 + 3.5
    assert row['noise']['settle_s'] == 2 * (row['repetitions_needed'] - 4) * per_run
    md = render_markdown(a, {'matrix': 'm'})
    assert ('- dd-write · ct: 1 of 4 runs of ct were disturbed (other work)' in md
            and 'settles with %d per side, about %.0f s of runs more.' % (row['repetitions_needed'], row['noise']['settle_s']) in md)
    assert 'id="overview-noise"' in render_html(a, {'matrix': 'm'})
    # a concluded row has no noise to name
    same = [rec('ct', i + 1, v) for i, v in enumerate([50.0, 50.5, 49.5, 50.2])]
    (row,) = analyze(BASE + same, plan)['overview']
    assert row['verdict'] == 'worse' and row['noise'] is None
