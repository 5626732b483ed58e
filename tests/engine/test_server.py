"""Batsim's server actor (``server``): the events of one instant go out in one message.

Driven through the engine's message loop, with a scheduler that rejects every job it
is told of, so that the run ends as soon as the workload is exhausted.
"""

from __future__ import annotations

from pathlib import Path

from snficon.drivers.session import build_engine

from .conftest import write_workload


def reject_all(message: dict) -> dict:
    """An answer rejecting the jobs submitted in ``message``, at its ``now``."""
    now = message["now"]
    return {"now": now, "events": [
        {"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": event["data"]["job_id"]}}
        for event in message["events"] if event["type"] == "JOB_SUBMITTED"]}


def test_submissions_of_one_instant_share_a_message_and_the_farewell_follows(
        platform4: Path, tmp_path: Path):
    """Jobs 1 and 2 at t = 0, job 3 at t = 5. The first message is SIMULATION_BEGINS
    alone; jobs 1 and 2 reach the server before it sends again: one message. At 5, job 3
    is sent as soon as it arrives (the mailbox is empty then); the submitter's farewell
    comes after it and makes its own message (NOTIFY no_more_static_job_to_submit). With
    every job rejected, nothing is left: SIMULATION_ENDS, and the loop ends."""
    workload = write_workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 1}, {"id": 2, "subtime": 0, "res": 1},
        {"id": 3, "subtime": 5, "res": 1}])
    engine = build_engine(platform4, [workload])
    seen = []
    message = engine.first_message()
    while message is not None:
        seen.append((message["now"], [(e["type"], e["data"].get("job_id", e["data"].get("type")))
                                      for e in message["events"]]))
        message = engine.answer(reject_all(message))
    assert seen == [
        (0.0, [("SIMULATION_BEGINS", None)]),
        (0.0, [("JOB_SUBMITTED", "w0!1"), ("JOB_SUBMITTED", "w0!2")]),
        (5.0, [("JOB_SUBMITTED", "w0!3")]),
        (5.0, [("NOTIFY", "no_more_static_job_to_submit")]),
        (5.0, [("SIMULATION_ENDS", None)]),
    ]
    assert engine.finished
