# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_ioping
short_description: Turn ioping's output into a benchlab result record
version_added: 0.2.0
description:
  - Parses what C(ioping) printed - its human output (the C(ioping statistics) block), C(-B) (raw
    numbers) or C(-J) (JSON) - into a result record with the metrics C(latency_min),
    C(latency_avg), C(latency_max), C(latency_mdev) (ms), C(iops) and C(throughput) (MB/s, 10^6
    bytes/s) of the requests ioping counted (never its warm-up request). Same shape as the
    M(benchlab.bench.ioping) module's record, without the command and timing fields.
  - The human output is rounded by ioping to three digits; C(-B) and C(-J) are exact.
  - ioping's own errors (lines starting C(ioping) and a colon), output without statistics and a run in
    which no request counted fail with the reason and the line concerned.
options:
  _input:
    description: ioping's stdout (stderr appended is fine, and lets ioping's errors be named).
    type: str
    required: true
  test:
    description: The record's C(test). Default is the direction the output shows (V(read) or V(write); V(read) for C(-B)).
    type: str
  labels:
    description: Labels to put on the record.
    type: dict
    default: {}
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Run ioping yourself, then parse it
  ansible.builtin.command:
    argv: [ioping, -c, '20', -i, '0', -D, /srv/bench]
  register: raw
  changed_when: false

- name: Mean request latency in ms
  ansible.builtin.debug:
    msg: "{{ (raw.stdout | benchlab.bench.parse_ioping).metrics.latency_avg.value }}"
'''

RETURN = r'''
_value:
  description: The result record (schema 1) without C(cmd), C(started) and C(duration_s).
  type: dict
'''

from ansible_collections.benchlab.bench.plugins.module_utils.tools.ioping import IopingParseError, ioping_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import parse_with


def parse_ioping(text, test=None, labels=None):
    return parse_with('parse_ioping', 'ioping', ioping_record, IopingParseError, text, test=test, labels=labels)


class FilterModule(object):
    def filters(self):
        return {'parse_ioping': parse_ioping}
