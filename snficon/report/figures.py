"""Fig. 3 (base comparison) and Fig. 4 (multi-metric profiles) of the paper.

The other figures have their own modules: Fig. 5 :mod:`snficon.report.modes`,
Fig. 6 and 10 :mod:`snficon.report.tradeoff`, Fig. 7
:mod:`snficon.report.size_bins`, Fig. 8 and 9 :mod:`snficon.report.sweeps`,
the Gantt chart :mod:`snficon.report.gantt`. Every builder takes the results
frame (see :mod:`snficon.report.data`) and returns a
:class:`~snficon.report.panels.Figure` or ``None`` when the results hold
nothing to draw.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from snficon.report.data import (
    J_PER_MWH,
    PROFILE_METRICS,
    S_PER_MIN,
    base_rows,
    cases,
    profile_scores,
)
from snficon.report.panels import (
    Figure,
    column,
    figure_legend,
    label_ranks,
    legend_below,
    panel_grid,
)
from snficon.report.style import policy_colour

#: Definitions shared by the captions (SPEC section 6, the paper's window [0, last job end]).
WAIT_DEFINITION = ("AW, the average wait: mean of start - submission over the jobs that ran, "
                   "in minutes")
WASTE_DEFINITION = ("EW, the wasted energy: energy of every node while not computing (idle, "
                    "switching on or off, asleep) from time 0 to the last job's end, in MWh")

#: The policies of the paper's Fig. 4; the variants are in Fig. 6. RL Budiarjo's row is its run
#: with a trained model when the campaign has one (:func:`snficon.report.data.base_rows`),
#: else the ``untrained`` network.
PROFILE_POLICIES = ("fcfsbIpm", "snfIpm", "snficon", "rlBudiarjo")

#: How each radar spoke's raw value is shown in the Fig. 4 table: column title and divisor.
PROFILE_UNITS = {"AW": ("AW (min)", S_PER_MIN), "MW": ("MW (min)", S_PER_MIN),
                 "AS": ("AS", 1.0), "AR": ("AR (min)", S_PER_MIN), "SU": ("SU", 1.0),
                 "EE": ("EW (MWh)", J_PER_MWH)}


def base_comparison(frame: pd.DataFrame) -> Figure | None:
    """Fig. 3: per case, EW/max EW as bars and AW/max AW as a line (worst in the panel = 1)."""
    base = base_rows(frame)
    if base.empty:
        return None
    panels = cases(base)
    fig, axes = panel_grid(len(panels))
    records = []
    for ax, case in zip(axes, panels, strict=True):
        rows = base[base["case"] == case]
        wait, waste = column(rows, "mean_wait", S_PER_MIN), column(rows, "energy_wasted",
                                                                   J_PER_MWH)
        wait_n = wait / np.nanmax(wait) if np.nanmax(wait) > 0 else wait * 0
        waste_n = waste / np.nanmax(waste) if np.nanmax(waste) > 0 else waste * 0
        x = np.arange(len(rows))
        ax.set_axisbelow(True)
        ax.grid(axis="y", alpha=0.3)
        ax.bar(x, waste_n, color=[policy_colour(p) for p in rows["policy"]], alpha=0.75,
               label="EW / max EW (bars)")
        ax.plot(x, wait_n, "k-o", label="AW / max AW (line)")
        ax.set_xticks(x, rows["label"], rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, 1.1)
        ax.set_title(case, fontsize=9)
        ax.set_ylabel("value / worst in panel")
        for i, (_, row) in enumerate(rows.iterrows()):
            records.append({"case": case, "policy": row["label"], "AW (min)": wait[i],
                            "EW (MWh)": waste[i], "AW / max AW": wait_n[i],
                            "EW / max EW": waste_n[i]})
    fig.suptitle("Base configuration: wasted energy EW (bars) and average wait AW (line), "
                 "each over the panel's worst")
    fig.tight_layout()
    legend_below(fig, [Patch(facecolor="#999999", alpha=0.75, label="EW / max EW (bars)"),
                       Line2D([], [], color="black", marker="o", label="AW / max AW (line)")])
    caption = (f"Each panel is one platform / workload case at default options (Table I). "
               f"Bars: {WASTE_DEFINITION}; line: {WAIT_DEFINITION}; both divided by the "
               "largest value in the panel (worst = 1). The table gives the raw values.")
    return Figure("base_comparison", "Base comparison (Fig. 3)", fig, pd.DataFrame(records),
                  caption)


def profiles(frame: pd.DataFrame) -> Figure | None:
    """Fig. 4: radar charts of AW, MW, AS, AR, SU and EE, efficiency scores in [0, 1]."""
    base = base_rows(frame)
    paper = base[base["policy"].isin(PROFILE_POLICIES)]
    base = paper if not paper.empty else base
    if base.empty:
        return None
    panels = cases(base)
    names = [name for _, name, _, _ in PROFILE_METRICS]
    angles = np.linspace(0, 2 * np.pi, len(names), endpoint=False)
    closed = np.append(angles, angles[0])
    fig, axes = panel_grid(len(panels), polar=True, height=4.0)
    records = []
    for ax, case in zip(axes, panels, strict=True):
        rows = base[base["case"] == case]
        scores = profile_scores(rows)
        for index, row in rows.iterrows():
            values = scores.loc[index, names].to_numpy(dtype=float)
            hue = policy_colour(row["policy"])
            ax.plot(closed, np.append(values, values[0]), color=hue, label=row["label"],
                    linewidth=1.4)
            ax.fill(closed, np.append(values, values[0]), color=hue, alpha=0.08)
            raw = {}
            for metric, name, _, _ in PROFILE_METRICS:
                title, scale = PROFILE_UNITS[name]
                raw[title] = column(rows.loc[[index]], metric, scale)[0]
            records.append({"case": case, "policy": row["label"], **raw,
                            **{f"{n} score": float(v) for n, v in zip(names, values,
                                                                     strict=True)}})
        ax.set_xticks(angles, names, fontsize=9)
        ax.set_ylim(0, 1.0)
        ax.set_yticks([0.25, 0.5, 0.75, 1.0], ["0.25", "0.5", "0.75", "1"], fontsize=6,
                      color="#555555")
        ax.set_rlabel_position(180 / len(names))
        ax.set_title(case, fontsize=9, pad=14)
    fig.suptitle("Normalised multi-metric profiles (larger is better)\n"
                 "AW: average wait, MW: maximum wait, AS: average slowdown, AR: average "
                 "response, SU: system utilization, EE: energy efficiency", fontsize=10)
    fig.tight_layout()
    figure_legend(fig, axes, rank=label_ranks(base))
    caption = ("Per base case, FCFS/B+IPM, SNF+IPM and SNF-ICON as in the paper (the "
               "variants are in Fig. 6). Spokes: AW average wait (mean of start - "
               "submission, min), MW maximum wait (min), AS average slowdown ((finish - "
               "submission) / runtime, jobs with a "
               "positive runtime), AR average response (mean of finish - submission, min), "
               "SU system utilization (computing node-seconds / (nodes x last job end)), EE "
               "energy efficiency. As in the paper, the delay metrics and the wasted energy "
               "EW are turned into efficiency scores within each panel, score = (max - value) "
               "/ (max - min) over the panel's policies (best 1, worst 0; 1 when all are "
               "equal), so EE = (EW_max - EW) / (EW_max - EW_min); SU is drawn as it is. "
               "Each spoke is scaled on its own, so the profiles show balance, not effect "
               "size. The table gives the raw values and the scores drawn.")
    notes = ["EE here is the paper's score of the wasted energy; the `ee` column of "
             "metrics.json (computing energy / total energy) is a different quantity and "
             "is left off the radar."]
    return Figure("profiles", "Multi-metric profiles (Fig. 4)", fig, pd.DataFrame(records),
                  caption, notes)
