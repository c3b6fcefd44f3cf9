# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_sysbench
short_description: Turn the output of sysbench fileio run into a benchlab result record
version_added: 0.1.0
description:
  - Parses what C(sysbench fileio ... run) printed (sysbench 1.0) into a result record with the
    metrics C(reads_per_s), C(writes_per_s), C(fsyncs_per_s) (ops/s), C(read_throughput),
    C(write_throughput) (MB/s, 10^6 bytes/s; sysbench prints MiB/s, converted here), C(latency_avg)
    and C(latency_p95) (ms), the same shape the M(benchlab.bench.sysbench_fileio) module returns,
    without the command and timing fields. The record's C(test) is the mode (V(rndrw), V(seqrd), ...).
  - Read metrics come with the modes that read, write and fsync metrics with the modes that write.
    A latency printed as C(0.00) is below sysbench's resolution and is recorded as too fast to
    measure (value null), with a warning.
  - Every record warns that sysbench writes buffers of zero bytes, which zero-eliding storage can
    turn into inflated write results.
  - A C(FATAL) message, the output of C(prepare) or C(cleanup), or output without the report fails
    with the reason and the line concerned.
options:
  _input:
    description: The stdout of C(sysbench fileio ... run).
    type: str
    required: true
  test:
    description: The record's C(test); default is the mode sysbench reports.
    type: str
  labels:
    description: Labels to put on the record.
    type: dict
    default: {}
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Run sysbench yourself, then parse it
  ansible.builtin.command:
    argv: [sysbench, fileio, --file-total-size=4G, --file-test-mode=rndrw, --time=60, run]
    chdir: /srv/bench/sb
  register: raw
  changed_when: false

- name: Read throughput in MB/s
  ansible.builtin.debug:
    msg: "{{ (raw.stdout | benchlab.bench.parse_sysbench).metrics.read_throughput.value }}"
'''

RETURN = r'''
_value:
  description: The result record (schema 1) without C(cmd), C(started) and C(duration_s).
  type: dict
'''

from ansible_collections.benchlab.bench.plugins.module_utils.tools.sysbench import TOOL, SysbenchParseError, sysbench_record
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import parse_with


def parse_sysbench(text, test=None, labels=None):
    return parse_with('parse_sysbench', TOOL, sysbench_record, SysbenchParseError, text, test=test, labels=labels)


class FilterModule(object):
    def filters(self):
        return {'parse_sysbench': parse_sysbench}
