"""Hand-made cluster states for the decision-core tests.

A node is written as one of ``idle(since)``, ``computing(until)``,
``sleeping()``, ``switching_off(end)``, ``switching_on(end)``, optionally
with its own power figures; :func:`table` turns a list of them into a
:class:`NodeTable` (read-only arrays, as the adapter builds it) and
:func:`view` wraps a table and a queue into a :class:`ClusterView`.

Default figures (chosen so that hand computations stay simple): idle power
100 W, switch-on 30 s for 4500 J, switch-off 10 s for 500 J. With them a
sleeping node always costs more than an idle one planned for the same start
(E_on = 4500 J > 100 W x 30 s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from snficon.core.names import Trigger
from snficon.core.view import ClusterView, NodeState, NodeTable, QueuedJob

P_IDLE_W = 100.0
T_ON_S = 30.0
T_OFF_S = 10.0
E_ON_J = 4500.0
E_OFF_J = 500.0
NAN = float("nan")


@dataclass(frozen=True)
class Node:
    """One node of a hand-made table: its state, the time that goes with it, its figures."""

    state: NodeState
    idle_since: float = NAN
    transition_end: float = NAN
    release_req: float = NAN
    p_idle: float = P_IDLE_W
    t_on: float = T_ON_S
    t_off: float = T_OFF_S
    e_on: float = E_ON_J
    e_off: float = E_OFF_J


def idle(since: float = 0.0, **figures: float) -> Node:
    """An idle node whose idle timer started at ``since``."""
    return Node(NodeState.IDLE, idle_since=since, **figures)


def computing(until: float, **figures: float) -> Node:
    """A computing node whose job's start + requested time is ``until``."""
    return Node(NodeState.COMPUTING, release_req=until, **figures)


def sleeping(**figures: float) -> Node:
    return Node(NodeState.SLEEPING, **figures)


def switching_off(end: float, **figures: float) -> Node:
    """A node switching off, asleep at ``end``."""
    return Node(NodeState.SWITCHING_OFF, transition_end=end, **figures)


def switching_on(end: float, **figures: float) -> Node:
    """A node switching on, idle at ``end``."""
    return Node(NodeState.SWITCHING_ON, transition_end=end, **figures)


def table(nodes: list[Node]) -> NodeTable:
    """The :class:`NodeTable` of ``nodes`` (node i = resource id i), arrays read-only."""
    def column(name: str) -> np.ndarray:
        return np.array([getattr(node, name) for node in nodes], dtype=float)

    return NodeTable(
        state=np.array([node.state for node in nodes], dtype=np.int8),
        idle_since_s=column("idle_since"), transition_end_s=column("transition_end"),
        release_req_s=column("release_req"), p_idle_w=column("p_idle"),
        t_on_s=column("t_on"), t_off_s=column("t_off"), e_on_j=column("e_on"),
        e_off_j=column("e_off"))


def job(job_id: str, res: int, req: float, *, submit: float = 0.0,
        order: int | None = None) -> QueuedJob:
    """A queued job; its arrival rank defaults to the number in its id (``"j3"`` -> 3)."""
    if order is None:
        order = int("".join(ch for ch in job_id if ch.isdigit()) or 0)
    return QueuedJob(job_id=job_id, res=res, req_time_s=req, submit_s=submit, order=order)


def view(nodes: list[Node] | NodeTable, queue: Sequence[QueuedJob] = (), *, now: float = 0.0,
         trigger: str = Trigger.ARRIVAL) -> ClusterView:
    """A :class:`ClusterView` at ``now`` (no running-job records: the core does not use them)."""
    nodes = nodes if isinstance(nodes, NodeTable) else table(nodes)
    return ClusterView(now=now, trigger=trigger, nodes=nodes, queue=tuple(queue))


def started(decisions_or_dispatch) -> dict[str, set[int]]:
    """Job id -> set of nodes of the starts of a :class:`Decisions` or ``Dispatch``."""
    return {start.job_id: set(start.nodes) for start in decisions_or_dispatch.starts}


def log_of(decisions) -> dict[str, object]:
    """The decision-log columns an invocation filled (its diagnostics record)."""
    return decisions.diagnostics.columns()
