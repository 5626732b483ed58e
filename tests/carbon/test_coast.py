"""COAST's advisor as a layer calls it: batches, targets, callbacks, deadlines, background."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.carbon.coast import (
    METHODS,
    Advisor,
    CoastParams,
    FlexJob,
    NoisyForecast,
    energy_estimate_kwh,
)
from snficon.carbon.evaluate import (
    freeze_normalisers,
    plan_metrics,
    plan_workload,
    slot_loads,
)
from snficon.carbon.game import Normalisers, SlotGrid
from snficon.carbon.series import StepSeries
from snficon.errors import InputError


def signal() -> StepSeries:
    """300 gCO2/kWh except 50 on [10:00, 11:00) of each day, for 10 days."""
    values = np.full(10 * 48, 300.0)
    for day in range(10):
        values[day * 48 + 20:day * 48 + 22] = 50.0
    return StepSeries(0.0, 1800.0, values)


NORMS = Normalisers(carbon_kg=30.0, wait_s=3600.0, load=1.0)


def job(name: str, at: float, nodes: int = 10, runtime: float = 3600.0, **kw) -> FlexJob:
    return FlexJob(name, at, nodes, runtime, energy_estimate_kwh(nodes, 10_000, runtime), **kw)


class TestCallSequence:
    def test_submit_solve_target_and_callbacks(self):
        advisor = Advisor(CoastParams(method="carbon-greedy"), signal(), NORMS)
        assert advisor.submit(job("a", 100.0), 100.0) is None
        assert advisor.target_start("a") == math.inf
        assert advisor.next_event_time(100.0) == 300.0  # the batch closes
        assert advisor.due_batches(299.0) == []
        with pytest.raises(ValueError, match="closes at 300"):
            advisor.solve_batch(0, 200.0)
        [result] = advisor.solve_due(300.0)
        assert result.job_ids == ("a",) and result.decided_at == 300.0
        assert advisor.target_start("a") == 10 * 3600.0
        assert advisor.next_event_time(300.0) == 10 * 3600.0  # release it then
        assert advisor.next_event_time(10 * 3600.0) is None
        advisor.forget("a")
        with pytest.raises(KeyError):
            advisor.target_start("a")
        advisor.submit(job("b", 400.0), 400.0)
        with pytest.raises(ValueError, match="submitted twice"):
            advisor.submit(job("b", 401.0), 401.0)

    def test_a_due_batch_asks_for_an_immediate_call(self):
        advisor = Advisor(CoastParams(), signal(), NORMS)
        advisor.submit(job("a", 100.0), 100.0)
        assert advisor.next_event_time(305.0) == 305.0

    def test_inflexible_and_observed_jobs_are_not_held(self):
        advisor = Advisor(CoastParams(method="coast"), signal(), NORMS)
        assert advisor.submit(job("fixed", 50.0, flexible=False), 50.0) == 50.0
        observed = Advisor(CoastParams(method="observed"), signal(), NORMS)
        assert observed.submit(job("x", 70.0), 70.0) == 70.0
        assert observed.next_event_time(70.0) is None

    def test_no_slack_for_the_batch_means_no_hold(self):
        """Latest start 120 s (deadline = arrival + runtime + 20 s) is before the close, 300 s."""
        advisor = Advisor(CoastParams(), signal(), NORMS)
        tight = job("t", 100.0, deadline_s=100.0 + 3600.0 + 20.0)
        assert advisor.submit(tight, 100.0) == 100.0

    def test_later_batches_see_earlier_targets(self):
        """Two batches of one job each: the second avoids the clean hour the first took."""
        params = CoastParams(method="coast", alpha=4.0, beta=0.0, gamma=0.02)
        advisor = Advisor(params, signal(), NORMS)
        advisor.submit(job("first", 10.0), 10.0)
        advisor.solve_due(300.0)
        advisor.submit(job("second", 310.0), 310.0)
        advisor.solve_due(600.0)
        assert advisor.target_start("first") == 10 * 3600.0
        assert advisor.target_start("second") != 10 * 3600.0
        greedy = Advisor(CoastParams(method="carbon-greedy"), signal(), NORMS)
        for name, at, close in (("first", 10.0, 300.0), ("second", 310.0, 600.0)):
            greedy.submit(job(name, at), at)
            greedy.solve_due(close)
        assert greedy.target_start("second") == 10 * 3600.0
        assert advisor.slot_loads().max() == 10 and greedy.slot_loads().max() == 20


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 25))
    jobs = []
    for i in range(n):
        at = draw(st.floats(0, 3 * 86400))
        runtime = draw(st.sampled_from([60.0, 1800.0, 7200.0, 30000.0]))
        delay = draw(st.sampled_from([0.0, 600.0, 3 * 3600.0, 86400.0, math.inf]))
        slack = draw(st.sampled_from([0.0, 900.0, 12 * 3600.0, math.inf]))
        jobs.append(job(str(i), at, draw(st.integers(1, 20)), runtime,
                        flexible=draw(st.booleans()), max_delay_s=delay,
                        deadline_s=at + runtime + slack))
    return jobs


class TestGuarantees:
    @settings(max_examples=40, deadline=None)
    @given(workloads(), st.sampled_from(METHODS))
    def test_targets_keep_arrival_delay_deadline_and_horizon(self, jobs, method):
        advisor = Advisor(CoastParams(method=method, gamma=0.05), signal(), NORMS)
        targets = plan_workload(jobs, advisor)
        for j, target in zip(jobs, targets, strict=True):
            assert target >= j.arrival_s
            if target > j.arrival_s:  # held: only flexible jobs, within their bounds
                assert j.flexible and method != "observed"
                assert target - j.arrival_s <= j.max_delay_s
                assert target + j.runtime_s <= j.deadline_s  # so never after its deadline
                assert target < advisor.batch_close(advisor.batch_of(j.arrival_s)) + 48 * 3600
        assert all(r.converged for r in advisor.results)


class TestForecast:
    def test_seeded_per_batch_and_exact_without_noise(self):
        truth = signal()
        noisy = NoisyForecast(truth, 0.2, seed=3)
        a, b = noisy.window(0.0, 86400.0, batch=5), noisy.window(0.0, 86400.0, batch=5)
        assert np.array_equal(a.values, b.values)
        assert not np.array_equal(a.values, noisy.window(0.0, 86400.0, batch=6).values)
        assert (a.values >= 0).all() and not np.array_equal(a.values, truth.values[:a.size])
        exact = NoisyForecast(truth, 0.0, seed=3).window(0.0, 86400.0, batch=5)
        assert exact.integral(0.0, 86400.0) == pytest.approx(truth.integral(0.0, 86400.0))

    def test_the_advisor_decides_on_the_forecast(self):
        """A forecast that hides the clean hour moves carbon-greedy's choice."""
        truth = signal()
        advisor = Advisor(CoastParams(method="carbon-greedy"), truth, NORMS,
                          forecast=NoisyForecast(truth, 5.0, seed=11))
        advisor.submit(job("a", 0.0), 0.0)
        advisor.solve_due(300.0)
        assert advisor.target_start("a") != 10 * 3600.0


class TestEvaluation:
    def test_normalisers_are_training_medians(self):
        """Three jobs at 300 gCO2/kWh: 10, 20, 30 kWh -> 3, 6, 9 kg; slot loads 1, 3, 2."""
        series = StepSeries(0.0, 1800.0, np.full(48, 300.0))
        jobs = [FlexJob("a", 0.0, 1, 1800.0, 10.0), FlexJob("b", 0.0, 2, 1800.0, 20.0),
                FlexJob("c", 1800.0, 2, 1800.0, 30.0), FlexJob("d", 7200.0, 0, 60.0, 0.0)]
        norms = freeze_normalisers(jobs[:3], series, SlotGrid())
        assert norms.carbon_kg == pytest.approx(6.0) and norms.wait_s == 3600.0
        assert slot_loads(jobs[:3], np.array([0.0, 0.0, 1800.0]), SlotGrid())[1].tolist() \
            == [3.0, 2.0]
        assert norms.load == 2.5  # median of the busy slots' loads 3 and 2
        with pytest.raises(ValueError, match="no energy"):
            freeze_normalisers(jobs[3:], series, SlotGrid())

    def test_plan_metrics_by_hand(self):
        series = signal()
        jobs = [job("a", 0.0), job("b", 0.0, flexible=False)]
        # a at 10:00 (50 g/kWh), b at 0 (300): 100 kWh each -> 5 + 30 kg.
        m = plan_metrics(jobs, np.array([36000.0, 0.0]), series, SlotGrid())
        assert m.carbon_kg == pytest.approx(35.0)
        assert m.mean_added_wait_s == 18000.0 and m.mean_added_wait_flexible_s == 36000.0
        assert m.peak_slot_load == 10.0 and m.slots == 22
        loads = np.zeros(22)
        loads[[0, 1, 20, 21]] = 10.0
        assert m.load_variance == pytest.approx(loads.var())

    def test_from_workload_fields(self):
        j = FlexJob.from_fields("7", 10.0, 4, 3600.0,
                                {"flexible": True, "max_delay": 7200, "deadline": 20000},
                                busy_w=2100.0)
        assert (j.flexible, j.max_delay_s, j.deadline_s) == (True, 7200.0, 20000.0)
        assert j.energy_kwh == pytest.approx(4 * 2100 * 3600 / 3.6e6)
        plain = FlexJob.from_fields("8", 0.0, 1, 60.0, {"res": 1}, busy_w=100.0)
        assert not plain.flexible and plain.max_delay_s == math.inf
        with pytest.raises(InputError, match="job '9': 'max_delay' must be"):
            FlexJob.from_fields("9", 0.0, 1, 60.0, {"flexible": True, "max_delay": -1}, 1.0)
        with pytest.raises(InputError, match="'flexible' must be true or false"):
            FlexJob.from_fields("9", 0.0, 1, 60.0, {"flexible": "yes"}, 1.0)
