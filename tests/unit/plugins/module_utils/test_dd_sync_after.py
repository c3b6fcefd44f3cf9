# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/tools/dd.py sync_after: reference 000's `time sync; time dd ...; time sync` transcript
(tests/unit/fixtures/dd/reference-000-dd-time-transcript.txt, the post as published) measured as
the post did: dd's real time plus the final sync's."""

from pathlib import Path

import pytest

from ansible_collections.benchlab.bench.plugins.module_utils.tools.dd import DdParseError, dd_record, parse_dd

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures'


def transcript():
    return (FIXTURES / 'dd' / 'reference-000-dd-time-transcript.txt').read_text()


def test_sync_after_adds_the_final_sync_of_test_1():
    test_1 = transcript().split('-------------- next part --------------')[1]  # nohup.out of test 1
    parsed = parse_dd(test_1, bs=1000000, sync_after=True)
    # 'real 78m14.761s' of dd + 'real 0m25.335s' of the sync after it = the post's 4720.096 s
    assert parsed['sync_s'] == pytest.approx(25.335)
    assert parsed['seconds'] == pytest.approx(4720.096)
    assert round(parsed['throughput_mb_s'], 2) == 42.37


def test_without_sync_after_the_time_is_dds_own():
    parsed = parse_dd(transcript(), bs=1000000)
    assert parsed['seconds'] == pytest.approx(4694.761) and 'sync_s' not in parsed


def test_sync_after_on_new_coreutils_wording_adds_to_dds_summary_time():
    text = ('2000+0 records in\n2000+0 records out\n'
            '2097152000 bytes (2.1 GB, 2.0 GiB) copied, 10.5 s, 200 MB/s\n\nreal\t0m10.600s\n'
            'user\t0m0.001s\nsys\t0m1.0s\n\nreal\t0m1.500s\nuser\t0m0.000s\nsys\t0m0.010s\n')
    parsed = parse_dd(text, sync_after=True)
    # dd's own 10.5 s plus the last `real` (the sync's 1.5 s), not `time dd`'s own 10.6 s
    assert parsed['seconds'] == pytest.approx(10.5 + 1.5) and parsed['sync_s'] == pytest.approx(1.5)


def test_sync_after_without_a_following_time_is_an_error():
    text = '512+0 records in\n512+0 records out\nreal 0m2.000s\n'
    with pytest.raises(DdParseError, match="sync_after: no 'real' line of a `time sync` after dd's own time"):
        dd_record(text, bs=1024, sync_after=True)
