"""``snficon run`` when the scheduler crashes or hangs: one clear line, outputs marked unfinished.

The schedulers of :mod:`.schedulers` run jobs 1 and 2 (submitted at 20 s and
40 s, 10 s each) and break at job 3's submission (t = 60 s): so the output
files hold exactly two finished jobs.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

from snficon.campaign.runs import write_run_metrics
from snficon.cli import main
from snficon.drivers.session import simulate_in_process
from snficon.engine.simulator import BatsimEngine
from snficon.errors import InputError, SchedulerCrashError, SchedulerTimeoutError

from ..conftest import FCFS_SCHEDULER
from .schedulers import write_scheduler


def finished_jobs(folder: Path) -> list[str]:
    with open(folder / "out_jobs.csv", newline="") as stream:
        return [row["job_id"] for row in csv.DictReader(stream)]


def run(inputs, scheduler: Path | str, output: Path, *extra: str) -> list[str]:
    platform, workload = inputs
    return ["run", "--platform", str(platform), "--workload", str(workload),
            "--scheduler", str(scheduler), "-o", str(output), *extra]


def test_crash_in_process_is_one_line_and_the_outputs_are_marked(inputs, tmp_path, capsys):
    crasher = write_scheduler(tmp_path, "crash")
    out = tmp_path / "out"
    code = main(run(inputs, crasher, out))
    err = capsys.readouterr().err
    assert code == SchedulerCrashError.exit_code == 6
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"snficon: error: the scheduler {crasher} crashed at t=60: "
                          "RuntimeError: scheduler bug in crasher.py:")
    assert f"the output files until then are in {out}/" in err
    assert finished_jobs(out) == ["1", "2"]
    marker = (out / "out_INCOMPLETE.txt").read_text()
    assert marker.startswith("stopped at t=60 by SchedulerCrashError")
    assert not (out / "metrics.json").exists()
    with pytest.raises(InputError, match="did not finish"):
        write_run_metrics(out / "out", None, tmp_path / "metrics.json")

    # A finished run in the same folder replaces the files and drops the marker.
    assert main(run(inputs, FCFS_SCHEDULER, out)) == 0
    assert not (out / "out_INCOMPLETE.txt").exists()
    assert len(finished_jobs(out)) == 5 and (out / "metrics.json").is_file()


def test_debug_prints_the_scheduler_traceback(inputs, tmp_path, capsys):
    crasher = write_scheduler(tmp_path, "crash")
    assert main(["--debug", *run(inputs, crasher, tmp_path / "out")]) == 6
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert f'File "{crasher}"' in err and "RuntimeError: scheduler bug" in err
    assert err.strip().splitlines()[-1].startswith("snficon: error: the scheduler")


def test_crash_under_zmq_points_to_the_log(inputs, tmp_path, capsys):
    crasher = write_scheduler(tmp_path, "crash")
    out = tmp_path / "out"
    code = main(run(inputs, crasher, out, "--engine", "zmq"))
    err = capsys.readouterr().err
    assert code == 6 and err.count("\n") == 1
    log = out / "log" / "sched.err.log"
    assert f"its traceback is in {log}" in err
    assert "exit status 1" in err and "t=60" in err
    assert "RuntimeError: scheduler bug" in log.read_text()
    assert finished_jobs(out) == ["1", "2"]
    assert (out / "out_INCOMPLETE.txt").is_file()


def test_an_engine_bug_is_not_blamed_on_the_scheduler(inputs, tmp_path, monkeypatch):
    """An exception raised inside the engine keeps its type (a bug to report, not a crash)."""
    def broken(self, answer):  # stands in for a bug in the engine's answer handling
        raise ValueError("engine bug")

    monkeypatch.setattr(BatsimEngine, "answer", broken)
    platform, workload = inputs
    with pytest.raises(ValueError, match="engine bug"):
        simulate_in_process(platform, [workload], FCFS_SCHEDULER, {},
                            export_prefix=tmp_path / "out")
    assert "by ValueError: engine bug" in (tmp_path / "out_INCOMPLETE.txt").read_text()


def test_answer_timeout_ends_a_hung_scheduler(inputs, tmp_path, capsys):
    hanger = write_scheduler(tmp_path, "hang")
    out = tmp_path / "out"
    started = time.monotonic()
    code = main(run(inputs, hanger, out, "--engine", "zmq", "--answer-timeout", "1",
                    "--set", f"flag={tmp_path / 'hung'}"))
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == SchedulerTimeoutError.exit_code, err
    assert "did not answer within 1 s" in err and "t=60" in err
    assert took < 30  # not the default 600 s
    assert (tmp_path / "hung").is_file()
    assert finished_jobs(out) == ["1", "2"]
    assert "SchedulerTimeoutError" in (out / "out_INCOMPLETE.txt").read_text()


@pytest.mark.parametrize(("engine", "value", "why"), [
    ("inprocess", "5", "applies to --engine zmq"), ("zmq", "0", "expected seconds > 0")])
def test_answer_timeout_is_checked(inputs, tmp_path, capsys, engine, value, why):
    code = main(run(inputs, FCFS_SCHEDULER, tmp_path / "out", "--engine", engine,
                    "--answer-timeout", value))
    assert code == 2 and why in capsys.readouterr().err
