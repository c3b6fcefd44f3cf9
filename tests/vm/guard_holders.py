"""The device guard's holder classes for real, inside a TCG guest (its Debian cloud kernel has
device-mapper, md and DRBD; this machine's kernel has none of them): test_kvm_multi.py runs this play on
its first (routed) guest after its bench.yml runs, so no extra boot.

In the guest, on four loop devices over 24 MiB files of random data (/var/tmp/blh-*.img):
- an md RAID1 mirror of two of them (mdadm --create --assume-clean: no resync writes), random data
  written onto the array;
- an LVM volume group on the third, an 8 MiB logical volume with random data (device-mapper);
- a DRBD 8.4 resource (drbdmeta create-md, drbdadm up: attached, waiting for a peer that never comes)
  on the fourth.
Then benchlab.bench.dd (destructive, force) and benchlab.bench.fio (filename= the device,
destructive, force) run against an md member, the LVM physical volume and the DRBD backing disk, and
must each be refused, naming the holder (md RAID /dev/mdN, device-mapper dm-N (blhvg-lv), DRBD
/dev/drbd90); the sha256 of each member and of the md array and the logical volume (direct reads) are
the same before and after. Then everything is released (drbdadm down, vgchange -an, mdadm --stop) and
dd on the same three members writes: their sha256 change (so the comparison could fail). The loop
devices and files are removed in an `always:` section whatever happened.

Between the refusals and the release, guest_layers.py resolves the layer stacks of these devices (and
of ext4 made on the logical volume) with the guest's own Python.
"""

import guest_layers

SETUP = r'''
set -eu
modprobe loop; modprobe dm_mod; modprobe raid1; modprobe drbd
for n in 1 2 3 4; do
  head -c 25165824 /dev/urandom > /var/tmp/blh-$n.img
  losetup -f --show /var/tmp/blh-$n.img > /var/tmp/blh-$n.dev
done
L1=$(cat /var/tmp/blh-1.dev); L2=$(cat /var/tmp/blh-2.dev); L3=$(cat /var/tmp/blh-3.dev); L4=$(cat /var/tmp/blh-4.dev)
mdadm --create /dev/md/blh --run --assume-clean --level=1 --raid-devices=2 --metadata=1.2 --bitmap=none "$L1" "$L2" >&2
udevadm settle
pvcreate -q -y "$L3" >&2
vgcreate -q blhvg "$L3" >&2
lvcreate -q -y -n lv -L 8M blhvg >&2
udevadm settle
MD=$(readlink -f /dev/md/blh)
dd if=/dev/urandom of="$MD" bs=1M count=8 oflag=direct status=none
dd if=/dev/urandom of=/dev/blhvg/lv bs=1M count=8 oflag=direct status=none
cat > /var/tmp/blh-drbd.conf <<EOF
resource blh {
  device /dev/drbd90 minor 90; disk $L4; meta-disk internal;
  on $(uname -n) { address 127.0.0.1:7990; }
  on blh-peer { address 127.0.0.2:7990; }
}
EOF
drbdmeta --force 90 v08 "$L4" internal create-md 1 < /dev/null >&2
drbdadm -c /var/tmp/blh-drbd.conf up blh >&2
sync
# what holds each member (sysfs), for the test's own record
printf '{"md member": "%s", "md other member": "%s", "md": "%s", "lvm pv": "%s", "lv": "%s", "drbd disk": "%s", ' \
  "$L1" "$L2" "$MD" "$L3" "$(readlink -f /dev/blhvg/lv)" "$L4"
printf '"holders": {"md member": "%s", "lvm pv": "%s", "drbd disk": "%s"}}\n' \
  "$(ls /sys/block/${L1#/dev/}/holders)" "$(ls /sys/block/${L3#/dev/}/holders)" "$(ls /sys/block/${L4#/dev/}/holders)"
'''

RELEASE = r'''
set -u
''' + guest_layers.UNMOUNT + r'''
drbdadm -c /var/tmp/blh-drbd.conf down blh >&2 || true
vgchange -q -an blhvg >&2 || true
mdadm --stop /dev/md/blh >&2 || true
udevadm settle || true
'''

CLEANUP = RELEASE + r'''
vgremove -q -f blhvg >&2 2>/dev/null || true
for n in 1 2 3 4; do
  [ -f /var/tmp/blh-$n.dev ] && losetup -d "$(cat /var/tmp/blh-$n.dev)" 2>/dev/null || true
  rm -f /var/tmp/blh-$n.img /var/tmp/blh-$n.dev
done
rm -f /var/tmp/blh-drbd.conf
rmdir /var/tmp/blh-work 2>/dev/null || true
'''

SHAS = r'''
set -eu
for d in "$@"; do printf '%s ' "$d"; dd if="$d" iflag=direct bs=1M status=none | sha256sum | cut -d' ' -f1; done
'''

MEMBERS = ('md member', 'lvm pv', 'drbd disk')
WATCHED = ('md member', 'md other member', 'md', 'lvm pv', 'lv', 'drbd disk')
EXPECT = {'md member': 'is held by md RAID /dev/md', 'lvm pv': 'is held by device-mapper dm-',
          'drbd disk': 'is held by DRBD /dev/drbd90'}


def play(guest, results):
    """The play (a list of one play) run against `guest`; everything it saw goes to `results` on the
    controller (JSON)."""
    def dd(member, register):
        return {'name': 'dd on the %s' % member, 'benchlab.bench.dd': {
            'path': "{{ blh_devs['%s'] }}" % member, 'size': '4M', 'bs': '1M', 'destructive': True, 'force': True,
            'guards': {'quiesce': False}}, 'register': register, 'ignore_errors': True}

    def fio(member, register):
        return {'name': 'fio on the %s' % member, 'benchlab.bench.fio': {
            'path': '/var/tmp/blh-work', 'rw': 'write', 'size': '4M', 'bs': '64k',
            'options': {'filename': "{{ blh_devs['%s'] }}" % member}, 'destructive': True, 'force': True,
            'guards': {'quiesce': False}}, 'register': register, 'ignore_errors': True}

    def shas(register):
        return {'name': 'sha256 of the devices (%s)' % register, 'register': register, 'changed_when': False,
                'ansible.builtin.command': {'argv': "{{ ['sh', '-c', blh_shas_script, 'blh'] + blh_watched }}"}}

    tasks = [
        {'name': 'md mirror, LVM volume, DRBD device on loop devices', 'ansible.builtin.shell': {
            'cmd': SETUP, 'executable': '/bin/sh'}, 'register': 'blh_setup'},
        {'name': 'the devices', 'ansible.builtin.set_fact': {
            'blh_devs': '{{ blh_setup.stdout | from_json }}',
            'blh_watched': "{{ (blh_setup.stdout | from_json) | dict2items | rejectattr('key', 'equalto', 'holders') "
                           "| map(attribute='value') | list }}"}},
        {'name': 'work directory', 'ansible.builtin.file': {'path': '/var/tmp/blh-work', 'state': 'directory',
                                                            'mode': '0755'}},
        shas('blh_before'),
    ]
    for i, member in enumerate(MEMBERS):
        tasks += [dd(member, 'blh_dd_%d' % i), fio(member, 'blh_fio_%d' % i)]
    tasks += [shas('blh_after')] + guest_layers.tasks()
    tasks += [{'name': 'release the holders', 'ansible.builtin.shell': {'cmd': RELEASE, 'executable': '/bin/sh'},
               'changed_when': True},
              shas('blh_released')]
    tasks += [dict(dd(member, 'blh_written_%d' % i), name='dd on the released %s' % member)
              for i, member in enumerate(MEMBERS)]
    tasks += [shas('blh_written')]
    save = {'name': 'what the guest saw', 'delegate_to': 'localhost', 'ansible.builtin.copy': {
        'dest': str(results), 'mode': '0600', 'content': '{{ %s | to_json }}' % (
            '{"devs": blh_devs, "before": blh_before.stdout, "after": blh_after.stdout, '
            '"released": blh_released.stdout, "written": blh_written.stdout, "layers": blh_layers.layers, '
            '"refused": {%s}, "released_writes": {%s}}' % (
                ', '.join('"%s": {"dd": blh_dd_%d, "fio": blh_fio_%d}' % (m, i, i) for i, m in enumerate(MEMBERS)),
                ', '.join('"%s": blh_written_%d' % (m, i) for i, m in enumerate(MEMBERS))))}}
    tasks.append(save)
    cleanup = {'name': 'release and remove everything', 'changed_when': True,
               'ansible.builtin.shell': {'cmd': CLEANUP, 'executable': '/bin/sh'}}
    return [{'name': 'device guard: holders in a guest', 'hosts': guest, 'gather_facts': False,
             'vars': {'blh_shas_script': SHAS},
             'tasks': [{'name': 'holders', 'block': tasks, 'always': [cleanup]}]}]


def parse_shas(text):
    return dict(line.split() for line in text.splitlines() if line.strip())


def check(results):
    """Assert what play() recorded; returns the figures shown in the test's output."""
    devs = results['devs']
    holders = devs['holders']
    assert holders['md member'].startswith('md') and holders['lvm pv'].startswith('dm-') and \
        holders['drbd disk'] == 'drbd90', holders
    for member in MEMBERS:
        for writer in ('dd', 'fio'):
            res = results['refused'][member][writer]
            assert res.get('failed'), '%s on the %s was not refused: %s' % (writer, member, res)
            assert EXPECT[member] in res['msg'] and 'in use' in res['msg'], (writer, member, res['msg'])
            assert not res.get('bench_result'), (writer, member)
    assert '(blhvg-lv)' in results['refused']['lvm pv']['dd']['msg'], results['refused']['lvm pv']['dd']['msg']
    before, after = parse_shas(results['before']), parse_shas(results['after'])
    watched = [devs[k] for k in WATCHED]
    assert sorted(before) == sorted(watched), (before, watched)
    assert after == before, 'bytes changed under a refused writer: %s' % sorted(
        d for d in before if before[d] != after.get(d))
    # the comparison could fail: released, the same dd writes each member
    released, written = parse_shas(results['released']), parse_shas(results['written'])
    for i, member in enumerate(MEMBERS):
        res = results['released_writes'][member]
        assert not res.get('failed'), (member, res.get('msg'))
        assert written[devs[member]] != released[devs[member]], '%s: nothing written' % member
    return {'refused': 2 * len(MEMBERS), 'holders': holders}
