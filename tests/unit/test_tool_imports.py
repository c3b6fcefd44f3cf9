# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tool's parser is imported by that tool's own files only (its module, its filter, its benchmark
unit and the rest of its parser: module_utils/tools/<tool>*.py), and generic code names no tool in its
code (an identifier or a string that is a tool's name; prose in messages and docs may give a tool as
an example). Generic code asks the unit's hooks
(plugin_utils/common/toolinfo.py) instead: the histogram rule is the record's (module_utils/analysis/stats.py), the
units a tool prints its values in are its unit's ``tool_value``, the files a matrix names are
checked by its unit's ``check_params``."""

import ast
import io
import tokenize

from ansible_collections.benchlab.bench.plugins.plugin_utils.common import toolinfo
from ansible_collections.benchlab.bench.tests.unit.test_import_cycles import PREFIX, REPO, edges, module_name


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
            if parts[-2] in ('modules', 'tools', 'filter', 'benchmarks'):
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
    assert owner(PREFIX + 'plugins.module_utils.tools.fiojob', stems) == 'fio'
    assert owner(PREFIX + 'plugins.module_utils.tools.sysbench', stems) == 'sysbench_fileio'
    assert owner(PREFIX + 'plugins.module_utils.tools.iperf_server', stems) == 'iperf'
    assert owner(PREFIX + 'plugins.filter.parse_bonnie', stems) == 'bonnie'
    assert owner(PREFIX + 'plugins.plugin_utils.benchmarks.dd', stems) == 'dd'
    assert owner(PREFIX + 'plugins.plugin_utils.analysis.distributions', stems) is None
    assert owner(PREFIX + 'plugins.module_utils.analysis.stats', stems) is None


def test_no_generic_file_imports_a_tools_parser():
    found = leaks()
    assert not found, 'generic code imports a tool\'s parser (ask its unit\'s hooks instead): %s' % found


def test_a_leak_is_found(tmp_path):
    """A copy of plugins/ where render_csv imports bonnie's parser again is caught."""
    import shutil
    root = tmp_path / 'plugins'
    shutil.copytree(str(REPO / 'plugins'), str(root))
    csv_py = root / 'plugin_utils' / 'report' / 'render_csv.py'
    csv_py.write_text(csv_py.read_text().replace(
        'import csv\n', 'import csv\nfrom ansible_collections.benchlab.bench.plugins.module_utils.tools.bonnie import TOOL\n', 1))
    assert ('plugins.plugin_utils.report.render_csv', 'plugins.module_utils.tools.bonnie', 'bonnie') in leaks(root)


def _tool_names():
    """{name, lower case: its matrix tool} of every tool and every record's tool name."""
    out = {}
    for tool, entry in toolinfo.table().items():
        for name in [tool] + list(entry['records']):
            out[name.lower()] = tool
    return out


def named(path, names):
    """[(line, tool, token)] where a file's code names a tool: an identifier that is a tool's name or
    starts with it and '_' (not an attribute: zlib.compress is no tool), or a string constant that is
    exactly a tool's name."""
    found, prev = [], None
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding='utf-8')).readline):
        hit = None
        if tok.type == tokenize.NAME and not (prev is not None and prev.string == '.'):
            low = tok.string.lower()
            hit = next((t for n, t in names.items() if low == n or low.startswith(n + '_')), None)
        elif tok.type == tokenize.STRING:
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                value = None
            hit = names.get(value.lower()) if isinstance(value, str) else None
        if hit:
            found.append((tok.start[0], hit, tok.string))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            prev = tok
    return found


def name_leaks(root=REPO / 'plugins'):
    """[(file, line, tool, token)] for every place generic code (a file of no tool) names a tool."""
    stems, names = _stems(), _tool_names()
    out = []
    for path in sorted(root.rglob('*.py')):
        if owner(module_name(path, root.parent), stems) is None:
            out.extend((str(path.relative_to(root.parent)),) + hit for hit in named(path, names))
    return out


def test_no_generic_file_names_a_tool_in_its_code():
    found = name_leaks()
    assert not found, 'generic code names a tool (ask its unit\'s hooks instead): %s' % found


def test_a_named_tool_is_found(tmp_path):
    """A copy of plugins/ where the explanation asks for dd by name again, and where module_utils
    holds fio's option list again, is caught; an attribute of the same name (zlib.compress) is not."""
    import shutil
    root = tmp_path / 'plugins'
    shutil.copytree(str(REPO / 'plugins'), str(root))
    explain = root / 'plugin_utils' / 'explain' / 'explain.py'
    explain.write_text(explain.read_text() + "\n\ndef is_dd(rec):\n    return rec.get('tool') == 'dd'\n")
    codes = root / 'module_utils' / 'run' / 'trapcodes.py'
    codes.write_text(codes.read_text() + "\nFIO_COMPRESSIBLE = ('zero_buffers',)\nzlib.compress(b'')\n")
    found = [(f, tool, token) for f, _line, tool, token in name_leaks(root)]
    assert ('plugins/plugin_utils/explain/explain.py', 'dd', "'dd'") in found
    assert ('plugins/module_utils/run/trapcodes.py', 'fio', 'FIO_COMPRESSIBLE') in found
    assert not [t for t in found if t[2] == 'compress'], found
