"""Batsim semantics beyond the recordings: walltime kills, zero-flop jobs, energy totals."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from procset import ProcSet

from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine, simulate_in_process
from snficon.drivers.transcript import Transcript
from tests.conftest import FCFS_SCHEDULER

from .conftest import TEST_MODEL, write_workload
from .schedulers_for_tests import OneShot


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_walltime_reached_kills_the_job(platform4: Path, tmp_path: Path):
    profiles = {"d100": {"type": "delay", "delay": 100.0}}
    workload = write_workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 2, "profile": "d100", "walltime": 30}], profiles)

    def start(bs, job):
        job.allocation = ProcSet((0, 1))
        bs.execute_jobs([job])

    engine = build_engine(platform4, [workload])
    transcript = Transcript()
    run_in_process(engine, OneShot(start), transcript)
    engine.outputs().write(tmp_path / "out")
    completed = [e for _, m in transcript.entries for e in m["events"]
                 if e["type"] == "JOB_COMPLETED"]
    assert completed[0]["timestamp"] == 30.0
    assert completed[0]["data"]["job_state"] == "COMPLETED_WALLTIME_REACHED"
    row = _rows(tmp_path / "out_jobs.csv")[0]
    assert (row["final_state"], row["success"], row["execution_time"]) == (
        "COMPLETED_WALLTIME_REACHED", "0", "30.000000")
    # Two idle-powered nodes for 30 s (a delay job draws the idle wattage).
    assert float(row["consumed_energy"]) == pytest.approx(2 * TEST_MODEL.idle_w * 30)
    assert _rows(tmp_path / "out_schedule.csv")[0]["nb_jobs_killed"] == "1"


def test_energy_total_matches_power_times_time(platform4: Path, tmp_path: Path):
    """One busy job and one switch-off, worked out by hand from the model's wattages."""
    profiles = {"c20": {"type": "parallel_homogeneous", "cpu": 20e9, "com": 0}}
    workload = write_workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 1, "profile": "c20"}], profiles)

    def start_and_sleep(bs, job):
        job.allocation = ProcSet(0)
        bs.execute_jobs([job])
        bs.set_resource_state(ProcSet(3), 1)

    engine = build_engine(platform4, [workload])
    run_in_process(engine, OneShot(start_and_sleep))
    engine.outputs().write(tmp_path / "out")
    energy = _rows(tmp_path / "out_consumed_energy.csv")
    m = TEST_MODEL
    # Ends at t=20 (job end; the switch ended at t=8).
    expected = 20 * m.busy_w + 2 * 20 * m.idle_w + 8 * m.off_w + 12 * m.sleep_w
    assert energy[-1]["time"] == "20.000000"
    assert float(energy[-1]["energy"]) == pytest.approx(expected, rel=1e-12)
    states = _rows(tmp_path / "out_machine_states.csv")
    assert states[-1] == {"time": "20", "nb_sleeping": "1", "nb_switching_on": "0",
                          "nb_switching_off": "0", "nb_idle": "3", "nb_computing": "0"}


def test_in_process_and_zmq_agree_on_the_fcfs_policy(platform4: Path, tmp_path: Path):
    from snficon.conformance import compare_outputs, compare_transcripts
    from snficon.drivers.session import simulate_with_pybatsim

    jobs = [{"id": i, "subtime": 7.5 * i, "res": 1 + i % 4} for i in range(1, 25)]
    workload = write_workload(tmp_path / "w.json", jobs)
    options = {"timeout": 20}
    a = simulate_in_process(platform4, [workload], FCFS_SCHEDULER, options,
                            export_prefix=tmp_path / "a", record=True)
    b = simulate_with_pybatsim(platform4, [workload], FCFS_SCHEDULER, options,
                               export_prefix=tmp_path / "b", record=True)
    assert a.transcript is not None and b.transcript is not None
    assert len(a.transcript.entries) > 40
    assert compare_transcripts(a.transcript, b.transcript) == []
    assert compare_outputs(tmp_path / "a", tmp_path / "b") == []


def test_an_answer_later_than_the_clock_advances_it(platform4: Path, tmp_path: Path):
    """Batsim's request-reply actor sleeps until an answer's timestamps
    (``send_message_at_time``): a scheduler that consumes 5 s starts its job 5 s later."""
    workload = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 10, "res": 1}])

    def think_then_start(bs, job):
        bs.consume_time(5)
        job.allocation = ProcSet(0)
        bs.execute_jobs([job])

    engine = build_engine(platform4, [workload])
    transcript = Transcript()
    run_in_process(engine, OneShot(think_then_start), transcript)
    engine.outputs().write(tmp_path / "out")
    row = _rows(tmp_path / "out_jobs.csv")[0]
    assert (row["starting_time"], row["finish_time"]) == ("15.000000", "25.000000")
    answer = transcript.entries[3][1]
    assert answer["now"] == 15.0 and answer["events"][0]["timestamp"] == 15.0
