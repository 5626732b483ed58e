"""Gantt chart of one run with its nodes' power states.

Jobs are drawn by evalys (``evalys.visu.gantt.GanttVisualization`` on the
run's ``out_jobs.csv``); evalys has no power-state view, so the states come
from ``out_pstate_changes.csv`` and are drawn on the same axes: pstate 0 is
left blank (on), -1 is switching on, -2 switching off, any other pstate is a
sleep state.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter, MultipleLocator  # noqa: E402

#: Default window of the chart, from time 0 (s).
WINDOW_S = 72 * 3600.0
STATE_STYLE = {-1: ("switching on", "#ff9800"), -2: ("switching off", "#e53935"),
               "sleep": ("asleep", "#90caf9")}
#: Background of the chart: a powered-on node running no job (idle).
IDLE_COLOUR = "#e9e9e9"
#: Opacity of the power-state patches.
STATE_ALPHA = 0.55


def parse_ids(text: str) -> list[int]:
    """``"0-3 7"`` -> ``[0, 1, 2, 3, 7]`` (Batsim interval sets)."""
    ids: list[int] = []
    for part in str(text).split():
        low, _, high = part.partition("-")
        ids.extend(range(int(low), int(high or low) + 1))
    return ids


def power_segments(path: Path, end: float) -> pd.DataFrame:
    """Rows (machine, start, stop, pstate) for every non-zero state before ``end``."""
    changes = pd.read_csv(path)
    current: dict[int, tuple[int, float]] = {}
    rows = []
    for time, machines, state in zip(changes["time"], changes["machine_id"],
                                     changes["new_pstate"], strict=True):
        if time > end:
            break
        for machine in parse_ids(machines):
            old = current.get(machine)
            if old is not None and old[0] != 0 and time > old[1]:
                rows.append((machine, old[1], float(time), old[0]))
            current[machine] = (int(state), float(time))
    for machine, (state, since) in current.items():
        if state != 0 and since < end:
            rows.append((machine, since, end, state))
    return pd.DataFrame(rows, columns=["machine", "start", "stop", "pstate"])


def gantt_figure(run_dir: Path, title: str, window_s: float = WINDOW_S):
    """The figure, a per-state summary (node-hours in the window) and a note, for ``run_dir``.

    The summary has one row per colour of the chart: jobs (computing), idle
    (on), switching on, switching off, asleep, in node-hours over the
    window [0, end] (end = the window or the last job's end, whichever is
    first).
    """
    from evalys.jobset import JobSet
    from evalys.visu import core
    from evalys.visu.gantt import NOLABEL, GanttVisualization

    jobs = pd.read_csv(run_dir / "out_jobs.csv")
    jobs = jobs[jobs["starting_time"].notna() & (jobs["starting_time"] >= 0)]
    end = min(window_s, float(jobs["finish_time"].max()))
    shown = jobs[jobs["starting_time"] < end]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "jobs.csv"
        shown.to_csv(path, index=False)
        with warnings.catch_warnings():  # evalys uses pandas APIs that pandas deprecates
            warnings.simplefilter("ignore")
            jobset = JobSet.from_csv(str(path))
    layout = core.SimpleLayout(wtitle=title)
    fig = layout.fig
    fig.set_size_inches(13, 6)
    plot = layout.inject(GanttVisualization, spskey="all", title=title)
    plot.labeler = NOLABEL
    plot.alpha = 0.6
    plot.build(jobset)
    ax = plot._ax
    summary = []
    pstates = run_dir / "out_pstate_changes.csv"
    nodes = int(jobset.res_bounds.sup) + 1
    segments = pd.DataFrame(columns=["machine", "start", "stop", "pstate"])
    if pstates.is_file():
        segments = power_segments(pstates, end)
        if not segments.empty:
            nodes = max(nodes, int(segments["machine"].max()) + 1)
    computing_h = float(sum((min(f, end) - s) * n for s, f, n in zip(
        shown["starting_time"], shown["finish_time"],
        shown["requested_number_of_resources"], strict=True))) / 3600
    off_h = 0.0
    for key, (name, hue) in STATE_STYLE.items():
        part = (segments[segments["pstate"] == key] if key != "sleep"
                else segments[segments["pstate"] > 0])
        for machine, start, stop in zip(part["machine"], part["start"], part["stop"],
                                        strict=True):
            ax.add_patch(mpatches.Rectangle((start, machine), stop - start, 1,
                                            facecolor=hue, edgecolor="none", alpha=STATE_ALPHA,
                                            zorder=0.8))
        hours = float((part["stop"] - part["start"]).sum()) / 3600
        off_h += hours
        summary.append({"state": name, "node-hours": hours})
    summary.insert(0, {"state": "idle (on, no job)",
                       "node-hours": nodes * end / 3600 - computing_h - off_h})
    summary.insert(0, {"state": "job (computing)", "node-hours": computing_h})
    ax.set_facecolor(IDLE_COLOUR)
    ax.set_axisbelow(True)
    ax.grid(True, color="white", linewidth=0.8, zorder=0.5)
    handles = [mpatches.Patch(facecolor="#7fb3a6", edgecolor="black", linewidth=0.6,
                              label="job (one colour per job)"),
               mpatches.Patch(facecolor=IDLE_COLOUR, edgecolor="#999999", linewidth=0.6,
                              label="idle (on, no job)")]
    handles += [mpatches.Patch(color=hue, alpha=STATE_ALPHA, label=name)
                for name, hue in STATE_STYLE.values()]
    ax.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.09),
              ncols=len(handles), frameon=False)
    ax.set_xlim(0, end)
    ax.set_ylim(0, nodes)
    step = max(1, round(end / 3600 / 8))
    ax.xaxis.set_major_locator(MultipleLocator(step * 3600))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value / 3600:g}"))
    ax.set_xlabel("simulated time (h)")
    ax.set_ylabel("node")
    ax.set_title(title, fontsize=10)
    note = (f"{len(shown)} jobs started in the first {end / 3600:g} h; node-hours per colour "
            "of the chart in that window below (jobs cut at the window's end).")
    return fig, pd.DataFrame(summary, columns=["state", "node-hours"]), note


def close(fig) -> None:
    plt.close(fig)
