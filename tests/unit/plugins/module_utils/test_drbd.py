# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/drbd/drbd_*.py (values, config, render, secrets, drbdadm, lifecycle, status, signature):
input checks, legacy translation, rendering, argv, and the parsers on real drbdadm / blkid / wipefs / drbdsetup output (tests/unit/fixtures/drbd)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_config
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_drbdadm
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_lifecycle
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_render
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_secrets
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_signature
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_status
from ansible_collections.benchlab.bench.plugins.module_utils.drbd import drbd_values


def reference():
    """The resource of shared/reference/003 (DRBD 0.7 syntax) in the role's variables."""
    return {
        'name': 'drbd0', 'protocol': 'C',
        'incon_degr_cmd': "echo '!DRBD! pri on incon-degr' | wall ; sleep 60 ; halt -f",
        'startup': {'wfc_timeout': 1, 'degr_wfc_timeout': 1},
        'disk_options': {'on_io_error': 'detach'},
        'net': {'max_epoch_size': 8000, 'max_buffers': 10000},
        'syncer': {'rate': '150M', 'al_extents': 521},
        'device': '/dev/drbd0', 'disk': '/dev/hda4', 'meta_disk': '/dev/hda3 [0]',
        'nodes': [{'name': 'node1', 'address': '10.2.0.1:7788'}, {'name': 'node2', 'address': '10.2.0.2:7788'}],
    }


def check(resources, syntax='9'):
    """check_resources with handlers allowed: the reference resource has the 0.7 incon-degr-cmd."""
    return drbd_config.check_resources(resources, syntax, allow_handlers=True)


# ---- input checks -------------------------------------------------------------------------------

@pytest.mark.parametrize('mutate,field,words', [
    (lambda r: r.pop('nodes'), '.nodes', 'needs an `on` section'),
    (lambda r: r['nodes'].pop(), '.nodes', 'only one `on` section (node1)'),
    (lambda r: r.update(protocol='D'), '.protocol', "'D' is not a DRBD protocol (A, B or C)"),
    (lambda r: r['nodes'][1].update(address='10.2.0.1:7788'), 'nodes[1] (node2).address',
     'address clash: 10.2.0.1:7788 is also the address of node node1'),
    (lambda r: r['nodes'][1].update(name='node1'), 'nodes[1] (node1).name', 'two `on node1` sections'),
    (lambda r: r.update(device='/dev/sdb'), '.device', 'not /dev/drbd<minor>'),
    (lambda r: r.update(minor=3), '(drbd0)', 'device /dev/drbd0 and minor 3 disagree'),
    (lambda r: r.pop('disk'), '.disk', 'missing or not a device path'),
    (lambda r: r['nodes'][0].update(address='node1.example:7788'), '.address', 'not an IPv4 address'),
    (lambda r: r['nodes'][0].update(address='10.2.0.1'), '.address', 'has no port'),
    (lambda r: r['nodes'][0].update(address='10.2.0.1:70000'), '.port', 'outside 1-65535'),
    (lambda r: r.update(meta_disk='hda3'), '.meta_disk', "neither 'internal' nor a device"),
    (lambda r: r.update(shared_secret='x'), '.shared_secret', 'without cram_hmac_alg'),
    (lambda r: r['syncer'].update(group=1), '.syncer.group', 'disk_options.resync_after'),
    (lambda r: r['syncer'].update(foo=1), '.syncer.foo', 'no known new place'),
    (lambda r: r['net'].update(on_disconnect='reconnect'), '.net.on_disconnect', 'no replacement'),
    (lambda r: r['disk_options'].update(on_io_error='panic'), '.disk_options.on_io_error', 'call-local-io-error'),
    (lambda r: r['net'].update(protocol='C'), '.net.protocol', 'resource key `protocol`'),
    (lambda r: r['handlers'] if r.update(handlers={'x': 'a"b'}) else None, '.handlers.x', 'a double quote'),
    (lambda r: r.update(name='bad name'), '.name', 'is not a resource name'),
])
def test_broken_inputs_name_the_field(mutate, field, words):
    res = reference()
    mutate(res)
    with pytest.raises(drbd_values.DrbdConfigError) as e:
        check([res], '9')
    assert field in str(e.value) and words in str(e.value), str(e.value)
    assert str(e.value).startswith('drbd_resources[0]')


def test_duplicate_minor_and_address_across_resources():
    a, b = reference(), reference()
    b['name'], b['disk'] = 'drbd1', '/dev/hdb4'
    b['nodes'] = [{'name': 'node1', 'address': '10.2.0.1:7789'}, {'name': 'node2', 'address': '10.2.0.2:7789'}]
    b['meta_disk'] = '/dev/hda3 [1]'
    dup = r'drbd_resources\[1\] \(drbd1\): duplicate minor 0 on node node1: already used by resource drbd0'
    with pytest.raises(drbd_values.DrbdConfigError, match=dup):
        check([a, b])
    b['device'] = '/dev/drbd1'
    b['nodes'][1]['address'] = '10.2.0.2:7788'
    clash = r'address clash: 10.2.0.2:7788 \(node node2\) is already used by resource drbd0'
    with pytest.raises(drbd_values.DrbdConfigError, match=clash):
        check([a, b])
    b['nodes'][1]['address'] = '10.2.0.2:7789'
    b['meta_disk'] = '/dev/hda3 [0]'
    with pytest.raises(drbd_values.DrbdConfigError, match=r'meta-disk /dev/hda3 \[0\] on node node1 is already used'):
        check([a, b])
    b['meta_disk'] = '/dev/hda3 [1]'
    assert [n['name'] for n in check([a, b])] == ['drbd0', 'drbd1']
    b['name'] = 'drbd0'
    with pytest.raises(drbd_values.DrbdConfigError, match='defined twice'):
        check([a, b])


def test_84_refuses_three_nodes_and_mesh_but_9_meshes():
    res = reference()
    res['nodes'].append({'name': 'node3', 'address': '10.2.0.3:7788'})
    with pytest.raises(drbd_values.DrbdConfigError, match="exactly two nodes, 3 given: use drbd_syntax '9'"):
        check([res], '8.4')
    norm = check([res], '9')[0]
    assert norm['connection_mesh'] and [n['node_id'] for n in norm['nodes']] == [0, 1, 2]
    res['nodes'][0]['node_id'] = 5
    with pytest.raises(drbd_values.DrbdConfigError, match='set on some nodes but not this one'):
        check([res], '9')
    for n, i in zip(res['nodes'], (5, 5, 7)):
        n['node_id'] = i
    with pytest.raises(drbd_values.DrbdConfigError, match=r'node_id: 5 is also the node-id of node1'):
        check([res], '9')


# ---- legacy translation and rendering ---------------------------------------------------------------

def test_reference_resource_translates_07_keys():
    norm = check([reference()], '8.4')[0]
    assert norm['sections']['disk'] == {'on-io-error': 'detach', 'resync-rate': '150M', 'al-extents': '521',
                                        'c-plan-ahead': '0'}
    assert norm['sections']['handlers']['pri-on-incon-degr'].startswith('"echo \'!DRBD!')
    assert any('incon-degr-cmd -> handlers pri-on-incon-degr' in n for n in norm['notes'])
    res = reference()
    res['disk_options']['c_plan_ahead'] = 20
    assert check([res])[0]['sections']['disk']['c-plan-ahead'] == '20'
    res['disk_options']['resync_rate'] = '10M'
    with pytest.raises(drbd_values.DrbdConfigError, match='also set as disk.resync-rate'):
        check([res])


def test_render_is_deterministic_and_syntax_specific():
    t9 = drbd_render.render_resource(check([reference()], '9')[0])
    t84 = drbd_render.render_resource(check([reference()], '8.4')[0])
    assert t9 == drbd_render.render_resource(check([reference()], '9')[0])
    assert 'node-id 0;' in t9 and 'node-id' not in t84
    for t in (t9, t84):
        assert '        address ipv4 10.2.0.2:7788;' in t and '        meta-disk /dev/hda3 [0];' in t
        assert '        protocol C;' in t and 'syncer' not in t and 'incon-degr-cmd' not in t
    ipv6 = reference()
    ipv6['nodes'][0]['address'] = '[fd00::1]:7788'
    assert 'address ipv6 [fd00::1]:7788;' in drbd_render.render_resource(check([ipv6])[0])


def test_secret_is_quoted_and_redactable():
    res = reference()
    res.update(shared_secret='my secret', cram_hmac_alg='sha256')
    norm = check([res])[0]
    text = drbd_render.render_resource(norm)
    assert 'shared-secret "my secret";' in text and norm['secrets'] == ['my secret']
    assert 'my secret' not in drbd_secrets.redact(text, norm['secrets'])
    res['shared_secret'] = 'x' * 64
    with pytest.raises(drbd_values.DrbdConfigError, match='63 characters'):
        check([res])


def test_the_secrets_of_an_installed_file_are_found_for_masking():
    """A diff shows the installed file: its old secret must be masked although the input no longer has it."""
    res = reference()
    res.update(shared_secret='old one', cram_hmac_alg='sha256')
    text = drbd_render.render_resource(check([res])[0])
    found = drbd_secrets.config_secrets(text + 'resource r2 { net { shared-secret plain-2; } }\n')
    assert 'old one' in found and 'plain-2' in found
    assert 'old' not in drbd_secrets.redact(text, found).split('shared-secret', 1)[1].split(';')[0]
    assert drbd_secrets.config_secrets('net { cram-hmac-alg sha1; }') == []


# ---- version and validator ----------------------------------------------------------------------------

def test_version_and_syntax(read_fixture):
    v = drbd_drbdadm.parse_version(read_fixture('drbd/drbdadm-9.22-version.txt'))
    assert v == {'utils': '9.22.0', 'kernel': None, 'api': '2'}
    assert drbd_drbdadm.parse_version(read_fixture('drbd/drbdadm-84-9.22-version.txt'))['api'] == '1'
    assert drbd_drbdadm.choose_syntax(v) == '9' and drbd_drbdadm.choose_syntax(v, '8.4') == '8.4'
    assert drbd_drbdadm.choose_syntax({'utils': '9.22.0', 'kernel': '8.4.11'}) == '8.4'
    assert drbd_drbdadm.choose_syntax({'utils': '8.4.4', 'kernel': None}) == '8.4'
    with pytest.raises(drbd_values.DrbdConfigError, match='too old'):
        drbd_drbdadm.choose_syntax({'utils': '8.3.13', 'kernel': None})
    with pytest.raises(drbd_values.DrbdParseError, match="'garbage'"):
        drbd_drbdadm.parse_version('garbage\n')


def test_validator_argv():
    v9 = {'utils': '9.22.0'}
    argv = drbd_drbdadm.validator_argv('9', v9, 'drbdadm', '/lib/drbd/drbdadm-84', '/t/r.res', '/etc/drbd.conf',
                                       '/etc/drbd.d/r.res')
    assert argv == ['drbdadm', '-c', '/etc/drbd.conf', '-t', '/t/r.res', '-E', '/etc/drbd.d/r.res', 'sh-nop']
    assert drbd_drbdadm.validator_argv('9', v9, 'drbdadm', None, '/t/r.res') == ['drbdadm', '-c', '/t/r.res', 'sh-nop']
    assert drbd_drbdadm.validator_argv('8.4', v9, 'drbdadm', '/lib/drbd/drbdadm-84', '/t/r.res', '/etc/drbd.conf') == [
        '/lib/drbd/drbdadm-84', '-c', '/t/r.res', 'sh-nop']
    assert drbd_drbdadm.validator_argv('8.4', {'utils': '8.4.4'}, 'drbdadm', None, '/t/r.res')[0] == 'drbdadm'
    with pytest.raises(drbd_values.DrbdConfigError, match='drbdadm-84'):
        drbd_drbdadm.validator_argv('8.4', v9, 'drbdadm', None, '/t/r.res')


@pytest.mark.parametrize('name,line,words', [
    ('drbdadm-9.22-bad-protocol.stderr', 2, "Parse error: while parsing value ('D') for protocol. Value is not valid."),
    ('drbdadm-9.22-duplicate-minor.stderr', 0, "conflicting use of device-minor 'device-minor:a:1'"),
    ('drbdadm-9.22-address-clash.stderr', 0, 'ipv4:10.1.1.31:7789 is used for both endpoints'),
    ('drbdadm-9.22-duplicate-node-id.stderr', 3, "conflicting use of node-id 'r0:0'"),
    ('drbdadm-9.22-reference-0.7-config.stderr', 3, "but got 'incon-degr-cmd'"),
    ('drbdadm-84-9.22-reference-0.7-config.stderr', 3, "but got 'incon-degr-cmd'"),
])
def test_drbdadm_errors_are_read(read_fixture, name, line, words):
    text = read_fixture('drbd/' + name)
    errors = drbd_drbdadm.parse_drbdadm_errors(text)
    assert errors and errors[0]['line'] == line and words in errors[0]['message'], errors
    assert not any('modinfo' in e['message'] for e in errors)
    src = read_fixture('drbd/inputs/' + errors[0]['file'].rsplit('/', 1)[-1])
    msg = drbd_drbdadm.describe_errors(errors, src, '/etc/drbd.d/x.res')
    assert '/etc/drbd.d/x.res' in msg and words in msg
    if line:
        assert '[line %d: %s]' % (line, src.splitlines()[line - 1].strip()) in msg


# ---- lifecycle -------------------------------------------------------------------------------------------

def test_step_argv():
    assert drbd_lifecycle.step_argv('up', 'r0') == ['drbdadm', 'up', 'r0']
    assert drbd_lifecycle.step_argv('force-create-md', 'r0', '/usr/sbin/drbdadm', '/etc/drbd.conf') == [
        '/usr/sbin/drbdadm', '-c', '/etc/drbd.conf', 'create-md', '--force', 'r0']
    assert drbd_lifecycle.step_argv('skip-initial-sync', 'r0') == ['drbdadm', 'new-current-uuid', '--clear-bitmap', 'r0']
    assert drbd_lifecycle.step_argv('force-primary', 'r0') == ['drbdadm', 'primary', '--force', 'r0']
    # `-- --force`: drbdadm-84 rejects `wipe-md --force` (seen in the qemu DRBD guests); both drbdadm 9.22 and
    # drbdadm-84 -d print `drbdmeta <minor> v0x <disk> <idx> wipe-md --force` for this form
    assert drbd_lifecycle.step_argv('wipe-md', 'r0') == ['drbdadm', '--', '--force', 'wipe-md', 'r0']
    with pytest.raises(ValueError, match='unknown DRBD lifecycle step'):
        drbd_lifecycle.step_argv('explode', 'r0')


def _state(read_fixture, **changes):
    """The real status fixture, parsed, then changed in memory (a state we have no capture of)."""
    data = json.loads(read_fixture('drbd/status-9.0.16-uptodate.json'))
    for k, v in changes.items():
        if k == 'role':
            data[0]['role'] = v
        elif k == 'disk':
            data[0]['devices'][0]['disk-state'] = v
        elif k == 'peer':
            data[0]['connections'][0]['peer_devices'][0]['peer-disk-state'] = v
        elif k == 'repl':
            data[0]['connections'][0]['peer_devices'][0]['replication-state'] = v
        elif k == 'conn':
            data[0]['connections'][0]['connection-state'] = v
        elif k == 'done':
            data[0]['connections'][0]['peer_devices'][0]['done'] = v
    return drbd_status.parse_status_json(json.dumps(data))[0]


def test_lifecycle_plans(read_fixture):
    primary = _state(read_fixture)
    secondary = _state(read_fixture, role='Secondary')
    fresh = _state(read_fixture, role='Secondary', disk='Inconsistent', peer='Inconsistent')
    assert drbd_lifecycle.lifecycle_plan('up', None) == ['up']
    assert drbd_lifecycle.lifecycle_plan('up', secondary) == []
    assert drbd_lifecycle.lifecycle_plan('primary', None, 'full') == ['up', 'force-primary']
    assert drbd_lifecycle.lifecycle_plan('primary', None, 'skip') == ['up', 'skip-initial-sync', 'primary']
    assert drbd_lifecycle.lifecycle_plan('primary', fresh, 'full') == ['force-primary']
    assert drbd_lifecycle.lifecycle_plan('primary', fresh, 'skip') == ['skip-initial-sync', 'primary']
    assert drbd_lifecycle.lifecycle_plan('primary', fresh, 'none') == ['primary']
    # an established resource is never forced: its data is not brand new
    assert drbd_lifecycle.lifecycle_plan('primary', secondary, 'full') == ['primary']
    assert drbd_lifecycle.lifecycle_plan('primary', primary, 'full') == []
    assert drbd_lifecycle.lifecycle_plan('secondary', primary) == ['secondary']
    assert drbd_lifecycle.lifecycle_plan('secondary', secondary) == []
    assert drbd_lifecycle.lifecycle_plan('disconnected', primary) == ['disconnect']
    standalone = _state(read_fixture, conn='StandAlone', peer='DUnknown', repl='Off')
    assert drbd_lifecycle.lifecycle_plan('disconnected', standalone) == []
    assert drbd_lifecycle.lifecycle_plan('connected', standalone) == ['connect']
    assert drbd_lifecycle.lifecycle_plan('down', primary) == ['down'] and drbd_lifecycle.lifecycle_plan('down', None) == []
    with pytest.raises(ValueError):
        drbd_lifecycle.lifecycle_plan('sideways', None)


def test_dry_run_fixtures_show_what_drbdadm_expands_up_into(read_fixture):
    """The drbdsetup sequence behind `drbdadm up` (drbdadm -d, real output) for both syntaxes."""
    nine = [line.split()[:2] for line in read_fixture('drbd/drbdadm-9.22-dry-run-up.txt').splitlines()]
    assert [c[1] for c in nine] == ['new-resource', 'new-minor', 'new-peer', 'new-path', '1', 'attach', 'connect']
    eight = read_fixture('drbd/drbdadm-84-9.22-dry-run-up.txt')
    assert '--shared-secret=s3cr3t' in eight  # drbdadm -d prints the secret: drbd_lifecycle masks it
    assert [line.split()[1] for line in eight.splitlines()] == ['new-resource', 'new-minor', '0', 'attach', 'connect']


# ---- status ---------------------------------------------------------------------------------------------

def test_parse_status_json_real_fixture(read_fixture):
    text = read_fixture('drbd/status-9.0.16-uptodate.json')
    entries = drbd_status.parse_status_json(text)
    raw = json.loads(text)
    assert len(entries) == len(raw[0]['devices'])
    e = entries[0]
    assert (e['name'], e['role'], e['minor']) == (raw[0]['name'], raw[0]['role'], raw[0]['devices'][0]['minor'])
    assert (e['disk_state'], e['peer_disk_state'], e['replication'], e['connection']) == (
        'UpToDate', 'UpToDate', 'Established', 'Connected')
    assert e['peers'][0]['name'] == raw[0]['connections'][0]['name'] and e['sync_percent'] is None
    assert drbd_status.settled(entries) == (True, 'UpToDate')


def test_status_states_the_trap_must_see(read_fixture):
    sync = _state(read_fixture, peer='Inconsistent', repl='SyncSource', done=42.5)
    assert (sync['peer_disk_state'], sync['replication'], sync['sync_percent']) == ('Inconsistent', 'SyncSource', 42.5)
    ok, why = drbd_status.settled([sync])
    assert not ok and 'resyncing (SyncSource, 42.5% in sync)' in why
    target = _state(read_fixture, disk='Inconsistent', repl='SyncTarget')
    assert drbd_status.settled([target]) == (False, 'beijing/0 disk is Inconsistent')
    standalone = _state(read_fixture, conn='StandAlone', peer='DUnknown', repl='Off')
    assert (standalone['peer_disk_state'], standalone['replication'], standalone['connection']) == (
        None, None, 'StandAlone')
    assert drbd_status.settled([standalone])[0]


@pytest.mark.parametrize('text,words', [
    ('', 'empty output'),
    ('garbage here\n', "'garbage here'"),
    ('[\n{\n  "name": "r0",\n', 'not JSON'),
    ('{"name": "r0"}', 'expected a list'),
    ('[{"role": "Primary"}]', 'without a name'),
])
def test_parse_status_json_errors(text, words):
    with pytest.raises(drbd_values.DrbdParseError) as e:
        drbd_status.parse_status_json(text)
    assert words in str(e.value) and 'drbdsetup status --json' in str(e.value)


# ---- signatures -------------------------------------------------------------------------------------------

@pytest.mark.parametrize('kind,verdict,words', [
    ('empty', 'empty', 'no signature'),
    ('ext4', 'other', 'ext4 at offset 0x438'),
    ('drbd', 'drbd', 'DRBD meta-data v09'),
])
def test_signature_verdict(read_fixture, kind, verdict, words):
    blkid = drbd_signature.parse_blkid_export(read_fixture('drbd/blkid-2.38-%s.txt' % kind))
    sigs = drbd_signature.parse_wipefs_json(read_fixture('drbd/wipefs-2.38-%s.json' % kind))
    assert drbd_signature.signature_verdict(blkid, sigs) == (verdict, words) or words in drbd_signature.signature_verdict(blkid, sigs)[1]
    assert drbd_signature.signature_verdict(blkid, sigs)[0] == verdict


def test_signature_parsers_refuse_garbage():
    with pytest.raises(drbd_values.DrbdParseError, match="'not json'"):
        drbd_signature.parse_wipefs_json('not json')
    with pytest.raises(drbd_values.DrbdParseError, match='no "signatures" list'):
        drbd_signature.parse_wipefs_json('{"x": 1}')
    with pytest.raises(drbd_values.DrbdParseError, match="cannot read 'what is this'"):
        drbd_signature.parse_blkid_export('what is this')
    assert drbd_signature.signature_verdict({'PTTYPE': 'gpt'}, [])[0] == 'other'


def test_normalize_does_not_mutate_input():
    res = reference()
    before = copy.deepcopy(res)
    check([res], '8.4')
    assert res == before


# ---- input is data, never syntax: the hostile DRBD corpus (fixtures/hostile/drbd.yml) -------------------

HOSTILE = yaml.safe_load((Path(__file__).resolve().parents[2] / 'fixtures' / 'hostile' / 'drbd.yml').read_text())


def hostile_resources(case):
    """The case's resource list: `resources`, or the corpus' base with `set` applied (null deletes)."""
    if 'resources' in case:
        return copy.deepcopy(case['resources'])
    res = copy.deepcopy(HOSTILE['base'])
    for path, value in case['set'].items():
        parts = path.split('.')
        target = res
        for p in parts[:-1]:
            target = target[int(p)] if isinstance(target, list) else target[p]
        if value is None:
            target.pop(parts[-1], None)
        else:
            target[parts[-1]] = value
    return [res]


def test_the_hostile_drbd_corpus_is_large_and_unique():
    ids = [c['id'] for c in HOSTILE['cases']]
    assert len(ids) >= 12 and len(set(ids)) == len(ids)
    # the base itself is valid: every refusal below comes from the case's change
    assert drbd_config.check_resources([HOSTILE['base']])[0]['name'] == 'r0'


@pytest.mark.parametrize('case', HOSTILE['cases'], ids=[c['id'] for c in HOSTILE['cases']])
def test_hostile_drbd_input_is_refused_naming_the_field(case):
    resources = hostile_resources(case)
    syntax, allow = case.get('syntax', '9'), case.get('allow_handlers', False)
    with pytest.raises(drbd_values.DrbdConfigError) as e:
        drbd_config.check_resources(resources, syntax, allow_handlers=allow)
    msg = str(e.value)
    assert msg.startswith(case['expect'][0]), msg
    for part in case['expect']:
        assert part in msg, (part, msg)
    assert '\n' not in msg.split(': ', 1)[0], msg
    for res in resources:
        if res.get('shared_secret'):
            assert res['shared_secret'] not in msg


@pytest.mark.parametrize('name', sorted(drbd_values.KEYWORDS))
def test_no_drbdadm_keyword_is_a_resource_or_node_name(name):
    res = copy.deepcopy(HOSTILE['base'])
    res['name'] = name
    with pytest.raises(drbd_values.DrbdConfigError, match=r'drbd_resources\[0\]\.name'):
        drbd_config.check_resources([res])
    res = copy.deepcopy(HOSTILE['base'])
    res['nodes'][1]['name'] = name
    with pytest.raises(drbd_values.DrbdConfigError, match=r'nodes\[1\]\.name'):
        drbd_config.check_resources([res])


def test_allowed_handlers_are_written_quoted_on_one_line():
    res = copy.deepcopy(HOSTILE['base'])
    res['handlers'] = {'split_brain': '/usr/lib/drbd/notify-split-brain.sh root'}
    with pytest.raises(drbd_values.DrbdConfigError, match='handlers.split_brain: DRBD runs handler commands as root'):
        drbd_config.check_resources([res])
    text = drbd_render.render_resource(drbd_config.check_resources([res], allow_handlers=True)[0])
    assert '        split-brain "/usr/lib/drbd/notify-split-brain.sh root";\n' in text


def test_values_drbdadm_reads_as_one_word_or_a_quoted_path():
    res = copy.deepcopy(HOSTILE['base'])
    res['disk'] = '/dev/disk/by-path/pci-0000:00:1f.2-ata-1'
    res['meta_disk'] = {'device': '/dev/disk/by-id/wwn-0x5000c500a1b2c3d4', 'index': 1}
    res['nodes'][0]['address'] = 'ipv6 [fe80::1%eth0]:7840'
    res['nodes'][1]['address'] = '[fe80::2%eth0]:7840'
    res['disk_options'] = {'resync_after': 'r9/0', 'c_max_rate': '400M', 'disk_flushes': False}
    text = drbd_render.render_resource(drbd_config.check_resources([res])[0], lab='lab-1')
    assert text.startswith('# benchlab.bench managed resource r0; lab=lab-1; do not edit\n')
    for line in ('disk "/dev/disk/by-path/pci-0000:00:1f.2-ata-1";', 'meta-disk /dev/disk/by-id/wwn-0x5000c500a1b2c3d4 [1];',
                 'address ipv6 [fe80::1%eth0]:7840;', 'resync-after r9/0;', 'disk-flushes no;'):
        assert line in text, line


def test_file_marks_and_ownership():
    text = drbd_render.render_resource(drbd_config.check_resources([HOSTILE['base']])[0], lab='lab-a')
    assert drbd_render.file_mark(text) == {'name': 'r0', 'lab': 'lab-a'}
    assert drbd_render.ownership_problem('/x/r0.res', text, 'r0', 'lab-a') is None
    assert 'for lab lab-a, not this lab (lab-b)' in drbd_render.ownership_problem('/x/r0.res', text, 'r0', 'lab-b')
    assert 'of resource r0, not r1' in drbd_render.ownership_problem('/x/r1.res', text, 'r1', 'lab-a')
    hand = 'resource r0 {\n  # benchlab.bench managed resource r0; lab=lab-a; do not edit\n}\n'
    msg = drbd_render.ownership_problem('/x/r0.res', hand, 'r0', 'lab-a', action='remove')
    assert msg.startswith('/x/r0.res exists and was not written by benchlab') and 'adopt: true' in msg \
        and 'refusing to remove it' in msg
    assert drbd_render.ownership_problem('/x/r0.res', hand, 'r0', 'lab-a', adopt=True) is None
    assert drbd_render.ownership_problem('/x/r0.res', None, 'r0', 'lab-a') is None
    legacy = '# Managed by benchlab.bench (role drbd), DRBD 9 syntax. Local changes are overwritten.\nresource r0 {}\n'
    assert drbd_render.file_mark(legacy) == {'name': None, 'lab': None}
    assert drbd_render.ownership_problem('/x/r0.res', legacy, 'r0', 'lab-a') is None


def test_secret_forms_mask_the_prefix_drbdadm_quotes(tmp_path):
    long = 'S3cr3t-' + 'x' * 60
    assert drbd_secrets.secret_forms([long, 'short']) == [long, long[:20], 'short']
    out = "r.res:2: Parse error: while parsing value ('%s...')\nfor shared-secret. Value is too long." % long[:20]
    assert long[:20] not in drbd_secrets.redact_output(out, [long])
    assert drbd_secrets.redact_output('drbdsetup new-peer r 1 --shared-secret=whatever --x', []) == \
        'drbdsetup new-peer r 1 --shared-secret=******** --x'
    # the secrets of the installed configuration, also of a file drbdadm cannot parse, through includes
    (tmp_path / 'd').mkdir()
    (tmp_path / 'd' / 'a.res').write_text('resource a { net { shared-secret "one two"; } }\n')
    (tmp_path / 'd' / 'b.res').write_text('resource b { net { shared-secret three three; } }\n')
    (tmp_path / 'main.conf').write_text('global { usage-count no; }\ninclude "d/*.res";\n')
    assert drbd_secrets.config_files_secrets(str(tmp_path / 'main.conf')) == ['one two', 'three']
    assert drbd_secrets.config_files_secrets(str(tmp_path / 'missing.conf'), [str(tmp_path / 'd')]) == ['one two', 'three']


def test_mount_verdict_compares_major_minor_never_the_source_name():
    mounts = [{'mountpoint': '/srv/b', 'major_minor': '147:3', 'source': '/dev/drbd3', 'fstype': 'ext4'}]
    assert drbd_lifecycle.mount_verdict(mounts, '/srv/b', 3) == ('ours', mounts[0])
    assert drbd_lifecycle.mount_verdict(mounts, '/srv/c', 3) == ('none', None)
    assert drbd_lifecycle.mount_verdict(mounts, '/srv/b', 4)[0] == 'foreign'
    # a tmpfs whose source is named like the DRBD device, mounted over it: the visible one decides
    fake = {'mountpoint': '/srv/b', 'major_minor': '0:61', 'source': '/dev/drbd3', 'fstype': 'tmpfs'}
    assert drbd_lifecycle.mount_verdict(mounts + [fake], '/srv/b', 3) == ('foreign', fake)
