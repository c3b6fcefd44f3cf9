# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/observe/observe.py on /proc files captured around real commands on this machine, in
an LXC container with lxcfs and in one without (tests/unit/fixtures/observe/README.md says how each
was captured), and the pure parts (summaries, the series, limited_by) on those samples.

The figures asserted are the ones the capture knows independently: dd wrote 32 MiB with
conv=fdatasync (its own /proc/<pid>/io says so), the loop device under the file system and the
disk under the loop device's image received at least that; the container with lxcfs sees one CPU
and 2 GiB and says its /proc files are virtualised."""

import json
import shutil
from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.observe import observe
from ansible_collections.benchlab.bench.plugins.module_utils.observe.observe import (
    Observer, limited_by, parse_cpu_stat, parse_diskstats, parse_meminfo_keys, parse_net_dev, parse_pid_io,
    parse_pid_stat, parse_pressure, parse_schedstat, parse_tc_rates, series, summarize, virtualised_sources)
from ansible_collections.benchlab.bench.plugins.module_utils.observe.layers import block_layers
from ansible_collections.benchlab.bench.plugins.module_utils.observe.sysinfo import parse_mountinfo

FIXTURES = Path(__file__).resolve().parents[3] / 'unit' / 'fixtures' / 'observe'
MiB = 1024 * 1024
DD_BYTES = 32 * MiB
CAPTURES = ('host-dd-ext4-on-loop', 'lxc-lxcfs-dd', 'lxc-plain-dd')


def text(capture, name):
    return (FIXTURES / capture / name).read_text()


def meta(capture):
    return json.loads(text(capture, 'meta.json'))


def sample(capture, which, t, devices):
    """One observer sample made of a capture's files (what Observer.snapshot reads)."""
    d = FIXTURES / capture / which
    snap = {'t': t, 'disk': parse_diskstats((d / 'diskstats').read_text(), set(devices)),
            'cpu': parse_cpu_stat((d / 'stat').read_text()), 'mem': parse_meminfo_keys((d / 'meminfo').read_text()),
            'psi': dict((r, parse_pressure((d / ('pressure_%s' % r)).read_text())) for r in ('cpu', 'io', 'memory')
                        if (d / ('pressure_%s' % r)).exists()),
            'net': {}}
    return snap


def tool_totals(capture):
    st = parse_pid_stat(text(capture, 'tool.stat'))
    return {'cpu_ticks': st['utime'] + st['stime'] + st['cutime'] + st['cstime'], 'io': parse_pid_io(text(capture, 'tool.io'))}


HOST_LAYERS = [
    {'layer': 0, 'name': '/mnt/x', 'kind': 'path', 'above': None},
    {'layer': 1, 'name': '/mnt/x', 'kind': 'filesystem', 'above': '/mnt/x', 'major_minor': '7:1'},
    {'layer': 2, 'name': 'loop1', 'kind': 'loop', 'above': '/mnt/x', 'major_minor': '7:1'},
    {'layer': 3, 'name': '/var/tmp/observe-capture.img', 'kind': 'file', 'above': 'loop1'},
    {'layer': 4, 'name': '/', 'kind': 'filesystem', 'above': '/var/tmp/observe-capture.img', 'major_minor': '254:0'},
    {'layer': 5, 'name': 'vda', 'kind': 'disk', 'above': '/', 'major_minor': '254:0'},
]


def host_summary(capture='host-dd-ext4-on-loop', loop='loop1'):
    """The observer's summary of a capture on the machine itself: a file system on `loop` over an
    image file on vda (HOST_LAYERS, with that loop device)."""
    m = meta(capture)
    layers = []
    for l in HOST_LAYERS:
        l = dict(l, major_minor=m['path_st_dev']) if l.get('major_minor') == '7:1' else dict(l)
        layers.append(dict(l, name=loop) if l['kind'] == 'loop' else dict(l, above=loop) if l['above'] == 'loop1' else l)
    samples = [sample(capture, 'before', 0.0, [loop, 'vda']), sample(capture, 'after', m['window_s'], [loop, 'vda'])]
    samples[0]['tool'], samples[1]['tool'] = 0, tool_totals(capture)['cpu_ticks']
    return summarize(samples, layers, 1.0, m['clk_tck'], tool=tool_totals(capture))


# ---- parsers ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('capture', CAPTURES)
def test_every_captured_file_parses(capture):
    m = meta(capture)
    assert m['rc'] == 0 and m['missing'] == []
    for which in ('before', 'after'):
        d = FIXTURES / capture / which
        disks = parse_diskstats((d / 'diskstats').read_text())
        assert 'vda' in disks and all(len(v) == 11 for v in disks.values())
        cpus = parse_cpu_stat((d / 'stat').read_text())
        assert 'cpu' in cpus and all(len(v) == 8 for v in cpus.values())
        mem = parse_meminfo_keys((d / 'meminfo').read_text())
        assert set(mem) == {'Dirty', 'Writeback', 'Cached'}
        assert 'lo' in parse_net_dev((d / 'net_dev').read_text())
        for r in ('cpu', 'io', 'memory'):
            assert set(parse_pressure((d / ('pressure_%s' % r)).read_text())) >= {'some'}
    st = parse_pid_stat(text(capture, 'tool.stat'))
    assert st['comm'] == 'dd' and st['state'] == 'Z'      # read from the zombie, before it was reaped
    io = parse_pid_io(text(capture, 'tool.io'))
    assert io['wchar'] == DD_BYTES and io['write_bytes'] == DD_BYTES and io['cancelled_write_bytes'] == 0


def test_the_lxcfs_container_sees_its_own_cpu_and_memory():
    cpus = parse_cpu_stat(text('lxc-lxcfs-dd', 'before/stat'))
    assert sorted(cpus) == ['cpu', 'cpu0']                     # cpuset.cpus = 0
    assert parse_meminfo_keys(text('lxc-lxcfs-dd', 'before/meminfo'), ('MemTotal',)) == {'MemTotal': 2 * 1024 ** 3}
    plain = parse_cpu_stat(text('lxc-plain-dd', 'before/stat'))
    assert sorted(plain) == ['cpu', 'cpu0', 'cpu1']             # without lxcfs: the host's two


def test_virtualised_sources_from_the_containers_mountinfo():
    found = virtualised_sources(parse_mountinfo(text('lxc-lxcfs-dd', 'before/mountinfo')))
    assert found == ['/proc/cpuinfo', '/proc/diskstats', '/proc/loadavg', '/proc/meminfo', '/proc/stat', '/proc/uptime']
    # lxcfs's own mount point (/tmp/...) is no /proc file; a container without lxcfs hides nothing
    assert virtualised_sources(parse_mountinfo(text('lxc-plain-dd', 'before/mountinfo'))) == []


def test_pressure_and_tc_rates():
    assert parse_pressure('some avg10=0.00 avg60=0.00 avg300=0.00 total=12\nfull avg10=0 avg60=0 avg300=0 total=5\n') == \
        {'some': 12, 'full': 5}
    assert parse_pressure('') == {}
    assert parse_tc_rates('') is None


# ---- summaries -------------------------------------------------------------------------------------

def test_host_capture_summary_the_bytes_reached_both_layers():
    obs, ser = host_summary()
    devices = dict((d['name'], d) for d in obs['devices'])
    assert [d['name'] for d in obs['devices']] == ['loop1', 'vda'] and devices['loop1']['layer'] == 2
    # the loop device under ext4 got dd's 32 MiB plus a little journal; vda under the image the same
    for name in ('loop1', 'vda'):
        assert DD_BYTES <= devices[name]['write_bytes'] < DD_BYTES + MiB, devices[name]
        assert devices[name]['write_ios'] > 0 and devices[name]['await_ms'] is not None
        assert 0 <= devices[name]['util_pct_mean'] <= 100
    assert obs['tool'] == parse_pid_io(text('host-dd-ext4-on-loop', 'tool.io'))
    st = parse_pid_stat(text('host-dd-ext4-on-loop', 'tool.stat'))
    ticks = st['utime'] + st['stime'] + st['cutime'] + st['cstime']
    assert obs['cpu']['tool_cpu_s'] == round(ticks / 100.0, 2)
    assert obs['cpu']['cores'] == 2 and 0 <= obs['cpu']['busy_pct_mean'] <= 100
    assert obs['samples'] == 2 and obs['window_s'] == round(meta('host-dd-ext4-on-loop')['window_s'], 3)
    assert set(obs['psi']) == {'cpu_some_pct', 'cpu_full_pct', 'io_some_pct', 'io_full_pct', 'memory_some_pct',
                               'memory_full_pct'}
    assert obs['memory']['dirty_end_bytes'] >= 0 and 'cached_delta_bytes' in obs['memory']
    # the series: one interval, its write rate is the same bytes over the window
    window = meta('host-dd-ext4-on-loop')['window_s']
    w = ser['devices']['loop1']['write_mbs'][0]
    assert w == round(devices['loop1']['write_bytes'] / 1e6 / window, 2)
    assert ser['t'] == [0.0, round(window, 3)] and len(ser['cpu']['busy_pct']) == 1


def test_lxcfs_capture_summary_has_the_containers_one_cpu():
    m = meta('lxc-lxcfs-dd')
    samples = [sample('lxc-lxcfs-dd', 'before', 0.0, ['vda']), sample('lxc-lxcfs-dd', 'after', m['window_s'], ['vda'])]
    layers = [{'layer': 0, 'name': '/var/tmp/x', 'kind': 'path', 'above': None},
              {'layer': 1, 'name': '/', 'kind': 'filesystem', 'above': '/var/tmp/x', 'major_minor': '254:0'},
              {'layer': 2, 'name': 'vda', 'kind': 'disk', 'above': '/', 'major_minor': '254:0'}]
    obs, _ser = summarize(samples, layers, 1.0, m['clk_tck'], tool=tool_totals('lxc-lxcfs-dd'))
    assert obs['cpu']['cores'] == 1
    assert obs['devices'][0]['write_bytes'] >= DD_BYTES


def test_observer_names_what_an_lxcfs_container_hides(tmp_path):
    """The Observer over a /proc made of the lxcfs capture: what it shows virtualised is listed."""
    root = tmp_path / 'root'
    proc = root / 'proc'
    (proc / 'self').mkdir(parents=True)
    (proc / 'net').mkdir()
    (proc / 'pressure').mkdir()
    src = FIXTURES / 'lxc-lxcfs-dd' / 'before'
    for name, dest in (('diskstats', 'diskstats'), ('stat', 'stat'), ('meminfo', 'meminfo'), ('net_dev', 'net/dev'),
                       ('mountinfo', 'self/mountinfo'), ('pressure_cpu', 'pressure/cpu'), ('pressure_io', 'pressure/io'),
                       ('pressure_memory', 'pressure/memory')):
        shutil.copy(str(src / name), str(proc / dest))
    (root / 'sys').mkdir()
    layers = [{'layer': 0, 'name': 'vda', 'kind': 'disk', 'above': None, 'major_minor': '254:0'},
              {'layer': 1, 'name': 'sdz', 'kind': 'disk', 'above': 'vda', 'major_minor': '8:400'}]
    obs = Observer(0, layers, interfaces=['eth9'], root=str(root))
    obs.start()
    summary, ser = obs.stop()
    missing = [(m['source'], m.get('what')) for m in summary['missing']]
    assert ('/proc/diskstats', 'sdz') in missing and ('/proc/net/dev', 'eth9') in missing
    assert ('/proc/stat', None) in missing and ('/proc/meminfo', None) in missing
    assert all('virtualised (lxcfs)' in m['why'] for m in summary['missing'] if m['source'].startswith('/proc/')
               and m.get('what') is None)
    assert summary['cpu']['cores'] == 1 and [d['name'] for d in summary['devices']] == ['vda']
    # the same /proc without pressure: named too
    shutil.rmtree(str(proc / 'pressure'))
    obs = Observer(0, layers, root=str(root))
    obs.start()
    assert ('/proc/pressure', None) in [(m['source'], m.get('what')) for m in obs.stop()[0]['missing']]


# ---- the TCG guest's capture (Debian 12 cloud kernel, 1 vCPU, tests/unit/fixtures/observe/README.md) ---------

TCG = 'tcg-dd-ext4-on-lvm-on-loop'
TCG_BYTES = 16 * MiB


def tcg_stack():
    """The layer stack of the path dd wrote, as the resolver gave it live in the same guest
    (tests/unit/fixtures/layers/tcg-guest.json, captured right after this window)."""
    layers = json.loads((FIXTURES.parent / 'layers' / 'tcg-guest.json').read_text())['meta']['stacks']
    return layers[meta(TCG)['path']]


def test_the_tcg_guests_files_parse():
    m = meta(TCG)
    assert m['rc'] == 0 and m['missing'] == [] and m['kernel'] == '6.1.0-50-cloud-amd64'
    assert m['path_st_dev'] == '252:0'                      # the path is on the LVM volume (dm-0)
    for which in ('before', 'after'):
        d = FIXTURES / TCG / which
        disks = parse_diskstats((d / 'diskstats').read_text())
        assert {'vda', 'vdb', 'vdb1', 'loop3', 'dm-0', 'md127', 'drbd90'} <= set(disks)
        assert sorted(parse_cpu_stat((d / 'stat').read_text())) == ['cpu', 'cpu0']    # -smp 1
        assert set(parse_meminfo_keys((d / 'meminfo').read_text())) == {'Dirty', 'Writeback', 'Cached'}
        assert sorted(parse_net_dev((d / 'net_dev').read_text())) == ['eth0', 'lo']
        for r in ('cpu', 'io', 'memory'):                   # this kernel has PSI, and it is on
            assert set(parse_pressure((d / ('pressure_%s' % r)).read_text())) == {'some', 'full'}
    io = parse_pid_io(text(TCG, 'tool.io'))
    assert io['wchar'] == TCG_BYTES and io['write_bytes'] == TCG_BYTES
    assert parse_pid_stat(text(TCG, 'tool.stat'))['state'] == 'Z'


def test_the_tcg_guests_bytes_reached_every_layer_down_to_the_virtio_disk():
    m = meta(TCG)
    layers = tcg_stack()
    devices = [l['name'] for l in block_layers(layers)]
    assert devices == ['dm-0', 'loop3', 'vda']
    samples = [sample(TCG, 'before', 0.0, devices), sample(TCG, 'after', m['window_s'], devices)]
    totals = tool_totals(TCG)
    samples[0]['tool'], samples[1]['tool'] = 0, totals['cpu_ticks']
    obs, _ser = summarize(samples, layers, 1.0, m['clk_tck'], tool=totals)
    got = dict((d['name'], (d['kind'], d['layer'], d['write_bytes'])) for d in obs['devices'])
    assert [got[n][:2] for n in devices] == [('dm', 2), ('loop', 3), ('disk', 6)]
    # dd's 16 MiB (fdatasync) through ext4 on the volume, the loop device under it and the virtio disk
    # under its image file: each received them, plus a little journal and meta-data
    for name in devices:
        assert TCG_BYTES <= got[name][2] < TCG_BYTES + MiB, (name, got[name])
    assert obs['cpu']['cores'] == 1 and obs['tool']['write_bytes'] == TCG_BYTES
    # md and DRBD are in diskstats too but not under the path: not watched
    assert 'md127' not in got and 'drbd90' not in got


def test_the_lxc_loop_guests_bytes_reached_its_loop_device():
    """The LXC container on loop storage (tests/unit/fixtures/layers/README.md): its /proc/diskstats is
    the host's, so the loop device under its root shows dd's bytes; below it nothing is watched (the
    stack stops at the image the container cannot see) and the stack says why."""
    cap = 'lxc-loop-dd'
    m = meta(cap)
    assert m['rc'] == 0 and m['missing'] == [] and m['path_st_dev'] == '7:1'
    layers = json.loads((FIXTURES.parent / 'layers' / 'lxc-loop-guest.json').read_text())['meta']['stacks']['/var/tmp']
    devices = [l['name'] for l in block_layers(layers)]
    assert devices == ['loop1']
    samples = [sample(cap, 'before', 0.0, devices), sample(cap, 'after', m['window_s'], devices)]
    totals = tool_totals(cap)
    samples[0]['tool'], samples[1]['tool'] = 0, totals['cpu_ticks']
    obs, _ser = summarize(samples, layers, 1.0, m['clk_tck'], tool=totals)
    assert [(d['name'], d['kind'], d['layer']) for d in obs['devices']] == [('loop1', 'loop', 2)]
    # dd's 16 MiB and more: the root file system had been unpacked into the image right before (its
    # dirty pages and journal went out in the same window, 24.6 MiB in all)
    assert obs['devices'][0]['write_bytes'] >= TCG_BYTES and obs['devices'][0]['write_ios'] > 0, obs['devices']
    assert obs['tool']['write_bytes'] == TCG_BYTES
    assert [l.get('unresolved', '')[:28] for l in obs['stack'] if l['kind'] == 'file'] == ['the file is not visible here']
    assert sorted(parse_cpu_stat(text(cap, 'before/stat'))) == ['cpu', 'cpu0', 'cpu1']    # no lxcfs: the host's


def test_series_merges_intervals_exactly():
    samples = []
    for i in range(11):
        samples.append({'t': float(i), 'disk': {'sda': [0, 0, 0, 0, 0, 0, i * 2048, 0, 0, i * 500, 0]},
                        'cpu': {'cpu': [i * 50, 0, 0, i * 150, 0, 0, 0, 0], 'cpu0': [i * 50, 0, 0, i * 50, 0, 0, 0, 0]},
                        'mem': {'Dirty': i}, 'net': {}})
    full = series(samples)
    assert full['devices']['sda']['write_mbs'] == [1.05] * 10 and full['devices']['sda']['util_pct'] == [50.0] * 10
    merged = series(samples, max_points=4)
    assert merged['t'] == [0.0, 3.0, 6.0, 9.0, 10.0]
    assert merged['devices']['sda']['write_mbs'] == [1.05] * 4       # rates over merged intervals stay exact
    assert merged['cpu']['busy_pct'] == [25.0] * 4


# ---- limited_by ----------------------------------------------------------------------------------

def obs_of(devices=(), tool=None, busy=None, cores=2, net=()):
    cpu = {'cores': cores}
    if tool is not None:
        cpu['tool_cpu_pct'] = tool
    if busy is not None:
        cpu['busy_pct_mean'] = busy
    return {'devices': [dict(name=n, layer=l, util_pct_mean=u) for n, l, u in devices], 'cpu': cpu,
            'net': [dict(name=n, util_pct_mean=u) for n, u in net]}


@pytest.mark.parametrize('observed,expected', [
    # the deepest saturated device holds up the ones above it
    (obs_of([('loop0', 2, 100.0), ('vda', 4, 97.0)], tool=10, busy=30), ('device', 'vda', 97.0, True)),
    (obs_of([('loop0', 2, 100.0), ('vda', 4, 40.0)], tool=10, busy=30), ('device', 'loop0', 100.0, True)),
    # a single-threaded tool at its core's limit comes first
    (obs_of([('vda', 2, 95.0)], tool=99.5, busy=55), ('cpu', 'tool', 99.5, True)),
    # all cores busy, mostly with the tool (4 threads on 2 cores)
    (obs_of([('vda', 2, 20.0)], tool=190, busy=96), ('cpu', 'all cores', 96.0, True)),
    # all cores busy with other work: after a saturated device
    (obs_of([('vda', 2, 93.0)], tool=5, busy=99), ('device', 'vda', 93.0, True)),
    (obs_of([('vda', 2, 30.0)], tool=5, busy=99), ('cpu', 'all cores', 99.0, True)),
    # a link at its rate
    (obs_of([], tool=20, busy=40, net=[('veth0', 95.0)]), ('link', 'veth0', 95.0, True)),
    # nothing saturated: the busiest
    (obs_of([('vda', 2, 45.0)], tool=12, busy=30), ('device', 'vda', 45.0, False)),
])
def test_limited_by(observed, expected):
    got = limited_by(observed)
    assert (got['resource'], got['name'], got['figure'], got['saturated']) == expected and got['unit'] == '%'


def test_limited_by_without_figures():
    assert limited_by(None) is None and limited_by({}) is None and limited_by({'devices': [], 'cpu': {}}) is None


def test_route_interface_of_loopback():
    assert observe.route_interfaces('127.0.0.1') == ['lo']
    assert observe.route_interfaces('no-such-host.invalid') == []


def test_a_cpu_bound_tool_from_its_zombie():
    """bzip2 -9 (host-bzip2): its CPU and its main thread's time on a CPU or waiting for one."""
    m = meta('host-bzip2')
    sched = parse_schedstat(text('host-bzip2', 'tool.schedstat'))
    assert sched and sched[0] > sched[1]
    st = parse_pid_stat(text('host-bzip2', 'tool.stat'))
    assert st['comm'] == 'bzip2'
    tool = {'cpu_ticks': st['utime'] + st['stime'] + st['cutime'] + st['cstime'], 'io': {}, 'sched_ns': sched}
    samples = []
    for which, t in (('before', 0.0), ('after', m['window_s'])):
        d = FIXTURES / 'host-bzip2' / which
        samples.append({'t': t, 'cpu': parse_cpu_stat((d / 'stat').read_text()), 'disk': {}, 'mem': {}, 'net': {}})
    obs, _ser = summarize(samples, [], 1.0, m['clk_tck'], tool=tool)
    assert obs['cpu']['tool_runnable_pct'] == round(min(100.0, sum(sched) / 1e9 / m['window_s'] * 100), 1)
    assert obs['cpu']['tool_runnable_pct'] >= 90 and obs['cpu']['tool_cpu_pct'] >= 90
    assert limited_by(obs)['resource'] == 'cpu' and limited_by(obs)['name'] == 'tool'
    assert parse_schedstat('') is None and parse_schedstat('x y') is None
