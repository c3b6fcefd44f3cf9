# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The drbdadm lexer's rules: checks that a value written into drbd.conf is data, never syntax (names,
paths, addresses, meta-disk, minors, quoted values), and the DRBD errors.

Input is data, never syntax: every value written into drbd.conf is checked against drbdadm's own
lexer (user/v9 and user/v84 drbdadm_scanner.fl of drbd-utils): an unquoted value is one word of
``[A-Za-z0-9/._-]`` (at most 128 characters), a quoted one (shared secret, handler command, a device
path with ``:``) holds no double quote, backslash or control character (at most 255). Names may not
be drbdadm keywords (``resource``, ``on``, ``volume``, ...) nor ``all`` (drbdadm expands it to every
resource).
"""

import ipaddress
import re


PROTOCOLS = ('A', 'B', 'C')

SYNTAXES = ('8.4', '9')

MAX_MINOR = 1048575

DRBD_MAJOR = 147

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

# The options of a `net` section drbd-utils accepts: an allow-list of what drbdadm 9.22 or drbdadm-84
# parses there (each option of `drbdsetup help net-options|new-peer|connect` and of
# `drbdsetup-84 help net-options|connect` tried in a `net { }` through `drbdadm sh-nop`). The
# drbd_resource module declares each one (shared-secret no_log) so that Ansible masks the secret in
# the module's start-up log line; an option newer drbd-utils know (tls, load-balance-paths, ...)
# needs a line here.
NET_OPTIONS = (
    'after-sb-0pri', 'after-sb-1pri', 'after-sb-2pri', 'allow-remote-read', 'allow-two-primaries',
    'always-asbp', 'congestion-extents', 'congestion-fill', 'connect-int', 'cram-hmac-alg',
    'csums-after-crash-only', 'csums-alg', 'data-integrity-alg', 'fencing', 'ko-count', 'max-buffers',
    'max-epoch-size', 'on-congestion', 'ping-int', 'ping-timeout', 'protocol', 'rcvbuf-size',
    'rr-conflict', 'shared-secret', 'sndbuf-size', 'socket-check-timeout', 'tcp-cork', 'timeout',
    'transport', 'unplug-watermark', 'use-rle', 'verify-alg')

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
