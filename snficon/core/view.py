"""What a policy sees at one scheduler invocation, and what it answers.

:class:`ClusterView` is a frozen snapshot built by the adapter (or a test) from
protocol events: the time, what triggered the call, the node arrays of a
:class:`NodeTable`, the waiting queue and the running jobs. :class:`Decisions`
is plain data: jobs to start and where, nodes to switch on and off, times to
be called back. The same objects flow through every run path (real Batsim,
the embedded engine over ZeroMQ, in-process), so the paths compare field by
field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from snficon.core.diagnostics import Diagnostics

if TYPE_CHECKING:
    from snficon.core.node_choice import StateGroups


class NodeState(IntEnum):
    """The paper's node partition (Definition 1): C, I, U, D, S."""

    COMPUTING = 0
    IDLE = 1
    SWITCHING_ON = 2
    SWITCHING_OFF = 3
    SLEEPING = 4


#: The state codes as plain ints, for hot loops (IntEnum attribute lookups are slow).
COMPUTING, IDLE, SWITCHING_ON, SWITCHING_OFF, SLEEPING = (int(state) for state in NodeState)


@dataclass(frozen=True)
class NodeTable:
    """Per-node state as parallel arrays, one entry per node (index = Batsim resource id).

    ``state``: :class:`NodeState` codes. ``idle_since_s``: when an idle node
    became idle (its IPM timer started then), ``nan`` for other nodes. ``transition_end_s``:
    when a switching node ends its transition, ``nan`` otherwise.
    ``release_req_s``: for a computing node, its job's start + requested time
    (``nan`` otherwise). The power model gives the per-node constants: idle
    power ``p_idle_w``, switch-on/off durations ``t_on_s``/``t_off_s`` and
    energies ``e_on_j``/``e_off_j``.
    """

    state: np.ndarray
    idle_since_s: np.ndarray
    transition_end_s: np.ndarray
    release_req_s: np.ndarray
    p_idle_w: np.ndarray
    t_on_s: np.ndarray
    t_off_s: np.ndarray
    e_on_j: np.ndarray
    e_off_j: np.ndarray

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            getattr(self, name).setflags(write=False)

    @property
    def size(self) -> int:
        return len(self.state)

    def in_state(self, state: NodeState) -> np.ndarray:
        """Ids of the nodes in ``state``, ascending."""
        return np.flatnonzero(self.state == state)


@dataclass(frozen=True)
class QueuedJob:
    """A waiting job (Definition 2): id z_j, requested nodes r_j, requested time tau_j.

    ``order`` is the job's rank of arrival (ids are assigned in arrival order
    in the paper); it breaks the last ties of the SNF key (eq. 4). ``extra``
    holds the job's other workload fields (Batsim forwards them), read by
    layers: checkpoints and time limits, deadlines (read-only by convention).
    """

    job_id: str
    res: int
    req_time_s: float
    submit_s: float
    order: int
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class RunningJob:
    """A computing job: its nodes, start time and requested time."""

    job_id: str
    nodes: tuple[int, ...]
    start_s: float
    req_time_s: float


@dataclass(frozen=True)
class RunningTable:
    """The running jobs as parallel arrays: entry i is ``jobs[i]``.

    ``start_s`` and ``req_time_s``: each job's start time and requested time
    tau_j; ``node_job``: for each node, the index of the job computing on it
    (-1 for a node with no running job). ``jobs`` is the tuple of records the
    arrays stand for: :func:`running_table` trusts the arrays only for that
    very tuple. Formulas over all running jobs (Appendix A, eq. 50-51; the
    release map, eq. 56) read these arrays instead of one record per job.
    """

    jobs: tuple[RunningJob, ...]
    start_s: np.ndarray
    req_time_s: np.ndarray
    node_job: np.ndarray

    def __post_init__(self) -> None:
        for array in (self.start_s, self.req_time_s, self.node_job):
            array.setflags(write=False)

    @classmethod
    def of(cls, jobs: tuple[RunningJob, ...], nb_nodes: int) -> RunningTable:
        """The table of ``jobs`` on a platform of ``nb_nodes`` nodes, built from scratch."""
        node_job = np.full(nb_nodes, -1, dtype=np.int64)
        for i, run in enumerate(jobs):
            node_job[list(run.nodes)] = i
        return cls(jobs=jobs, start_s=np.array([run.start_s for run in jobs], dtype=float),
                   req_time_s=np.array([run.req_time_s for run in jobs], dtype=float),
                   node_job=node_job)


@dataclass(frozen=True)
class CompletedJob:
    """A job that ended since the previous invocation: its nodes and actual runtime."""

    job_id: str
    nodes: tuple[int, ...]
    runtime_s: float
    req_time_s: float
    end_s: float


@dataclass(frozen=True)
class ClusterView:
    """The cluster at one scheduler invocation (read-only).

    ``arrivals`` and ``completions`` are the monitor records new since the
    previous invocation (Algorithm 1, line 1), in the order they happened.
    ``running_arrays``: the running jobs as arrays, when the builder keeps them
    (read them through :func:`running_table`, which checks they stand for
    ``running``). ``groups``: the node table's state groups, when the builder made
    them with the table (read them through
    :func:`~snficon.core.node_choice.state_groups`, which checks they stand for
    ``nodes``).
    """

    now: float
    trigger: str
    nodes: NodeTable
    queue: tuple[QueuedJob, ...]
    running: tuple[RunningJob, ...] = ()
    arrivals: tuple[QueuedJob, ...] = ()
    completions: tuple[CompletedJob, ...] = ()
    running_arrays: RunningTable | None = field(default=None, compare=False, repr=False)
    groups: StateGroups | None = field(default=None, compare=False, repr=False)


def running_table(view: ClusterView) -> RunningTable:
    """The running jobs of ``view`` as arrays: the builder's table when it stands for
    ``view.running`` (the same tuple), else one built from the records (a view made by
    hand, or one whose ``running`` was replaced)."""
    table = view.running_arrays
    if table is not None and table.jobs is view.running:
        return table
    return RunningTable.of(view.running, view.nodes.size)


@dataclass(frozen=True)
class JobStart:
    """Start ``job_id`` now on ``nodes``."""

    job_id: str
    nodes: tuple[int, ...]


@dataclass
class Decisions:
    """The answer to one invocation: starts, switch-ons, switch-offs, callbacks, kills.

    ``kills``: ids of running jobs to kill now (``KILL_JOB``). ``diagnostics``
    is the invocation's record for the decision log (SPEC section 7).
    """

    starts: list[JobStart] = field(default_factory=list)
    switch_on: list[int] = field(default_factory=list)
    switch_off: list[int] = field(default_factory=list)
    call_at: list[float] = field(default_factory=list)
    kills: list[str] = field(default_factory=list)
    diagnostics: Diagnostics | None = None
