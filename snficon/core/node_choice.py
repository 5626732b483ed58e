"""SPEC 5's node choice: the node-state groups of a table and the energy-aware choice.

The partition of a node table by state (Definition 1: C, I, U, D, S) and the
keys PSAS chooses nodes by: the transition energy a node has committed, its
idle energy until the start, its state rank, its idle timer, its id.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from snficon.core import view as ns
from snficon.core.view import NodeTable

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
