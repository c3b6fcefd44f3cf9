# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Private to benchlab.bench: no API promise.
"""The fio parser: pure functions over ``fio --output-format=json`` output.

fio prints some errors on stdout ahead of the JSON document (``fio: pid=..., err=28/...``) and
marks failed jobs with a non-zero ``error``; both are reported, never parsed as numbers.
Fixtures: tests/unit/fixtures/fio (fio 3.33, with the commands in their README).
"""

import json
import math
import os
import re

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fiojob import split_names
from ansible_collections.benchlab.bench.plugins.module_utils.run.record import is_number, metric, new_record
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import tail
from ansible_collections.benchlab.bench.plugins.module_utils.analysis.stats import histogram_percentile

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
    if not is_number(v):
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
    """Metrics of one fio job entry (read_/write_ iops, throughput MB/s, lat_mean and lat_p99 in ms).

    fio 3.x reports latencies in ns (lat_ns/clat_ns) and bw_bytes; fio 2.x in us (lat/clat) and
    bw in KiB/s. A direction that moved no data is left out.
    """
    return group_metrics([job])[0]


def _lat_parts(part):
    if 'lat_ns' in part:
        return part.get('lat_ns') or {}, part.get('clat_ns') or {}, 1e-6
    return part.get('lat') or {}, part.get('clat') or {}, 1e-3


def _io_bytes(part, where):
    if 'io_bytes' in part:
        return _num(part, 'io_bytes', where)
    return _num(part, 'io_kbytes', where) * 1024.0


def _bins(clat):
    """fio json+'s latency histogram {bucket value: count} as {float: int}, or None (absent or unreadable)."""
    raw = clat.get('bins') if isinstance(clat, dict) else None
    if not isinstance(raw, dict):
        return None
    out = {}
    try:
        for k, v in raw.items():
            key = float(k)
            # a latency below zero or not finite, or a count not finite, is no histogram of fio's
            if not is_number(v) or not math.isfinite(v) or v < 0 \
                    or not math.isfinite(key) or key < 0:
                return None
            out[key] = out.get(key, 0) + int(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return out


def _direction(entries, d, names):
    """The aggregate of direction `d` over `entries` (the workers of one job), fio's group_reporting
    arithmetic (stat.c sum_thread_stats): I/O and operation counts summed over the workers and divided
    by the longest worker's runtime; the latency mean weighted by each worker's sample count; p99 from
    the merged clat histogram (fio's json+ `bins`), else the worst worker's p99. Returns
    (metrics, note) or (None, None) when the direction moved no data."""
    parts = []
    for job, name in zip(entries, names):
        part = job.get(d)
        if not isinstance(part, dict):
            continue
        where = 'jobs[%s].%s' % (name, d)
        if _io_bytes(part, where) > 0:
            parts.append((part, where))
    if not parts:
        return None, None
    bw, iops = _direction_rates(parts, single=len(parts) == 1 and len(entries) == 1)
    out = {d + '_iops': metric(iops, 'ops/s', 'higher'), d + '_throughput': metric(bw / 1e6, 'MB/s', 'higher')}
    lats = [(_lat_parts(p), w) for p, w in parts]
    scale = lats[0][0][2]
    mean = _direction_lat_mean(lats, parts)
    if mean is not None:
        out[d + '_lat_mean'] = metric(mean * scale, 'ms', 'lower')
    p99, note = _direction_p99([clat for (lat, clat, sc), w in lats], d)
    if p99 is not None:
        out[d + '_lat_p99'] = metric(p99 * scale, 'ms', 'lower')
    return out, note


def group_histograms(entries):
    """{read_clat, write_clat: latency_histogram} of one job over its workers (the directions that
    moved data and carry json+ bins)."""
    out = {}
    for d in DIRECTIONS:
        parts = [job.get(d) for job in entries if isinstance(job.get(d), dict)]
        parts = [p for p in parts if (p.get('io_bytes') or p.get('io_kbytes') or 0) > 0]
        if not parts:
            continue
        lats = [_lat_parts(p) for p in parts]
        hist = latency_histogram([clat for _lat, clat, _sc in lats], lats[0][2])
        if hist:
            out[d + '_clat'] = hist
    return out


def _direction_rates(parts, single):
    """(bytes/s, ops/s) of the workers' parts of one direction: one worker's own figures; several
    summed over the longest runtime (or their own rates summed when fio gave no runtimes)."""
    if single:
        part, where = parts[0]
        bw = _num(part, 'bw_bytes', where) if 'bw_bytes' in part else _num(part, 'bw', where) * 1024.0
        return bw, _num(part, 'iops', where)
    io = sum(_io_bytes(p, w) for p, w in parts)
    runtimes = [p.get('runtime') for p, _skip in parts]
    if all(is_number(r) for r in runtimes) and max(runtimes) > 0:
        runtime_s = max(runtimes) / 1000.0
        if all('total_ios' in p for p, _skip in parts):
            iops = sum(_num(p, 'total_ios', w) for p, w in parts) / runtime_s
        else:
            iops = sum(_num(p, 'iops', w) for p, w in parts)
        return io / runtime_s, iops
    # no runtimes: the sum of the workers' own rates
    bw = sum(_num(p, 'bw_bytes', w) if 'bw_bytes' in p else _num(p, 'bw', w) * 1024.0 for p, w in parts)
    return bw, sum(_num(p, 'iops', w) for p, w in parts)


def _direction_lat_mean(lats, parts):
    """The latency mean (in the parts' own unit) weighted by each worker's sample count, or None."""
    means = [(lat, w, p) for ((lat, clat, sc), w), (p, _skip) in zip(lats, parts) if 'mean' in lat]
    if not means:
        return None
    if len(means) == 1:
        lat, w, p = means[0]
        return _num(lat, 'mean', w + '.lat')
    weights = []
    for lat, w, p in means:
        n = lat.get('N')
        if not is_number(n):
            n = p.get('total_ios', 0)
        weights.append(float(n or 0))
    total = sum(weights)
    if total <= 0:
        return None
    return sum(_num(lat, 'mean', w + '.lat') * n for (lat, w, p), n in zip(means, weights)) / total


def merged_bins(clats):
    """The workers' json+ histograms {bucket value: count} summed, or None when one has none."""
    bins = [_bins(c) for c in clats]
    if not bins or any(b is None for b in bins):
        return None
    merged = {}
    for b in bins:
        for k, v in b.items():
            merged[k] = merged.get(k, 0) + v
    return merged


def latency_histogram(clats, scale):
    """The record's distributions entry of a direction: the completion-latency histogram merged over
    the workers, compactly ({kind, of, unit, values, counts}: the buckets with a count, in order), or
    None without json+ bins. scale: the parts' latency unit in ms (1e-6 for fio 3's ns)."""
    merged = merged_bins(clats)
    if not merged:
        return None
    items = sorted((k, v) for k, v in merged.items() if v > 0)
    if not items:
        return None
    unit = 'ns' if scale == 1e-6 else 'us'
    values = [int(k) if float(k).is_integer() else k for k, _v in items]
    return {'kind': 'histogram', 'of': 'completion latency', 'unit': unit, 'values': values,
            'counts': [v for _k, v in items]}


def _direction_p99(clats, d):
    """(p99, note): one worker's p99, the p99 of the merged histograms, else the worst worker's
    with a note saying so."""
    if len(clats) == 1:
        return _percentile(clats[0], 99.0), None
    merged = merged_bins(clats)
    if merged is not None:
        return histogram_percentile(merged, 99.0), None
    found = [v for v in (_percentile(c, 99.0) for c in clats) if v is not None]
    p99 = max(found) if found else None
    if p99 is None:
        return None, None
    return p99, ('%s_lat_p99 is the worst worker\'s p99 (fio printed no latency histogram to merge: '
                 '--output-format=json+ has it)' % d)


def group_metrics(entries, names=None):
    """(metrics, notes) of one job aggregated over its workers (fio JSON entries of the same job)."""
    names = names or [str(e.get('jobname', '?')) for e in entries]
    metrics, notes = {}, []
    for d in DIRECTIONS:
        m, note = _direction(entries, d, names)
        if m:
            metrics.update(m)
        if note:
            notes.append(note)
    return metrics, notes


def _int_option(options, key):
    try:
        return int(str(options.get(key)).strip())
    except (TypeError, ValueError):
        return None


def job_groups(doc):
    """fio's JSON jobs grouped into the measurements: [(test name, groupid, [entries])], in fio's
    order. fio lists every worker (numjobs clones, which share the job name) as an entry of its own
    unless group_reporting merged them: entries with the same job name and group id are one job."""
    groups = []
    index = {}
    for i, job in enumerate(doc['jobs']):
        if not isinstance(job, dict):
            raise FioParseError('fio JSON: jobs[%d] is not an object (%r)' % (i, job))
        name = str(job.get('jobname') or 'fio')
        gid = job.get('groupid')
        if not isinstance(gid, int) or isinstance(gid, bool):
            gid = str(gid)
        key = (gid, name)
        if key not in index:
            index[key] = len(groups)
            groups.append([name, gid, []])
        groups[index[key]][2].append(job)
    seen = {}
    for g in groups:
        seen[g[0]] = seen.get(g[0], 0) + 1
    for g in groups:
        if seen[g[0]] > 1:      # the same job name in several stonewall groups
            g[0] = '%s.g%s' % (g[0], g[1])
    return [tuple(g) for g in groups]


def _workers(entries, options, names):
    """The record's `workers` part: how many ran at once and each one's figures (or None for one)."""
    numjobs = _int_option(options, 'numjobs') or 1
    if len(entries) > 1:
        detail = []
        for job, name in zip(entries, names):
            m, _skip = group_metrics([job], [name])
            detail.append({'name': name, 'metrics': dict((k, v['value']) for k, v in sorted(m.items()))})
        return {'count': len(entries), 'kind': 'fio numjobs', 'aggregate': AGGREGATE, 'detail': detail}
    if numjobs > 1:
        return {'count': numjobs, 'kind': 'fio numjobs', 'aggregate': 'fio group_reporting (fio merged the workers)'}
    return None


AGGREGATE = ('iops and throughput: I/O of all workers / the longest worker\'s runtime (fio group_reporting); '
             'lat_mean weighted by I/O count; lat_p99 from the merged latency histogram')


def fio_records(text, labels=None, params=None, warnings=None, job_options=None, **extra):
    """Parse fio JSON output into one result record per job (job name within its stonewall group),
    aggregated over the job's workers (numjobs) as fio's group_reporting does; the workers' own
    figures are the record's `workers.detail`.

    A job with a non-zero error, or output with no job, raises FioParseError naming the job and
    fio's own message. `job_options` ({job section: options}, effective_job_options of the job file
    that ran) gives each record's options; otherwise fio's JSON does (without its bare flags).
    """
    doc, messages = parse_fio(text)
    version = fio_version(doc)
    if not doc['jobs']:
        raise FioParseError('fio JSON output lists no jobs%s' % (': ' + '; '.join(messages) if messages else ''))
    global_options = doc.get('global options') if isinstance(doc.get('global options'), dict) else {}
    groups = job_groups(doc)
    by_group = {}
    for name, gid, entries in groups:
        by_group.setdefault(gid, []).append(name)
    records = []
    for name, gid, entries in groups:
        for job in entries:
            if job.get('error'):
                raise FioParseError('fio job %s failed with error %s%s' % (
                    name, job['error'], (': ' + '; '.join(messages)) if messages else ''))
        names = ['%s.%d' % (name, i) for i in range(len(entries))] if len(entries) > 1 else [name]
        metrics, notes = group_metrics(entries, names)
        if not metrics:
            raise FioParseError('fio job %s moved no data' % name)
        options = dict(global_options)
        if isinstance(entries[0].get('job options'), dict):
            options.update(entries[0]['job options'])
        if job_options and entries[0].get('jobname') in job_options:
            options = dict(job_options[entries[0]['jobname']])
        if params is None:
            # parse_fio on output of the user's own run: the job's options are all we know
            job_params = options
        else:
            job_params = dict(params)
            if params.get('job_file') or params.get('job_file_content'):
                job_params['job_options'] = options
        rec_warnings = list(warnings or []) + messages + notes
        others = [n for n in by_group[gid] if n != name]
        if others:
            rec_warnings.append('job %s ran at the same time as %s (same group, no stonewall): its figures are its '
                                'own share of the storage' % (name, ', '.join(others)))
        rec = new_record('fio', name, metrics, tool_version=version, labels=labels,
                         params=job_params, warnings=rec_warnings,
                         raw_tail=tail('\n'.join(messages)), **extra)
        workers = _workers(entries, options, names)
        if workers:
            rec['workers'] = workers
        histograms = group_histograms(entries)
        if histograms:
            rec['distributions'] = histograms
        records.append(rec)
    return records


# -- job files ----------------------------------------------------------------------------------

def _escapes(name, workdir):
    """Whether `name` (as fio joins it to its current directory, the work directory) lies outside it."""
    if os.path.isabs(name):
        return True
    root = os.path.normpath(workdir)
    path = os.path.normpath(os.path.join(root, name))
    return not (path == root or path.startswith(root.rstrip('/') + '/'))


def _device_name(name):
    norm = os.path.normpath(name)
    return norm.startswith('/dev/') and not (norm == '/dev/shm' or norm.startswith('/dev/shm/'))


def _join_names(names):
    return ':'.join(n.replace(':', '\\:') for n in names)


def job_file_in_workdir(sections, workdir, origin='job file'):
    """A job file's sections (fiojob.parse_job_file) with what would land outside the work directory
    moved into it, and what makes fio merge the workers dropped. Returns (sections, notes).

    - ``directory=`` outside the work directory is removed: the job's files go to the work
      directory (fio's current directory) instead;
    - a ``filename=`` name or a ``filename_format=`` outside it keeps only its last component, in the
      work directory; device names (/dev/...) are left for the device guard;
    - ``group_reporting`` is dropped: benchlab aggregates the workers itself (the same arithmetic)
      and keeps each worker's figures as the record's detail.
    The work directory is removed after the run, with everything fio created in it."""
    out, notes = [], []
    for section, values, lines in sections:
        values, lines = dict(values), dict(lines)

        def where(key):
            return '%s line %s ([%s]): %s' % (origin, lines.get(key) or '?', section, key)

        if 'group_reporting' in values:
            del values['group_reporting']
            lines.pop('group_reporting', None)
        if values.get('directory'):
            names = split_names(values['directory'])
            kept = [d for d in names if not _escapes(d, workdir)]
            if kept != names:
                notes.append('%s=%s is outside the work directory: the job ran in the work directory under the '
                             'module\'s path instead, and nothing was written there' % (where('directory'), values['directory']))
                if kept:
                    values['directory'] = _join_names(kept)
                else:
                    del values['directory']
                    lines.pop('directory', None)
        for key in ('filename', 'filename_format'):
            if not values.get(key):
                continue
            names = split_names(values[key]) if key == 'filename' else [values[key]]
            moved = [n if (_device_name(n) or not _escapes(n, workdir)) else
                     (os.path.basename(os.path.normpath(n)) or 'benchlab.data') for n in names]
            if moved != names:
                notes.append('%s=%s is outside the work directory: fio wrote %s in the work directory instead'
                             % (where(key), values[key], _join_names(moved)))
                values[key] = _join_names(moved) if key == 'filename' else moved[0]
        out.append((section, values, lines))
    return out, notes


def job_file_text(sections):
    """Sections back to a fio job file (comments are gone; values as fio read them)."""
    lines = []
    for section, values, _lines in sections:
        lines.append('[%s]' % section)
        for key, value in values.items():
            lines.append(key if value is None else '%s=%s' % (key, value))
        lines.append('')
    return '\n'.join(lines)


def effective_job_options(sections):
    """{job name (its section, or its name=): its options with the [global] ones above it}, as fio applies them."""
    inherited, out = {}, {}
    for section, values, _lines in sections:
        if section.startswith('global'):
            inherited.update(values)
            continue
        eff = dict(inherited, **values)
        out[eff.get('name') or section] = eff
    return out


_PARSE_PROBLEM = (re.compile(r'failed parsing (\w+)='), re.compile(r'Bad option <(\w+)'),
                  re.compile(r'failed to parse option (\w+)'))


def parse_only_problem(output, sections, origin):
    """fio --parse-only's complaint as a message naming the file, line and option, or None.

    fio names the option (``fio: failed parsing rw=raed``, ``Bad option <blocksizee=4k>``) but not the
    line; the parsed sections give it."""
    text = (output or '').strip()
    if not text:
        return None
    for pattern in _PARSE_PROBLEM:
        m = pattern.search(text)
        if not m:
            continue
        key = m.group(1)
        for section, values, lines in sections:
            if key in values:
                return '%s line %s ([%s]): %s%s: fio refuses it: %s' % (
                    origin, lines.get(key) or '?', section, key, '' if values[key] is None else '=' + values[key],
                    ' '.join(text.split())[:400])
    return '%s: fio refuses the job file: %s' % (origin, ' '.join(text.split())[:400])
