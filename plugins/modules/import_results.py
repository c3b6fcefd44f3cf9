#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: import_results
short_description: Import the raw outputs of hand-run benchmarks as a benchlab run
version_added: 0.1.0
description:
  - Reads an import manifest (YAML, validated against the collection's C(import-manifest-v1.json)
    schema; every error names the entry index and the field), parses every entry's raw output with
    the collection's parser for its tool (the same code the modules and the C(parse_*) filters use)
    and returns the result records with a C(bench_plan) fact (matrix name, cells, baseline, pivot),
    which the C(benchlab.bench.report) callback turns into a normal run (C(results.jsonl),
    C(results.json), C(results.csv), C(report.md), C(report.html), C(plan.json)) stored in the
    history, so C(benchlab.bench.compare) compares it with any other run.
  - "Tools: V(dd) (coreutils 8.x/9.x wording, or old output with only the records lines and a C(time)
    transcript: O(manifest) entries give C(bs), and C(sync_after) to count the final C(time sync)),
    V(bonnie++) (text tables of 1.03 to 2.00, or the CSV line), V(dbench), V(sysbench) (fileio),
    V(fio) (JSON), V(iperf) (2.0.x/2.1 text or CSV, or iperf3 JSON), V(iperf3) and V(time) (bash,
    C(time -p), GNU time; each block is one repetition, recorded as tool C(compress) with C(elapsed),
    C(user), C(sys), and C(throughput) when the entry gives the input C(bytes))."
  - "Manifest keys: C(name) (the run's matrix name), C(baseline) (a cell; default the first entry's),
    C(pivot) and C(baseline_by) (labels, as in a matrix), C(host) (default C(imported)), C(source)
    (where the outputs come from) and C(entries): each with C(cell), C(tool), optional C(test),
    C(labels), C(params), C(host), C(tool_version), C(benchmark), and the output as C(file) (relative
    to the manifest) or C(text) (inline). Entries with the same cell, tool and test are repetitions."
  - Every entry is parsed before anything is returned. An output that does not parse fails the task
    with a message naming the entry, its file and its first line, and nothing is stored.
  - "What is read is confined: an entry's C(file) must be a regular file of at most 16 MiB under the
    manifest's directory, after resolving C(..) and symlinks. A path outside it, anything under
    C(/dev), C(/proc) or C(/sys), a FIFO, a socket, a device or a directory is refused naming the
    entry and the path, and nothing of it is read (or quoted). Files are opened without blocking and
    read in bounded chunks. The manifest itself must be a regular file of at most 16 MiB outside
    C(/dev), C(/proc) and C(/sys)."
  - Each record says it was imported (C(params.imported), C(params.source), C(params.entry)) and
    carries the manifest's host (C(imported) by default). Imported runs have no environment
    (sysinfo); the reports say so.
  - The action runs on the controller; C(benchlab.bench.import) (C(playbooks/import.yml)) wraps it.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  manifest:
    description: Path of the import manifest on the controller; the files its entries name are read from its directory.
    type: path
    required: true
attributes:
  check_mode:
    support: full
    description: Reads and parses every entry (errors are found); in check mode the report callback stores nothing.
  diff_mode:
    support: none
    description: Nothing to diff.
  action:
    support: full
    description: An action plugin of the same name does the work on the controller.
seealso:
  - plugin: benchlab.bench.report
    plugin_type: callback
  - module: benchlab.bench.compare_runs
'''

EXAMPLES = r'''
- name: Import last year's hand runs as a run of the history
  benchlab.bench.import_results:
    manifest: imports/kvm-versions-2009.yml

# imports/kvm-versions-2009.yml:
# name: kvm-versions-2009
# baseline: "kvm-72 seq-read"
# pivot: build
# entries:
#   - {cell: "kvm-72 seq-read", tool: dd, test: read, labels: {build: kvm-72}, file: raw/a.txt}
#   - {cell: "kvm-72 bridged host-vm", tool: iperf, labels: {build: kvm-72, net: bridged}, file: raw/b.txt}
'''

RETURN = r'''
bench_results:
  description: The result records (schema 1), one per result found in the outputs, in manifest order.
  returned: success
  type: list
  elements: dict
bench_result_hosts:
  description: The host of each record of RV(bench_results) (the manifest's, or C(imported)).
  returned: success
  type: list
  elements: str
ansible_facts:
  description: C(bench_plan) - the plan the report callback reads (name, baseline, pivot, cells, benchmarks, no runs).
  returned: success
  type: dict
'''
