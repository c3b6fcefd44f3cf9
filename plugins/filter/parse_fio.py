# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: parse_fio
short_description: Turn fio's JSON output into benchlab result records
version_added: 0.1.0
description:
  - Parses the output of C(fio --output-format=json) (or C(json+)) into a list of result records, one
    per job, with the metrics C(read_iops), C(read_throughput) (MB/s), C(read_lat_mean) and
    C(read_lat_p99) (ms), and the same for C(write_) — the shape the M(benchlab.bench.fio) module
    returns.
  - A job is its name within its stonewall group. Its C(numjobs) workers, which fio lists one by one
    without C(group_reporting), are one record - their aggregate as fio's C(group_reporting) computes
    it (p99 from the merged latency histogram of C(json+), else the worst worker's) - with each
    worker's figures in the record's C(workers.detail). With C(json+) the record also keeps the merged
    completion-latency histogram per direction (C(distributions.read_clat), C(distributions.write_clat)).
  - fio error lines printed ahead of the JSON document and jobs with a non-zero C(error) fail with
    fio's message instead of producing numbers.
options:
  _input:
    description: fio's stdout.
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
- name: Parse a fio run made by hand
  ansible.builtin.debug:
    msg: "{{ (fio_out.stdout | benchlab.bench.parse_fio)[0].metrics.read_iops.value }}"
'''

RETURN = r'''
_value:
  description: A list of result records (schema 1), one per fio job (aggregated over its workers).
  type: list
  elements: dict
'''

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio import FioParseError, fio_records
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.filters import parse_with


def parse_fio(text, labels=None):
    return parse_with('parse_fio', 'fio', fio_records, FioParseError, text, labels=labels)


class FilterModule(object):
    def filters(self):
        return {'parse_fio': parse_fio}
