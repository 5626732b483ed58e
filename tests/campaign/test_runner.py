"""Running campaigns: outputs per run, resume, failures recorded, executors agree."""

from __future__ import annotations

import csv
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.errors import CorruptedRunError, ExecutorUnavailableError
from snficon.campaign.executors import make_executor
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.campaign.runs import METRICS, PARAMS, run_id, run_status


def specs_of(campaign: Path, results: Path):
    return make_specs(expand(read_campaign(campaign)).plans, results / "runs")


def table(results: Path) -> list[dict[str, str]]:
    with open(results / "results.csv", newline="") as stream:
        return list(csv.DictReader(stream))


def test_runs_write_their_folders_and_the_table(tiny_campaign, tmp_path):
    results = tmp_path / "results"
    specs = specs_of(tiny_campaign, results)
    outcome = run_campaign(specs, results, executor="serial")
    assert (outcome.total, outcome.done, outcome.skipped, outcome.failed) == (6, 6, 0, 0)
    for spec in specs:
        folder = results / "runs" / spec.run_id
        assert run_status(folder) == "done"
        params = json.loads((folder / PARAMS).read_text())
        assert run_id(params) == spec.run_id == folder.name
        for name in ("metrics.json", "decisions.csv", "out_jobs.csv", "out_schedule.csv",
                     "out_consumed_energy.csv", "out_machine_states.csv"):
            assert (folder / name).is_file(), name
        metrics = json.loads((folder / METRICS).read_text())
        assert metrics["jobs"] == (5 if params["jobs"] == 5 else 8)
        assert (folder / "workload.json").is_file() == (params["jobs"] == 5)
    rows = table(results)
    assert [row["id"] for row in rows] == [spec.run_id for spec in specs]
    assert {row["status"] for row in rows} == {"done"}
    icon = [row for row in rows if row["policy"] == "snficon" and row["workload"] == "w8"]
    assert icon[0]["alpha"] == "5000.0" and icon[0]["groups"] == "base"
    assert icon[0]["icon_time_share"] != "" and rows[0]["icon_time_share"] == ""
    assert [row["options"] for row in rows if row["workload"] == "w5"] == ["alpha=10", ""]
    assert not list((results / "runs").glob(".*"))  # no scratch folder left


def test_resume_runs_only_what_is_missing(tiny_campaign, tmp_path):
    results = tmp_path / "results"
    specs = specs_of(tiny_campaign, results)
    run_campaign(specs, results, executor="serial")
    kept = {spec.run_id: (results / "runs" / spec.run_id / METRICS).stat().st_mtime_ns
            for spec in specs}
    victim = specs[2].run_id
    (results / "runs" / victim / METRICS).unlink()
    outcome = run_campaign(specs_of(tiny_campaign, results), results, executor="serial")
    assert (outcome.done, outcome.skipped, outcome.failed) == (1, 5, 0)
    for run, mtime in kept.items():
        if run != victim:
            assert (results / "runs" / run / METRICS).stat().st_mtime_ns == mtime
    rows = table(results)
    assert len(rows) == 6 and len({row["id"] for row in rows}) == 6
    assert {row["status"] for row in rows} == {"done"}
    again = run_campaign(specs, results, executor="serial")
    assert (again.done, again.skipped) == (0, 6)


def test_run_killed_half_way_is_redone(tiny_campaign, tmp_path):
    """A run killed while writing left only its scratch folder: it is not counted, then redone."""
    results = tmp_path / "results"
    specs = specs_of(tiny_campaign, results)
    run_campaign(specs, results, executor="serial")
    victim = specs[0].run_id
    folder = results / "runs" / victim
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    scratch = folder.with_name(f".tmp-{victim}-{socket.gethostname()}-{dead}")
    folder.rename(scratch)
    (scratch / METRICS).unlink()
    (scratch / "out_jobs.csv").write_text("job_id,workload_name\n1,w0\n")  # half written
    assert run_status(folder) == "todo"
    outcome = run_campaign(specs, results, executor="serial")
    assert (outcome.done, outcome.skipped) == (1, 5)
    assert not scratch.exists() and run_status(folder) == "done"
    rows = table(results)
    assert sorted(row["id"] for row in rows) == sorted(spec.run_id for spec in specs)


def test_failing_run_is_recorded_and_others_go_on(tiny_campaign, tmp_path, run_cli):
    (tmp_path / "inputs" / "broken.json").write_text('{"jobs": [\n')
    text = tiny_campaign.read_text().replace(
        'w8 = "inputs/w8.json"', 'w8 = "inputs/w8.json"\nbroken = "inputs/broken.json"')
    text = text.replace('workloads = ["w8"]', 'workloads = ["w8", "broken"]')
    tiny_campaign.write_text(text)
    results = tmp_path / "results"
    code, out, err = run_cli(str(tiny_campaign), "-o", str(results), "--executor", "serial")
    assert code == 1
    assert "4 failed" in out and "malformed JSON" in out
    rows = table(results)
    assert len(rows) == 10
    failed = [row for row in rows if row["status"] == "failed"]
    assert {row["workload"] for row in failed} == {"broken"} and len(failed) == 4
    assert all("InputError" in row["error"] for row in failed)
    assert all(row["mean_wait"] for row in rows if row["status"] == "done")
    error = (results / "runs" / failed[0]["id"] / "error.txt").read_text()
    assert "malformed JSON" in error and "Traceback" in error
    # A second invocation tries the failed runs again and skips the others.
    code, out, _ = run_cli(str(tiny_campaign), "-o", str(results), "--executor", "serial")
    assert code == 1 and "0 done now, 6 done before, 4 failed" in out
    assert len(table(results)) == 10


def test_local_pool_gives_the_serial_table(tiny_campaign, tmp_path):
    tables = {}
    for executor in ("serial", "local"):
        results = tmp_path / executor
        run_campaign(specs_of(tiny_campaign, results), results, executor=executor, workers=2)
        tables[executor] = [{k: v for k, v in row.items() if k != "wall_time_s"}
                            for row in table(results)]
    assert tables["local"] == tables["serial"]


def test_dask_local_cluster_gives_the_serial_table(tiny_campaign, tmp_path):
    pytest.importorskip("distributed")
    tables = {}
    for executor in ("serial", "dask"):
        results = tmp_path / executor
        run_campaign(specs_of(tiny_campaign, results), results, executor=executor, workers=2)
        tables[executor] = [{k: v for k, v in row.items() if k != "wall_time_s"}
                            for row in table(results)]
    assert tables["dask"] == tables["serial"]


def test_dask_missing_is_a_clear_error(monkeypatch):
    # A None entry in sys.modules makes "import distributed" fail as if it were absent.
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ExecutorUnavailableError, match="distributed"):
        make_executor("dask", 2)


def test_corrupted_run_folder_stops_the_campaign(tiny_campaign, tmp_path):
    results = tmp_path / "results"
    specs = specs_of(tiny_campaign, results)
    run_campaign(specs, results, executor="serial")
    params = results / "runs" / specs[1].run_id / PARAMS
    params.write_text(params.read_text().replace('"snfIpm"', '"fcfsbIpm"'))
    with pytest.raises(CorruptedRunError, match=specs[1].run_id):
        run_campaign(specs, results, executor="serial")


def test_missing_workload_stops_before_start(write_campaign, tmp_path, run_cli):
    path = write_campaign("""
[platforms]
p4 = "inputs/p4.xml"
[workloads]
w8 = "inputs/w8.json"
das2 = { file = "inputs/das2-fs2-3000.json", make = "snficon workload convert X.swf.gz -o Y" }
[[group]]
name = "g"
platforms = ["p4"]
workloads = ["w8", "das2"]
policies = ["fcfsbIpm"]
""")
    results = tmp_path / "results"
    code, out, err = run_cli(str(path), "-o", str(results))
    assert code == 2
    assert "das2" in err and "das2-fs2-3000.json" in err
    assert "make it with: snficon workload convert X.swf.gz -o Y" in err
    assert not results.exists()
    code, out, _ = run_cli(str(path), "--dry-run")
    assert code == 0 and "(input missing)" in out and out.count("\n") >= 3


def test_dry_run_lists_runs_and_status(tiny_campaign, tmp_path, run_cli):
    code, out, _ = run_cli(str(tiny_campaign), "--dry-run")
    lines = out.splitlines()
    assert code == 0 and lines[-1] == "6 runs"
    specs = specs_of(tiny_campaign, tmp_path / "results")
    assert [line.split()[0] for line in lines[:-1]] == [spec.run_id for spec in specs]
    assert "alpha=10  [alpha]" in lines[4] and "(first 5 jobs)" in lines[4]
    assert not (tmp_path / "results").exists()
    run_campaign(specs[:2], tmp_path / "results", executor="serial")
    _, out, _ = run_cli(str(tiny_campaign), "--dry-run", "-o", str(tmp_path / "results"))
    assert [line.split()[1] for line in out.splitlines()[:-1]] == ["done"] * 2 + ["todo"] * 4
