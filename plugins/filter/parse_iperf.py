# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_iperf
short_description: Turn iperf3 JSON or iperf2 CSV/text output into benchlab result records
version_added: 0.1.0
description:
  - Reads the output of C(iperf3 -J), C(iperf -y C) (iperf2 CSV) or iperf2 text, telling them apart
    by themselves, and returns a list of result records with the metrics C(throughput) (Mbit/s,
    10^6 bits/s), C(retransmits) (count, where the output has them) and, for UDP, C(jitter) (ms)
    and C(lost_pct) (%) - the shape the M(benchlab.bench.iperf) module returns.
  - Throughput is what the receiver got where the output says it (iperf3 C(sum_received), the iperf2
    UDP server report), otherwise what the sender wrote (iperf2 TCP). Parallel streams are summed.
  - Client or server side output is accepted. iperf 2.1 client CSV has no UDP server report, which
    is an error; use the text output, or the server's CSV.
  - A run that failed (iperf3 C(error) key, iperf2 C(connect failed) or a missing UDP server
    report), empty, truncated or unknown output fails, quoting iperf's message or the first line.
options:
  _input:
    description: iperf's stdout.
    type: str
    required: true
  stderr:
    description: iperf's stderr, where iperf2 prints its connection errors (optional).
    type: str
    default: ''
  reverse:
    description: The run was reversed (C(-R)); needed for iperf2 CSV only, which does not show it.
    type: bool
  labels:
    description: Labels to put on every record.
    type: dict
    default: {}
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Run iperf3 yourself, then parse it
  ansible.builtin.command:
    argv: [iperf3, -c, 192.0.2.10, -J, -t, "10"]
  register: raw
  changed_when: false

- name: Throughput in Mbit/s
  ansible.builtin.debug:
    msg: "{{ (raw.stdout | benchlab.bench.parse_iperf)[0].metrics.throughput.value }}"

- name: iperf2, with its stderr so that a refused connection is reported as such
  ansible.builtin.debug:
    msg: "{{ raw2.stdout | benchlab.bench.parse_iperf(stderr=raw2.stderr, labels={'net': 'bridged'}) }}"
'''

RETURN = r'''
_value:
  description: A list of result records (schema 1) without C(cmd), C(started) and C(duration_s).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.benchlab.bench.plugins.module_utils.tools.iperf import IperfParseError, iperf_records
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import parse_with


def parse_iperf(text, stderr='', reverse=None, labels=None):
    if stderr is not None and not isinstance(stderr, str):
        raise AnsibleFilterError('parse_iperf: stderr must be text, got %s' % type(stderr).__name__)
    return parse_with('parse_iperf', 'iperf', iperf_records, IperfParseError, text, stderr or '', labels=labels,
                      reverse=reverse)


class FilterModule(object):
    def filters(self):
        return {'parse_iperf': parse_iperf}
