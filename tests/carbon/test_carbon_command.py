"""``snficon carbon synthetic|check|account`` and ``snficon run --carbon`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snficon.cli import main
from tests.conftest import REPO_ROOT


@pytest.fixture
def synthetic_file(tmp_path: Path) -> Path:
    path = tmp_path / "syn.csv"
    assert main(["carbon", "synthetic", "-o", str(path), "--days", "40", "--seed", "5"]) == 0
    return path


def test_synthetic_then_check(synthetic_file: Path, capsys):
    capsys.readouterr()
    assert synthetic_file.read_text().startswith("# synthetic diurnal carbon intensity")
    assert main(["carbon", "check", str(synthetic_file)]) == 0
    out = capsys.readouterr().out
    assert "synthetic, 2023-01-01T00:00:00Z .. 2023-02-10T00:00:00Z" in out
    assert "1920 intervals" in out


def test_run_with_carbon_and_account_agree(synthetic_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "run"
    workload = REPO_ROOT / "workloads" / "markovian-3000.json"
    from snficon.campaign.runs import truncate_workload

    small = truncate_workload(workload, 100, tmp_path / "w100.json")
    code = main(["run", "--platform", str(REPO_ROOT / "platforms" / "aoba-64.xml"),
                 "--workload", str(small), "--policy", "fcfsbIpm", "-o", str(out),
                 "--carbon", str(synthetic_file), "--carbon-start", "2023-01-03T12:00Z"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "carbon to the last job end" in printed and "2023-01-03T12:00:00Z" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["carbon_start"] == "2023-01-03T12:00:00Z"
    assert main(["carbon", "account", str(out / "out"), "--carbon", str(synthetic_file),
                 "--carbon-start", "2023-01-03T12:00Z"]) == 0
    accounted = json.loads(capsys.readouterr().out)
    for key in ("carbon_total_kg", "carbon_compute_kg", "carbon_wasted_kg"):
        assert accounted[key] == metrics[key]
    assert main(["carbon", "account", str(out / "out"), "--carbon", str(synthetic_file),
                 "--carbon-start", "2023-01-04T12:00Z"]) == 0
    shifted = json.loads(capsys.readouterr().out)
    assert shifted["carbon_total_kg"] != metrics["carbon_total_kg"]


def test_bad_signal_stops_the_run_before_it_starts(tmp_path: Path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp_utc,gco2_per_kwh\n2023-01-01T00:00Z,1\n2023-01-01T00:30Z,x\n")
    code = main(["run", "--platform", str(REPO_ROOT / "platforms" / "aoba-64.xml"),
                 "--workload", str(REPO_ROOT / "workloads" / "markovian-3000.json"),
                 "-o", str(tmp_path / "run"), "--carbon", str(bad)])
    assert code == 2
    assert "bad.csv: line 3: gco2_per_kwh is not a number" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
