"""Ctrl-C or SIGTERM during a real campaign: it stops at once, runs in progress are killed,
the table of the runs done is written, and the same command resumes.

The campaign is started as the README starts it, ``uv run snficon campaign``,
in its own session without a terminal, and stopped right after its first run
is done. SIGINT goes to every process of the group, the way a terminal's
Ctrl-C delivers it; ``uv run`` forwards it too, so the campaign gets it twice
and must still write ``results.csv`` and leave no scratch folder. SIGTERM goes
to ``uv`` alone, as ``kill`` or a batch system's time limit sends it, and
``uv`` forwards it. One run (SNF-ICON on the 3000-job Markovian workload,
several seconds) is then still in progress: it must be killed, not finished.
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

from snficon.campaign.runs import METRICS, run_status

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Two short runs (100 jobs, well under a second) around a long one.
CAMPAIGN = """\
name = "interrupt"

[platforms]
aoba-64 = "{root}/platforms/aoba-64.xml"

[workloads]
short = {{ file = "{root}/workloads/markovian-3000.json", jobs = 100 }}
long = "{root}/workloads/markovian-3000.json"

[[group]]
name = "first"
platforms = ["aoba-64"]
workloads = ["short"]
policies = ["fcfsbIpm"]

[[group]]
name = "long"
platforms = ["aoba-64"]
workloads = ["long"]
policies = ["snficon"]

[[group]]
name = "last"
platforms = ["aoba-64"]
workloads = ["short"]
policies = ["snfIpm"]
"""

#: Seconds from the signal to the exit we accept. Loose, for a loaded 2-core machine
#: (writing the table takes a few seconds there); that the long run was killed rather
#: than finished is checked by the run folders.
PROMPT_S = 10.0


UV = os.environ.get("UV") or shutil.which("uv")


def command(campaign: Path, results: Path, executor: str) -> list[str]:
    return [str(UV), "run", "--project", str(REPO_ROOT), "--no-sync", "snficon", "campaign",
            str(campaign), "-o", str(results), "--executor", executor, "--workers", "2"]


def done_runs(results: Path) -> dict[str, int]:
    """Run id -> metrics.json mtime (ns) of the published run folders that are done."""
    runs = results / "runs"
    return {folder.name: (folder / METRICS).stat().st_mtime_ns
            for folder in runs.iterdir()
            if not folder.name.startswith(".") and run_status(folder) == "done"}


def table(results: Path) -> list[dict[str, str]]:
    with open(results / "results.csv", newline="") as stream:
        return list(csv.DictReader(stream))


def group_gone(pgid: int, within_s: float) -> bool:
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


@pytest.mark.skipif(UV is None, reason="uv is not installed: the campaign is started through "
                    "`uv run`, as the README does")
@pytest.mark.parametrize(("executor", "signum"), [
    pytest.param("local", signal.SIGINT, id="local-SIGINT"),
    pytest.param("dask", signal.SIGINT, id="dask-SIGINT"),
    pytest.param("serial", signal.SIGINT, id="serial-SIGINT"),
    pytest.param("local", signal.SIGTERM, id="local-SIGTERM")])
def test_a_stopped_campaign_stops_at_once_and_the_same_command_resumes(
        executor: str, signum: int, tmp_path: Path):
    if executor == "dask":
        pytest.importorskip("distributed")
    campaign = tmp_path / "interrupt.toml"
    campaign.write_text(CAMPAIGN.format(root=REPO_ROOT.as_posix()))
    results = tmp_path / "results"
    argv = command(campaign, results, executor)
    process = subprocess.Popen(argv, cwd=tmp_path, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not ((results / "runs").is_dir() and done_runs(results)):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no run finished in 120 s"
            time.sleep(0.05)
        if signum == signal.SIGINT:
            os.killpg(process.pid, signum)  # what Ctrl-C in a terminal does
        else:
            process.send_signal(signum)  # to uv, which forwards it
        sent = time.monotonic()
        out, err = process.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 128 + signum, err
    assert took < PROMPT_S, f"exit {took:.1f} s after the signal"
    assert group_gone(process.pid, 5.0), "worker processes left running"

    rows = table(results)
    long_id = next(row["id"] for row in rows if row["workload"] == "long")
    done = done_runs(results)
    assert 1 <= len(done) <= 2 and long_id not in done  # killed, not finished
    assert {row["id"] for row in rows if row["status"] == "done"} == set(done)
    assert {row["status"] for row in rows} <= {"done", "todo"}
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    assert f"{word}: {len(done)} of 3 runs done" in out, out + err
    assert "KeyboardInterrupt" not in err and "Interrupted" not in err
    if executor != "dask":  # Dask logs its closed connections with tracebacks
        assert "Traceback" not in err
    assert "run the same command again to resume" in out
    leftovers = [p.name for p in (results / "runs").iterdir() if p.name not in done]
    assert leftovers == []  # no scratch folder, no half-written run folder
    if signum == signal.SIGTERM:
        return  # resuming is the same after either signal: checked after SIGINT

    again = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"3 runs: {3 - len(done)} done now, {len(done)} done before, 0 failed" in again.stdout
    rows = table(results)
    assert sorted(row["id"] for row in rows) == sorted({row["id"] for row in rows})
    assert len(rows) == 3 and {row["status"] for row in rows} == {"done"}
    finished = done_runs(results)
    assert set(finished) == {row["id"] for row in rows}
    assert {run: finished[run] for run in done} == done  # the runs done before: not redone
