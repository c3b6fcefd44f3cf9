# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/compress.py copy_input: the file a user names (the field report's data.zip)
is copied byte for byte into the work directory, its SHA-256 and size returned, the original untouched."""

import hashlib
import os

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.compress import CHUNK_CHARS, copy_input


def test_copy_input_copies_bytes_and_returns_their_digest_and_size(tmp_path):
    data = os.urandom(3 * CHUNK_CHARS + 17)  # more than one read block, not a multiple of it
    src = tmp_path / 'data.zip'
    src.write_bytes(data)
    dst = tmp_path / 'work' / 'input.txt'
    dst.parent.mkdir()
    sha, size = copy_input(str(src), str(dst))
    assert (sha, size) == (hashlib.sha256(data).hexdigest(), len(data))
    assert dst.read_bytes() == data
    assert src.read_bytes() == data
    assert oct(dst.stat().st_mode & 0o777) == oct(0o600)


def test_copy_input_never_overwrites_an_existing_file(tmp_path):
    src = tmp_path / 'data.zip'
    src.write_bytes(b'x')
    dst = tmp_path / 'input.txt'
    dst.write_bytes(b'keep')
    with pytest.raises(OSError):
        copy_input(str(src), str(dst))
    assert dst.read_bytes() == b'keep'
