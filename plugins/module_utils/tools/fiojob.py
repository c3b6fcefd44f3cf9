# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""fio job safety: read a fio job file (or the module's ``options``) the way fio does and check
every option against an allow-list of what fio's options may touch (module_utils/tools/fio_options.py,
made from fio's own ``--cmdhelp``/``--enghelp``): an option benchlab has not classified is refused,
and so is everything that runs code, gives up fio's own safety checks, acts on host objects
(cgroups, I/O schedulers), uses an engine that writes anything but the job's own files, or names a
file outside the work directory. Devices a job names are returned so that the caller passes each
through module_utils/run/devguard; the files it makes, with their sizes, so that the caller checks the
free space.

fio's job-file format, as fio 3.x reads it (init.c parse_jobs_ini, parse.c strip_blank_end):

- a line's leading blanks are dropped; everything from the first ``;`` or ``#`` on is a comment
  (also in the middle of a value: ``filename=a;b`` is ``filename=a``); blank lines are skipped;
- ``[name]`` starts a section: fio reads the first blank-free word after ``[`` and drops its last
  character; a section whose name STARTS with ``global`` is a global section;
- ``key=value`` (blanks around both stripped) or a bare ``key`` (a flag such as ``stonewall``);
  option names and aliases are exact and case-sensitive in job files (parse.c o_match; fio's command
  line, by contrast, accepts abbreviations); an engine's own options count only for that engine;
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

from ansible_collections.benchlab.bench.plugins.module_utils.run.devguard import is_block_device
from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio_options import (
    ALIASES, ENGINE_ALIASES, ENGINE_OPTIONS, ENGINES, FIO_VERSION, OPTIONS, PROFILE_OPTIONS)


class FioJobError(Exception):
    """A refusal or an unreadable job; the message names the file, line and option."""


# Why an option of each refused kind is refused (module_utils/tools/fio_options.py KINDS).
UNSAFE = {
    'exec_prerun': 'fio runs it through a shell (sh -c) before the job',
    'exec_postrun': 'fio runs it through a shell (sh -c) after the job',
    'allow_mounted_write': 'it turns off fio\'s own refusal to write a mounted device',
    'read_iolog': 'replaying an I/O log writes to whatever files or devices the log names, which cannot be checked',
    'ioscheduler': 'it changes the I/O scheduler of the device under test (a host setting)',
    'profile': 'a built-in profile makes jobs (and targets, such as the act profile\'s device-names) benchlab cannot check',
    'cgroup': ('fio creates the cgroup in the host\'s cgroup hierarchy (a relative name with .. reaches any '
               'directory) and writes its pid into it: a host object outside the work directory'),
}
ENGINE_PROBLEMS = {
    'other_files': 'the %s engine acts on files besides the job\'s own (e4defrag moves blocks between the job\'s '
                   'file and a donor file)',
    'device': 'the %s engine talks to a device past the block layer (or a character device), where the device '
              'guard cannot judge what it writes',
    'network': 'the %s engine reads and writes storage across the network, which no guard on this host sees',
    'program': 'the %s engine runs a program',
}
CODE_ENGINES = ('exec', 'external')
DEFAULT_ENGINE = 'psync'        # fio's default on Linux

# Kinds whose value names a place (a ${VAR} in it cannot be checked) or that may be set once per section.
PATH_KINDS = ('target', 'jobname', 'path', 'memfile', 'pattern')
LOG_KEYS = ('write_iolog', 'write_bw_log', 'write_lat_log', 'write_iops_log', 'write_hist_log')
TRIM_RW = ('trim', 'randtrim', 'trimwrite', 'randtrimwrite')
# Engines whose trims are BLKDISCARD (fio's do_io_u_trim: block devices only); falloc punches holes
# in files instead, and null does no I/O.
TRIM_BY_BLKDISCARD = ('sync', 'psync', 'vsync', 'pvsync', 'pvsync2', 'libaio', 'io_uring', 'posixaio', 'mmap',
                      'splice')

# fio's command-line-only options (fio --help). In `options` they would reach fio's command line:
# --output writes a file, --trigger runs a command, --server/--client talk to the network, ...
CMDLINE_ONLY = frozenset((
    'debug', 'parse-only', 'merge-blktrace-only', 'output', 'bandwidth-log', 'latency-log', 'minimal',
    'output-format', 'terse-version', 'version', 'help', 'cpuclock-test', 'crctest', 'cmdhelp', 'enghelp',
    'showcmd', 'eta', 'eta-newline', 'eta-interval', 'status-interval', 'readonly', 'section', 'alloc-size',
    'warnings-fatal', 'max-jobs', 'server', 'daemonize', 'client', 'remote-config', 'idle-prof', 'inflate-log',
    'trigger-file', 'trigger-timeout', 'trigger', 'trigger-remote', 'aux-path', 'append-terse',
))

# fio options whose value is a credential (the http engine's, fio 3.x HOWTO): refused, also with
# allow_unsafe. Ansible logs a module's arguments to the target's syslog when it starts, and a free-form
# option (options, job_file_content) cannot be masked there, so benchlab never hands fio a credential.
CREDENTIAL_KEYS = frozenset(('http_pass', 'http_s3_key', 'http_s3_keyid', 'http_s3_sse_customer_key',
                             'http_swift_auth_token'))

HARMLESS_DEVICES = ('/dev/null', '/dev/zero')
_ENV_RE = re.compile(r'\$\{[^}]*\}')
_SIZE_RE = re.compile(r'^\s*(\d+(?:\.\d+)?)\s*([kmgtpe]?)(i?)b?\s*$', re.IGNORECASE)
_POWER = {'': 0, 'k': 1, 'm': 2, 'g': 3, 't': 4, 'p': 5, 'e': 6}
# More file names than this per job are added up without telling shared ones apart.
_MAX_NAMES = 4096


def canonical(key, engine=None):
    """(option name, kind) of `key` (an option or alias fio has, an option of `engine`, or one of a
    built-in profile's), or (key, None) when fio's table has no such option."""
    name = ALIASES.get(key, key)
    if name in OPTIONS:
        return name, OPTIONS[name]
    own = ENGINE_OPTIONS.get(engine) or {}
    name = (ENGINE_ALIASES.get(engine) or {}).get(key, key)
    if name in own:
        return name, own[name]
    for opts in PROFILE_OPTIONS.values():
        if key in opts:
            return key, opts[key]
    return key, None


_ALL_NAMES = sorted(set(list(OPTIONS) + list(ALIASES) + [n for opts in ENGINE_OPTIONS.values() for n in opts]
                        + [a for aliases in ENGINE_ALIASES.values() for a in aliases]))


def _known_anywhere(key):
    """Whether `key` is an option or alias of fio or of any of its engines."""
    return canonical(key)[1] is not None or any(canonical(key, e)[1] is not None for e in ENGINE_OPTIONS)


def _any_kind(key):
    """The kind of `key` as a job option or as any engine's option ('value' when all agree or it is unknown)."""
    name, kind = canonical(key)
    if kind is not None:
        return name, kind
    kinds = set(k for e in ENGINE_OPTIONS for n, k in [canonical(key, e)] if k is not None)
    return key, ('value' if kinds <= set(['value']) else 'path')


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
    section, an unreadable section header, `include`, an option that names a place or is refused by
    default given twice in one section (also as its alias)."""
    sections = []
    current = None
    seen = {}
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
            seen = {}
            continue
        if current is None:
            # the line is not quoted: a file that does not start like a job file may be anything (a secret)
            raise FioJobError('%s line %d: an option outside of any [section] (fio refuses it too): is this a fio '
                              'job file? It must start with a [section] line' % (name, lineno))
        key, sep, value = line.partition('=')
        key = key.strip()
        value = value.strip() if sep else None
        if not key:
            raise FioJobError('%s line %d: %r has no option name' % (name, lineno, line))
        option, kind = _any_kind(key)
        if option in seen and (kind != 'value' or option == 'ioengine'):
            raise FioJobError('%s line %d: [%s] sets %s again (first on line %d): keep one'
                              % (name, lineno, current[0], option, seen[option]))
        seen[option] = lineno
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
    `options` override it, as later command-line options do (also through an alias). fio's command
    line accepts abbreviated option names (getopt_long_only: --exec_pre runs exec_prerun), so only
    full names pass; fio's command-line-only options are refused."""
    values, lines = {}, {}
    for key, value in (base or {}).items():
        values[key] = _value_text(value)
        lines[key] = None
    for key in sorted(options or {}):
        k = str(key).strip().lstrip('-')
        if k in CMDLINE_ONLY or k.replace('_', '-') in CMDLINE_ONLY:
            raise FioJobError('%s: %r is a fio command-line option, not a job option; benchlab runs fio\'s '
                              'command line itself' % (name, k))
        if not _known_anywhere(k):
            meant = sorted(set([_any_kind(s)[0] for s in _ALL_NAMES if s.startswith(k)]
                               + [s for s in CMDLINE_ONLY if s.startswith(k) or s.startswith(k.replace('_', '-'))]))
            if meant:
                raise FioJobError('%s: %r abbreviates the fio option %s (fio\'s command line accepts abbreviations): '
                                  'write the option name out in full' % (name, k, ' or '.join(meant)))
        option = _any_kind(k)[0]
        for old in [b for b in values if b != k and _any_kind(b)[0] == option]:
            del values[old]         # the option given by its alias replaces the module's own
            del lines[old]
        values[k] = _value_text(options[key])
        lines[k] = None
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
    lineno = lines.get(key) if isinstance(lines, dict) else lines
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
    """(section, effective options, where each came from) per job, with [global] inheritance;
    keys as the sections spell them."""
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


def job_engine(eff):
    """The I/O engine a job's effective options select (fio's default when none)."""
    engine = eff.get('ioengine')
    return engine.strip() if engine else DEFAULT_ENGINE


def _canonical_job(eff, src):
    """A job's effective options under fio's own option names ({name: value}, {name: (key, section, line)}),
    the later of an option and its alias winning, and [(key, value, section, line)] of the keys fio
    does not know for the job's engine."""
    engine = job_engine(dict((canonical(k)[0], v) for k, v in eff.items()))
    order = sorted(eff, key=lambda k: (src[k][0] is not None and not src[k][0].startswith('global'),
                                       src[k][1] or 0))
    values, where, unknown = {}, {}, []
    for key in order:
        name, kind = canonical(key, engine)
        section, line = src[key]
        if kind is None:
            unknown.append((key, eff[key], section, line))
            continue
        values[name] = eff[key]
        where[name] = (key, section, line, kind)
    return engine, values, where, unknown


def _substitute_format(fmt, jobname, jobnum=0, filenum=0):
    for token, repl in (('$jobname', jobname), ('$jobnum', str(jobnum)), ('$filenum', str(filenum)),
                        ('$clientuid', '0')):
        fmt = fmt.replace(token, repl)
    return fmt


def check_fio_job(sections, workdir, allow_unsafe=False, origin='job file'):
    """Check parsed sections (parse_job_file or options_to_sections) for a job fio runs with the work
    directory `workdir` as its current directory, option by option against fio's option table.

    Raises FioJobError, naming the file, line and option, for an option fio's table does not have,
    one that runs programs, gives up fio's safety checks or acts on a host object (exec_prerun,
    exec_postrun, allow_mounted_write, read_iolog, ioscheduler, profile, cgroup), an engine that
    writes anything but the job's own files (e4defrag, network engines, device pass-through) or runs
    code - each unless allow_unsafe; and always for a path with ${VAR} in it (cannot be checked), for
    fill_device on files, for a trim job on files (fio trims only block devices) and for a size that
    cannot be read. Returns {"devices": [device paths named as targets], "outside": [(section, key,
    value)] for paths outside workdir, "unsafe": [(section, key, value)] let through because
    allow_unsafe, "files": {path of a file the job makes: bytes}}."""
    devices, outside, unsafe, files = [], [], [], {}
    for section, eff, src in _jobs(sections):
        engine, values, where, unknown = _canonical_job(eff, src)
        if 'ioengine' in values:    # the engine first: its options are known only when it is
            key, sec, line, kind = where['ioengine']
            _check_option('ioengine', kind, values['ioengine'], key, sec, line, engine, allow_unsafe, origin, unsafe)
        for key, value, sec, line in unknown:
            _unknown_option(key, value, sec, line, engine, allow_unsafe, origin, unsafe)
        for name, value in values.items():
            key, sec, line, kind = where[name]
            _check_option(name, kind, value, key, sec, line, engine, allow_unsafe, origin, unsafe)
        job_files = _check_job_paths(section, values, where, workdir, origin, devices, outside)
        _check_job_io(engine, values, where, job_files, origin)
        for path, nbytes in _job_sizes(section, values, where, job_files, origin).items():
            files[path] = max(files.get(path, 0), nbytes)
    return {'devices': devices, 'outside': outside, 'unsafe': unsafe, 'files': files}


def _add(lst, item):
    if item not in lst:
        lst.append(item)


def _refuse_or_note(where, value, problem, allow_unsafe, unsafe, item):
    if not allow_unsafe:
        raise FioJobError('%s=%s is refused: %s. Remove it, or allow it explicitly (allow_unsafe)'
                          % (where, value if value is not None else '', problem))
    _add(unsafe, item)


def _refuse_credential(key, section, line, origin):
    """A credential is refused whatever else is allowed, naming the option but never its value."""
    if key.lower() in CREDENTIAL_KEYS:
        raise FioJobError('%s is refused: it carries a credential, and benchlab never passes one to fio (a '
                          'module\'s arguments are logged on the target when it starts)'
                          % _where(origin, section, key, line))


def _unknown_option(key, value, section, line, engine, allow_unsafe, origin, unsafe):
    _refuse_credential(key, section, line, origin)
    known_by = sorted(e for e, opts in ENGINE_OPTIONS.items() if canonical(key, e)[1] is not None)
    if known_by:
        problem = ('it is an option of the %s engine%s, not of the job\'s engine %s'
                   % (', '.join(known_by), 's' if len(known_by) > 1 else '', engine))
    else:
        problem = ('%s has no such option (for the engine %s): benchlab knows every option fio lists '
                   '(fio --cmdhelp=all, fio --enghelp=<engine>) and refuses others until they are classified'
                   % (FIO_VERSION, engine))
    if not allow_unsafe:     # the value of an option fio does not have is not quoted (it may be anything)
        raise FioJobError('%s is refused: %s. Remove it, or allow it explicitly (allow_unsafe)'
                          % (_where(origin, section, key, line), problem))
    _add(unsafe, (section, key, value))


def engine_problem(engine):
    """Why the I/O engine `engine` is refused by default, or None for one that writes only the job's files."""
    if engine.split(':', 1)[0] == 'external':
        return 'the external engine loads code that is not fio'
    kind = ENGINES.get(engine)
    if kind is None:
        return ('%r is not one of fio\'s built-in engines, so fio would load it as a shared library (code that is '
                'not fio)' % engine)
    if kind == 'files':
        return None
    return ENGINE_PROBLEMS.get(kind, 'the %s engine is not classified yet') % engine


def _check_option(name, kind, value, key, section, line, engine, allow_unsafe, origin, unsafe):
    """Refuse one option of a job by its kind (noted in `unsafe` when allowed) and a place with ${VAR} in it."""
    _refuse_credential(key, section, line, origin)
    where = _where(origin, section, key, line)
    problem = None
    if kind in ('program', 'unsafe', 'host'):
        problem = UNSAFE.get(name) or ('the %s engine runs it' % engine if kind == 'program' else
                                       'benchlab cannot check what it touches')
        if name == 'allow_mounted_write' and value is not None and value.strip() == '0':
            problem = None
    elif kind == 'engine' and value is not None:
        problem = engine_problem(value.strip())
    elif kind == 'network':
        problem = 'it names a host, port or storage across the network'
    elif kind not in ('value', 'target', 'jobname', 'path', 'memfile', 'pattern', 'fill', 'profile'):
        problem = 'benchlab has not classified this option of fio yet'
    if problem:
        _refuse_or_note(where, value, problem, allow_unsafe, unsafe, (section, key, value))
    if value is not None and kind in PATH_KINDS and _ENV_RE.search(value):
        raise FioJobError('%s=%s: ${...} is replaced from the environment when fio runs, so where it '
                          'writes cannot be checked: write the path out' % (where, value))


def _job_file_names(values, where, section, jobname, origin):
    """[(option, name)] of the files one job opens: filename=, else its filename_format (or the
    default $jobname.$jobnum.$filenum), and replay_redirect."""
    if values.get('filename'):
        names = [('filename', n) for n in split_names(values['filename'])]
    else:
        fmt = values.get('filename_format') or '$jobname.$jobnum.$filenum'
        key = 'filename_format' if values.get('filename_format') else 'name'
        names = [(key, _substitute_format(fmt, jobname))]
        if '$' in fmt and names[0][1].startswith('/dev/'):
            raise FioJobError('%s: [%s] filename_format=%s names devices by a pattern that cannot be checked: '
                              'name each device with filename=' % (origin, section, fmt))
    if values.get('replay_redirect'):
        names.append(('replay_redirect', values['replay_redirect']))
    return names


def _pattern_files(value):
    """The files a buffer_pattern/verify_pattern value reads: its '...' parts (lib/pattern.c parse_file),
    outside "..." strings."""
    found, i = [], 0
    while i < len(value):
        c = value[i]
        if c in '"\'':
            end = value.find(c, i + 1)
            if end < 0:
                end = len(value)
            if c == '\'':
                found.append(value[i + 1:end])
            i = end + 1
            continue
        i += 1
    return found


def _check_job_paths(section, values, where, workdir, origin, devices, outside):
    """Add the devices one job targets to `devices` and its paths outside `workdir` to `outside`;
    return [(option, path)] of the regular files it does its I/O on."""
    jobname = values.get('name') or section

    def shown_key(name):
        return where[name][0] if name in where else name

    def sec_of(name):
        return where[name][1] if name in where else section

    dirs = split_names(values['directory']) if values.get('directory') else []
    bases = []
    for d in dirs:
        b = os.path.join(workdir, d)
        bases.append((b, _inside(b, workdir)))
        if not bases[-1][1]:
            # reported once; the files fio puts under it are outside with it
            _add(outside, (sec_of('directory'), shown_key('directory'), values['directory']))
    files = []
    for key, n in _job_file_names(values, where, section, jobname, origin):
        shown = values.get(key) if key != 'name' else jobname
        if dirs:
            # fio prefixes the directory to every name, absolute ones too (see the module docstring)
            candidates = [(b.rstrip('/') + '/' + n.lstrip('/'), inside) for b, inside in bases]
            if os.path.isabs(n):
                candidates.insert(0, (n, True))    # builds that do not prefix absolute names
        else:
            candidates = [(os.path.join(workdir, n), True)]
        is_device = False
        for c, report in candidates:
            if _is_device_path(c):
                _add(devices, os.path.normpath(c))
                is_device = True
            elif report and os.path.normpath(c) not in HARMLESS_DEVICES and not _inside(c, workdir):
                _add(outside, (sec_of(key), shown_key(key) if key != 'name' else 'name', shown))
        path = candidates[-1][0] if not dirs else bases[0][0].rstrip('/') + '/' + n.lstrip('/')
        if not is_device and key != 'replay_redirect' and os.path.normpath(path) not in HARMLESS_DEVICES:
            files.append((key, path))
    if values.get('opendir') and not _inside(os.path.join(workdir, values['opendir']), workdir):
        _add(outside, (sec_of('opendir'), shown_key('opendir'), values['opendir']))
    for name, value in values.items():
        kind = where[name][3] if name in where else None
        places = []
        if kind == 'path':
            places = [value or (jobname if name in LOG_KEYS else '')]
        elif kind == 'memfile':
            _kind, sep, path = (value or '').partition(':')
            places = [path] if sep and path else []
        elif kind == 'pattern':
            places = _pattern_files(value or '')
        for place in places:
            if place and not _inside(os.path.join(workdir, place), workdir):
                _add(outside, (sec_of(name), shown_key(name), value))
    return files


def _check_job_io(engine, values, where, job_files, origin):
    """Refuse what fio cannot do on the job's regular files, with the cause: trims by BLKDISCARD (a
    block-device ioctl) and fill_device (it fills the file system)."""
    if not job_files:
        return
    rw = (values.get('rw') or '').split(':', 1)[0].strip()
    if rw in TRIM_RW and engine in TRIM_BY_BLKDISCARD:
        key, sec, line, _kind = where['rw']
        raise FioJobError('%s=%s: fio trims (discards) with BLKDISCARD, an ioctl of block devices; on the regular '
                          'file %s it fails with "Inappropriate ioctl for device" whatever the file system (tmpfs '
                          'included). Trim a block device (filename=/dev/..., destructive: true), punch holes in '
                          'files with ioengine=falloc, or use another rw'
                          % (_where(origin, sec, key, line), values['rw'], job_files[0][1]))
    fill = values.get('fill_device')
    if 'fill_device' in values and (fill is None or fill.strip() not in ('0', 'false', 'off', 'no')):
        key, sec, line, _kind = where['fill_device']
        raise FioJobError('%s=%s: fio would write %s until its file system is full, which fills the file system '
                          'of the work directory for everything else on it: give a size that fits'
                          % (_where(origin, sec, key, line), fill if fill is not None else '1', job_files[0][1]))


def fio_bytes(text):
    """A fio size ('4k', '1g', '1M-2M' or '1M:2M' as a range: its upper end) in bytes, read the larger
    way (k = 1024); None for a percentage or what cannot be read."""
    if text is None:
        return None
    parts = re.split(r'[-:]', str(text).strip())
    out = None
    for part in parts:
        m = _SIZE_RE.match(part)
        if not m:
            return None
        n = int(float(m.group(1)) * 1024 ** _POWER[m.group(2).lower()])
        out = n if out is None else max(out, n)
    return out


def _int_value(values, name, default):
    try:
        return max(int(str(values.get(name)).strip()), 0) if values.get(name) is not None else default
    except ValueError:
        return default


def _job_sizes(section, values, where, job_files, origin):
    """{path: bytes} of the regular files one job lays out (fio's size, filesize, nrfiles, numjobs,
    offset, offset_increment, file_append with loops); a size that cannot be read is refused."""
    if not job_files:
        return {}
    sizes = {}
    for name in ('size', 'filesize', 'offset', 'offset_increment'):
        if values.get(name) is None:
            continue
        sizes[name] = fio_bytes(values[name])
        if sizes[name] is None and not (name == 'offset' and str(values[name]).strip().endswith('%')):
            key, sec, line, _kind = where[name]
            raise FioJobError('%s=%s: not a size benchlab can check against the free space (a percentage is a '
                              'share of an existing file or device; the job\'s files are new): give bytes such as '
                              '256M' % (_where(origin, sec, key, line), values[name]))
    numjobs = _int_value(values, 'numjobs', 1) or 1
    explicit = bool(values.get('filename'))
    nfiles = len(job_files) if explicit else (_int_value(values, 'nrfiles', 1) or 1)
    per_file = sizes.get('filesize') or ((sizes.get('size') or 0) // nfiles)
    per_file += sizes.get('offset') or 0
    if values.get('file_append') not in (None, '0'):
        per_file *= _int_value(values, 'loops', 1) or 1
    out = {}
    if explicit:
        extra = (sizes.get('offset_increment') or 0) * (numjobs - 1)
        for _key, path in job_files:
            out[path] = per_file + extra
        return out
    key, base = job_files[0]
    fmt = values.get('filename_format') or '$jobname.$jobnum.$filenum'
    jobname = values.get('name') or section
    folder = os.path.dirname(base)
    if numjobs * nfiles > _MAX_NAMES:
        out[os.path.join(folder, '.all-files-of-%s' % jobname)] = per_file * numjobs * nfiles
        return out
    for j in range(numjobs):
        for f in range(nfiles):
            path = os.path.join(folder, os.path.basename(_substitute_format(fmt, jobname, j, f)))
            out[path] = max(out.get(path, 0), per_file)
    return out


# fio options that make the written data zeros, a fixed pattern or compressible/dedupable blocks.
FIO_COMPRESSIBLE = ('zero_buffers', 'buffer_compress_percentage', 'buffer_pattern', 'dedupe_percentage')


def fio_compressible(options):
    """The fio options of a {name: value} mapping (None: given without a value, which sets a flag
    option) that make its writes zeros, a pattern or compressible/dedupable: the names found, sorted;
    [] when fio writes its default (random, scrambled) buffers."""
    found = set()
    for name, value in (options or {}).items():
        name = str(name).lstrip('-').strip()
        if name not in FIO_COMPRESSIBLE:
            continue
        value = '1' if value is None else str(value).strip().lower()
        if name == 'buffer_pattern' or value not in ('0', 'false', 'no', 'off', ''):
            found.add(name)
    return sorted(found)


def fio_zero_warning(sections):
    """The warning for fio job sections [(section, {name: value}, lines)] that write zeros or
    compressible data, or None."""
    found = sorted(set(n for _section, values, _lines in sections or [] for n in fio_compressible(values)))
    if not found:
        return None
    return ('the fio job writes zeros or compressible data (%s): storage that skips or compresses such blocks '
            '(ploop, thin volumes, compression, dedup) fakes the speed' % ', '.join(found))
