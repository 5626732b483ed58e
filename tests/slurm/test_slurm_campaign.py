"""A campaign through ``--executor slurm`` on a real one-node Slurm (the ``slurm`` fixture).

``snficon campaign`` runs as a user runs it (``uv run snficon campaign FILE --executor
slurm ...``, a real subprocess): its Dask workers are real Slurm jobs that sbatch
submits, running the three simulations of a small campaign on a platform and workload
of the repository. Checked: exit status 0, the three runs done (results.csv, each run
folder with metrics.json and manifest.json), the workers ran as Slurm jobs (their
output files) and left the queue, and Dask's INFO lines stayed off the terminal.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from snficon.campaign.cluster import JOB_NAME
from tests.slurm.slurm_node import SlurmNode

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Seconds the whole campaign may take (Slurm job start included).
CAMPAIGN_TIMEOUT_S = 150.0
#: Seconds the worker jobs may take to leave the queue once the campaign has ended.
QUEUE_TIMEOUT_S = 30.0
POLICIES = ("fcfsbIpm", "snfIpm", "snficon")

CAMPAIGN = """\
name = "slurm-test"

[platforms]
taurus-20 = "{root}/platforms/taurus-20.xml"

[workloads]
markovian-100 = {{ file = "{root}/workloads/markovian-3000.json", jobs = 100 }}

[[group]]
name = "g"
platforms = ["taurus-20"]
workloads = ["markovian-100"]
policies = [{policies}]
"""


@dataclass
class CampaignRun:
    folder: Path          # the campaign's working folder (Slurm writes the jobs' output here)
    results: Path
    code: int
    out: str
    err: str
    seconds: float
    queue_left: str       # squeue's lines for the worker jobs once the wait ended ("": none)
    queue_wait_s: float


def snficon_command() -> list[str]:
    uv = shutil.which("uv")
    if uv is not None:
        return [uv, "run", "--project", str(REPO_ROOT), "--frozen", "snficon"]
    return [sys.executable, "-m", "snficon"]


def worker_jobs(slurm: SlurmNode) -> str:
    shown = slurm.run("squeue", "-h", "--me", "-n", JOB_NAME, "-o", "%i %j %T")
    assert shown.returncode == 0, f"squeue failed: {shown.stderr}"
    return shown.stdout.strip()


@pytest.fixture(scope="module")
def campaign_run(slurm: SlurmNode, tmp_path_factory: pytest.TempPathFactory) -> CampaignRun:
    """One campaign of three runs through the slurm executor, for the tests below."""
    folder = tmp_path_factory.mktemp("slurm-campaign")
    path = folder / "c.toml"
    path.write_text(CAMPAIGN.format(root=REPO_ROOT.as_posix(),
                                    policies=", ".join(f'"{p}"' for p in POLICIES)))
    assert worker_jobs(slurm) == "", "worker jobs of another campaign are queued already"
    command = [*snficon_command(), "campaign", str(path), "-o", str(folder / "results"),
               "--executor", "slurm", "--cluster-queue", slurm.partition,
               "--cluster-cores", "1", "--cluster-memory", "2GB"]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=folder, env=slurm.env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=CAMPAIGN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        slurm.run("scancel", "--me", "-n", JOB_NAME)
        pytest.fail(f"the campaign did not end within {CAMPAIGN_TIMEOUT_S:.0f} s; "
                    f"stdout: {out[-2000:]!r}; stderr: {err[-2000:]!r}")
    seconds = time.monotonic() - started
    ended = time.monotonic()
    left = worker_jobs(slurm)
    while left and time.monotonic() - ended < QUEUE_TIMEOUT_S:
        time.sleep(0.5)
        left = worker_jobs(slurm)
    waited = time.monotonic() - ended
    if left:  # leave the session's Slurm clean for whatever runs next
        slurm.run("scancel", "--me", "-n", JOB_NAME)
    return CampaignRun(folder, folder / "results", process.returncode, out, err, seconds,
                       left, waited)


def test_campaign_runs_through_slurm(campaign_run: CampaignRun):
    run = campaign_run
    assert run.code == 0, f"exit {run.code}; stdout: {run.out!r}; stderr: {run.err[-3000:]!r}"
    assert "3 runs: 3 done now, 0 done before, 0 failed" in run.out, run.out
    with (run.results / "results.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(row["policy"] for row in rows) == sorted(POLICIES)
    folders = sorted((run.results / "runs").iterdir())
    assert len(folders) == 3, folders
    for folder in folders:
        metrics = json.loads((folder / "metrics.json").read_text())
        assert metrics, f"{folder.name}: empty metrics.json"
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest, f"{folder.name}: empty manifest.json"
    # the workers were Slurm jobs: each wrote its output file in the submitting folder
    assert list(run.folder.glob("slurm-*.out")), "no Slurm job output: were jobs submitted?"


def test_worker_jobs_leave_the_queue(campaign_run: CampaignRun):
    assert campaign_run.queue_left == "", (
        f"worker jobs still queued {campaign_run.queue_wait_s:.0f} s after the campaign "
        f"ended: {campaign_run.queue_left}")


def test_terminal_has_no_dask_info_lines(campaign_run: CampaignRun):
    info = [line for line in campaign_run.err.splitlines()
            if "INFO" in line and ("distributed" in line or "dask_jobqueue" in line)]
    assert not info, "Dask's INFO lines on stderr:\n" + "\n".join(info[:10])
    assert "[3/3] 3 done" in campaign_run.err, campaign_run.err  # the progress line stays
