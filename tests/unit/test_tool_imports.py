# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tool's parser is imported by that tool's own files only: its module, its filter, its benchmark
unit and the rest of its parser (module_utils/<tool>*.py). Generic code asks the unit's hooks
(plugin_utils/toolinfo.py) instead: the histogram rule is the record's (module_utils/stats.py), the
units a tool prints its values in are its unit's ``tool_value``, the files a matrix names are
checked by its unit's ``check_params``."""

from ansible_collections.benchlab.bench.plugins.plugin_utils import toolinfo
from ansible_collections.benchlab.bench.tests.unit.test_import_cycles import PREFIX, REPO, edges


def _stems():
    """{matrix tool: the name stems of its own files}: its name and its records' names (sysbench_fileio
    records say sysbench, bonnie's bonnie++)."""
    out = {}
    for tool, entry in toolinfo.table().items():
        out[tool] = set([tool] + [r.rstrip('+').replace('3', '') for r in entry['records']])
    return out


def owner(module, stems):
    """The tool a module of plugins/ belongs to, or None (generic code)."""
    parts = module[len(PREFIX):].split('.')
    base = parts[-1][len('parse_'):] if parts[-2] == 'filter' and parts[-1].startswith('parse_') else parts[-1]
    for tool, names in stems.items():
        if (parts[-2] == 'benchmarks' and base == tool) or any(base == n or base.startswith(n) for n in names):
            if parts[-2] in ('modules', 'module_utils', 'filter', 'benchmarks'):
                return tool
    return None


def leaks(root=REPO / 'plugins'):
    """[(importer, parser, its tool)] for every import of a tool's parser from a file not of that tool."""
    stems = _stems()
    parsers = dict((m, owner(m, stems)) for m in edges(root) if '.module_utils.' in m and owner(m, stems))
    found = []
    for importer, imported in sorted(edges(root).items()):
        mine = owner(importer, stems)
        for m in sorted(imported):
            if m in parsers and parsers[m] != mine:
                found.append((importer[len(PREFIX):], m[len(PREFIX):], parsers[m]))
    return found


def test_owners_are_found_for_every_tools_parser():
    stems = _stems()
    assert owner(PREFIX + 'plugins.module_utils.fiojob', stems) == 'fio'
    assert owner(PREFIX + 'plugins.module_utils.sysbench', stems) == 'sysbench_fileio'
    assert owner(PREFIX + 'plugins.module_utils.iperf_server', stems) == 'iperf'
    assert owner(PREFIX + 'plugins.filter.parse_bonnie', stems) == 'bonnie'
    assert owner(PREFIX + 'plugins.plugin_utils.benchmarks.dd', stems) == 'dd'
    assert owner(PREFIX + 'plugins.plugin_utils.distributions', stems) is None
    assert owner(PREFIX + 'plugins.module_utils.stats', stems) is None


def test_no_generic_file_imports_a_tools_parser():
    found = leaks()
    assert not found, 'generic code imports a tool\'s parser (ask its unit\'s hooks instead): %s' % found


def test_a_leak_is_found(tmp_path):
    """A copy of plugins/ where render_csv imports bonnie's parser again is caught."""
    import shutil
    root = tmp_path / 'plugins'
    shutil.copytree(str(REPO / 'plugins'), str(root))
    csv_py = root / 'plugin_utils' / 'render_csv.py'
    csv_py.write_text(csv_py.read_text().replace(
        'import csv\n', 'import csv\nfrom ansible_collections.benchlab.bench.plugins.module_utils.bonnie import TOOL\n', 1))
    assert ('plugins.plugin_utils.render_csv', 'plugins.module_utils.bonnie', 'bonnie') in leaks(root)
