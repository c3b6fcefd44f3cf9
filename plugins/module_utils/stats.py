# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Statistics over repetitions, pure Python (no numpy/scipy on targets or controllers)."""

from __future__ import annotations


def summarize(values):
    """n, mean, min and max of the measured values (None values, "too fast", are counted apart)."""
    nums = [float(v) for v in values if v is not None]
    out = {'n': len(nums), 'too_fast': len(values) - len(nums), 'mean': None, 'min': None, 'max': None}
    if nums:
        out.update(mean=sum(nums) / len(nums), min=min(nums), max=max(nums))
    return out


def delta_pct(value, baseline):
    """(value - baseline) / baseline in %; None when either is unknown or the baseline is 0."""
    if value is None or baseline in (None, 0):
        return None
    return (float(value) - float(baseline)) / float(baseline) * 100.0
