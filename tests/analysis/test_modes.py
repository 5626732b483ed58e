"""Mode occupancy from a decision log, worked out by hand."""

from __future__ import annotations

import random

import pytest

from snficon.analysis.modes import mode_summary


def test_time_goes_to_the_latest_invocation_mode():
    # [0,10) icon, [10,40) fallback, [40,100) icon; the row at 120 is past the end.
    rows = [{"time": 0.0, "mode": "icon", "spare_planning_point": True},
            {"time": 10.0, "mode": "fallback", "spare_planning_point": None},
            {"time": 40.0, "mode": "icon", "spare_planning_point": True},
            {"time": 120.0, "mode": "icon", "spare_planning_point": True}]
    summary = mode_summary(rows, end=100.0)
    assert summary.icon_time_share == pytest.approx(0.7)
    assert summary.fallback_time_share == pytest.approx(0.3)
    assert summary.spare_planning_points == 3


def test_baseline_rows_count_in_neither_mode():
    rows = [{"time": 5.0, "mode": None}, {"time": 50.0, "mode": "icon"}]
    summary = mode_summary(rows, end=100.0)
    assert summary.icon_time_share == pytest.approx(0.5)
    assert summary.fallback_time_share == 0.0


def _pairwise_reference(rows, end):
    """Each row's mode over [its time, the next row's time) clipped to [0, end], summed in
    row order, from the rows held whole (the definition, written independently)."""
    icon = fallback = 0.0
    for row, after in zip(rows, [*rows[1:], None], strict=True):
        begin = row["time"]
        if begin >= end:
            break
        stop = end if after is None else min(after["time"], end)
        if row["mode"] == "icon":
            icon += stop - begin
        elif row["mode"] == "fallback":
            fallback += stop - begin
    points = sum(1 for row in rows if row["spare_planning_point"] is True)
    return icon / end, fallback / end, points


def test_one_pass_over_an_iterator_equals_the_pairwise_definition_bit_for_bit():
    for seed in range(50):
        draw = random.Random(seed)
        times = sorted(draw.uniform(0, 1e6) for _ in range(draw.randint(1, 300)))
        rows = [{"time": t, "mode": draw.choice(["icon", "fallback", None]),
                 "spare_planning_point": draw.choice([True, None, False])} for t in times]
        end = draw.uniform(0, 1.2e6)
        summary = mode_summary(iter(rows), end)  # an iterator: read once, never indexed
        assert (summary.icon_time_share, summary.fallback_time_share,
                summary.spare_planning_points) == _pairwise_reference(rows, end)
