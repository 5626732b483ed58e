"""SNF-ICON end to end: whole simulations through the pybatsim adapter.

- The first 400 jobs of the markovian trace on AOBA 64 run in-process and
  against a real pybatsim process over ZeroMQ: same messages, same output
  files, same decision log (but for the wall time of each decision); the log
  has ICON rows, fallback rows and spare-planning points, and its per-row
  counts add up to the decisions seen in the transcript.
- The four variants (SNF-ICON, NG, NF, NGNF) on a small random workload: NF
  never falls back, NG never closes the gate.
- Hypothesis: random small platforms and workloads (the cases of
  ``test_invariants``) under a random variant and gate window: the run ends,
  no job starts on a node that is not idle, no node is switched while busy or
  switching, SNF leaves no fitting job waiting, and every job ends.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from snficon.analysis.decision_log import read_decision_log
from snficon.conformance import compare_outputs, compare_transcripts
from snficon.drivers.session import simulate_in_process, simulate_with_pybatsim
from snficon.platform.generate import (
    NodeModel,
    render_heterogeneous_platform,
    render_platform,
    write_platform,
)

from ..properties.cases import preserved_interpreter_state
from .test_invariants import INVARIANT_SETTINGS, SLEEP_PSTATE, TranscriptChecker, cases

REPO_ROOT = Path(__file__).resolve().parents[2]
AOBA_64 = REPO_ROOT / "platforms" / "aoba-64.xml"
VARIANTS = ("snficon", "snficon-ng", "snficon-nf", "snficon-ngnf")


def decision_counts(entries: list[tuple[str, dict[str, Any]]]) -> Counter[str]:
    """Starts, switch-ons and switch-offs (in nodes) the scheduler sent."""
    counts: Counter[str] = Counter()
    for direction, message in entries:
        if direction != "sched->sim":
            continue
        for ev in message["events"]:
            data = ev.get("data", {})
            if ev["type"] == "EXECUTE_JOB":
                counts["starts"] += 1
            elif ev["type"] == "SET_RESOURCE_STATE":
                kind = "shutdowns" if data["state"] == SLEEP_PSTATE else "wakes"
                counts[kind] += len(ProcSet.from_str(data["resources"]))
    return counts


def completed_jobs(entries: list[tuple[str, dict[str, Any]]]) -> set[str]:
    return {ev["data"]["job_id"] for direction, message in entries if direction == "sim->sched"
            for ev in message["events"] if ev["type"] == "JOB_COMPLETED"}


def assert_log_matches_transcript(rows: list[dict[str, Any]],
                                  entries: list[tuple[str, dict[str, Any]]]) -> None:
    sent = decision_counts(entries)
    for column in ("starts", "wakes", "shutdowns"):
        assert sum(row[column] for row in rows) == sent[column], column


# ---------------------------------------------------------------------- markovian, 400 jobs

@pytest.fixture(scope="module")
def markovian_400(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 400 jobs of ``workloads/markovian-3000.json`` (and their profiles)."""
    document = json.loads((REPO_ROOT / "workloads" / "markovian-3000.json").read_text())
    jobs = document["jobs"][:400]
    names = {job["profile"] for job in jobs}
    document.update(jobs=jobs, profiles={k: v for k, v in document["profiles"].items()
                                         if k in names})
    path = tmp_path_factory.mktemp("markovian") / "markovian-400.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_markovian_400_inprocess_and_zmq_agree(markovian_400: Path, tmp_path: Path) -> None:
    """SNF-ICON (Table I defaults) on AOBA 64, in-process and over ZeroMQ.

    The run completes all 400 jobs; the screen accepts the Markovian workload part
    of the time (ICON rows and fallback rows), ICON reaches spare-planning points
    with the gate open; both runs send the same messages, write the same files and
    the same decision log, wall times aside.
    """
    local_log, remote_log = tmp_path / "local_decisions.csv", tmp_path / "remote_decisions.csv"
    with preserved_interpreter_state():
        local = simulate_in_process(AOBA_64, [markovian_400], "snficon",
                                    {"platform": str(AOBA_64), "decisions": str(local_log)},
                                    export_prefix=tmp_path / "local", record=True)
    remote = simulate_with_pybatsim(AOBA_64, [markovian_400], "snficon",
                                    {"platform": str(AOBA_64), "decisions": str(remote_log)},
                                    export_prefix=tmp_path / "remote", record=True,
                                    answer_timeout_s=120)
    assert local.engine.finished
    assert local.transcript is not None and remote.transcript is not None
    assert len(completed_jobs(local.transcript.entries)) == 400

    rows = read_decision_log(local_log)
    modes = Counter(row["mode"] for row in rows)
    assert modes["icon"] > 0 and modes["fallback"] > 0 and set(modes) == {"icon", "fallback"}
    icon = [row for row in rows if row["mode"] == "icon"]
    spare = [row for row in icon if row["spare_planning_point"] and row["gate_open"]]
    assert spare and all(row["target_x"] is not None for row in spare)
    assert all(row["target_x"] is None for row in rows if row not in spare)
    assert all(row["spare_planning_point"] is None for row in rows if row["mode"] == "fallback")
    assert all(row["trigger"] in ("initial", "arrival", "completion")
               for row in icon if row["spare_planning_point"])
    assert rows[0]["trigger"] == "initial" and rows[0]["mode"] == "fallback"
    assert_log_matches_transcript(rows, local.transcript.entries)

    assert compare_transcripts(local.transcript, remote.transcript) == []
    assert compare_outputs(tmp_path / "local", tmp_path / "remote") == []
    remote_rows = read_decision_log(remote_log)
    for row in rows + remote_rows:
        assert row.pop("wall_us") >= 0.0
    assert remote_rows == rows


# ---------------------------------------------------------------------- the four variants

SMALL_MODEL = NodeModel("small", busy_w=200.0, idle_w=100.0, sleep_w=10.0, off_s=5.0,
                        off_w=50.0, on_s=20.0, on_w=150.0)


def random_workload(path: Path, nb_nodes: int, nb_jobs: int, seed: int) -> Path:
    """Exponential gaps (mean 40 s) and runtimes (mean 150 s), requests 1-3x the runtime."""
    rng = random.Random(seed)
    jobs, profiles, now = [], {}, 0.0
    for index in range(nb_jobs):
        now += rng.expovariate(1 / 40.0)
        runtime = round(rng.expovariate(1 / 150.0), 3) + 1.0
        profiles[f"d{runtime:g}"] = {"type": "delay", "delay": runtime}
        jobs.append({"id": index, "subtime": round(now, 3),
                     "res": min(nb_nodes, 1 + int(rng.expovariate(1 / 2.0))),
                     "profile": f"d{runtime:g}", "walltime": -1,
                     "reqtime": round(runtime * rng.uniform(1.0, 3.0), 3)})
    path.write_text(json.dumps({"nb_res": nb_nodes, "jobs": jobs, "profiles": profiles}),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def variant_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each variant on 8 nodes, 60 jobs, timeout 300 s, gate window T_A^max = 120 s."""
    folder = tmp_path_factory.mktemp("variants")
    platform = write_platform(folder / "p8.xml", render_platform(SMALL_MODEL, 8))
    workload = random_workload(folder / "w60.json", 8, 60, seed=7)
    runs = {}
    for policy in VARIANTS:
        log = folder / f"{policy}.csv"
        with preserved_interpreter_state():
            result = simulate_in_process(platform, [workload], policy,
                                         {"platform": str(platform), "decisions": str(log),
                                          "timeout": 300, "t_a_max": 120}, record=True)
        runs[policy] = (result, read_decision_log(log))
    return runs


@pytest.mark.parametrize("policy", VARIANTS)
def test_variant_runs_every_job(policy: str, variant_runs: dict[str, Any]) -> None:
    """Each variant ends the simulation with the 60 jobs completed, and its decision
    log accounts for every start, wake and shutdown it sent."""
    result, rows = variant_runs[policy]
    assert result.engine.finished and result.transcript is not None
    entries = result.transcript.entries
    assert len(completed_jobs(entries)) == 60
    assert_log_matches_transcript(rows, entries)
    checker = RelaxedChecker(8, 300.0, "snf").run(entries)
    checker.finish()


def test_variants_differ_as_the_paper_says(variant_runs: dict[str, Any]) -> None:
    """Section VI-A: NF forces the ICON path (never "fallback"); NG keeps the gate
    open at every ICON row. The full method starts in fallback (no sample yet),
    reaches ICON and, with T_A^max = 120 s, meets a closed gate at times."""
    modes = {policy: Counter(row["mode"] for row in rows)
             for policy, (_, rows) in variant_runs.items()}
    for policy in ("snficon-nf", "snficon-ngnf"):
        assert modes[policy]["fallback"] == 0 and modes[policy]["icon"] > 0, policy
    for policy in ("snficon", "snficon-ng"):
        assert modes[policy]["fallback"] > 0 and modes[policy]["icon"] > 0, policy
    for policy in ("snficon-ng", "snficon-ngnf"):
        rows = variant_runs[policy][1]
        assert all(row["gate_open"] is True for row in rows if row["mode"] == "icon"), policy
    for policy in ("snficon", "snficon-nf"):
        rows = variant_runs[policy][1]
        gates = Counter(row["gate_open"] for row in rows if row["mode"] == "icon")
        assert gates[True] > 0 and gates[False] > 0, policy
    first = variant_runs["snficon-nf"][1][0]
    assert (first["trigger"], first["mode"], first["gate_open"]) == ("initial", "icon", False)


# ---------------------------------------------------------------------- hypothesis invariants

class RelaxedChecker(TranscriptChecker):
    """The baselines' checker without their power rules: ICON wakes spares with an empty
    queue and switches off nodes a stale completion released before their timer."""

    def switched(self, nodes: list[int], pstate: str, now: float, where: str) -> None:
        for node in nodes:
            if pstate == SLEEP_PSTATE:
                assert self.state[node] == "idle", f"{where}: switch-off of {self.state[node]}"
                self.state[node] = "switching_off"
            else:
                assert pstate == "0", where
                assert self.state[node] == "sleeping", f"{where}: switch-on of {self.state[node]}"
                self.state[node] = "switching_on"


def run_icon_case(case: dict[str, Any], policy: str, t_a_max: float) -> TranscriptChecker:
    groups = case["groups"]
    with tempfile.TemporaryDirectory(prefix="snficon-icon-") as folder:
        xml = render_platform(groups[0][1], groups[0][0]) if len(groups) == 1 \
            else render_heterogeneous_platform(groups)
        platform = write_platform(Path(folder) / "platform.xml", xml)
        workload = Path(folder) / "workload.json"
        workload.write_text(json.dumps(case["workload"]), encoding="utf-8")
        log = Path(folder) / "decisions.csv"
        with preserved_interpreter_state():
            result = simulate_in_process(platform, [workload], policy,
                                         {"platform": str(platform), "decisions": str(log),
                                          "timeout": case["timeout"], "t_a_max": t_a_max},
                                         record=True)
        rows = read_decision_log(log)
    assert result.engine.finished
    assert result.transcript is not None
    entries = result.transcript.entries
    checker = RelaxedChecker(case["nb_nodes"], case["timeout"], "snf").run(entries)
    checker.finish()
    assert_log_matches_transcript(rows, entries)
    for mode in {row["mode"] for row in rows}:
        event(f"mode {mode}")
    if any(row["target_x"] is not None for row in rows):
        event("spare target chosen")
    return checker


@settings(INVARIANT_SETTINGS, max_examples=20)
@given(case=cases(), policy=st.sampled_from(VARIANTS),
       t_a_max=st.sampled_from([0.0, 60.0, 43200.0]))
def test_icon_invariants(case: dict[str, Any], policy: str, t_a_max: float) -> None:
    run_icon_case(case, policy, t_a_max)
