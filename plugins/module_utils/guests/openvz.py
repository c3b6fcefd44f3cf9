# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""OpenVZ / Virtuozzo containers: the exact command lines, as pure functions.

Two tools are covered:
- legacy OpenVZ (2.6.18/2.6.32 kernels) with ``vzctl`` 4.x: a container has a numeric CTID, a
  config file ``/etc/vz/conf/<CTID>.conf`` (shell ``KEY="value"`` lines) and a layout:
  ``simfs`` (the container's files are a directory on the host's file system) or ``ploop``
  (an image file with its own ext4 inside, the default since vzctl 4.0);
- Virtuozzo 7 / OpenVZ 7 with ``prlctl``: containers are always ploop there (simfs is gone).

The ploop trap (reference/002): ploop skips all-zero blocks, so ``dd if=/dev/zero`` in a
ploop container "writes" far faster than the host: 215 MB/s against 45 MB/s in that thread.
benchlab writes non-zero data by default; a matrix that asks for ``data: zero`` on a ploop cell
is flagged by the ``zero_data``/``zero_elision`` traps of the report. simfs has no such shortcut.

Nothing here runs a command: ``plan()`` compares what is wanted with what exists (parsed from
``vzctl status`` and the container's config, or ``prlctl list --json``) and returns the argv
lists to run, in order. The module runs them (or returns them in check mode).

Ownership (the adoption rule): every container benchlab creates carries the description
``benchlab.bench:<ctid>`` (``vzctl set --description`` writes ``DESCRIPTION="..."`` into the
container's config; ``prlctl set --description`` shows in ``prlctl list --info --json``). An
existing container without that mark is not destroyed, reconfigured (``--ipdel all``,
``--netif_del all``, resources), started, stopped or given keys unless ``adopt`` is true; an
adopted container gets the mark first.

Host keys: a new container's SSH host key (ed25519) is generated on the host, in a directory of
benchlab (``<host_key_dir>/<ctid>/``), and installed into the container's file system (mounted,
before its first start); the role pins the public half in a known_hosts file on the controller.
"""

import json
import os
import re
import shlex

from ansible_collections.benchlab.bench.plugins.module_utils.run.units import UnitError, parse_size

TOOLS = ('vzctl', 'prlctl')
LAYOUTS = ('ploop', 'simfs')
NETWORKS = ('venet', 'veth')
STATES = ('present', 'started', 'stopped', 'absent')
PAGE = 4096

_CTID_RE = re.compile(r'^[0-9]+$')
_NAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$')
_CONF_LINE_RE = re.compile(r'^\s*([A-Z_][A-Z0-9_]*)=(.*)$')


MARK_PREFIX = 'benchlab.bench:'
HOST_KEY = 'ssh_host_ed25519_key'


class OpenVZError(ValueError):
    """A container spec or a tool's output that cannot be used; the message says which part."""


def _size(value, what):
    try:
        return parse_size(value)
    except UnitError as exc:
        raise OpenVZError('%s: %s' % (what, exc))


def _vz_size(value, what):
    """A size as vzctl/prlctl read it: whole MiB/GiB with their suffix ('512M', '10G')."""
    n = _size(value, what)
    if n <= 0:
        raise OpenVZError('%s must be positive, got %r' % (what, value))
    if n % (1024 ** 3) == 0:
        return '%dG' % (n // 1024 ** 3)
    if n % (1024 ** 2) == 0:
        return '%dM' % (n // 1024 ** 2)
    raise OpenVZError('%s must be a whole number of MiB, got %r' % (what, value))


def normalize(spec):
    """Validate a container spec (the module's options) and fill in derived fields.

    Raises OpenVZError naming the option at fault.
    """
    s = dict(spec)
    tool = s.get('tool') or 'vzctl'
    if tool not in TOOLS:
        raise OpenVZError('tool must be one of %s, got %r' % (', '.join(TOOLS), tool))
    s['tool'] = tool
    ctid = str(s.get('ctid') or '')
    if tool == 'vzctl' and not (_CTID_RE.fullmatch(ctid) and 100 < int(ctid) <= 2147483644):
        raise OpenVZError('ctid for vzctl must be a number above 100 (IDs up to 100 are reserved), got %r' % ctid)
    if tool == 'prlctl' and not _NAME_RE.fullmatch(ctid):
        raise OpenVZError('ctid for prlctl must be a container name ([A-Za-z0-9_.-]), got %r' % ctid)
    s['ctid'] = ctid
    layout = s.get('layout') or 'ploop'
    if layout not in LAYOUTS:
        raise OpenVZError('layout must be ploop or simfs, got %r' % layout)
    if tool == 'prlctl' and layout != 'ploop':
        raise OpenVZError('layout simfs needs legacy OpenVZ (vzctl): Virtuozzo/OpenVZ 7 containers are always ploop')
    s['layout'] = layout
    network = s.get('network') or 'venet'
    if network not in NETWORKS:
        raise OpenVZError('network must be venet (routed) or veth (bridged), got %r' % network)
    s['network'] = network
    if network == 'veth' and not s.get('bridge'):
        raise OpenVZError('network veth needs bridge (the host bridge the veth joins)')
    s['ip_address'] = [str(a) for a in (s.get('ip_address') or [])]
    for addr in s['ip_address']:
        if not re.fullmatch(r'[0-9A-Fa-f.:]+(/[0-9]{1,3})?', addr):
            raise OpenVZError('ip_address: not an address: %r' % addr)
    if network == 'venet' and any('/' in a for a in s['ip_address']):
        raise OpenVZError('ip_address: venet addresses are host routes, give them without a prefix')
    for key in ('diskspace', 'ram', 'swap'):
        if s.get(key) not in (None, ''):
            s[key] = _vz_size(s[key], key)
        else:
            s[key] = None
    if s.get('cpus') is not None and int(s['cpus']) < 1:
        raise OpenVZError('cpus must be at least 1')
    s['ifname'] = s.get('ifname') or 'eth0'
    if tool == 'vzctl':
        s['host_ifname'] = s.get('host_ifname') or 'veth%s.0' % ctid
    s['state'] = s.get('state') or 'started'
    if s['state'] not in STATES:
        raise OpenVZError('state must be one of %s' % ', '.join(STATES))
    if s['state'] != 'absent' and not s.get('ostemplate'):
        raise OpenVZError('ostemplate is needed to create a container')
    private_dir = s.get('private_dir')
    if private_dir and not (re.fullmatch(r'/[A-Za-z0-9_.+/-]*', private_dir) and '..' not in private_dir.split('/')):
        raise OpenVZError('private_dir must be an absolute path of letters, digits and _.+/- without "..", got %r'
                          % private_dir)
    s['private_dir'] = private_dir.rstrip('/') or '/' if private_dir else None
    return s


# -- what exists --------------------------------------------------------------------------------

def parse_vzctl_status(text):
    """`vzctl status CTID` -> {'exists': bool, 'mounted': bool, 'running': bool}.

    The line reads e.g. 'CTID 101 exist mounted running' or 'CTID 101 deleted unmounted down'.
    """
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 5 and words[0] in ('CTID', 'VEID'):
            return {'exists': words[2] == 'exist', 'mounted': words[3] == 'mounted', 'running': words[4] == 'running'}
    first = text.strip().splitlines()[0] if text.strip() else '(empty output)'
    raise OpenVZError('vzctl status: cannot read %r' % first)


def parse_vz_conf(text):
    """A vzctl container config (shell KEY="value" lines) -> dict; comments and blanks skipped."""
    conf = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        m = _CONF_LINE_RE.match(line)
        if not m:
            raise OpenVZError('container config: cannot read %r' % line)
        try:
            words = shlex.split(m.group(2), comments=True)
        except ValueError:
            raise OpenVZError('container config: cannot read %r' % line)
        conf[m.group(1)] = ' '.join(words)
    return conf


def _json_list(text, what):
    """prlctl's JSON output as a list of entries (a single object counts as a list of one)."""
    try:
        entries = json.loads(text)
    except ValueError:
        first = text.strip().splitlines()[0] if text.strip() else '(empty output)'
        raise OpenVZError('%s: not JSON: %r' % (what, first))
    if isinstance(entries, dict):
        entries = [entries]
    if not isinstance(entries, list):
        raise OpenVZError('%s: expected a JSON list' % what)
    return entries


def parse_prlctl_list(text, name):
    """`prlctl list --all --json` -> {'exists', 'running'} for the container called name."""
    entries = _json_list(text, 'prlctl list')
    for entry in entries:
        if isinstance(entry, dict) and entry.get('name') == name:
            return {'exists': True, 'running': entry.get('status') == 'running'}
    return {'exists': False, 'running': False}


# -- what the config should say -----------------------------------------------------------------

def expected_conf(spec):
    """The keys of /etc/vz/conf/<CTID>.conf this spec implies, in vzctl 4's suffix notation.

    Values are compared by meaning (conf_differences), not as text: vzctl also writes plain
    numbers (pages for PHYSPAGES/SWAPPAGES, 1 KiB blocks for DISKSPACE).
    """
    s = spec
    conf = {'VE_LAYOUT': s['layout'], 'OSTEMPLATE': s['ostemplate'], 'DESCRIPTION': mark(s)}
    if s.get('diskspace'):
        conf['DISKSPACE'] = '%s:%s' % (s['diskspace'], s['diskspace'])
    if s.get('ram'):
        conf['PHYSPAGES'] = '0:%s' % s['ram']
    if s.get('swap'):
        conf['SWAPPAGES'] = '0:%s' % s['swap']
    if s.get('cpus'):
        conf['CPUS'] = str(int(s['cpus']))
    if s.get('hostname'):
        conf['HOSTNAME'] = s['hostname']
    if s['network'] == 'venet' and s['ip_address']:
        conf['IP_ADDRESS'] = ' '.join(s['ip_address'])
    if s['network'] == 'veth':
        conf['NETIF'] = 'ifname=%s,host_ifname=%s,bridge=%s' % (s['ifname'], s['host_ifname'], s['bridge'])
    if s.get('nameserver'):
        conf['NAMESERVER'] = s['nameserver']
    return conf


def render_conf(conf):
    """Config keys as KEY="value" lines, sorted (the notation of /etc/vz/conf/<CTID>.conf)."""
    return ''.join('%s="%s"\n' % (k, conf[k]) for k in sorted(conf))


def conf_limit_bytes(key, value):
    """The limit (after the colon) of a PHYSPAGES/SWAPPAGES/DISKSPACE value in bytes; None if unlimited."""
    limit = value.split(':')[-1].strip()
    if limit in ('unlimited', '9223372036854775807', '2147483647'):
        return None
    if re.fullmatch(r'[0-9]+', limit):
        return int(limit) * (1024 if key == 'DISKSPACE' else PAGE)
    try:
        return parse_size(limit)
    except UnitError:
        raise OpenVZError('container config: cannot read %s="%s"' % (key, value))


def conf_differences(spec, current):
    """Config keys whose current value means something else than the spec asks, sorted.

    VE_LAYOUT and OSTEMPLATE are not settings that can change (see layout_mismatch); DESCRIPTION is
    the benchlab mark (see is_marked).
    """
    want = expected_conf(spec)
    diff = []
    for key, value in sorted(want.items()):
        if key in ('VE_LAYOUT', 'OSTEMPLATE', 'DESCRIPTION'):
            continue
        have = current.get(key)
        if have is None:
            diff.append(key)
        elif key in ('DISKSPACE', 'PHYSPAGES', 'SWAPPAGES'):
            if conf_limit_bytes(key, have) != conf_limit_bytes(key, value):
                diff.append(key)
        elif key == 'IP_ADDRESS':
            if {a.split('/')[0] for a in have.split()} != {a.split('/')[0] for a in value.split()}:
                diff.append(key)
        elif key == 'NETIF':
            fields = dict(f.split('=', 1) for f in have.split(',') if '=' in f)
            wanted = dict(f.split('=', 1) for f in value.split(','))
            if any(fields.get(k) != v for k, v in wanted.items()):
                diff.append(key)
        elif have != value:
            diff.append(key)
    return diff


# -- the command lines --------------------------------------------------------------------------

def vzctl_create(s):
    argv = ['vzctl', 'create', s['ctid'], '--ostemplate', s['ostemplate'], '--layout', s['layout']]
    if s.get('diskspace'):
        argv += ['--diskspace', s['diskspace']]
    if s.get('config'):
        argv += ['--config', s['config']]
    if s.get('hostname'):
        argv += ['--hostname', s['hostname']]
    if s.get('private_dir'):
        argv += ['--private', '%s/%s' % (s['private_dir'], s['ctid'])]
    return argv


def vzctl_set(s, keys=None):
    """`vzctl set CTID ... --save` for the resources and network; keys limits it to those config keys."""
    want = set(keys) if keys is not None else set(expected_conf(s))
    argv = ['vzctl', 'set', s['ctid']]
    if s.get('ram') and 'PHYSPAGES' in want:
        argv += ['--ram', s['ram']]
    if s.get('swap') and 'SWAPPAGES' in want:
        argv += ['--swap', s['swap']]
    if s.get('cpus') and 'CPUS' in want:
        argv += ['--cpus', str(int(s['cpus']))]
    if s.get('diskspace') and 'DISKSPACE' in want and keys is not None:
        argv += ['--diskspace', s['diskspace']]
    if s.get('hostname') and 'HOSTNAME' in want and keys is not None:
        argv += ['--hostname', s['hostname']]
    if s['network'] == 'venet' and 'IP_ADDRESS' in want:
        if keys is not None:
            argv += ['--ipdel', 'all']
        for addr in s['ip_address']:
            argv += ['--ipadd', addr]
    if s['network'] == 'veth' and 'NETIF' in want:
        if keys is not None:
            argv += ['--netif_del', 'all']
        argv += ['--netif_add', '%s,,%s,,%s' % (s['ifname'], s['host_ifname'], s['bridge'])]
    if s.get('nameserver') and 'NAMESERVER' in want:
        argv += ['--nameserver', s['nameserver']]
    if 'DESCRIPTION' in want:
        argv += ['--description', mark(s)]
    if len(argv) == 3:
        return None
    return argv + ['--save']


def veth_address_argv(s, run_prefix):
    """Inside the container: address and default route of a veth interface (not kept by vzctl)."""
    cmds = []
    for addr in s['ip_address']:
        cmds.append(run_prefix + ['ip', 'addr', 'replace', addr if '/' in addr else addr + '/24', 'dev', s['ifname']])
    cmds.append(run_prefix + ['ip', 'link', 'set', s['ifname'], 'up'])
    if s.get('gateway'):
        cmds.append(run_prefix + ['ip', 'route', 'replace', 'default', 'via', s['gateway']])
    return cmds


def prlctl_create(s):
    argv = ['prlctl', 'create', s['ctid'], '--vmtype', 'ct', '--ostemplate', s['ostemplate']]
    if s.get('private_dir'):
        argv += ['--dst', s['private_dir']]
    return argv


def prlctl_set(s):
    argv = ['prlctl', 'set', s['ctid']]
    if s.get('ram'):
        argv += ['--memsize', str(parse_size(s['ram']) // 1024 ** 2)]
    if s.get('swap'):
        argv += ['--swappages', str(parse_size(s['swap']) // PAGE)]
    if s.get('cpus'):
        argv += ['--cpus', str(int(s['cpus']))]
    if s.get('hostname'):
        argv += ['--hostname', s['hostname']]
    if s['network'] == 'venet':
        for addr in s['ip_address']:
            argv += ['--ipadd', addr]
    if s.get('nameserver'):
        argv += ['--nameserver', s['nameserver']]
    argv += ['--description', mark(s)]
    cmds = [argv]
    if s.get('diskspace'):
        cmds.append(['prlctl', 'set', s['ctid'], '--device-set', 'hdd0', '--size', s['diskspace']])
    if s['network'] == 'veth':
        net = ['prlctl', 'set', s['ctid'], '--device-add', 'net', '--network', s['bridge']]
        for addr in s['ip_address']:
            net += ['--ipadd', addr]
        if s.get('gateway'):
            net += ['--gw', s['gateway']]
        cmds.append(net)
    return cmds


def mark(spec):
    """The description that marks a container as made by benchlab."""
    return MARK_PREFIX + str(spec['ctid'])


def is_marked(spec, description):
    return (description or '').strip() == mark(spec)


def parse_prlctl_info(text, name):
    """`prlctl list --info --json NAME` -> the container's description ('' when it has none)."""
    entries = _json_list(text, 'prlctl list --info')
    for entry in entries:
        if isinstance(entry, dict) and entry.get('Name', entry.get('name')) == name:
            return str(entry.get('Description', entry.get('description')) or '')
    raise OpenVZError('prlctl list --info: no container %r in the output' % name)


def host_key_paths(spec, key_dir):
    """(private, public) paths of the container's SSH host key in benchlab's directory on the host."""
    base = os.path.join(key_dir, str(spec['ctid']), HOST_KEY)
    return base, base + '.pub'


def host_key_argv(spec, key_dir, key_exists, ve_root='/vz/root'):
    """Generate (unless it exists) the host key on the host and install it into the stopped container's
    file system: mount, install private (0600) and public (0644) key, unmount."""
    s = spec
    tool, ctid = s['tool'], s['ctid']
    private, public = host_key_paths(s, key_dir)
    cmds = []
    if not key_exists:
        cmds.append(['install', '-d', '-m', '0700', os.path.dirname(private)])
        cmds.append(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'benchlab-%s' % ctid, '-f', private])
    root = '%s/%s' % (ve_root.rstrip('/'), ctid)
    cmds.append([tool, 'mount', ctid])
    cmds.append(['install', '-D', '-m', '0600', private, '%s/etc/ssh/%s' % (root, HOST_KEY)])
    cmds.append(['install', '-D', '-m', '0644', public, '%s/etc/ssh/%s.pub' % (root, HOST_KEY)])
    cmds.append([tool, 'umount', ctid])
    return cmds


def not_ours(spec, what):
    s = spec
    return ('container %s exists but was not made by benchlab (its description is not the benchlab mark %r): '
            'refusing to %s it. Choose another ctid, or set adopt: true (role: openvz_ct_adopt: true) to take it '
            'over (it is then marked).' % (s['ctid'], mark(s), what))


def plan(spec, current, conf=None, description=None, adopt=False, host_key=None):
    """The argv lists that take the container from current to spec['state'], in order.

    current: {'exists': bool, 'running': bool} (parse_vzctl_status / parse_prlctl_list);
    conf: the parsed /etc/vz/conf/<CTID>.conf of an existing vzctl container (to change only
    what differs; its DESCRIPTION is the mark); description: the description of an existing prlctl
    container (parse_prlctl_info). An existing container without the benchlab mark is refused
    (OpenVZError naming it and the option) unless adopt, which marks it first.
    host_key: {'dir': ..., 'exists': bool, 've_root': ...} to give a container that is created (or an
    adopted one that is not running) benchlab's SSH host key before its first start; None for none.
    An existing container is never re-created: a different layout or template is reported by
    layout_mismatch() instead.
    """
    s = normalize(spec)
    tool, ctid, state = s['tool'], s['ctid'], s['state']
    if description is None and conf is not None:
        description = conf.get('DESCRIPTION')
    ours = current['exists'] and is_marked(s, description)
    if current['exists'] and not ours and not adopt:
        raise OpenVZError(not_ours(s, 'destroy' if state == 'absent' else 'reconfigure, start or stop'))
    if state == 'absent':
        return _removal(s, current, ours, host_key)
    cmds = []
    running = current['running']
    new_key = False
    if not current['exists']:
        cmds = _creation(s)
        running = False
        new_key = True
    else:
        if not ours:   # adopted: mark it first
            cmds.append(['vzctl', 'set', ctid, '--description', mark(s), '--save'] if tool == 'vzctl'
                        else ['prlctl', 'set', ctid, '--description', mark(s)])
            new_key = not running
        if tool == 'vzctl' and conf is not None:
            step = vzctl_set(s, conf_differences(s, conf))
            if step:
                cmds.append(step)
    if host_key and new_key and state != 'stopped':
        cmds.extend(host_key_argv(s, host_key['dir'], host_key.get('exists', False),
                                  host_key.get('ve_root', '/vz/root')))
    if state == 'started' and not running:
        cmds.append([tool, 'start', ctid])
        if tool == 'vzctl' and s['network'] == 'veth' and s['ip_address']:
            cmds.extend(veth_address_argv(s, ['vzctl', 'exec2', ctid]))
    if state == 'stopped' and running:
        cmds.append([tool, 'stop', ctid])
    return cmds


def _removal(s, current, ours, host_key):
    """Stop and destroy an existing container, then remove the host key benchlab made for it."""
    tool, ctid = s['tool'], s['ctid']
    cmds = []
    if current['exists']:
        if current['running']:
            cmds.append([tool, 'stop', ctid])
        cmds.append([tool, 'destroy' if tool == 'vzctl' else 'delete', ctid])
        if host_key and host_key.get('exists') and ours:
            cmds.append(['rm', '-f'] + list(host_key_paths(s, host_key['dir'])))
    return cmds


def _creation(s):
    """Create the container and set what creating does not."""
    if s['tool'] == 'vzctl':
        step = vzctl_set(s)
        return [vzctl_create(s)] + ([step] if step else [])
    return [prlctl_create(s)] + list(prlctl_set(s))


def layout_mismatch(spec, conf):
    """A message when an existing vzctl container has another layout than asked, else None."""
    s = normalize(spec)
    have = conf.get('VE_LAYOUT', 'simfs')  # vzctl < 4 wrote no VE_LAYOUT: those are simfs
    if have != s['layout']:
        return ('container %s exists with layout %s, not %s: benchlab does not convert layouts '
                '(vzctl convert only goes simfs -> ploop); destroy it or change the matrix' % (s['ctid'], have, s['layout']))
    return None


def container_root(spec, ve_root='/vz/root'):
    """Where a running container's files appear on the host (both layouts mount it there)."""
    s = normalize(spec)
    return '%s/%s' % (ve_root.rstrip('/'), s['ctid'])


def labels(spec):
    """The labels a benchmark record of this container carries."""
    s = normalize(spec)
    return {'platform': 'openvz', 'layout': s['layout'], 'net': s['network'], 'openvz_tool': s['tool']}
