"""A campaign meets dead workers, a kill -9, a corrupt metrics file and a second campaign.

Each campaign is the ``snficon campaign`` command in its own session: one
long run (SNF-ICON on the 3000-job Markovian workload, several seconds) and
four short ones (100 jobs) on two workers, so that a test can kill the long
run's worker, or the campaign itself, while the short runs go on. The long
run's worker is found by its scratch folder (``runs/.tmp-<id>-<host>-<pid>``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from snficon.campaign.runs import ERROR, METRICS, PARAMS, run_status
from tests.faults.conftest import REPO_ROOT, gone, wait_for

CAMPAIGN = """\
name = "faults"

[platforms]
aoba-64 = "{root}/platforms/aoba-64.xml"

[workloads]
long = "{root}/workloads/markovian-3000.json"
short = {{ file = "{root}/workloads/markovian-3000.json", jobs = 100 }}

[[group]]
name = "long"
platforms = ["aoba-64"]
workloads = ["long"]
policies = ["snficon"]

[[group]]
name = "short"
platforms = ["aoba-64"]
workloads = ["short"]
policies = ["fcfsbIpm", "snfIpm", "snficon", "snficon-nf"]
"""


def campaign_file(tmp_path: Path) -> Path:
    path = tmp_path / "faults.toml"
    path.write_text(CAMPAIGN.format(root=REPO_ROOT.as_posix()))
    return path


def long_run_worker(results: Path) -> tuple[str, int] | None:
    """(run id, worker pid) of the long run while it is in progress."""
    runs = results / "runs"
    if not runs.is_dir():
        return None
    for folder in runs.glob(".tmp-*"):
        try:
            params = json.loads((folder / PARAMS).read_text())
        except (OSError, ValueError):
            continue
        if params.get("workload") == "long":
            run, pid = folder.name.split("-")[1], folder.name.rpartition("-")[2]
            return run, int(pid)
    return None


def published(results: Path) -> dict[str, str]:
    """Run id -> status of the published run folders."""
    return {folder.name: run_status(folder) for folder in (results / "runs").iterdir()
            if not folder.name.startswith(".")}


def test_a_killed_worker_fails_only_its_run(tmp_path, start):
    results = tmp_path / "results"
    process = start("campaign", str(campaign_file(tmp_path)), "-o", str(results),
                    "--executor", "local", "--workers", "2", cwd=tmp_path)
    run, pid = wait_for(lambda: long_run_worker(results), "long run in progress", process)
    os.kill(pid, signal.SIGKILL)  # as the kernel's out-of-memory killer does
    out, err = process.communicate(timeout=60)

    assert process.returncode == 1, err
    assert "5 runs: 4 done now, 0 done before, 1 failed" in out, out + err
    assert f"failed {run}: WorkerDiedError" in out and "killed by SIGKILL" in out
    statuses = published(results)
    assert sorted(statuses.values()) == ["done"] * 4 + ["failed"]
    assert statuses[run] == "failed"
    assert "killed by SIGKILL" in (results / "runs" / run / ERROR).read_text()
    assert not list((results / "runs").glob(".*")), "scratch folders left behind"
    rows = (results / "results.csv").read_text().splitlines()
    assert len(rows) == 6


def test_kill_9_of_the_campaign_ends_its_workers(tmp_path, start):
    results = tmp_path / "results"
    argv = ("campaign", str(campaign_file(tmp_path)), "-o", str(results),
            "--executor", "local", "--workers", "2")
    process = start(*argv, cwd=tmp_path)
    _, worker = wait_for(lambda: long_run_worker(results), "long run in progress", process)
    process.kill()
    process.communicate(timeout=10)
    assert process.returncode == -signal.SIGKILL
    assert gone(worker, within_s=3.0), "the worker outlived the campaign process"
    # the long run was not finished by an orphan: nothing of it was published
    assert all(status == "done" for status in published(results).values())
    assert len(published(results)) < 5


def test_a_corrupt_metrics_file_is_named_and_its_run_done_again(tmp_path, start):
    results = tmp_path / "results"
    campaign = tmp_path / "short.toml"
    campaign.write_text(CAMPAIGN.format(root=REPO_ROOT.as_posix())
                        .split("[[group]]")[0] + "[[group]]" + CAMPAIGN.split("[[group]]")[2])
    argv = ("campaign", str(campaign), "-o", str(results), "--executor", "local",
            "--workers", "2")
    first = start(*argv, cwd=tmp_path)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    victim = sorted(published(results))[0]
    metrics = results / "runs" / victim / METRICS
    metrics.write_text(metrics.read_text()[:40])  # a write cut short

    again = start(*argv, cwd=tmp_path)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert "JSONDecodeError" not in err and "Traceback" not in err
    assert str(metrics) in err and "running the run again" in err, err
    assert "4 runs: 1 done now, 3 done before, 0 failed" in out, out
    assert isinstance(json.loads(metrics.read_text()), dict)
    assert set(published(results).values()) == {"done"}


def test_a_second_campaign_on_the_same_results_refuses(tmp_path, start):
    results = tmp_path / "results"
    argv = ("campaign", str(campaign_file(tmp_path)), "-o", str(results),
            "--executor", "local", "--workers", "1")
    first = start(*argv, cwd=tmp_path)
    wait_for(lambda: long_run_worker(results), "long run in progress", first)
    before = sorted(p.name for p in (results / "runs").iterdir())

    second = subprocess.run([str(Path(first.args[0])), *argv], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == 2, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert str(results) in lines[0] and f"pid {first.pid}" in lines[0], lines[0]
    assert "another campaign" in lines[0]
    assert "done now" not in second.stdout and "/5]" not in second.stdout
    # the second one touched nothing: the first one's run is still in progress
    now = sorted(p.name for p in (results / "runs").iterdir())
    assert [n for n in now if n.startswith(".tmp")] == [n for n in before
                                                         if n.startswith(".tmp")]
    assert first.poll() is None
