"""Fig. 6 and Fig. 10: mean waiting time against wasted energy, with the Pareto frontier.

Policies whose results are identical (same mean wait and wasted energy, e.g.
SNF-ICON and SNF-ICON-NG when the gate never closes) would hide each other's
marker: :func:`identical_groups` finds them, their markers are drawn a few
points apart around the true position, each panel names them, and so do the
caption's notes and the table's ``identical to`` column.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import offset_copy

from snficon.report.data import (
    J_PER_MWH,
    S_PER_MIN,
    cases,
    cross_platform_rows,
    pareto_mask,
    tradeoff_rows,
)
from snficon.report.figures import WAIT_DEFINITION, WASTE_DEFINITION
from snficon.report.panels import (
    Figure,
    column,
    legend_below,
    marker_handles,
    panel_grid,
    style_handles,
)
from snficon.report.style import policy_colour, policy_marker

#: Two results are identical when both coordinates agree to this relative tolerance.
IDENTICAL_RTOL = 1e-9
#: How far apart (points) the markers of identical results are drawn.
OFFSET_PT = 5.0


def identical_groups(x: np.ndarray, y: np.ndarray, rtol: float = IDENTICAL_RTOL
                     ) -> list[list[int]]:
    """Groups (two or more indices, in order) of points with equal ``x`` and ``y`` (to ``rtol``)."""
    def same(a: float, b: float) -> bool:
        return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-300)

    groups: list[list[int]] = []
    placed: set[int] = set()
    for i in range(len(x)):
        if i in placed:
            continue
        group = [i] + [j for j in range(i + 1, len(x))
                       if j not in placed and same(x[i], x[j]) and same(y[i], y[j])]
        if len(group) > 1:
            groups.append(group)
            placed.update(group)
    return groups


def marker_offsets(count: int, radius: float = OFFSET_PT) -> list[tuple[float, float]]:
    """Offsets (points) spreading ``count`` markers on a circle; (0, 0) for a single one."""
    if count <= 1:
        return [(0.0, 0.0)]
    angles = np.pi + 2 * np.pi * np.arange(count) / count
    return [(radius * float(np.cos(a)), radius * float(np.sin(a))) for a in angles]


def tradeoff_panel(ax, rows: pd.DataFrame, frontier: str = "step") -> tuple[list[dict], list[str]]:
    """Mean wait (min) against wasted energy (MWh) of ``rows`` on ``ax``, the front joined.

    ``frontier`` is ``step`` (Fig. 6) or ``dashed`` (Fig. 10: dashed segments
    between the nondominated points). Nondominated points are filled, the
    others hollow. Returns one record per row and the sentences naming the
    identical results.
    """
    x, y = column(rows, "mean_wait", S_PER_MIN), column(rows, "energy_wasted", J_PER_MWH)
    labels, policies = list(rows["label"]), list(rows["policy"])
    front = pareto_mask(x, y)
    order = np.argsort(x[front])
    if frontier == "dashed":
        ax.plot(x[front][order], y[front][order], "k--", linewidth=1, label="Pareto frontier",
                zorder=2)
    else:
        ax.step(x[front][order], y[front][order], where="post", color="k", linewidth=1,
                label="Pareto frontier", zorder=2)
    groups = identical_groups(x, y)
    shift = {i: (0.0, 0.0) for i in range(len(x))}
    partners: dict[int, list[str]] = {}
    for group in groups:
        for i, offset in zip(group, marker_offsets(len(group)), strict=True):
            shift[i] = offset
            partners[i] = [labels[j] for j in group if j != i]
    for i in range(len(x)):
        hue = policy_colour(policies[i])
        where = offset_copy(ax.transData, fig=ax.figure, x=shift[i][0], y=shift[i][1],
                            units="points")
        ax.plot([x[i]], [y[i]], linestyle="none", marker=policy_marker(policies[i]),
                markersize=7, markeredgecolor=hue, markerfacecolor=hue if front[i] else "none",
                markeredgewidth=1.4, label=labels[i], transform=where, zorder=3)
    finite = np.isfinite(x) & np.isfinite(y)
    if finite.any():  # markers drawn through an offset transform do not move the limits
        ax.update_datalim(np.column_stack([x[finite], y[finite]]))
        ax.autoscale_view()
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.yaxis.set_major_locator(MaxNLocator(6))
    sentences = [" = ".join(labels[i] for i in group) for group in groups]
    if sentences:
        ax.text(0.02, 0.02, "identical: " + "; ".join(sentences), transform=ax.transAxes,
                fontsize=6.5, va="bottom", ha="left", color="#333333",
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1})
    ax.set_xlabel("mean waiting time AW (min)")
    ax.set_ylabel("wasted energy EW (MWh)")
    ax.grid(alpha=0.3)
    ax.set_axisbelow(True)
    ax.margins(0.12)
    records = [{"policy": labels[i], "AW (min)": x[i], "EW (MWh)": y[i],
                "Pareto": "yes" if front[i] else "no",
                "identical to": ", ".join(partners.get(i, []))} for i in range(len(x))]
    return records, sentences


def _frontier_handle(style: str) -> list:
    return [Line2D([], [], color="black", linestyle=style, linewidth=1, label="Pareto frontier")]


TRADEOFF_CAPTION = (f"x: {WAIT_DEFINITION}; y: {WASTE_DEFINITION}. Filled markers are "
                    "nondominated (no other policy of the panel has both a lower or equal AW "
                    "and EW, one of them lower), hollow ones dominated; the black line is the "
                    "empirical Pareto frontier. Markers of identical results are drawn a few "
                    "points apart around their common position and named in the panel.")


def pareto(frame: pd.DataFrame) -> Figure | None:
    """Fig. 6: the policies' mean waiting time against wasted energy, per base case."""
    base = tradeoff_rows(frame)
    if base.empty:
        return None
    panels = cases(base)
    fig, axes = panel_grid(len(panels))
    records, notes = [], []
    for ax, case in zip(axes, panels, strict=True):
        panel, same = tradeoff_panel(ax, base[base["case"] == case])
        records += [{"case": case, **record} for record in panel]
        notes += [f"{case}: {sentence} (identical mean wait and wasted energy)."
                  for sentence in same]
        ax.set_title(case, fontsize=9)
    fig.suptitle("Waiting time vs energy waste at default options "
                 "(filled: nondominated, hollow: dominated)")
    fig.tight_layout()
    legend_below(fig, marker_handles(base, _frontier_handle("-") + style_handles()))
    caption = ("Each panel is one platform / workload case at default options. " +
               TRADEOFF_CAPTION)
    return Figure("pareto", "Waiting-time / energy trade-off (Fig. 6)", fig,
                  pd.DataFrame(records), caption, notes or ["No two policies' results are "
                                                            "identical in any panel."])


def cross_platform(frame: pd.DataFrame) -> Figure | None:
    """Fig. 10: per workload run on several platforms, one trade-off panel per platform.

    As in the paper, each workload is a row of panels (its platforms side by
    side, e.g. AOBA then Taurus), each panel the policies' mean waiting time
    against wasted energy with dashed segments joining the nondominated
    points. Panels keep their own scales: the platforms' powers differ too
    much for a shared axis. ``None`` when no workload ran on two platforms.
    """
    rows = cross_platform_rows(frame)
    if rows.empty:
        return None
    workloads = list(dict.fromkeys(rows["workload"]))
    columns = int(rows.groupby("workload")["platform"].nunique().max())
    fig, axes = plt.subplots(len(workloads), columns, squeeze=False,
                             figsize=(4.8 * columns, 3.6 * len(workloads)))
    records, notes, drawn, letter = [], [], [], iter("abcdefghijklmnopqrstuvwxyz")
    for line, workload in zip(axes, workloads, strict=True):
        sub = rows[rows["workload"] == workload]
        platforms = list(dict.fromkeys(sub["platform"]))
        for ax in line[len(platforms):]:
            ax.set_visible(False)
        for ax, platform in zip(line, platforms, strict=False):
            panel, same = tradeoff_panel(ax, sub[sub["platform"] == platform],
                                         frontier="dashed")
            records += [{"workload": workload, "platform": platform, **record}
                        for record in panel]
            notes += [f"{platform} / {workload}: {sentence} (identical mean wait and wasted "
                      "energy)." for sentence in same]
            ax.set_title(f"({next(letter, '?')}) {platform} {workload}", fontsize=9)
            drawn.append(ax)
    fig.suptitle("Cross-platform waiting time vs energy waste "
                 "(filled: nondominated, hollow: dominated)")
    fig.tight_layout()
    legend_below(fig, marker_handles(rows, _frontier_handle("--") + style_handles()))
    caption = ("Each workload run on more than one platform, at default options; one panel "
               "per platform, each on its own scales. " +
               TRADEOFF_CAPTION.replace("the black line is", "dashed segments join the "
                                        "nondominated points:"))
    return Figure("cross_platform", "Cross-platform comparison (Fig. 10)", fig,
                  pd.DataFrame(records), caption,
                  notes or ["No two policies' results are identical in any panel."])
