# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/fio_options.py, the fio option table, from the installed fio itself.

fio names its options; benchlab classifies them. This reads every name fio knows:

    fio --version
    fio --cmdhelp=all              every job option (its child options indented)
    fio --cmdhelp=<option>         its alias ("alias: fill_fs")
    fio --enghelp                  the I/O engines this build has
    fio --enghelp=<engine>         the engine's own options
    fio --enghelp=<engine>,<opt>   its alias
    fio --profile=<p> --cmdhelp=all  the options of fio's built-in profiles (act, tiobench; fio has no
                                   command that lists the profiles), which fio accepts in any job

and writes the table again, keeping the kind of every name the table already classifies. A name
fio knows and the table does not gets the kind ``unclassified``, which the job check refuses (and
``--check`` reports), so a new fio option is refused until someone classifies it. Names the
table has and this fio lacks (other builds' engines, other versions' options) are kept. Usage:

    python tests/utils/fio_options.py           # rewrite plugins/module_utils/tools/fio_options.py
    python tests/utils/fio_options.py --check   # exit 1 naming what the installed fio has and the table lacks

tests/unit/test_fio_option_table.py runs the check against the installed fio.
"""

import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / 'plugins' / 'module_utils' / 'tools' / 'fio_options.py'
UNCLASSIFIED = 'unclassified'
PROFILES = ('act', 'tiobench')     # fio's profiles/*.c
_LIST_RE = re.compile(r'^\s*(\S+)\s*:')
_ALIAS_RE = re.compile(r'^\s*alias: (\S+)\s*$', re.M)


def _out(fio, *args):
    proc = subprocess.run([fio] + list(args), capture_output=True, text=True, timeout=60, check=False,
                          env={'LC_ALL': 'C', 'PATH': '/usr/bin:/bin'})
    return proc.stdout


def _names(text):
    """Option names of a --cmdhelp=all / --enghelp=<engine> listing ("  name   : help")."""
    names = []
    for line in text.splitlines():
        m = _LIST_RE.match(line)
        if m and not line.startswith('IO engine '):
            names.append(m.group(1))
    return names


def _alias(fio, arg):
    m = _ALIAS_RE.search(_out(fio, arg))
    return m.group(1) if m else None


def read_fio(fio=None):
    """{'version', 'options': {name: alias or None}, 'engines': {engine: {option: alias or None}}}
    of the installed fio (one fio run per option for its alias, a few at a time)."""
    fio = fio or shutil.which('fio')
    version = _out(fio, '--version').strip()
    names = _names(_out(fio, '--cmdhelp=all'))
    listing = _out(fio, '--enghelp').splitlines()
    engines = [e.strip() for e in listing[1:] if e.strip()]
    profiles = dict((p, dict((n, None) for n in _names(_out(fio, '--profile=%s' % p, '--cmdhelp=all'))))
                    for p in PROFILES)
    with ThreadPoolExecutor(max_workers=4) as pool:
        engine_names = dict(zip(engines, pool.map(lambda e: _names(_out(fio, '--enghelp=%s' % e)), engines)))
        engine_args = ['--enghelp=%s,%s' % (e, n) for e in engines for n in engine_names[e]]
        args = ['--cmdhelp=%s' % n for n in names] + engine_args
        aliases = dict(zip(args, pool.map(lambda a: _alias(fio, a), args)))
    return {'version': version,
            'options': dict((n, aliases['--cmdhelp=%s' % n]) for n in names),
            'engines': dict((e, dict((n, aliases['--enghelp=%s,%s' % (e, n)]) for n in engine_names[e]))
                            for e in engines),
            'profiles': profiles}


def load_table():
    """The table module's namespace (its dicts), read without importing the collection."""
    ns = {}
    exec(compile(TABLE.read_text(), str(TABLE), 'exec'), ns)  # pylint: disable=exec-used
    return ns


def merged(snapshot, table):
    """The table's dicts with every name of `snapshot` added (unclassified when new)."""
    options = dict(table['OPTIONS'])
    aliases = dict(table['ALIASES'])
    engines = dict(table['ENGINES'])
    engine_options = dict((e, dict(o)) for e, o in table['ENGINE_OPTIONS'].items())
    engine_aliases = dict((e, dict(o)) for e, o in table['ENGINE_ALIASES'].items())
    profile_options = dict((p, dict(o)) for p, o in table['PROFILE_OPTIONS'].items())
    for profile, opts in snapshot.get('profiles', {}).items():
        own = profile_options.setdefault(profile, {})
        for name in opts:
            own.setdefault(name, UNCLASSIFIED)
    for name, alias in snapshot['options'].items():
        options.setdefault(name, UNCLASSIFIED)
        if alias:
            aliases[alias] = name
    for engine, opts in snapshot['engines'].items():
        engines.setdefault(engine, UNCLASSIFIED)
        own = engine_options.setdefault(engine, {})
        for name, alias in opts.items():
            own.setdefault(name, UNCLASSIFIED)
            if alias:
                engine_aliases.setdefault(engine, {})[alias] = name
    return {'OPTIONS': options, 'ALIASES': aliases, 'ENGINES': engines, 'ENGINE_OPTIONS': engine_options,
            'ENGINE_ALIASES': engine_aliases, 'PROFILE_OPTIONS': profile_options}


def problems(snapshot, table):
    """What the installed fio knows and the table does not classify (empty: the table is complete)."""
    found = []
    for name, alias in sorted(snapshot['options'].items()):
        if table['OPTIONS'].get(name, UNCLASSIFIED) == UNCLASSIFIED:
            found.append('option %s is not classified' % name)
        if alias and table['ALIASES'].get(alias) != name:
            found.append('alias %s (of %s) is not in ALIASES' % (alias, name))
    for engine, opts in sorted(snapshot['engines'].items()):
        if table['ENGINES'].get(engine, UNCLASSIFIED) == UNCLASSIFIED:
            found.append('engine %s is not classified' % engine)
        for name, alias in sorted(opts.items()):
            if table['ENGINE_OPTIONS'].get(engine, {}).get(name, UNCLASSIFIED) == UNCLASSIFIED:
                found.append('option %s of engine %s is not classified' % (name, engine))
            if alias and table['ENGINE_ALIASES'].get(engine, {}).get(alias) != name:
                found.append('alias %s (of %s, engine %s) is not in ENGINE_ALIASES' % (alias, name, engine))
    for profile, opts in sorted(snapshot.get('profiles', {}).items()):
        for name in sorted(opts):
            if table['PROFILE_OPTIONS'].get(profile, {}).get(name, UNCLASSIFIED) == UNCLASSIFIED:
                found.append('option %s of profile %s is not classified' % (name, profile))
    return found


def _literal(value, indent=0):
    """A dict of str (or of such dicts) as Python source, one entry per line, sorted (pep8-clean)."""
    if not isinstance(value, dict):
        return repr(value)
    if not value:
        return '{}'
    pad = ' ' * (indent + 4)
    lines = ['{']
    for key in sorted(value):
        lines.append('%s%r: %s,' % (pad, key, _literal(value[key], indent + 4)))
    lines.append(' ' * indent + '}')
    return '\n'.join(lines)


def render(snapshot, data, head):
    """The table module's text: its hand-written head (everything above the generated marker) and
    the dicts, sorted."""
    body = ['# ---- generated by tests/utils/fio_options.py from %s (python tests/utils/fio_options.py) ----'
            % snapshot['version'], '', 'FIO_VERSION = %r' % snapshot['version'], '']
    for key in ('OPTIONS', 'ALIASES', 'ENGINES', 'ENGINE_OPTIONS', 'ENGINE_ALIASES', 'PROFILE_OPTIONS'):
        body.append('%s = %s' % (key, _literal(data[key])))
        body.append('')
    return head + '\n'.join(body)


MARKER = '# ---- generated by tests/utils/fio_options.py'


def main(argv):
    snapshot = read_fio()
    table = load_table()
    if '--check' in argv:
        found = problems(snapshot, table)
        for p in found:
            print(p)
        return 1 if found else 0
    text = TABLE.read_text()
    head = text[:text.index(MARKER)]
    TABLE.write_text(render(snapshot, merged(snapshot, table), head))
    left = problems(snapshot, load_table())
    for p in left:
        print('to classify: %s' % p)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
