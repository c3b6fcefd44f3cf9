"""The private libvirtd's own safety, without starting a guest (libvirtd_lab.py).

A lab whose libvirtd failed before `unshare` made its namespaces saw the machine's own mount
namespace under its pid, and its stop() then killed every process of the machine's namespace (it
happened: a lab directory too deep for libvirtd's unix socket). Now it kills nothing then, and a
too-deep directory is refused before anything starts."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import libvirtd_lab  # noqa: E402  pylint: disable=wrong-import-position


def test_a_lab_that_never_left_this_namespace_kills_nothing(tmp_path):
    lab = libvirtd_lab.Libvirtd(tmp_path)
    lab.pid = os.getpid()  # as seen before unshare: the lab's pid in the machine's namespace
    lab._mnt_ns = os.stat('/proc/self/ns/mnt').st_ino  # pylint: disable=protected-access
    assert lab.ns_pids() == []
    lab._mnt_ns = None  # pylint: disable=protected-access
    assert lab.ns_pids() == []


def test_a_lab_directory_too_deep_for_the_socket_is_refused_before_anything_starts(tmp_path):
    deep = tmp_path / ('d' * 120)
    lab = libvirtd_lab.Libvirtd(deep)
    with pytest.raises(ValueError, match='too deep.*libvirt-admin-sock'):
        lab.start()
    assert lab.proc is None and not deep.exists()
