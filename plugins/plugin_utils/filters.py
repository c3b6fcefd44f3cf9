# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every parse_* filter does around its module_utils parser: refuse what is not text and turn
the parser's error into an AnsibleFilterError that starts with the filter's name."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError


def parse_with(filter_name, tool, parser, error, text, *args, **kwargs):
    """parser(text, *args, **kwargs), with the filters' error contract."""
    if not isinstance(text, str):
        raise AnsibleFilterError('%s expects the text %s printed, got %s' % (filter_name, tool, type(text).__name__))
    try:
        return parser(text, *args, **kwargs)
    except error as e:
        raise AnsibleFilterError('%s: %s' % (filter_name, e))
