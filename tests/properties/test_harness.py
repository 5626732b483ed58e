"""The property-test harness itself: the random scheduler and the checks are not vacuous.

Also checks a request whose machines switch at different speeds
(:func:`test_mixed_transition_durations_are_timed_per_node`).
"""

from __future__ import annotations

import csv
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from snficon.errors import InputError
from snficon.platform.generate import NodeModel
from snficon.registry import load_scheduler

from .cases import SCHEDULER, Case, preserved_interpreter_state, run_case
from .checks import check_all, check_energy, read_outputs
from .replay import Replay, ReplayError

FAST = NodeModel("fast", busy_w=200, idle_w=100, sleep_w=1, off_s=10, off_w=50, on_s=5, on_w=70)
SLOW = NodeModel("slow", busy_w=300, idle_w=120, sleep_w=2, off_s=20, off_w=40, on_s=15,
                 on_w=60)


def small_case(seed: int = 0) -> Case:
    """Two nodes of different models; one two-node job after a pause."""
    return Case(groups=((1, FAST), (1, SLOW)), padded_names=True,
                profiles={"d": {"type": "delay", "delay": 30.0},
                          "c": {"type": "parallel_homogeneous", "cpu": 0.0, "com": 0.0}},
                jobs=({"id": 0, "subtime": 50.0, "res": 2, "profile": "d", "walltime": -1},
                      {"id": 1, "subtime": 50.0, "res": 1, "profile": "c", "walltime": -1},
                      {"id": 2, "subtime": 0.0, "res": 3, "profile": "d", "walltime": -1}),
                seed=seed)


def uniform_case(seed: int) -> Case:
    """Like :func:`small_case` with both nodes' transitions lasting the same time."""
    slow = NodeModel("slow", busy_w=300, idle_w=120, sleep_w=2, off_s=FAST.off_s, off_w=40,
                     on_s=FAST.on_s, on_w=60)
    case = small_case(seed)
    return Case(((1, FAST), (1, slow)), True, case.profiles, case.jobs, seed)


@pytest.fixture
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="snficon-harness-") as name:
        yield Path(name)


def test_randomsched_loads_from_its_path() -> None:
    with preserved_interpreter_state():
        scheduler = load_scheduler(str(SCHEDULER), {"seed": 3})
    assert type(scheduler).__name__ == "Randomsched"


def test_randomsched_refuses_unknown_options() -> None:
    with preserved_interpreter_state(), pytest.raises((ValueError, InputError)):
        load_scheduler(str(SCHEDULER), {"sede": 3})


def test_same_seed_same_run_other_seed_other_run(folder: Path) -> None:
    runs = []
    for index, seed in enumerate((7, 7, 8)):
        (folder / str(index)).mkdir()
        runs.append(run_case(uniform_case(seed), folder / str(index)).transcript)
    texts = [json.dumps([m for _, m in run.entries[1:]]) for run in runs if run]
    assert texts[0] == texts[1]
    assert texts[0] != texts[2]


def test_checks_pass_on_an_honest_run(folder: Path) -> None:
    case = uniform_case(5)
    result = run_case(case, folder)
    assert result.transcript is not None
    check_all(case, Replay(case, result.transcript.entries), read_outputs(folder / "out"))


def test_replay_catches_a_job_started_on_a_busy_node(folder: Path) -> None:
    case = uniform_case(5)
    result = run_case(case, folder)
    assert result.transcript is not None
    entries = result.transcript.entries
    message = next(m for d, m in entries if d == "sched->sim" and any(
        e["type"] == "EXECUTE_JOB" and e["data"]["job_id"] == "w0!0" for e in m["events"]))
    # Pretend the scheduler also put job 1 on node 0, which job 0 now occupies.
    message["events"].append({"timestamp": message["now"], "type": "EXECUTE_JOB",
                              "data": {"job_id": "w0!1", "alloc": "0"}})
    with pytest.raises(ReplayError, match="not idle|started twice"):
        Replay(case, entries)


def test_energy_check_catches_a_wrong_total(folder: Path) -> None:
    case = uniform_case(5)
    result = run_case(case, folder)
    assert result.transcript is not None
    replay = Replay(case, result.transcript.entries)
    rows = read_outputs(folder / "out")["consumed_energy"]
    rows[-1]["energy"] = str(float(rows[-1]["energy"]) * (1 + 1e-5) + 1)
    with pytest.raises(ReplayError, match="energy"):
        check_energy(replay, rows)


def _mixed_request_seen(folder: Path) -> bool:
    with open(folder / "out_transcript.jsonl", encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle]
    return any(e["type"] == "SET_RESOURCE_STATE" and e["data"]["resources"] == "0-1"
               for item in lines if item["dir"] == "sched->sim" for e in item["msg"]["events"])


def test_mixed_transition_durations_are_timed_per_node(folder: Path) -> None:
    """One SET_RESOURCE_STATE over machines with different transition times: as in
    Batsim (one actor per machine, ``src/pstate.cpp``), each machine reaches its
    target after its own 1/speed; only RESOURCE_STATE_CHANGED waits for the last."""
    case = small_case(0)
    result = run_case(case, folder)
    assert _mixed_request_seen(folder), "seed 0 no longer switches nodes 0-1 together"
    assert result.transcript is not None
    outputs = read_outputs(folder / "out")
    check_all(case, Replay(case, result.transcript.entries), outputs)


def test_machine_state_rows_are_read_as_written(folder: Path) -> None:
    """Guard the CSV reading the checks rely on (header names of Batsim's files)."""
    run_case(uniform_case(5), folder)
    with open(folder / "out_machine_states.csv", newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert header == ["time", "nb_sleeping", "nb_switching_on", "nb_switching_off",
                      "nb_idle", "nb_computing"]
