# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/safety.md's fio lists are the option table's (plugins/module_utils/tools/fio_options.py): the
engines it allows by default are exactly the table's `files` engines, and the bullet of what needs
`allow_unsafe_options` names every other engine and every option whose kind the check refuses
(host objects, programs, unsafe). A table that gains an engine or a refused option fails here until
the document says where it stands."""

import re
from pathlib import Path

from ansible_collections.benchlab.bench.plugins.module_utils.tools.fio_options import ENGINES, OPTIONS

SAFETY = Path(__file__).resolve().parents[2] / 'docs' / 'safety.md'


def bullet(title):
    """The text of the docs/safety.md bullet that starts with **<title>**, up to the next bullet."""
    text = SAFETY.read_text()
    start = text.index('- **%s' % title)
    end = text.find('\n- ', start + 1)
    return text[start:end]


def names(text):
    return set(re.findall(r'`([\w-]+)`', text))


def test_the_engines_allowed_by_default_are_the_tables_files_engines():
    allowed = names(bullet('Engines').split('. An engine option')[0])
    assert allowed == set(e for e, kind in ENGINES.items() if kind == 'files')


def test_every_other_engine_and_refused_option_needs_allow_unsafe_options():
    unsafe = names(bullet('Need `allow_unsafe_options: true`'))
    engines = set(e for e, kind in ENGINES.items() if kind != 'files')
    options = set(o for o, kind in OPTIONS.items() if kind in ('host', 'program', 'unsafe'))
    assert engines - unsafe == set(), 'docs/safety.md does not say these engines need allow_unsafe_options'
    assert options - unsafe == set(), 'docs/safety.md does not say these options need allow_unsafe_options'
    assert not (unsafe & set(e for e, kind in ENGINES.items() if kind == 'files'))
