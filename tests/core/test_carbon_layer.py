"""The start-time advisor layers on hand-made cases (``snficon.core.carbon_layer``).

Each case runs a composed policy (an order, IPM with timers that never expire,
the layer) on :class:`~tests.core.scripted_cluster.ScriptedCluster`. The
signal is 300 gCO2/kWh except 50 on [10:00, 11:00) of each day (so the
obvious carbon-greedy start of a one-hour job is 10:00); normalisers are
given as options unless a case trains them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snficon.carbon.coast import FlexJob
from snficon.carbon.evaluate import freeze_normalisers
from snficon.carbon.online import plan_trained
from snficon.carbon.series import StepSeries
from snficon.core.carbon_layer import (
    LAYER_METHODS,
    CarbonLayer,
    CarbonLayerParams,
    trained_advisor,
)
from snficon.core.dispatch import EasyOrder, SnfOrder
from snficon.core.ipm import IpmPower
from snficon.core.params import IpmParams
from snficon.core.policy import Policy
from snficon.errors import InputError
from snficon.part_registry import compose

from .scripted_cluster import NEVER_S, ScriptedCluster, ScriptedJob

HOUR = 3600.0
GIVEN_NORMS = {"coast_norm_carbon_kg": 30.0, "coast_norm_load": 1.0}


def signal(days: int = 10) -> StepSeries:
    values = np.full(days * 48, 300.0)
    for day in range(days):
        values[day * 48 + 20:day * 48 + 22] = 50.0
    return StepSeries(0.0, 1800.0, values)


def layer_policy(method: str = "carbon-greedy", nodes: int = 8, order: str = "fcfs-easy",
                 **options) -> tuple[Policy, CarbonLayer]:
    params = CarbonLayerParams(**{**GIVEN_NORMS, **options})
    layer = CarbonLayer(params, LAYER_METHODS[method], signal())
    ordering = EasyOrder() if order == "fcfs-easy" else SnfOrder()
    return Policy(ordering, IpmPower(IpmParams(timeout=NEVER_S)), (layer,)), layer


def flexible(job_id: str, submit: float, res: int = 1, req: float = HOUR, runtime: float = HOUR,
             max_delay: float = 24 * HOUR, deadline: float | None = None) -> ScriptedJob:
    extra = {"flexible": True, "max_delay": max_delay}
    if deadline is not None:
        extra["deadline"] = deadline
    return ScriptedJob(job_id, res, req, runtime, submit, extra)


class TestOneJob:
    def test_held_until_the_clean_hour_then_started(self):
        policy, layer = layer_policy()
        cluster = ScriptedCluster(8, [flexible("a", 100.0)])
        ended = cluster.run(policy)
        assert ended["a"].start == 10 * HOUR  # carbon-greedy: the 50 g hour
        assert 300.0 in cluster.invocations  # the batch closed: called back then
        assert layer.releases == {"a": 10 * HOUR}

    def test_an_inflexible_job_is_not_held(self):
        policy, layer = layer_policy()
        ended = ScriptedCluster(8, [ScriptedJob("a", 1, HOUR, HOUR, 100.0)]).run(policy)
        assert ended["a"].start == 100.0 and layer.releases == {}

    def test_the_deadline_bounds_the_hold(self):
        # latest start = min(100 + 24 h, 5 h - 1 h) = 4 h: the clean hour is out of reach,
        # every candidate before it costs 300 g, carbon-greedy takes the earliest: the close
        policy, _ = layer_policy()
        ended = ScriptedCluster(8, [flexible("a", 100.0, deadline=5 * HOUR)]).run(policy)
        assert ended["a"].start == 300.0

    def test_no_slack_before_the_close_means_no_hold(self):
        policy, layer = layer_policy()
        ended = ScriptedCluster(8, [flexible("a", 100.0, max_delay=60.0)]).run(policy)
        assert ended["a"].start == 100.0 and layer.releases == {}

    def test_a_released_job_is_shown_submitted_at_its_release(self):
        # b (inflexible) arrives at 2 h and takes the only node until 12 h; a, released at
        # 10 h, waits for it: FCFS sees a as submitted at 10 h, after c (submitted 9 h)
        policy, _ = layer_policy(nodes=1)
        jobs = [flexible("a", 100.0), ScriptedJob("b", 1, 10 * HOUR, 10 * HOUR, 2 * HOUR),
                ScriptedJob("c", 1, HOUR, HOUR, 9 * HOUR)]
        ended = ScriptedCluster(1, jobs).run(policy)
        assert ended["b"].start == 2 * HOUR
        assert ended["c"].start == 12 * HOUR and ended["a"].start == 13 * HOUR


class TestTrainingWindow:
    def test_the_first_jobs_are_not_shifted_and_freeze_the_normalisers(self):
        params = CarbonLayerParams(coast_train_jobs=3)
        layer = CarbonLayer(params, "carbon-greedy", signal())
        ordering, power = EasyOrder(), IpmPower(IpmParams(timeout=NEVER_S))
        jobs = [flexible(name, 600.0 * i, res=1 + i) for i, name in enumerate("abcd")]
        ended = ScriptedCluster(8, jobs).run(Policy(ordering, power, (layer,)))
        assert [ended[name].start for name in "abc"] == [0.0, 600.0, 1200.0]
        assert ended["d"].start == 10 * HOUR
        training = [FlexJob(j.job_id, j.submit, j.res, j.req, j.res * 2100.0 * j.req / 3.6e6)
                    for j in jobs[:3]]
        assert layer.advisor.normalisers == freeze_normalisers(
            training, signal(), params.advisor_params("coast").grid)


@st.composite
def workloads(draw):
    count = draw(st.integers(1, 14))
    jobs = []
    for i in range(count):
        submit = draw(st.floats(0.0, 40 * HOUR)).__round__(0)
        req = draw(st.sampled_from([600.0, 1800.0, HOUR, 5 * HOUR]))
        runtime = req * draw(st.sampled_from([0.2, 1.0]))
        res = draw(st.integers(1, 3))
        if draw(st.booleans()):
            delay = draw(st.sampled_from([0.0, 200.0, 2 * HOUR, 30 * HOUR]))
            factor = draw(st.sampled_from([0.5, 1.0, 2.0]))
            jobs.append(flexible(f"j{i}", submit, res, req, runtime, delay,
                                 submit + delay + factor * req))
        else:
            jobs.append(ScriptedJob(f"j{i}", res, req, runtime, submit))
    return jobs


def latest_start(job: ScriptedJob) -> float:
    """The latest start its fields allow (its arrival when none is left: it cannot wait)."""
    if not job.extra.get("flexible"):
        return job.submit
    return max(job.submit, min(job.submit + job.extra["max_delay"],
                               job.extra["deadline"] - job.req))


@pytest.mark.parametrize("method", list(LAYER_METHODS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=workloads(), nodes=st.sampled_from([3, 64]), train=st.sampled_from([0, 3]))
def test_never_held_past_the_latest_start_and_the_targets_are_the_replay(method, jobs, nodes,
                                                                           train):
    """The layer releases each job between its arrival and its latest start, at the target
    COAST's idealised replay gives (the same advisor fed the same arrivals); a held job
    never starts before its release; on a cluster that never makes a job wait, no job
    starts after its latest start: the layer alone never breaks a deadline."""
    options = {} if train == 0 else {"coast_train_jobs": train, "coast_norm_carbon_kg": 0.0}
    policy, layer = layer_policy(method, nodes, **options)
    ended = ScriptedCluster(nodes, jobs).run(policy)
    params = layer.params
    arrived = sorted(jobs, key=lambda j: (j.submit, j.job_id))  # the cluster's arrival order
    flex = [FlexJob.from_fields(j.job_id, j.submit, j.res, j.req, j.extra, params.coast_busy_w)
            for j in arrived]
    replay = trained_advisor(params, LAYER_METHODS[method], signal())
    targets = dict(zip([j.job_id for j in arrived], plan_trained(flex, replay), strict=True))
    by_id = {j.job_id: j for j in jobs}
    for job_id, released in layer.releases.items():
        assert released == targets[job_id]
        assert by_id[job_id].submit <= released <= latest_start(by_id[job_id]) + 1e-6
    for job in jobs:
        assert ended[job.job_id].start >= targets[job.job_id] - 1e-6
        if job.job_id not in layer.releases:
            assert targets[job.job_id] == job.submit
        if nodes == 64:
            assert ended[job.job_id].start == pytest.approx(targets[job.job_id], abs=1e-6)
            assert ended[job.job_id].start <= latest_start(job) + 1e-6


class TestComposition:
    def test_each_layer_is_a_part_and_needs_a_signal(self):
        for name in LAYER_METHODS:
            composition = compose("snf", "icon", (name,), {"coast_gamma": 1.0})
            assert composition.params[name].coast_gamma == 1.0
            with pytest.raises(InputError, match=f"layer {name} needs a carbon-intensity "
                                                 "signal.*coast_signal"):
                composition.build(np.zeros(4))

    def test_bad_options_are_refused_by_name(self):
        with pytest.raises(InputError, match="coast_psi"):
            compose("snf", "ipm", ("coast",), {"coast_psi": 0.5})
        with pytest.raises(InputError, match="coast_fill.*linear, hold, refuse"):
            compose("snf", "ipm", ("coast",), {"coast_fill": "zero"})

    def test_a_bad_workload_field_names_the_job(self):
        policy, _ = layer_policy()
        bad = ScriptedJob("x", 1, HOUR, HOUR, 0.0, {"flexible": "yes"})
        with pytest.raises(InputError, match="job 'x': 'flexible' must be true or false"):
            ScriptedCluster(8, [bad]).run(policy)


def test_snf_order_and_coast_spread_a_herd():
    """Twenty one-node jobs of one batch: carbon-greedy piles them on the clean hour, COAST
    (gamma large enough to matter) spreads some to other slots; both within the delay."""
    jobs = [flexible(f"j{i}", 60.0 + i) for i in range(20)]
    starts = {}
    for method in ("carbon-greedy", "coast"):
        policy, _ = layer_policy(method, 64, order="snf", coast_gamma=0.05)
        ended = ScriptedCluster(64, jobs).run(policy)
        starts[method] = sorted(o.start for o in ended.values())
    assert set(starts["carbon-greedy"]) == {10 * HOUR}
    assert len(set(starts["coast"])) > 1 and max(starts["coast"]) <= 24 * HOUR + 60.0
    assert not math.isclose(np.var(starts["coast"]), 0.0)


def test_a_forecast_is_seeded_and_moves_targets():
    """A 60 % noisy forecast: the same seed gives the same starts, the advisor decides on
    the noise (some job leaves the true clean hour), and never past a latest start."""
    jobs = [flexible(f"j{i}", 60.0 * i, req=1800.0, runtime=1800.0) for i in range(30)]

    def starts(**options):
        policy, _ = layer_policy("carbon-greedy", 64, **options)
        return {k: o.start for k, o in ScriptedCluster(64, jobs).run(policy).items()}

    truth = starts()
    assert set(truth.values()) == {10 * HOUR}
    noisy = starts(coast_forecast_sd=0.6, coast_forecast_seed=7)
    assert noisy == starts(coast_forecast_sd=0.6, coast_forecast_seed=7)
    assert noisy != truth and noisy != starts(coast_forecast_sd=0.6, coast_forecast_seed=8)
    assert all(noisy[j.job_id] <= j.submit + 24 * HOUR for j in jobs)  # the maximum delay
