"""The seams of a policy: a dispatch order, a power manager and optional layers.

A policy answers one invocation in three steps (composed by
:class:`snficon.core.policy.Policy`)::

    view = layer.admit(view)                           # each layer, in order
    dispatched = order.dispatch(view)                  # starts now, the rest waits
    outcome = power.decide(view, dispatched, order)    # plan, wakes, switch-offs, calls
    layer.amend(view, dispatched, outcome, order)      # each layer, in order

* A **dispatch order** (:class:`DispatchOrder`: SNF, FCFS with EASY backfilling)
  starts the queued jobs that fit now and plans the waiting ones on a release
  map it is given (the PSAS plan, Definition 6, or EASY's reservation).
* A **power manager** (:class:`PowerManager`: IPM's idle timeout, SNF-ICON's
  warm-spare controller, a learned one) chooses the release map and planned
  durations, asks the order for the plan, wakes the nodes the plan needs and
  switches nodes off; its :class:`PowerOutcome` keeps the plan, the release
  map and durations it used, so that a layer can plan again.
* A **layer** (:class:`Layer`) sees the invocation before the order (it may
  hold queued jobs back or change what the order sees, e.g. a start-time
  advisor or adjusted time limits) and after the power manager (it may add
  decisions: kills, callbacks). Layers know nothing of each other.

Each part is a small object with one job and its own frozen parameters
dataclass (:mod:`snficon.core.params`); :mod:`snficon.part_registry`
names them all. A part that remembers between invocations (SNF-ICON's
estimates) keeps that memory itself; the pure functions it calls take the
memory and return the next one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from snficon.core.node_choice import StateGroups
from snficon.core.plan import PlannedJob, release_map
from snficon.core.view import ClusterView, Decisions, JobStart, NodeTable, QueuedJob

ORDER, POWER, LAYER = "order", "power", "layer"
KINDS = (ORDER, POWER, LAYER)


@dataclass(frozen=True)
class Dispatched:
    """What a dispatch order decided now: the starts, the
    :class:`~snficon.core.node_choice.StateGroups` of the node table they leave behind
    (started nodes computing; built once, read by the power manager and the plans) and
    the jobs still waiting, in the order's order.

    ``release``: the release map of requested times (SPEC 5,
    :func:`~snficon.core.plan.release_map`) of that table at the invocation's time,
    read-only, when the order made it for its own decisions (FCFS/EASY reserves the
    head's start on it); None when it made none. Read it through
    :meth:`requested_release`.
    """

    starts: list[JobStart]
    groups: StateGroups
    waiting: list[QueuedJob]
    release: np.ndarray | None = None

    def requested_release(self, now: float) -> np.ndarray:
        """The release map of requested times of the table the starts leave at ``now``
        (the invocation's time), read-only: the order's (:attr:`release`), or made here
        when it made none."""
        if self.release is not None:
            return self.release
        release = release_map(self.groups, now)
        release.setflags(write=False)
        return release

    @property
    def nodes(self) -> NodeTable:
        """The node table the starts leave behind (that of :attr:`groups`)."""
        return self.groups.nodes


@dataclass(eq=False)
class PowerOutcome:
    """A power manager's answer: the invocation's decisions and the plan behind them.

    ``release`` is the release map the plan was made on (one time per node,
    ``inf`` when not plannable; None when no job waits: no plan was made on one, and
    none is needed to plan nothing) and ``durations`` the planned duration of each
    waiting job, so that a layer can ask the order for another plan.
    """

    decisions: Decisions
    plan: Sequence[PlannedJob]
    release: np.ndarray | None
    durations: list[float]


class DispatchOrder(Protocol):
    """Starts queued jobs now and plans the waiting ones."""

    def dispatch(self, view: ClusterView) -> Dispatched:
        """Start what fits now; the rest waits."""
        ...

    def plan(self, groups: StateGroups, release: np.ndarray, jobs: Sequence[QueuedJob],
             durations: Sequence[float], now: float) -> Sequence[PlannedJob]:
        """The future plan of ``jobs`` (in the order's order) on the release map ``release``
        of the table of ``groups`` (read-only: a plan that changes a map changes its own
        copy; a :class:`~snficon.core.plan.Plan` makes its jobs when they are first
        read)."""
        ...


class PowerManager(Protocol):
    """Wakes, switch-offs and callbacks of one invocation, after the dispatch."""

    def decide(self, view: ClusterView, dispatched: Dispatched,
               order: DispatchOrder) -> PowerOutcome:
        ...


class Layer(Protocol):
    """A decision added around the order and the power manager (see the module docstring)."""

    def admit(self, view: ClusterView) -> ClusterView:
        """The view the order and the power manager see (``view`` itself to change nothing)."""
        ...

    def amend(self, view: ClusterView, dispatched: Dispatched, outcome: PowerOutcome,
              order: DispatchOrder) -> None:
        """Add to ``outcome.decisions`` (kills, callbacks...) once the power manager decided."""
        ...


@dataclass(frozen=True)
class PartSpec:
    """One entry of the parts table: a part users can name.

    ``build(params, p_sleep_w)`` makes the part for a run from its checked
    parameters and the platform's per-node sleep power (W), the one constant a
    :class:`NodeTable` does not carry. ``label`` composes policy labels
    (``"SNF" + "+" + "IPM"``).
    """

    name: str
    kind: str
    label: str
    params: type
    build: Callable[[Any, np.ndarray], Any]
    summary: str
