# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise. Used by modules/fio, module_utils/fio, plugin_utils/jobfiles.
"""fio job safety: read a fio job file (or the module's ``options``) the way fio does, refuse what
runs code or defeats fio's own safety checks, and name every device and every path outside the work
directory the job would write, so the caller can pass each device through module_utils/devguard.

fio's job-file format, as fio 3.x reads it (init.c parse_jobs_ini, parse.c strip_blank_end):

- a line's leading blanks are dropped; everything from the first ``;`` or ``#`` on is a comment
  (also in the middle of a value: ``filename=a;b`` is ``filename=a``); blank lines are skipped;
- ``[name]`` starts a section: fio reads the first blank-free word after ``[`` and drops its last
  character; a section whose name STARTS with ``global`` is a global section;
- ``key=value`` (blanks around both stripped) or a bare ``key`` (a flag such as ``stonewall``);
  option names are exact in job files (fio's command line, by contrast, accepts abbreviations);
- a job inherits the options of every global section ABOVE it, in order, then its own;
- ``include <file>`` pulls in another file (refused here: it cannot be checked);
- ``${VAR}`` in a value is replaced by the environment variable VAR: in a path it cannot be
  checked, so it is refused there.

Where fio puts files (checked with fio 3.33): each name of ``filename`` (several separated by
``:``, ``\\:`` for a literal colon) is prefixed with ``directory`` when one is set - also an
absolute name: ``directory=/d`` + ``filename=/dev/sdb`` writes the regular file /d/dev/sdb. Older
or other builds may not prefix absolute names, so both readings are checked. Without ``filename``
the file is ``filename_format`` (default ``$jobname.$jobnum.$filenum``) in ``directory``, so a job
NAME with ``/`` or ``..`` can put files anywhere.
"""

import os
import re

from ansible_collections.benchlab.bench.plugins.module_utils.devguard import is_block_device


class FioJobError(Exception):
    """A refusal or an unreadable job; the message names the file, line and option."""


# Options that make fio run other programs or give up its own safety checks.
UNSAFE = {
    'exec_prerun': 'fio runs it through a shell (sh -c) before the job',
    'exec_postrun': 'fio runs it through a shell (sh -c) after the job',
    'allow_mounted_write': 'it turns off fio\'s own refusal to write a mounted device',
    'read_iolog': 'replaying an I/O log writes to whatever files or devices the log names, which cannot be checked',
    'ioscheduler': 'it changes the I/O scheduler of the device under test (a host setting)',
    'profile': 'a built-in profile makes jobs (and targets, such as the act profile\'s device-names) benchlab cannot check',
}

# fio's built-in I/O engines (fio 3.x HOWTO). Any other name fio loads as a shared library (dlopen),
# and `exec` runs a program: both run code that is not fio.
BUILTIN_ENGINES = frozenset((
    'sync', 'psync', 'vsync', 'pvsync', 'pvsync2', 'io_uring', 'io_uring_cmd', 'libaio', 'posixaio', 'solarisaio',
    'windowsaio', 'mmap', 'splice', 'sg', 'null', 'net', 'netsplice', 'cpuio', 'rdma', 'falloc', 'ftruncate',
    'e4defrag', 'rados', 'rbd', 'http', 'gfapi', 'gfapi_async', 'libhdfs', 'mtd', 'dev-dax', 'pmemblk', 'libpmem',
    'ime_psync', 'ime_psyncv', 'ime_aio', 'libiscsi', 'nbd', 'libcufile', 'dfs', 'nfs', 'xnvme', 'libblkio',
    'filecreate', 'filestat', 'filedelete', 'dircreate', 'dirstat', 'dirdelete', 'guasi', 'binject',
))
CODE_ENGINES = ('exec', 'external')

# Options whose value is where fio writes (or, for opendir, which files it uses).
TARGET_KEYS = ('filename', 'filename_format', 'directory', 'opendir')
LOG_KEYS = ('write_iolog', 'write_bw_log', 'write_lat_log', 'write_iops_log', 'write_hist_log', 'merge_blktrace_file')
# Keys whose value names a place fio writes or reads files
PATH_KEYS = TARGET_KEYS + LOG_KEYS + ('replay_redirect', 'mem', 'iomem', 'name')
# Keys a job may not repeat within one section (fio keeps the last; a reader may see the first).
SINGLE_KEYS = TARGET_KEYS + LOG_KEYS + tuple(UNSAFE) + ('ioengine', 'mem', 'iomem', 'name', 'replay_redirect')

# fio's command-line-only options (fio --help). In `options` they would reach fio's command line:
# --output writes a file, --trigger runs a command, --server/--client talk to the network, ...
CMDLINE_ONLY = frozenset((
    'debug', 'parse-only', 'merge-blktrace-only', 'output', 'bandwidth-log', 'latency-log', 'minimal',
    'output-format', 'terse-version', 'version', 'help', 'cpuclock-test', 'crctest', 'cmdhelp', 'enghelp',
    'showcmd', 'eta', 'eta-newline', 'eta-interval', 'status-interval', 'readonly', 'section', 'alloc-size',
    'warnings-fatal', 'max-jobs', 'server', 'daemonize', 'client', 'remote-config', 'idle-prof', 'inflate-log',
    'trigger-file', 'trigger-timeout', 'trigger', 'trigger-remote', 'aux-path', 'append-terse',
))
# Job options that are a prefix of a name above and so are no abbreviation of it (fio 3.33).
EXACT_PREFIXES = frozenset(('ba', 'direct', 'exitall'))
SENSITIVE = frozenset(TARGET_KEYS + LOG_KEYS + tuple(UNSAFE) + ('ioengine', 'mem', 'iomem', 'name', 'replay_redirect'))

# fio options whose value is a credential (the http engine's, fio 3.x HOWTO): refused, also with
# allow_unsafe. Ansible logs a module's arguments to the target's syslog when it starts, and a free-form
# option (options, job_file_content) cannot be masked there, so benchlab never hands fio a credential.
CREDENTIAL_KEYS = frozenset(('http_pass', 'http_s3_key', 'http_s3_keyid', 'http_s3_sse_customer_key',
                             'http_swift_auth_token'))

HARMLESS_DEVICES = ('/dev/null', '/dev/zero')
_ENV_RE = re.compile(r'\$\{[^}]*\}')


def _strip_blank_end(line):
    """fio's strip_blank_end: cut at the first ';' or '#', then drop trailing blanks/control chars."""
    for c in (';', '#'):
        i = line.find(c)
        if i >= 0:
            line = line[:i]
    return line.rstrip(''.join(chr(i) for i in range(33)) + '\x7f')


def parse_job_file(text, name='job file'):
    """A fio job file -> [(section, {key: value or None}, {key: line number})], in file order.

    Refuses (FioJobError) what fio would also refuse or what cannot be checked: an option outside any
    section, an unreadable section header, `include`, a safety-relevant option given twice in one
    section."""
    sections = []
    current = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _strip_blank_end(raw.lstrip(' \t\r\n\v\f'))
        if not line:
            continue
        if line.split(None, 1)[0] == 'include':
            raise FioJobError('%s line %d: `%s`: include is not supported (the included file would not be '
                              'checked): copy its contents into the job file' % (name, lineno, line))
        if line.startswith('['):
            word = line[1:].split(None, 1)[0] if line[1:].strip() else ''
            if not word.endswith(']') or len(word) < 2 or line != '[' + word:
                raise FioJobError('%s line %d: section header %r: write it as [name] with no blanks (fio would '
                                  'read it as [%s])' % (name, lineno, line, word[:-1]))
            current = (word[:-1], {}, {})
            sections.append(current)
            continue
        if current is None:
            raise FioJobError('%s line %d: option %r is outside of any [section] (fio refuses it too)'
                              % (name, lineno, line))
        key, sep, value = line.partition('=')
        key = key.strip()
        value = value.strip() if sep else None
        if not key:
            raise FioJobError('%s line %d: %r has no option name' % (name, lineno, line))
        if key in current[1] and key in SINGLE_KEYS:
            raise FioJobError('%s line %d: [%s] sets %s again (first on line %d): keep one'
                              % (name, lineno, current[0], key, current[2][key]))
        current[1][key] = value
        current[2][key] = lineno
    return sections


def _value_text(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return '1' if value else '0'
    return str(value)


def options_to_sections(options, name='options', base=None):
    """The module's `options` mapping (given to fio as --key=value) as one job section.

    `base` holds what the module itself puts on the command line before them (name, directory, ...);
    `options` override it, as later command-line options do. fio's command line accepts
    abbreviated option names (getopt_long_only: --exec_pre runs exec_prerun), so a key that
    abbreviates a safety-relevant option, and fio's command-line-only options, are refused."""
    values, lines = {}, {}
    for key, value in (base or {}).items():
        values[key] = _value_text(value)
        lines[key] = None
    for key in sorted(options or {}):
        k = str(key).strip()
        low = k.lower().lstrip('-')
        if low in CMDLINE_ONLY or low.replace('_', '-') in CMDLINE_ONLY:
            raise FioJobError('%s: %r is a fio command-line option, not a job option; benchlab runs fio\'s '
                              'command line itself' % (name, k))
        if low not in SENSITIVE and low not in EXACT_PREFIXES:
            meant = sorted(s for s in SENSITIVE | CMDLINE_ONLY if s.startswith(low) or s.startswith(low.replace('_', '-')))
            if meant:
                raise FioJobError('%s: %r abbreviates the fio option %s (fio\'s command line accepts abbreviations): '
                                  'write the option name out in full' % (name, k, ' or '.join(meant)))
        values[low if low in SENSITIVE else k] = _value_text(options[key])
        lines[low if low in SENSITIVE else k] = None
    return [(name, values, lines)]


def split_names(value):
    """fio's list of names: separated by ':', '\\:' is a literal colon; empty names dropped."""
    names, cur, i = [], '', 0
    while i < len(value):
        c = value[i]
        if c == '\\' and value[i + 1:i + 2] == ':':
            cur += ':'
            i += 2
            continue
        if c == ':':
            names.append(cur)
            cur = ''
        else:
            cur += c
        i += 1
    names.append(cur)
    return [n.strip() for n in names if n.strip()]


def _where(origin, section, key, lines):
    lineno = lines.get(key)
    if lineno is None:      # options_to_sections: the module's `options`
        return 'options: %s' % key
    return '%s line %d ([%s]): %s' % (origin, lineno, section, key)


def _inside(path, root):
    path = os.path.realpath(path)
    root = os.path.realpath(root)
    return path == root or path.startswith(root.rstrip('/') + '/')


def _is_device_path(path):
    norm = os.path.normpath(path)
    if norm in HARMLESS_DEVICES:
        return False
    if is_block_device(norm):
        return True
    if norm.startswith('/dev/') and not norm.startswith('/dev/shm/') and norm != '/dev/shm':
        # a device node (block or character: the guard refuses what it cannot check), or a name
        # that does not exist (fio would create a regular file in /dev: the guard says so)
        return not (os.path.isdir(norm) or os.path.isfile(norm))
    return False


def _jobs(sections):
    """(section, effective options, where each came from) per job, with [global] inheritance."""
    inherited, inherited_from = {}, {}
    jobs = []
    for section, values, lines in sections:
        if section.startswith('global'):
            for k, v in values.items():
                inherited[k] = v
                inherited_from[k] = (section, lines.get(k))
            continue
        eff = dict(inherited)
        src = dict(inherited_from)
        for k, v in values.items():
            eff[k] = v
            src[k] = (section, lines.get(k))
        jobs.append((section, eff, src))
    return jobs


def _substitute_format(fmt, jobname):
    for token, repl in (('$jobname', jobname), ('$jobnum', '0'), ('$filenum', '0'), ('$clientuid', '0')):
        fmt = fmt.replace(token, repl)
    return fmt


def check_fio_job(sections, workdir, allow_unsafe=False, origin='job file'):
    """Check parsed sections (parse_job_file or options_to_sections) for a job fio runs with the work
    directory `workdir` as its current directory.

    Raises FioJobError for options that run programs or give up fio's safety checks (exec_prerun,
    exec_postrun, allow_mounted_write, read_iolog, ioscheduler, profile, engines that run code or are
    loaded from a file) unless allow_unsafe; and always for a path with ${VAR} in it (cannot be
    checked). Returns {"devices": [device paths named as targets],
    "outside": [(section, key, value)] for paths outside workdir, "unsafe": [(section, key, value)]
    allowed because allow_unsafe}."""
    devices, outside, unsafe = [], [], []
    for section, values, lines in sections:
        for key, value in values.items():
            _check_option(section, key, value, lines, allow_unsafe, origin, unsafe)
    for section, eff, src in _jobs(sections):
        _check_job_paths(section, eff, src, workdir, origin, devices, outside)
    return {'devices': devices, 'outside': outside, 'unsafe': unsafe}


def _add(lst, item):
    if item not in lst:
        lst.append(item)


def _option_problem(low, value):
    """Why option `low` (lower case) = `value` runs programs or gives up a safety check, or None."""
    problem = UNSAFE.get(low)
    if low == 'ioengine' and value is not None:
        engine = value.strip()
        if engine.split(':', 1)[0] in CODE_ENGINES:
            problem = 'the %s engine runs code that is not fio' % engine.split(':', 1)[0]
        elif engine not in BUILTIN_ENGINES:
            problem = ('%r is not one of fio\'s built-in engines, so fio would load it as a shared library'
                       % engine)
    if low == 'allow_mounted_write' and value is not None and value.strip() == '0':
        problem = None
    return problem


def _check_option(section, key, value, lines, allow_unsafe, origin, unsafe):
    """Refuse an unsafe option (noted in `unsafe` when allowed) and a path with ${VAR} in it."""
    low = key.lower()
    if low in CREDENTIAL_KEYS:
        # never the value: it is the secret
        raise FioJobError('%s is refused: it carries a credential, and benchlab never passes one to fio (a '
                          'module\'s arguments are logged on the target when it starts)' % _where(origin, section, key, lines))
    problem = _option_problem(low, value)
    if problem:
        if not allow_unsafe:
            raise FioJobError('%s=%s is refused: %s. Remove it, or allow it explicitly (allow_unsafe)'
                              % (_where(origin, section, key, lines), value if value is not None else '',
                                 problem))
        _add(unsafe, (section, key, value))
    if value is not None and _ENV_RE.search(value) and low in PATH_KEYS:
        raise FioJobError('%s=%s: ${...} is replaced from the environment when fio runs, so where it '
                          'writes cannot be checked: write the path out'
                          % (_where(origin, section, key, lines), value))


def _job_file_names(eff, section, jobname, origin):
    """[(option, name)] of the files one job opens: filename=, else its filename_format (or the
    default $jobname.$jobnum.$filenum), and replay_redirect."""
    if eff.get('filename'):
        names = [('filename', n) for n in split_names(eff['filename'])]
    else:
        fmt = eff.get('filename_format') or '$jobname.$jobnum.$filenum'
        key = 'filename_format' if eff.get('filename_format') else 'name'
        names = [(key, _substitute_format(fmt, jobname))]
        if '$' in fmt and names[0][1].startswith('/dev/'):
            raise FioJobError('%s: [%s] filename_format=%s names devices by a pattern that cannot be checked: '
                              'name each device with filename=' % (origin, section, fmt))
    if eff.get('replay_redirect'):
        names.append(('replay_redirect', eff['replay_redirect']))
    return names


def _check_job_paths(section, eff, src, workdir, origin, devices, outside):
    """Add the devices one job targets to `devices` and its paths outside `workdir` to `outside`."""
    jobname = eff.get('name') or section

    def where_of(key):
        return src.get(key, (section, None))[0]

    dirs = split_names(eff['directory']) if eff.get('directory') else []
    bases = []
    for d in dirs:
        b = os.path.join(workdir, d)
        bases.append((b, _inside(b, workdir)))
        if not bases[-1][1]:
            # reported once; the files fio puts under it are outside with it
            _add(outside, (where_of('directory'), 'directory', eff['directory']))
    for key, n in _job_file_names(eff, section, jobname, origin):
        shown = eff.get(key) if key != 'name' else jobname
        if dirs:
            # fio prefixes the directory to every name, absolute ones too (see the module docstring)
            candidates = [(b.rstrip('/') + '/' + n.lstrip('/'), inside) for b, inside in bases]
            if os.path.isabs(n):
                candidates.insert(0, (n, True))    # builds that do not prefix absolute names
        else:
            candidates = [(os.path.join(workdir, n), True)]
        for c, report in candidates:
            if _is_device_path(c):
                _add(devices, os.path.normpath(c))
            elif report and os.path.normpath(c) not in HARMLESS_DEVICES and not _inside(c, workdir):
                _add(outside, (where_of(key), key, shown))
    if eff.get('opendir') and not _inside(os.path.join(workdir, eff['opendir']), workdir):
        _add(outside, (where_of('opendir'), 'opendir', eff['opendir']))
    for key in LOG_KEYS:
        if key in eff:
            prefix = eff[key] or jobname       # a bare write_bw_log names the logs after the job
            if not _inside(os.path.join(workdir, prefix), workdir):
                _add(outside, (where_of(key), key, eff[key]))
    for key in ('mem', 'iomem'):
        _kind, sep, path = (eff.get(key) or '').partition(':')
        if sep and path and not _inside(os.path.join(workdir, path), workdir):
            _add(outside, (where_of(key), key, eff[key]))
