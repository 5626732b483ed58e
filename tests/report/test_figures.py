"""Fig. 3 and Fig. 4: the tables hold the results' numbers and the drawing holds the tables'."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from snficon.report import figures as figs
from snficon.report.data import load_results
from tests.report.conftest import read_results_csv

J_PER_MWH = 3.6e9


@pytest.fixture(scope="module")
def frame(family_results: Path):
    return load_results(family_results)


def test_fig3_table_is_the_results_normalised_by_the_worst(family_results: Path, frame):
    figure = figs.base_comparison(frame)
    try:
        raw = read_results_csv(family_results)
        table = figure.table
        assert len(table) == 6
        for _, row in table.iterrows():
            policy = {"FCFS/B+IPM": "fcfsbIpm", "SNF+IPM": "snfIpm", "SNF-ICON": "snficon",
                      "SNF-ICON-NG": "snficon-ng", "SNF-ICON-NF": "snficon-nf",
                      "SNF-ICON-NGNF": "snficon-ngnf"}[row["policy"]]
            source = raw[("p8", "m120", policy, "")]
            assert row["AW (min)"] == pytest.approx(float(source["mean_wait"]) / 60)
            assert row["EW (MWh)"] == pytest.approx(float(source["energy_wasted"]) / J_PER_MWH)
        assert table["AW / max AW"].tolist() == pytest.approx(
            (table["AW (min)"] / table["AW (min)"].max()).tolist())
        ax = figure.figure.axes[0]
        heights = [patch.get_height() for patch in ax.patches]
        assert heights == pytest.approx(table["EW / max EW"].tolist())
        assert ax.lines[0].get_ydata().tolist() == pytest.approx(table["AW / max AW"].tolist())
        assert "EW" in figure.caption and "MWh" in figure.caption and "minutes" in figure.caption
    finally:
        plt.close(figure.figure)


def test_fig4_scores_are_min_max_within_the_panel_and_drawn(family_results: Path, frame):
    figure = figs.profiles(frame)
    try:
        table = figure.table
        assert table["policy"].tolist() == ["FCFS/B+IPM", "SNF+IPM", "SNF-ICON"]  # the paper's
        raw = read_results_csv(family_results)
        sources = [raw[("p8", "m120", p, "")] for p in ("fcfsbIpm", "snfIpm", "snficon")]
        for spoke, column, scale in (("AW", "mean_wait", 60), ("MW", "max_wait", 60),
                                     ("AS", "mean_slowdown", 1), ("AR", "mean_response", 60),
                                     ("EE", "energy_wasted", J_PER_MWH)):
            values = np.array([float(s[column]) for s in sources])
            span = values.max() - values.min()
            expected = (values.max() - values) / span if span > 0 else np.ones(3)
            assert table[f"{spoke} score"].tolist() == pytest.approx(expected.tolist()), spoke
            raw_title = {"EE": "EW (MWh)", "AS": "AS"}.get(spoke, f"{spoke} (min)")
            assert table[raw_title].tolist() == pytest.approx((values / scale).tolist())
        assert table["SU score"].tolist() == pytest.approx(
            [float(s["utilization"]) for s in sources])
        ax = figure.figure.axes[0]
        drawn = [line.get_ydata()[:-1] for line in ax.lines if line.get_label() in
                 set(table["policy"])]
        names = ["AW", "MW", "AS", "AR", "SU", "EE"]
        for values, (_, row) in zip(drawn, table.iterrows(), strict=True):
            assert list(values) == pytest.approx([row[f"{n} score"] for n in names])
        assert [t.get_text() for t in ax.get_yticklabels()] == ["0.25", "0.5", "0.75", "1"]
        title = figure.figure._suptitle.get_text()
        for words in ("AW: average wait", "MW: maximum wait", "AS: average slowdown",
                      "AR: average response", "SU: system utilization",
                      "EE: energy efficiency"):
            assert words in title
        assert "EE = (EW_max - EW) / (EW_max - EW_min)" in figure.caption
    finally:
        plt.close(figure.figure)
