"""A power manager of one's own: an idle timeout that keeps ``k`` idle nodes warm.

Idle nodes switch off once idle for ``timeout`` seconds, except the ``k`` that
became idle last; sleeping nodes wake when the waiting jobs need more nodes
than are idle or waking. Run it with::

    snficon run --platform PLATFORM.xml --workload WORKLOAD.json \\
        --power warm_timeout.py:WarmTimeout --set k=2 --set timeout=600
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snficon.core.params import option
from snficon.core.parts import Dispatched, DispatchOrder, PowerOutcome
from snficon.core.plan import release_map
from snficon.core.view import ClusterView, Decisions, NodeState


@dataclass(frozen=True)
class WarmTimeoutParams:
    """``k``: idle nodes kept warm; ``timeout``: seconds idle before a switch-off."""

    k: int = option(2, low=0)
    timeout: float = option(600.0, low=0)


class WarmTimeout:
    """Idle timeout keeping the k most recently idle nodes on."""

    Params = WarmTimeoutParams

    def __init__(self, params: WarmTimeoutParams) -> None:
        self.params = params

    def decide(self, view: ClusterView, dispatched: Dispatched,
               order: DispatchOrder) -> PowerOutcome:
        nodes, now = dispatched.nodes, view.now
        idle = nodes.in_state(NodeState.IDLE)
        waking = nodes.in_state(NodeState.SWITCHING_ON)
        sleeping = nodes.in_state(NodeState.SLEEPING)
        needed = sum(job.res for job in dispatched.waiting)
        wake = sleeping[:max(0, needed - len(idle) - len(waking))]
        switch_off: list[int] = []
        call_at: list[float] = []
        if not dispatched.waiting and len(idle) > self.params.k:
            # the k nodes idle since last stay warm; the others go once their time is up
            by_recency = idle[np.argsort(-nodes.idle_since_s[idle], kind="stable")]
            candidates = by_recency[self.params.k:]
            expiry = nodes.idle_since_s[candidates] + self.params.timeout
            switch_off = candidates[expiry <= now].tolist()
            later = expiry[expiry > now]
            if len(later):
                call_at = [float(later.min())]
        durations = [job.req_time_s for job in dispatched.waiting]
        release = release_map(dispatched.groups, now)
        release[wake] = now + nodes.t_on_s[wake]
        plan = order.plan(dispatched.groups, release, dispatched.waiting, durations, now)
        decisions = Decisions(starts=list(dispatched.starts), switch_on=wake.tolist(),
                              switch_off=switch_off, call_at=call_at)
        return PowerOutcome(decisions, plan, release, durations)
