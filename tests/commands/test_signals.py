"""SIGTERM and Ctrl-C to real commands started as users start them: ``uv run``, no terminal.

``uv run`` forwards the signals it gets to its child, so a signal sent to the
whole process group (what a terminal's Ctrl-C does) reaches the command twice:
the clean-up must survive the second one. SIGTERM sent to ``uv`` alone is
what ``kill`` or a batch system's time limit does. Either way the command ends
its children, keeps the output files of what happened until then (marked
unfinished) and exits 128 + the signal.
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from snficon.drivers.session import free_loopback_port

from ..conftest import REPO_ROOT
from .schedulers import write_scheduler

UV = os.environ.get("UV") or shutil.which("uv")
pytestmark = pytest.mark.skipif(UV is None, reason="uv is not installed: these tests start "
                                "the commands through `uv run`, as the README does")

#: (signal, sent to the whole group?, exit status, last line of stderr).
STOPS = [pytest.param(signal.SIGTERM, False, 143, "terminated", id="SIGTERM-to-uv"),
         pytest.param(signal.SIGINT, True, 130, "interrupted", id="SIGINT-to-group-twice")]


def uv_run(*argv: str) -> list[str]:
    return [str(UV), "run", "--project", str(REPO_ROOT), "--no-sync", *argv]


def start(argv: list[str], cwd: Path, stderr=subprocess.PIPE) -> subprocess.Popen:
    """A process in its own session, without a terminal (stdin closed)."""
    return subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=stderr, text=True, start_new_session=True)


def wait_for(condition, process: subprocess.Popen, within_s: float = 60.0) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the command never got there"
        time.sleep(0.05)


def stop(process: subprocess.Popen, signum: int, group: bool) -> tuple[str, str]:
    """Send the signal; return (stdout, stderr) once the process exited."""
    try:
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        return process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def group_gone(pgid: int, within_s: float = 5.0) -> bool:
    """Whether no process of the group ``pgid`` is left (waiting up to ``within_s``)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def job_ids(path: Path) -> list[str]:
    with open(path, newline="") as stream:
        return [row["job_id"] for row in csv.DictReader(stream)]


@pytest.mark.parametrize(("signum", "group", "status", "word"), STOPS)
def test_run_over_zmq_ends_its_scheduler_and_keeps_the_outputs(inputs, tmp_path: Path,
                                                                signum, group, status, word):
    platform, workload = inputs
    hanger = write_scheduler(tmp_path, "hang")
    flag, out = tmp_path / "hung", tmp_path / "out"
    process = start(uv_run("snficon", "run", "--platform", str(platform), "--workload",
                           str(workload), "--scheduler", str(hanger), "--engine", "zmq",
                           "--set", f"flag={flag}", "-o", str(out)), tmp_path)
    wait_for(flag.is_file, process)  # the pybatsim process hangs at t = 60 s
    _, err = stop(process, signum, group)
    assert process.returncode == status, err
    assert err.strip().splitlines()[-1] == f"snficon: {word}", err
    assert "Traceback" not in err
    assert group_gone(process.pid), "the pybatsim process was left running"
    assert job_ids(out / "out_jobs.csv") == ["1", "2"]  # what happened until then
    marker = (out / "out_INCOMPLETE.txt").read_text()
    assert f"Interrupted: {signal.Signals(signum).name}" in marker
    assert not (out / "metrics.json").exists()


@pytest.mark.parametrize(("signum", "group", "status", "word"), STOPS)
def test_snficon_batsim_writes_its_outputs_marked(inputs, tmp_path: Path, signum, group,
                                                  status, word):
    platform, workload = inputs
    log = tmp_path / "batsim.log"
    with open(log, "w") as stream:
        process = start(uv_run("snficon-batsim", "-p", str(platform), "-w", str(workload),
                               "-E", "-e", str(tmp_path / "x" / "out"), "-s",
                               f"tcp://127.0.0.1:{free_loopback_port()}"), tmp_path,
                        stderr=stream)
        wait_for(lambda: "connecting to the scheduler" in log.read_text(), process)
        stop(process, signum, group)
    text = log.read_text()
    assert process.returncode == status, text
    assert f"snficon-batsim: {word}" in text and "Traceback" not in text
    assert group_gone(process.pid)
    assert job_ids(tmp_path / "x" / "out_jobs.csv") == []  # no scheduler: nothing ran
    assert f"{word} by a signal" in (tmp_path / "x" / "out_INCOMPLETE.txt").read_text()
