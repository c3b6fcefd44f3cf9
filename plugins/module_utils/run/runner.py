# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The argv runner every benchmark module uses.

Commands are argv lists (never shell strings) and run under the C locale, so that numbers are
printed with a decimal point and messages are in English whatever the target's locale is.
"""

import time

C_LOCALE = {'LC_ALL': 'C', 'LANG': 'C', 'LANGUAGE': 'C'}


class CommandResult(object):
    """What one command did: argv, exit code, output and wall-clock duration."""

    def __init__(self, argv, rc, stdout, stderr, duration_s):
        self.argv = list(argv)
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.duration_s = duration_s

    @property
    def ok(self):
        return self.rc == 0


def tail(text, lines=15):
    """The last `lines` non-empty lines of `text` (progress carriage returns become lines)."""
    if not text:
        return ''
    rows = [r for r in text.replace('\r', '\n').splitlines() if r.strip()]
    return '\n'.join(rows[-lines:])


def run(module, argv, cwd=None, data=None):
    """Run argv (a list) on the target under the C locale and time it."""
    if not isinstance(argv, (list, tuple)):
        raise TypeError('argv must be a list, not %r' % type(argv).__name__)
    argv = [str(a) for a in argv]
    start = time.monotonic()
    rc, out, err = module.run_command(argv, cwd=cwd, data=data, environ_update=C_LOCALE,
                                      binary_data=data is not None)
    return CommandResult(argv, rc, out, err, time.monotonic() - start)


def failure_message(what, result, extra=None):
    """A readable one-paragraph failure: what failed, the exit code, the command and the output tail."""
    parts = ['%s failed (rc=%s): %s' % (what, result.rc, ' '.join(result.argv))]
    if extra:
        parts.append(extra)
    out = tail(result.stderr) or tail(result.stdout)
    if out:
        parts.append('output:\n' + out)
    return '\n'.join(parts)


def fail(module, what, result, extra=None, **kwargs):
    """Fail the module with cmd/rc/stdout/stderr tails attached."""
    module.fail_json(msg=failure_message(what, result, extra), cmd=result.argv, rc=result.rc,
                     stdout_tail=tail(result.stdout), stderr_tail=tail(result.stderr), **kwargs)
