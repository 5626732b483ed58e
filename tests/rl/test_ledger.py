"""Held states, interval energy and running totals (snficon.rl.ledger)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from snficon.adapter.scheduler import scheduler_class
from snficon.analysis.metrics import metrics_from_outputs
from snficon.core.dispatch import EasyOrder
from snficon.core.view import ClusterView, Decisions, JobStart, NodeState, NodeTable, QueuedJob
from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine
from snficon.platform.generate import NodeModel, render_platform, write_platform
from snficon.platform.reader import read_platform
from snficon.rl.ledger import (
    NodeHistory,
    after_starts,
    held_nodes,
    interval_usage,
    max_noncompute_power_w,
    power_model_of,
    power_view,
)
from snficon.rl.reward import transition_reward
from tests.core.conftest import computing, idle, job, sleeping, switching_off, switching_on, view
from tests.rl.conftest import P_IDLE_W, P_OFF_W, P_ON_W, P_SLEEP_W, power_model


class TestIntervalUsage:
    def test_each_state_by_hand(self):
        # idle, asleep, computing, switching on until 20, switching off until 5; from 0 to 40
        v = view([idle(0), sleeping(), computing(100), switching_on(20), switching_off(5)])
        held = held_nodes(v, Decisions(), power_model(5))
        usage = interval_usage(held, 40.0, power_model(5))
        assert usage.duration_s == 40
        assert list(usage.wasted_j) == [
            P_IDLE_W * 40, P_SLEEP_W * 40, 0.0,
            P_ON_W * 20 + P_IDLE_W * 20,      # 3000 + 2000
            P_OFF_W * 5 + P_SLEEP_W * 35]     # 250 + 350
        assert list(usage.switching_s) == [0, 0, 0, 20, 5]

    def test_decisions_change_what_nodes_hold(self):
        power = power_model(4)
        v = view([idle(0), idle(0), sleeping(), idle(0)], [job("j1", 1, 500)], now=100)
        decisions = Decisions(starts=[JobStart("j1", (3,))], switch_on=[2], switch_off=[1])
        held = held_nodes(v, decisions, power)
        assert list(held.state) == [NodeState.IDLE, NodeState.SWITCHING_OFF,
                                    NodeState.SWITCHING_ON, NodeState.COMPUTING]
        assert held.transition_end_s[1] == 110 and held.transition_end_s[2] == 130
        usage = interval_usage(held, 150.0, power)  # 50 s
        assert list(usage.wasted_j) == [P_IDLE_W * 50, P_OFF_W * 10 + P_SLEEP_W * 40,
                                        P_ON_W * 30 + P_IDLE_W * 20, 0.0]

    def test_max_noncompute_power(self):
        assert list(max_noncompute_power_w(power_model(2))) == [P_ON_W, P_ON_W]


class TestAfterStarts:
    def test_started_jobs_run_and_leave_the_queue(self):
        v = view([idle(3), idle(4), sleeping()], [job("j1", 2, 50, submit=1), job("j2", 1, 9)],
                 now=10)
        after = after_starts(v, [JobStart("j1", (0, 1)), JobStart("gone", (2,))])
        assert [j.job_id for j in after.queue] == ["j2"]
        assert [(r.job_id, r.nodes, r.start_s, r.req_time_s) for r in after.running] == [
            ("j1", (0, 1), 10, 50)]
        assert list(after.nodes.state) == [NodeState.COMPUTING] * 2 + [NodeState.SLEEPING]
        assert list(after.nodes.release_req_s[:2]) == [60, 60]
        assert np.isnan(after.nodes.idle_since_s[:2]).all()
        assert v.nodes.state[0] == NodeState.IDLE  # the original view is untouched

    def test_no_start_is_the_same_view(self):
        v = view([idle(0)], [job("j1", 1, 5)])
        assert after_starts(v, []) is v


class TestSeam:
    def test_power_view_is_the_dispatch_orders_table(self):
        # FCFS/EASY starts j1 and backfills j3; j2 waits
        v = view([idle(0), idle(5), idle(9), computing(300), sleeping()],
                 [job("j1", 2, 100), job("j2", 4, 100), job("j3", 1, 50)], now=10)
        dispatched = EasyOrder().dispatch(v)
        assert {s.job_id for s in dispatched.starts} == {"j1", "j3"}
        seen = power_view(v, dispatched)
        assert [j.job_id for j in seen.queue] == ["j2"]
        # the view after_starts builds has the dispatch order's own node table
        mine = after_starts(v, dispatched.starts).nodes
        for name in ("state", "release_req_s", "idle_since_s", "transition_end_s"):
            assert np.array_equal(getattr(mine, name), getattr(dispatched.nodes, name),
                                  equal_nan=True), name
        assert sorted(r.job_id for r in seen.running) == ["j1", "j3"]

    def test_power_model_from_a_table_and_sleep_powers(self, tmp_path):
        platform = read_platform(write_platform(tmp_path / "p.xml", render_platform(MODEL, 3)))
        power = platform.power_model()
        tracker_table = NodeTable(
            state=np.ones(3, np.int8), idle_since_s=np.zeros(3),
            transition_end_s=np.full(3, np.nan), release_req_s=np.full(3, np.nan),
            p_idle_w=power.p_idle_w, t_on_s=power.t_on_s, t_off_s=power.t_off_s,
            e_on_j=power.e_on_j, e_off_j=power.e_off_j)
        rebuilt = power_model_of(tracker_table, power.p_sleep_w)
        for name in ("p_idle_w", "p_sleep_w", "t_on_s", "t_off_s", "p_on_w", "p_off_w",
                     "can_sleep"):
            assert np.allclose(getattr(rebuilt, name), getattr(power, name)), name


class TestNodeHistory:
    def test_totals_shares_and_arrival_window(self):
        power = power_model(2)
        history = NodeHistory.for_power(power, arrival_window_s=100)
        usage = interval_usage(held_nodes(view([idle(0), sleeping()]), Decisions(), power),
                               50.0, power)
        history.add(usage)
        history.add(dataclasses.replace(usage, start_s=50.0, end_s=100.0))
        assert history.elapsed_s == 100
        assert list(history.wasted_j) == [P_IDLE_W * 100, P_SLEEP_W * 100]
        assert list(history.wasted_share()) == pytest.approx([P_IDLE_W / P_ON_W,
                                                              P_SLEEP_W / P_ON_W])
        assert history.total_wasted_share() == pytest.approx((P_IDLE_W + P_SLEEP_W)
                                                             / (2 * P_ON_W))
        arrivals = tuple(QueuedJob(f"j{t}", 1, 5, t, i) for i, t in enumerate((10, 150, 180)))
        base = view([idle(0), idle(0)])
        history.note_arrivals(dataclasses.replace(base, now=200, arrivals=arrivals))
        assert list(history.arrivals) == [150, 180]  # 10 is older than 200 - 100
        assert history.recent_arrivals(200) == 2 and history.recent_arrivals(260) == 1


# ---------------------------------------------------------------- against the engine

MODEL = NodeModel("test", busy_w=200, idle_w=100, sleep_w=10, off_s=8, off_w=50,
                  on_s=32, on_w=150)


class RecordingFcfsb(scheduler_class("fcfsbIpm")):
    """FCFS/EASY+IPM that keeps every (view, decisions) pair it saw and made."""

    def onSimulationBegins(self) -> None:  # noqa: N802 (pybatsim hook)
        super().onSimulationBegins()
        inner = self.policy
        self.records: list[tuple[ClusterView, Decisions]] = []

        def policy(cluster: ClusterView) -> Decisions:
            decisions = inner(cluster)
            self.records.append((cluster, decisions))
            return decisions
        self.policy = policy


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory):
    """FCFS/EASY+IPM (timeout 50 s) on 4 nodes, 40 jobs: its (view, decisions) pairs, the
    end time, the metrics of its output files and the platform's power model."""
    tmp_path = tmp_path_factory.mktemp("run")
    platform = write_platform(tmp_path / "p.xml", render_platform(MODEL, 4))
    rng = np.random.default_rng(3)
    subtimes = np.cumsum(rng.exponential(60, 40)).round(1)
    jobs = [{"id": i + 1, "subtime": float(subtimes[i]), "res": int(rng.integers(1, 5)),
             "profile": f"p{i}", "walltime": -1, "reqtime": 200} for i in range(40)]
    profiles = {f"p{i}": {"type": "parallel_homogeneous", "cpu": float(rng.integers(5, 300))
                          * 1e9, "com": 0} for i in range(40)}
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    engine = build_engine(platform, [workload])
    scheduler = RecordingFcfsb({"platform": str(platform), "timeout": 50})
    run_in_process(engine, scheduler)
    engine.outputs().write(tmp_path / "out")
    return (scheduler.records, engine.now, metrics_from_outputs(tmp_path / "out"),
            read_platform(platform).power_model())


def test_wasted_energy_of_a_whole_run_equals_batsim_outputs(recorded_run):
    """Summed over every interval between invocations (and the last one to the end of
    the simulation), the ledger's wasted energy equals total minus computing energy as
    the engine's Batsim-format output files give it (SPEC 6, ``energy_wasted_to_end``)."""
    records, end, metrics, power = recorded_run
    history = NodeHistory.for_power(power)
    switches = sum(len(d.switch_off) for _, d in records)
    assert switches > 5  # the run does sleep and wake nodes
    ends = [v.now for v, _ in records[1:]] + [end]
    for (cluster, decisions), until in zip(records, ends, strict=True):
        history.add(interval_usage(held_nodes(cluster, decisions, power), until, power))
    assert history.elapsed_s == pytest.approx(end)
    assert history.wasted_j.sum() == pytest.approx(metrics.energy_wasted_to_end, rel=1e-9)


def test_rewards_of_a_whole_run_are_shares(recorded_run):
    records, _, _, power = recorded_run
    terms = [transition_reward(before, decisions, after, power)
             for (before, decisions), (after, _) in zip(records, records[1:], strict=False)]
    assert len(terms) > 50
    for term in terms:
        assert 0 <= term.energy <= 1 and 0 <= term.waiting <= 1
        assert -1 <= term.reward <= 0
    assert any(term.waiting > 0 for term in terms) and any(term.energy > 0 for term in terms)
