"""Mode occupancy from a decision log, worked out by hand."""

from __future__ import annotations

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
