# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/tools/timeparse.py and the parse_time filter against real `time` output
(tests/unit/fixtures/time, see its README)."""

from __future__ import annotations

import re

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.timeparse import TimeParseError, parse_duration, parse_time

REFERENCE = 'time/reference-000-nohup-time-blocks.txt'
KEYS = {'real', 'user', 'sys', 'format', 'line', 'exit_status', 'signal'}


def _expected_bash_blocks(text):
    """real/user/sys triples read straight from the text with a separate, simple method."""
    values = re.findall(r'^(real|user|sys)[ \t]+(\d+)m(\d+)[.,](\d+)s$', text, re.M)
    secs = [int(m) * 60 + int(s) + int(f) / 10.0 ** len(f) for _k, m, s, f in values]
    assert [k for k, _m, _s, _f in values] == ['real', 'user', 'sys'] * (len(values) // 3)
    return [tuple(secs[i:i + 3]) for i in range(0, len(secs), 3)]


def test_reference_post_has_twelve_blocks_in_order(read_fixture):
    text = read_fixture(REFERENCE)
    blocks = parse_time(text)
    assert len(blocks) == 12
    expected = _expected_bash_blocks(text)
    assert len(expected) == 12
    for block, (real, user, sys_) in zip(blocks, expected):
        assert set(block) == KEYS
        assert block['format'] == 'bash'
        assert (block['real'], block['user'], block['sys']) == pytest.approx((real, user, sys_), abs=1e-9)
        assert all(isinstance(block[k], float) for k in ('real', 'user', 'sys'))
    # run 1 = blocks 0..2 (sync, dd, sync); the dd one: real 78m14.761s, sys 13m52.217s
    assert blocks[1]['real'] == pytest.approx(4694.761)
    assert blocks[1]['user'] == pytest.approx(0.424)
    assert blocks[1]['sys'] == pytest.approx(13 * 60 + 52.217)
    lines = text.split('\n')
    assert lines[blocks[1]['line'] - 1] == 'real 78m14.761s'
    assert [b['line'] for b in blocks] == sorted(b['line'] for b in blocks)


def test_reference_post_table_is_dd_plus_final_sync(read_fixture):
    """The post's own table ('duration in sec. incl. sync') is each run's dd + the sync after it."""
    text = read_fixture(REFERENCE)
    table = [float(v) for v in re.findall(r'^\d \| [^|]+\| ([0-9.]+) \|', text, re.M)]
    assert table == [4720.096, 5015.390, 5187.163, 5481.256]
    blocks = parse_time(text)
    runs = [blocks[i:i + 3] for i in range(0, 12, 3)]
    # the post ran test 3, 4, then 1, 2 but attached them as 1..4 in its table order
    assert [round(dd['real'] + sync_after['real'], 3) for _s, dd, sync_after in runs] == table


@pytest.mark.parametrize('name,fmt,real,user,sys_', [
    ('bash-5.2-time-sleep.txt', 'bash', 0.202, 0.0, 0.002),
    ('bash-5.2-time-sleep-de_DE.txt', 'bash', 0.203, 0.0, 0.003),
    ('bash-5.2-time-p-sleep.txt', 'posix', 0.20, 0.0, 0.0),
    ('bash-5.2-time-p-sleep-de_DE.txt', 'posix', 0.20, 0.0, 0.0),
    ('gnu-time-1.9-p-sleep.txt', 'posix', 0.10, 0.0, 0.0),
    ('gnu-time-1.9-default-sleep.txt', 'gnu', 0.10, 0.0, 0.0),
    ('gnu-time-1.9-default-bzip2.txt', 'gnu', 12.05, 10.86, 0.19),
    ('gnu-time-1.9-verbose-sleep.txt', 'gnu-verbose', 0.10, 0.0, 0.0),
    ('gnu-time-1.9-verbose-sleep-de_DE.txt', 'gnu-verbose', 0.10, 0.0, 0.0),
    ('gnu-time-1.9-verbose-bzip2.txt', 'gnu-verbose', 11.46, 9.90, 0.17),
    ('public-gnu-time-verbose-hours-slurm.txt', 'gnu-verbose', 3600 + 13 * 60 + 42, 4404.01, 0.92),
])
def test_single_block(read_fixture, name, fmt, real, user, sys_):
    text = read_fixture('time/' + name)
    blocks = parse_time(text)
    assert len(blocks) == 1
    b = blocks[0]
    assert set(b) == KEYS
    assert b['format'] == fmt
    assert (b['real'], b['user'], b['sys']) == pytest.approx((real, user, sys_), abs=1e-9)


def test_sleep_fixtures_measure_the_sleep(read_fixture):
    for name, slept in (('bash-5.2-time-sleep.txt', 0.2), ('gnu-time-1.9-default-sleep.txt', 0.1),
                        ('gnu-time-1.9-verbose-sleep.txt', 0.1), ('bash-5.2-time-p-sleep.txt', 0.2)):
        b = parse_time(read_fixture('time/' + name))[0]
        assert slept <= b['real'] < slept + 0.05
        assert b['user'] + b['sys'] < 0.05


def test_bzip2_cpu_bound_user_close_to_real(read_fixture):
    for name in ('gnu-time-1.9-default-bzip2.txt', 'gnu-time-1.9-verbose-bzip2.txt'):
        b = parse_time(read_fixture('time/' + name))[0]
        assert 0.8 * b['real'] < b['user'] + b['sys'] <= b['real']


def test_three_blocks_with_command_output_between(read_fixture):
    text = read_fixture('time/bash-5.2-three-blocks-with-output.txt')
    blocks = parse_time(text)
    assert [b['format'] for b in blocks] == ['bash', 'bash', 'posix']
    assert [b['real'] for b in blocks] == pytest.approx([0.103, 10.265, 0.10])
    assert blocks[1]['user'] == pytest.approx(9.979)
    rows = text.split('\n')
    assert [rows[b['line'] - 1].split()[0] for b in blocks] == ['real'] * 3
    assert rows[blocks[2]['line'] - 2] == '--- three'


@pytest.mark.parametrize('name,status,signal,line', [
    ('gnu-time-1.9-default-sleep.txt', 0, None, 1),
    ('gnu-time-1.9-default-nonzero.txt', 1, None, 2),
    ('gnu-time-1.9-default-signal.txt', None, 15, 2),
    ('gnu-time-1.9-default-missing-command.txt', 127, None, 3),
    ('gnu-time-1.9-verbose-sleep.txt', 0, None, 1),
    ('gnu-time-1.9-verbose-nonzero.txt', 3, None, 2),
    ('bash-5.2-time-sleep.txt', None, None, 2),
])
def test_exit_status_and_signal(read_fixture, name, status, signal, line):
    text = read_fixture('time/' + name)
    b = parse_time(text)[0]
    assert b['exit_status'] == status
    assert b['signal'] == signal
    assert b['line'] == line
    if status:
        assert ('non-zero status %d' % status in text) or ('Exit status: %d' % status in text)


def test_blocks_of_several_formats_in_one_text(read_fixture):
    names = ['gnu-time-1.9-verbose-nonzero.txt', 'bash-5.2-time-sleep.txt', 'gnu-time-1.9-default-signal.txt',
             'gnu-time-1.9-p-sleep.txt', 'gnu-time-1.9-default-bzip2.txt']
    text = ''.join(read_fixture('time/' + n) for n in names)
    blocks = parse_time(text)
    assert [b['format'] for b in blocks] == ['gnu-verbose', 'bash', 'gnu', 'posix', 'gnu']
    assert [b['exit_status'] for b in blocks] == [3, None, None, None, 0]
    assert [b['signal'] for b in blocks] == [None, None, 15, None, None]
    assert blocks[4]['user'] == pytest.approx(10.86)


@pytest.mark.parametrize('value,seconds', [
    ('0m54.809s', 54.809), ('78m14.761s', 4694.761), ('0m0,203s', 0.203), ('54.81', 54.81), ('0,20', 0.2),
    ('0:00.10', 0.1), ('1:13:42', 4422.0), ('11:01.95', 661.95), ('2:01:02', 7262.0),
])
def test_parse_duration(value, seconds):
    assert parse_duration(value) == pytest.approx(seconds, abs=1e-9)


@pytest.mark.parametrize('value', ['', 'abc', '1m', '5s', '1:2:3:4', '0m1.5', '-1.0'])
def test_parse_duration_rejects(value):
    assert parse_duration(value) is None


def test_gnu_default_over_one_hour():
    # GNU time 1.9 prints %E as h:mm:ss (no fraction) from one hour on; no such run was captured.
    blocks = parse_time('3600.50user 12.00system 1:02:03elapsed 97%CPU (0avgtext+0avgdata 1920maxresident)k\n'
                        '0inputs+0outputs (0major+80minor)pagefaults 0swaps\n')
    assert blocks[0]['real'] == 3723.0
    assert blocks[0]['user'] == 3600.5


@pytest.mark.parametrize('text,message', [
    ('', 'no time output: the input is empty'),
    ('\n \n', 'no time output: the input is empty'),
    ('Permission denied\nreal work\n', "no time output found (bash 'time', 'time -p', GNU time's default or -v "
                                       "format); the first line is 'Permission denied'"),
])
def test_empty_and_garbage_raise(text, message):
    with pytest.raises(TimeParseError) as exc:
        parse_time(text)
    assert str(exc.value) == message


def _cut(text, keep_lines):
    return '\n'.join(text.split('\n')[:keep_lines])


def test_truncated_bash_block_quotes_the_last_line(read_fixture):
    text = read_fixture('time/bash-5.2-time-sleep.txt')
    with pytest.raises(TimeParseError) as exc:
        parse_time(_cut(text, 3))  # '', real, user: the sys line is missing
    assert str(exc.value) == ("truncated time output: the input ends after 'user\\t0m0.000s' (line 3), "
                              "before its 'sys' line")


def test_truncated_reference_post(read_fixture):
    text = read_fixture(REFERENCE)
    rows = text.split('\n')
    cut = rows.index('real 78m14.761s') + 1
    with pytest.raises(TimeParseError, match=r"ends after 'real 78m14.761s' \(line %d\)" % cut):
        parse_time('\n'.join(rows[:cut]))


def test_truncated_value_quotes_the_line(read_fixture):
    text = read_fixture('time/bash-5.2-time-sleep.txt')
    with pytest.raises(TimeParseError) as exc:
        parse_time(text.replace('real\t0m0.202s', 'real\t0m0.2'))
    assert "line 2 'real\\t0m0.2'" in str(exc.value)


def test_mixed_formats_in_one_block_raise():
    with pytest.raises(TimeParseError, match=r"line 2 'user 0.00': its time value is not in the bash format"):
        parse_time('real\t0m0.202s\nuser 0.00\nsys 0.00\n')


def test_interrupted_block_quotes_the_line():
    with pytest.raises(TimeParseError, match=r"cannot read line 2 'oops': expected the 'user' line"):
        parse_time('real 0.10\noops\nsys 0.00\n')


def test_truncated_gnu_default_line(read_fixture):
    text = read_fixture('time/gnu-time-1.9-default-bzip2.txt')
    first = text.split('\n')[0]
    with pytest.raises(TimeParseError) as exc:
        parse_time(first[:22])
    assert first[:22] == '10.86user 0.19system 0'
    assert str(exc.value).startswith("cannot read line 1 '10.86user 0.19system 0': not GNU time's default format")


def test_truncated_gnu_verbose_block(read_fixture):
    text = read_fixture('time/gnu-time-1.9-verbose-bzip2.txt')
    with pytest.raises(TimeParseError) as exc:
        parse_time(_cut(text, 3))
    msg = str(exc.value)
    assert msg.startswith("truncated GNU time -v block starting with 'Command being timed: \"bzip2 -9 -c /tmp/cmp-in.txt\"'")
    assert "no 'Elapsed (wall clock) time (h:mm:ss or m:ss)' line" in msg
    assert "ends with 'System time (seconds): 0.17' (line 3)" in msg


def test_verbose_block_with_bad_value(read_fixture):
    text = read_fixture('time/gnu-time-1.9-verbose-sleep.txt').replace('0:00.10', '0:00:xx')
    with pytest.raises(TimeParseError, match=r"cannot read line 5 'Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): 0:00:xx'"):
        parse_time(text)


@pytest.mark.parametrize('value', [None, b'real 0m1.000s\n', 42, ['real 0m1.000s']])
def test_non_text_raises(value):
    with pytest.raises(TimeParseError, match='must be text'):
        parse_time(value)


def test_time_parse_error_is_a_value_error():
    assert issubclass(TimeParseError, ValueError)


# the filter
