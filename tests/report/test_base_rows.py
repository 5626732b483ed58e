"""Which run stands for a policy in Fig. 3 and 4: defaults, or a trained RL model."""

from __future__ import annotations

import csv
from pathlib import Path

from snficon.report.data import base_rows, load_results

COLUMNS = ["id", "status", "policy", "platform", "workload", "options", "mean_wait"]


def _results(folder: Path, rows: list[tuple[str, str, str, float]]) -> Path:
    with open(folder / "results.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for i, (policy, workload, options, wait) in enumerate(rows):
            writer.writerow([f"r{i}", "done", policy, "aoba-64", workload, options, wait])
    return folder


def test_trained_model_is_the_base_run_and_variants_are_not(tmp_path: Path):
    folder = _results(tmp_path, [
        ("snficon", "fs1", "", 1.0),
        ("snficon", "fs1", "t_m=3600", 2.0),               # a sweep point, not the base
        ("rlBudiarjo", "fs1", "", 3.0),                     # the untrained network
        ("rlBudiarjo", "fs1", "model=m/fs1-seed1.pt", 5.0),
        ("rlBudiarjo", "fs1", "model=m/fs1-seed0.pt", 4.0),
        ("rlBudiarjo", "fs1", "model=m/fs1-seed0.pt period=60", 6.0),
        ("rlBudiarjo", "fs2", "", 7.0),                     # no trained model for fs2
    ])
    base = base_rows(load_results(folder))
    picked = {(row.policy, row.workload): row.mean_wait for row in base.itertuples()}
    assert picked == {("snficon", "fs1"): 1.0, ("rlBudiarjo", "fs1"): 4.0,
                      ("rlBudiarjo", "fs2"): 7.0}
