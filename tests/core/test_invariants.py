"""End-to-end invariants of ``snfIpm`` and ``fcfsbIpm``, checked from the protocol transcript.

Random small platforms (1-8 nodes, short transitions, possibly two kinds of
node) and workloads (oversized jobs, simultaneous submissions, jobs overrunning
their request, walltime kills) are run in-process through the pybatsim
adapter. :class:`TranscriptChecker` replays the messages and checks every
decision against the node states it implies:

- the run reaches SIMULATION_ENDS (the engine raises a ProtocolError on a
  switch of a busy or switching node, so completing is itself a check);
- a job starts only on idle nodes, on exactly the nodes it requests;
- a node is switched off only when idle for at least the IPM timeout, and on
  only when asleep and some job is waiting (the baselines wake for plans only);
- so a node woken for a plan either runs a job, or is switched off no earlier
  than the timeout after its switch-on ended, or the simulation ends first;
- after each answer: SNF leaves no waiting job that fits on the idle nodes,
  FCFS leaves a head that does not fit; with an empty queue no idle node is
  past its timeout; a callback is pending no later than the next timer expiry;
- every job completes, or is rejected exactly when larger than the platform.

The same checker runs on the ZeroMQ comparison of the 300-job markovian trace.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from snficon.conformance import compare_outputs, compare_transcripts
from snficon.drivers.session import simulate_in_process, simulate_with_pybatsim
from snficon.platform.generate import (
    NodeModel,
    render_heterogeneous_platform,
    render_platform,
    write_platform,
)

from ..properties.cases import preserved_interpreter_state

REPO_ROOT = Path(__file__).resolve().parents[2]
SLEEP_PSTATE = "1"  # the generator's sleep_pstates="1:2:3"
INVARIANT_SETTINGS = settings(
    deadline=None, derandomize=True, database=None, print_blob=False, max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class TranscriptChecker:
    """Scheduler-side node and job states rebuilt from a transcript, with the checks above."""

    def __init__(self, nb_nodes: int, timeout: float, order: str) -> None:
        self.nb_nodes, self.timeout, self.order = nb_nodes, timeout, order
        self.state = ["idle"] * nb_nodes
        self.idle_since = [0.0] * nb_nodes
        self.queue: dict[str, tuple[float, int, int]] = {}  # id -> (submit, arrival, res)
        self.arrivals = 0
        self.completed: set[str] = set()
        self.rejected: set[str] = set()
        self.submitted: dict[str, int] = {}
        self.pending_calls: set[float] = set()
        self.woken: set[int] = set()
        self.outcomes: Counter[str] = Counter()
        self.ended = False

    def run(self, entries: list[tuple[str, dict[str, Any]]]) -> TranscriptChecker:
        for index, (direction, message) in enumerate(entries):
            where = f"message {index} at t={message['now']}"
            if direction == "sim->sched":
                self.received(message, where)
            else:
                self.answered(message, where)
        return self

    # ------------------------------------------------------------------ simulator side

    def received(self, message: dict[str, Any], where: str) -> None:
        now = message["now"]
        self.pending_calls = {t for t in self.pending_calls if t > now}
        for ev in message["events"]:
            data = ev.get("data", {})
            if ev["type"] == "JOB_SUBMITTED":
                res = int(data["job"]["res"])
                self.queue[data["job_id"]] = (float(data["job"]["subtime"]), self.arrivals, res)
                self.submitted[data["job_id"]] = res
                self.arrivals += 1
            elif ev["type"] == "JOB_COMPLETED":
                self.completed.add(data["job_id"])
                for node in ProcSet.from_str(data["alloc"]):
                    assert self.state[node] == "computing", f"{where}: node {node} not computing"
                    self.state[node], self.idle_since[node] = "idle", now
            elif ev["type"] == "RESOURCE_STATE_CHANGED":
                for node in ProcSet.from_str(data["resources"]):
                    if data["state"] == "0":
                        assert self.state[node] == "switching_on", where
                        self.state[node], self.idle_since[node] = "idle", now
                        self.woken.add(node)
                    else:
                        assert self.state[node] == "switching_off", where
                        self.state[node] = "sleeping"
            elif ev["type"] == "SIMULATION_ENDS":
                self.ended = True
                self.outcomes["end"] += len(self.woken)
                self.woken.clear()

    # ------------------------------------------------------------------ scheduler side

    def answered(self, message: dict[str, Any], where: str) -> None:
        now = message["now"]
        for ev in message["events"]:
            data = ev.get("data", {})
            if ev["type"] == "EXECUTE_JOB":
                job_id = data["job_id"]
                nodes = list(ProcSet.from_str(data["alloc"]))
                assert job_id in self.queue, f"{where}: {job_id} is not waiting"
                assert len(nodes) == self.queue.pop(job_id)[2], f"{where}: {job_id} size"
                for node in nodes:
                    assert self.state[node] == "idle", \
                        f"{where}: {job_id} starts on node {node}, {self.state[node]}"
                    self.state[node] = "computing"
                    if node in self.woken:
                        self.woken.discard(node)
                        self.outcomes["job"] += 1
            elif ev["type"] == "REJECT_JOB":
                job_id = data["job_id"]
                assert self.queue.pop(job_id)[2] > self.nb_nodes, f"{where}: rejects {job_id}"
                self.rejected.add(job_id)
            elif ev["type"] == "SET_RESOURCE_STATE":
                self.switched(list(ProcSet.from_str(data["resources"])), data["state"], now,
                              where)
            elif ev["type"] == "CALL_ME_LATER":
                assert data["timestamp"] > now, where
                self.pending_calls.add(data["timestamp"])
        if not self.ended:
            self.after_answer(now, where)

    def switched(self, nodes: list[int], pstate: str, now: float, where: str) -> None:
        for node in nodes:
            if pstate == SLEEP_PSTATE:
                assert self.state[node] == "idle", f"{where}: switch-off of {self.state[node]}"
                assert self.idle_since[node] + self.timeout <= now, \
                    f"{where}: node {node} idle since {self.idle_since[node]} switched off"
                self.state[node] = "switching_off"
                if node in self.woken:
                    self.woken.discard(node)
                    self.outcomes["timeout"] += 1
            else:
                assert pstate == "0", where
                assert self.state[node] == "sleeping", f"{where}: switch-on of {self.state[node]}"
                assert self.queue, f"{where}: node {node} woken with no job waiting"
                self.state[node] = "switching_on"

    def after_answer(self, now: float, where: str) -> None:
        idle = [n for n in range(self.nb_nodes) if self.state[n] == "idle"]
        if self.queue:
            sizes = sorted(self.queue.values())
            waiting = [res for *_, res in sizes] if self.order == "snf" else [sizes[0][2]]
            assert all(res > len(idle) for res in waiting), \
                f"{where}: a waiting job fits on the {len(idle)} idle nodes"
        else:
            late = [n for n in idle if self.idle_since[n] + self.timeout <= now]
            assert not late, f"{where}: nodes {late} idle past the timeout, empty queue"
        expiries = [self.idle_since[n] + self.timeout for n in idle]
        upcoming = [t for t in expiries if t > now]
        if upcoming:
            assert self.pending_calls and min(self.pending_calls) <= min(upcoming), \
                f"{where}: no callback by the next expiry {min(upcoming)}"

    def finish(self) -> None:
        assert self.ended, "no SIMULATION_ENDS"
        assert not self.queue, f"jobs never started: {sorted(self.queue)}"
        oversized = {j for j, res in self.submitted.items() if res > self.nb_nodes}
        assert self.rejected == oversized
        assert self.completed == set(self.submitted) - oversized


# ---------------------------------------------------------------------- random cases

@st.composite
def node_models(draw: st.DrawFn) -> NodeModel:
    """An AOBA-shaped node with transitions of seconds instead of minutes."""
    return NodeModel("small", busy_w=draw(st.sampled_from([150.0, 2100.0])),
                     idle_w=draw(st.sampled_from([0.0, 50.0, 100.0, 600.0])),
                     sleep_w=draw(st.sampled_from([5.0, 60.0])),
                     off_s=draw(st.sampled_from([1.0, 4.0, 20.0])),
                     off_w=draw(st.sampled_from([50.0, 600.0])),
                     on_s=draw(st.sampled_from([2.0, 8.0, 60.0])),
                     on_w=draw(st.sampled_from([80.0, 600.0])))


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    """A platform (1-8 nodes, one or two models), a workload of 1-25 jobs and a timeout."""
    groups = [(draw(st.integers(1, 6)), draw(node_models()))]
    if draw(st.booleans()):
        groups.append((draw(st.integers(1, 2)), draw(node_models())))
    nb_nodes = sum(count for count, _ in groups)
    pool = draw(st.lists(st.integers(0, 400).map(float), min_size=1, max_size=6))
    jobs, profiles = [], {}
    for index in range(draw(st.integers(1, 25))):
        runtime = draw(st.sampled_from([1.0, 5.0, 30.0, 120.0, 400.0]))
        profiles[f"d{runtime:g}"] = {"type": "delay", "delay": runtime}
        request = runtime * draw(st.sampled_from([0.5, 1.0, 1.5, 4.0]))
        entry: dict[str, Any] = {"id": index, "subtime": draw(st.sampled_from(pool)),
                                 "res": draw(st.integers(1, nb_nodes + 1)),
                                 "profile": f"d{runtime:g}"}
        kind = draw(st.sampled_from(["reqtime", "reqtime", "killed", "walltime"]))
        entry["walltime"] = -1 if kind == "reqtime" else request
        if kind != "walltime":
            entry["reqtime"] = request
        jobs.append(entry)
    return {"groups": groups, "nb_nodes": nb_nodes, "timeout": draw(
        st.sampled_from([3.0, 20.0, 100.0, 600.0])),
        "workload": {"nb_res": nb_nodes, "jobs": jobs, "profiles": profiles}}


def run_case(case: dict[str, Any], policy: str) -> TranscriptChecker:
    groups = case["groups"]
    with tempfile.TemporaryDirectory(prefix="snficon-core-") as folder:
        xml = render_platform(groups[0][1], groups[0][0]) if len(groups) == 1 \
            else render_heterogeneous_platform(groups)
        platform = write_platform(Path(folder) / "platform.xml", xml)
        workload = Path(folder) / "workload.json"
        workload.write_text(json.dumps(case["workload"]), encoding="utf-8")
        with preserved_interpreter_state():
            result = simulate_in_process(platform, [workload], policy,
                                         {"platform": str(platform),
                                          "timeout": case["timeout"]}, record=True)
    assert result.engine.finished
    assert result.transcript is not None
    order = "snf" if policy == "snfIpm" else "fcfs"
    checker = TranscriptChecker(case["nb_nodes"], case["timeout"], order)
    checker.run(result.transcript.entries)
    checker.finish()
    for outcome, count in checker.outcomes.items():
        if count:
            event(f"woken node: {outcome}")
    return checker


@INVARIANT_SETTINGS
@given(case=cases())
def test_snf_ipm_invariants(case: dict[str, Any]) -> None:
    run_case(case, "snfIpm")


@INVARIANT_SETTINGS
@given(case=cases())
def test_fcfsb_ipm_invariants(case: dict[str, Any]) -> None:
    run_case(case, "fcfsbIpm")


def test_woken_node_left_unused_sleeps_after_its_timeout(tmp_path: Path) -> None:
    """Worked by hand (2 nodes, T_off 2 s, T_on 10 s, timeout 5 s, snfIpm).

    t=0: A (1 node, runs 32 s, asks 400 s) starts on node 0; node 1 expires at
    5 and is switched off (asleep at 7). t=30: C (1 node, 10 s) finds no idle
    node: node 0 is released at 400 by A's request, node 1 at 30 + 10 -> C is
    planned at 40 on node 1, whose wake time 30 is now: switched on. t=32: A ends
    early, C starts on the idle node 0 at once. Node 1 is idle at 40 with nothing
    to do: switched off at 45, its timeout; node 0 (idle at 42) at 47.
    """
    model = NodeModel("hand", busy_w=200, idle_w=100, sleep_w=10, off_s=2, off_w=50,
                      on_s=10, on_w=150)
    platform = write_platform(tmp_path / "p2.xml", render_platform(model, 2))
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 2, "profiles": {
        "d32": {"type": "delay", "delay": 32.0}, "d10": {"type": "delay", "delay": 10.0}},
        "jobs": [{"id": "A", "subtime": 0, "res": 1, "profile": "d32", "walltime": -1,
                  "reqtime": 400},
                 {"id": "C", "subtime": 30, "res": 1, "profile": "d10", "walltime": -1,
                  "reqtime": 10}]}))
    with preserved_interpreter_state():
        result = simulate_in_process(platform, [workload], "snfIpm",
                                     {"platform": str(platform), "timeout": 5}, record=True)
    assert result.transcript is not None
    decisions = [(m["now"], e["type"], e["data"].get("job_id") or e["data"].get("resources"),
                  e["data"].get("alloc") or e["data"].get("state"))
                 for d, m in result.transcript.entries if d == "sched->sim"
                 for e in m["events"] if e["type"] != "CALL_ME_LATER"]
    assert decisions == [
        (0.0, "EXECUTE_JOB", "w0!A", "0"),
        (5.0, "SET_RESOURCE_STATE", "1", "1"),
        (30.0, "SET_RESOURCE_STATE", "1", "0"),
        (32.0, "EXECUTE_JOB", "w0!C", "0"),
        (45.0, "SET_RESOURCE_STATE", "1", "1"),
        (47.0, "SET_RESOURCE_STATE", "0", "1"),
    ]
    checker = TranscriptChecker(2, 5.0, "snf").run(result.transcript.entries)
    checker.finish()
    assert checker.outcomes == Counter(timeout=1)


# ---------------------------------------------------------------------- in-process vs ZeroMQ

@pytest.fixture(scope="module")
def markovian_300(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 300 jobs of ``workloads/markovian-3000.json`` (and their profiles)."""
    document = json.loads((REPO_ROOT / "workloads" / "markovian-3000.json").read_text())
    jobs = document["jobs"][:300]
    names = {job["profile"] for job in jobs}
    document.update(jobs=jobs, profiles={k: v for k, v in document["profiles"].items()
                                         if k in names})
    path = tmp_path_factory.mktemp("markovian") / "markovian-300.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize("policy", ["snfIpm", "fcfsbIpm"])
def test_inprocess_and_zmq_decide_the_same(policy: str, markovian_300: Path,
                                           tmp_path: Path) -> None:
    """Same policy, same options, AOBA 64 nodes: identical messages and output files.

    The transcripts also pass the invariant checker (timeout 600 s, so that
    nodes go to sleep and are woken for plans many times).
    """
    platform = REPO_ROOT / "platforms" / "aoba-64.xml"
    options = {"platform": str(platform), "timeout": 600}
    local = simulate_in_process(platform, [markovian_300], policy, options,
                                export_prefix=tmp_path / "local", record=True)
    remote = simulate_with_pybatsim(platform, [markovian_300], policy, options,
                                    export_prefix=tmp_path / "remote", record=True,
                                    answer_timeout_s=120)
    assert local.transcript is not None and remote.transcript is not None
    assert compare_transcripts(local.transcript, remote.transcript) == []
    assert compare_outputs(tmp_path / "local", tmp_path / "remote") == []
    checker = TranscriptChecker(64, 600.0, "snf" if policy == "snfIpm" else "fcfs")
    checker.run(local.transcript.entries)
    checker.finish()
    assert checker.outcomes["job"] > 0 and checker.outcomes["timeout"] > 0
