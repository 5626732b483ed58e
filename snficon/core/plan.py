"""PSAS planning: release map, energy-aware node choice, sequential plan, wake times.

The sequential future plan is the paper's Definition 6 (eq. 13-16) with the
release map and node-choice cost fixed by SPEC section 5. It is shared by the
baselines (releases from requested times) and by SNF-ICON (predicted releases).
FCFS/EASY has two future plans built on it: :func:`easy_gap_plan` (the
authors' code: every job moved to the earliest hole that disturbs no earlier
job) and :func:`easy_plan` (the head's reservation alone).
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from snficon.core import view as ns
from snficon.core.clock import TIME_TOLERANCE_S, unexpired_mask
from snficon.core.view import NodeTable, QueuedJob

#: Node-state priority of the node choice: idle < computing < switching on < asleep.
STATE_RANK = np.array([1, 0, 2, 3, 3])  # indexed by NodeState


@functools.lru_cache(maxsize=8)
def _constant_mask(size: int, value: bool) -> np.ndarray:
    """A read-only mask of ``size`` nodes, every entry ``value`` (shared: never written)."""
    mask = np.full(size, value)
    mask.setflags(write=False)
    return mask


@dataclass(frozen=True)
class StateGroups:
    """The partition of one node table by state (Definition 1: C, I, U, D, S), found
    once per table (:func:`state_groups`): a read-only mask per state, how many nodes
    each holds, and the state-only keys of the node choice (:class:`NodeChoice`).

    A state no node is in has the shared all-false mask (:func:`_constant_mask`), and
    ``awake`` is the shared all-true one when no node is asleep. The node-choice keys
    ``rank`` and ``later_idle`` are made when first read (a table whose plan chooses no
    node never needs them).
    """

    computing: np.ndarray
    idle: np.ndarray
    switching_on: np.ndarray
    switching_off: np.ndarray
    sleeping: np.ndarray
    counts: tuple[int, int, int, int, int]
    awake: np.ndarray
    asleep: np.ndarray
    state: np.ndarray
    idle_since_s: np.ndarray

    @classmethod
    def of(cls, nodes: NodeTable) -> StateGroups:
        state = nodes.state
        counts = tuple(np.bincount(state, minlength=len(ns.NodeState)).tolist())
        return cls.made(state, nodes.idle_since_s, counts)  # type: ignore[arg-type]

    @classmethod
    def made(cls, state: np.ndarray, idle_since_s: np.ndarray,
             counts: tuple[int, int, int, int, int],
             masks: dict[int, np.ndarray] | None = None,
             sleep_masks: tuple[np.ndarray, np.ndarray] | None = None) -> StateGroups:
        """The groups of the table whose ``state`` (read-only) holds ``counts`` nodes of
        each state; ``masks``: the read-only masks of some states, already known;
        ``sleep_masks``: the ``asleep`` and ``awake`` masks, already known."""
        size = len(state)
        none = _constant_mask(size, False)
        known = masks or {}
        made = []
        for code, count in enumerate(counts):
            mask = known.get(code)
            if mask is None:
                if count:
                    mask = state == code
                    mask.setflags(write=False)
                else:
                    mask = none
            made.append(mask)
        if sleep_masks is not None:
            asleep, awake = sleep_masks
        elif counts[ns.SLEEPING] and counts[ns.SWITCHING_OFF]:
            asleep = made[ns.SLEEPING] | made[ns.SWITCHING_OFF]
            awake = ~asleep
            asleep.setflags(write=False)
            awake.setflags(write=False)
        elif counts[ns.SLEEPING] or counts[ns.SWITCHING_OFF]:
            asleep = made[ns.SLEEPING] if counts[ns.SLEEPING] else made[ns.SWITCHING_OFF]
            awake = ~asleep
            awake.setflags(write=False)
        else:
            asleep, awake = none, _constant_mask(size, True)
        return cls(computing=made[0], idle=made[1], switching_on=made[2],
                   switching_off=made[3], sleeping=made[4], counts=counts,
                   awake=awake, asleep=asleep, state=state, idle_since_s=idle_since_s)

    @property
    def rank(self) -> np.ndarray:
        """Each node's :data:`STATE_RANK` (read-only)."""
        rank = self.__dict__.get("_rank")
        if rank is None:
            rank = self.__dict__["_rank"] = STATE_RANK[self.state]
            rank.setflags(write=False)
        return rank

    @property
    def later_idle(self) -> np.ndarray:
        """Minus ``idle_since`` for an idle node, +inf otherwise (read-only)."""
        later = self.__dict__.get("_later_idle")
        if later is None:
            later = self.__dict__["_later_idle"] = np.where(self.idle, -self.idle_since_s,
                                                            np.inf)
            later.setflags(write=False)
        return later


def state_groups(nodes: NodeTable) -> StateGroups:
    """The :class:`StateGroups` of ``nodes``, remembered by the (immutable) table."""
    memo = nodes.memo
    groups = memo.get("state_groups")
    if groups is None:
        groups = memo["state_groups"] = StateGroups.of(nodes)
    return groups


def remember_groups_after_starts(before: NodeTable, after: NodeTable,
                                 started: np.ndarray) -> None:
    """Give ``after`` (the table ``before`` leaves once the idle nodes ``started``, distinct,
    are computing; nothing else changed) its :class:`StateGroups`, found from those of
    ``before`` instead of from its states: only the idle and computing masks change."""
    groups = state_groups(before)
    idle, computing = groups.idle.copy(), groups.computing.copy()
    idle[started] = False
    computing[started] = True
    idle.setflags(write=False)
    computing.setflags(write=False)
    moved = len(started)
    counts = list(groups.counts)
    counts[ns.IDLE] -= moved
    counts[ns.COMPUTING] += moved
    masks = {ns.COMPUTING: computing, ns.IDLE: idle, ns.SWITCHING_ON: groups.switching_on,
             ns.SWITCHING_OFF: groups.switching_off, ns.SLEEPING: groups.sleeping}
    after.memo["state_groups"] = StateGroups.made(
        after.state, after.idle_since_s, tuple(counts), masks,  # type: ignore[arg-type]
        sleep_masks=(groups.asleep, groups.awake))


def release_map(nodes: NodeTable, now: float) -> np.ndarray:
    """Earliest time each node can start a job (SPEC 5, PSAS release map).

    Idle: now. Computing: its job's start + requested time, or never (inf)
    once the job is past its request. Sleeping: now + T_on. Switching off:
    end of the switch-off + T_on. Switching on: end of the switch-on.
    The table remembers the map of the last ``now`` asked; each call returns a new
    (writable) copy.
    """
    memo = nodes.memo
    cached = memo.get("release_map")
    if cached is not None and cached[0] == now:
        return cached[1].copy()
    release = _release_map(nodes, now)
    kept = release.copy()
    kept.setflags(write=False)
    memo["release_map"] = (now, kept)
    return release


def _release_map(nodes: NodeTable, now: float) -> np.ndarray:
    """:func:`release_map` computed from the table."""
    groups = state_groups(nodes)
    release = np.where(groups.idle, float(now), np.inf)
    present = groups.counts
    if present[ns.COMPUTING]:
        computing = groups.computing
        ends = nodes.release_req_s[computing]
        # past its request, or no request known (nan): never
        release[computing] = np.where(unexpired_mask(ends, now), ends, np.inf)
    if present[ns.SLEEPING]:
        sleeping = groups.sleeping
        release[sleeping] = now + nodes.t_on_s[sleeping]
    if present[ns.SWITCHING_OFF]:
        off = groups.switching_off
        release[off] = np.maximum(nodes.transition_end_s[off], now) + nodes.t_on_s[off]
    if present[ns.SWITCHING_ON]:
        on = groups.switching_on
        release[on] = np.maximum(nodes.transition_end_s[on], now)
    return release


def choose_nodes(nodes: NodeTable, release: np.ndarray, start: float, count: int,
                 now: float, exclude: np.ndarray | None = None) -> np.ndarray:
    """Pick ``count`` nodes available by ``start`` (SPEC 5, PSAS node choice).

    Key, lowest first: the energy the node spends before the job starts
    (the authors' code): its committed transition energy (what is left of a
    switch-on; what is left of a switch-off plus E_on; E_on for a sleeping
    node) plus, for a node that will be awake, idle power x (start -
    release) (a sleeping node is woken just in time); then the state rank
    (idle, computing, switching on, asleep); then the longest remaining
    idle timer (the latest ``idle_since``: every node has the same
    timeout); then the node id. Returns the chosen ids (fewer if not enough).
    A plan that chooses many times at one ``now`` builds :class:`NodeChoice` once.
    """
    return NodeChoice.of(nodes, now).choose(release, start, count, exclude)


@dataclass(frozen=True, eq=False)
class NodeChoice:
    """The keys of :func:`choose_nodes` that do not depend on the release map.

    Built once per node table and time ``now``: ``committed_j``, each node's
    :func:`committed_energy`; ``awake``, the nodes that idle until the start
    (not asleep, not switching off); ``rank``, :data:`STATE_RANK`;
    ``later_idle``, minus ``idle_since`` for an idle node (+inf otherwise), so
    that ascending order puts the longest remaining timer first. ``awake``,
    ``rank`` and ``later_idle`` are those of ``groups``; they and ``committed_j``
    are made when first read: a choice among idle nodes alone (every start now)
    reads only ``later_idle``.
    """

    nodes: NodeTable
    now: float
    groups: StateGroups

    @classmethod
    def of(cls, nodes: NodeTable, now: float) -> NodeChoice:
        """The node-choice keys of ``nodes`` at ``now`` (remembered by the table for the
        last ``now`` asked)."""
        cached = nodes.memo.get("node_choice")
        if cached is not None and cached[0] == now:
            return cached[1]
        choice = cls(nodes=nodes, now=now, groups=state_groups(nodes))
        nodes.memo["node_choice"] = (now, choice)
        return choice

    @functools.cached_property
    def committed_j(self) -> np.ndarray:
        """Each node's :func:`committed_energy` at ``now`` (read-only), made when first read."""
        committed = committed_energy(self.nodes, self.now)
        committed.setflags(write=False)
        return committed

    def choose(self, release: np.ndarray, start: float, count: int,
               exclude: np.ndarray | None = None) -> np.ndarray:
        """:func:`choose_nodes` on ``release`` for a start at ``start``.

        The candidates are in ascending id and ``np.lexsort`` is stable, so the
        id key needs no sort of its own.
        """
        candidates = (release <= start).nonzero()[0]
        if exclude is not None and len(exclude):
            allowed = np.ones(len(release), dtype=bool)
            allowed[exclude] = False
            candidates = candidates[allowed[candidates]]
        groups = self.groups
        later_idle = groups.later_idle[candidates]
        idle_j = self.nodes.p_idle_w[candidates] * (start - release[candidates])
        # every candidate idle (the usual immediate start): no transition, same rank
        if np.count_nonzero(groups.idle[candidates]) == len(candidates):
            return candidates[np.lexsort((later_idle, idle_j))[:count]]
        cost = self.committed_j[candidates] + np.where(groups.awake[candidates], idle_j, 0.0)
        order = np.lexsort((later_idle, groups.rank[candidates], cost))
        return candidates[order[:count]]


def committed_energy(nodes: NodeTable, now: float) -> np.ndarray:
    """Transition energy each node must still spend before it can compute (J).

    Switching on: the rest of the switch-on at E_on / T_on. Switching off: the
    rest of the switch-off at E_off / T_off, then a whole switch-on (E_on).
    Sleeping: E_on. Idle and computing nodes: 0.
    """
    groups = state_groups(nodes)
    energy = np.where(groups.sleeping, nodes.e_on_j, 0.0)
    present = groups.counts
    if present[ns.SWITCHING_ON]:
        on = groups.switching_on
        left = np.maximum(nodes.transition_end_s[on] - now, 0.0)
        energy[on] = nodes.e_on_j[on] / nodes.t_on_s[on] * left
    if present[ns.SWITCHING_OFF]:
        off = groups.switching_off
        left = np.maximum(nodes.transition_end_s[off] - now, 0.0)
        energy[off] = nodes.e_off_j[off] / nodes.t_off_s[off] * left + nodes.e_on_j[off]
    return energy


@dataclass(frozen=True)
class PlannedJob:
    """One job of the sequential plan: planned start s_j, finish f_j, nodes B_j (eq. 13-15)."""

    job: QueuedJob
    start: float
    finish: float
    nodes: np.ndarray


def sequential_plan(nodes: NodeTable, release: np.ndarray, jobs: Sequence[QueuedJob],
                    durations: Sequence[float], now: float, *,
                    choice: NodeChoice | None = None) -> list[PlannedJob]:
    r"""Plan the queue one job at a time (paper, Definition 6).

    .. math:: s_{j_k} = \max\{b_k, \hat t^{rel}_{(r_{j_k}),k}\}, \quad
              f_{j_k} = s_{j_k} + \hat D_{j_k}, \quad b_{k+1} = s_{j_k}

    ``release`` is the release map (it is not modified); ``durations`` the
    planned duration of each job (requested time for the baselines, eq. 46
    for SNF-ICON). Planning stops at the first job that cannot get enough
    plannable nodes. ``choice``: the node-choice keys of ``nodes`` at ``now``, when the
    caller has them already. :func:`lazy_sequential_plan` is the same plan read job by job.
    """
    return list(_sequential_jobs(nodes, release.copy(), jobs, durations, now, choice))


def _sequential_jobs(nodes: NodeTable, release: np.ndarray, jobs: Sequence[QueuedJob],
                     durations: Sequence[float], now: float,
                     choice: NodeChoice | None) -> Iterator[PlannedJob]:
    """The jobs of :func:`sequential_plan` one at a time; ``release`` (a copy the
    caller gives away) is updated as they are planned."""
    barrier = now
    # The k-th smallest finite release is the k-th smallest release (inf and nan sort
    # last); a planned job's nodes were finite and stay so unless its finish is not.
    finite = int(np.count_nonzero(np.isfinite(release)))
    if jobs and choice is None:
        choice = NodeChoice.of(nodes, now)
    for job, duration in zip(jobs, durations, strict=True):
        res = job.res
        if res > finite:
            return
        ordered = release.copy()
        ordered.partition(res - 1)
        start = max(barrier, float(ordered[res - 1]))
        chosen = choice.choose(release, start, res)
        finish = start + duration
        release[chosen] = finish
        if not math.isfinite(finish):
            finite -= len(chosen)
        yield PlannedJob(job=job, start=start, finish=finish, nodes=chosen)
        barrier = start


#: Durations up to this (s), and finite releases up to this, cannot overflow a planned
#: finish: :func:`planned_count` counts the plan without making it.
SAFE_TIME_S = 1e300


def planned_count(release: np.ndarray, jobs: Sequence[QueuedJob],
                  durations: Sequence[float], now: float) -> int | None:
    """How many jobs :func:`sequential_plan` places, without planning them (None when
    that cannot be known so).

    Planning stops at the first job needing more nodes than have a finite release
    (Definition 6); a planned job's nodes stay finite when its finish is, which is
    certain when every duration is in [0, :data:`SAFE_TIME_S`] and so are ``now`` and
    every finite release (a start is at most a release or an earlier finish, so no sum
    overflows). So the count is the number of jobs before the first with ``r_j`` > the
    number of finite releases.
    """
    if len(jobs) != len(durations) or len(jobs) > 10**6 or not abs(now) <= SAFE_TIME_S:
        return None
    finite = int(np.count_nonzero(np.abs(release) <= SAFE_TIME_S))
    if finite + int(np.count_nonzero(release == math.inf)) != len(release):
        return None  # a release is nan, -inf or too large to sum safely
    if not all(0.0 <= duration <= SAFE_TIME_S for duration in durations):
        return None
    for k, job in enumerate(jobs):
        if job.res > finite:
            return k
    return len(jobs)


class Plan(Sequence[PlannedJob]):
    """A future plan whose jobs are made when first read (a read-only sequence).

    ``monotone``: the planned starts never decrease along the plan (the
    sequential plan of Definition 6: s_{k+1} >= b_{k+1} = s_k), so a reader that
    needs only the jobs starting before some time may stop at the first one
    starting later (:func:`decisive_wake_times`, the IPM keep rule).
    ``length``: the number of planned jobs when it is known without planning
    (:func:`planned_count`), else None (``len`` then makes the whole plan).
    A plan compares equal to a list of the same jobs.
    """

    def __init__(self, jobs: Iterator[PlannedJob], *, monotone: bool,
                 length: int | None = None) -> None:
        self._source: Iterator[PlannedJob] | None = jobs
        self._made: list[PlannedJob] = []
        self._length = length
        self.monotone = monotone

    def _make(self, count: int | None) -> None:
        """Make the jobs up to ``count`` (None: all)."""
        source, made = self._source, self._made
        if source is None:
            return
        for planned in source:
            made.append(planned)
            if count is not None and len(made) >= count:
                return
        self._source = None

    def __iter__(self) -> Iterator[PlannedJob]:
        made = self._made
        k = 0
        while True:
            if k < len(made):
                yield made[k]
                k += 1
            elif self._source is None:
                return
            else:
                self._make(k + 1)

    def __len__(self) -> int:
        if self._length is None:
            self._make(None)
            self._length = len(self._made)
        return self._length

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice) or index < 0:
            self._make(None)
        else:
            self._make(index + 1)
        return self._made[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Plan | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Plan({list(self)!r})"


def empty_plan() -> Plan:
    """The plan of no job (any order's)."""
    return Plan(iter(()), monotone=True, length=0)


def lazy_sequential_plan(nodes: NodeTable, release: np.ndarray, jobs: Sequence[QueuedJob],
                         durations: Sequence[float], now: float) -> Plan:
    """:func:`sequential_plan` as a :class:`Plan` (monotone): each job is planned when
    first read, so a reader that stops early does not plan the rest of the queue."""
    if not jobs:
        return Plan(iter(()), monotone=True, length=0)
    jobs, durations = list(jobs), list(durations)
    release = release.copy()  # the caller may change its map after this call
    length = planned_count(release, jobs, durations, now)
    return Plan(_sequential_jobs(nodes, release, jobs, durations, now, None), monotone=True,
                length=length)


def easy_plan(nodes: NodeTable, release: np.ndarray, jobs: Sequence[QueuedJob],
              durations: Sequence[float], now: float) -> list[PlannedJob]:
    """The future plan of an FCFS queue with EASY backfilling (head first).

    The head is planned as in :func:`sequential_plan` and its nodes are
    reserved from its planned start s_h. Each later job, in FCFS order, is
    planned ahead of the head when it can start before s_h on nodes outside
    the reservation, or on reserved nodes if it ends (by its duration) by s_h;
    otherwise it is planned after, with the non-decreasing barrier. Sleeping
    nodes of backfilled jobs are then woken in time for them, as for any
    planned job.
    """
    if not jobs:
        return []
    choice = NodeChoice.of(nodes, now)
    head = sequential_plan(nodes, release, jobs[:1], durations[:1], now, choice=choice)
    if not head:
        return []
    shadow, reserved = head[0].start, head[0].nodes
    free = release.copy()  # releases before the head's reservation
    booked = release.copy()
    booked[reserved] = head[0].finish
    plan = list(head)
    barrier = shadow
    for job, duration in zip(jobs[1:], durations[1:], strict=True):
        outside = free.copy()
        outside[reserved] = np.inf
        start = _kth_release(outside, job.res)
        pool = outside
        if not start < shadow:
            start = _kth_release(free, job.res)
            pool = free
            if not start + duration <= shadow:
                start = None
        if start is not None:
            chosen = choice.choose(pool, start, job.res)
            free[chosen] = booked[chosen] = start + duration
            plan.append(PlannedJob(job=job, start=start, finish=start + duration, nodes=chosen))
            continue
        start = max(barrier, _kth_release(booked, job.res))
        if not np.isfinite(start):
            break
        chosen = choice.choose(booked, start, job.res)
        booked[chosen] = start + duration
        free[chosen] = np.maximum(free[chosen], start + duration)
        plan.append(PlannedJob(job=job, start=start, finish=start + duration, nodes=chosen))
        barrier = start
    return plan


def _kth_release(release: np.ndarray, count: int) -> float:
    """The count-th earliest finite release time (inf when fewer are finite)."""
    finite = release[np.isfinite(release)]
    if count > len(finite):
        return np.inf
    return float(np.partition(finite, count - 1)[count - 1])


def wake_times(nodes: NodeTable, plan: Sequence[PlannedJob]) -> dict[int, float]:
    r"""Wake time of every sleeping node the plan uses (eq. 15-16).

    .. math:: t^{\uparrow}_i = \min_{j : i \in B_j} (s_j - L^{\uparrow}_i)

    Nodes switching off are included: they are woken once asleep.
    """
    if not plan:
        return {}
    ids = np.concatenate([planned.nodes for planned in plan])
    starts = np.concatenate([np.full(len(p.nodes), p.start) for p in plan])
    state = nodes.state[ids]
    asleep = (state == ns.SLEEPING) | (state == ns.SWITCHING_OFF)
    if not asleep.any():
        return {}
    ids, starts = ids[asleep], starts[asleep]
    earliest = np.full(nodes.size, np.inf)
    np.minimum.at(earliest, ids, starts - nodes.t_on_s[ids])
    woken = np.unique(ids)
    return dict(zip(woken.tolist(), earliest[woken].tolist(), strict=True))


def decisive_wake_times(nodes: NodeTable, plan: Sequence[PlannedJob],
                        now: float) -> dict[int, float]:
    r"""The wake times of eq. 15-16 (:func:`wake_times`) that decide an invocation at
    ``now``: every one that is due, and the earliest future one.

    A monotone :class:`Plan` is read only while a later job could add either:
    its nodes' first use is their earliest (so their wake time is final), and
    once a job starts at s with :math:`s - \max_i L^{\uparrow}_i` in the future
    and no earlier than the earliest future wake time found, no later job can
    add a due wake nor an earlier one. Other plans give :func:`wake_times`.
    """
    groups = state_groups(nodes)
    if not (groups.counts[ns.SLEEPING] or groups.counts[ns.SWITCHING_OFF]) or not plan:
        return {}
    asleep = groups.asleep
    if not (isinstance(plan, Plan) and plan.monotone):
        return wake_times(nodes, plan)
    t_on = nodes.t_on_s
    unseen = asleep.copy()  # the asleep nodes no job read so far uses
    left = groups.counts[ns.SLEEPING] + groups.counts[ns.SWITCHING_OFF]
    latest_on = float(t_on[asleep].max())
    soon = now + TIME_TOLERANCE_S  # is_future(when, now) is when > soon
    woken: list[np.ndarray] = []
    times: list[np.ndarray] = []
    earliest_future = math.inf
    for planned in plan:
        start = planned.start
        bound = start - latest_on
        if bound > soon and bound >= earliest_future:
            break
        ids = planned.nodes
        first = ids[unseen[ids]]  # this job's nodes are distinct: each is first used here
        if len(first):
            unseen[first] = False
            left -= len(first)
            when = start - t_on[first]
            woken.append(first)
            times.append(when)
            future = when[when > soon]
            if len(future):
                earliest_future = min(earliest_future, float(future.min()))
        if not left:
            break
    if not woken:
        return {}
    ids = np.concatenate(woken) if len(woken) > 1 else woken[0]
    when = np.concatenate(times) if len(times) > 1 else times[0]
    order = np.argsort(ids, kind="stable")
    return dict(zip(ids[order].tolist(), when[order].tolist(), strict=True))


#: Times this close are equal in the hole search (the authors' code's epsilon).
GAP_EPS_S = 1e-9
#: Largest (candidate times x busy entries) array of one step of the hole search.
HOLE_BATCH_CELLS = 1 << 18
#: Cells of the first batch of the hole search: a small array costs its call, not its size.
FIRST_BATCH_CELLS = 1 << 12


def easy_gap_plan(nodes: NodeTable, release: np.ndarray, jobs: Sequence[QueuedJob],
                  durations: Sequence[float], now: float) -> list[PlannedJob]:
    """The future plan of an FCFS queue with EASY backfilling, as the authors' code builds it.

    First the sequential plan (Definition 6) of the whole queue, head first:
    job k gets (s_k, B_k). Then the jobs are placed again in FCFS order on
    per-node timelines (each node busy until its release, then by the jobs
    placed so far), each one in the earliest hole that leaves every job
    placed before it undisturbed:

    1. the head keeps (s_1, B_1);
    2. a later job k is placed at the earliest candidate time t in
       [now, s_k), on r_k nodes that are free over [t, t + D_k), if there
       is one (it will be backfilled, perhaps on nodes woken for it);
    3. else it keeps (s_k, B_k) if those nodes are still free over
       [s_k, s_k + D_k);
    4. else at the earliest candidate time t >= s_k with a hole; if there
       is none, planning stops.

    Candidate times are ``now``, the finite releases and the planned
    finishes. Node choice in a hole is :func:`choose_nodes` with each node's
    release taken as the end of its previous busy interval (so the idle
    term counts from there). This is conservative backfilling applied to
    the plan that drives PSAS wake-ups; the immediate starts stay EASY's.
    The plan lists the jobs in FCFS order, head first (as :func:`easy_plan`:
    a layer that protects only the head reads it first), not by start.
    """
    if not jobs:
        return []
    choice = NodeChoice.of(nodes, now)
    seed = sequential_plan(nodes, release, jobs, durations, now, choice=choice)
    if not seed:
        return []
    timeline = _Timeline(release, now, len(seed))
    head = seed[0]
    timeline.book(head.nodes, head.start, head.finish)
    plan = [head]
    cleared = _Cleared()
    for planned in seed[1:]:
        duration = planned.finish - planned.start
        placed = None
        if now + GAP_EPS_S < planned.start:
            count = planned.job.res
            placed, clear = _first_hole(choice, timeline, count, duration, now,
                                        planned.start, cleared.below(count, duration))
            cleared.add(count, duration, clear)
            if placed is not None and not placed[0] + GAP_EPS_S < planned.start:
                placed = None
        if placed is None and timeline.free_over(planned.nodes, planned.start, planned.finish):
            placed = (planned.start, planned.nodes)
        if placed is None:
            placed, _ = _first_hole(choice, timeline, planned.job.res, duration,
                                    planned.start, np.inf)
            if placed is None:
                break
        start, chosen = placed
        timeline.book(chosen, start, start + duration)
        plan.append(PlannedJob(job=planned.job, start=start, finish=start + duration,
                               nodes=chosen))
    return plan


def lazy_easy_gap_plan(nodes: NodeTable, release: np.ndarray, jobs: Sequence[QueuedJob],
                       durations: Sequence[float], now: float) -> Plan:
    """:func:`easy_gap_plan` as a :class:`Plan`, made whole when first read.

    Its length is known without planning (:func:`planned_count`): the hole search
    of step 4 always succeeds once every duration is finite and >= 0 (at the
    latest candidate time every node with a finite release is free, since each
    booking ends by then), so the plan places the jobs its sequential seed does.
    A reader that needs no job (no node asleep, no idle timer expired) plans nothing.
    """
    if not jobs:
        return Plan(iter(()), monotone=False, length=0)
    jobs, durations = list(jobs), list(durations)
    release = release.copy()
    length = planned_count(release, jobs, durations, now)
    return Plan(_deferred(easy_gap_plan, nodes, release, jobs, durations, now),
                monotone=False, length=length)


def _deferred(make: Callable[..., list[PlannedJob]], *args: object) -> Iterator[PlannedJob]:
    """The jobs of ``make(*args)``, called when the first one is read."""
    yield from make(*args)


class _Timeline:
    """Busy intervals of every node: [now, release) then the jobs booked so far.

    One row per booked job: its start, end and a 0/1 row over the nodes it holds
    (grown by doubling). A job's nodes share its interval, so a test of a time
    against the bookings is one per job, and the nodes it blocks are a product
    with the rows (exact: small integer counts in float32).
    """

    def __init__(self, release: np.ndarray, now: float, capacity: int = 8) -> None:
        self.release = release
        #: The finite releases, ascending (a list: bisected, never computed on).
        finite = np.sort(release[np.isfinite(release)])
        self.sorted_release: list[float] = finite.tolist()
        # each finite release once (the sorted array without its repeats), and now
        distinct = np.ones(len(finite), dtype=bool)
        distinct[1:] = finite[1:] != finite[:-1]
        times = finite[distinct].tolist()
        at = bisect.bisect_left(times, now)
        if at == len(times) or times[at] != now:
            times.insert(at, float(now))
        self._times: list[float] = times
        capacity = max(capacity, 1)
        self._member = np.zeros((capacity, len(release)), dtype=np.float32)
        self._start = np.empty(capacity)
        self._end = np.empty(capacity)
        self.jobs = 0

    @property
    def start(self) -> np.ndarray:
        return self._start[:self.jobs]

    @property
    def end(self) -> np.ndarray:
        return self._end[:self.jobs]

    @property
    def member(self) -> np.ndarray:
        return self._member[:self.jobs]

    def candidate_times(self) -> list[float]:
        """The finite releases, ``now`` and the finishes booked so far: sorted, each once
        (the timeline's own list: read, do not change)."""
        return self._times

    def book(self, ids: np.ndarray, start: float, end: float) -> None:
        row = self.jobs
        if row == len(self._start):
            grown = 2 * row
            member = np.zeros((grown, self._member.shape[1]), dtype=np.float32)
            member[:row] = self._member
            self._member = member
            self._start = np.concatenate([self._start, np.empty(row)])
            self._end = np.concatenate([self._end, np.empty(row)])
        self._member[row, ids] = 1.0
        self._start[row] = start
        self._end[row] = end
        self.jobs = row + 1
        if math.isfinite(end):
            times = self._times
            at = bisect.bisect_left(times, end)
            if at == len(times) or times[at] != end:
                times.insert(at, end)

    def blocked(self, t: float, duration: float) -> np.ndarray:
        """Mask of the nodes a job of ``duration`` may not use from ``t``: busy at ``t``
        (not yet released, or in a booked interval), or booked again before ``t + duration``."""
        return self.blocked_at(np.array([t]), duration)[0]

    def _clash(self, times: np.ndarray, duration: float) -> np.ndarray:
        """Booked jobs (columns) that block a job of ``duration`` started at each of
        ``times`` (rows)."""
        ahead = self.start[None, :] - times[:, None]
        return np.where(ahead > 0, (ahead <= GAP_EPS_S) | (ahead + GAP_EPS_S < duration),
                        times[:, None] < self.end[None, :])

    def blocked_at(self, times: np.ndarray, duration: float) -> np.ndarray:
        """:meth:`blocked` at each of ``times``: one row per time."""
        mask = self.release[None, :] > times[:, None]
        if self.jobs:
            clash = self._clash(times, duration)
            if clash.any():
                mask |= (clash.astype(np.float32) @ self.member) > 0.0
        return mask

    def previous_end(self, t: float) -> np.ndarray:
        """For each node, the end of its last busy interval that ended by ``t``
        (its release if none; inf if it is not released by ``t``)."""
        prev_end = np.where(self.release <= t, self.release, np.inf)
        ended = self.end <= t
        if ended.any():
            held = self.member[ended] > 0.0
            last = np.where(held, self.end[ended][:, None], -np.inf).max(axis=0)
            np.maximum(prev_end, last, out=prev_end)
        return prev_end

    def free_over(self, ids: np.ndarray, start: float, end: float) -> bool:
        """Whether every node of ``ids`` is free over [start, end)."""
        if (self.release[ids] > start).any():
            return False
        if not self.jobs:
            return True
        # the one row of _clash at ``start``, computed on 1-d arrays (the same operations)
        duration = end - start
        ahead = self.start - start
        clash = np.where(ahead > 0, (ahead <= GAP_EPS_S) | (ahead + GAP_EPS_S < duration),
                         start < self.end)
        rows = clash.nonzero()[0]
        return not (len(rows) and self.member[rows][:, ids].any())


def _first_hole(choice: NodeChoice, timeline: _Timeline, count: int, duration: float,
                earliest: float, latest: float, skip_below: float = -math.inf,
                ) -> tuple[tuple[float, np.ndarray] | None, float]:
    """The earliest candidate time in [earliest, latest) with ``count`` nodes free for
    ``duration`` from then, and the nodes :func:`choose_nodes` picks there; and the
    time below which no candidate time has such a hole (the hole's time, or the end
    of the range searched).

    ``skip_below``: a time below which no candidate has a hole, known beforehand
    (:class:`_Cleared`); those candidates are not tried.
    """
    times = timeline.candidate_times()  # the ones in [earliest, latest) (with the
    # tolerance), and earliest itself, sorted and each once
    upto = latest - GAP_EPS_S
    times = times[bisect.bisect_left(times, earliest - GAP_EPS_S):
                  bisect.bisect_left(times, upto)]
    at = bisect.bisect_left(times, earliest)
    if at == len(times) or times[at] != earliest:
        times.insert(at, earliest)
    # Booked jobs only take nodes away: skip the times with fewer than count released
    # nodes, i.e. before the count-th release (times are sorted).
    if count > len(timeline.sorted_release):
        return None, upto
    times = times[bisect.bisect_left(times, max(timeline.sorted_release[count - 1],
                                                skip_below)):]
    # The times are tried in order, a growing batch at a time (one array operation per
    # batch, of at most HOLE_BATCH_CELLS cells).
    size = len(timeline.release)
    width = size + timeline.jobs
    first, batch = 0, max(4, FIRST_BATCH_CELLS // width)
    while first < len(times):
        chunk = np.array(times[first:first + batch])
        blocked = timeline.blocked_at(chunk, duration)
        fits = np.flatnonzero(size - np.count_nonzero(blocked, axis=1) >= count)
        if len(fits):
            t = float(chunk[fits[0]])
            release = np.where(blocked[fits[0]], np.inf, timeline.previous_end(t))
            return (t, choice.choose(release, t, count)), t
        first += len(chunk)
        batch = max(1, min(4 * batch, HOLE_BATCH_CELLS // width))
    return None, upto


class _Cleared:
    r"""What the hole searches from ``now`` of one plan proved: for a job of ``count``
    nodes and ``duration``, no candidate time below ``clear`` has a hole.

    It holds for any later job needing at least as many nodes for at least as long
    (the bookings only grow, and so do the candidate times). Let t' < clear be such a
    job's hole and t'' the latest candidate time <= t' when the proof was made: no
    release nor booked end lies in (t'', t'], so a node busy at t'' or booked from
    (t'', t'] is busy at t', and a booking after t' that clashes with [t'', t'' + D)
    clashes with [t', t' + D') (D <= D'). Every node free for the later job at t' was
    free at t'' then, so t'' would have been a hole of the first job, below ``clear``.
    """

    def __init__(self) -> None:
        self._clear: dict[tuple[int, float], float] = {}

    def add(self, count: int, duration: float, clear: float) -> None:
        """Record a search from ``now`` for ``count`` nodes and ``duration``."""
        key = (count, duration)
        if clear > self._clear.get(key, -math.inf):
            self._clear[key] = clear

    def below(self, count: int, duration: float) -> float:
        """The time below which a job of ``count`` nodes and ``duration`` has no hole."""
        return max((clear for (c, d), clear in self._clear.items()
                    if c <= count and d <= duration), default=-math.inf)
