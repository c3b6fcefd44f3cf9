# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fio parser: pure functions over ``fio --output-format=json`` output.

fio prints some errors on stdout ahead of the JSON document (``fio: pid=..., err=28/...``) and
marks failed jobs with a non-zero ``error``; both are reported, never parsed as numbers.
Fixtures: tests/unit/fixtures/fio (fio 3.33, with the commands in their README).
"""

import json

from ansible_collections.benchlab.bench.plugins.module_utils.record import metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.runner import tail

DIRECTIONS = ('read', 'write')


class FioParseError(ValueError):
    """fio output that cannot be read, or a fio job that failed; the message says which."""


def parse_fio(text):
    """Split fio output into (document, messages).

    `messages` are the non-JSON lines around the document (fio's own errors and warnings).
    Raises FioParseError when there is no JSON document, quoting the first line found instead.
    """
    if not isinstance(text, str):
        raise FioParseError('fio output must be text, got %s' % type(text).__name__)
    lines = text.splitlines(True)
    offset = 0
    messages = []
    for line in lines:
        if line.startswith('{'):
            break
        if line.strip():
            messages.append(line.strip())
        offset += len(line)
    else:
        first = messages[0] if messages else '(empty output)'
        raise FioParseError('fio printed no JSON document (was --output-format=json given?); first line: %s' % first)
    try:
        doc, end = json.JSONDecoder().raw_decode(text, offset)
    except ValueError as e:
        raise FioParseError('fio JSON output is not valid JSON: %s' % e)
    messages.extend(ln.strip() for ln in text[end:].splitlines() if ln.strip())
    if not isinstance(doc, dict) or not isinstance(doc.get('jobs'), list):
        raise FioParseError("fio JSON output has no 'jobs' list")
    return doc, messages


def fio_version(doc):
    """'fio-3.33' -> '3.33'."""
    v = doc.get('fio version')
    if not isinstance(v, str):
        return None
    return v[4:] if v.startswith('fio-') else v


def _num(d, key, where):
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FioParseError('fio JSON: %s.%s is missing or not a number (%r)' % (where, key, v))
    return float(v)


def _percentile(clat, pct):
    """The clat percentile `pct` (e.g. 99.0) from fio's {'99.000000': ns} map, or None."""
    pcts = clat.get('percentile') if isinstance(clat, dict) else None
    if not isinstance(pcts, dict):
        return None
    for key, value in pcts.items():
        try:
            if abs(float(key) - pct) < 1e-9:
                return float(value)
        except ValueError:
            continue
    return None


def job_metrics(job):
    """Metrics of one fio job (read_/write_ iops, throughput MB/s, lat_mean and lat_p99 in ms).

    fio 3.x reports latencies in ns (lat_ns/clat_ns) and bw_bytes; fio 2.x in us (lat/clat) and
    bw in KiB/s. A direction that moved no data is left out.
    """
    name = job.get('jobname', '?')
    metrics = {}
    for d in DIRECTIONS:
        part = job.get(d)
        if not isinstance(part, dict):
            continue
        where = 'jobs[%s].%s' % (name, d)
        if _num(part, 'io_bytes' if 'io_bytes' in part else 'io_kbytes', where) <= 0:
            continue
        if 'bw_bytes' in part:
            bw = _num(part, 'bw_bytes', where)
        else:
            bw = _num(part, 'bw', where) * 1024.0
        if 'lat_ns' in part:
            lat, clat, scale = part.get('lat_ns') or {}, part.get('clat_ns') or {}, 1e-6
        else:
            lat, clat, scale = part.get('lat') or {}, part.get('clat') or {}, 1e-3
        metrics[d + '_iops'] = metric(_num(part, 'iops', where), 'ops/s', 'higher')
        metrics[d + '_throughput'] = metric(bw / 1e6, 'MB/s', 'higher')
        if 'mean' in lat:
            metrics[d + '_lat_mean'] = metric(_num(lat, 'mean', where + '.lat') * scale, 'ms', 'lower')
        p99 = _percentile(clat, 99.0)
        if p99 is not None:
            metrics[d + '_lat_p99'] = metric(p99 * scale, 'ms', 'lower')
    return metrics


def fio_records(text, labels=None, params=None, warnings=None, **extra):
    """Parse fio JSON output into one result record per job.

    A job with a non-zero error, or output with no job, raises FioParseError naming the job and
    fio's own message.
    """
    doc, messages = parse_fio(text)
    version = fio_version(doc)
    if not doc['jobs']:
        raise FioParseError('fio JSON output lists no jobs%s' % (': ' + '; '.join(messages) if messages else ''))
    records = []
    for i, job in enumerate(doc['jobs']):
        if not isinstance(job, dict):
            raise FioParseError('fio JSON: jobs[%d] is not an object (%r)' % (i, job))
        name = job.get('jobname') or 'fio'
        if job.get('error'):
            raise FioParseError('fio job %s failed with error %s%s' % (
                name, job['error'], (': ' + '; '.join(messages)) if messages else ''))
        metrics = job_metrics(job)
        if not metrics:
            raise FioParseError('fio job %s moved no data' % name)
        if params is None:
            # parse_fio on output of the user's own run: the job's options are all we know
            job_params = dict(job.get('job options') or {})
        else:
            job_params = dict(params)
            if params.get('job_file') and isinstance(job.get('job options'), dict):
                job_params['job_options'] = dict(job['job options'])
        records.append(new_record('fio', name, metrics, tool_version=version, labels=labels,
                                  params=job_params, warnings=list(warnings or []) + messages,
                                  raw_tail=tail('\n'.join(messages)), **extra))
    return records
