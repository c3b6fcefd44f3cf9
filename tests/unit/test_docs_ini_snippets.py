# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every ansible.cfg snippet in the README and docs works as pasted. ansible-core's config reader
(ansible/config/manager.py: configparser with inline_comment_prefixes=(';',)) strips only ';'
inline comments, so a '# ...' after a value becomes part of the value (an output_dir named with
the comment). Each ```ini block is read by ansible-core's own ConfigManager, as a user's ansible.cfg
would be; comments go on their own line."""

import ast
import configparser
import os
import re
import tempfile
import textwrap

import pytest
import yaml
from ansible.config.manager import ConfigManager

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A fenced ini block (```ini, ```cfg or ```dosini, or an info string naming ansible.cfg),
# indented or not (the README's sits in a list item).
BLOCK = re.compile(r'^([ \t]*)```[ \t]*(?:ini|cfg|dosini|[^\n]*ansible\.cfg)[^\n]*\n(.*?)^[ \t]*```', re.M | re.S)
REPORT_CALLBACK = os.path.join(REPO, 'plugins', 'callback', 'report.py')
with open(REPORT_CALLBACK, encoding='utf-8') as _f:
    REPORT_OPTIONS = yaml.safe_load(next(
        node.value.value for node in ast.parse(_f.read()).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', None) == 'DOCUMENTATION'))['options']


def _snippets():
    paths = ['README.md'] + sorted(os.path.join('docs', n) for n in os.listdir(os.path.join(REPO, 'docs')) if n.endswith('.md'))
    for path in paths:
        with open(os.path.join(REPO, path), encoding='utf-8') as f:
            text = f.read()
        for block in BLOCK.finditer(text):
            line = text.count('\n', 0, block.start()) + 1
            # The fence's indent is the markdown's, not the file's (configparser takes an indented line for a continuation).
            body = ''.join(ln[len(block.group(1)):] if ln.startswith(block.group(1)) else ln
                           for ln in block.group(2).splitlines(True))
            yield pytest.param(body, id='%s:%d' % (path, line))


SNIPPETS = list(_snippets())


def ansible_reads(snippet):
    """What ansible-core reads from `snippet` saved as an ansible.cfg: {'section.key': value} for every
    key set, each read by ConfigManager.get_config_value (as a plugin option of type str, which is how
    a plugin gets an ini value), and 'report output_dir': the report callback's output_dir as the
    callback gets it (its own option definition; a path, relative to the directory of ansible.cfg),
    None when the snippet does not set it. The environment variable of output_dir must be unset."""
    names = configparser.ConfigParser(interpolation=None)  # section and key names only, never values
    names.read_string(snippet)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, 'ansible.cfg')
        with open(cfg, 'w', encoding='utf-8') as f:
            f.write(snippet)
        manager = ConfigManager(conf_file=cfg)
        options = {'%s.%s' % (s, k): {'type': 'str', 'ini': [{'section': s, 'key': k}]} for s in names.sections() for k in names[s]}
        manager.initialize_plugin_configuration_definitions('callback', 'docs_snippet', options)
        values = {o: manager.get_config_value(o, plugin_type='callback', plugin_name='docs_snippet') for o in options}
        manager.initialize_plugin_configuration_definitions('callback', 'benchlab.bench.report', REPORT_OPTIONS)
        output_dir = None
        if names.has_option('callback_benchlab_report', 'output_dir'):
            output_dir = os.path.relpath(manager.get_config_value(
                'output_dir', plugin_type='callback', plugin_name='benchlab.bench.report'), tmp)
    values['report output_dir'] = output_dir
    return values


@pytest.fixture(autouse=True)
def _no_report_dir_env(monkeypatch):
    monkeypatch.delenv('BENCHLAB_REPORT_DIR', raising=False)


def test_the_docs_have_the_snippets():
    ids = [p.id for p in SNIPPETS]
    assert any(i.startswith('README.md:') for i in ids), ids
    assert any(i.startswith('docs/usage.md:') for i in ids), ids


@pytest.mark.parametrize('snippet', SNIPPETS)
def test_ansible_reads_no_comment_into_a_value(snippet):
    values = ansible_reads(snippet)
    assert len(values) > 1, snippet
    assert {k: v for k, v in values.items() if v is not None and '#' in v} == {}


def test_the_readme_output_dir_is_bench_reports():
    readme = [p.values[0] for p in SNIPPETS if p.id.startswith('README.md:')]
    assert [ansible_reads(s)['report output_dir'] for s in readme if 'output_dir' in s] == ['bench-reports']


@pytest.mark.parametrize('line, output_dir', [
    # the README's old line: the comment became part of the directory's name
    ('output_dir = ./bench-reports   # default ./benchlab-runs', 'bench-reports   # default ./benchlab-runs'),
    ('output_dir = ./bench-reports # or BENCHLAB_REPORT_DIR', 'bench-reports # or BENCHLAB_REPORT_DIR'),
    ('output_dir = ./bench-reports', 'bench-reports'),
    ('output_dir = ./bench-reports   ; ansible-core strips this one', 'bench-reports'),
    ('# a comment on its own line\noutput_dir = ./bench-reports', 'bench-reports'),
])
def test_the_check_tells_a_broken_snippet(line, output_dir):
    values = ansible_reads(textwrap.dedent('''\
        [defaults]
        callbacks_enabled = benchlab.bench.report

        [callback_benchlab_report]
        ''') + line + '\n')
    assert values['report output_dir'] == output_dir
    assert ('#' in values['callback_benchlab_report.output_dir']) == ('#' in output_dir)
