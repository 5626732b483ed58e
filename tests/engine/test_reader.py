"""Batsim's request-reply actor (``reader``): an answer's timestamps set the clock."""

from __future__ import annotations

from pathlib import Path

from procset import ProcSet

from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine
from snficon.drivers.transcript import Transcript

from .conftest import read_rows, write_workload
from .schedulers_for_tests import OneShot


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
    row = read_rows(tmp_path / "out_jobs.csv")[0]
    assert (row["starting_time"], row["finish_time"]) == ("15.000000", "25.000000")
    answer = transcript.entries[3][1]
    assert answer["now"] == 15.0 and answer["events"][0]["timestamp"] == 15.0
