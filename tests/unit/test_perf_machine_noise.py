"""perf/machine_noise.py: the machine's own spread on fixed CPU work. The statistics are checked on
fixed series; the command is run with tiny pieces (what it prints, not how fast this machine is)."""
import importlib.util
import os
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location('perf_machine_noise', os.path.join(HERE, '..', '..', 'perf', 'machine_noise.py'))
noise = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(noise)


def test_a_slow_drift_is_told_from_a_piece_by_piece_jitter():
    """The same spread twice: a slow drift correlates with the piece before and cancels in adjacent
    pairs; an alternating jitter correlates negatively and does not cancel."""
    drift = noise.spread([1.0, 1.01, 1.1, 1.11, 1.2, 1.21, 1.1, 1.11])
    jitter = noise.spread([1.0, 1.2, 1.0, 1.2, 1.0, 1.2, 1.0, 1.2])
    assert drift['lag1'] > 0.5 and jitter['lag1'] < -0.5
    assert drift['pair_cv_pct'] < 0.5 < jitter['cv_pct'] and jitter['pair_cv_pct'] == pytest.approx(0.0)
    assert jitter['cv_pct'] == pytest.approx(100.0 * 0.10690449676496976 / 1.1)


def test_too_few_or_constant_timings():
    assert noise.spread([2.0, 2.0, 2.0]) == dict(cv_pct=0.0, lag1=None, pair_cv_pct=None)
    with pytest.raises(ValueError, match='at least 2 timings, got 1'):
        noise.spread([1.0])


def test_the_command_prints_a_row_per_length_and_refuses_too_few_pieces(capsys):
    assert noise.main(['--lengths', '0.005', '0.01', '--pieces', '4']) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [r[1] for r in rows] == ['4', '4'] and all(float(r[2]) >= 0 for r in rows)
    with pytest.raises(SystemExit):
        noise.main(['--pieces', '3'])
    assert '--pieces: at least 4' in capsys.readouterr().err


def test_the_io_runs_time_each_size_in_a_directory_they_remove():
    """Small sizes (1 and 2 MiB, 3 and 4 requests): the names and counts, the rates positive, nothing
    left behind. On /var/tmp: ioping's direct writes need a file system with O_DIRECT (not tmpfs)."""
    parent = tempfile.mkdtemp(prefix='benchlab-test-noise-', dir='/var/tmp')
    try:
        got = noise.io_runs(parent, 2, sizes_mib=(1, 2), counts=(3, 4))
        assert sorted(got) == ['dd write 1M (MB/s)', 'dd write 2M (MB/s)', 'ioping write x3 (requests/s)',
                               'ioping write x4 (requests/s)']
        assert all(len(v) == 2 and min(v) > 0 for v in got.values())
        assert os.listdir(parent) == []
    finally:
        os.rmdir(parent)
