"""``--executor slurm``: the [cluster] table, its checks, the job script, a LocalCluster run.

Slurm itself is not here: the job script dask-jobqueue renders for the
settings is checked line by line, and a campaign runs through the same
executor code on a LocalCluster (``cluster_kind="local"``), resume included.
"""

from __future__ import annotations

import csv
import json

import pytest

from snficon.campaign.cluster import make_cluster, slurm_arguments
from snficon.campaign.cluster_settings import (
    SCALAR_KEYS,
    ClusterSettings,
    walltime_seconds,
    with_overrides,
)
from snficon.campaign.config import read_campaign
from snficon.campaign.errors import CampaignFileError, ExecutorUnavailableError
from snficon.campaign.executors import make_executor
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.campaign.runs import METRICS
from snficon.commands.campaign import CLUSTER_FLAGS
from snficon.errors import InputError

HEAD = """\
[platforms]
p4 = "inputs/p4.xml"
[workloads]
w5 = { file = "inputs/w8.json", jobs = 5 }
"""

GROUP = """\
[[group]]
name = "g"
platforms = ["p4"]
workloads = ["w5"]
policies = ["fcfsbIpm", "snfIpm", "snficon"]
"""

CLUSTER = """\
[cluster]
queue = "batch"
account = "energy-lab"
cores = 4
memory = "16GiB"
walltime = "02:30:00"
minimum_workers = 0
maximum_workers = 8
job_extra_directives = ["--exclusive", "--constraint=skylake"]
job_script_prologue = ["module load python/3.11", "source venv/bin/activate"]
local_directory = "/scratch/snficon"
"""


def slurm_job_script(settings) -> str:
    """The worker job script dask-jobqueue renders for ``settings`` (nothing submitted)."""
    cluster = make_cluster(settings, "slurm")
    try:
        return cluster.job_script()
    finally:
        cluster.close()


def sbatch_lines(script: str) -> list[str]:
    return [line for line in script.splitlines() if line.startswith("#SBATCH")]


def test_job_script_carries_the_cluster_table(write_campaign):
    path = write_campaign(HEAD + CLUSTER + GROUP)
    settings = read_campaign(path).cluster
    assert settings is not None and settings.processes is None
    assert settings.source == str(path)
    script = slurm_job_script(settings)
    lines = sbatch_lines(script)
    # The directives sbatch reads, as dask-jobqueue 0.9 writes them: -p (partition), -A,
    # --cpus-per-task = cores, --mem in whole G (16 GiB is exactly 16G), -t verbatim.
    for expected in ("#SBATCH -J snficon-worker", "#SBATCH -p batch", "#SBATCH -A energy-lab",
                     "#SBATCH --cpus-per-task=4", "#SBATCH --mem=16G", "#SBATCH -t 02:30:00",
                     "#SBATCH --exclusive", "#SBATCH --constraint=skylake"):
        assert expected in lines, (expected, lines)
    body = script.splitlines()
    prologue = body.index("module load python/3.11")
    assert body[prologue + 1] == "source venv/bin/activate"
    worker = next(i for i, line in enumerate(body) if "distributed.cli.dask_worker" in line)
    assert prologue > max(body.index(line) for line in lines) and worker > prologue + 1
    # One single-threaded worker per core by default (a run holds the GIL throughout).
    command = body[worker]
    assert "--nworkers 4" in command and "--nthreads 1" in command
    assert "--local-directory /scratch/snficon" in command


def test_command_line_wins_over_the_table(write_campaign):
    loaded = read_campaign(write_campaign(HEAD + CLUSTER + GROUP))
    given = dict.fromkeys(SCALAR_KEYS) | {"queue": "short", "walltime": "1-00:00",
                                          "processes": 2}
    settings = with_overrides(loaded.cluster, given, loaded.source)
    assert (settings.queue, settings.walltime, settings.processes) == ("short", "1-00:00", 2)
    assert settings.account == "energy-lab" and settings.job_extra_directives
    arguments = slurm_arguments(settings)
    assert arguments["processes"] == 2 and arguments["cores"] == 4
    script = slurm_job_script(settings)
    lines = sbatch_lines(script)
    assert "#SBATCH -p short" in lines and "#SBATCH -t 1-00:00" in lines
    assert "--nworkers 2" in script and "--nthreads 2" in script


def test_every_scalar_key_has_its_flag():
    assert tuple(CLUSTER_FLAGS) == SCALAR_KEYS


@pytest.mark.parametrize(("text", "seconds"), [
    ("30", 1800), ("05:30", 330), ("01:00:00", 3600), ("100:00:00", 360000),
    ("1-00", 86400), ("1-02:30", 95400), ("2-03:04:05", 183845),
])
def test_walltime_forms_of_sbatch(text, seconds):
    # sbatch(1) --time: "minutes", "minutes:seconds", "hours:minutes:seconds",
    # "days-hours", "days-hours:minutes", "days-hours:minutes:seconds"; seconds by hand.
    assert walltime_seconds(text) == seconds


@pytest.mark.parametrize("text", ["2h", "00:60", "01:60:00", "1-24", "0", "00:00:00",
                                  "1:2:3:4", "", "-1", "1-"])
def test_malformed_walltimes_are_refused(text):
    with pytest.raises(ValueError):
        walltime_seconds(text)


@pytest.mark.parametrize(("line", "key", "at", "words"), [
    ('walltime = "2h"', "cluster.walltime", 6, "malformed walltime '2h'"),
    ('walltime = 120', "cluster.walltime", 6, "expected a non-empty string"),
    ('memory = "16"', "cluster.memory", 6, "with a unit"),
    ('cores = 0', "cluster.cores", 6, "integer >= 1"),
    ('partition = "batch"', "cluster.partition", 6, "unknown key 'partition'"),
    ('job_script_prologue = "module load x"', "cluster.job_script_prologue", 6,
     "array of strings"),
    ('minimum_workers = 9\nmaximum_workers = 4', "cluster.minimum_workers", 6,
     "minimum_workers 9 is above maximum_workers 4"),
    ('cores = 2\nprocesses = 4', "cluster.processes", 7, "more than its 2 cores"),
])
def test_bad_cluster_table_names_file_key_and_line(write_campaign, line, key, at, words):
    path = write_campaign(HEAD + "[cluster]\n" + line + "\n" + GROUP)  # [cluster] is line 5
    with pytest.raises(CampaignFileError) as caught:
        read_campaign(path)
    error = caught.value
    assert error.key == key and error.line == at
    assert str(error).startswith(f"{path}, line {at}, {key}: ") and words in str(error)


def test_cli_rejects_bad_flags_with_a_clear_error(run_cli, write_campaign, tmp_path):
    path = write_campaign(HEAD + CLUSTER + GROUP)
    out = str(tmp_path / "results")
    code, _, err = run_cli(str(path), "-o", out, "--executor", "slurm",
                           "--cluster-walltime", "25:61:00")
    assert code == 2 and "--cluster-walltime: malformed walltime '25:61:00'" in err
    code, _, err = run_cli(str(path), "-o", out, "--executor", "slurm",
                           "--cluster-minimum-workers", "9")
    assert code == 2
    assert f"--cluster-minimum-workers with {path} [cluster]: minimum_workers 9 is above " \
           "maximum_workers 8" in err
    code, _, err = run_cli(str(path), "-o", out, "--cluster-queue", "short")
    assert code == 2 and "--cluster-queue: for --executor slurm, not local" in err
    code, _, err = run_cli(str(path), "-o", out, "--executor", "slurm", "--workers", "4")
    assert code == 2 and "--cluster-maximum-workers" in err
    assert not (tmp_path / "results" / "runs").exists()  # nothing started


def test_slurm_without_sbatch_is_a_clear_error(run_cli, write_campaign, tmp_path,
                                               monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no sbatch on this PATH
    with pytest.raises(ExecutorUnavailableError, match="sbatch, which is not on the PATH"):
        make_executor("slurm", 3, cluster=ClusterSettings())
    code, _, err = run_cli(str(write_campaign(HEAD + CLUSTER + GROUP)), "-o",
                           str(tmp_path / "results"), "--executor", "slurm")
    assert code == 2 and "sbatch" in err


def test_dask_jobqueue_refusal_names_the_table():
    # No cores or memory here nor in a Dask configuration: dask-jobqueue cannot size a job.
    import dask

    with dask.config.set({"jobqueue.slurm.cores": None, "jobqueue.slurm.memory": None}):
        with pytest.raises(InputError, match=r"^c.toml \[cluster\]: dask-jobqueue refuses"):
            make_cluster(ClusterSettings(queue="batch", source="c.toml"), "slurm")


def test_campaign_on_a_local_cluster_runs_and_resumes(write_campaign, tmp_path):
    """The slurm executor's code on a LocalCluster gives the serial executor's results
    (compared metric by metric, the wall time aside), and resumes: run again, it skips all.
    A run lost half-way is run again by the same runner code as every executor's
    (test_runner.py::test_resume_runs_only_what_is_missing)."""
    loaded = read_campaign(write_campaign(HEAD + "[cluster]\nmaximum_workers = 2\n"
                                          f'local_directory = "{tmp_path / "scratch"}"\n'
                                          + GROUP))
    plans = expand(loaded).plans
    results = tmp_path / "cluster"
    specs = make_specs(plans, results / "runs")
    assert len(specs) == 3
    outcome = run_campaign(specs, results, executor="slurm", cluster=loaded.cluster,
                           cluster_kind="local")
    assert (outcome.done, outcome.failed, outcome.skipped) == (3, 0, 0)
    mtimes = [(results / "runs" / s.run_id / METRICS).stat().st_mtime_ns for s in specs]
    serial = tmp_path / "serial"
    run_campaign(make_specs(plans, serial / "runs"), serial, executor="serial")
    for spec in specs:
        got = json.loads((results / "runs" / spec.run_id / METRICS).read_text())
        want = json.loads((serial / "runs" / spec.run_id / METRICS).read_text())
        got.pop("wall_time_s"), want.pop("wall_time_s")
        assert got == want, spec.run_id
    with open(results / "results.csv", newline="") as stream:
        assert [row["status"] for row in csv.DictReader(stream)] == ["done"] * 3
    # The second invocation finds every run done: it runs nothing and starts no cluster.
    last = run_campaign(specs, results, executor="slurm", cluster=loaded.cluster,
                        cluster_kind="local")
    assert (last.done, last.skipped, last.failed) == (0, 3, 0)
    assert all((results / "runs" / s.run_id / METRICS).stat().st_mtime_ns == mtime
               for s, mtime in zip(specs, mtimes, strict=True))


def test_job_script_slurm_refuses_stops_the_campaign(tmp_path, monkeypatch):
    """``sbatch --test-only`` refusing the worker script is an error carrying sbatch's
    words, before any worker is asked for. No Slurm here: a stand-in ``sbatch`` on the
    PATH answers as sbatch does for an unknown partition (exit 1, message on stderr)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "sbatch"
    fake.write_text('#!/bin/sh\n[ "$1" = "--test-only" ] && [ -f "$2" ] && grep -q '
                    '"^#SBATCH -p nosuch" "$2" && { echo "sbatch: error: invalid partition '
                    'specified: nosuch" >&2; exit 1; }\necho "unexpected: $*" >&2; exit 2\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    settings = ClusterSettings(queue="nosuch", cores=2, memory="4GB", source="c.toml")
    with pytest.raises(InputError, match=r"^c.toml \[cluster\]: Slurm refuses the worker job "
                       r"script \(sbatch --test-only\): sbatch: error: invalid partition "
                       r"specified: nosuch$"):
        make_executor("slurm", 3, cluster=settings)
