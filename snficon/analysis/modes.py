"""Mode occupancy of SNF-ICON from its decision log (SPEC sections 6 and 7)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModeSummary:
    """Share of [0, end] whose latest invocation was in ICON (or fallback) mode.

    Time before the first invocation, and under invocations that logged no
    mode (the baselines), counts in neither share.
    """

    icon_time_share: float
    fallback_time_share: float
    spare_planning_points: int


def mode_summary(rows: Sequence[dict[str, Any]], end: float) -> ModeSummary:
    """Mode occupancy over the paper's window [0, end] (end = the last job end)."""
    spent = {"icon": 0.0, "fallback": 0.0}
    for index, row in enumerate(rows):
        begin = float(row["time"])
        if begin >= end:
            break
        stop = float(rows[index + 1]["time"]) if index + 1 < len(rows) else end
        if row.get("mode") in spent:
            spent[row["mode"]] += min(stop, end) - begin
    points = sum(1 for row in rows if row.get("spare_planning_point") is True)
    window = end if end > 0 else 1.0
    return ModeSummary(spent["icon"] / window, spent["fallback"] / window, points)
