# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_time
short_description: Read the timings printed by bash's time, time -p and GNU /usr/bin/time
version_added: 0.1.0
description:
  - Finds every C(time) block in a text, in order, and returns each one's wall-clock (C(real)), user
    and system CPU time in seconds.
  - "Formats: bash's C(time) keyword (C(real 0m54.809s) / C(user ...) / C(sys ...), tab or space
    separated, also with a locale's decimal comma), POSIX C(time -p) (C(real 54.81)), GNU
    C(/usr/bin/time)'s default format (C(0.00user 0.00system 0:00.10elapsed 0%CPU ...)) and its
    verbose C(-v) format (C(Elapsed (wall clock\\) time (h:mm:ss or m:ss\\): 0:01.23))."
  - Other lines, such as the timed command's own output or a C(nohup.out) transcript around the
    blocks, are skipped.
  - "Unlike the other C(parse_*) filters this one does B(not) return result records: C(time) can
    time any command, so it returns plain dicts. Build a record from them yourself, or use
    M(benchlab.bench.compress) for the compression CPU test."
  - Input with no C(time) block, or with a block it cannot read (a value that is not a time, a
    block cut short), fails with a message that quotes the line.
options:
  _input:
    description: The text that holds the C(time) output (stderr of C(time), a transcript, a log).
    type: str
    required: true
author:
  - benchlab.bench maintainers (@benchlab)
seealso:
  - module: benchlab.bench.compress
'''

EXAMPLES = r'''
- name: Time a command with bash's time keyword
  ansible.builtin.command:
    argv: [bash, -c, 'time bzip2 -9 -k -f /srv/bench/linux.tar']
  register: raw
  changed_when: true

- name: Wall-clock and CPU seconds
  ansible.builtin.debug:
    msg: "{{ (raw.stderr | benchlab.bench.parse_time)[0].real }} s wall, {{ (raw.stderr | benchlab.bench.parse_time)[0].user }} s user"

- name: All blocks of a nohup.out of 'time sync; time dd ...; time sync', summed wall time
  ansible.builtin.debug:
    msg: "{{ lookup('ansible.builtin.file', 'nohup.out') | benchlab.bench.parse_time | map(attribute='real') | sum }}"
'''

RETURN = r'''
_value:
  description:
    - One dict per C(time) block, in the order they appear.
    - C(real), C(user), C(sys) are seconds (floats); C(format) is V(bash), V(posix), V(gnu) or
      V(gnu-verbose); C(line) is the 1-based line where the block starts; C(exit_status) and
      C(signal) are what GNU time reported about the command (V(null) when not printed; GNU time's
      default format prints nothing for status 0, which gives 0).
  type: list
  elements: dict
  sample: [{"real": 4694.761, "user": 0.424, "sys": 832.217, "format": "bash", "line": 3,
            "exit_status": null, "signal": null}]
'''

from ansible_collections.benchlab.bench.plugins.module_utils.tools.timeparse import TimeParseError
from ansible_collections.benchlab.bench.plugins.module_utils.tools.timeparse import parse_time as _parse_time
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import parse_with


def parse_time(text):
    return parse_with('parse_time', 'time', _parse_time, TimeParseError, text)


class FilterModule(object):
    def filters(self):
        return {'parse_time': parse_time}
