r"""Warm-spare target selection (paper, sections IV-E to IV-H, eq. 26-39).

At a spare-planning point ICON chooses how many non-computing nodes to hold warm for
the next job. Each candidate target x in {x_min, ..., x_max} (eq. 30-31) is scored by
J(x) = alpha W(x) + beta E(x) (eq. 38), W the power-induced waiting (eq. 32-35), E the
non-compute energy over the capped horizon H (eq. 24-25, 36-37); x* is the
lexicographic minimum of (J, W, E, x) (eq. 39). The event rates, H (Lemma 1) and the
unfinished transition times (Lemma 2) come from :mod:`snficon.core.event_horizon`.

Candidate construction (SPEC 5, "Spare target"): nodes switching on (U) and idle nodes
that may not be switched off (I_f) stay warm; then optional idle nodes are kept
(ascending idle power, then id), then sleeping nodes are woken (ascending
alpha T_on + beta E_on, then id) until x is reached; expired idle nodes (I_e) and
unkept optional ones are switched off. With ``respect_timeout`` every idle node whose
timer has not expired is in I_f. An idle node that cannot sleep (infinite transition
times) is in I_f, expired or not. Nodes in ``exclude`` (e.g. just given a job) count as
computing. H_c uses the earliest future timer of the idle nodes that can sleep.

Candidates differ by one node each, warmed in a fixed order, so :func:`choose_spare_target`
updates the request-weighted delay incrementally with the tail identity

.. math:: \bar d = \sum_{k=1}^{K} q_k d_{(k)} = \int_0^\infty G(N(s) + 1)\,ds,
          \qquad G(m) = \sum_{k \ge m} q_k,

(N(s) = #delays <= s, q the pmf capped to [1, K]): moving one delay from a down to b
changes it by :math:`-\int_b^a q_{N(s)+1}\,ds`, a sum over the delays strictly between b
and a. The decision costs O(N log N) plus those crossings: none on a homogeneous platform
with the timeout respected, at most O(N) per kept optional idle node otherwise.
The tests check it against a brute-force reference written from the paper's equations
(``tests/reference``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from snficon.core import view as ns
from snficon.core.clock import due_mask, future_mask
from snficon.core.event_horizon import capped_horizon, event_rates, expected_unfinished
from snficon.core.node_choice import StateGroups
from snficon.core.params import IconParams
from snficon.core.view import NodeTable

#: The carbon weight of the energy term of J(x) at (now, H) (see :func:`choose_spare_target`).
EnergyWeight = Callable[[float, float], float]


@dataclass(frozen=True)
class SpareResult:
    """The chosen target x* and its plan (decision-log columns pi_A, H, x*, W, E, J).

    ``wake``: sleeping nodes to switch on now; ``switch_off``: idle nodes to switch off
    now (I_e and unkept optional ones); ``keep``: idle nodes that stay warm (all three
    ascending ids). ``candidates`` and ``j_values``/``w_values``/``e_values``: every
    candidate x_min..x_max and its costs. ``h_cap`` is H_c (eq. 24), ``horizon`` H (eq. 25),
    ``k`` the number of non-computing nodes (eq. 32).
    """

    x: int
    w: float
    e: float
    j: float
    horizon: float
    h_cap: float
    pi_a: float
    lam_e: float
    k: int
    wake: tuple[int, ...]
    switch_off: tuple[int, ...]
    keep: tuple[int, ...]
    candidates: np.ndarray
    j_values: np.ndarray
    w_values: np.ndarray
    e_values: np.ndarray


@dataclass(eq=False)
class _Setting:
    """Node partition, candidate order and per-node costs shared by both evaluations
    (an internal record, built once per call and not changed: not frozen, whose checks
    cost a call per field).

    ``fixed_d``/``fixed_e``: delays and energies of the nodes whose role does not depend
    on x (U, I_f, D, I_e); ``order``: optional idle (keep order) then sleeping (wake
    order); ``cold_*``/``warm_*``: their delay and energy when left cold / made warm.
    ``m_min``..``m_max``: how many of ``order`` are warm at x_min..x_max.
    """

    forced_idle: np.ndarray
    optional: np.ndarray
    asleep: np.ndarray
    expired: np.ndarray
    order: np.ndarray
    fixed_d: np.ndarray
    fixed_e: np.ndarray
    cold_d: np.ndarray
    warm_d: np.ndarray
    cold_e: np.ndarray
    warm_e: np.ndarray
    n_forced: int
    m_min: int
    m_max: int
    k: int
    h_cap: float
    horizon: float
    pi_a: float
    lam_e: float


def _segment(p_first, d_first, p_after, h: float) -> np.ndarray:
    """Energy of ``p_first`` for min(d, H) then ``p_after`` for the rest of H (eq. 36)."""
    return p_first * np.minimum(d_first, h) + p_after * np.maximum(h - d_first, 0.0)


@dataclass(frozen=True)
class NodeKinds:
    """The platform's node kinds: nodes whose constants of the spare search are equal.

    ``kind``: each node's kind (index into the other arrays); per kind, its switch-on and
    switch-off durations ``t_on_s``/``t_off_s`` (0 for a kind that cannot sleep: its
    transitions never happen), idle and sleep powers ``p_idle_w``/``p_sleep_w`` and
    transition powers ``p_on_w``/``p_off_w``. A cost that depends on a node only through
    these constants (Lemma 2's phi of a whole transition, eq. 36's energies over H) is
    computed once per kind and read per node through ``kind``: one platform of 1152
    identical nodes has one kind.
    """

    kind: np.ndarray
    t_on_s: np.ndarray
    t_off_s: np.ndarray
    p_idle_w: np.ndarray
    p_sleep_w: np.ndarray
    p_on_w: np.ndarray
    p_off_w: np.ndarray

    @classmethod
    def of(cls, columns: dict[str, np.ndarray], can_sleep: np.ndarray) -> NodeKinds:
        """The kinds of the nodes whose per-node constants are ``columns`` (by field name);
        two nodes are of one kind when every constant is the same double, bit for bit."""
        stacked = np.ascontiguousarray(np.stack(
            [np.asarray(columns[name], dtype=float) for name in _KIND_COLUMNS], axis=1))
        bits = np.concatenate([stacked.view(np.uint64), can_sleep[:, None]], axis=1)
        _, first, kind = np.unique(bits, axis=0, return_index=True, return_inverse=True)
        sleeps = can_sleep[first]
        values = {name: stacked[first, i] for i, name in enumerate(_KIND_COLUMNS)}
        for name in ("t_on_s", "t_off_s"):
            values[name] = np.where(sleeps, values[name], 0.0)
        kinds = cls(kind=kind.reshape(-1).astype(np.int64), **values)
        for name in cls.__dataclass_fields__:
            getattr(kinds, name).setflags(write=False)
        return kinds


#: The per-node constants that make a node's kind (:class:`NodeKinds`).
_KIND_COLUMNS = ("t_on_s", "t_off_s", "p_idle_w", "p_sleep_w", "p_on_w", "p_off_w")


@dataclass(frozen=True)
class SpareCosts:
    """Per-node constants of the spare search: they depend on the platform and on alpha, beta.

    ``p_sleep_w``: sleep power; ``p_on_w`` = E_on / T_on and ``p_off_w`` = E_off / T_off,
    the powers of a transition (eq. 36; 0 for a node that cannot sleep); ``can_sleep``:
    finite transition times; ``wake_order``: every node by ascending alpha T_on + beta E_on,
    then id (the order sleeping nodes are woken in); ``keep_rank``: each node's rank by
    ascending idle power, then id (the order optional idle nodes are kept in); ``kinds``:
    the nodes grouped by equal constants (:class:`NodeKinds`). Build it once per run
    with :meth:`of` and pass it to :func:`choose_spare_target` with node tables of that
    platform (their power columns are the ones read here).
    """

    p_sleep_w: np.ndarray
    p_on_w: np.ndarray
    p_off_w: np.ndarray
    can_sleep: np.ndarray
    wake_order: np.ndarray
    keep_rank: np.ndarray
    kinds: NodeKinds

    @classmethod
    def of(cls, nodes: NodeTable, p_sleep_w, params: IconParams) -> SpareCosts:
        """The constants of ``nodes`` (only their power model is read) under ``params``."""
        can_sleep = np.isfinite(nodes.t_on_s) & np.isfinite(nodes.t_off_s)
        ids = np.arange(nodes.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_on = np.where(can_sleep, nodes.e_on_j / nodes.t_on_s, 0.0)
            p_off = np.where(can_sleep, nodes.e_off_j / nodes.t_off_s, 0.0)
            # a node that cannot sleep is never asleep: its key only avoids 0 x inf
            wake_key = np.where(can_sleep, params.alpha * nodes.t_on_s
                                + params.beta * nodes.e_on_j, np.inf)
        p_sleep = np.array(p_sleep_w, dtype=float)
        keep_rank = np.empty(nodes.size, dtype=np.int64)
        keep_rank[np.lexsort((ids, nodes.p_idle_w))] = ids
        kinds = NodeKinds.of({"t_on_s": nodes.t_on_s, "t_off_s": nodes.t_off_s,
                              "p_idle_w": nodes.p_idle_w, "p_sleep_w": p_sleep,
                              "p_on_w": p_on, "p_off_w": p_off}, can_sleep)
        costs = cls(p_sleep_w=p_sleep, p_on_w=p_on, p_off_w=p_off, can_sleep=can_sleep,
                    wake_order=np.lexsort((ids, wake_key)), keep_rank=keep_rank, kinds=kinds)
        for array in (p_sleep, p_on, p_off, can_sleep, costs.wake_order, keep_rank):
            array.setflags(write=False)
        return costs


#: An empty list of node ids.
_NO_NODES = np.zeros(0, dtype=np.int64)


@dataclass(eq=False)
class _Partition:
    """The non-computing nodes by role in the spare search (SPEC 5, ascending ids unless
    said): U ``up``, D ``down``, I_f ``forced``, I_e ``expired``, optional idle nodes
    ``optional`` (keep order), asleep ``asleep`` (wake order); ``future_timer_s``: the
    remaining timers of the idle nodes that can sleep and have not expired (eq. 24);
    ``k``: how many nodes are not computing (eq. 32)."""

    up: np.ndarray
    down: np.ndarray
    forced: np.ndarray
    expired: np.ndarray
    optional: np.ndarray
    asleep: np.ndarray
    future_timer_s: np.ndarray
    k: int


def _partition(nodes: NodeTable, costs: SpareCosts, now: float, params: IconParams,
               exclude: Sequence[int], groups: StateGroups | None) -> _Partition:
    """Split the nodes into the roles of the spare search; ``exclude`` counts as computing.

    Only the idle nodes' timers are read (eq. 24, 30); a state absent from the platform
    costs no pass over the nodes.
    """
    state = nodes.state
    if len(exclude):
        state = state.copy()
        state[np.asarray(exclude, dtype=int)] = ns.COMPUTING
        present = np.bincount(state, minlength=len(ns.NodeState)).tolist()

        def in_state(code: int) -> np.ndarray:
            return (state == code).nonzero()[0] if present[code] else _NO_NODES
    else:  # the table's own groups (the caller's, or built here)
        groups = StateGroups.of(nodes) if groups is None else groups
        present = groups.counts
        masks = (groups.computing, groups.idle, groups.switching_on, groups.switching_off,
                 groups.sleeping)

        def in_state(code: int) -> np.ndarray:
            return masks[code].nonzero()[0] if present[code] else _NO_NODES

    idle = in_state(ns.IDLE)
    timer_end = nodes.idle_since_s[idle] + params.timeout
    sleepable = costs.can_sleep[idle]
    expired = sleepable & due_mask(timer_end, now)
    rest = ~expired
    forced = rest if params.respect_timeout else rest & ~sleepable
    optional = idle[rest & ~forced]
    if len(optional) > 1:
        optional = optional[np.argsort(costs.keep_rank[optional])]
    wake_order = costs.wake_order
    asleep = (wake_order[state[wake_order] == ns.SLEEPING] if present[ns.SLEEPING]
              else _NO_NODES)
    return _Partition(
        up=in_state(ns.SWITCHING_ON), down=in_state(ns.SWITCHING_OFF), forced=idle[forced],
        expired=idle[expired], optional=optional, asleep=asleep,
        future_timer_s=timer_end[sleepable & future_mask(timer_end, now)] - now,
        k=int(len(state) - present[ns.COMPUTING]))


def _setting(nodes: NodeTable, costs: SpareCosts, now: float, lam: float, lam_c: float,
             params: IconParams, exclude: Sequence[int],
             groups: StateGroups | None = None) -> _Setting:
    """The node roles, H_c and H (eq. 23-25), and every delay and energy of the search.

    Whole transitions (a switch-off now, a wake now) and the energies over H depend on a
    node only through its kind (:class:`NodeKinds`): computed per kind, then read per node.
    """
    part = _partition(nodes, costs, now, params, exclude, groups)
    up, down, forced, expired = part.up, part.down, part.forced, part.expired
    optional, asleep = part.optional, part.asleep

    # eq. 24: H_c = min(H_max, time to the earliest future idle timer); eq. 23, 25
    future = part.future_timer_s
    h_cap = (min(params.h_max, float(np.minimum.reduce(future))) if len(future)
             else params.h_max)
    pi_a, lam_e = event_rates(lam, lam_c)
    h = capped_horizon(lam_e, h_cap)

    kinds = costs.kinds
    # what is left of the transitions in flight (none, usually: no array operation then)
    a_up = np.maximum(nodes.transition_end_s[up] - now, 0.0) if len(up) else _NO_TIME
    b_down = np.maximum(nodes.transition_end_s[down] - now, 0.0) if len(down) else _NO_TIME
    # Lemma 2 for every unfinished transition and every kind's whole ones, in one pass.
    phi = expected_unfinished(np.concatenate([a_up, b_down, kinds.t_off_s, kinds.t_on_s]),
                              lam_e)
    n_up, n_down, n_kinds = len(up), len(down), len(kinds.t_on_s)
    phi_up, phi_down = phi[:n_up], phi[n_up:n_up + n_down]
    phi_off = phi[n_up + n_down:n_up + n_down + n_kinds]
    phi_on = phi[n_up + n_down + n_kinds:]
    # per kind: switched off now, then on (delay, eq. 33); energies over H (eq. 36)
    off_on_d = phi_off + kinds.t_on_s
    off_e = _segment(kinds.p_off_w, kinds.t_off_s, kinds.p_sleep_w, h)
    on_e = _segment(kinds.p_on_w, kinds.t_on_s, kinds.p_idle_w, h)
    idle_e, sleep_e = kinds.p_idle_w * h, kinds.p_sleep_w * h

    kind = kinds.kind
    k_expired, k_optional, k_asleep = kind[expired], kind[optional], kind[asleep]
    t_on = nodes.t_on_s
    fixed_d = np.concatenate([
        phi_up,                                                    # U: Lemma 2
        np.zeros(len(forced)),                                     # I_f: warm
        phi_down + t_on[down],                                     # D: off, then on
        off_on_d[k_expired]])                                      # I_e: off now
    fixed_e = np.concatenate([
        _segment(costs.p_on_w[up], a_up, nodes.p_idle_w[up], h) if n_up else _NO_TIME,
        idle_e[kind[forced]],
        (_segment(costs.p_off_w[down], b_down, costs.p_sleep_w[down], h) if n_down
         else _NO_TIME),
        off_e[k_expired]])
    order = np.concatenate([optional, asleep])
    cold_d = np.concatenate([off_on_d[k_optional], t_on[asleep]])
    warm_d = np.concatenate([np.zeros(len(optional)), phi_on[k_asleep]])
    cold_e = np.concatenate([off_e[k_optional], sleep_e[k_asleep]])
    warm_e = np.concatenate([idle_e[k_optional], on_e[k_asleep]])

    # eq. 29-31 (S_max None: the platform size)
    n_forced = n_up + len(forced)
    x_real = n_forced + len(order)
    s_max = nodes.size if params.s_max is None else params.s_max
    x_min = max(n_forced, min(params.s_min, x_real))
    x_max = max(x_min, min(s_max, x_real))
    return _Setting(
        forced_idle=forced, optional=optional, asleep=asleep, expired=expired, order=order,
        fixed_d=fixed_d, fixed_e=fixed_e, cold_d=cold_d, warm_d=warm_d, cold_e=cold_e,
        warm_e=warm_e, n_forced=n_forced, m_min=x_min - n_forced, m_max=x_max - n_forced,
        k=part.k, h_cap=float(h_cap), horizon=float(h), pi_a=pi_a, lam_e=lam_e)


#: An empty list of times or energies.
_NO_TIME = np.zeros(0)


def _pmf(pmf) -> np.ndarray:
    p = np.asarray(pmf, dtype=float).ravel()
    if len(p) and not (np.minimum.reduce(p) >= 0.0 and np.maximum.reduce(p) < np.inf):  # nan fails
        raise ValueError(f"pmf must be finite and >= 0 (p_1..p_N), got {p.tolist()[:8]}")
    return p


def _capped_weights(p: np.ndarray, k: int) -> np.ndarray:
    """q_m = P(min(r, K) = m), m = 1..K (eq. 34), plus a trailing 0 (q_{K+1})."""
    q = np.zeros(k + 1)
    head = min(k - 1, len(p))
    q[:head] = p[:head]
    q[k - 1] += np.add.reduce(p[k - 1:])
    return q


def crossing_change(q: np.ndarray, lo: int, hi: int, b: float, between: list[float],
                    a: float) -> float:
    """Drop of d-bar as one delay moves from a down to b past ``between`` = vals[lo:hi]."""
    points = np.array([b, *between, a])
    return float(np.dot(q[lo:hi + 1], np.diff(points)))


def _delay_path(s: _Setting, q: np.ndarray) -> np.ndarray:
    """d-bar(x) for x = x_min..x_max, moving one delay per step (tail identity above).

    The steps come in runs that move equal delays (a to b: every sleeping node
    of a homogeneous platform): along a run the same delays lie between b and
    a, at ranks one higher per step, so a run's drops are one array operation
    (:func:`_run_changes`). The path is the running difference of the drops,
    each step subtracted in turn as a loop would.
    """
    m_min, m_max = s.m_min, s.m_max
    vals = np.sort(np.concatenate([s.fixed_d, s.warm_d[:m_min], s.cold_d[m_min:]]))
    first = float(np.dot(q[:s.k], vals)) if s.k else 0.0
    cold, hot = s.cold_d[m_min:m_max], s.warm_d[m_min:m_max]
    path = np.zeros(len(cold) + 1)  # d-bar(x_min), then the drop of each step
    path[0] = first
    changes = path[1:]
    bounds = (((cold[1:] != cold[:-1]) | (hot[1:] != hot[:-1])).nonzero()[0] + 1).tolist()
    runs = list(zip([0, *bounds], [*bounds, len(cold)], strict=True)) if len(cold) else []
    for n, (begin, end) in enumerate(runs):
        a, b = float(cold[begin]), float(hot[begin])
        if not b < a:  # nothing moves down: d-bar stays
            continue
        # vals[lo:hi] in (b, a)
        lo, hi = int(vals.searchsorted(b, "right")), int(vals.searchsorted(a, "left"))
        steps = end - begin
        changes[begin:end] = _run_changes(q, lo, hi, b, vals[lo:hi], a, steps)
        if n + 1 < len(runs):
            # each step takes one a (the first, at the run's rank hi + step) and puts b
            # after the b's already there
            vals = np.concatenate([vals[:lo], np.full(steps, b), vals[lo:hi],
                                   vals[hi + steps:]])
    return np.subtract.accumulate(path)


def _run_changes(q: np.ndarray, lo: int, hi: int, b: float, between: np.ndarray, a: float,
                 steps: int) -> np.ndarray:
    """Drops of d-bar over ``steps`` moves of a delay from a down to b past ``between``,
    the ranks shifting by one per move: the k-th drop sums q[lo + k + i] x (the i-th gap
    of b, between..., a) in order, left to right; above 64 delays between b and a each
    drop is :func:`crossing_change` (numpy's dot product). The two sums round
    differently and the recorded paper outputs were made with both, so both stay."""
    if hi - lo > 64:
        passed = between.tolist()
        return np.array([crossing_change(q, lo + k, hi + k, b, passed, a)
                         for k in range(steps)])
    points = [b, *between.tolist(), a]  # np.diff on floats: each gap the same double
    gaps = [after - before for before, after in zip(points, points[1:], strict=False)]
    drops = q[lo:lo + steps] * gaps[0]  # the sum taken left to right, one gap at a time
    for i, gap in enumerate(gaps[1:], start=1):
        drops = drops + q[lo + i:lo + i + steps] * gap
    return drops


#: The drop of E(x) before the first step (E(x_min) itself).
_NO_STEP = np.zeros(1)


def _ascending(*ids: np.ndarray) -> tuple[int, ...]:
    """The node ids of ``ids`` together, ascending."""
    return tuple(sorted([node for array in ids for node in array.tolist()]))


def choose_spare_target(nodes: NodeTable, costs: SpareCosts, now: float, lam: float, lam_c: float,
                        pmf, params: IconParams, exclude: Sequence[int] = (),
                        energy_weight: EnergyWeight | None = None,
                        groups: StateGroups | None = None) -> SpareResult:
    r"""Choose the warm-spare target x* and its wakes and switch-offs (paper, IV-F to IV-H).

    .. math:: x^\star = \operatorname{arg\,lex\,min}_{x \in \{x_{min}, \dots, x_{max}\}}
              \big(J(x), W(x), E(x), x\big), \qquad J(x) = \alpha W(x) + \beta E(x)

    with x_min = max(|U| + |I_f|, min(S_min, x_real)), x_max = max(x_min, min(S_max,
    x_real)), x_real = |U| + |I \ I_e| + |S| (eq. 29-31; S_max is exceeded when more
    nodes must stay warm). Readiness delays (eq. 33, Lemma 2): kept idle 0; switching
    on or woken now phi(remaining switch-on); left asleep T_on; switching off or switched
    off now phi(remaining switch-off) + T_on. W(x) = pi_A sum_r p_r d_(min(r,K))(x)
    (eq. 34-35; 0 when K = 0 or pi_A = 0). Per-node energy over H (eq. 36-37): warm idle
    P_idle H; a transition of d s at P then P_after for H - d; asleep P_sleep H;
    P_on = E_on / T_on, P_off = E_off / T_off.

    Parameters
    ----------
    nodes : the node arrays.
    costs : the platform's :class:`SpareCosts` (sleep powers, transition powers, the wake
        and keep orders), built once per run by the caller.
    now : the decision time (s).
    lam, lam_c : arrival rate and completion rate (eq. 22) (1/s).
    pmf : p_r for r = 1..len(pmf), the next job's requested nodes (eq. 19), capped to
        [1, K] (eq. 34).
    params : alpha, beta, s_min, s_max, h_max, timeout, respect_timeout.
    exclude : nodes treated as computing (e.g. just allocated to a starting job).
    groups : the :class:`~snficon.core.node_choice.StateGroups` of ``nodes``, when the
        caller built them for its invocation (else they are built here).
    energy_weight : the carbon-aware J(x) (:mod:`snficon.core.carbon_icon`): a function of
        (now, H) giving the weight c of the energy term, J(x) = alpha W(x) + beta c E(x),
        the same for every candidate; None: J as the paper writes it (c = 1). E(x) stays
        in joules.
    """
    s = _setting(nodes, costs, now, lam, lam_c, params, exclude, groups)
    p = _pmf(pmf)
    d_bar = _delay_path(s, _capped_weights(p, s.k)) if s.k else np.zeros(s.m_max - s.m_min + 1)
    w = s.pi_a * d_bar if s.k > 0 and s.pi_a > 0.0 else np.zeros_like(d_bar)
    steps = (s.warm_e - s.cold_e)[s.m_min:s.m_max]
    base_e = float(s.fixed_e.sum() + s.warm_e[:s.m_min].sum() + s.cold_e[s.m_min:].sum())
    e = base_e + np.concatenate([_NO_STEP, np.cumsum(steps)])
    beta = params.beta if energy_weight is None else params.beta * energy_weight(now, s.horizon)
    j = params.alpha * w + beta * e
    xs = np.arange(s.m_min, s.m_max + 1) + s.n_forced
    best = int(np.lexsort((xs, e, w, j))[0])
    m = s.m_min + best
    n_opt = len(s.optional)
    kept = s.optional[:min(m, n_opt)]
    for array in (xs, j, w, e):
        array.setflags(write=False)
    return SpareResult(
        x=int(xs[best]), w=float(w[best]), e=float(e[best]), j=float(j[best]),
        horizon=s.horizon, h_cap=s.h_cap, pi_a=s.pi_a, lam_e=s.lam_e, k=s.k,
        wake=_ascending(s.asleep[:max(m - n_opt, 0)]),
        switch_off=_ascending(s.expired, s.optional[len(kept):]),
        keep=_ascending(s.forced_idle, kept),
        candidates=xs, j_values=j, w_values=w, e_values=e)
