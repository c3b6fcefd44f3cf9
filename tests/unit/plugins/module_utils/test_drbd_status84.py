"""DRBD 8.4 state as the in-tree module of Debian's cloud kernel reports it (drbdsetup-84 has no --json):
parse_status_text on real captures from the qemu DRBD test's guests (fixtures/drbd/README.md), the
choice of command by /proc/drbd, settled() for a peer that is gone, the syntax chosen by the module on
disk before it is loaded."""

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_drbdadm
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_status
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_values


def test_an_84_module_is_read_in_text_and_a_9_module_in_json(read_fixture):
    head = read_fixture('drbd/proc-drbd-84.11-head.txt')
    argv, parse = drbd_status.status_argv('/usr/sbin/drbdsetup', 'r0', head)
    assert argv == ['/usr/sbin/drbdsetup', 'status', 'r0', '--verbose', '--statistics']
    assert parse is drbd_status.parse_status_text
    argv, parse = drbd_status.status_argv('drbdsetup', None, 'version: 9.2.4 (api:2/proto:86-122)\n')
    assert argv == ['drbdsetup', 'status', '--json'] and parse is drbd_status.parse_status_json


def test_three_connected_uptodate_resources(read_fixture):
    entries = drbd_status.parse_status_text(read_fixture('drbd/status-84.11-uptodate-all.txt'))
    assert [(e['name'], e['minor'], e['role'], e['disk_state'], e['peer_disk_state'], e['replication'],
             e['connection']) for e in entries] == [
        (n, m, 'Primary', 'UpToDate', 'UpToDate', 'Established', 'Connected') for n, m in (('r0', 0), ('r1', 1), ('r2', 2))]
    assert entries[0]['peers'][0]['role'] == 'Secondary' and entries[0]['out_of_sync_kib'] == 0
    assert drbd_status.settled(entries) == (True, 'UpToDate')


def test_a_resync_is_seen_on_both_sides_and_is_not_settled(read_fixture):
    target = drbd_status.parse_status_text(read_fixture('drbd/status-84.11-synctarget.txt'))[0]
    assert (target['disk_state'], target['replication'], target['sync_percent']) == ('Inconsistent', 'SyncTarget', 5.72)
    assert target['peers'][0]['role'] == 'Primary'
    source = drbd_status.parse_status_text(read_fixture('drbd/status-84.11-syncsource.txt'))[0]
    assert (source['peer_disk_state'], source['replication'], source['out_of_sync_kib']) == \
        ('Inconsistent', 'SyncSource', 27944)
    ok, why = drbd_status.settled([source])
    assert not ok and 'resyncing (SyncSource, 14.62% in sync)' in why


def test_standalone_is_settled_but_a_peer_that_is_gone_is_not(read_fixture):
    alone = drbd_status.parse_status_text(read_fixture('drbd/status-84.11-standalone.txt'))
    assert alone[0]['peers'] == [] and alone[0]['connection'] == 'StandAlone' and drbd_status.settled(alone)[0]
    gone = drbd_status.parse_status_text(read_fixture('drbd/status-84.11-connecting.txt'))
    assert gone[0]['connection'] == 'Connecting' and gone[0]['peers'][0]['disk_state'] == 'DUnknown'
    assert drbd_status.settled(gone) == (False, 'r2/0 peer connection is Connecting (the peer is stopped or unreachable)')


@pytest.mark.parametrize('text, msg', [
    ('', 'empty output'),
    ('  volume:0 minor:0 disk:UpToDate\n', 'before any resource'),
    ('r0 role:Primary\n  volume:x minor:0\n', 'volume:x is not a number'),
    ('r0 role:Primary\n  volume:0 minor:0 disk:UpToDate stray\n', "cannot read 'stray'"),
])
def test_unreadable_status_text_is_named(text, msg):
    with pytest.raises(drbd_values.DrbdParseError, match=msg):
        drbd_status.parse_status_text(text)


def test_the_module_on_disk_chooses_the_syntax_before_it_is_loaded():
    # drbdadm (9.22) hands itself to drbdadm-84 by `modinfo drbd`: the rendered syntax must follow.
    assert drbd_drbdadm.choose_syntax({'utils': '9.22.0', 'kernel': None, 'module': '8.4.11'}) == '8.4'
    assert drbd_drbdadm.choose_syntax({'utils': '9.22.0', 'kernel': None, 'module': None}) == '9'
    assert drbd_drbdadm.choose_syntax({'utils': '9.22.0', 'kernel': '9.2.4', 'module': '8.4.11'}) == '9'
