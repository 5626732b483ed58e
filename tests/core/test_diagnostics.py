"""One invocation's record for the decision log (``diagnostics``): the columns it fills."""

from __future__ import annotations

from snficon.core.diagnostics import Diagnostics, EstimatorState, SpareChoice

BASE = {"mode": None, "spare_planning_point": None, "gate_open": None, "screen_reason": None,
        "planned_jobs": None, "starts": 2, "wakes": 1, "shutdowns": 0, "kills": 0}


def test_a_baseline_record_fills_the_counts_and_leaves_the_rest_none():
    assert Diagnostics(starts=2, wakes=1, shutdowns=0).columns() == BASE


def test_estimates_and_the_spare_choice_add_their_columns():
    """x* = 3 with a candidate below (J, W, E) = (5, 1, 2) and none above: the below
    columns are filled, no above column appears."""
    record = Diagnostics(
        starts=2, wakes=1, shutdowns=0, mode="markovian", planned_jobs=4,
        estimates=EstimatorState(lam=0.01, mu=0.002, ratio_mean=-0.5, ratio_sigma=0.3,
                                 size_mean=2.5, size_max=8),
        spare=SpareChoice(pi_a=0.9, horizon=600.0, x=3, w=1.5, e=900.0, j=4.0,
                          below=(5.0, 1.0, 2.0), above=None))
    columns = record.columns()
    assert columns == {**BASE, "mode": "markovian", "planned_jobs": 4,
                       "lam": 0.01, "mu": 0.002, "ratio_mean": -0.5, "ratio_sigma": 0.3,
                       "size_mean": 2.5, "size_max": 8,
                       "pi_a": 0.9, "horizon": 600.0, "target_x": 3, "target_w": 1.5,
                       "target_e": 900.0, "target_j": 4.0,
                       "target_below_j": 5.0, "target_below_w": 1.0, "target_below_e": 2.0}
    assert not any(key.startswith("target_above") or key.startswith("arrival")
                   for key in columns)
