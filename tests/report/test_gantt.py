"""The Gantt chart: node-hours per colour against Batsim's own machine-state counts."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from snficon.report.gantt import IDLE_COLOUR, STATE_STYLE, gantt_figure
from tests.report.conftest import read_results_csv

#: out_machine_states.csv column of each row of the chart's table.
STATE_COLUMNS = {"job (computing)": "nb_computing", "idle (on, no job)": "nb_idle",
                 "switching on": "nb_switching_on", "switching off": "nb_switching_off",
                 "asleep": "nb_sleeping"}


def machine_state_hours(path: Path, nodes: int, end: float
                        ) -> dict[str, tuple[float, float]]:
    """Node-hours in each state over [0, end] from Batsim's out_machine_states.csv (a step
    function of machine counts; all nodes idle before its first row), with the error bound
    of its time column: Batsim writes 6 significant digits (1 s at 1e5 s), so each count
    change may be placed up to half a unit of the last digit off."""
    states = pd.read_csv(path)
    times = np.concatenate([[0.0], states["time"].to_numpy(float), [end]])
    resolution = 0.5 * 10.0 ** (np.floor(np.log10(np.maximum(times[1:-1], 1.0))) - 5)
    hours = {}
    for name, column in STATE_COLUMNS.items():
        counts = np.concatenate([[nodes if column == "nb_idle" else 0],
                                 states[column].to_numpy(float)])
        spans = np.diff(np.clip(times, 0, end))
        changes = np.abs(np.diff(counts)) * (times[1:-1] <= end)
        hours[name] = (float((counts * spans).sum()) / 3600,
                       float((changes * resolution).sum()) / 3600)
    return hours


@pytest.mark.parametrize("window_h", [3.0, 1000.0])
def test_gantt_node_hours_match_batsims_machine_states(family_results: Path, window_h: float):
    run = read_results_csv(family_results)[("p8", "m120", "snficon", "")]
    folder = family_results / "runs" / run["id"]
    fig, table, _ = gantt_figure(folder, "snficon", window_s=window_h * 3600)
    try:
        end = min(window_h * 3600, float(run["makespan"]))
        expected = machine_state_hours(folder / "out_machine_states.csv", 8, end)
        got = dict(zip(table["state"], table["node-hours"], strict=True))
        assert set(got) == set(STATE_COLUMNS)
        for name, (hours, bound) in expected.items():
            assert got[name] == pytest.approx(hours, abs=bound + 1e-9), name
        assert sum(got.values()) == pytest.approx(8 * end / 3600)
        assert got["asleep"] > 0 and got["job (computing)"] > 0
        ax = fig.axes[0]
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == ["job (one colour per job)", "idle (on, no job)",
                          *(name for name, _ in STATE_STYLE.values())]
        assert to_hex(ax.get_facecolor()) == IDLE_COLOUR
        assert ax.get_axisbelow() is True
        grid_z = ax.xaxis.get_gridlines()[0].get_zorder()
        states = [p for p in ax.patches if p.get_zorder() == 0.8]
        assert states and all(p.get_zorder() > grid_z for p in states)
        assert ax.get_xlabel() == "simulated time (h)"
    finally:
        plt.close(fig)
