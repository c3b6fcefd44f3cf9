# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_bonnie
short_description: Turn bonnie++ output into benchlab result records (one per result)
version_added: 0.1.0
description:
  - Parses bonnie++ output into a list of result records, one per result found, the same shape the
    M(benchlab.bench.bonnie) module returns, without the command and timing fields.
  - Reads the CSV line of bonnie++ 1.03, 1.93-1.97 and 1.98/2.00 (fields mapped by position, as the
    header 2.00a prints is shorter than its data rows) and the text tables of 1.03 (C(K/sec)),
    1.96/1.97 (C(Concurrency) line, C(Latency) rows) and 2.00 (values such as C(358m)), including the
    blank cells of fast mode and several results in one text, such as a mailing-list post.
  - When a run has both, the CSV line wins and the table only fills what the CSV lacks.
  - Metrics are C(seq_output_char), C(seq_output_block), C(seq_rewrite), C(seq_input_char),
    C(seq_input_block) (MB/s, bonnie++'s K is 1024 bytes), C(random_seeks) (seeks/s), C(seq_create),
    C(seq_read), C(seq_delete), C(random_create), C(random_read), C(random_delete) (files/s), each with
    C(<name>_cpu) (%) and, where printed, C(<name>_latency) (ms). C(+++++) gives value null with
    C(too_fast=true) and a warning.
  - Output without any result (empty, garbage, truncated, or bonnie++'s own error) fails with a
    message that quotes the line it could not read or bonnie++'s error.
options:
  _input:
    description: What bonnie++ printed (stdout, stderr, or both), or a text with several results.
    type: str
    required: true
  labels:
    description: Labels to put on every record.
    type: dict
    default: {}
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Run bonnie++ yourself, then parse it
  ansible.builtin.command:
    argv: [bonnie++, -d, /srv/bench/tmp, -s, 8192, -n, 16, -u, nobody, -q]
  register: raw
  changed_when: false

- name: Block write throughput of each result
  ansible.builtin.debug:
    msg: "{{ (raw.stdout ~ raw.stderr) | benchlab.bench.parse_bonnie | map(attribute='metrics.seq_output_block.value') | list }}"
'''

RETURN = r'''
_value:
  description: A list of result records (schema 1), one per bonnie++ result, without C(cmd), C(started) and C(duration_s).
  type: list
  elements: dict
'''

from ansible_collections.benchlab.bench.plugins.module_utils.tools.bonnie import TOOL, BonnieParseError, bonnie_records
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import parse_with


def parse_bonnie(text, labels=None):
    return parse_with('parse_bonnie', TOOL, bonnie_records, BonnieParseError, text, labels=labels)


class FilterModule(object):
    def filters(self):
        return {'parse_bonnie': parse_bonnie}
