# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment(object):
    """Options and attributes every benchmark module shares."""

    DOCUMENTATION = r'''
options:
  labels:
    description:
      - Labels of the matrix cell (platform, storage, ...) copied into the result record. The
        C(benchlab.bench.bench_run) role also sets C(cell) and C(benchmark) here.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    description: Returns C(cmd), the argv that would run, without running or writing anything.
  diff_mode:
    support: none
    description: Nothing to diff.
'''
