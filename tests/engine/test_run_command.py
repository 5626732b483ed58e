"""``snficon run`` end to end: output files, metrics.json, decisions.csv, both engines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snficon.analysis.decision_log import read_decision_log
from snficon.cli import main
from snficon.conformance import compare_outputs

from .conftest import write_workload


@pytest.mark.parametrize("policy", ["snficon", "snfIpm", "fcfsbIpm"])
def test_run_writes_outputs_metrics_and_decisions(platform4: Path, tmp_path: Path, capsys,
                                                   policy: str):
    jobs = [{"id": i, "subtime": 40.0 * i, "res": 1 + i % 3} for i in range(1, 31)]
    jobs.append({"id": 99, "subtime": 5.0, "res": 7})  # larger than the platform: rejected
    workload = write_workload(tmp_path / "w.json", jobs)
    outputs = {}
    for engine in ("inprocess", "zmq"):
        folder = tmp_path / engine
        code = main(["run", "--platform", str(platform4), "--workload", str(workload),
                     "--policy", policy, "--set", "timeout=60", "--engine", engine,
                     "-o", str(folder)])
        assert code == 0
        metrics = json.loads((folder / "metrics.json").read_text())
        assert metrics["jobs"] == 30 and metrics["jobs_rejected"] == 1
        assert metrics["energy_total"] > metrics["energy_compute"] > 0
        rows = read_decision_log(folder / "decisions.csv")
        assert rows and sum(row["starts"] for row in rows) == 30
        outputs[engine] = folder / "out"
    assert compare_outputs(outputs["inprocess"], outputs["zmq"]) == []
    assert "mean wait" in capsys.readouterr().out


def test_unknown_option_is_refused(platform4: Path, tmp_path: Path, capsys):
    workload = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1}])
    code = main(["run", "--platform", str(platform4), "--workload", str(workload),
                 "--policy", "snficon", "--set", "alfa=3", "-o", str(tmp_path / "x")])
    assert code == 2
    assert "alfa" in capsys.readouterr().err
