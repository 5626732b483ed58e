"""COAST's batch game: the exact-potential identity, convergence, and the baselines' choices.

The potential and the congestion costs are recomputed here from scratch
(slot sets from the start times, loads summed job by job in Python), not
with the solver's prefix sums and slot arrays.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snficon.carbon.game import (
    BatchJobs,
    Normalisers,
    SlotGrid,
    Weights,
    build_game,
    candidate_starts,
    solve_carbon_greedy,
    solve_carbon_waiting,
    solve_coast,
)
from snficon.carbon.series import StepSeries

SLOT = 1800.0
HORIZON = 48 * 3600.0
GRID = SlotGrid(SLOT, 0.0)


def jobs_of(rows: list[tuple[float, int, float, float]], max_delay: float = math.inf,
            deadline: float = math.inf) -> BatchJobs:
    """(arrival s, nodes, runtime s, energy kWh) rows."""
    a = np.array(rows, dtype=float).reshape(-1, 4)
    n = len(a)
    return BatchJobs(a[:, 0], a[:, 1], a[:, 2], a[:, 3], np.full(n, max_delay),
                     np.full(n, deadline))


def slots_of(start: float, runtime: float) -> list[int]:
    """Slots that [start, start + runtime) meets, by brute force over slot intervals."""
    if runtime <= 0:
        return [int(start // SLOT)]
    return [k for k in range(int(start // SLOT) - 1, int((start + runtime) // SLOT) + 2)
            if k * SLOT < start + runtime and (k + 1) * SLOT > start]


class Reference:
    """An independent evaluation of one game's costs and potential."""

    def __init__(self, game, jobs: BatchJobs, background: dict[int, float], norms, weights):
        self.game, self.jobs, self.bg, self.norms, self.w = game, jobs, background, norms, weights

    def psi(self, x: float) -> float:
        return max(x, 0.0) ** self.w.psi_exponent

    def loads(self, profile, without: int | None = None) -> dict[int, float]:
        load = {k: v / self.norms.load for k, v in self.bg.items()}
        for j, c in enumerate(profile):
            if j == without:
                continue
            for k in slots_of(self.game.starts[j, c], self.jobs.runtime_s[j]):
                load[k] = load.get(k, 0.0) + self.jobs.nodes[j] / self.norms.load
        return load

    def cost(self, profile, j: int, c: int) -> float:
        others = self.loads(profile, without=j)
        d = self.jobs.nodes[j] / self.norms.load
        congestion = sum(self.psi(others.get(k, 0.0) + d) - self.psi(others.get(k, 0.0))
                         for k in slots_of(self.game.starts[j, c], self.jobs.runtime_s[j]))
        return float(self.game.own[j, c] + self.w.gamma * congestion)

    def potential(self, profile) -> float:
        own = sum(self.game.own[j, c] for j, c in enumerate(profile))
        load = self.loads(profile)
        base = {k: v / self.norms.load for k, v in self.bg.items()}
        return float(own + self.w.gamma * sum(self.psi(v) - self.psi(base.get(k, 0.0))
                                              for k, v in load.items()))


@st.composite
def batches(draw):
    n = draw(st.integers(1, 6))
    rows = [(draw(st.floats(0, 299)), draw(st.integers(1, 16)),
             draw(st.sampled_from([0.0, 600.0, 1800.0, 5000.0, 3 * 3600.0, 20 * 3600.0])),
             draw(st.floats(0.0, 50.0))) for _ in range(n)]
    values = np.array(draw(st.lists(st.floats(10, 400), min_size=8, max_size=8)))
    background = {k: float(draw(st.integers(0, 40)))
                  for k in draw(st.lists(st.integers(0, 110), max_size=12))}
    weights = Weights(alpha=draw(st.floats(0, 8)), beta=draw(st.floats(0, 3)),
                      gamma=draw(st.sampled_from([0.0, 0.05, 0.5, 5.0])),
                      psi_exponent=draw(st.sampled_from([1.0, 1.5, 2.0, 3.0])))
    max_delay = draw(st.sampled_from([math.inf, 6 * 3600.0, 30 * 3600.0]))
    return rows, values, background, weights, max_delay


def game_of(rows, values, background, weights, max_delay, decided_at=300.0):
    jobs = jobs_of(rows, max_delay)
    # A periodic signal: 8 values repeating every 2 h, on [-1 d, +5 d].
    series = StepSeries(-86400.0, 900.0, np.tile(values, 72))
    norms = Normalisers(carbon_kg=1.0, wait_s=3600.0, load=8.0)
    size = max(background, default=0) + 1
    bg = np.zeros(size)
    for k, v in background.items():
        bg[k] = v
    game = build_game(jobs, decided_at, series, bg, 0, GRID, HORIZON, weights, norms)
    return game, Reference(game, jobs, background, norms, weights)


class TestExactPotential:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(batches())
    def test_each_move_lowers_cost_and_potential_by_the_same_amount(self, batch):
        game, ref = game_of(*batch)
        solution = solve_coast(game, init="immediate", record=True)
        profile = [0] * game.players
        for move in solution.moves:
            before = list(profile)
            after = list(profile)
            after[move.job] = move.new
            cost_before = ref.cost(before, move.job, move.old)
            cost_after = ref.cost(after, move.job, move.new)
            assert move.old == before[move.job]
            assert cost_after < cost_before  # strict improvement of the mover
            assert move.cost_old == pytest.approx(cost_before, rel=1e-9, abs=1e-9)
            assert move.cost_new == pytest.approx(cost_after, rel=1e-9, abs=1e-9)
            change = ref.potential(after) - ref.potential(before)
            assert change == pytest.approx(cost_after - cost_before, rel=1e-7, abs=1e-9)
            profile = after
        assert list(solution.choice) == profile
        assert solution.converged

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(batches(), st.sampled_from(["insertion", "immediate"]))
    def test_converges_to_an_equilibrium(self, batch, init):
        game, ref = game_of(*batch)
        solution = solve_coast(game, init=init, record=True)
        assert solution.converged and solution.sweeps >= 1
        profile = list(solution.choice)
        for j in range(game.players):
            current = ref.cost(profile, j, profile[j])
            for c in np.flatnonzero(game.feasible[j]):
                deviation = list(profile)
                deviation[j] = int(c)
                assert ref.cost(deviation, j, int(c)) >= current - 1e-9 * max(1, abs(current))
        assert solution.potential == pytest.approx(ref.potential(profile), rel=1e-9, abs=1e-9)


#: 300 gCO2/kWh everywhere except 50 on [10:00, 11:00) of day 0 and 100 on [20:00, 22:00).
def clean_hour_series() -> StepSeries:
    values = np.full(5 * 48, 300.0)
    values[20:22] = 50.0
    values[40:44] = 100.0
    return StepSeries(0.0, SLOT, values)


NORMS = Normalisers(carbon_kg=1.0, wait_s=3600.0, load=1.0)


class TestBaselinesAndCandidates:
    def test_candidates_respect_horizon_delay_and_deadline(self):
        jobs = BatchJobs(*(np.array(v, float) for v in (
            [100.0, 200.0], [1, 1], [3600.0, 3600.0], [1.0, 1.0], [5 * 3600.0, math.inf],
            [math.inf, 10 * 3600.0])))
        starts, ok = candidate_starts(jobs, 300.0, GRID, HORIZON)
        assert starts[0, 0] == 300.0 and starts[0, 1] == 1800.0
        assert np.all(np.diff(starts[0]) > 0) and starts[0, -1] < 300.0 + HORIZON
        assert starts.shape[1] == 1 + 96  # now, then the 96 boundaries in (300, 300 + 48 h)
        assert np.all(starts[0][ok[0]] - 100.0 <= 5 * 3600.0)
        assert np.all(starts[1][ok[1]][1:] + 3600.0 <= 10 * 3600.0)
        assert ok[:, 0].all()

    def test_carbon_greedy_takes_the_clean_hour_and_waiting_can_stop_it(self):
        """A 30-min job at 00:05: 10:00 is the cleanest start; at beta = 1/h it is worth it."""
        jobs = jobs_of([(0.0, 1, 1800.0, 100.0)])
        series = clean_hour_series()

        def decide(weights, solver):
            game = build_game(jobs, 300.0, series, np.zeros(0), 0, GRID, HORIZON, weights,
                              Normalisers(carbon_kg=30.0, wait_s=3600.0, load=1.0))
            return float(game.starts[0, solver(game).choice[0]])

        assert decide(Weights(), solve_carbon_greedy) == 10 * 3600.0
        # Carbon 30 kg at 300 vs 5 kg at 50: 4 x (1 - 1/6) = 3.33 saved, 9.9 h of waiting lost.
        assert decide(Weights(alpha=4, beta=1), solve_carbon_waiting) == 300.0
        assert decide(Weights(alpha=4, beta=0.1), solve_carbon_waiting) == 10 * 3600.0
        assert decide(Weights(alpha=4, beta=0.1, gamma=0.0), lambda g: solve_coast(g)) \
            == 10 * 3600.0

    def test_coast_spreads_a_herd_that_carbon_greedy_piles_up(self):
        """Four 1-h jobs of 10 nodes (100 kWh) decided at 00:05, no waiting cost, gamma 0.02.

        Own cost 4 C / 30 kg: 0.667 in the clean hour (5 kg), 1.333 in the
        20:00-22:00 pair (10 kg), 4 elsewhere (30 kg). A job alone in two
        empty slots adds 2 x 10^2 x 0.02 = 4 of congestion; sharing both with
        one more job adds 2 x (20^2 - 10^2) x 0.02 = 12. Inserted in order:
        the clean hour (4.667), 20:00 and 21:00 (5.333 each, beside 12.667
        for sharing the clean hour), then the first empty pair of dirty slots
        00:30-01:30 (8; ``now`` would straddle three slots: 10). No job then
        gains by moving.
        """
        jobs = jobs_of([(10.0 * i, 10, 3600.0, 100.0) for i in range(4)])
        weights = Weights(alpha=4.0, beta=0.0, gamma=0.02)
        game = build_game(jobs, 300.0, clean_hour_series(), np.zeros(0), 0, GRID, HORIZON,
                          weights, Normalisers(carbon_kg=30.0, wait_s=3600.0, load=1.0))
        greedy = solve_carbon_greedy(game).choice
        assert list(game.starts[np.arange(4), greedy]) == [10 * 3600.0] * 4
        coast = solve_coast(game)
        chosen = list(game.starts[np.arange(4), coast.choice])
        assert chosen == [10 * 3600.0, 20 * 3600.0, 21 * 3600.0, 1800.0]
        assert coast.sweeps == 1
        assert game.loads(coast.choice).max() == 10.0 and game.loads(greedy).max() == 40.0

    def test_background_load_moves_coast_away(self):
        jobs = jobs_of([(0.0, 10, 3600.0, 100.0)])
        weights = Weights(alpha=4.0, beta=0.0, gamma=0.02)
        busy = np.zeros(30)
        busy[20:22] = 50.0  # earlier batches took the clean hour
        game = build_game(jobs, 300.0, clean_hour_series(), busy, 0, GRID, HORIZON, weights,
                          Normalisers(carbon_kg=30.0, wait_s=3600.0, load=1.0))
        assert game.starts[0, solve_carbon_greedy(game).choice[0]] == 10 * 3600.0
        assert game.starts[0, solve_coast(game).choice[0]] == 20 * 3600.0
