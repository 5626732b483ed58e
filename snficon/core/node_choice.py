"""SPEC 5's node choice: the node-state groups of a table and the energy-aware choice.

The partition of a node table by state (Definition 1: C, I, U, D, S) and the
keys PSAS chooses nodes by: the transition energy a node has committed, its
idle energy until the start, its state rank, its idle timer, its id.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snficon.core import view as ns
from snficon.core.view import ClusterView, NodeTable

#: Node-state priority of the node choice: idle < computing < switching on < asleep.
STATE_RANK = np.array([1, 0, 2, 3, 3])  # indexed by NodeState


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


#: The codes of :class:`~snficon.core.view.NodeState`, one row each in :meth:`StateGroups.of`.
_STATE_CODES = np.arange(len(ns.NodeState))[:, None]


@dataclass(frozen=True)
class StateGroups:
    """The partition of one node table by state (Definition 1: C, I, U, D, S), built
    once per invocation's table (:meth:`of`) and passed to whoever reads it.

    A read-only mask per state and how many nodes each holds (``counts``, indexed by
    :class:`~snficon.core.view.NodeState`); :attr:`asleep` (sleeping or switching off)
    and :attr:`awake` (the others: they idle until a start) are made when read.
    """

    nodes: NodeTable
    computing: np.ndarray
    idle: np.ndarray
    switching_on: np.ndarray
    switching_off: np.ndarray
    sleeping: np.ndarray
    counts: tuple[int, int, int, int, int]

    @classmethod
    def of(cls, nodes: NodeTable) -> StateGroups:
        """The groups of ``nodes``, from its states: one comparison of the states with
        every state code gives the masks, one row each."""
        state = nodes.state
        masks = _read_only(state == _STATE_CODES)
        counts = tuple(np.bincount(state, minlength=len(ns.NodeState)).tolist())
        return cls(nodes, *masks, counts=counts)  # type: ignore[arg-type]

    @property
    def asleep(self) -> np.ndarray:
        """The nodes sleeping or switching off (read-only, made when read)."""
        return _read_only(self.sleeping | self.switching_off)

    @property
    def awake(self) -> np.ndarray:
        """The nodes neither sleeping nor switching off (read-only, made when read)."""
        return _read_only(~(self.sleeping | self.switching_off))

    def after_starts(self, after: NodeTable, started: np.ndarray) -> StateGroups:
        """The groups of ``after``: this table once its idle nodes ``started`` (distinct)
        are computing, nothing else changed; found from these groups instead of from its
        states: only the idle and computing masks and the counts change (no node goes to
        sleep or wakes)."""
        idle, computing = self.idle.copy(), self.computing.copy()
        idle[started] = False
        computing[started] = True
        counts = list(self.counts)
        counts[ns.IDLE] -= len(started)
        counts[ns.COMPUTING] += len(started)
        return StateGroups(nodes=after, computing=_read_only(computing), idle=_read_only(idle),
                           switching_on=self.switching_on, switching_off=self.switching_off,
                           sleeping=self.sleeping, counts=tuple(counts))  # type: ignore[arg-type]


def state_groups(view: ClusterView) -> StateGroups:
    """The state groups of ``view``'s node table: the builder's (the tracker makes them
    once per table, and a view whose table did not change since the last one shares
    them) when they stand for ``view.nodes`` (the same table), else built from its
    states (a view made by hand, or one whose ``nodes`` was replaced)."""
    groups = view.groups
    if groups is not None and groups.nodes is view.nodes:
        return groups
    return StateGroups.of(view.nodes)


def choose_nodes(groups: StateGroups, release: np.ndarray, start: float, count: int,
                 now: float, exclude: np.ndarray | None = None) -> np.ndarray:
    """Pick ``count`` nodes available by ``start`` (SPEC 5, PSAS node choice).

    Key, lowest first: the energy the node spends before the job starts
    (the authors' code): its committed transition energy (what is left of a
    switch-on; what is left of a switch-off plus E_on; E_on for a sleeping
    node) plus, for a node that will be awake, idle power x (start -
    release) (a sleeping node is woken just in time); then the state rank
    (idle, computing, switching on, asleep); then the longest remaining
    idle timer (the latest ``idle_since``: every node has the same
    timeout); then the node id. ``groups``: the table's :class:`StateGroups`.
    Returns the chosen ids (fewer if not enough). A plan that chooses many times
    at one ``now`` builds :class:`NodeChoice` once.
    """
    return NodeChoice.of(groups, now).choose(release, start, count, exclude)


@dataclass(frozen=True, eq=False)
class NodeChoice:
    """The keys of :func:`choose_nodes` that do not depend on the release map, at ``now``
    (all read-only).

    ``groups``: the table's :class:`StateGroups`; ``awake``: its nodes that idle until
    the start (:attr:`StateGroups.awake`); ``committed_j``: each node's
    :func:`committed_energy` at ``now``; ``rank``: each node's :data:`STATE_RANK`;
    ``later_idle``: minus ``idle_since`` for an idle node (+inf otherwise), so that
    ascending order puts the longest remaining idle timer first.
    """

    groups: StateGroups
    now: float
    awake: np.ndarray
    committed_j: np.ndarray
    rank: np.ndarray
    later_idle: np.ndarray

    @classmethod
    def of(cls, groups: StateGroups, now: float) -> NodeChoice:
        """The node-choice keys of the table of ``groups`` at ``now``."""
        nodes = groups.nodes
        return cls(groups=groups, now=now, awake=groups.awake,
                   committed_j=_read_only(committed_energy(groups, now)),
                   rank=_read_only(STATE_RANK[nodes.state]),
                   later_idle=_read_only(np.where(groups.idle, -nodes.idle_since_s, np.inf)))

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
        idle_j = groups.nodes.p_idle_w[candidates] * (start - release[candidates])
        cost = self.committed_j[candidates] + np.where(self.awake[candidates], idle_j, 0.0)
        order = np.lexsort((self.later_idle[candidates], self.rank[candidates], cost))
        return candidates[order[:count]]


def committed_energy(groups: StateGroups, now: float) -> np.ndarray:
    """Transition energy each node must still spend before it can compute (J).

    Switching on: the rest of the switch-on at E_on / T_on. Switching off: the
    rest of the switch-off at E_off / T_off, then a whole switch-on (E_on).
    Sleeping: E_on. Idle and computing nodes: 0. ``groups``: the table's
    :class:`StateGroups`.
    """
    nodes = groups.nodes
    energy = np.where(groups.sleeping, nodes.e_on_j, 0.0)
    if groups.counts[ns.SWITCHING_ON]:
        on = groups.switching_on
        left = np.maximum(nodes.transition_end_s[on] - now, 0.0)
        energy[on] = nodes.e_on_j[on] / nodes.t_on_s[on] * left
    if groups.counts[ns.SWITCHING_OFF]:
        off = groups.switching_off
        left = np.maximum(nodes.transition_end_s[off] - now, 0.0)
        energy[off] = nodes.e_off_j[off] / nodes.t_off_s[off] * left + nodes.e_on_j[off]
    return energy
