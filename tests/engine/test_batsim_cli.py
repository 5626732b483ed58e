"""``snficon-batsim`` as a drop-in ``batsim``: real pybatsim processes on loopback sockets."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from snficon.conformance import compare_outputs
from snficon.drivers.batsim_cli import main
from snficon.drivers.session import (
    free_loopback_port,
    pybatsim_command,
    simulate_in_process,
    simulate_with_pybatsim,
)
from snficon.errors import SchedulerCrashError, SchedulerTimeoutError
from snficon.registry import PROJECT_ROOT
from tests.conftest import FCFS_SCHEDULER

from .conftest import write_workload


def _jobs(n: int) -> list[dict]:
    return [{"id": i, "subtime": 3.0 * i, "res": 1 + i % 3} for i in range(1, n + 1)]


@pytest.mark.parametrize("flag", [["--enable-redis"], ["-W", "flow.xml"], ["--no-sched"],
                                  ["--mmax", "3"], ["--events", "ev.json"]])
def test_unsupported_batsim_flags_are_refused(capsys, flag: list[str]):
    with pytest.raises(SystemExit) as caught:
        main(["-p", "p.xml", "-w", "w.json", *flag])
    assert caught.value.code == 2
    assert flag[0] in capsys.readouterr().err


def test_pybatsim_cannot_tell_it_from_batsim(platform4: Path, tmp_path: Path):
    workload = write_workload(tmp_path / "w.json", _jobs(20))
    port = free_loopback_port()
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    scheduler = subprocess.Popen(
        pybatsim_command(FCFS_SCHEDULER, {"timeout": 15}, f"tcp://127.0.0.1:{port}"), env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        code = main(["-p", str(platform4), "-w", str(workload), "-E", "-e",
                     str(tmp_path / "zmq"), "-s", f"tcp://127.0.0.1:{port}", "-q",
                     "--answer-timeout", "30"])
        assert scheduler.wait(timeout=30) == 0
    finally:
        scheduler.kill()
        scheduler.communicate()
    assert code == 0
    simulate_in_process(platform4, [workload], FCFS_SCHEDULER, {"timeout": 15},
                        export_prefix=tmp_path / "direct")
    assert compare_outputs(tmp_path / "direct", tmp_path / "zmq") == []


def test_no_scheduler_ends_with_a_clear_error(platform4: Path, tmp_path: Path, capsys):
    workload = write_workload(tmp_path / "w.json", _jobs(2))
    started = time.monotonic()
    code = main(["-p", str(platform4), "-w", str(workload), "-E", "-e", str(tmp_path / "out"),
                 "-s", f"tcp://127.0.0.1:{free_loopback_port()}", "--answer-timeout", "1"])
    assert code == SchedulerTimeoutError.exit_code
    assert time.monotonic() - started < 10
    assert "did not answer within 1 s" in capsys.readouterr().err
    assert (tmp_path / "out_jobs.csv").read_text().startswith("job_id,")


def test_bad_input_file_is_named(tmp_path: Path, capsys):
    bad = tmp_path / "broken.xml"
    bad.write_text("<platform><host id='a'")
    code = main(["-p", str(bad), "-w", str(tmp_path / "w.json")])
    assert code == 2
    assert "broken.xml" in capsys.readouterr().err


def test_scheduler_crash_stops_the_run_quickly(platform4: Path, tmp_path: Path):
    crashing = tmp_path / "crasher.py"
    crashing.write_text(
        "from batsim.batsim import BatsimScheduler\n"
        "from procset import ProcSet\n"
        "class Crasher(BatsimScheduler):\n"
        "    def onJobSubmission(self, job):\n"
        "        if job.id.endswith('!3'):\n"
        "            raise RuntimeError('scheduler bug')\n"
        "        job.allocation = ProcSet(0)\n"
        "        self.bs.execute_jobs([job])\n"
        "    def onJobCompletion(self, job):\n"
        "        pass\n")
    workload = write_workload(tmp_path / "w.json",
                              [{"id": i, "subtime": 20.0 * i, "res": 1} for i in range(1, 5)])
    started = time.monotonic()
    with pytest.raises(SchedulerCrashError, match="exited before answering") as caught:
        simulate_with_pybatsim(platform4, [workload], str(crashing), {},
                               export_prefix=tmp_path / "out", answer_timeout_s=60)
    assert time.monotonic() - started < 20
    assert "scheduler bug" in str(caught.value)
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()
    assert len(rows) == 3  # header and the two jobs that ended before the crash
    assert "SchedulerCrashError" in (tmp_path / "out_INCOMPLETE.txt").read_text()


def test_module_runs_as_a_script():
    result = subprocess.run([sys.executable, "-m", "snficon.drivers.batsim_cli", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "--socket-endpoint" in result.stdout
