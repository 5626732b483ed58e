"""Mode occupancy of SNF-ICON from its decision log (SPEC sections 6 and 7)."""

from __future__ import annotations

from collections.abc import Iterable
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


#: The decision-log columns :func:`mode_summary` reads.
MODE_COLUMNS = ("time", "mode", "spare_planning_point")


def mode_summary(rows: Iterable[dict[str, Any]], end: float) -> ModeSummary:
    """Mode occupancy over the paper's window [0, end] (end = the last job end).

    Each invocation's mode holds until the next invocation (the last one until
    ``end``). One pass over ``rows`` (a list, or the rows of
    :func:`~snficon.analysis.decision_log.iter_decision_log` as they are read):
    the spans are added in invocation order.
    """
    spent = {"icon": 0.0, "fallback": 0.0}
    points = 0
    held: tuple[float, Any] | None = None  # (begin, mode) of the invocation in force
    within = True  # no invocation at or after ``end`` seen yet
    for row in rows:
        if row.get("spare_planning_point") is True:
            points += 1
        if not within:
            continue
        begin = float(row["time"])
        if held is not None and held[1] in spent:
            spent[held[1]] += min(begin, end) - held[0]
        held = (begin, row.get("mode"))
        if begin >= end:
            within, held = False, None
    if held is not None and held[1] in spent:
        spent[held[1]] += end - held[0]
    window = end if end > 0 else 1.0
    return ModeSummary(spent["icon"] / window, spent["fallback"] / window, points)
