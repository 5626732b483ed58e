"""Hypothesis strategies for the states the spare optimiser sees at a planning point.

A state is a node table (computing, idle with various idle_since, sleeping, switching on
or off with some time left, and nodes that cannot sleep), per-node sleep powers, the
decision time, the rates lambda and lambda_C, the request pmf, the ICON parameters and
the excluded nodes. :func:`spare_states` draws node by node (small tables, where
hypothesis shrinks a failure to a few nodes); :func:`large_spare_states` draws a seed and
builds hundreds of heterogeneous nodes from it with numpy, so that many distinct delays
lie between a node's cold and warm delay (the optimiser's vectorised branch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from snficon.core.params import IconParams
from snficon.core.view import NodeState, NodeTable

INF = math.inf
NAN = math.nan


@dataclass(frozen=True, repr=False)
class SpareState:
    """Everything ``choose_spare_target`` is called with."""

    nodes: NodeTable
    p_sleep_w: np.ndarray
    now: float
    lam: float
    lam_c: float
    pmf: np.ndarray
    params: IconParams
    exclude: tuple[int, ...]
    label: str = ""  # when set, how the node table was built (printed instead of it)

    def __repr__(self) -> str:
        if not self.label:
            return super().__repr__()
        return (f"SpareState({self.label}, now={self.now!r}, lam={self.lam!r}, "
                f"lam_c={self.lam_c!r}, params={self.params!r})")


def node_table(rows: list[dict]) -> NodeTable:
    """A NodeTable from one dict per node (keys: the NodeTable field names)."""
    def column(name: str, dtype=float) -> np.ndarray:
        return np.array([row[name] for row in rows], dtype=dtype)

    return NodeTable(state=column("state", np.int8), idle_since_s=column("idle_since_s"),
                     transition_end_s=column("transition_end_s"),
                     release_req_s=column("release_req_s"), p_idle_w=column("p_idle_w"),
                     t_on_s=column("t_on_s"), t_off_s=column("t_off_s"),
                     e_on_j=column("e_on_j"), e_off_j=column("e_off_j"))


def _positive(low: float, high: float, palette: tuple[float, ...]) -> st.SearchStrategy:
    """A value from a small palette (ties between nodes) or anywhere in [low, high]."""
    return st.one_of(st.sampled_from(palette),
                     st.floats(low, high, allow_nan=False, allow_infinity=False))


# Built once: hypothesis validates a strategy the first time it draws from it.
P_IDLE = _positive(10.0, 300.0, (100.0, 150.0))
T_ON = _positive(1.0, 900.0, (30.0, 120.0))
T_OFF = _positive(1.0, 300.0, (10.0, 60.0))
E_ON = _positive(1.0, 1e5, (4500.0, 9000.0))
E_OFF = _positive(1.0, 2e4, (500.0, 1000.0))
P_SLEEP = _positive(0.0, 30.0, (5.0, 9.75))
KIND = st.sampled_from(["computing", "idle", "idle", "sleeping", "sleeping", "sleeping",
                        "switching_on", "switching_off", "idle_nosleep", "computing_nosleep"])
#: An idle node's age in timeouts, around the expiry: exactly, within the 1e-6 s
#: tolerance either side (as offsets in s), or anywhere up to three timeouts.
AGE_OFFSET = st.sampled_from([0.0, -1e-7, 1e-7, -1.0, 1.0])
AGE_SHARE = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 3.0))
TRANSITION_SHARE = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0))
RELEASE = st.floats(0.0, 1e5)
RATE = st.one_of(st.just(0.0), st.floats(1e-7, 1.0), st.sampled_from([1 / 600, 1 / 3600]))
ALPHA = st.one_of(st.just(0.0), st.just(5000.0), st.floats(0.0, 1e5))
BETA = st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 10.0))
H_MAX = st.one_of(st.just(86400.0), st.floats(1.0, 2e5))
TIMEOUT = st.one_of(st.just(0.0), st.just(7200.0), st.floats(0.0, 2e4))
WEIGHT = st.one_of(st.just(0.0), st.floats(0.0, 1.0))
NOW = st.sampled_from([0.0, 3600.0, 123456.789, 1.0e7])


@st.composite
def icon_params(draw, n: int) -> IconParams:
    s_min = draw(st.one_of(st.sampled_from([0, 1]), st.integers(0, n + 2)))
    s_max = draw(st.one_of(st.none(), st.integers(s_min, n + 3)))
    return IconParams(alpha=draw(ALPHA), beta=draw(BETA), s_min=s_min, s_max=s_max,
                      h_max=draw(H_MAX), timeout=draw(TIMEOUT),
                      respect_timeout=draw(st.booleans()))


def _pmf(draw, n: int) -> np.ndarray:
    weights = draw(st.lists(WEIGHT, min_size=1, max_size=n + 4))
    total = math.fsum(weights)
    return np.array([w / total for w in weights]) if total > 0.0 else np.array([1.0])


def _node(draw, now: float, timeout: float) -> dict:
    kind = draw(KIND)
    row = {"p_idle_w": draw(P_IDLE), "t_on_s": draw(T_ON), "t_off_s": draw(T_OFF),
           "e_on_j": draw(E_ON), "e_off_j": draw(E_OFF),
           "idle_since_s": NAN, "transition_end_s": NAN, "release_req_s": NAN}
    if kind.endswith("nosleep"):
        row.update(t_on_s=INF, t_off_s=INF, e_on_j=INF, e_off_j=INF)
    if kind.startswith("computing"):
        row.update(state=NodeState.COMPUTING, release_req_s=now + draw(RELEASE))
    elif kind.startswith("idle"):
        age = draw(AGE_SHARE) * timeout + draw(AGE_OFFSET)
        row.update(state=NodeState.IDLE, idle_since_s=now - max(age, 0.0))
    elif kind == "sleeping":
        row.update(state=NodeState.SLEEPING)
    else:
        duration = row["t_on_s"] if kind == "switching_on" else row["t_off_s"]
        row.update(state=(NodeState.SWITCHING_ON if kind == "switching_on"
                          else NodeState.SWITCHING_OFF),
                   transition_end_s=now + draw(TRANSITION_SHARE) * duration)
    return row


@st.composite
def spare_states(draw, max_nodes: int = 12) -> SpareState:
    """A small heterogeneous state, drawn node by node."""
    n = draw(st.one_of(st.integers(1, max_nodes), st.just(max_nodes)))
    params = draw(icon_params(n))
    now = draw(NOW)
    rows = [_node(draw, now, params.timeout) for _ in range(n)]
    nodes = node_table(rows)
    non_computing = [i for i in range(n) if rows[i]["state"] != NodeState.COMPUTING]
    exclude = draw(st.lists(st.sampled_from(non_computing), unique=True, max_size=2)
                   if non_computing else st.just([]))
    p_sleep = np.array([draw(P_SLEEP) for _ in range(n)])
    return SpareState(nodes=nodes, p_sleep_w=p_sleep, now=now, lam=draw(RATE),
                      lam_c=draw(RATE), pmf=_pmf(draw, n), params=params,
                      exclude=tuple(sorted(exclude)))


@st.composite
def large_spare_states(draw) -> SpareState:
    """Hundreds of nodes with heterogeneous figures and many distinct delays.

    Most non-computing nodes are asleep, switching on or switching off with distinct
    times left, so the sorted delays are dense between phi(T_on) and T_on; S_min/S_max
    leave a wide candidate range, so many sleeping nodes are woken one by one.
    """
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(200, 360))
    rng = np.random.default_rng(seed)
    now = 50000.0
    timeout = float(rng.choice([600.0, 7200.0]))
    kinds = rng.choice(["computing", "idle", "sleeping", "switching_on", "switching_off"],
                       size=n, p=[0.1, 0.2, 0.35, 0.1, 0.25])
    rows = []
    for kind in kinds:
        t_on, t_off = float(rng.uniform(20.0, 600.0)), float(rng.uniform(5.0, 200.0))
        row = {"p_idle_w": float(rng.uniform(50.0, 250.0)), "t_on_s": t_on, "t_off_s": t_off,
               "e_on_j": float(rng.uniform(1e3, 6e4)),
               "e_off_j": float(t_off * rng.uniform(50.0, 150.0)),
               "idle_since_s": NAN, "transition_end_s": NAN, "release_req_s": NAN}
        if kind == "computing":
            row.update(state=NodeState.COMPUTING, release_req_s=now + 1000.0)
        elif kind == "idle":
            row.update(state=NodeState.IDLE,
                       idle_since_s=now - float(rng.uniform(0.0, 2.0 * timeout)))
        elif kind == "sleeping":
            row.update(state=NodeState.SLEEPING)
        elif kind == "switching_on":
            row.update(state=NodeState.SWITCHING_ON,
                       transition_end_s=now + float(rng.uniform(0.0, t_on)))
        else:
            row.update(state=NodeState.SWITCHING_OFF,
                       transition_end_s=now + float(rng.uniform(0.0, t_off)))
        rows.append(row)
    nodes = node_table(rows)
    k_max = int(rng.integers(5, 60))
    weights = rng.dirichlet(np.ones(k_max))
    params = IconParams(alpha=draw(st.sampled_from([50.0, 5000.0, 1e5])),
                        beta=draw(st.sampled_from([0.0, 1.0, 10.0])),
                        s_min=draw(st.integers(0, 20)), s_max=None, timeout=timeout,
                        respect_timeout=draw(st.booleans()))
    return SpareState(nodes=nodes, p_sleep_w=rng.uniform(2.0, 20.0, n), now=now,
                      lam=draw(st.sampled_from([1 / 60, 1 / 600, 1 / 3600])),
                      lam_c=draw(st.sampled_from([0.0, 1 / 900])), pmf=weights,
                      params=params, exclude=(),
                      label=f"large_spare_states seed={seed} n={n}")
