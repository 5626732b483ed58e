"""IPM: the idle-timeout power manager of the baselines (SPEC section 5)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from snficon.core import view as ns
from snficon.core.plan import PlannedJob
from snficon.core.view import NodeTable


def expired_idle_nodes(nodes: NodeTable, now: float, timeout_s: float) -> np.ndarray:
    """Idle nodes whose idle timer (``timeout_s`` since they became idle) expired: I_e(t)."""
    idle = nodes.state == ns.IDLE
    return np.flatnonzero(idle & (nodes.idle_since_s + timeout_s <= now))


def nodes_to_switch_off(nodes: NodeTable, plan: Sequence[PlannedJob], now: float,
                        timeout_s: float) -> np.ndarray:
    """Expired idle nodes that IPM switches off now.

    A node is kept when a queued job's plan uses it and switching it off and
    on again (``now + T_off + T_on``) would pass that job's planned start.
    """
    expired = expired_idle_nodes(nodes, now, timeout_s)
    if not len(expired):
        return expired
    needed_by = np.full(nodes.size, np.inf)
    for planned in plan:
        np.minimum.at(needed_by, planned.nodes, planned.start)
    back_at = now + nodes.t_off_s[expired] + nodes.t_on_s[expired]
    return expired[np.isfinite(back_at) & (back_at <= needed_by[expired])]


def next_timer_expiry(nodes: NodeTable, now: float, timeout_s: float) -> float | None:
    """The earliest future idle-timer expiry, when IPM must be called back."""
    idle = nodes.state == ns.IDLE
    timers = nodes.idle_since_s[idle] + timeout_s
    future = timers[timers > now]
    return float(future.min()) if len(future) else None
