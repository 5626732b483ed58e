r"""COAST's micro-batch congestion game, its best-response solver and the per-job baselines.

Feng et al., *COAST: Congestion-Aware Start-Time Recommendations for
Carbon-Aware HPC Jobs*, Sections II-B to II-D. In one micro-batch decided
at time :math:`\tau`, each flexible job j (arrival :math:`a_j`, demand
:math:`r_j` nodes, requested runtime :math:`p_j`, energy estimate
:math:`E_j`) picks a start :math:`x_j` among its candidates (see
:func:`candidate_starts`). With normalisers :math:`\bar C, \bar W, \bar L`
(:class:`Normalisers`), background load :math:`B_k` (nodes, slot k) and
:math:`O_j(x)` the slots that :math:`[x, x + p_j)` meets, its cost is

.. math::
    c_j(x) = \alpha \frac{C_j(x)}{\bar C} + \beta \frac{x - a_j}{\bar W}
             + \gamma \sum_{k \in O_j(x)} \bigl[\Psi(\ell^{-j}_k + d_j) - \Psi(\ell^{-j}_k)\bigr]

where :math:`C_j(x) = E_j \cdot \frac{1}{p_j}\int_x^{x+p_j} I` (kg; energy
spread evenly over the window), :math:`d_j = r_j/\bar L`, :math:`\ell_k =
(B_k + \sum_i r_i [k \in O_i(x_i)])/\bar L` the normalised slot load,
:math:`\ell^{-j}_k` the same without j, and :math:`\Psi(\ell) = \ell^q`
(q >= 1, convex; q = 2 by default). The game has the exact potential

.. math::
    \Phi(x) = \sum_j \Bigl[\alpha \frac{C_j(x_j)}{\bar C} + \beta \frac{x_j - a_j}{\bar W}\Bigr]
              + \gamma \sum_k \bigl[\Psi(\ell_k) - \Psi(B_k / \bar L)\bigr],

so a unilateral move changes :math:`c_j` and :math:`\Phi` by the same amount
(the slots j leaves lose its increment, those it enters gain it), for any
convex :math:`\Psi` and any demands; sequential strict best response then
stops after finitely many moves at a pure Nash equilibrium of the batch.

**Solver.** Jobs are first inserted one by one (batch order), each at its
best response to the background and the jobs already placed; then sweeps
of best responses in the same order follow until every job has been
checked once since the last move. A job moves only if its best candidate is
cheaper than its current one by more than ``tolerance`` x max(1, |cost|)
(strict improvement; ties, and differences at rounding level, keep the
current start, so the solver cannot cycle on rounding). The sweep count is
the number of passes begun, at least 1: 1 means the insertion already was an
equilibrium. Each best response is vectorised over slots: the increments of
all slots in one array, a prefix sum, and each candidate's window sum as the
difference of two prefix values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from snficon.carbon.series import StepSeries

#: gCO2 per kgCO2: E (kWh) x I (g/kWh) / G_PER_KG = kg.
G_PER_KG = 1e3


@dataclass(frozen=True)
class Normalisers:
    r"""The cost's normalisers: :math:`\bar C` (kg), :math:`\bar W` (s), :math:`\bar L` (nodes)."""

    carbon_kg: float
    wait_s: float
    load: float

    def __post_init__(self) -> None:
        for name in ("carbon_kg", "wait_s", "load"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"normaliser {name} must be positive and finite, got {value!r}")


@dataclass(frozen=True)
class Weights:
    r"""COAST's weights :math:`\alpha, \beta, \gamma` (the paper's 4, 1, 5e-4) and q of Psi."""

    alpha: float = 4.0
    beta: float = 1.0
    gamma: float = 5e-4
    psi_exponent: float = 2.0

    def __post_init__(self) -> None:
        for name in ("alpha", "beta", "gamma"):
            if not (np.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise ValueError(f"weight {name} must be >= 0 and finite, got "
                                 f"{getattr(self, name)!r}")
        if not self.psi_exponent >= 1:
            raise ValueError(f"psi_exponent must be >= 1 (convex Psi), got {self.psi_exponent!r}")


@dataclass(frozen=True)
class SlotGrid:
    """The execution slots: slot k is ``[origin_s + k slot_s, origin_s + (k+1) slot_s)``."""

    slot_s: float = 1800.0
    origin_s: float = 0.0

    def first(self, t: np.ndarray) -> np.ndarray:
        """The slot holding each time (a time on a boundary starts that slot)."""
        x = (np.asarray(t, float) - self.origin_s) / self.slot_s
        return np.floor(x + 1e-9).astype(np.int64)

    def last(self, start: np.ndarray, runtime: np.ndarray) -> np.ndarray:
        """The last slot that ``[start, start + runtime)`` meets (the first one if runtime is 0)."""
        end = (np.asarray(start, float) + np.asarray(runtime, float) - self.origin_s) / self.slot_s
        return np.maximum(np.ceil(end - 1e-9).astype(np.int64) - 1, self.first(start))


@dataclass(frozen=True)
class BatchJobs:
    """The flexible jobs of one batch as arrays (batch order): s, nodes, s, kWh, s, s."""

    arrival_s: np.ndarray
    nodes: np.ndarray
    runtime_s: np.ndarray
    energy_kwh: np.ndarray
    max_delay_s: np.ndarray
    deadline_s: np.ndarray  # latest end (inf: none)

    @property
    def size(self) -> int:
        return int(self.arrival_s.size)


def candidate_starts(jobs: BatchJobs, decided_at: float, grid: SlotGrid,
                     horizon_s: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Each job's candidate starts (n x m, padded) and which are feasible.

    Candidate 0 is :math:`\tau` itself (start now; always feasible: nothing
    earlier exists); then the slot boundaries :math:`\sigma` with
    :math:`\tau < \sigma < \tau + H` (the rolling horizon), kept when
    :math:`\sigma - a_j \le D_j` (maximum delay) and :math:`\sigma + p_j \le d_j`
    (deadline, the latest end). Candidates are in increasing time.
    """
    k0 = int(np.floor((decided_at - grid.origin_s) / grid.slot_s)) + 1
    count = int(np.ceil(horizon_s / grid.slot_s)) + 1
    boundaries = grid.origin_s + (k0 + np.arange(count)) * grid.slot_s
    boundaries = boundaries[(boundaries > decided_at) & (boundaries < decided_at + horizon_s)]
    starts = np.concatenate((np.full((jobs.size, 1), decided_at),
                             np.broadcast_to(boundaries, (jobs.size, boundaries.size))), axis=1)
    feasible = ((starts - jobs.arrival_s[:, None] <= jobs.max_delay_s[:, None])
                & (starts + jobs.runtime_s[:, None] <= jobs.deadline_s[:, None]))
    feasible[:, 0] = True
    return starts, feasible


@dataclass(frozen=True)
class BatchGame:
    """One batch's game, ready to solve: per job and candidate, its own cost and slots.

    ``own`` is the carbon and waiting part of the cost (inf where infeasible);
    slots are local (0 = absolute slot ``slot0``); loads are normalised by
    :math:`\\bar L`.
    """

    starts: np.ndarray
    feasible: np.ndarray
    carbon_kg: np.ndarray
    own: np.ndarray
    first_slot: np.ndarray
    last_slot: np.ndarray
    demand: np.ndarray
    background: np.ndarray
    slot0: int
    weights: Weights

    @property
    def players(self) -> int:
        return int(self.demand.size)

    def psi(self, load: np.ndarray) -> np.ndarray:
        r""":math:`\Psi(\ell) = \ell^q` (loads below 0 by rounding count as 0)."""
        return np.power(np.maximum(load, 0.0), self.weights.psi_exponent)

    def costs(self, j: int, load_without_j: np.ndarray) -> np.ndarray:
        """:math:`c_j` of every candidate of j against the others' load (vectorised over slots)."""
        increment = self.psi(load_without_j + self.demand[j]) - self.psi(load_without_j)
        prefix = np.concatenate(([0.0], np.cumsum(increment)))
        congestion = prefix[self.last_slot[j] + 1] - prefix[self.first_slot[j]]
        return self.own[j] + self.weights.gamma * congestion

    def occupy(self, load: np.ndarray, j: int, choice: int, sign: float) -> None:
        """Add (sign 1) or remove (-1) job j's demand over the slots of its candidate ``choice``."""
        load[self.first_slot[j, choice]:self.last_slot[j, choice] + 1] += sign * self.demand[j]

    def loads(self, choice: np.ndarray) -> np.ndarray:
        """Normalised slot loads of the profile ``choice`` (background included)."""
        load = self.background.copy()
        for j, c in enumerate(choice):
            self.occupy(load, j, int(c), 1.0)
        return load

    def potential(self, choice: np.ndarray) -> float:
        r"""The exact potential :math:`\Phi` of the profile ``choice``."""
        own = float(np.sum(self.own[np.arange(self.players), choice]))
        congestion = float(np.sum(self.psi(self.loads(choice)) - self.psi(self.background)))
        return own + self.weights.gamma * congestion


def build_game(jobs: BatchJobs, decided_at: float, intensity: StepSeries, background_nodes:
               np.ndarray, background_slot0: int, grid: SlotGrid, horizon_s: float,
               weights: Weights, norms: Normalisers) -> BatchGame:
    """The game of one batch; ``background_nodes[k]`` is the committed load of slot ``slot0 + k``.

    ``intensity`` must cover every candidate window (gCO2/kWh on simulated
    time); background slots outside the array given count as empty.
    """
    starts, feasible = candidate_starts(jobs, decided_at, grid, horizon_s)
    runtime = jobs.runtime_s[:, None]
    carbon = jobs.energy_kwh[:, None] * intensity.mean(starts, starts + runtime) / G_PER_KG
    wait = starts - jobs.arrival_s[:, None]
    own = weights.alpha * carbon / norms.carbon_kg + weights.beta * wait / norms.wait_s
    own = np.where(feasible, own, np.inf)
    first = grid.first(starts)
    last = grid.last(starts, np.broadcast_to(runtime, starts.shape))
    slot0 = int(first.min())
    size = int(last.max()) - slot0 + 1
    background = np.zeros(size)
    lo, hi = max(slot0, background_slot0), min(slot0 + size,
                                              background_slot0 + background_nodes.size)
    if hi > lo:
        background[lo - slot0:hi - slot0] = background_nodes[lo - background_slot0:
                                                             hi - background_slot0]
    return BatchGame(starts=starts, feasible=feasible, carbon_kg=carbon, own=own,
                     first_slot=first - slot0, last_slot=last - slot0,
                     demand=jobs.nodes / norms.load, background=background / norms.load,
                     slot0=slot0, weights=weights)


@dataclass(frozen=True)
class Move:
    """One strict best-response update: job, candidates before and after, its cost before/after."""

    job: int
    old: int
    new: int
    cost_old: float
    cost_new: float


@dataclass(frozen=True)
class Solution:
    """The chosen candidate of each job, the passes begun, the moves, and the final potential."""

    choice: np.ndarray
    sweeps: int
    moves: tuple[Move, ...] = ()
    converged: bool = True
    potential: float = float("nan")
    updates: int = 0  # best responses computed, insertion included
    extra: dict[str, float] = field(default_factory=dict)


def solve_coast(game: BatchGame, init: str = "insertion", max_sweeps: int = 1000,
                tolerance: float = 1e-12, record: bool = False) -> Solution:
    """Sequential strict best response from ``init`` (``insertion`` or ``immediate``).

    ``immediate`` starts every job at candidate 0 (start now); it exists to
    exercise the sweeps. ``record`` keeps every :class:`Move`.
    """
    n = game.players
    load = game.background.copy()
    choice = np.zeros(n, dtype=np.int64)
    updates = 0
    if init == "insertion":
        for j in range(n):
            choice[j] = int(np.argmin(game.costs(j, load)))
            game.occupy(load, j, int(choice[j]), 1.0)
            updates += 1
        settled = 1 if n else 0  # the last job inserted is at its best response
    elif init == "immediate":
        for j in range(n):
            game.occupy(load, j, 0, 1.0)
        settled = 0
    else:
        raise ValueError(f"unknown init {init!r} (known: insertion, immediate)")
    moves: list[Move] = []
    sweeps = 0
    while settled < n and sweeps < max_sweeps:
        sweeps += 1
        for j in range(n):
            if settled >= n:
                break
            current = int(choice[j])
            game.occupy(load, j, current, -1.0)
            costs = game.costs(j, load)
            updates += 1
            best = int(np.argmin(costs))
            if costs[best] < costs[current] - tolerance * max(1.0, abs(costs[current])):
                choice[j] = best
                settled = 1
                if record:
                    moves.append(Move(j, current, best, float(costs[current]),
                                      float(costs[best])))
            else:
                settled += 1
            game.occupy(load, j, int(choice[j]), 1.0)
    return Solution(choice=choice, sweeps=max(sweeps, 1), moves=tuple(moves),
                    converged=settled >= n, potential=game.potential(choice) if record else
                    float("nan"), updates=updates)


def solve_carbon_greedy(game: BatchGame) -> Solution:
    """Carbon-greedy: each job alone takes its lowest-carbon feasible start (ties: earliest)."""
    carbon = np.where(game.feasible, game.carbon_kg, np.inf)
    return Solution(choice=np.argmin(carbon, axis=1), sweeps=0)


def solve_carbon_waiting(game: BatchGame) -> Solution:
    """Carbon-plus-waiting: each job alone minimises carbon and waiting terms (ties: earliest)."""
    return Solution(choice=np.argmin(game.own, axis=1), sweeps=0)
