"""Every ansible.cfg snippet in the README and docs works as pasted: ansible-core's config parser
strips only ';' inline comments, so a '# ...' after a value becomes part of the value (an
output_dir named with the comment). Comments go on their own line."""
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BLOCK = re.compile(r'^[ \t]*```ini\n(.*?)^[ \t]*```', re.M | re.S)


def doc_files():
    yield os.path.join(REPO, 'README.md')
    for root, _dirs, files in os.walk(os.path.join(REPO, 'docs')):
        for name in files:
            if name.endswith('.md'):
                yield os.path.join(root, name)


def test_no_inline_hash_comment_after_a_value():
    bad = []
    for path in doc_files():
        with open(path, encoding='utf-8') as f:
            text = f.read()
        for block in BLOCK.finditer(text):
            for line in block.group(1).splitlines():
                key, sep, value = line.strip().partition('=')
                if sep and not key.startswith(('#', ';')) and '#' in value:
                    bad.append('%s: %s' % (os.path.relpath(path, REPO), line.strip()))
    assert bad == [], bad


def test_the_check_finds_the_pattern_it_is_for():
    block = BLOCK.search('```ini\n[x]\noutput_dir = ./r   # default\n```\n').group(1)
    assert any('#' in line.partition('=')[2] for line in block.splitlines())
