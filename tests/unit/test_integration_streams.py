# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make integration`'s streams (Makefile): the tests of INTEGRATION_LAB and INTEGRATION_WIRING run in
two pytest sessions at once, every other one after them in a session of its own (integration-rest
deselects exactly those two lists). A name there that matches no test would silently move a test
into the concurrent step or out of every step: each must name an existing file or test function."""

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _list(makefile, name):
    value = re.search(r'^%s := ((?:.*\\\n)*.*)$' % name, makefile, re.M).group(1)
    return value.replace('\\\n', ' ').split()


def _functions(path):
    tree = ast.parse(path.read_text(encoding='utf-8'))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_every_stream_entry_names_an_existing_test():
    makefile = (REPO / 'Makefile').read_text()
    entries = _list(makefile, 'INTEGRATION_LAB') + _list(makefile, 'INTEGRATION_WIRING')
    assert len(entries) == len(set(entries)) >= 2, entries
    for entry in entries:
        path, _sep, func = entry.partition('::')
        assert path.startswith('tests/integration/test_') and (REPO / path).is_file(), entry
        assert not func or func in _functions(REPO / path), entry


def test_the_rest_deselects_both_streams_and_nothing_else():
    makefile = (REPO / 'Makefile').read_text()
    rest = re.search(r'^integration-rest:.*\n\t(.*)$', makefile, re.M).group(1)
    assert '$(addprefix --deselect ,$(INTEGRATION_LAB) $(INTEGRATION_WIRING))' in rest and ' tests/integration ' in rest
    assert rest.count('--deselect') == 1 and '--ignore' not in rest and ' -k ' not in rest and ' -m ' not in rest
