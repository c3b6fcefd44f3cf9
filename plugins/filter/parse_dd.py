# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_dd
short_description: Turn dd's output into a benchlab result record
version_added: 0.1.0
description:
  - Parses what C(dd) printed on stderr (coreutils 8.x/9.x, C(status=progress) lines included) into
    a result record with the metrics C(throughput) (MB/s), C(bytes) and C(elapsed) (s), the same
    shape the M(benchlab.bench.dd) module returns, without the command and timing fields.
  - Output of an old dd that prints only its C(records) lines can be read when O(bs) is given; the
    time then comes from a C(time) C(real) line that follows.
  - A dd that reported an error, or output with no transfer in it, fails with dd's message.
options:
  _input:
    description: dd's stderr (or a C(time dd ...) transcript).
    type: str
    required: true
  test:
    description: What the run was (V(write), V(read), V(copy)); becomes the record's C(test).
    type: str
    default: write
  bs:
    description: Block size in bytes, only needed for output without a C(bytes ... copied) line.
    type: int
  labels:
    description: Labels to put on the record.
    type: dict
    default: {}
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Run dd yourself, then parse it
  ansible.builtin.command:
    argv: [dd, if=/srv/src.bin, of=/srv/bench/out.bin, bs=1M, conv=fdatasync]
  register: raw
  changed_when: true

- name: Throughput in MB/s
  ansible.builtin.debug:
    msg: "{{ (raw.stderr | benchlab.bench.parse_dd(test='write')).metrics.throughput.value }}"
'''

RETURN = r'''
_value:
  description: The result record (schema 1) without C(cmd), C(started) and C(duration_s).
  type: dict
'''

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import DdParseError, dd_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import parse_with


def parse_dd(text, test='write', bs=None, labels=None):
    return parse_with('parse_dd', 'dd', dd_record, DdParseError, text, test=test, bs=bs, labels=labels)


class FilterModule(object):
    def filters(self):
        return {'parse_dd': parse_dd}
