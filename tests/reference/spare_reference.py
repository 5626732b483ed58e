r"""A test-only reference of the warm-spare target (paper, sections IV-E to IV-H).

Written from the paper's equations and SPEC section 5 ("Spare target") alone, with
plain loops over nodes and candidates; it shares no code with ``snficon.core.spare``
(nor with ``snficon.core.estimators``), so the optimiser can be checked against it.
Clarity over speed: every candidate x is rebuilt from scratch, every node gets its
role, its readiness delay and its energy, and eq. 34-39 are applied by brute force.

The equations, as reconstructed from the paper (symbols as in the paper):

Next event (Assumption 1, eq. 23), with lambda the arrival rate and lambda_C the
completion rate (eq. 22, given here)::

    lambda_E = lambda + lambda_C,      pi_A = lambda / lambda_E   (0 when lambda_E = 0)

Capped horizon (eq. 24) and Lemma 1 (eq. 25)::

    H_c = min(H_max, d_to),            d_to = earliest future idle-node timeout - t
                                              (H_max when there is none)
    H   = E[min(T, H_c)] = (1 - exp(-lambda_E H_c)) / lambda_E,   T ~ Exp(lambda_E)
          (SPEC: H = H_c when lambda_E = 0)

Lemma 2 (Appendix B, eq. 59), the expected unfinished part of a transition with d s
left when the next event comes::

    phi(d; lambda_E) = E[(d - T)^+] = d - (1 - exp(-lambda_E d)) / lambda_E

Valid targets (eq. 27-31): I_e the idle nodes whose timer expired (switched off in every
candidate), I_f the other idle nodes that may not be switched off (with
``respect_timeout``: all of them), U switching on, S sleeping::

    x_real = |U| + |I \ I_e| + |S|
    x_min  = max(|U| + |I_f|, min(S_min, x_real))
    x_max  = max(x_min, min(S_max, x_real))

Power-induced waiting (eq. 32-35), d_(1) <= ... <= d_(K) the sorted readiness delays of
the K = N - |C| non-computing nodes::

    dbar(x) = sum_{r=1}^{N} p_r d_(min(r, K))(x)
    W(x)    = pi_A dbar(x)  (0 when K = 0 or pi_A = 0)

Energy over [t, t + H] (eq. 36-37), a transition with a s left at power P followed by
the state it leads to at power P_after::

    E_i = P min(a, H) + P_after [H - a]^+,     E(x) = sum_i E_i(x)

Selection (eq. 38-39)::

    J(x) = alpha W(x) + beta E(x),     x* = arg lexmin_{x in X(t)} (J(x), W(x), E(x), x)

Points fixed by SPEC section 5 (or by the platform model) rather than the paper:

- a candidate keeps U and I_f, then optional idle nodes by ascending idle power then id,
  then wakes sleeping nodes by ascending alpha T_on + beta E_on then id, until x nodes;
  unkept optional idle nodes are switched off with I_e;
- readiness delays: kept idle 0; switching on (a s left) phi(a); woken now phi(T_on);
  left asleep T_on; switching off (d s left) T_on + phi(d); switched off now
  T_on + phi(T_off);
- the transition powers are P_on = E_on / T_on and P_off = E_off / T_off (the node arrays
  hold durations and energies);
- a node that cannot sleep (infinite transition times in the platform model) can never be
  switched off: it is in I_f whatever its timer, and its timer caps no horizon.

A timer has expired when ``idle_since + timeout <= now`` within the project's time
tolerance of 1e-6 s (``snficon.core.clock``, restated here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from snficon.core.view import NodeState, NodeTable

#: Two simulated times closer than this (s) are the same instant (as ``core.clock``).
TOLERANCE_S = 1e-6


class Role:
    """What a candidate plan does with a node over the horizon."""

    COMPUTING = "computing"  # C (or excluded): no delay counted, no energy counted
    KEPT = "kept"  # idle and stays warm
    SWITCHING_ON = "switching_on"  # U: its switch-on goes on
    WOKEN = "woken"  # sleeping, switched on now
    ASLEEP = "asleep"  # sleeping, left asleep
    SWITCHING_OFF = "switching_off"  # D: its switch-off goes on
    SWITCHED_OFF = "switched_off"  # idle, switched off now


@dataclass(frozen=True)
class ReferenceCandidate:
    """One candidate target x: every node's role, delay and energy, and W, E, J."""

    x: int
    roles: tuple[str, ...]
    delays: tuple[float, ...]  # readiness delay of each non-computing node, by node id
    energies: tuple[float, ...]  # E_i^nc(x, H) of every node (0 for computing)
    w: float
    e: float
    j: float

    def nodes_with(self, role: str) -> tuple[int, ...]:
        return tuple(i for i, r in enumerate(self.roles) if r == role)


@dataclass(frozen=True)
class ReferenceResult:
    """The reference's answer: the chosen candidate and every candidate."""

    x: int
    h_cap: float
    horizon: float
    lam_e: float
    pi_a: float
    k: int
    x_min: int
    x_max: int
    candidates: tuple[ReferenceCandidate, ...]

    def candidate(self, x: int) -> ReferenceCandidate:
        return self.candidates[x - self.x_min]

    @property
    def chosen(self) -> ReferenceCandidate:
        return self.candidate(self.x)


def unfinished(d: float, lam_e: float) -> float:
    """phi(d; lambda_E) of Lemma 2 (eq. 59); the limit 0 when lambda_E = 0.

    With u = lambda_E d, phi = (u - 1 + e^{-u}) / lambda_E. For small u the closed form
    cancels (phi ~ lambda_E d^2 / 2 is the difference of two numbers ~ d), so there the
    series sum_{k >= 2} (-u)^k / k! is summed instead (to the last term that counts).
    """
    if lam_e <= 0.0:
        return 0.0
    u = lam_e * d
    if u >= 0.5:
        return (u - 1.0 + math.exp(-u)) / lam_e
    terms = [(-u) ** k / math.factorial(k) for k in range(2, 30)]
    return math.fsum(terms) / lam_e


def capped_mean(h_cap: float, lam_e: float) -> float:
    """H of Lemma 1 (eq. 25); H_c when lambda_E = 0 (SPEC 5).

    1 - e^{-lambda_E H_c} is written -expm1(-lambda_E H_c), exact also for tiny rates.
    """
    if lam_e <= 0.0:
        return h_cap
    return -math.expm1(-lam_e * h_cap) / lam_e


def transition_energy(power: float, left: float, power_after: float, horizon: float) -> float:
    """eq. 36: P min(a, H) + P_after [H - a]^+."""
    return power * min(left, horizon) + power_after * max(horizon - left, 0.0)


def reference_spare_target(nodes: NodeTable, p_sleep_w: Sequence[float], now: float,
                           lam: float, lam_c: float, pmf: Sequence[float], params,
                           exclude: Sequence[int] = ()) -> ReferenceResult:
    """The warm-spare target x* by brute force over every candidate (see the module text).

    ``p_sleep_w``: sleep power of each node (W); ``pmf[r - 1]`` = p_r; ``params``: an
    ``IconParams`` (alpha, beta, s_min, s_max, h_max, timeout, respect_timeout);
    ``exclude``: nodes treated as computing.
    """
    n = nodes.size
    excluded = set(int(i) for i in exclude)
    state = [int(nodes.state[i]) for i in range(n)]
    t_on = [float(nodes.t_on_s[i]) for i in range(n)]
    t_off = [float(nodes.t_off_s[i]) for i in range(n)]
    e_on = [float(nodes.e_on_j[i]) for i in range(n)]
    e_off = [float(nodes.e_off_j[i]) for i in range(n)]
    p_idle = [float(nodes.p_idle_w[i]) for i in range(n)]
    p_sleep = [float(p_sleep_w[i]) for i in range(n)]

    def can_sleep(i: int) -> bool:
        return math.isfinite(t_on[i]) and math.isfinite(t_off[i])

    def left(i: int) -> float:
        return max(float(nodes.transition_end_s[i]) - now, 0.0)

    # The partition of Definition 1 (excluded nodes count as computing).
    computing, idle, switching_on, switching_off, sleeping = [], [], [], [], []
    for i in range(n):
        if i in excluded or state[i] == NodeState.COMPUTING:
            computing.append(i)
        elif state[i] == NodeState.IDLE:
            idle.append(i)
        elif state[i] == NodeState.SWITCHING_ON:
            switching_on.append(i)
        elif state[i] == NodeState.SWITCHING_OFF:
            switching_off.append(i)
        else:
            sleeping.append(i)

    def timer_end(i: int) -> float:
        return float(nodes.idle_since_s[i]) + params.timeout

    # eq. 27-28.
    expired = [i for i in idle if can_sleep(i) and timer_end(i) <= now + TOLERANCE_S]
    running_timer = [i for i in idle if i not in expired]
    if params.respect_timeout:
        fixed = list(running_timer)
    else:
        fixed = [i for i in running_timer if not can_sleep(i)]
    optional = [i for i in running_timer if i not in fixed]

    # eq. 29-31.
    x_real = len(switching_on) + len(running_timer) + len(sleeping)
    s_max = n if params.s_max is None else params.s_max
    x_min = max(len(switching_on) + len(fixed), min(params.s_min, x_real))
    x_max = max(x_min, min(s_max, x_real))

    # eq. 22-25.
    lam_e = lam + lam_c
    pi_a = lam / lam_e if lam_e > 0.0 else 0.0
    future = [timer_end(i) - now for i in idle
              if can_sleep(i) and timer_end(i) > now + TOLERANCE_S]
    d_to = min(future) if future else params.h_max
    h_cap = min(params.h_max, d_to)
    horizon = capped_mean(h_cap, lam_e)
    k = n - len(computing)

    keep_order = sorted(optional, key=lambda i: (p_idle[i], i))
    wake_order = sorted(sleeping, key=lambda i: (params.alpha * t_on[i] + params.beta * e_on[i],
                                                  i))
    candidates = []
    for x in range(x_min, x_max + 1):
        roles = [Role.COMPUTING] * n
        for i in switching_on:
            roles[i] = Role.SWITCHING_ON
        for i in fixed:
            roles[i] = Role.KEPT
        for i in expired:
            roles[i] = Role.SWITCHED_OFF
        for i in switching_off:
            roles[i] = Role.SWITCHING_OFF
        for i in sleeping:
            roles[i] = Role.ASLEEP
        for i in optional:
            roles[i] = Role.SWITCHED_OFF
        need = x - len(switching_on) - len(fixed)
        for i in keep_order + wake_order:
            if need <= 0:
                break
            roles[i] = Role.KEPT if roles[i] == Role.SWITCHED_OFF else Role.WOKEN
            need -= 1
        candidates.append(_costs(x, roles, nodes, now, lam_e, pi_a, horizon, k, pmf, params,
                                 t_on, t_off, e_on, e_off, p_idle, p_sleep, left))

    best = min(candidates, key=lambda c: (c.j, c.w, c.e, c.x))
    return ReferenceResult(x=best.x, h_cap=h_cap, horizon=horizon, lam_e=lam_e, pi_a=pi_a,
                           k=k, x_min=x_min, x_max=x_max, candidates=tuple(candidates))


def _costs(x, roles, nodes, now, lam_e, pi_a, horizon, k, pmf, params, t_on, t_off, e_on,
           e_off, p_idle, p_sleep, left) -> ReferenceCandidate:
    """Delays (eq. 33), W (eq. 34-35), energies (eq. 36-37) and J (eq. 38) of one plan."""
    delays: list[float] = []
    energies: list[float] = []
    for i, role in enumerate(roles):
        if role == Role.COMPUTING:
            energies.append(0.0)
            continue
        if role == Role.KEPT:
            delay, energy = 0.0, p_idle[i] * horizon
        elif role == Role.SWITCHING_ON:
            a = left(i)
            delay = unfinished(a, lam_e)
            energy = transition_energy(e_on[i] / t_on[i], a, p_idle[i], horizon)
        elif role == Role.WOKEN:
            delay = unfinished(t_on[i], lam_e)
            energy = transition_energy(e_on[i] / t_on[i], t_on[i], p_idle[i], horizon)
        elif role == Role.ASLEEP:
            delay, energy = t_on[i], p_sleep[i] * horizon
        elif role == Role.SWITCHING_OFF:
            d = left(i)
            delay = t_on[i] + unfinished(d, lam_e)
            energy = transition_energy(e_off[i] / t_off[i], d, p_sleep[i], horizon)
        else:  # switched off now
            delay = t_on[i] + unfinished(t_off[i], lam_e)
            energy = transition_energy(e_off[i] / t_off[i], t_off[i], p_sleep[i], horizon)
        delays.append(delay)
        energies.append(energy)
    assert len(delays) == k
    if k == 0 or pi_a == 0.0:
        w = 0.0
    else:
        ordered = sorted(delays)
        dbar = 0.0
        for r, p_r in enumerate(pmf, start=1):
            dbar += p_r * ordered[min(r, k) - 1]
        w = pi_a * dbar
    e = math.fsum(energies)
    j = params.alpha * w + params.beta * e
    return ReferenceCandidate(x=x, roles=tuple(roles), delays=tuple(delays),
                              energies=tuple(energies), w=w, e=e, j=j)
