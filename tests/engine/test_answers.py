"""A scheduler that breaks the protocol stops the run with a message naming the event,
and the output files still hold what happened until then (as with Batsim)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from procset import ProcSet

from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine
from snficon.errors import DeadlockError, ProtocolError

from .conftest import write_workload
from .schedulers_for_tests import Idle, OneShot


def _execute(alloc: str, job_id: str | None = None):
    def act(bs, job):
        bs._events_to_send.append({"timestamp": bs.time(), "type": "EXECUTE_JOB",
                                   "data": {"job_id": job_id or job.id, "alloc": alloc}})
    return act


def _sleep_then_execute(bs, job):
    bs.set_resource_state(ProcSet(0), 1)
    job.allocation = ProcSet(0)
    bs.execute_jobs([job])


def _switch_busy(bs, job):
    job.allocation = ProcSet(0)
    bs.execute_jobs([job])
    bs.set_resource_state(ProcSet(0), 1)


def _call_now(bs, job):
    bs.wake_me_up_at(bs.time())


CASES = {
    "unknown job": (_execute("0", "w0!404"), ProtocolError, "unknown job 'w0!404'"),
    "job on sleeping node": (_sleep_then_execute, ProtocolError,
                             "machine 0 which is switching_off"),
    "switch of busy node": (_switch_busy, ProtocolError, "machine 0 is computing"),
    "call in the past": (_call_now, ProtocolError, "is not in the future"),
    "allocation too small": (_execute("0"), ProtocolError, "asks for 2 machine(s)"),
    "machine outside platform": (_execute("3-4"), ProtocolError, "names machine 4"),
    "malformed allocation": (_execute("zero"), ProtocolError, "not a resource set"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_protocol_error_names_the_event(platform4: Path, tmp_path: Path, name: str):
    act, error, text = CASES[name]
    workload = write_workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 1}, {"id": 2, "subtime": 5, "res": 2},
        {"id": 3, "subtime": 20, "res": 1}])
    if name == "allocation too small":
        workload = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 2}])
    engine = build_engine(platform4, [workload])
    with pytest.raises(error) as caught:
        run_in_process(engine, OneShot(act))
    assert text in str(caught.value)
    assert "at t=" in str(caught.value)
    # What happened before the error is still written out.
    files = engine.outputs().write(tmp_path / "out")
    assert {f.name for f in files} >= {"out_jobs.csv", "out_schedule.csv",
                                       "out_consumed_energy.csv"}


def test_outputs_hold_the_events_before_the_error(platform4: Path, tmp_path: Path):
    workload = write_workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 1}, {"id": 2, "subtime": 30, "res": 1}])

    def second_job_on_missing_node(bs, job):
        job.allocation = ProcSet(0)
        bs.execute_jobs([job])

    class Breaks(OneShot):
        def onJobSubmission(self, job):  # noqa: N802
            if self.done:
                job.allocation = ProcSet(9)
                self.bs.execute_jobs([job])
            else:
                super().onJobSubmission(job)

    engine = build_engine(platform4, [workload])
    with pytest.raises(ProtocolError, match="names machine 9"):
        run_in_process(engine, Breaks(second_job_on_missing_node))
    engine.outputs().write(tmp_path / "out")
    with open(tmp_path / "out_jobs.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["job_id"], r["final_state"], r["finish_time"]) for r in rows] == [
        ("1", "COMPLETED_SUCCESSFULLY", "10.000000")]


def test_scheduler_that_never_decides_is_a_deadlock(platform4: Path, tmp_path: Path):
    workload = write_workload(tmp_path / "w.json", [{"id": 7, "subtime": 0, "res": 1}])
    engine = build_engine(platform4, [workload])
    with pytest.raises(DeadlockError, match="w0!7"):
        run_in_process(engine, Idle({}))


def test_switch_without_energy_model_is_refused(platform4: Path, tmp_path: Path):
    workload = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1}])
    engine = build_engine(platform4, [workload], energy=False)
    with pytest.raises(ProtocolError, match="run with -E"):
        run_in_process(engine, OneShot(lambda bs, job: bs.set_resource_state(ProcSet(1), 1)))
