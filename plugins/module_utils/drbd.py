# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DRBD resources as data: input checks, legacy (0.7-era) key translation, rendering in DRBD 8.4
or 9 syntax, the drbdadm argv the role runs, and parsers for what drbdadm/drbdsetup/blkid print.

Input is data, never syntax: every value written into drbd.conf is checked against drbdadm's own
lexer (user/v9 and user/v84 drbdadm_scanner.fl of drbd-utils): an unquoted value is one word of
``[A-Za-z0-9/._-]`` (at most 128 characters), a quoted one (shared secret, handler command, a device
path with ``:``) holds no double quote, backslash or control character (at most 255). Names may not
be drbdadm keywords (``resource``, ``on``, ``volume``, ...) nor ``all`` (drbdadm expands it to every
resource). Nothing here does I/O except config_files_secrets (reads the installed configuration).
"""

import glob
import ipaddress
import json
import os
import re

PROTOCOLS = ('A', 'B', 'C')
SYNTAXES = ('8.4', '9')
MAX_MINOR = 1048575
DRBD_MAJOR = 147
REDACTED = '********'
# drbdadm prints at most this many characters of a value it rejects ("value ('SSSS...') too long").
DRBDADM_VALUE_PREFIX = 20

# drbdadm's unquoted STRING token; resource/node names are such a word starting with a letter or digit.
_TOKEN_RE = re.compile(r'[A-Za-z0-9/._-]{1,128}')
_NAME_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]{0,127}')
_HOST_RE = _NAME_RE
_KEY_RE = re.compile(r'[a-z][a-z0-9-]{0,63}')
_LAB_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]{0,63}')
_PATH_RE = re.compile(r'/[A-Za-z0-9/._:+@=,-]{1,254}')
_FSTYPE_RE = re.compile(r'[a-z0-9]{1,16}')
# what drbdadm's lexer reads as a number or an IPv4 address, not a name
_NUMLIKE_RE = re.compile(r'[0-9]{1,8}[MKGs]?|[0-9]{1,3}(\.[0-9]{1,3}){3}')
_META_RE = re.compile(r'(?P<dev>/[^\s\[\]]+) ?(?:\[(?P<idx>\d{1,5})\])?')
_DEVICE_RE = re.compile(r'/dev/drbd(?P<minor>\d{1,7})')

# drbdadm's keywords (both scanners) and `all`: never a resource or node name, never an option key.
KEYWORDS = frozenset((
    'all', 'on', 'ignore-on', 'stacked-on-top-of', 'floating', 'no', 'net', 'yes', 'ask', 'via', 'skip',
    'disk', 'host', 'hosts', 'port', 'proxy', 'minor', 'inside', 'volume', 'cmd-timeout-short',
    'cmd-timeout-medium', 'cmd-timeout-long', 'syncer', 'device', 'global', 'common', 'options', 'outside',
    'address', 'alternate-link-address', 'startup', 'include', 'handlers', 'connection', 'connection-mesh',
    'minor-count', 'disable-ip-verification', 'dialog-refresh', 'resource', 'meta-disk',
    'flexible-meta-disk', 'node-id', 'usage-count', '_this_host', '_remote_host', '_peer_node_id',
    '_is_standalone', 'template-file', 'path', 'sci', 'ssocks', 'sdp', 'ipv4', 'ipv6', 'none', 'internal'))
# drbdadm-84 also lexes every option name as a keyword: a DRBD 8.4 name may not be one of them.
KEYWORDS_84 = frozenset((
    'size', 'on-io-error', 'fencing', 'max-bio-bvecs', 'disk-timeout', 'read-balancing', 'use-bmbv',
    'disk-barrier', 'disk-flushes', 'disk-drain', 'md-flushes', 'no-disk-barrier', 'no-disk-flushes',
    'no-disk-drain', 'no-md-flushes', 'protocol', 'timeout', 'ko-count', 'ping-int', 'max-buffers', 'sndbuf-size',
    'rcvbuf-size', 'connect-int', 'cram-hmac-alg', 'shared-secret', 'max-epoch-size', 'after-sb-0pri',
    'after-sb-1pri', 'after-sb-2pri', 'rr-conflict', 'ping-timeout', 'unplug-watermark', 'data-integrity-alg',
    'on-congestion', 'socket-check-timeout', 'congestion-fill', 'congestion-extents', 'allow-two-primaries',
    'always-asbp', 'no-tcp-cork', 'tcp-cork', 'discard-my-data', 'rate', 'resync-rate', 'after',
    'resync-after', 'verify-alg', 'csums-alg', 'csums-after-crash-only', 'al-extents', 'al-updates',
    'discard-zeroes-if-aligned', 'cpu-mask', 'use-rle', 'delay-probe-volume', 'delay-probe-interval',
    'c-plan-ahead', 'c-delay-target', 'c-fill-target', 'c-max-rate', 'c-min-rate', 'throttle-threshold',
    'hold-off-threshold', 'on-no-data-accessible', 'wfc-timeout', 'degr-wfc-timeout', 'outdated-wfc-timeout',
    'stacked-timeouts', 'become-primary-on', 'wait-after-sb', 'pri-on-incon-degr', 'pri-lost-after-sb',
    'pri-lost', 'initial-split-brain', 'split-brain', 'outdate-peer', 'fence-peer', 'unfence-peer',
    'local-io-error', 'before-resync-target', 'after-resync-target', 'before-resync-source', 'memlimit',
    'read-loops', 'compression', 'bwlimit', 'plugin', 'out-of-sync'))

# The header line of every .res file benchlab writes: its mark of ownership (DESIGN.md section 6).
HEADER_PREFIX = '# benchlab.bench managed resource '
# Files written before the header carried name and lab (still benchlab's: they said so).
LEGACY_HEADER_PREFIX = '# Managed by benchlab.bench (role drbd)'
_HEADER_RE = re.compile(r'# benchlab\.bench managed resource (?P<name>\S+); lab=(?P<lab>\S+); do not edit\Z')
# Sections the role renders, in this order; resource keys that hold them.
SECTIONS = (('net', 'net'), ('disk', 'disk_options'), ('startup', 'startup'), ('options', 'options'),
            ('handlers', 'handlers'))

# DRBD 0.7/8.3 `syncer { ... }` keys and where DRBD 8.4/9 took them.
SYNCER_MOVED = {
    'rate': ('disk', 'resync-rate'),
    'al-extents': ('disk', 'al-extents'),
    'after': ('disk', 'resync-after'),
    'c-plan-ahead': ('disk', 'c-plan-ahead'),
    'c-fill-target': ('disk', 'c-fill-target'),
    'c-delay-target': ('disk', 'c-delay-target'),
    'c-max-rate': ('disk', 'c-max-rate'),
    'c-min-rate': ('disk', 'c-min-rate'),
    'verify-alg': ('net', 'verify-alg'),
    'csums-alg': ('net', 'csums-alg'),
    'use-rle': ('net', 'use-rle'),
    'cpu-mask': ('options', 'cpu-mask'),
    'on-no-data-accessible': ('options', 'on-no-data-accessible'),
}
SYNCER_REFUSED = {
    'group': ('DRBD 8.x removed sync groups; order resyncs with disk_options.resync_after: <name of the '
              'resource that must sync first> instead'),
}
# Other 0.7-era keys with no modern spelling.
REFUSED = {
    ('net', 'on-disconnect'): ('DRBD 8.0 removed on-disconnect with no replacement: a lost connection is '
                               'retried by connect-int/ping-int; use a fencing policy (disk_options.fencing '
                               'in 8.4, net.fencing in 9) to react to it'),
    ('disk', 'on-io-error', 'panic'): ('on-io-error panic is gone since DRBD 8.0: use on-io-error '
                                       'call-local-io-error with a handlers.local_io_error command'),
}


class DrbdConfigError(ValueError):
    """A resource definition the role refuses; the message names the field."""


class DrbdParseError(ValueError):
    """Output of drbdadm/drbdsetup/blkid/wipefs that could not be read; quotes the first bad line."""


def _first_line(text):
    for line in (text or '').splitlines():
        if line.strip():
            return line.strip()
    return ''


_CHAR_NAMES = {'\n': 'a newline', '\r': 'a carriage return', '\t': 'a tab', ' ': 'a space', '"': 'a double quote',
               "'": 'a quote', '\\': 'a backslash', ';': "';'", '{': "'{'", '}': "'}'", '#': "'#'"}


def _syntax_chars(value):
    """The characters of `value` that drbd.conf would read as syntax, named for a message."""
    found = []
    for c in value:
        if c in _CHAR_NAMES or c.isspace() or ord(c) < 32 or ord(c) == 127:
            name = _CHAR_NAMES.get(c) or 'control character %r' % c
            if name not in found:
                found.append(name)
    return found


def _refuse(where, value, rule):
    """A DrbdConfigError naming the field, the syntax characters found and the rule."""
    bad = _syntax_chars(value) if isinstance(value, str) else []
    shown = value if not isinstance(value, str) or len(value) <= 80 else value[:77] + '...'
    if bad:
        return DrbdConfigError('%s: %r holds drbd.conf syntax (%s), which benchlab never writes: %s'
                               % (where, shown, ', '.join(bad), rule))
    return DrbdConfigError('%s: %r %s' % (where, shown, rule))


def _key(k, where):
    """An option key as drbd.conf spells it (underscores become dashes); refuses anything else."""
    key = str(k).replace('_', '-')
    if not isinstance(k, str) or not _KEY_RE.fullmatch(key):
        raise _refuse('%s.%r' % (where, k), k, 'is not an option name (lower-case letters, digits, _ and -)')
    if key in KEYWORDS:
        raise DrbdConfigError('%s.%s: %r is a drbdadm keyword, not an option of this section' % (where, k, k))
    return key


def _where(index, res=None, field=None):
    name = res.get('name') if isinstance(res, dict) else None
    shown = name if isinstance(name, str) and _NAME_RE.fullmatch(name) else None
    base = 'drbd_resources[%d]' % index + (' (%s)' % shown if shown else '')
    return base + ('.' + field if field else '')


def check_name(value, where, what='resource name', syntax='9'):
    """A resource or node name drbdadm reads as one name: letters, digits, _ . - (starting with a
    letter or digit, at most 128), not a drbdadm keyword nor `all`, not something its lexer reads
    as a number or an address."""
    if not isinstance(value, str) or not _NAME_RE.fullmatch(value):
        raise _refuse(where, value, 'is not a %s (letters, digits, _ . -, starting with a letter or digit, '
                                    'at most 128 characters)' % what)
    low = value.lower()
    if low in KEYWORDS or (syntax == '8.4' and low in KEYWORDS_84):
        why = ('drbdadm expands `all` to every resource of the host' if low == 'all'
               else 'drbdadm reads it as a keyword of drbd.conf')
        raise DrbdConfigError('%s: %r cannot be a %s: %s; choose another name' % (where, value, what, why))
    if _NUMLIKE_RE.fullmatch(value):
        raise DrbdConfigError('%s: %r cannot be a %s: drbdadm reads it as a number or an address'
                              % (where, value, what))
    return value


def check_path(value, where, what='device path'):
    """An absolute device path without drbd.conf syntax or `..` components."""
    if not isinstance(value, str) or not _PATH_RE.fullmatch(value) or '/../' in value + '/' \
            or value.endswith('/..'):
        raise _refuse(where, value, 'is not a %s (an absolute path of letters, digits and / . _ - : + @ = , '
                                    'without .. components)' % what)
    return value


def check_lab(value, where='lab'):
    if not isinstance(value, str) or not _LAB_RE.fullmatch(value):
        raise _refuse(where, value, 'is not a lab name (letters, digits, _ . -, at most 64 characters)')
    return value


def _token_or_quoted(value):
    return value if _TOKEN_RE.fullmatch(value) else '"%s"' % value


def format_value(value, where):
    """An option value as drbd.conf reads it: yes/no for booleans, numbers, or one word of
    letters, digits and / . _ - (drbdadm's unquoted string). Anything else is refused."""
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return ('%g' % value)
    if not isinstance(value, str):
        raise DrbdConfigError('%s: %r is not a string, number or boolean' % (where, value))
    if not _TOKEN_RE.fullmatch(value):
        raise _refuse(where, value, 'an option value is one word of letters, digits and / . _ - '
                                    '(at most 128 characters)')
    return value


def format_quoted(value, where, what='value', limit=255):
    """A free-text value (shared secret, handler command) as a drbd.conf quoted string: one line
    without double quotes, backslashes or control characters, at most `limit` characters."""
    if not isinstance(value, str) or not value:
        raise DrbdConfigError('%s: must be a non-empty string' % where)
    bad = [c for c in value if c in '"\\' or ord(c) < 32 or ord(c) == 127]
    if bad:
        rule = 'a %s is one line without double quotes, backslashes or control characters' % what
        if what == 'shared secret':
            # never the value itself: it is the secret
            raise DrbdConfigError('%s: holds drbd.conf syntax (%s), which benchlab never writes: %s'
                                  % (where, ', '.join(_syntax_chars(value)), rule))
        raise _refuse(where, value, rule)
    if len(value) > limit:
        raise DrbdConfigError('%s: longer than the %d characters drbdadm accepts' % (where, limit))
    return _token_or_quoted(value)


def parse_address(value, port, where):
    """'10.0.0.1:7788' / '[fd00::1]:7788' / 'ipv6 [fd00::1]:7788' / ('10.0.0.1', port) ->
    (family, ip, port). Host names, and anything holding drbd.conf syntax, are refused."""
    if not isinstance(value, str) or not value:
        raise DrbdConfigError('%s.address: missing (an IP address, optionally with :port)' % where)
    family, text = None, value
    for fam in ('ipv4 ', 'ipv6 '):
        if text.startswith(fam):
            family, text = fam.strip(), text[len(fam):]
    if _syntax_chars(text) or not re.fullmatch(r'[0-9A-Za-z.:\[\]%_-]+', text):
        raise _refuse(where + '.address', value, 'is not an address (10.0.0.1:7788, [fd00::1]:7788, '
                                                 'optionally prefixed by ipv4 / ipv6 and one space)')
    ip, p, scope = text, None, None
    if text.startswith('['):
        m = re.fullmatch(r'\[([^\]]+)\](?::(\d{1,5}))?', text)
        if not m:
            raise DrbdConfigError("%s.address: %r is not '[ipv6]:port'" % (where, value))
        ip, p = m.group(1), m.group(2)
        family = family or 'ipv6'
    elif text.count(':') == 1:
        ip, p = text.split(':')
        if not re.fullmatch(r'\d{1,5}', p):
            raise DrbdConfigError('%s.port: %r is not a port number' % (where, p))
    elif text.count(':') > 1:
        family = family or 'ipv6'
    if '%' in ip:
        ip, scope = ip.split('%', 1)
        if not _TOKEN_RE.fullmatch(scope):
            raise DrbdConfigError('%s.address: %r has a bad scope id' % (where, value))
    if p is None:
        p = port
    elif port is not None and str(port) != str(p):
        raise DrbdConfigError('%s: port %s and address %s disagree' % (where, port, value))
    if p is None:
        raise DrbdConfigError('%s.address: %s has no port (write %s:7788 or set port)' % (where, value, value))
    if isinstance(p, bool) or not re.fullmatch(r'\d{1,5}', str(p)):
        raise DrbdConfigError('%s.port: %r is not a port number' % (where, p))
    p = int(p)
    if not 1 <= p <= 65535:
        raise DrbdConfigError('%s.port: %d is outside 1-65535' % (where, p))
    family = family or 'ipv4'
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        addr = None
    if family == 'ipv4' and (addr is None or addr.version != 4):
        raise DrbdConfigError('%s.address: %r is not an IPv4 address (DRBD wants an address, not a host name)'
                              % (where, ip))
    if family == 'ipv6' and (addr is None or addr.version != 6):
        raise DrbdConfigError('%s.address: %r is not an IPv6 address' % (where, ip))
    if scope:
        ip = '%s%%%s' % (ip, scope)
    return family, ip, p


def parse_meta_disk(value, where):
    """'internal' | '/dev/x' | '/dev/x [0]' | {device, index} -> ('internal', None, None) or
    ('external', device, index-or-None)."""
    if value is None or value == 'internal':
        return ('internal', None, None)
    if isinstance(value, dict):
        dev, idx = value.get('device'), value.get('index')
        check_path(dev, where + '.meta_disk.device')
        if idx is not None and (isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx <= 65535):
            raise DrbdConfigError('%s.meta_disk.index: %r is not an index (0, 1, ...)' % (where, idx))
        return ('external', dev, idx)
    if isinstance(value, str):
        m = _META_RE.fullmatch(value)
        if m:
            check_path(m.group('dev'), where + '.meta_disk')
            return ('external', m.group('dev'), int(m.group('idx')) if m.group('idx') is not None else None)
        if _syntax_chars(value.replace(' [', '[')):
            raise _refuse(where + '.meta_disk', value, "is neither 'internal' nor a device such as '/dev/sdb1 [0]'")
    raise DrbdConfigError("%s.meta_disk: %r is neither 'internal' nor a device such as '/dev/sdb1 [0]'"
                          % (where, value))


def _minor(res_or_node, where, inherited=None):
    device, minor = res_or_node.get('device'), res_or_node.get('minor')
    if device is None and minor is None:
        return inherited
    dev_minor = None
    if device is not None:
        m = _DEVICE_RE.fullmatch(device) if isinstance(device, str) else None
        if not m:
            raise _refuse(where + '.device', device, 'is not /dev/drbd<minor>')
        dev_minor = int(m.group('minor'))
        if dev_minor > MAX_MINOR:
            raise DrbdConfigError('%s.device: minor %d is above %d' % (where, dev_minor, MAX_MINOR))
    if minor is not None:
        if isinstance(minor, bool) or not isinstance(minor, int) or not 0 <= minor <= MAX_MINOR:
            raise DrbdConfigError('%s.minor: %r is not a minor number (0-%d)' % (where, minor, MAX_MINOR))
        if dev_minor is not None and dev_minor != minor:
            raise DrbdConfigError('%s: device %s and minor %d disagree' % (where, device, minor))
        return minor
    return dev_minor


HANDLERS_REFUSED = ('DRBD runs handler commands as root through a shell, so benchlab writes them only when '
                    'you allow it: set allow_handlers: true (role: drbd_allow_handlers: true)')


def _options(section, value, where, out, notes, secrets, allow_handlers=False):
    if value is None:
        return
    if not isinstance(value, dict):
        raise DrbdConfigError('%s: must be a mapping of option: value' % where)
    for k, v in value.items():
        key = _key(k, where)
        if section == 'handlers':
            if not allow_handlers:
                raise DrbdConfigError('%s.%s: %s' % (where, k, HANDLERS_REFUSED))
            out.setdefault(section, {})[key] = format_quoted(v, '%s.%s' % (where, k), 'handler command')
            continue
        if section == 'net' and key == 'shared-secret':
            if isinstance(v, str) and v:
                secrets.append(v)
            out.setdefault(section, {})[key] = format_quoted(v, '%s.%s' % (where, k), 'shared secret', 63)
            continue
        refused = REFUSED.get((section, key)) or REFUSED.get((section, key, str(v)))
        if refused:
            raise DrbdConfigError('%s.%s: %s' % (where, k, refused))
        if section == 'net' and key == 'shared-secret':
            secrets.append(str(v))
        if section == 'net' and key == 'protocol':
            raise DrbdConfigError('%s.protocol: set the protocol with the resource key `protocol`' % where)
        out.setdefault(section, {})[key] = format_value(v, '%s.%s' % (where, k))


def normalize_resource(res, index=0, syntax='9', allow_handlers=False):
    """Check one resource definition and return its normalized form (see render_resource).

    Raises DrbdConfigError naming the field for: a missing name, a bad protocol, fewer than two
    `on` sections (nodes), duplicate node names or node-ids, two nodes on one address:port, a bad
    device/minor, a missing backing disk, a secret without cram_hmac_alg, a refused legacy key, and
    any value that is drbd.conf syntax rather than data (see the module docstring). Handlers (and the
    legacy incon_degr_cmd) are shell commands DRBD runs as root: refused unless allow_handlers.
    """
    if syntax not in SYNTAXES:
        raise DrbdConfigError('drbd_syntax: %r is not one of %s' % (syntax, ', '.join(SYNTAXES)))
    if not isinstance(res, dict):
        raise DrbdConfigError('%s: must be a mapping' % _where(index))
    name = check_name(res.get('name'), _where(index) + '.name', 'resource name', syntax)
    where = _where(index, res)
    protocol = res.get('protocol', 'C')
    protocol = protocol.upper() if isinstance(protocol, str) else protocol
    if protocol not in PROTOCOLS:
        raise DrbdConfigError('%s.protocol: %r is not a DRBD protocol (A, B or C)' % (where, res.get('protocol')))
    notes, secrets, sections = [], [], {}
    for section, rkey in SECTIONS:
        _options(section, res.get(rkey), '%s.%s' % (where, rkey), sections, notes, secrets, allow_handlers)

    # Legacy (0.7/8.3) keys: translate where DRBD has a modern spelling, refuse the others.
    syncer = res.get('syncer')
    if syncer is not None:
        if not isinstance(syncer, dict):
            raise DrbdConfigError('%s.syncer: must be a mapping' % where)
        for k, v in syncer.items():
            key = _key(k, where + '.syncer')
            if key in SYNCER_REFUSED:
                raise DrbdConfigError('%s.syncer.%s: %s' % (where, k, SYNCER_REFUSED[key]))
            if key not in SYNCER_MOVED:
                raise DrbdConfigError('%s.syncer.%s: the syncer section is gone since DRBD 8.4 and %s has no '
                                      'known new place: set it in disk_options or net yourself' % (where, k, key))
            section, new = SYNCER_MOVED[key]
            if new in sections.get(section, {}):
                raise DrbdConfigError('%s.syncer.%s: also set as %s.%s; keep only the modern one'
                                      % (where, k, section, new))
            sections.setdefault(section, {})[new] = format_value(v, '%s.syncer.%s' % (where, k))
            notes.append('syncer.%s -> %s %s' % (key, section, new))
            if key == 'rate' and 'c-plan-ahead' not in sections.get('disk', {}) \
                    and not any(str(x).replace('_', '-') == 'c-plan-ahead' for x in syncer):
                # 0.7 synced at a fixed rate; 8.4/9 default to the dynamic controller, which treats
                # resync-rate only as a start value. c-plan-ahead 0 keeps the fixed rate.
                sections['disk']['c-plan-ahead'] = '0'
                notes.append('syncer.rate is a fixed rate: c-plan-ahead 0 added (set disk_options.c_plan_ahead '
                             'to use the dynamic resync controller)')
    incon = res.get('incon_degr_cmd', res.get('incon-degr-cmd'))
    if incon is not None:
        if not allow_handlers:
            raise DrbdConfigError('%s.incon_degr_cmd: %s' % (where, HANDLERS_REFUSED))
        if 'pri-on-incon-degr' in sections.get('handlers', {}):
            raise DrbdConfigError('%s.incon_degr_cmd: also set as handlers.pri_on_incon_degr; keep only that one'
                                  % where)
        sections.setdefault('handlers', {})['pri-on-incon-degr'] = format_quoted(incon, where + '.incon_degr_cmd',
                                                                                 'handler command')
        notes.append('incon-degr-cmd -> handlers pri-on-incon-degr')

    secret = res.get('shared_secret')
    if secret is not None:
        if not isinstance(secret, str) or not secret:
            raise DrbdConfigError('%s.shared_secret: must be a non-empty string' % where)
        secrets.append(secret)
        if 'shared-secret' in sections.get('net', {}):
            raise DrbdConfigError('%s.shared_secret: also set as net.shared_secret; keep only one' % where)
        if len(secret) > 63:
            raise DrbdConfigError('%s.shared_secret: longer than the 63 characters DRBD accepts' % where)
        sections.setdefault('net', {})['shared-secret'] = format_quoted(secret, where + '.shared_secret',
                                                                        'shared secret', 63)
    if res.get('cram_hmac_alg') is not None:
        sections.setdefault('net', {})['cram-hmac-alg'] = format_value(res['cram_hmac_alg'], where + '.cram_hmac_alg')
    net = sections.get('net', {})
    if 'shared-secret' in net:
        if 'cram-hmac-alg' not in net:
            raise DrbdConfigError('%s.shared_secret: set without cram_hmac_alg (e.g. sha256): the peers would '
                                  'not authenticate each other' % where)

    # The `on` sections.
    nodes = res.get('nodes')
    if not isinstance(nodes, list) or not nodes:
        raise DrbdConfigError('%s.nodes: missing: a resource needs an `on` section (a node with name and '
                              'address) for each of its nodes' % where)
    if len(nodes) < 2:
        only = nodes[0].get('name') if isinstance(nodes[0], dict) else nodes[0]
        raise DrbdConfigError('%s.nodes: only one `on` section (%s): add the peer node it replicates to'
                              % (where, only))
    if syntax == '8.4' and len(nodes) > 2:
        raise DrbdConfigError('%s.nodes: DRBD 8.4 replicates between exactly two nodes, %d given: use '
                              "drbd_syntax '9' for more" % (where, len(nodes)))
    res_minor = _minor(res, where)
    res_meta = parse_meta_disk(res.get('meta_disk', 'internal'), where)
    out_nodes, seen_names, seen_ids, seen_addr = [], {}, {}, {}
    for i, node in enumerate(nodes):
        nwhere = '%s.nodes[%d]' % (where, i)
        if not isinstance(node, dict):
            raise DrbdConfigError('%s: must be a mapping with name and address' % nwhere)
        nname = check_name(node.get('name'), nwhere + '.name', "node name (the node's `uname -n`)", syntax)
        nwhere = '%s.nodes[%d] (%s)' % (where, i, nname)
        if nname in seen_names:
            raise DrbdConfigError('%s.name: two `on %s` sections' % (nwhere, nname))
        seen_names[nname] = i
        family, ip, port = parse_address(node.get('address'), node.get('port', res.get('port')), nwhere)
        if (ip, port) in seen_addr:
            raise DrbdConfigError('%s.address: address clash: %s:%d is also the address of node %s'
                                  % (nwhere, ip, port, seen_addr[(ip, port)]))
        seen_addr[(ip, port)] = nname
        minor = _minor(node, nwhere, res_minor)
        if minor is None:
            raise DrbdConfigError('%s: no device/minor (set minor: or device: /dev/drbd<minor> on the resource)'
                                  % nwhere)
        disk = node.get('disk', res.get('disk'))
        if disk is None:
            raise DrbdConfigError('%s.disk: missing or not a device path (the backing disk, e.g. /dev/sdb1)'
                                  % nwhere)
        check_path(disk, nwhere + '.disk' if 'disk' in node else where + '.disk', 'backing disk path')
        meta = parse_meta_disk(node['meta_disk'], nwhere) if 'meta_disk' in node else res_meta
        node_id = node.get('node_id')
        if syntax == '9':
            if node_id is None:
                if any(isinstance(n, dict) and n.get('node_id') is not None for n in nodes):
                    raise DrbdConfigError('%s.node_id: set on some nodes but not this one: give every node one'
                                          % nwhere)
                node_id = i
            if isinstance(node_id, bool) or not isinstance(node_id, int) or not 0 <= node_id <= 31:
                raise DrbdConfigError('%s.node_id: %r is not a node-id (0-31)' % (nwhere, node_id))
            if node_id in seen_ids:
                raise DrbdConfigError('%s.node_id: %d is also the node-id of %s' % (nwhere, node_id, seen_ids[node_id]))
            seen_ids[node_id] = nname
        elif node_id is not None:
            notes.append('node_id of %s ignored: DRBD 8.4 has no node-id' % nname)
            node_id = None
        out_nodes.append({'name': nname, 'family': family, 'ip': ip, 'port': port, 'minor': minor,
                          'disk': disk, 'meta_disk': meta, 'node_id': node_id})
    mesh = res.get('connection_mesh')
    if mesh is None:
        mesh = syntax == '9' and len(out_nodes) > 2
    if mesh and syntax != '9':
        raise DrbdConfigError("%s.connection_mesh: a DRBD 9 feature: use drbd_syntax '9'" % where)
    # What the role does with it on the primary (drbd_lifecycle states mounted/unmounted).
    primary = res.get('primary')
    if primary is None:
        primary = out_nodes[0]['name']
    elif primary not in seen_names:
        raise _refuse(where + '.primary', primary, 'is not one of its nodes (%s)' % ', '.join(seen_names))
    mount = res.get('mount')
    if mount is not None:
        check_path(mount, where + '.mount', 'mount point')
    fstype = res.get('fstype', 'ext4')
    if not isinstance(fstype, str) or not _FSTYPE_RE.fullmatch(fstype):
        raise _refuse(where + '.fstype', fstype, 'is not a filesystem type (ext4, xfs, ...)')
    return {'name': name, 'protocol': protocol, 'syntax': syntax, 'sections': sections, 'nodes': out_nodes,
            'connection_mesh': bool(mesh), 'secrets': [s for s in secrets if s], 'notes': notes,
            'primary': primary, 'mount': mount, 'fstype': fstype}


def check_resources(resources, syntax='9', allow_handlers=False):
    """Normalize every resource and check them against each other: resource names, and per node
    the minor, the backing disk, external meta-data slots, and every address:port only once.
    Returns the normalized list; raises DrbdConfigError naming the second user of a clash."""
    if not isinstance(resources, list):
        raise DrbdConfigError('drbd_resources: must be a list of resources')
    out, names, minors, disks, metas, addrs = [], {}, {}, {}, {}, {}
    for i, res in enumerate(resources):
        norm = normalize_resource(res, i, syntax, allow_handlers)
        where = _where(i, res)
        if norm['name'] in names:
            raise DrbdConfigError('%s.name: resource %s is defined twice (also drbd_resources[%d])'
                                  % (where, norm['name'], names[norm['name']]))
        names[norm['name']] = i
        for node in norm['nodes']:
            h = node['name']
            owner = minors.get((h, node['minor']))
            if owner:
                raise DrbdConfigError('%s: duplicate minor %d on node %s: already used by resource %s'
                                      % (where, node['minor'], h, owner))
            minors[(h, node['minor'])] = norm['name']
            owner = disks.get((h, node['disk']))
            if owner:
                raise DrbdConfigError('%s: backing disk %s on node %s is already the disk of resource %s'
                                      % (where, node['disk'], h, owner))
            disks[(h, node['disk'])] = norm['name']
            kind, mdev, midx = node['meta_disk']
            if kind == 'external':
                owner = metas.get((h, mdev, midx))
                if owner:
                    raise DrbdConfigError('%s: meta-disk %s [%s] on node %s is already used by resource %s'
                                          % (where, mdev, midx, h, owner))
                metas[(h, mdev, midx)] = norm['name']
            owner = addrs.get((node['ip'], node['port']))
            if owner:
                raise DrbdConfigError('%s: address clash: %s:%d (node %s) is already used by resource %s'
                                      % (where, node['ip'], node['port'], h, owner))
            addrs[(node['ip'], node['port'])] = norm['name']
        out.append(norm)
    return out


def _meta_text(meta):
    kind, dev, idx = meta
    if kind == 'internal':
        return 'internal'
    dev = _token_or_quoted(dev)
    return dev if idx is None else '%s [%d]' % (dev, idx)


def _address_text(node):
    if node['family'] == 'ipv6':
        return 'ipv6 [%s]:%d' % (node['ip'], node['port'])
    return 'ipv4 %s:%d' % (node['ip'], node['port'])


def header_line(name, lab='default'):
    """The first line of every .res file benchlab writes: its mark (name and lab)."""
    return '%s%s; lab=%s; do not edit' % (HEADER_PREFIX, name, lab)


def file_mark(text):
    """The benchlab mark of a .res file's text: {'name', 'lab'} (both None for the older header
    without them), or None when the file was not written by benchlab."""
    first = (text or '').split('\n', 1)[0]
    m = _HEADER_RE.match(first)
    if m:
        return {'name': m.group('name'), 'lab': m.group('lab')}
    if first.startswith(LEGACY_HEADER_PREFIX):
        return {'name': None, 'lab': None}
    return None


def ownership_problem(path, text, name, lab, adopt=False, action='overwrite'):
    """None when benchlab may `action` (overwrite/remove) the existing file `path` (content `text`)
    for resource `name` of lab `lab`; else the refusal, naming the file and the option adopt."""
    if text is None or adopt:
        return None
    mark = file_mark(text)
    how = ('move it away, or set adopt: true (role: drbd_adopt: true) to let benchlab %s it' % action)
    if mark is None:
        return ('%s exists and was not written by benchlab (its first line is not the header "%s"): '
                'refusing to %s it; %s' % (path, header_line(name, lab), action, how))
    if mark['name'] is not None and mark['name'] != name:
        return ('%s carries the benchlab header of resource %s, not %s: refusing to %s it; %s'
                % (path, mark['name'], name, action, how))
    if mark['lab'] is not None and mark['lab'] != lab:
        return ('%s was written by benchlab for lab %s, not this lab (%s): refusing to %s it; set lab: %s '
                '(role: drbd_lab), or %s' % (path, mark['lab'], lab, action, mark['lab'], how))
    return None


def render_resource(norm, lab='default'):
    """The drbd.conf text of one normalized resource (deterministic: sorted options), starting
    with benchlab's header line (header_line)."""
    lines = [header_line(norm['name'], lab),
             '# DRBD %s syntax, rendered by benchlab.bench (role drbd); local changes are refused or replaced.'
             % norm['syntax'],
             'resource %s {' % norm['name']]
    net = dict(norm['sections'].get('net', {}))
    lines.append('    net {')
    lines.append('        protocol %s;' % norm['protocol'])
    for k in sorted(net):
        lines.append('        %s %s;' % (k, net[k]))
    lines.append('    }')
    for section, _rkey in SECTIONS[1:]:
        opts = norm['sections'].get(section)
        if not opts:
            continue
        lines.append('    %s {' % section)
        for k in sorted(opts):
            lines.append('        %s %s;' % (k, opts[k]))
        lines.append('    }')
    for node in norm['nodes']:
        lines.append('    on %s {' % node['name'])
        if norm['syntax'] == '9':
            lines.append('        node-id %d;' % node['node_id'])
        lines.append('        device /dev/drbd%d minor %d;' % (node['minor'], node['minor']))
        lines.append('        disk %s;' % _token_or_quoted(node['disk']))
        lines.append('        address %s;' % _address_text(node))
        lines.append('        meta-disk %s;' % _meta_text(node['meta_disk']))
        lines.append('    }')
    if norm['connection_mesh']:
        lines.append('    connection-mesh {')
        lines.append('        hosts %s;' % ' '.join(n['name'] for n in norm['nodes']))
        lines.append('    }')
    lines.append('}')
    return '\n'.join(lines) + '\n'


_CONFIG_SECRET_RE = re.compile(r'shared-secret\s+(?:"([^"\n]*)"|([^\s;"{}]+))')
_INCLUDE_RE = re.compile(r'^\s*include\s+(?:"([^"\n]+)"|([^\s;"]+))\s*;', re.M)


def config_secrets(text):
    """The shared secrets a DRBD configuration text holds (each `shared-secret <value>` , quoted or
    not, also in a file drbdadm cannot parse): an installed file's old secret is masked too."""
    found = []
    for m in _CONFIG_SECRET_RE.finditer(text or ''):
        value = m.group(2) if m.group(1) is None else m.group(1)
        if value and value not in found:
            found.append(value)
    return found


def secret_forms(secrets):
    """Every form of the secrets that may show up in drbdadm's output: the secret itself and, for
    a long one, the first characters drbdadm quotes when it rejects the value ("('SSSS...') too long")."""
    out = []
    for s in secrets or []:
        if not s:
            continue
        for form in (s, s[:DRBDADM_VALUE_PREFIX] if len(s) > DRBDADM_VALUE_PREFIX else None):
            if form and form not in out:
                out.append(form)
    return out


def config_files_secrets(main_config, extra_dirs=(), read=None):
    """The secrets of the DRBD configuration on this host: `main_config` and the files its
    `include` lines name (globs), plus every *.res/*.conf in `extra_dirs`. Read as text (no drbdadm:
    also a configuration drbdadm rejects). Unreadable files are skipped."""
    def _read(path):
        try:
            with open(path, 'rb') as f:
                return f.read().decode('utf-8', 'replace')
        except (IOError, OSError):
            return None
    read = read or _read
    paths, found = [], []
    queue = [main_config] if main_config else []
    for d in extra_dirs:
        if d and os.path.isdir(d):
            queue += sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(('.res', '.conf')))
    while queue and len(paths) < 1000:
        path = queue.pop(0)
        if path in paths:
            continue
        paths.append(path)
        text = read(path)
        if text is None:
            continue
        found += [s for s in config_secrets(text) if s not in found]
        for m in _INCLUDE_RE.finditer(text):
            pattern = m.group(1) or m.group(2)
            if not os.path.isabs(pattern):
                pattern = os.path.join(os.path.dirname(path), pattern)
            queue += sorted(glob.glob(pattern))
    return found


_DRBDADM_SECRET_RE = re.compile(r'(--shared-secret[= ])(\S+)')


def drbdadm_secrets(text):
    """The secrets drbdadm put on the drbdsetup command lines it printed (`--shared-secret=...`)."""
    found = []
    for m in _DRBDADM_SECRET_RE.finditer(text or ''):
        if m.group(2) != REDACTED and m.group(2) not in found:
            found.append(m.group(2))
    return found


def mount_verdict(mounts, mountpoint, minor):
    """What is mounted on `mountpoint` (parse_mountinfo entries; the last one mounted there is the
    one visible): ('none', None), ('ours', entry) when it is DRBD device `minor` (by major:minor,
    never by the source name, which anyone can choose), else ('foreign', entry)."""
    top = None
    for m in mounts:
        if m['mountpoint'] == mountpoint:
            top = m
    if top is None:
        return 'none', None
    return ('ours' if top['major_minor'] == '%d:%d' % (DRBD_MAJOR, minor) else 'foreign'), top


def redact(text, secrets, mask=REDACTED):
    """`text` with every secret replaced by `mask` (********)."""
    if not text:
        return text
    for s in sorted(secret_forms(secrets), key=len, reverse=True):
        text = text.replace(s, mask)
    return text


def redact_output(text, secrets, mask=REDACTED):
    """drbdadm/drbdsetup output with the secrets (and their quoted prefixes) masked, and any
    `--shared-secret=<value>` argument masked whatever its value."""
    return _DRBDADM_SECRET_RE.sub(lambda m: m.group(1) + mask, redact(text, secrets, mask)) if text else text


def parse_version(text):
    """`drbdadm --version` (KEY=VALUE lines) -> {'utils': '9.22.0', 'kernel': '9.2.4' or None, 'api': '2'}.
    DRBD_KERNEL_VERSION=0 (or missing) means no kernel module is loaded: kernel None."""
    values = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition('=')
        if sep and key.strip().isupper():
            values[key.strip()] = value.strip()
    if 'DRBDADM_VERSION' not in values:
        raise DrbdParseError('drbdadm --version: no DRBDADM_VERSION line in %r' % _first_line(text))
    kernel = values.get('DRBD_KERNEL_VERSION')
    if not kernel or kernel == '0' or values.get('DRBD_KERNEL_VERSION_CODE') in ('0x000000', '0'):
        kernel = None
    return {'utils': values['DRBDADM_VERSION'], 'kernel': kernel, 'api': values.get('DRBDADM_API_VERSION')}


def choose_syntax(version, forced='auto'):
    """The drbd.conf syntax to write: the forced one, else the loaded kernel module's, else the
    version of the module on disk that modprobe would load (version['module'], from modinfo: drbdadm
    dispatches to drbdadm-84 by it too), else the user-space tools' (utils 9 without a module -> '9').
    Raises DrbdConfigError for DRBD 8.3 and older."""
    if forced in SYNTAXES:
        return forced
    if forced not in (None, 'auto'):
        raise DrbdConfigError("drbd_syntax: %r is not one of auto, 8.4, 9" % forced)
    for ver in (version.get('kernel'), version.get('module'), version.get('utils')):
        if not ver:
            continue
        if ver.startswith('8.4'):
            return '8.4'
        if ver.split('.')[0].isdigit() and int(ver.split('.')[0]) >= 9:
            return '9'
        raise DrbdConfigError('DRBD %s is too old: this role writes DRBD 8.4 or 9 configuration' % ver)
    return '9'


def validator_argv(syntax, version, drbdadm, drbdadm84, candidate, main_config=None, installed=None):
    """The argv that checks `candidate` without a kernel module (drbdadm ... sh-nop).

    DRBD 9 tools check it in the context of the host's main configuration when there is one
    (-t: config to test, -E: the installed file it replaces), so clashes with other resources are
    caught too. 8.4 syntax is checked alone; with 9.x tools by their bundled drbdadm-84."""
    binary = drbdadm
    if syntax == '8.4' and not version.get('utils', '').startswith('8.'):
        if not drbdadm84:
            raise DrbdConfigError("drbd_syntax '8.4' with drbd-utils %s needs the bundled drbdadm-84 "
                                  '(lib/drbd/drbdadm-84), which was not found' % version.get('utils'))
        binary = drbdadm84
    if syntax == '9' and main_config:
        argv = [binary, '-c', main_config, '-t', candidate]
        if installed:
            argv += ['-E', installed]
        return argv + ['sh-nop']
    return [binary, '-c', candidate, 'sh-nop']


_ERR_RE = re.compile(r'^(?P<file>[^\s:]+):(?P<line>\d+): ?(?P<msg>.*)$')


def parse_drbdadm_errors(stderr, candidate=None):
    """drbdadm's complaints -> [{'file', 'line', 'message'}] (continuation lines joined); lines that
    do not name a file:line become entries with line None. Noise from missing modinfo/modprobe is dropped."""
    out = []
    for raw in (stderr or '').splitlines():
        line = raw.rstrip()
        if not line.strip() or 'modinfo: not found' in line or 'modprobe' in line:
            continue
        m = _ERR_RE.match(line.strip())
        if m:
            out.append({'file': m.group('file'), 'line': int(m.group('line')), 'message': m.group('msg').strip()})
        elif out and (raw.startswith((' ', '\t')) or out[-1]['message'].endswith(',')
                      or not line.startswith(('command ', 'drbdadm'))):
            out[-1]['message'] += ' ' + line.strip()
        else:
            out.append({'file': None, 'line': None, 'message': line.strip()})
    if candidate:
        for e in out:
            if e['file'] and (e['file'] == candidate or candidate.endswith('/' + e['file'].lstrip('./'))):
                e['file'] = candidate
    return out


def describe_errors(errors, text, shown_path):
    """One readable paragraph: each drbdadm message with the rendered line it points at."""
    lines = (text or '').splitlines()
    parts = []
    for e in errors:
        where = shown_path if e.get('file') else 'drbdadm'
        if e.get('line'):
            where = '%s line %d' % (shown_path, e['line'])
        msg = '%s: %s' % (where, e['message'])
        n = e.get('line')
        if n and 0 < n <= len(lines):
            # drbdadm's lexer may already be past the bad value: point at the line with the option.
            m = re.search(r"for ([A-Za-z-]+)\.|but got '([^']+)'", e['message'])
            token = m and (m.group(1) or m.group(2))
            if token and token not in lines[n - 1]:
                for k in range(n - 1, 0, -1):
                    if lines[k - 1].strip().startswith(token):
                        n = k
                        break
            msg += ' [line %d: %s]' % (n, lines[n - 1].strip())
        parts.append(msg)
    return '; '.join(parts) if parts else 'drbdadm gave no message'


# ---- lifecycle ---------------------------------------------------------------------------------

STEPS = ('create-md', 'force-create-md', 'up', 'adjust', 'skip-initial-sync', 'force-primary', 'primary',
         'secondary', 'disconnect', 'connect', 'down', 'wipe-md')


def step_argv(step, name, drbdadm='drbdadm', config=None):
    """The drbdadm argv of one lifecycle step. drbdadm expands it into drbdsetup/drbdmeta calls
    (drbdadm -d prints them without running)."""
    if step not in STEPS:
        raise ValueError('unknown DRBD lifecycle step %r (one of %s)' % (step, ', '.join(STEPS)))
    base = [drbdadm] + (['-c', config] if config else [])
    tail = {
        'create-md': ['create-md', name],
        'force-create-md': ['create-md', '--force', name],
        'up': ['up', name],
        'adjust': ['adjust', name],
        'skip-initial-sync': ['new-current-uuid', '--clear-bitmap', name],
        'force-primary': ['primary', '--force', name],
        'primary': ['primary', name],
        'secondary': ['secondary', name],
        'disconnect': ['disconnect', name],
        'connect': ['connect', name],
        'down': ['down', name],
        'wipe-md': ['wipe-md', '--force', name],
    }[step]
    return base + tail


def is_fresh(entry):
    """Both sides Inconsistent and connected: a brand-new resource that has never synced."""
    if not entry or entry.get('disk_state') != 'Inconsistent':
        return False
    peers = [p for p in entry.get('peers', []) if not p.get('client')]
    return bool(peers) and all(p.get('connection') == 'Connected' and p.get('disk_state') == 'Inconsistent'
                               for p in peers)


def lifecycle_plan(state, current, initial_sync='none'):
    """The steps that take a resource from `current` (its parse_status_json entry, None when it is
    not up) to `state`; [] when it is there already (idempotence).

    state: up | primary | secondary | disconnected | connected | down.
    initial_sync (state primary, brand-new resource only): none | full (primary --force: a full
    initial sync from this node) | skip (new-current-uuid --clear-bitmap: only for disks that are
    identical, e.g. both freshly zeroed or both unused).
    """
    if state not in ('up', 'primary', 'secondary', 'disconnected', 'connected', 'down'):
        raise ValueError('unknown DRBD state %r' % state)
    if initial_sync not in ('none', 'full', 'skip'):
        raise ValueError('initial_sync %r is not one of none, full, skip' % initial_sync)
    if state == 'down':
        return ['down'] if current else []
    steps = [] if current else ['up']
    role = (current or {}).get('role', 'Secondary')
    if state == 'primary' and role != 'Primary':
        fresh = is_fresh(current) if current else False
        if initial_sync == 'skip' and (fresh or not current):
            steps += ['skip-initial-sync', 'primary']
        elif initial_sync == 'full' and (fresh or not current):
            steps += ['force-primary']
        else:
            steps += ['primary']
    elif state == 'secondary' and role == 'Primary':
        steps += ['secondary']
    elif state == 'disconnected':
        if not current or any(p.get('connection') not in ('StandAlone',) for p in current.get('peers', [])):
            steps += ['disconnect']
    elif state == 'connected' and current and any(p.get('connection') == 'StandAlone'
                                                  for p in current.get('peers', [])):
        steps += ['connect']
    return steps


# ---- state ---------------------------------------------------------------------------------------

SYNCING = ('SyncSource', 'SyncTarget', 'PausedSyncS', 'PausedSyncT', 'WFBitMapS', 'WFBitMapT',
           'WFSyncUUID', 'StartingSyncS', 'StartingSyncT', 'VerifyS', 'VerifyT')


def status_argv(drbdsetup, name=None, proc_drbd=''):
    """(argv, parser) reading the state of `name` (None: every resource). A DRBD 9 module answers
    `drbdsetup status --json`; an 8.4 module (/proc/drbd says `version: 8.4...`: drbd-utils 9 hand it
    to drbdsetup-84, which has no --json) answers `drbdsetup status --verbose --statistics` in text."""
    base = [drbdsetup, 'status'] + ([name] if name else [])
    if (proc_drbd or '').lstrip().startswith('version: 8.'):
        return base + ['--verbose', '--statistics'], parse_status_text
    return base + ['--json'], parse_status_json


def parse_status_json(text):
    """`drbdsetup status --json` -> one entry per resource volume, the shape sysinfo's `drbd`
    list and the drbd_not_uptodate trap read:

    {name, volume, minor, role, disk_state, peer_disk_state, replication, connection,
     sync_percent, out_of_sync_kib, peers: [{name, node_id, connection, role, disk_state,
     replication, client, sync_percent, out_of_sync_kib}]}

    peer_disk_state / replication / connection summarize the diskful peers that are connected:
    the first one not UpToDate / not Established wins; None when no diskful peer is connected
    (a StandAlone or disconnected baseline has no peer to wait for). Diskless clients are listed
    in peers but do not count.
    """
    stripped = (text or '').strip()
    if not stripped:
        raise DrbdParseError('drbdsetup status --json: empty output')
    try:
        data = json.loads(stripped)
    except ValueError as e:
        raise DrbdParseError('drbdsetup status --json: not JSON (%s) at %r' % (e, _first_line(text)))
    if not isinstance(data, list):
        raise DrbdParseError('drbdsetup status --json: expected a list of resources, got %r' % _first_line(text))
    out = []
    for res in data:
        if not isinstance(res, dict) or 'name' not in res:
            raise DrbdParseError('drbdsetup status --json: a resource without a name: %r' % (res,))
        for dev in res.get('devices') or [{'volume': 0}]:
            out.append(_volume_entry(res, dev))
    return out


def _peers(res, vol):
    peers = []
    for conn in res.get('connections') or []:
        pds = [pd for pd in conn.get('peer_devices') or [] if pd.get('volume', 0) == vol] or [{}]
        for pd in pds:
            peers.append({
                'name': conn.get('name'), 'node_id': conn.get('peer-node-id'),
                'connection': conn.get('connection-state'), 'role': conn.get('peer-role'),
                'disk_state': pd.get('peer-disk-state'), 'replication': pd.get('replication-state'),
                'client': bool(pd.get('peer-client', False)),
                'sync_percent': pd.get('done', pd.get('percent-in-sync')),
                'out_of_sync_kib': pd.get('out-of-sync'),
            })
    return peers


def _volume_entry(res, dev):
    """One resource volume of `drbdsetup status --json`'s shape as a parse_status_json entry."""
    vol = dev.get('volume', 0)
    peers = _peers(res, vol)
    counted = [p for p in peers if not p['client'] and p['connection'] == 'Connected']
    peer_disk = replication = None
    if counted:
        bad = [p for p in counted if p['disk_state'] != 'UpToDate']
        peer_disk = (bad[0] if bad else counted[0])['disk_state']
        moving = [p for p in counted if p['replication'] != 'Established']
        replication = (moving[0] if moving else counted[0])['replication']
    conns = [p['connection'] for p in peers if not p['client']]
    not_conn = [c for c in conns if c != 'Connected']
    syncing = [p for p in counted if p['replication'] in SYNCING]
    return {
        'name': res['name'], 'volume': vol, 'minor': dev.get('minor'), 'role': res.get('role'),
        'disk_state': dev.get('disk-state'), 'peer_disk_state': peer_disk, 'replication': replication,
        'connection': (not_conn[0] if not_conn else (conns[0] if conns else None)),
        'sync_percent': min((p['sync_percent'] for p in syncing if p['sync_percent'] is not None), default=None),
        'out_of_sync_kib': sum(p['out_of_sync_kib'] or 0 for p in counted) if counted else None,
        'peers': peers,
    }


# `drbdsetup status --verbose --statistics` (text) key -> the --json key, and its type.
_TEXT_KEYS = {
    'role': ('role', str), 'disk': ('disk-state', str), 'minor': ('minor', int), 'volume': ('volume', int),
    'connection': ('connection-state', str), 'peer-node-id': ('peer-node-id', int),
    'replication': ('replication-state', str), 'peer-disk': ('peer-disk-state', str), 'done': ('done', float),
    'out-of-sync': ('out-of-sync', int), 'peer-client': ('peer-client', lambda v: v == 'yes'),
}


def _text_pairs(line, where):
    """`key:value key:value` -> {json key: typed value}; the first bare word is returned as `_word`."""
    out = {}
    for i, token in enumerate(line.split()):
        key, sep, value = token.partition(':')
        if not sep:
            if i == 0:
                out['_word'] = token
                continue
            raise DrbdParseError('drbdsetup status: cannot read %r in %r' % (token, where))
        jkey, kind = _TEXT_KEYS.get(key, (key, str))
        try:
            out[jkey] = kind(value)
        except ValueError:
            raise DrbdParseError('drbdsetup status: %s:%s is not a number in %r' % (key, value, where))
    return out


def parse_status_text(text):
    """`drbdsetup status --verbose --statistics` (what drbdsetup-84 prints for an 8.4 module, no
    --json there) -> the same entries as parse_status_json. Lines: `<resource> role:..` at column 0,
    `volume:N minor:M disk:..` (a device), `<peer> connection:.. role:..` (a connection: `peer` for
    8.4), `volume:N replication:.. peer-disk:..` under it (a peer device); statistics lines continue
    the object above them. A StandAlone resource has no connection lines."""
    if not (text or '').strip():
        raise DrbdParseError('drbdsetup status: empty output')
    data, res, conn, current = [], None, None, None
    for line in text.splitlines():
        if not line.strip():
            continue
        pairs = _text_pairs(line, line.strip())
        if not line[0].isspace():
            if '_word' not in pairs:
                raise DrbdParseError('drbdsetup status: no resource name in %r' % line.strip())
            res = {'name': pairs.pop('_word'), 'role': pairs.get('role'), 'devices': [], 'connections': []}
            data.append(res)
            conn, current = None, res
        elif res is None:
            raise DrbdParseError('drbdsetup status: %r before any resource' % line.strip())
        elif 'connection-state' in pairs:
            conn = {'name': pairs.pop('_word', None), 'peer_devices': [], 'peer-role': pairs.pop('role', None)}
            conn.update(pairs)
            res['connections'].append(conn)
            current = conn
        elif 'volume' in pairs and conn is not None:
            current = dict(pairs)
            conn['peer_devices'].append(current)
        elif 'volume' in pairs:
            current = dict(pairs)
            res['devices'].append(current)
        else:
            pairs.pop('_word', None)
            current.update(pairs)
    return [_volume_entry(r, dev) for r in data for dev in (r['devices'] or [{'volume': 0}])]


def settled(entries):
    """(ok, reason): ok when every volume is UpToDate and no connected peer is resyncing or behind.
    A peer that is configured but not connected (Connecting/WFConnection: stopped or unreachable) is
    not settled: a cell would measure a replication that does not happen. StandAlone (disconnected on
    purpose: the no-replication baseline) is."""
    for e in entries:
        if e.get('connection') not in (None, 'Connected', 'StandAlone'):
            return False, '%s/%s peer connection is %s (the peer is stopped or unreachable)' % (
                e['name'], e['volume'], e['connection'])
        if e['disk_state'] != 'UpToDate':
            return False, '%s/%s disk is %s' % (e['name'], e['volume'], e['disk_state'])
        if e['replication'] in SYNCING:
            return False, '%s/%s is resyncing (%s, %s%% in sync)' % (e['name'], e['volume'], e['replication'],
                                                                     e['sync_percent'])
        if e['peer_disk_state'] not in (None, 'UpToDate'):
            return False, '%s/%s peer disk is %s' % (e['name'], e['volume'], e['peer_disk_state'])
    return True, 'UpToDate'


# ---- backing-disk signatures ------------------------------------------------------------------------

def parse_blkid_export(text):
    """`blkid -p -o export DEV` -> {'TYPE': 'ext4', 'USAGE': 'filesystem', ...} ({} for no output)."""
    out = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition('=')
        if not sep or not key.strip() or not key.strip().replace('_', '').isalnum():
            if line.strip():
                raise DrbdParseError('blkid -o export: cannot read %r' % line.strip())
            continue
        out[key.strip()] = value.strip()
    return out


def parse_wipefs_json(text):
    """`wipefs -J DEV` -> [{'type', 'offset', 'uuid', 'label'}] ([] when it printed nothing)."""
    if not (text or '').strip():
        return []
    try:
        data = json.loads(text)
    except ValueError as e:
        raise DrbdParseError('wipefs -J: not JSON (%s) at %r' % (e, _first_line(text)))
    sigs = data.get('signatures') if isinstance(data, dict) else None
    if not isinstance(sigs, list):
        raise DrbdParseError('wipefs -J: no "signatures" list in %r' % _first_line(text))
    return [{'type': s.get('type'), 'offset': s.get('offset'), 'uuid': s.get('uuid'), 'label': s.get('label')}
            for s in sigs]


def signature_verdict(blkid, wipefs):
    """What the backing disk carries: ('empty'|'drbd'|'other', description).

    'drbd': DRBD meta-data only (create-md already done); 'other': any other signature (filesystem,
    partition table, LVM, RAID, swap, ...)."""
    types = [s['type'] for s in wipefs if s.get('type')]
    if blkid.get('TYPE') and blkid['TYPE'] not in types:
        types.insert(0, blkid['TYPE'])
    if blkid.get('PTTYPE') and blkid['PTTYPE'] not in types:
        types.append(blkid['PTTYPE'])
    others = [t for t in types if t != 'drbd']
    if others:
        desc = ', '.join('%s at offset %s' % (s['type'], s['offset']) for s in wipefs if s['type'] != 'drbd') \
            or ', '.join(others)
        return 'other', desc
    if 'drbd' in types:
        return 'drbd', 'DRBD meta-data %s' % (blkid.get('VERSION') or '')
    return 'empty', 'no signature'
