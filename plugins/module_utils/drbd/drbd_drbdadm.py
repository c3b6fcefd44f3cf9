# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""drbdadm itself: its version and the configuration syntax it takes, the argv that validates a
candidate file, and its error messages parsed and described.
"""

import re

from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import (
    DrbdConfigError, DrbdParseError, _first_line, SYNTAXES)


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
