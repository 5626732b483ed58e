"""Fig. 8 and Fig. 9: the sweep paths in the wait-energy plane, baselines and the front."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from snficon.report import sweeps
from snficon.report.data import load_results
from tests.report.conftest import read_results_csv

POLICIES = {"SNF-ICON": "snficon", "SNF-ICON-NG": "snficon-ng", "SNF-ICON-NF": "snficon-nf",
            "SNF-ICON-NGNF": "snficon-ngnf", "FCFS/B+IPM": "fcfsbIpm", "SNF+IPM": "snfIpm"}


@pytest.fixture(scope="module")
def frame(family_results: Path):
    return load_results(family_results)


def _source(raw: dict, row) -> dict:
    if row["role"] == "baseline":
        return raw[("p8", "m120", POLICIES[row["policy"]], "")]
    hours = row["T_M (h)"]
    options = "" if hours == 2 else f"t_m={hours * 3600:g}"
    return raw[("p8", "m120", POLICIES[row["policy"]], options)]


def test_fig8_plane_holds_every_sweep_point_and_the_baselines(family_results: Path, frame):
    figure = sweeps.sweep_plane(frame, "t_m")
    try:
        raw = read_results_csv(family_results)
        table = figure.table
        sweep = table[table["role"] == "sweep"]
        assert len(sweep) == 4 * 3  # four variants x (0.5 h, 2 h default, 4 h)
        assert sorted(set(sweep["T_M (h)"])) == [0.5, 2.0, 4.0]
        assert sorted(table.loc[table["role"] == "baseline", "policy"]) == [
            "FCFS/B+IPM", "SNF+IPM"]
        for _, row in table.iterrows():
            source = _source(raw, row)
            assert row["AW (min)"] == pytest.approx(float(source["mean_wait"]) / 60)
            assert row["EW (MWh)"] == pytest.approx(float(source["energy_wasted"]) / 3.6e9)
        x, y = table["AW (min)"].to_numpy(), table["EW (MWh)"].to_numpy()
        for i, flag in enumerate(table["Pareto"]):
            dominated = np.any((x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i])))
            assert flag == ("no" if dominated else "yes")
        ax = figure.figure.axes[0]
        # each variant's path runs through its points in increasing T_M
        paths = [line for line in ax.lines if line.get_linestyle() == "-"
                 and len(line.get_xdata()) == 3]
        assert len(paths) == 4
        by_policy = {label: group.sort_values("T_M (h)") for label, group in sweep.groupby(
            "policy")}
        drawn = sorted(tuple(np.round(line.get_xdata(), 9)) for line in paths)
        expected = sorted(tuple(np.round(g["AW (min)"].to_numpy(), 9))
                          for g in by_policy.values())
        assert drawn == expected
        assert "average waiting time AW (min)" == ax.get_xlabel()
        assert "MWh" in ax.get_ylabel()
        labels = [t.get_text() for t in ax.texts]
        # NF ignores the screen, so T_M changes nothing: its path is one point, said so
        assert "0.5-4 h: all equal" in labels
        assert any("SNF-ICON-NGNF = SNF-ICON-NF" in note for note in figure.notes)
        legend = [t.get_text() for t in figure.figure.legends[0].get_texts()]
        assert "Pareto frontier" in legend and "FCFS/B+IPM (default)" in legend
    finally:
        plt.close(figure.figure)


def test_fig9_alpha_plane_and_per_metric_view(family_results: Path, frame):
    figure = sweeps.sweep_plane(frame, "alpha")
    metrics = sweeps.sweep_metrics(frame, "alpha")
    try:
        sweep = figure.table[figure.table["role"] == "sweep"]
        assert sorted(set(sweep["alpha"])) == [10, 5000, 20000]
        assert sorted(set(sweep["policy"])) == ["SNF-ICON", "SNF-ICON-NF"]
        per_metric = metrics.table.sort_values(["policy", "alpha"]).reset_index(drop=True)
        plane = sweep.sort_values(["policy", "alpha"]).reset_index(drop=True)
        assert per_metric["AW (min)"].tolist() == pytest.approx(plane["AW (min)"].tolist())
        assert per_metric["EW (MWh)"].tolist() == pytest.approx(plane["EW (MWh)"].tolist())
        assert metrics.figure.axes[0].get_xscale() == "log"
    finally:
        plt.close(figure.figure)
        plt.close(metrics.figure)
