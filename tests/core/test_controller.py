"""SNF-ICON's controller, one invocation at a time (paper, Algorithm 1, Definitions 5 and 7).

Every test builds a hand-made cluster with the helpers of ``conftest.py``
(idle power 100 W, switch-on 30 s / 4500 J, switch-off 10 s / 500 J unless
stated) and works the expected decision out from the paper in its docstring.
Unless stated the parameters are Table I (timeout 7200 s, T_A^max 12 h,
n_min 3, sigma_min 0.25).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.analysis.decision_log import COLUMNS, DecisionRow
from snficon.core import estimators as est
from snficon.core.controller import (
    IconMemory,
    active_remaining,
    decide_icon,
    estimator_state,
    observe,
    predicted_releases,
)
from snficon.core.dispatch import Dispatch
from snficon.core.names import Mode, Trigger
from snficon.core.node_choice import StateGroups
from snficon.core.params import IconParams, IpmParams
from snficon.core.plan import release_map
from snficon.core.policy import decide_snf_ipm
from snficon.core.view import ClusterView, CompletedJob, RunningJob

from .conftest import computing, idle, job, log_of, sleeping, table

NF = IconParams(fallback=False)
SIGMA2_HALF = 0.25 ** 2 / 2  # sigma_Y = sigma_min with a single log-ratio sample


def p_sleep(n: int, watts: float = 10.0) -> np.ndarray:
    return np.full(n, watts)


def make_view(nodes, queue=(), *, now: float, trigger: str = Trigger.ARRIVAL, running=(),
              arrivals=(), completions=()) -> ClusterView:
    return ClusterView(now=now, trigger=trigger, nodes=table(list(nodes)), queue=tuple(queue),
                       running=tuple(running), arrivals=tuple(arrivals),
                       completions=tuple(completions))


def memory_with(nb_nodes: int, params: IconParams, *, arrivals=(), completions=(),
                now: float = 0.0) -> IconMemory:
    """The memory after observing ``arrivals`` and ``completions`` (an earlier invocation)."""
    prior = ClusterView(now=now, trigger=Trigger.ARRIVAL, nodes=table([idle()] * nb_nodes),
                        queue=(), arrivals=tuple(arrivals), completions=tuple(completions))
    return observe(prior, IconMemory.initial(nb_nodes, params), params)


def ratio_half(nb_nodes: int, params: IconParams) -> IconMemory:
    """Memory that learned actual = requested / 2: m_Y = log 0.5, sigma_Y = sigma_min."""
    done = CompletedJob("c0", (0,), runtime_s=50.0, req_time_s=100.0, end_s=0.0)
    return memory_with(nb_nodes, params, completions=[done])


def same_decisions(a, b) -> None:
    assert a.starts == b.starts
    assert a.switch_on == b.switch_on
    assert a.switch_off == b.switch_off
    assert a.call_at == b.call_at


# ---------------------------------------------------------------------- fallback (A(t) = 0)

def fallback_state() -> ClusterView:
    """t = 10: nodes 0 idle since 0, 1 idle since 10 (job c just ended there), 2 asleep,
    3 computing job a (start 0, request 500). j1 (1 node, 100 s) and j2 (3 nodes, 200 s)
    arrive at 10. Job c ran 5 s of a 10 s request: the log ratio is log 0.5."""
    nodes = [idle(0.0), idle(10.0), sleeping(), computing(500.0)]
    queue = [job("j1", 1, 100.0, submit=10.0), job("j2", 3, 200.0, submit=10.0)]
    return make_view(nodes, queue, now=10.0, running=[RunningJob("a", (3,), 0.0, 500.0)],
                     arrivals=queue,
                     completions=[CompletedJob("c", (1,), 5.0, 10.0, 10.0)])


def test_too_few_samples_fall_back_to_snf_ipm() -> None:
    """A(t) = 0 delegates the whole invocation to SNF+IPM (Algorithm 1, lines 3-5).

    Two arrivals give one interarrival sample and one completion one service
    sample, fewer than n_min = 3: A(t) = 0. SNF+IPM: j1 starts on node 1 (the
    longest remaining idle timer), j2 does not fit. The PSAS release map uses
    requested times: node 1 at 10 + 100 = 110, node 0 at 10, node 2 at 10 + 30, node 3
    at 500; j2 is planned at the 3rd earliest, 110, on nodes {0, 1, 2}; node 2 wakes
    at 110 - 30 = 80, the callback. No idle timer has expired. The decisions are
    exactly :func:`decide_snf_ipm`'s with the same timeout, and the mode is logged.
    """
    params = IconParams(timeout=3000.0)
    state = fallback_state()
    decisions, memory = decide_icon(state, IconMemory.initial(4, params), params, p_sleep(4))
    baseline = decide_snf_ipm(state, IpmParams(timeout=3000.0))
    same_decisions(decisions, baseline)
    assert [(s.job_id, s.nodes) for s in decisions.starts] == [("j1", (1,))]
    assert decisions.switch_on == [] and decisions.switch_off == []
    assert decisions.call_at[0] == 80.0  # then the request-end calls (SPEC 5, IPM callbacks)
    log = log_of(decisions)
    assert log["mode"] == Mode.FALLBACK
    assert (log["arrival_n"], log["arrival_accepted"]) == (1, False)
    assert (log["service_n"], log["service_accepted"]) == (1, False)
    keys = ("starts", "wakes", "shutdowns", "planned_jobs")
    assert {k: log[k] for k in keys} == {k: log_of(baseline)[k] for k in keys}
    assert log["spare_planning_point"] is None and "pi_a" not in log
    assert log["screen_reason"] == "arrival:n<n_min,zero_mean,lag1 service:n<n_min,cv,lag1"
    # the monitor records were consumed all the same (Definition 5)
    assert memory.last_arrival_s == 10.0 and len(memory.service) == 1


def test_the_fallback_takes_the_request_end_calls_option() -> None:
    """The IPM fallback makes the request-end calls as SNF+IPM does (SPEC 5, IPM
    callbacks), and ``request_end_calls=False`` turns them off for it too. On the state
    above, node 2 asleep (T_on 30 s): the wake at 80, then job a's requested end 500 less
    T_on, 470 (j1's 110 - 30 = 80 is the wake's own time); without them only the wake."""
    state = fallback_state()
    for calls, expected in ((True, [80.0, 470.0]), (False, [80.0])):
        params = IconParams(timeout=3000.0, request_end_calls=calls)
        decisions, _ = decide_icon(state, IconMemory.initial(4, params), params, p_sleep(4))
        assert log_of(decisions)["mode"] == Mode.FALLBACK
        assert decisions.call_at == expected
        same_decisions(decisions, decide_snf_ipm(
            state, IpmParams(timeout=3000.0, request_end_calls=calls)))


def test_no_fallback_takes_the_icon_path_on_the_same_state() -> None:
    """NF (fallback=False) forces the ICON path on the state above (mode "icon").

    j1 still starts on node 1, but its release is predicted (eq. 56, e = 0, eq. 51):
    exp(log(100 x 0.5) + sigma^2 / 2) = 50 e^0.03125 = 51.59 s after 10, so j2 is
    planned at 61.59 on nodes {0, 1, 2} and node 2 wakes at 31.59 (SNF+IPM: 80).
    """
    decisions, _ = decide_icon(fallback_state(), IconMemory.initial(4, NF), NF, p_sleep(4))
    assert log_of(decisions)["mode"] == Mode.ICON
    assert log_of(decisions)["spare_planning_point"] is False  # j2 is still waiting
    assert [(s.job_id, s.nodes) for s in decisions.starts] == [("j1", (1,))]
    expected_wake = 10.0 + 50.0 * math.exp(SIGMA2_HALF) - 30.0
    assert decisions.call_at == [pytest.approx(expected_wake, rel=1e-12)]
    assert decisions.call_at[0] == pytest.approx(31.587, abs=1e-3)
    assert decisions.switch_on == [] and decisions.switch_off == []


def test_accepted_screen_uses_the_icon_path_with_fallback_enabled() -> None:
    """A(t) = 1 (both series pass eq. 6-10) keeps the full method on the ICON path.

    Arrivals at 0, 5, 25, 85, 95, 135 give gaps 5, 20, 60, 10, 40 (CV 0.76, lag-1
    -0.47); completions of 30, 5, 10, 60, 20 s give CV 0.78, lag-1 -0.26; KS limits
    1.25 x 3 / sqrt 5 = 1.68 cannot fail: both accepted at t = 135.
    """
    arrivals = [job(f"j{i}", 1, 50.0, submit=t)
                for i, t in enumerate([0.0, 5.0, 25.0, 85.0, 95.0, 135.0])]
    completions = [CompletedJob(f"c{i}", (0,), run, 100.0, 100.0)
                   for i, run in enumerate([30.0, 5.0, 10.0, 60.0, 20.0])]
    state = make_view([idle(100.0), idle(100.0)], now=135.0, arrivals=arrivals[-1:])
    params = IconParams()
    memory = memory_with(2, params, arrivals=arrivals[:-1], completions=completions, now=100.0)
    decisions, _ = decide_icon(state, memory, params, p_sleep(2))
    log = log_of(decisions)
    assert (log["arrival_n"], log["service_n"]) == (5, 5)
    assert log["arrival_cv"] == pytest.approx(0.755, abs=1e-3)
    assert log["arrival_lag1"] == pytest.approx(-0.474, abs=1e-3)
    assert log["service_cv"] == pytest.approx(0.780, abs=1e-3)
    assert log["service_lag1"] == pytest.approx(-0.264, abs=1e-3)
    assert log["arrival_accepted"] and log["service_accepted"]
    assert log["mode"] == Mode.ICON


# ---------------------------------------------------------------------- memory

def test_observe_consumes_arrivals_and_completions() -> None:
    """Algorithm 1, line 1 and section IV-A.

    Arrivals at 100, 100 and 130 (given out of order) then, at a later call, 200:
    the first has no gap, the simultaneous one a zero gap (kept), then 30 and 70,
    timestamped by the later arrival. m_A: 3600 -> 0.8 x 3600 = 2880 -> 0.2 x 30 +
    0.8 x 2880 = 2310 -> 0.2 x 70 + 0.8 x 2310 = 1862 (eq. 17). Completions of 40 s
    (request 80) and 60 s (request 60), both at 150: service series [40, 60],
    m_S = 0.1 x 60 + 0.9 x 40 = 42, m_Y = 0.9 log 0.5. The latest arrival is 200.
    """
    params = IconParams()
    first = make_view([idle()] * 2, now=130.0, arrivals=[
        job("j3", 1, 10.0, submit=130.0), job("j1", 1, 10.0, submit=100.0),
        job("j2", 2, 10.0, submit=100.0)])
    memory = observe(first, IconMemory.initial(2, params), params)
    assert memory.last_arrival_s == 130.0
    assert memory.arrivals.values.tolist() == [0.0, 30.0]
    assert memory.arrivals.times.tolist() == [100.0, 130.0]
    second = make_view([idle()] * 2, now=200.0, trigger=Trigger.COMPLETION,
                       arrivals=[job("j4", 1, 10.0, submit=200.0)],
                       completions=[CompletedJob("j1", (0,), 40.0, 80.0, 150.0),
                                    CompletedJob("j2", (0, 1), 60.0, 60.0, 150.0)])
    decisions, after = decide_icon(second, memory, params, p_sleep(2))
    assert after.last_arrival_s == 200.0
    assert after.arrivals.values.tolist() == [0.0, 30.0, 70.0]
    assert after.arrivals.times.tolist() == [100.0, 130.0, 200.0]
    assert after.service.values.tolist() == [40.0, 60.0]
    assert after.service.times.tolist() == [150.0, 150.0]
    e = after.estimates
    assert (e.n_arrivals, e.n_services, e.n_ratios) == (4, 2, 2)
    assert e.m_a == pytest.approx(1862.0)
    assert e.m_s == pytest.approx(42.0)
    assert e.m_y == pytest.approx(0.9 * math.log(0.5))
    assert log_of(decisions)["arrival_n"] == 3 and log_of(decisions)["service_n"] == 2
    assert log_of(decisions)["lam"] == pytest.approx(1.0 / 1862.0)
    assert log_of(decisions)["mu"] == pytest.approx(1.0 / 42.0)
    # the memory passed in is not modified
    assert memory.last_arrival_s == 130.0 and len(memory.service) == 0


@settings(deadline=None, derandomize=True, database=None, max_examples=100)
@given(steps=st.lists(st.tuples(
    st.lists(st.tuples(st.integers(1, 3), st.sampled_from([0.0, 10.0, 600.0])), max_size=3),
    st.lists(st.tuples(st.sampled_from([0.0, 5.0, 50.0]), st.sampled_from([0.0, 10.0, 80.0])),
             max_size=2)), min_size=1, max_size=8))
def test_remembered_estimator_state_is_the_state_of_the_estimates(steps) -> None:
    """The estimator state a memory keeps for the log (updated by :func:`observe` with the
    EMAs, kept through an invocation without arrivals or completions) is the state
    computed from its EMAs."""
    params = IconParams()
    memory = IconMemory.initial(3, params)
    now = 0.0
    for arrivals, completions in steps:
        now += 100.0
        seen = make_view([idle()] * 3, now=now, arrivals=[
            job(f"j{now}-{i}", res, req, submit=now) for i, (res, req) in enumerate(arrivals)],
            completions=[CompletedJob(f"c{now}-{i}", (0,), run, req, now)
                         for i, (run, req) in enumerate(completions)])
        before = memory
        memory = observe(seen, memory, params)
        assert (memory is before) == (not arrivals and not completions)
        assert memory.state == estimator_state(memory.estimates, params)
        weights = memory.estimates.weights  # eq. 19's mean size, summed term by term
        if weights:
            mean = sum(r * w for r, w in weights) / sum(w for _, w in weights)
            assert memory.state.size_mean == mean
            assert memory.state.size_max == max(r for r, _ in weights)


# ---------------------------------------------------------------------- spare-planning points

def recent_memory(nb_nodes: int, params: IconParams, last: float) -> IconMemory:
    return memory_with(nb_nodes, params, arrivals=[job("j0", 1, 10.0, submit=last)], now=last)


@pytest.mark.parametrize(("trigger", "point"), [
    (Trigger.INITIAL, True), (Trigger.ARRIVAL, True), (Trigger.COMPLETION, True),
    (Trigger.CALLBACK, False), (Trigger.TRANSITION, False)])
def test_spare_planning_point_needs_a_qualifying_trigger(trigger: str, point: bool) -> None:
    """Definition 5: E holds the initial, arrival and completion calls only.

    t = 100, node 0 idle since 100, nodes 1-2 asleep, empty queue, latest arrival at 90
    (gate open). On E the spare target is computed (pi_A, H, x* logged); on a callback
    or a transition it is not.
    """
    params = NF
    state = make_view([idle(100.0), sleeping(), sleeping()], now=100.0, trigger=trigger)
    decisions, _ = decide_icon(state, recent_memory(3, params, 90.0), params, p_sleep(3))
    log = log_of(decisions)
    assert log["mode"] == Mode.ICON
    assert log["spare_planning_point"] is point
    assert log["gate_open"] is True
    assert ("target_x" in log) is point and ("pi_a" in log) is point
    if point:
        assert 1 <= log["target_x"] <= 3  # x_min = max(|I_f| = 1, S_min = 1), x_max = 3
    else:
        assert decisions.switch_on == [] and decisions.switch_off == []


def test_no_spare_planning_while_jobs_wait() -> None:
    """Definition 5: a job left in the queue after dispatch rules out spare planning.

    t = 100, arrival of j1 (3 nodes) with one idle node: j1 waits, it is planned at
    100 + 30 on all three nodes (the two asleep wake now): not a spare-planning point.
    """
    j1 = job("j1", 3, 50.0, submit=100.0)
    state = make_view([idle(100.0), sleeping(), sleeping()], [j1], now=100.0, arrivals=[j1])
    decisions, _ = decide_icon(state, IconMemory.initial(3, NF), NF, p_sleep(3))
    assert log_of(decisions)["spare_planning_point"] is False
    assert "target_x" not in log_of(decisions)
    assert decisions.starts == [] and decisions.switch_on == [1, 2]
    assert decisions.call_at == [7300.0]  # node 0's timer


# ---------------------------------------------------------------------- arrival-recency gate

def test_gate_closed_before_the_first_arrival() -> None:
    """Definition 7: no recorded arrival, gate closed (NG: open).

    t = 0, initial call, two idle nodes, nothing submitted: a spare-planning point
    but no spare target; NG computes one.
    """
    state = make_view([idle(0.0), idle(0.0)], now=0.0, trigger=Trigger.INITIAL)
    decisions, _ = decide_icon(state, IconMemory.initial(2, NF), NF, p_sleep(2))
    assert log_of(decisions)["spare_planning_point"] is True
    assert log_of(decisions)["gate_open"] is False
    assert "target_x" not in log_of(decisions)
    assert decisions.switch_off == [] and decisions.switch_on == []
    assert decisions.call_at == [7200.0]
    ng = dataclasses.replace(NF, gate=False)
    decisions, _ = decide_icon(state, IconMemory.initial(2, ng), ng, p_sleep(2))
    assert log_of(decisions)["gate_open"] is True and "target_x" in log_of(decisions)


@pytest.mark.parametrize(("age", "open_"), [(0.0, True), (43200.0, True), (43200.5, False)])
def test_gate_window(age: float, open_: bool) -> None:
    """Definition 7: open when t - t_A <= T_A^max (43200 s), closed after."""
    last = 1000.0
    state = make_view([idle(last + age)], now=last + age, trigger=Trigger.ARRIVAL)
    decisions, _ = decide_icon(state, recent_memory(1, NF, last), NF, p_sleep(1))
    assert log_of(decisions)["gate_open"] is open_
    assert ("target_x" in log_of(decisions)) is open_
    ng = dataclasses.replace(NF, gate=False)
    decisions, _ = decide_icon(state, recent_memory(1, ng, last), ng, p_sleep(1))
    assert log_of(decisions)["gate_open"] is True and "target_x" in log_of(decisions)


# ---------------------------------------------------------------------- stale-completion shutdown

LAST_ARRIVAL = 1000.0
STALE_NOW = LAST_ARRIVAL + 43200.0 + 1.0  # the gate is closed


def stale_state(queue=()) -> ClusterView:
    """Job a (nodes 0, 1) ends at STALE_NOW; node 2 idle for 100 s; node 3 asleep."""
    nodes = [idle(STALE_NOW), idle(STALE_NOW), idle(STALE_NOW - 100.0), sleeping()]
    done = CompletedJob("a", (0, 1), 500.0, 600.0, STALE_NOW)
    return make_view(nodes, queue, now=STALE_NOW, trigger=Trigger.COMPLETION,
                     completions=[done])


def test_closed_gate_switches_off_nodes_released_by_a_completion() -> None:
    """Section IV-I and Algorithm 1, lines 13-14.

    The gate is closed (latest arrival 43201 s ago) and a completion frees nodes 0
    and 1 with an empty queue: both are switched off at once, before their timer.
    Node 2 follows the timeout (expires at t + 7100): the callback. Without
    ``stale_completion_shutdown`` nothing is switched off.
    """
    decisions, _ = decide_icon(stale_state(), recent_memory(4, NF, LAST_ARRIVAL), NF,
                               p_sleep(4))
    assert log_of(decisions)["spare_planning_point"] is True
    assert log_of(decisions)["gate_open"] is False
    assert decisions.switch_off == [0, 1] and decisions.switch_on == []
    assert decisions.call_at == [STALE_NOW + 7100.0]
    assert log_of(decisions)["shutdowns"] == 2
    off = dataclasses.replace(NF, stale_completion_shutdown=False)
    decisions, _ = decide_icon(stale_state(), recent_memory(4, off, LAST_ARRIVAL), off,
                               p_sleep(4))
    assert decisions.switch_off == []
    assert decisions.call_at == [STALE_NOW + 7100.0]


def test_stale_shutdown_spares_the_nodes_a_job_reuses() -> None:
    """The completion's nodes reused by an immediate start are not switched off.

    Job w (1 node, waiting since the last arrival) starts on node 0 (idle since now,
    the longest remaining timer, lowest id): the queue is empty, the gate closed, so
    only node 1 of the released nodes is switched off.
    """
    waiting = job("w", 1, 50.0, submit=LAST_ARRIVAL)
    memory = recent_memory(4, NF, LAST_ARRIVAL)
    decisions, _ = decide_icon(stale_state([waiting]), memory, NF, p_sleep(4))
    assert [(s.job_id, s.nodes) for s in decisions.starts] == [("w", (0,))]
    assert log_of(decisions)["spare_planning_point"] is True
    assert decisions.switch_off == [1]


def test_stale_shutdown_is_an_icon_action() -> None:
    """With A(t) = 0 the same state is SNF+IPM: no node is switched off before its timer."""
    params = IconParams()
    decisions, _ = decide_icon(stale_state(), recent_memory(4, params, LAST_ARRIVAL), params,
                               p_sleep(4))
    assert log_of(decisions)["mode"] == Mode.FALLBACK
    assert decisions.switch_off == []


def test_gate_open_plans_spares_instead_of_the_stale_shutdown() -> None:
    """NG on the stale state: the spare target runs; nodes 0-2 have running timers
    (I_f, respect_timeout), so none of them is switched off."""
    ng = dataclasses.replace(NF, gate=False)
    decisions, _ = decide_icon(stale_state(), recent_memory(4, ng, LAST_ARRIVAL), ng,
                               p_sleep(4))
    assert log_of(decisions)["gate_open"] is True and log_of(decisions)["target_x"] >= 3
    assert decisions.switch_off == []


def test_stale_shutdown_skips_nodes_that_cannot_sleep() -> None:
    """A node without a sleep state (infinite transition times) is never switched off.

    Job a frees nodes 0 (cannot sleep) and 1 with the gate closed: only node 1 may go.
    """
    inf = math.inf
    nodes = [idle(STALE_NOW, t_on=inf, t_off=inf, e_on=inf, e_off=inf), idle(STALE_NOW)]
    state = make_view(nodes, now=STALE_NOW, trigger=Trigger.COMPLETION,
                      completions=[CompletedJob("a", (0, 1), 500.0, 600.0, STALE_NOW)])
    decisions, _ = decide_icon(state, recent_memory(2, NF, LAST_ARRIVAL), NF, p_sleep(2))
    assert decisions.switch_off == [1]


# ---------------------------------------------------------------------- ICON release prediction

def test_predicted_releases_follow_eq_56() -> None:
    """Running and just-started jobs free their nodes at now + R_j (eq. 56, App. A).

    m_Y = log 0.5, sigma_Y = 0.25. t = 100: job a (nodes 0, 1; start 0; request 1000)
    has theta = log 500, zeta = (log 100 - log 500) / 0.25 = -6.4 (survival ~ 1):
    R = 500 e^0.03125 - 100 = 415.87. Job b (node 2; start 0; request 50) is past its
    request: PSAS says never (inf), ICON predicts a finite release. j1 (1 node, request
    400) starts now on node 3: R = 200 e^0.03125 = 206.35 (eq. 51). Node 4 asleep:
    100 + 30.
    """
    params = IconParams()
    memory = ratio_half(5, params)
    j1 = job("j1", 1, 400.0, submit=100.0)
    running = [RunningJob("a", (0, 1), 0.0, 1000.0), RunningJob("b", (2,), 0.0, 50.0)]
    state = make_view([computing(1000.0), computing(1000.0), computing(50.0), idle(50.0),
                       sleeping()], [j1], now=100.0, running=running)
    dispatch = Dispatch(state)
    assert dispatch.start(j1)
    active = active_remaining(state, dispatch.starts, memory.estimates, params)
    release = predicted_releases(dispatch.table(), state.now, active)
    r_a = est.remaining_time(memory.estimates, 1000.0, 100.0, params)
    assert r_a == pytest.approx(500.0 * math.exp(SIGMA2_HALF) - 100.0, rel=1e-9)
    assert release[0] == release[1] == pytest.approx(100.0 + 415.87, abs=0.01)
    assert release[0] == 100.0 + r_a
    assert 100.0 < release[2] < math.inf
    assert release[2] == 100.0 + est.remaining_time(memory.estimates, 50.0, 100.0, params)
    assert release[3] == pytest.approx(100.0 + 200.0 * math.exp(SIGMA2_HALF))
    assert release[4] == 130.0
    psas = release_map(dispatch.table(), 100.0)
    assert psas[0] == 1000.0 and psas[2] == math.inf and psas[3] == 500.0


def test_cold_start_releases_at_the_request() -> None:
    """No log ratio yet: a running job has request - elapsed left (App. A cold start)."""
    params = IconParams()
    state = make_view([computing(1000.0)], now=100.0,
                      running=[RunningJob("a", (0,), 0.0, 1000.0)])
    active = active_remaining(state, (), IconMemory.initial(1, params).estimates, params)
    release = predicted_releases(StateGroups.of(state.nodes), state.now, active)
    assert release.tolist() == [1000.0]


def test_planned_jobs_last_their_predicted_duration() -> None:
    """Eq. 56-57 in the plan: the wake callback moves with the predictions.

    m_Y = log 0.5. t = 100: node 0 runs job a (request 1000, predicted free at
    515.87); nodes 1, 2 asleep. j1 (1 node, 400 s) and j2 (2 nodes, 400 s) wait;
    D = 400 x 0.5 = 200 (eq. 46). j1: start 130 on node 1 (wake now), finish 330.
    j2: 2nd earliest release of {515.87, 330, 130} = 330 on {1, 2}: node 2 wakes at
    300, the callback. SNF+IPM plans with requests: j1 ends at 530, j2 starts at 530,
    node 2 wakes at 500.
    """
    params = NF
    queue = [job("j1", 1, 400.0), job("j2", 2, 400.0)]
    state = make_view([computing(1000.0), sleeping(), sleeping()], queue, now=100.0,
                      trigger=Trigger.CALLBACK, running=[RunningJob("a", (0,), 0.0, 1000.0)])
    decisions, _ = decide_icon(state, ratio_half(3, params), params, p_sleep(3))
    assert decisions.starts == []
    assert decisions.switch_on == [1]
    assert decisions.call_at == [pytest.approx(300.0)]
    assert decisions.switch_off == []
    baseline = decide_snf_ipm(state, IpmParams())
    assert baseline.switch_on == [1] and baseline.call_at == [500.0, 970.0]  # 1000 - T_on


# ---------------------------------------------------------------------- the decision log

def spare_state() -> tuple[ClusterView, IconMemory]:
    """t = 100: j1 (2 nodes, request 1000) arrives and starts on idle nodes 0, 1;
    nodes 2-5 asleep and cheap to wake (E_on = 10 J, idle 1 W, sleep 0.5 W)."""
    j1 = job("j1", 2, 1000.0, submit=100.0)
    cheap = {"e_on": 10.0, "p_idle": 1.0}
    nodes = [idle(0.0), idle(0.0)] + [sleeping(**cheap) for _ in range(4)]
    return make_view(nodes, [j1], now=100.0, arrivals=[j1]), IconMemory.initial(6, NF)


def test_spare_target_wakes_nodes_for_the_next_job() -> None:
    """Sections IV-E..H on a hand state.

    After j1 starts the queue is empty (a spare-planning point, gate open: the
    arrival is now). The only request seen is r = 2 (p_2 = 1); K = 4 sleeping nodes;
    x in [1, 4]. Left asleep a node is ready in 30 s, woken now in phi(30) < 1 s, so
    W(x) = pi_A x 30 for x < 2 and pi_A phi(30) for x >= 2. With alpha = 5000 the drop
    at x = 2 is worth far more than one wake (10 J + about 0.5 W x H, H < 3600 s):
    x* = 2, nodes 2 and 3 are switched on (equal keys, lowest ids).
    """
    state, memory = spare_state()
    decisions, _ = decide_icon(state, memory, NF, p_sleep(6, 0.5))
    log = log_of(decisions)
    assert [(s.job_id, s.nodes) for s in decisions.starts] == [("j1", (0, 1))]
    assert log["spare_planning_point"] is True and log["gate_open"] is True
    assert log["target_x"] == 2
    assert decisions.switch_on == [2, 3] and decisions.switch_off == []
    assert 0.0 < log["pi_a"] <= 1.0
    assert 0.0 < log["horizon"] <= 3600.0
    # the neighbours x = 1 and x = 3: x = 1 waits 30 s more, x = 3 pays one more wake
    below = (log["target_below_j"], log["target_below_w"], log["target_below_e"])
    above = (log["target_above_j"], log["target_above_w"], log["target_above_e"])
    assert below[0] > log["target_j"] and above[0] > log["target_j"]
    assert below[1] > log["target_w"] and above[1] == pytest.approx(log["target_w"])
    assert above[2] > log["target_e"] > below[2]


def test_completion_rate_counts_jobs_started_now() -> None:
    """Eq. 20-23 on the state above: j1 is active once started, R_j1 = 1000 (cold start).

    lambda = 1/3600 (m_A = 1/lambda0, one arrival), lambda_C = 1/1000, so
    pi_A = (1/3600) / (1/3600 + 1/1000) = 0.2174.
    """
    state, memory = spare_state()
    decisions, _ = decide_icon(state, memory, NF, p_sleep(6, 0.5))
    lam = 1.0 / 3600.0
    assert log_of(decisions)["pi_a"] == pytest.approx(lam / (lam + 1.0 / 1000.0))


def logs_of_every_kind():
    state, memory = spare_state()
    yield "spare", state, decide_icon(state, memory, NF, p_sleep(6, 0.5))[0]
    state = stale_state()
    yield "stale", state, decide_icon(state, recent_memory(4, NF, LAST_ARRIVAL), NF,
                                      p_sleep(4))[0]
    state = fallback_state()
    params = IconParams()
    yield "fallback", state, decide_icon(state, IconMemory.initial(4, params), params,
                                         p_sleep(4))[0]
    yield "waiting", state, decide_icon(state, IconMemory.initial(4, NF), NF, p_sleep(4))[0]


def test_decision_log_fields_are_consistent_with_the_decisions() -> None:
    """SPEC 7: the log counts match the decisions, ICON rows carry the gate and point,
    spare rows carry pi_A, H, x* and J = alpha W + beta E; every log builds a DecisionRow."""
    seen = set()
    for kind, state, decisions in logs_of_every_kind():
        log = log_of(decisions)
        seen.add(log["mode"])
        assert set(log) <= set(COLUMNS) - {"time", "trigger", "wall_us"}, kind
        assert log["starts"] == len(decisions.starts), kind
        assert log["wakes"] == len(decisions.switch_on), kind
        assert log["shutdowns"] == len(decisions.switch_off), kind
        for series in ("arrival", "service"):
            assert {f"{series}_{s}" for s in ("n", "mean", "cv", "lag1", "ks", "ks_limit",
                                              "accepted")} <= set(log), kind
        assert log["lam"] > 0.0 and log["mu"] >= 0.0
        if log["mode"] == Mode.ICON:
            assert isinstance(log["spare_planning_point"], bool)
            assert isinstance(log["gate_open"], bool)
        if "target_x" in log:
            assert log["spare_planning_point"] and log["gate_open"]
            assert log["target_j"] == pytest.approx(
                NF.alpha * log["target_w"] + NF.beta * log["target_e"])
            assert 0.0 <= log["pi_a"] <= 1.0 and 0.0 < log["horizon"] <= NF.h_max
        row = DecisionRow(**log, time=state.now, trigger=state.trigger, wall_us=1.0)
        assert row.mode == log["mode"] and row.wakes == len(decisions.switch_on)
    assert seen == {Mode.ICON, Mode.FALLBACK}


def test_the_log_records_the_estimator_state() -> None:
    """Arrivals of 2 then 4 nodes, rho_R = 0.1 (eq. 19): w_2 = 0.9, w_4 = 0.1, so the
    pmf's mean is 2 x 0.9 + 4 x 0.1 = 2.2 nodes and its largest size 4. One completion of
    50 s for a 100-s request: the log ratio's mean m_Y = log 0.5 (App. A, first sample)
    and sigma_Y = sigma_min = 0.25 (one sample has no spread). lambda = 1 / m_A with
    m_A = 0.2 x 30 + 0.8 x 3600 (eq. 17, one 30-s gap after lambda_0 = 1/3600)."""
    params = IconParams()
    arrivals = [job("a", 2, 100.0, submit=0.0), job("b", 4, 100.0, submit=30.0, order=1)]
    done = CompletedJob("c", (0,), runtime_s=50.0, req_time_s=100.0, end_s=30.0)
    state = make_view([idle()] * 4, arrivals, now=30.0, arrivals=arrivals, completions=[done])
    decisions, _ = decide_icon(state, IconMemory.initial(4, params), params, p_sleep(4))
    log = log_of(decisions)
    assert log["size_mean"] == pytest.approx(2.2) and log["size_max"] == 4
    assert log["ratio_mean"] == pytest.approx(math.log(0.5))
    assert log["ratio_sigma"] == 0.25
    assert log["lam"] == pytest.approx(1.0 / (0.2 * 30.0 + 0.8 * 3600.0))
    # SNF starts a (2 nodes) on the 4 idle nodes; b (4 nodes) no longer fits and is planned
    assert log["starts"] == 1 and log["planned_jobs"] == 1
