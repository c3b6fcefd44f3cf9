# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_dbench
short_description: Turn dbench's output into a benchlab result record
version_added: 0.1.0
description:
  - Parses what C(dbench) printed (dbench 4 and the shorter final line of dbench 3) into a result
    record with the metrics C(throughput) (MB/s, 10^6 bytes/s, as dbench computes it),
    C(max_latency) (ms, dbench 4 only) and one C(op_<name>_avg_latency) (ms) per row of dbench's
    operation table, names lower-cased (C(op_ntcreatex_avg_latency)). The client count goes into the
    record's labels as C(clients). Same shape as the M(benchlab.bench.dbench) module's records,
    without the command and timing fields.
  - The harmless C(failed to create barrier semaphore) message is ignored. Output in which dbench
    reported an error, a run too short to measure (C(Throughput 0 MB/sec)), or output without the
    final C(Throughput) line fails with the reason and the line concerned.
options:
  _input:
    description: dbench's stdout (stderr appended is fine, and lets dbench's errors be named).
    type: str
    required: true
  test:
    description: The record's C(test). Default is the loadfile's name without C(.txt) (V(client)).
    type: str
  labels:
    description: Labels to put on the record (C(clients) is added).
    type: dict
    default: {}
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Run dbench yourself, then parse it
  ansible.builtin.command:
    argv: [dbench, -t, '60', -D, /srv/bench/db, -c, /usr/share/dbench/client.txt, '8']
  register: raw
  changed_when: false

- name: Throughput in MB/s
  ansible.builtin.debug:
    msg: "{{ (raw.stdout | benchlab.bench.parse_dbench).metrics.throughput.value }}"
'''

RETURN = r'''
_value:
  description: The result record (schema 1) without C(cmd), C(started) and C(duration_s).
  type: dict
'''

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dbench import DbenchParseError, dbench_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import parse_with


def parse_dbench(text, test=None, labels=None):
    return parse_with('parse_dbench', 'dbench', dbench_record, DbenchParseError, text, test=test, labels=labels)


class FilterModule(object):
    def filters(self):
        return {'parse_dbench': parse_dbench}
