"""Fig. 8 (T_M sweep) and Fig. 9 (alpha sweep): the wait-energy plane, and per metric.

The paper draws each sweep in the plane of average waiting time and total
wasted energy: per case, each SNF-ICON variant's points, one per swept value,
joined in the order of the value (a path), the value written at the path's
ends and encoded by the marker's size; the heuristic baselines at default
options as reference points; and the empirical Pareto frontier over all the
panel's points. :func:`sweep_plane` draws that; :func:`sweep_metrics` keeps
the secondary view, each metric against the swept value.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.transforms import offset_copy

from snficon.report.data import (
    J_PER_MWH,
    S_PER_MIN,
    SWEEPS,
    base_rows,
    cases,
    pareto_mask,
    sweep_rows,
)
from snficon.report.figures import WAIT_DEFINITION, WASTE_DEFINITION
from snficon.report.panels import (
    Figure,
    column,
    figure_legend,
    label_ranks,
    legend_below,
    marker_handles,
    panel_grid,
    style_handles,
)
from snficon.report.style import BASELINES, policy_colour, policy_label, policy_marker
from snficon.report.tradeoff import IDENTICAL_RTOL, OFFSET_PT

#: Fig. numbers of the sweeps.
FIGURE_NUMBER = {"t_m": "8", "alpha": "9"}
#: The swept options' symbols in sentences.
SYMBOL = {"t_m": "T_M", "alpha": "alpha"}
#: Swept value -> displayed value (T_M in hours).
SCALE = {"t_m": 1 / 3600, "alpha": 1.0}


def value_text(option: str, value: float) -> str:
    """``"2 h"`` for T_M, ``"alpha = 5000"`` for alpha."""
    shown = value * SCALE.get(option, 1.0)
    return f"{shown:g} h" if option == "t_m" else f"{SWEEPS.get(option, option)} = {shown:g}"


def range_text(option: str, low: float, high: float) -> str:
    """``"1-24 h"`` for T_M, ``"alpha = 10-20000"`` for alpha."""
    scale = SCALE.get(option, 1.0)
    span = f"{low * scale:g}-{high * scale:g}"
    return f"{span} h" if option == "t_m" else f"{SWEEPS.get(option, option)} = {span}"


def _sizes(values: np.ndarray, low: float = 4.0, high: float = 10.0) -> dict[float, float]:
    """Marker size (points) of each distinct value, growing with its rank."""
    distinct = np.unique(values[np.isfinite(values)])
    if len(distinct) <= 1:
        return {float(v): (low + high) / 2 for v in distinct}
    return {float(v): low + (high - low) * k / (len(distinct) - 1)
            for k, v in enumerate(distinct)}


def _same_path(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    return (len(a[0]) == len(b[0]) and bool(np.allclose(a[0], b[0], rtol=IDENTICAL_RTOL, atol=0))
            and bool(np.allclose(a[1], b[1], rtol=IDENTICAL_RTOL, atol=0)))


def _draw_path(ax, policy: str, x: np.ndarray, y: np.ndarray, values: np.ndarray,
               front: np.ndarray, sizes: dict[float, float], shift: float, option: str,
               spans: tuple[float, float], centre: tuple[float, float],
               labelled: bool = True) -> list:
    """One variant's points in increasing swept value, joined, sized and labelled at the ends.

    Returns the labels drawn (for :func:`_separate_labels`).

    ``spans`` are the panel's data ranges (x, y) and ``centre`` its centre, to place
    the labels away from the path.
    """
    hue, marker = policy_colour(policy), policy_marker(policy)
    where = offset_copy(ax.transData, fig=ax.figure, x=shift, y=0.0, units="points")
    ax.plot(x, y, color=hue, linewidth=0.9, alpha=0.8, zorder=2, transform=where)
    for xi, yi, vi, fi in zip(x, y, values, front, strict=True):
        ax.plot([xi], [yi], linestyle="none", marker=marker, markersize=sizes[float(vi)],
                markeredgecolor=hue, markerfacecolor=hue if fi else "none",
                markeredgewidth=1.2, zorder=3, transform=where)
    if not labelled:
        return []
    flat = len(x) > 1 and np.allclose(x, x[0], rtol=IDENTICAL_RTOL, atol=0) and np.allclose(
        y, y[0], rtol=IDENTICAL_RTOL, atol=0)
    if flat:
        ends = [(0, -1, f"{range_text(option, values[0], values[-1])}: all equal")]
    else:
        ends = [(0, 1, value_text(option, values[0]))] + (
            [(len(x) - 1, len(x) - 2, value_text(option, values[-1]))] if len(x) > 1 else [])
    labels = []
    for k, neighbour, text in ends:
        # away from the path: from the neighbouring point through this one, in axis units
        towards = centre if neighbour < 0 else (x[neighbour], y[neighbour])
        dx, dy = (x[k] - towards[0]) / spans[0], (y[k] - towards[1]) / spans[1]
        if neighbour < 0:  # a flat path: its label towards the panel's centre
            dx, dy = -dx, -dy
        norm = float(np.hypot(dx, dy))
        dx, dy = (dx / norm, dy / norm) if norm > 0 else (0.7, 0.7)
        labels.append(ax.annotate(text, (x[k], y[k]), xytext=(9 * dx, 9 * dy),
                                  textcoords="offset points", fontsize=6.5, color=hue,
                                  ha="left" if dx >= 0 else "right",
                                  va="bottom" if dy >= 0 else "top"))
    return labels


def _separate_labels(fig, labels: list, rounds: int = 8) -> None:
    """Move each path-end label that overlaps an earlier one of its panel by one line
    (up or down, away from it), so coincident path ends stay readable."""
    renderer = fig.canvas.get_renderer()
    for _ in range(rounds):
        moved = False
        boxes = []
        for label in labels:
            box = label.get_window_extent(renderer)
            clash = next((other for other in boxes if box.overlaps(other)), None)
            if clash is not None:
                step = box.height * 72 / fig.dpi + 1.0
                sign = 1.0 if box.y0 >= clash.y0 else -1.0
                dx, dy = label.xyann
                label.xyann = (dx, dy + sign * step)
                box = label.get_window_extent(renderer)
                moved = True
            boxes.append(box)
        if not moved:
            return


def sweep_plane(frame: pd.DataFrame, option: str) -> Figure | None:
    """Fig. 8-9: per case, AW (min) against EW (MWh) along each variant's sweep path."""
    rows = sweep_rows(frame, option)
    if rows.empty:
        return None
    panels = cases(rows)
    base = base_rows(frame)
    fig, axes = panel_grid(len(panels), width=5.2, height=4.2)
    records, notes, panel_labels = [], [], []
    for ax, case in zip(axes, panels, strict=True):
        sub = rows[rows["case"] == case]
        baselines = base[(base["case"] == case) & base["policy"].isin(BASELINES)
                         & ~base["policy"].isin(sub["policy"])]
        points = pd.concat([sub.assign(_role="sweep"), baselines.assign(_role="baseline")])
        points = points.reset_index(drop=True)
        x, y = column(points, "mean_wait", S_PER_MIN), column(points, "energy_wasted", J_PER_MWH)
        values = column(points, option)
        sweep = (points["_role"] == "sweep").to_numpy()
        finite = np.isfinite(x) & np.isfinite(y)
        front = np.zeros(len(points), dtype=bool)
        front[finite] = pareto_mask(x[finite], y[finite])
        order = np.argsort(x[front])
        ax.step(x[front][order], y[front][order], where="post", color="black", linewidth=0.9,
                linestyle="--", zorder=1)
        sizes = _sizes(values[sweep])
        spans = tuple(float(np.ptp(v[finite])) or 1.0 if finite.any() else 1.0 for v in (x, y))
        centre = tuple(float(np.mean(v[finite])) if finite.any() else 0.0 for v in (x, y))
        drawn: list[tuple[str, tuple[np.ndarray, np.ndarray]]] = []
        labels = []
        for policy in dict.fromkeys(points.loc[sweep, "policy"]):
            where = np.flatnonzero((points["policy"] == policy).to_numpy() & sweep)
            where = where[np.argsort(values[where])]
            path = (x[where], y[where])
            twins = [other for other, seen in drawn if _same_path(path, seen)]
            shift = OFFSET_PT * sum(_same_path(path, seen) for _, seen in drawn)
            if twins:
                notes.append(f"{case}: {policy_label(policy)} = {policy_label(twins[0])} at "
                             f"every {SYMBOL.get(option, option)} value (drawn {shift:g} pt to "
                             "the right).")
            labels += _draw_path(ax, policy, x[where], y[where], values[where], front[where],
                                 sizes, shift, option, spans, centre, labelled=not twins)
            drawn.append((policy, path))
        for i in np.flatnonzero(~sweep):
            policy = points["policy"].iloc[i]
            ax.plot([x[i]], [y[i]], linestyle="none", marker=policy_marker(policy),
                    markersize=9, markeredgecolor="black", markeredgewidth=0.8,
                    markerfacecolor=policy_colour(policy), zorder=4)
        for i in range(len(points)):
            records.append({"case": case, "policy": points["label"].iloc[i],
                            "role": points["_role"].iloc[i],
                            SWEEPS[option]: values[i] * SCALE[option] if sweep[i] else np.nan,
                            "AW (min)": x[i], "EW (MWh)": y[i],
                            "Pareto": "yes" if front[i] else "no"})
        if finite.any():
            ax.update_datalim(np.column_stack([x[finite], y[finite]]))
            ax.autoscale_view()
        ax.set_title(case, fontsize=9)
        ax.set_xlabel("average waiting time AW (min)")
        ax.set_ylabel("total wasted energy EW (MWh)")
        ax.grid(alpha=0.3)
        ax.set_axisbelow(True)
        ax.margins(0.1)
        panel_labels.append(labels)
    number = FIGURE_NUMBER.get(option, "?")
    name = SYMBOL.get(option, option)
    fig.suptitle(f"Sweep of {name}: waiting time vs energy waste (marker size grows with "
                 f"{name}; filled: nondominated)", fontsize=10)
    fig.tight_layout()
    for labels in panel_labels:
        _separate_labels(fig, labels)
    baseline_rows = base[base["policy"].isin(BASELINES)]
    extra = [Line2D([], [], color="black", linestyle="--", linewidth=0.9,
                    label="Pareto frontier")]
    extra += [Line2D([], [], linestyle="none", marker=policy_marker(p), markersize=9,
                     markeredgecolor="black", markerfacecolor=policy_colour(p),
                     label=f"{policy_label(p)} (default)")
              for p in dict.fromkeys(baseline_rows.sort_values("rank")["policy"])]
    legend_below(fig, marker_handles(rows, extra + style_handles()), columns=5)
    default_note = "T_M = 2 h" if option == "t_m" else "alpha = 5000"
    caption = (f"Per case, each SNF-ICON variant's runs with {name} swept, all other options "
               f"at their defaults ({default_note} is the base run): x: {WAIT_DEFINITION}; "
               f"y: {WASTE_DEFINITION}. A variant's points are joined in increasing {name}, "
               "the marker size grows with it and its smallest and largest values are "
               "written at the path's ends ('all equal' when the option changed nothing). "
               "Black-edged markers are the heuristic baselines at default options. The "
               "dashed line is the empirical Pareto frontier of all the panel's points; "
               "filled markers are nondominated, hollow ones dominated. A variant whose "
               "whole path equals another's is drawn a few points to the right.")
    return Figure(f"sweep_{option}", f"{SWEEPS[option]} sweep (Fig. {number})", fig,
                  pd.DataFrame(records), caption,
                  notes or ["No two variants' paths are identical."])


def sweep_metrics(frame: pd.DataFrame, option: str) -> Figure | None:
    """Fig. 8-9, secondary view: AW (min) and EW (MWh) against the swept option."""
    rows = sweep_rows(frame, option)
    if rows.empty:
        return None
    panels = cases(rows)
    fig, axes = plt.subplots(2, len(panels), figsize=(4.8 * len(panels), 6.2), squeeze=False)
    records = []
    scale = SCALE.get(option, 1.0)
    for k, case in enumerate(panels):
        top, bottom = axes[0][k], axes[1][k]
        sub = rows[rows["case"] == case]
        for policy, group in sub.groupby("policy", sort=False):
            x = column(group, option) * scale
            wait, waste = column(group, "mean_wait", S_PER_MIN), column(group, "energy_wasted",
                                                                        J_PER_MWH)
            label, hue = group["label"].iloc[0], policy_colour(policy)
            marker = policy_marker(policy)
            top.plot(x, wait, "-", marker=marker, color=hue, label=label)
            bottom.plot(x, waste, "-", marker=marker, color=hue, label=label)
            for i in range(len(group)):
                records.append({"case": case, "policy": label, SWEEPS[option]: x[i],
                                "AW (min)": wait[i], "EW (MWh)": waste[i]})
        for ax in (top, bottom):
            if option == "alpha":
                ax.set_xscale("log")
            ax.grid(alpha=0.3)
            ax.set_axisbelow(True)
        top.set_title(case, fontsize=9)
        top.set_ylabel("average wait AW (min)")
        bottom.set_ylabel("wasted energy EW (MWh)")
        bottom.set_xlabel(SWEEPS[option])
    fig.suptitle(f"Sweep of {SWEEPS[option]}, per metric")
    fig.tight_layout()
    figure_legend(fig, list(axes[0]), rank=label_ranks(rows))
    number = FIGURE_NUMBER.get(option, "?")
    caption = (f"The runs of Fig. {number}, each metric against {SWEEPS[option]}"
               f"{' (log axis)' if option == 'alpha' else ''}: top {WAIT_DEFINITION}; "
               f"bottom {WASTE_DEFINITION}.")
    return Figure(f"sweep_{option}_metrics",
                  f"{SWEEPS[option]} sweep per metric (Fig. {number}, secondary view)", fig,
                  pd.DataFrame(records), caption)
