# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make test's stage runner (tests/utils/stages.py): the machine's busy CPU time from /proc/stat and
the groups' order and waits, on files and commands of the test's own."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'utils'))

import stages  # noqa: E402  pylint: disable=wrong-import-position

HZ = os.sysconf('SC_CLK_TCK')


def stat_file(tmp_path, name, user, nice, system, idle, iowait, irq, softirq, steal, guest=0, guest_nice=0):
    path = tmp_path / name
    # guest and guest_nice are part of user and nice already: they must not be counted twice
    path.write_text('cpu  %d %d %d %d %d %d %d %d %d %d\ncpu0 1 2 3 4 5 6 7 8 9 10\n' % (
        user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice))
    return str(path)


def test_busy_is_everything_but_idle_and_iowait_and_guest_time_is_not_counted_twice(tmp_path):
    before = stages.busy_seconds(stat_file(tmp_path, 'a', 100, 0, 50, 1000, 10, 0, 0, 0))
    after = stages.busy_seconds(stat_file(tmp_path, 'b', 100 + 3 * HZ, HZ, 50 + HZ, 1000 + 5 * HZ, 10 + 2 * HZ, 0, 0,
                                          HZ, guest=2 * HZ, guest_nice=HZ))
    assert stages.busy_between(before, after) == {'busy_s': 6.0, 'capacity_s': 13.0}


def test_without_proc_stat_there_is_no_figure(tmp_path):
    assert stages.busy_seconds(str(tmp_path / 'missing')) is None
    assert stages.busy_between(None, (1.0, 2.0)) is None


def test_a_stage_waits_for_its_dependency_and_a_failure_stops_the_later_groups():
    assert stages.parse_groups(['a', 'b:a', '--', 'c']) == [[('a', []), ('b', ['a'])], [('c', [])]]
    try:
        stages.parse_groups(['a:c', '--', 'c'])
    except SystemExit as exc:
        assert 'a waits for c, which is not in its group' in str(exc)
    else:
        raise AssertionError('a dependency outside the group was taken')
