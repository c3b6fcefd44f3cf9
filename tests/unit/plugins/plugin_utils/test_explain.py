"""plugins/plugin_utils/explain/explain.py: the evidence verdicts per run and per cell, the explained line,
and how the analysis, results.json, results.csv, report.md and report.html carry them.

The observed parts of the records are made from the real capture of a dd run on this machine
(tests/unit/fixtures/observe/host-dd-ext4-on-loop, summarized by module_utils/observe/observe.py) and then
varied where a case needs figures a capture cannot give on demand (a device at 97 %, 7 % steal, a
compressing store): the variations are named in each test. Live runs that cause each verdict on
real storage, CPU and links are in tests/integration/test_explain_live.py."""

import copy
import csv
import io
import json
import re

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import fio_records
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import metric, new_record, validate_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.analysis.analysis import analyze
from ansible_collections.benchlab.bench.plugins.plugin_utils.explain.explain import (
    CSV_COLUMNS, explain_cell, record_figures, run_verdicts, write_figures)
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render import render_markdown
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_csv import render_csv
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.render_html import render_html
from ansible_collections.benchlab.bench.plugins.plugin_utils.report.reports import results_json, results_problems
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.toolinfo import record_direction, record_synced
from ansible_collections.benchlab.bench.tests.unit.plugins.module_utils.test_observe import FIXTURES, host_summary

MiB = 1024 * 1024


def observed(**changes):
    """The real capture's summary (dd 32 MiB onto ext4 on loop1 over an image on vda), changed as asked:
    devices={name: {field: value}} (loop1's bytes are vda's too unless vda is given), cpu={...}, tool={...}, memory={...}, net=[...], host={...}."""
    obs = copy.deepcopy(host_summary()[0])
    obs['series'] = 'a1b2c3d4e5f6'
    devices = changes.pop('devices', None) or {}
    if 'loop1' in devices and 'vda' not in devices:
        # the disk under the loop device's image follows it (its bytes; its utilisation stays)
        devices['vda'] = dict((k, v) for k, v in devices['loop1'].items() if k in ('read_bytes', 'write_bytes'))
    for name, fields in devices.items():
        next(d for d in obs['devices'] if d['name'] == name).update(fields)
    for key in ('cpu', 'tool', 'memory'):
        obs[key].update(changes.pop(key, None) or {})
    obs.update(changes)
    return obs


def rec(value=100.0, obs=None, cell='c1', bench='w', tool='dd', test='write', duration=1.0, **params):
    r = new_record(tool, test, {'throughput': metric(value, 'MB/s')}, labels={'benchmark': bench, 'cell': cell},
                   params=dict(params, guards={}), cmd=['dd'], started='2026-12-04T22:00:00.000Z', duration_s=duration)
    if obs is not None:
        r['observed'] = obs
    r['host'] = 'h'
    return r


def codes(r):
    return [v['code'] for v in run_verdicts(r)]


# ---- per run --------------------------------------------------------------------------------------

def test_the_captured_run_reached_the_disk_and_fires_nothing():
    r = rec(obs=observed())
    assert validate_record(dict((k, v) for k, v in r.items() if k != 'host')) == []
    assert codes(r) == []
    fig = dict(zip(CSV_COLUMNS, record_figures(r)))
    assert fig['device'] == 'loop1' and 1.0 <= fig['bytes_per_byte_written'] < 1.01
    assert fig['bytes_per_byte_read'] is None          # dd wrote; what it read came from /dev/urandom


def test_writes_elided_and_its_control():
    # a compressing store: the loop device (and the disk under it) got 1 MiB of the 32 MiB the tool wrote
    r = rec(obs=observed(devices={'loop1': {'write_bytes': MiB}}))
    (v,) = run_verdicts(r)
    assert v['code'] == 'writes_elided' and v['name'] == 'loop1' and v['figure'] == pytest.approx(1 / 32.0)
    assert v['message'] == '1.0 of 34 MB reached loop1: the storage skipped or compressed them'
    # the missing bytes still dirty in the page cache and the tool did not sync: nothing said
    pending = observed(devices={'loop1': {'write_bytes': MiB}}, memory={'dirty_end_bytes': 31 * MiB})
    assert codes(rec(obs=pending, fdatasync=False)) == []
    # ... but dd synced them (conv=fdatasync): the sync returned with them in the page cache
    (v,) = run_verdicts(rec(obs=pending))
    assert v['code'] == 'not_durable' and v['name'] == 'loop1', v
    assert v['message'] == 'the sync returned with 1.0 of 34 MB on vda: the page cache above loop1 holds the rest'
    # too little written to judge
    small = rec(obs=observed(devices={'loop1': {'write_bytes': 0}}, tool={'write_bytes': 512 * 1024}))
    assert codes(small) == []


def test_write_amplified():
    r = rec(obs=observed(devices={'loop1': {'write_bytes': 70 * MiB}}))
    (v,) = run_verdicts(r)
    assert v['code'] == 'write_amplified' and '2.19 bytes reached loop1 per byte written (2.2x' in v['message']


def test_older_dirty_data_flushed_in_the_window_is_no_amplification():
    """make bench 2026-12-05: bzip2 -9 wrote 4.8 MB (no sync) while 17.8 MB were dirty (its input,
    written before the window); in one run of five the kernel flushed 10.9 MB of that during the
    window, which read as 2.26x amplification. Data dirty at the start may be what was flushed."""
    written = write_figures(observed())[0]
    flushed = observed(devices={'loop1': {'write_bytes': int(2.26 * written)}},
                       memory={'dirty_end_bytes': 4 * written, 'dirty_delta_bytes': written,
                               'writeback_end_bytes': 0, 'writeback_delta_bytes': 0})
    assert codes(rec(obs=flushed)) == []
    # little dirty at the start: the excess is the run's own (journal, meta-data)
    own = observed(devices={'loop1': {'write_bytes': int(2.26 * written)}},
                   memory={'dirty_end_bytes': 2 * MiB, 'dirty_delta_bytes': MiB,
                           'writeback_end_bytes': 0, 'writeback_delta_bytes': 0})
    assert codes(rec(obs=own)) == ['write_amplified']


def test_served_from_cache_and_a_read_from_the_device():
    read = observed(tool={'rchar': 64 * MiB, 'write_bytes': 0, 'wchar': 64 * MiB},
                    devices={'loop1': {'read_bytes': 64 * MiB, 'write_bytes': 0}})
    assert codes(rec(obs=read, test='read')) == []
    cached = observed(tool={'rchar': 64 * MiB, 'write_bytes': 0},
                      devices={'loop1': {'read_bytes': 128 * 1024, 'write_bytes': 0}})
    (v,) = run_verdicts(rec(obs=cached, test='read'))
    assert v['code'] == 'served_from_cache' and v['name'] == 'loop1'
    assert v['message'] == '0.1 of 67 MB came from loop1: served by the page cache above loop1'
    # the loop device delivered them all, the disk under its image none: the page cache of its backing file
    below = observed(tool={'rchar': 64 * MiB, 'write_bytes': 0},
                     devices={'loop1': {'read_bytes': 64 * MiB, 'write_bytes': 0}, 'vda': {'read_bytes': 0}})
    (v,) = run_verdicts(rec(obs=below, test='read'))
    assert v['code'] == 'served_from_cache' and v['name'] == 'vda' and v['figure'] == 0.0
    assert v['message'] == ('0.0 of 67 MB came from vda under loop1: served by the page cache of loop1\'s '
                            'backing file (/var/tmp/observe-capture.img)')
    # a write whose source was read from a tmpfs is no read: nothing about the cache
    assert 'served_from_cache' not in codes(rec(obs=observed(tool={'rchar': 64 * MiB})))


def fio_read(capture, **params):
    """The record of a real fio random read (tests/unit/fixtures/observe/<capture>: fio laid out its
    32 MiB file on ext4 on loop0, then read it for 2 s), parsed from fio's own output, with the
    observer's summary of the /proc files captured around it."""
    (r,) = fio_records((FIXTURES / capture / 'fio.json').read_text(), labels={'benchmark': 'fio-rr', 'cell': 'c1'},
                       params=dict(params, rw='randread', bs='4k', size='32M', guards={}))
    r.update(observed=dict(host_summary(capture, 'loop0')[0], series='f10f10f10f10'), cmd=['fio'],
             started='2026-12-06T16:50:55.000Z', duration_s=2.5)
    assert validate_record(r) == [], validate_record(r)
    return dict(r, host='h')


def test_a_fio_read_is_explained_by_what_it_read_and_the_cache_under_its_loop_device_is_named():
    """fio's O_DIRECT read on ext4 over a loop device without direct I/O: the loop device delivered all
    fio read, the disk under its image a tenth: the page cache of the loop's backing file served the rest."""
    r = fio_read('host-fio-randread-direct', direct=True)
    # what the capture knows: fio wrote its 32 MiB file, then read 494 MiB through loop0
    assert r['observed']['tool']['write_bytes'] >= 32 * MiB and r['observed']['tool']['rchar'] > 400 * MiB
    assert record_direction(r) == 'read'
    ex, flags = explain_cell([r])
    assert ex['written'] is None and ex['read']['device'] == 'loop0' and 0.9 <= ex['read']['ratio'] <= 1.1, ex
    assert [(l['name'], l['where']) for l in ex['read']['layers']] == [('loop0', 'target'), ('vda', 'target')]
    assert 0.1 < ex['read']['layers'][1]['ratio'] < 0.12, ex['read']
    assert '1.00 byte from loop0, 0.11 from vda per byte read: served from cache at vda' in ex['line'], ex['line']
    assert 'per byte written' not in ex['line']
    (v,) = run_verdicts(r)
    assert v['code'] == 'served_from_cache' and v['name'] == 'vda' and 0.1 < v['figure'] < 0.12, v
    assert v['message'] == ('57 of 518 MB came from vda under loop0: served by the page cache of loop0\'s backing '
                            'file (/var/tmp/observe-capture.img)')
    assert [f['code'] for f in flags] == ['served_from_cache']
    assert record_figures(r)[CSV_COLUMNS.index('bytes_per_byte_written')] is None
    assert record_figures(r)[CSV_COLUMNS.index('bytes_per_byte_read')] == ex['read']['ratio']
    assert record_figures(r)[CSV_COLUMNS.index('narrowest_device')] == 'vda'


def test_a_fio_read_the_page_cache_served_is_flagged_at_its_loop_device():
    r = fio_read('host-fio-randread-cached', direct=False, options={'invalidate': '0'})
    # (this VM's hypervisor stole 8 % of the CPU time during the capture: a verdict of its own)
    v = dict((v['code'], v) for v in run_verdicts(r))['served_from_cache']
    # the bytes stopped at the first layer: loop0 delivered 34 MB of 3.6 GB (and the disk none)
    assert v['name'] == 'loop0' and v['figure'] == 0.0, v
    assert v['message'] == '34 of 3599 MB came from loop0: served by the page cache above loop0'
    line = explain_cell([r])[0]['line']
    assert '0.01 bytes from loop0, 0.00 from vda per byte read: served from cache at loop0' in line, line
    assert 'per byte written' not in line


def dd_capture(capture, **params):
    """A dd write record with the observer's summary of a capture (ext4 or btrfs on loop0 over an
    image on vda): tests/unit/fixtures/observe/<capture>."""
    return rec(obs=dict(host_summary(capture, 'loop0')[0], series='d0d0d0d0d0d0'), **params)


def test_zeros_a_compressing_file_system_swallowed_are_elided_at_its_loop_device():
    """btrfs compress-force=zstd on loop0: dd wrote 32 MiB of zeros (conv=fdatasync), loop0 and the
    disk under it got 1.4 MB. Nothing is pending, so it is no cache: the storage compressed them."""
    r = dd_capture('host-dd-btrfs-compress-zeros', data='zero')
    (v,) = run_verdicts(r)
    assert v['code'] == 'writes_elided' and v['name'] == 'loop0' and v['figure'] < 0.05, v
    assert v['message'] == '1.4 of 34 MB reached loop0: the storage skipped or compressed them'


def test_a_sync_that_returned_with_the_data_in_the_page_cache_is_not_durable():
    """dd conv=fdatasync under eatmydata (its fsync/fdatasync do nothing) onto ext4 on loop0: dd's sync
    returned with none of its 32 MiB on loop0 or vda, 34 MB dirty in the page cache."""
    r = dd_capture('host-dd-eatmydata')
    # (with nothing to wait for, dd was busy reading /dev/urandom: 94 % of a core, a verdict of its own)
    assert codes(r) == ['not_durable', 'cpu_bound']
    v = run_verdicts(r)[0]
    assert v['name'] == 'loop0' and v['figure'] == 0.0, v
    assert v['message'] == 'the sync returned with 0.0 of 34 MB on vda: the page cache above loop0 holds the rest'
    ex, flags = explain_cell([r])
    assert ex['line'].endswith('0.00 bytes on loop0, 0.00 on vda per byte written: not durable at loop0'), ex['line']
    assert [f['code'] for f in flags] == ['not_durable', 'cpu_bound']
    # the same bytes without a sync (fdatasync off): a buffered write, nothing to say
    assert codes(dd_capture('host-dd-eatmydata', fdatasync=False)) == ['cpu_bound']
    # the control: dd conv=fdatasync onto ext4 on a loop device, the same stack, without eatmydata
    assert codes(rec(obs=observed())) == [] and record_synced(rec(obs=observed()))


def guest_write(host_devices, dirty_mib=0, kind='libvirt'):
    """A dd write in a guest (the real capture, its loop1 and vda as the guest's own layers) with a
    hypervisor's observation below whose devices under the guest's image got `host_devices` bytes (the
    host's figures are made: no capture of a guest's host is kept)."""
    obs = observed()
    obs['host'] = {'name': 'hv', 'role': 'hypervisor', 'window_s': obs['window_s'],
                   'guest': {'kind': kind, 'name': 'g1'}, 'guest_devices': [n for n, _b in host_devices],
                   'devices': [{'name': n, 'kind': 'disk', 'layer': 3 + i, 'read_bytes': 0, 'write_bytes': b,
                                'util_pct_mean': 10.0} for i, (n, b) in enumerate(host_devices)],
                   'memory': {'dirty_end_bytes': dirty_mib * MiB, 'writeback_end_bytes': 0}}
    return rec(obs=obs)


def test_a_guest_write_the_host_holds_is_named_at_the_host():
    # qemu cache=unsafe: the guest's layers got every byte, the host's disk under the image a tenth
    r = guest_write([('sda', 3 * MiB)], dirty_mib=30)
    (v,) = run_verdicts(r)
    assert v['code'] == 'not_durable' and v['name'] == 'sda', v
    assert v['message'] == ('the sync returned with 3.1 of 34 MB on the host\'s sda: the host under the guest\'s disk '
                            'vda (its page cache of the guest\'s image, or the hypervisor\'s cache mode) holds the rest')
    # the host's disk shared with other work: it counts their bytes too; the narrowest layer, the loop
    # device that holds the guest's image, shows the guest's never got there
    shared_disk = guest_write([('loop7', 0), ('sda', 40 * MiB)], dirty_mib=30)
    (v,) = run_verdicts(shared_disk)
    assert v['code'] == 'not_durable' and v['name'] == 'loop7' and v['figure'] == 0.0, v
    assert 'with 0.0 of 34 MB on the host\'s loop7' in v['message'], v
    ex = explain_cell([r])[0]
    assert [(l['name'], l['where']) for l in ex['written']['layers']] == [
        ('loop1', 'target'), ('vda', 'target'), ('sda', 'hv')], ex['written']
    assert "1.00 byte on loop1, 1.00 on vda, 0.09 on the host's sda per byte written: not durable at sda" in ex['line']
    # cache=none: the host's disk got them all
    assert codes(guest_write([('sda', 33 * MiB)])) == []
    # a container shares its host's kernel: the host's view of its loop device is the same device, once
    shared = guest_write([('loop1', 32 * MiB), ('vda', 32 * MiB)], kind='lxc')
    assert [l['name'] for l in explain_cell([shared])[0]['written']['layers']] == ['loop1', 'vda']
    # a DRBD peer is no layer below
    peer = guest_write([('sda', 0)])
    peer['observed']['host']['role'] = 'drbd_peer'
    assert codes(peer) == [] and 'layers' in explain_cell([peer])[0]['written']


def test_the_html_stack_draws_each_layers_bytes_down_to_the_host():
    """report.html's layer stack: the guest's layers, then the host's device under its disk, each
    device with a bar of its bytes written against the most any layer moved: the host's bar shrinks."""
    from ansible_collections.benchlab.bench.plugins.plugin_utils.report.explain_html import stack_svg
    ex = explain_cell([guest_write([('sda', 3 * MiB)], dirty_mib=30)])[0]
    assert [(l['name'], l.get('host')) for l in ex['stack'] if 'write_bytes' in l] == [
        ('loop1', None), ('vda', None), ('sda', 'hv')], ex['stack']
    svg = stack_svg('c1', ex['stack'])
    widths = [float(w) for w in re.findall(
        r'<rect class="layer-bytes w" x="[0-9.]+" y="[0-9]+" width="([0-9.]+)" height="2"><title>written [^<]+</title>', svg)]
    assert len(widths) == 3 and ', on hv' in svg, svg
    # never the charts' class `bar`, which report.html colours and its test counts
    assert 'class="bar' not in svg
    assert widths[2] == pytest.approx(widths[1] * 3 / 32.05, rel=0.01), widths     # sda: 3 of vda's 32.05 MiB


@pytest.mark.parametrize('tool, test, params, synced', [
    ('dd', 'write', {}, True), ('dd', 'copy', {'fdatasync': True}, True), ('dd', 'write', {'fdatasync': False}, False),
    ('dd', 'read', {}, False),
    ('fio', 'w', {'rw': 'write', 'end_fsync': True}, True), ('fio', 'w', {'rw': 'randwrite', 'end_fsync': False}, False),
    ('fio', 'w', {'rw': 'write', 'options': {'fsync': '1'}}, True), ('fio', 'w', {'rw': 'write', 'options': {'fsync': 0}}, False),
    ('fio', 'j', {'job_file': 'a.fio', 'job_options': {'rw': 'write', 'fdatasync': '8'}}, True),
    ('fio', 'r', {'rw': 'read', 'end_fsync': True}, False),
    ('sysbench', 'seqwr', {'mode': 'seqwr'}, True), ('sysbench', 'seqwr', {'mode': 'seqwr', 'fsync_end': False}, False),
    ('sysbench', 'rndrd', {'mode': 'rndrd'}, False), ('bonnie++', 'bonnie', {}, False), ('nosuchtool', 'x', {}, False),
])
def test_the_tools_unit_says_whether_its_writes_end_with_a_sync(tool, test, params, synced):
    assert record_synced({'tool': tool, 'test': test, 'params': params}) is synced


@pytest.mark.parametrize('tool, test, params, said', [
    ('fio', 'r', {'rw': 'randread'}, 'read'), ('fio', 'r', {'rw': 'read:4k'}, 'read'),
    ('fio', 'w', {'rw': 'randwrite'}, 'write'), ('fio', 'm', {'rw': 'randrw'}, None), ('fio', 't', {'rw': 'trim'}, None),
    ('fio', 'j', {'job_file': 'a.fio', 'job_options': {'rw': 'read'}}, 'read'), ('fio', 'j', {'job_file': 'a.fio'}, None),
    ('sysbench', 'rndrd', {'mode': 'rndrd'}, 'read'), ('sysbench', 'seqrewr', {'mode': 'seqrewr'}, 'write'),
    ('sysbench', 'rndrw', {'mode': 'rndrw'}, None),
    ('dd', 'read', {}, 'read'), ('dd', 'write', {}, 'write'), ('dd', 'copy', {}, None),
    ('ioping', 'read', {}, 'read'), ('ioping', 'write', {'write': True}, 'write'),
    ('bonnie++', 'bonnie', {}, None), ('iperf3', 'tcp', {}, None), ('nosuchtool', 'x', {}, None),
])
def test_the_tools_unit_says_what_a_record_did_to_the_storage(tool, test, params, said):
    assert record_direction({'tool': tool, 'test': test, 'params': params}) == said


def test_device_cpu_link_steal_and_host_busy():
    busy = observed(devices={'vda': {'util_pct_mean': 97.2, 'await_ms': 4.2}})
    (v,) = run_verdicts(rec(obs=busy))
    assert v['code'] == 'device_bound' and v['message'] == 'vda 97 % busy, 4.20 ms per I/O'
    cpu = observed(cpu={'tool_cpu_pct': 99.1})
    assert [(v['code'], v['message']) for v in run_verdicts(rec(obs=cpu))] == [('cpu_bound', 'the tool used 99 % of a core')]
    # under competition: the tool got 61 % of a core but was on one or waiting for one 97 % of the time
    starved = observed(cpu={'tool_cpu_pct': 61.0, 'tool_runnable_pct': 97.0})
    assert [v['message'] for v in run_verdicts(rec(obs=starved))] == [
        'the tool was on a CPU or waiting for one 97 % of the time (it got 61 % of a core)']
    assert codes(rec(obs=observed(cpu={'tool_cpu_pct': 61.0, 'tool_runnable_pct': 70.0}))) == []
    many = observed(cpu={'tool_cpu_pct': 190.0, 'busy_pct_mean': 97.0, 'cores': 2})
    assert run_verdicts(rec(obs=many))[0]['message'] == 'all 2 cores 97 % busy, mostly with the tool'
    others = observed(cpu={'tool_cpu_pct': 5.0, 'busy_pct_mean': 99.0, 'cores': 2})
    assert codes(rec(obs=others)) == []          # busy with others: not_quiet's business, not cpu_bound
    link = observed(net=[{'name': 'veth0', 'rx_bytes': 0, 'tx_bytes': 1, 'mbit_mean': 48.2, 'speed_mbit': None,
                          'rate_mbit': 50.0, 'util_pct_mean': 96.4}])
    assert [v['message'] for v in run_verdicts(rec(obs=link))] == ['veth0 at 48.2 of 50 Mbit/s (96 %)']
    steal = observed(cpu={'steal_pct': 7.3})
    assert [v['message'] for v in run_verdicts(rec(obs=steal))] == ['7.3 % of the CPU time stolen by the hypervisor']
    assert codes(rec(obs=observed(cpu={'steal_pct': 4.9}))) == []
    host = observed(host={'name': 'kvmhost', 'cpu': {'busy_pct_mean': 98.0, 'guest_pct': 3.0}})
    assert [v['message'] for v in run_verdicts(rec(obs=host))] == [
        'the host\'s CPUs 98 % busy, 95 % of them with other work than this guest (its own cgroup 3.0 %, kernel '
        'threads 0.0 %)']
    host_disk = observed(host={'devices': [{'name': 'sdb', 'util_pct_mean': 99.0}, {'name': 'sda', 'util_pct_mean': 99.0}],
                               'guest_devices': ['sda'], 'cpu': {'busy_pct_mean': 20.0}})
    assert [v['message'] for v in run_verdicts(rec(obs=host_disk))] == [
        'the host\'s sdb 99 % busy with other work than this guest']
    assert codes(rec(obs=observed(host={'cpu': {'busy_pct_mean': 95.0, 'guest_pct': 90.0}}))) == []


# ---- per cell -------------------------------------------------------------------------------------

def test_the_cell_limiter_is_what_most_runs_agree_on():
    runs = [rec(obs=observed(devices={'vda': {'util_pct_mean': u}}), duration=d)
            for u, d in ((97.0, 1.0), (95.0, 1.2), (40.0, 0.9))]
    runs[2]['observed']['cpu'].update(tool_cpu_pct=99.0)
    ex, flags = explain_cell(runs)
    assert ex['limiter']['name'] == 'vda' and (ex['limiter']['runs'], ex['limiter']['of']) == (2, 3)
    assert ex['limiter']['figure'] == 96.0
    assert ex['line'].startswith('limited by vda, 96 % busy (2 of 3 runs); 1.00 byte on loop1, 1.00 on vda per byte written')
    assert [f['code'] for f in flags] == ['device_bound', 'cpu_bound']
    assert re.fullmatch(r'vda 97 % busy, [0-9.]+ ms per I/O \(2 of 3 observed runs\)', flags[0]['message'])
    assert flags[1]['message'] == 'the tool used 99 % of a core (1 of 3 observed runs)'
    assert ex['median_series'] == 'a1b2c3d4e5f6' and ex['stack'][2]['name'] == 'loop1'
    assert ex['stack'][2]['write_bytes'] >= 32 * MiB


def test_unobserved_and_imported_cells_say_so():
    assert explain_cell([rec()])[0] == {'line': 'not observed (observation off, or records from before it)',
                                        'observed': 0, 'of': 1}
    imported = rec()
    del imported['cmd'], imported['started']
    assert explain_cell([imported])[0]['line'] == 'imported hand-run results: not observed'


def test_elided_cell_line():
    runs = [rec(obs=observed(devices={'loop1': {'write_bytes': MiB // 2}})) for _i in range(3)]
    ex, _flags = explain_cell(runs)
    assert '0.02 bytes on loop1, 0.02 on vda per byte written: writes elided at loop1' in ex['line']


# ---- the analysis and the reports -------------------------------------------------------------------

def zero_real_records(zero_reached):
    """Zeros (data: zero) significantly faster than real data in the same cell: the inference trap's case."""
    out = []
    for cell in ('base', 'btrfs'):
        for i, v in enumerate((100.0, 101.0, 99.0)):
            out.append(rec(v, cell=cell, bench='dd-real', data='random', obs=observed()))
            zero = observed(devices={'loop1': {'write_bytes': 32 * MiB if zero_reached or cell == 'base' else MiB // 4}})
            out.append(rec(v * (1 if cell == 'base' else 5), cell=cell, bench='dd-zero', data='zero', obs=zero))
    return out


def cell_of(analysis, bench, cell):
    b = next(b for b in analysis['benchmarks'] if b['name'] == bench)
    return next(c for c in b['cells'] if c['cell'] == cell)


def test_evidence_decides_before_the_zero_elision_inference():
    plan = {'baseline': 'base', 'cells': [{'name': 'base'}, {'name': 'btrfs'}]}
    elided = analyze(zero_real_records(zero_reached=False), plan)
    c = cell_of(elided, 'dd-zero', 'btrfs')
    flags = [f['code'] for f in c['flags']]
    assert 'writes_elided' in flags and 'zero_elision' in flags
    # the zeros reached the device: faster, but no storage trick; the evidence says so, the inference is quiet
    reached = analyze(zero_real_records(zero_reached=True), plan)
    c = cell_of(reached, 'dd-zero', 'btrfs')
    assert [f['code'] for f in c['flags'] if f['code'] in ('zero_elision', 'writes_elided')] == []
    assert '1.00 byte on loop1, 1.00 on vda per byte written' in c['explained']['line']
    # the evidence codes' rates over the observed runs
    rates = dict((t['code'], (t['flagged'], t['runs'])) for t in elided['traps'])
    assert rates['writes_elided'] == (3, 12) and rates['device_bound'] == (0, 12)


def test_bonnie_per_char_cpu_and_the_observed_cpu_are_one_flag():
    def bonnie(cpu, tool_cpu):
        r = new_record('bonnie++', 'bonnie', {'seq_output_block': metric(300, 'MB/s'),
                                              'seq_output_char_cpu': metric(cpu, '%', 'lower')},
                       labels={'cell': 'c'}, params={'guards': {}})
        r['observed'] = observed(cpu={'tool_cpu_pct': tool_cpu})
        r['host'] = 'h'
        return r
    a = analyze([bonnie(97, 98.0), bonnie(96, 99.0)])
    (flag,) = [f for f in a['benchmarks'][0]['cells'][0]['flags'] if f['code'] == 'cpu_bound']
    assert 'per-char tests at >= 90% CPU' in flag['message'] and 'observed: the tool used' in flag['message']


def doc_of(records, analysis):
    return dict(run_id='r1', started='2026-12-04T22:00:00Z', finished='2026-12-04T22:01:00Z', status='complete',
                records=records, environment={}, plan=None, analysis=analysis, invalid=[], failed=[])


def test_results_json_csv_and_markdown_carry_the_figures():
    records = zero_real_records(zero_reached=False)
    plan = {'baseline': 'base', 'cells': [{'name': 'base'}, {'name': 'btrfs'}]}
    analysis = analyze(records, plan)
    doc = json.loads(results_json(doc_of(records, analysis)))
    assert results_problems(doc) == []
    row = next(r for r in doc['analysis']['overview'] if r['benchmark'] == 'dd-zero')
    assert row['explained'].endswith('0.01 bytes on loop1, 0.01 on vda per byte written: writes elided at loop1')
    rows = list(csv.DictReader(io.StringIO(render_csv(records, 'r1'))))
    zero_btrfs = [r for r in rows if r['benchmark'] == 'dd-zero' and r['cell'] == 'btrfs']
    assert zero_btrfs and all(r['evidence'] == 'writes_elided' and r['device'] == 'loop1' for r in zero_btrfs)
    assert float(zero_btrfs[0]['bytes_per_byte_written']) == pytest.approx(0.0078, abs=1e-4)
    md = render_markdown(analysis, {'run_id': 'r1'})
    assert '| benchmark | cell | vs | metric | Δ % [95% CI] |' in md and '| verdict | detectable | test | explained |' in md
    explained_rows = [line for line in md.splitlines() if line.startswith('| explained |')]
    assert len(explained_rows) == 2 and 'writes elided' in explained_rows[1]


def test_html_draws_the_stack_and_the_series_and_stays_inert():
    obs = observed()
    obs['stack'][2]['name'] = 'loop1<script>alert(1)</script>'
    records = [rec(obs=obs, cell='c1'), rec(obs=observed(), cell='c2')]
    analysis = analyze(records)
    devices = {'loop1': {'write_mbs': [30.0, 'x'], 'read_mbs': [0.0, 1.0]},
               '<b>vda</b>': {'write_mbs': [1.0, 2.0], 'read_mbs': [0.0, 0.0]}}
    series = {'a1b2c3d4e5f6': {'v': 1, 't': [0.0, 1.0, 2.0], 'devices': devices,
                               'cpu': {'busy_pct': [20.0, 80.0], 'tool_pct': [10.0, 15.5], 'iowait_pct': [0, 0]}}}
    html = render_html(analysis, {'run_id': 'r1'}, series=series)
    assert '<script' not in html and '&lt;script&gt;' in html and '<b>vda' not in html
    assert html.count('<svg class="stack"') == 2 and html.count('<svg class="series"') == 4
    assert len(re.findall(r'<polyline class="line\d"', html)) == 8    # 2 cells x (2 devices + busy + tool)
    assert '<tr class="explained"><th>explained</th>' in html
    assert '<ul class="explained" id="overview-explained">\n<li><strong>w · c2</strong>: ' in html
    # without the stored series: said, not drawn
    bare = render_html(analysis, {'run_id': 'r1'})
    assert '<svg class="series"' not in bare and 'is not in the run directory' in bare


def test_a_drbd_cell_says_what_its_link_toward_the_peer_sent_per_byte_written():
    """The target observes its own links toward its DRBD peers (guards.observe_toward): the bytes the
    busiest one sent per byte the tool wrote, on the target's clock (protocol C/A: about 1; a
    StandAlone resource: about 0). A run without DRBD peers has no such figure."""
    def drbd(sent, other=4096):
        r = rec(obs=observed(net=[{'name': 'eth0', 'tx_bytes': other, 'rx_bytes': 0},
                                  {'name': 'eth1', 'tx_bytes': sent, 'rx_bytes': 0}]))
        r['params']['guards'] = {'observe_toward': ['198.19.79.12']}
        return r
    written = write_figures(observed())[0]
    ex, _flags = explain_cell([drbd(int(written * 1.02)), drbd(int(written * 1.01)), drbd(int(written * 1.05))])
    assert ex['link'] == {'ratio': pytest.approx(1.02, abs=1e-4), 'interface': 'eth1', 'runs': 3}
    assert '1.02 bytes over eth1 toward the DRBD peer per byte written' in ex['line']
    alone, _flags = explain_cell([drbd(1000, other=2000)])
    assert alone['link']['interface'] == 'eth0' and alone['link']['ratio'] < 0.01
    plain = rec(obs=observed(net=[{'name': 'eth0', 'tx_bytes': written, 'rx_bytes': 0}]))
    assert explain_cell([plain])[0]['link'] is None and 'DRBD' not in explain_cell([plain])[0]['line']
