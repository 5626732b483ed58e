"""Fig. 6 and Fig. 10: the results' points, the Pareto front, and identical points kept visible."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from snficon.report import tradeoff
from snficon.report.data import load_results
from snficon.report.tradeoff import OFFSET_PT, identical_groups, marker_offsets
from tests.report.conftest import read_results_csv

LABELS = {"FCFS/B+IPM": "fcfsbIpm", "SNF+IPM": "snfIpm", "SNF-ICON": "snficon",
          "SNF-ICON-NG": "snficon-ng", "SNF-ICON-NF": "snficon-nf",
          "SNF-ICON-NGNF": "snficon-ngnf"}


def test_identical_groups():
    x = np.array([1.0, 2.0, 1.0, 3.0, 2.0 * (1 + 1e-12), 1.0 + 1e-6])
    y = np.array([5.0, 6.0, 5.0, 7.0, 6.0, 5.0])
    assert identical_groups(x, y) == [[0, 2], [1, 4]]
    assert identical_groups(x[:1], y[:1]) == []


def test_marker_offsets_are_distinct_and_at_the_radius():
    assert marker_offsets(1) == [(0.0, 0.0)]
    for count in (2, 3, 4):
        offsets = np.array(marker_offsets(count))
        assert len({tuple(np.round(o, 9)) for o in offsets}) == count
        assert np.hypot(offsets[:, 0], offsets[:, 1]) == pytest.approx([OFFSET_PT] * count)


def test_fig6_points_front_and_identical_results(family_results: Path):
    figure = tradeoff.pareto(load_results(family_results))
    try:
        raw = read_results_csv(family_results)
        table = figure.table
        assert sorted(table["policy"]) == sorted(LABELS)
        wait = {label: float(raw[("p8", "m120", LABELS[label], "")]["mean_wait"]) / 60
                for label in LABELS}
        waste = {label: float(raw[("p8", "m120", LABELS[label], "")]["energy_wasted"]) / 3.6e9
                 for label in LABELS}
        for _, row in table.iterrows():
            assert row["AW (min)"] == pytest.approx(wait[row["policy"]])
            assert row["EW (MWh)"] == pytest.approx(waste[row["policy"]])
            dominated = any((wait[o] <= wait[row["policy"]] and waste[o] <= waste[row["policy"]])
                            and (wait[o] < wait[row["policy"]] or waste[o] < waste[row["policy"]])
                            for o in LABELS)
            assert row["Pareto"] == ("no" if dominated else "yes")
            twins = sorted(o for o in LABELS if o != row["policy"] and wait[o] == wait[
                row["policy"]] and waste[o] == waste[row["policy"]])
            assert sorted(filter(None, row["identical to"].split(", "))) == twins
        # This workload makes SNF-ICON and SNF-ICON-NG identical (the gate never closes).
        assert "SNF-ICON-NG" in table.set_index("policy").loc["SNF-ICON", "identical to"]
        assert any("SNF-ICON = SNF-ICON-NG" in note for note in figure.notes)
        ax = figure.figure.axes[0]
        figure.figure.canvas.draw()
        markers = {line.get_label(): line for line in ax.lines if line.get_marker() != "None"}
        assert set(markers) == set(LABELS)
        for label, line in markers.items():  # data coordinates are the exact values
            assert line.get_xdata()[0] == pytest.approx(wait[label])
            assert line.get_ydata()[0] == pytest.approx(waste[label])
            filled = line.get_markerfacecolor() != "none"
            assert filled == (table.set_index("policy").loc[label, "Pareto"] == "yes")
        a, b = (markers[name].get_transform().transform(
            (markers[name].get_xdata()[0], markers[name].get_ydata()[0]))
            for name in ("SNF-ICON", "SNF-ICON-NG"))
        apart_px = float(np.hypot(*(a - b)))
        group = 1 + len(table.set_index("policy").loc["SNF-ICON", "identical to"].split(", "))
        chord_pt = 2 * OFFSET_PT * np.sin(np.pi / group)  # neighbours on the offset circle
        assert apart_px == pytest.approx(chord_pt * figure.figure.dpi / 72, rel=1e-6)
        xlow, xhigh = ax.get_xlim()
        assert all(xlow < w < xhigh for w in wait.values())  # every point inside the axes
        legend = [t.get_text() for t in figure.figure.legends[0].get_texts()]
        assert all(legend.count(label) == 1 for label in LABELS)
        assert "min" in ax.get_xlabel() and "MWh" in ax.get_ylabel()
    finally:
        plt.close(figure.figure)
