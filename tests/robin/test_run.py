"""``snficon robin``: real processes (pybatsim and snficon-batsim) over loopback, timeouts."""

from __future__ import annotations

import csv
import shlex
import subprocess
import sys
import time

import pytest

from snficon.drivers.session import free_loopback_port
from snficon.robin.files import RobinFile, read_robin, write_robin
from snficon.robin.runner import embedded_command, run_robin, socket_port
from tests.robin.conftest import PLATFORM, REPO_ROOT, WORKLOAD


def experiment(tmp_path, batcmd, schedcmd, **timeouts) -> RobinFile:
    values = {"simulation_timeout": 60.0, "ready_timeout": 5.0, "success_timeout": 30.0,
              "failure_timeout": 2.0, **timeouts}
    return RobinFile(batcmd=batcmd, schedcmd=schedcmd, output_dir=str(tmp_path / "run"),
                     source="test.yaml", **values)


def test_campaign_robin_file_runs_on_the_embedded_engine(run_cli, tiny_campaign, tmp_path,
                                                         monkeypatch, capsys):
    folder = tmp_path / "robin"
    assert run_cli("campaign", tiny_campaign, "--robin", folder) == 0
    rows = list(csv.DictReader(open(folder / "index.csv")))
    path = folder / next(row["file"] for row in rows if row["policy"] == "snficon")
    monkeypatch.chdir(REPO_ROOT)  # the files' paths are relative to the repository root
    started = time.monotonic()
    assert run_cli("robin", path, "--engine", "embedded") == 0, capsys.readouterr()
    assert time.monotonic() - started < 40
    assert "succeeded" in capsys.readouterr().out
    out = folder / path.stem
    for name in ("out_jobs.csv", "out_schedule.csv", "out_machine_states.csv",
                 "out_consumed_energy.csv", "decisions.csv", "log/batsim.log",
                 "log/sched.out.log", "log/sched.err.log"):
        assert (out / name).is_file(), name
    jobs = list(csv.DictReader(open(out / "out_jobs.csv")))
    assert len(jobs) == 40 and all(job["final_state"] == "COMPLETED_SUCCESSFULLY"
                                   for job in jobs)
    assert "simulation finished" in (out / "log" / "batsim.log").read_text()
    assert "Snficon" in (out / "log" / "sched.out.log").read_text()


def test_failing_scheduler_fails_the_run(run_cli, tmp_path, capsys):
    port = free_loopback_port()
    bat = shlex.join(["batsim", "-p", str(PLATFORM), "-w", str(WORKLOAD), "-E", "-e",
                      str(tmp_path / "run" / "out"), "-s", f"tcp://localhost:{port}"])
    sched = f"pybatsim noSuchScheduler -t 0 -s tcp://*:{port}"
    path = write_robin(tmp_path / "fail.yaml", experiment(tmp_path, bat, sched))
    started = time.monotonic()
    assert run_cli("robin", path, "--engine", "embedded") == 1
    assert time.monotonic() - started < 20  # batsim killed after the failure-timeout
    out = capsys.readouterr()
    assert "FAILED" in out.out and "scheduler exited" in out.out
    assert "batsim killed (still running 2 s (failure-timeout)" in out.out
    assert "No such scheduler" in (tmp_path / "run" / "log" / "sched.out.log").read_text()


def test_success_timeout_kills_the_other_process(tmp_path):
    run = experiment(tmp_path, "sleep 30", "true", success_timeout=0.5)
    started = time.monotonic()
    outcome = run_robin(run)
    assert time.monotonic() - started < 10
    assert not outcome.succeeded
    batsim, sched = outcome.processes
    assert sched.succeeded and "success-timeout" in batsim.killed


def test_simulation_timeout_kills_both(tmp_path):
    outcome = run_robin(experiment(tmp_path, "sleep 30", "sleep 30", simulation_timeout=0.5))
    assert not outcome.succeeded
    assert all("simulation-timeout" in process.killed for process in outcome.processes)


def test_both_succeeding_is_success_and_logs_are_kept(tmp_path):
    outcome = run_robin(experiment(tmp_path, "echo sim; echo oops >&2", "echo out; echo err >&2"))
    assert outcome.succeeded, outcome.summary()
    logs = tmp_path / "run" / "log"
    # as under robin (bash -eux): bash's trace of each command, then its output
    assert (logs / "batsim.log").read_text().splitlines() == [
        "+ echo sim", "sim", "+ echo oops", "oops"]
    assert (logs / "sched.out.log").read_text() == "out\n"
    assert (logs / "sched.err.log").read_text() == "+ echo out\n+ echo err\nerr\n"


def test_robin_command_files_are_written_and_rerun_by_hand(tmp_path):
    run = experiment(tmp_path, "echo simulated", "echo scheduled")
    assert run_robin(run).succeeded
    cmd = tmp_path / "run" / "cmd"
    assert (cmd / "batsim.bash").read_text() == "echo simulated"
    assert (cmd / "sched.bash").read_text() == "echo scheduled"
    for name in ("batsim.bash", "sched.bash"):
        assert (cmd / name).stat().st_mode & 0o777 == 0o755
    # no "#!" line, as robin writes them: a shell runs them (./FILE from bash, or bash FILE)
    done = subprocess.run(["bash", "-c", "./run/cmd/sched.bash"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=10)
    assert done.returncode == 0 and done.stdout == "scheduled\n"


def test_embedded_engine_command_file_holds_what_ran(tmp_path):
    run = experiment(tmp_path, "batsim --version", "true")
    run_robin(run, engine="embedded")
    assert (tmp_path / "run" / "cmd" / "batsim.bash").read_text() == \
        "snficon-batsim --version"


def test_commands_stop_at_the_first_failure_as_under_robin(tmp_path):
    outcome = run_robin(experiment(tmp_path, "false; true", "true"))
    assert not outcome.succeeded
    batsim, _ = outcome.processes
    assert batsim.returncode == 1


def test_scheduler_gets_the_repository_on_pythonpath(tmp_path):
    code = "import schedulers.snficon, sys; sys.exit(0)"
    command = shlex.join([sys.executable, "-c", code])
    outcome = run_robin(experiment(tmp_path, "true", command))
    assert outcome.succeeded, (tmp_path / "run" / "log" / "sched.err.log").read_text()


def test_busy_socket_waits_for_the_ready_timeout(tmp_path):
    import socket

    with socket.socket() as holder:
        holder.bind(("", 0))
        holder.listen()
        port = holder.getsockname()[1]
        run = experiment(tmp_path, f"batsim -s tcp://localhost:{port}", "true",
                         ready_timeout=0.3)
        outcome = run_robin(run)
    assert not outcome.succeeded and "ready-timeout" in outcome.error


def test_embedded_substitution_and_socket_port():
    assert embedded_command("batsim -p a.xml") == "snficon-batsim -p a.xml"
    assert embedded_command("  /usr/bin/batsim -E") == "  snficon-batsim -E"
    assert socket_port("batsim -p a.xml") == 28000
    assert socket_port("batsim --socket-endpoint=tcp://localhost:29001") == 29001
    with pytest.raises(Exception, match="batcmd"):
        embedded_command("simgrid-thing -p a.xml")


def test_written_file_is_what_runs(tmp_path):
    path = write_robin(tmp_path / "x.yaml", experiment(tmp_path, "true", "true"))
    assert run_robin(read_robin(path)).succeeded
