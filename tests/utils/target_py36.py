# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Target code (what Ansible ships to a host: plugins/modules, plugins/module_utils) must run on
Python 3.6 to 3.13.

    target_py36.py            check every .py file under the target directories; exit 1 on a finding
    target_py36.py --fix      first remove `from __future__ import annotations` from them (the
                              one 3.7+ construct that was everywhere), then check

The check is generic (every file under the directories, whoever wrote it) so that it holds on a
merged tree:
  1. vermin --target=3.6- (syntax and standard-library APIs newer than 3.6: walrus,
     subprocess.run(capture_output=/text=), dict |, dataclasses, positional-only parameters,
     evaluated annotations such as list[str], ...);
  2. when a Python 3.6 interpreter is found (TARGET_PY36, or pyenv's 3.6.x), every file is
     compiled with it too, so a syntax vermin does not know still fails here. Without one (a plain
     Debian machine) the compile is a skip that names what is missing and how to get it; it passes
     only while its reason is on the reviewed allow-list tests/skips-allowed.yml (skip_policy.py).
"""

import argparse
import glob
import os
import re
import subprocess
import sys

import skip_policy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET_DIRS = ('plugins/modules', 'plugins/module_utils')
FUTURE_RE = re.compile(r'^from __future__ import annotations[ \t]*(#.*)?\r?\n', re.M)
FUTURE_BLOCK_RE = re.compile(r'(?<=\n\n)from __future__ import annotations[ \t]*(#.*)?\r?\n\r?\n')
COMPILE = ('import sys\n'
           'bad = 0\n'
           'for p in sys.argv[1:]:\n'
           '    try:\n'
           '        compile(open(p, "rb").read(), p, "exec", dont_inherit=True)\n'
           '    except SyntaxError as e:\n'
           '        bad += 1\n'
           '        print("%s:%s: Python %d.%d: %s" % (p, e.lineno, sys.version_info[0], sys.version_info[1], e.msg))\n'
           'sys.exit(1 if bad else 0)\n')


NO_PY36 = ('no Python 3.6 for the target code\'s compile check (vermin ran): pyenv install 3.6.15, or set '
           'TARGET_PY36=/path/to/python3.6')


def target_files(dirs):
    files = []
    for d in dirs:
        files.extend(glob.glob(os.path.join(ROOT, d, '**', '*.py'), recursive=True))
    return sorted(files)


def fix(path):
    """Remove `from __future__ import annotations`, and the blank line after it when one precedes it."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    new = FUTURE_BLOCK_RE.sub('', text)
    new = FUTURE_RE.sub('', new)
    if new == text:
        return False
    with open(path, 'w', encoding='utf-8') as f:
        f.write(new)
    return True


def find_py36():
    """(interpreter, problem): TARGET_PY36 (which must then be an executable), or pyenv's 3.6.x, or (None, None)."""
    exe = os.environ.get('TARGET_PY36')
    if exe:
        return (exe, None) if os.access(exe, os.X_OK) else (None, 'TARGET_PY36=%s is not an executable' % exe)
    try:
        prefix = subprocess.run(['pyenv', 'prefix', '3.6'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                universal_newlines=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        prefix = ''
    exe = os.path.join(prefix, 'bin', 'python3.6') if prefix else ''
    return (exe if exe and os.access(exe, os.X_OK) else None), None


def run_vermin(files):
    argv = [sys.executable, '-c', 'import sys, vermin; sys.exit(vermin.main())', '--target=3.6-', '--violations', '--eval-annotations',
            '--no-tips', '--no-make-paths-absolute', '-vv'] + files
    try:
        import vermin  # noqa: F401  pylint: disable=unused-import,import-outside-toplevel
    except ImportError:
        print('target_py36: vermin is not installed in %s: pip install -r tests/requirements.txt' % sys.executable)
        return 2
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, cwd=ROOT,
                          check=False)
    if proc.returncode != 0:
        print(proc.stdout.rstrip())
    return proc.returncode


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--fix', action='store_true', help='remove `from __future__ import annotations` first')
    ap.add_argument('dirs', nargs='*', default=list(TARGET_DIRS), help='directories (default: %(default)s)')
    args = ap.parse_args(argv)
    files = target_files(args.dirs)
    if not files:
        print('target_py36: no .py files under %s' % ', '.join(args.dirs))
        return 2
    rel = [os.path.relpath(f, ROOT) if not os.path.relpath(f, ROOT).startswith('..') else f for f in files]
    if args.fix:
        changed = [r for f, r in zip(files, rel) if fix(f)]
        print('target_py36: removed `from __future__ import annotations` from %d file(s)%s'
              % (len(changed), (': ' + ' '.join(changed)) if changed else ''))
    rc = run_vermin(rel)
    py36, problem = find_py36()
    if problem:
        print('target_py36: %s (unset it to use pyenv\'s 3.6)' % problem)
        return 2
    if py36:
        proc = subprocess.run([py36, '-c', COMPILE] + rel, cwd=ROOT, check=False)
        rc = rc or proc.returncode
        how = 'vermin --target=3.6- and %s' % py36
    else:
        how = 'vermin --target=3.6- only'
        if skip_policy.main(['--skip', NO_PY36]) and not rc:
            return 1    # the skip is not allowed: the message above says so
    if rc:
        print('target_py36: target code (%s) needs more than Python 3.6: see above. Rewrite it for 3.6 '
              '(`tests/utils/target_py36.py --fix` removes `from __future__ import annotations`).'
              % ', '.join(args.dirs))
        return 1
    print('target_py36: %d target files run on Python 3.6+ (%s)' % (len(files), how))
    return 0


if __name__ == '__main__':
    sys.exit(main())
