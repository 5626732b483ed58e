"""The report's figures, after the paper's Fig. 3-10; each comes with the table behind it.

Fig. 7 (waiting time by job size) is in :mod:`snficon.report.size_bins`.

Every builder takes the results frame (see :mod:`snficon.report.data`) and
returns a :class:`Figure` or ``None`` when the results hold nothing to draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure as MplFigure  # noqa: E402

from snficon.report.data import (  # noqa: E402
    J_PER_MWH,
    POLICY_LABELS,
    PROFILE_METRICS,
    SWEEPS,
    base_rows,
    cases,
    cross_platform_rows,
    pareto_mask,
    profile_scores,
    sweep_rows,
    tradeoff_rows,
)

#: One colour per policy, stable across figures.
COLOURS = {"fcfs": "#7f7f7f", "fcfsbIpm": "#1f77b4", "snfIpm": "#ff7f0e", "snficon": "#2ca02c",
           "snficon-ng": "#d62728", "snficon-nf": "#9467bd", "snficon-ngnf": "#8c564b"}
ICON_FAMILY = ("snficon", "snficon-ng", "snficon-nf", "snficon-ngnf")


@dataclass
class Figure:
    """A drawn figure, its caption and the numbers behind it."""

    name: str
    title: str
    figure: MplFigure
    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def colour(policy: str) -> str:
    return COLOURS.get(policy, "#17becf")


def panel_grid(count: int, width: float = 4.6, height: float = 3.6,
               polar: bool = False) -> tuple[MplFigure, list]:
    """A figure of ``count`` panels, three to a row (the spare cells hidden)."""
    cols = min(3, count)
    rows = math.ceil(count / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False,
                             subplot_kw={"projection": "polar"} if polar else None)
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def figure_legend(fig: MplFigure, axes: list, columns: int = 7) -> None:
    """One legend below the panels, with every label of every panel once."""
    seen: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    order = list(POLICY_LABELS.values())
    seen = dict(sorted(seen.items(), key=lambda item: (
        order.index(item[0]) if item[0] in order else -1)))
    if seen:
        fig.legend(list(seen.values()), list(seen), loc="lower center", fontsize=8,
                   ncols=min(columns, len(seen)), bbox_to_anchor=(0.5, 0.0))
        fig.tight_layout(rect=(0, 0.07 if len(seen) <= columns else 0.12, 1, 1))


def _num(rows: pd.DataFrame, column: str) -> np.ndarray:
    if column not in rows:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows[column], errors="coerce").to_numpy(dtype=float)


def base_comparison(frame: pd.DataFrame) -> Figure | None:
    """Fig. 3: per case, wasted-energy bars and mean-wait line, normalised by the panel's worst."""
    base = base_rows(frame)
    if base.empty:
        return None
    panels = cases(base)
    fig, axes = panel_grid(len(panels))
    records = []
    for ax, case in zip(axes, panels, strict=True):
        rows = base[base["case"] == case]
        wait, waste = _num(rows, "mean_wait"), _num(rows, "energy_wasted")
        wait_n = wait / np.nanmax(wait) if np.nanmax(wait) > 0 else wait * 0
        waste_n = waste / np.nanmax(waste) if np.nanmax(waste) > 0 else waste * 0
        x = np.arange(len(rows))
        ax.bar(x, waste_n, color=[colour(p) for p in rows["policy"]], alpha=0.75,
               label="wasted energy")
        ax.plot(x, wait_n, "k-o", label="mean wait")
        ax.set_xticks(x, rows["label"], rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, 1.1)
        ax.set_title(case, fontsize=9)
        ax.set_ylabel("normalised (worst = 1)")
        for i, (_, row) in enumerate(rows.iterrows()):
            records.append({"case": case, "policy": row["label"],
                            "mean wait (min)": wait[i] / 60,
                            "wasted energy (MWh)": waste[i] / J_PER_MWH,
                            "wait (norm.)": wait_n[i], "waste (norm.)": waste_n[i],
                            "ICON share (%)": 100 * _num(rows, "icon_time_share")[i]})
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle("Base configuration: wasted energy (bars) and mean wait (line)")
    fig.tight_layout()
    return Figure("base_comparison", "Base comparison (Fig. 3)", fig, pd.DataFrame(records))


def profiles(frame: pd.DataFrame) -> Figure | None:
    """Fig. 4: radar charts of AW, MW, AS, AR, SU, EE (scores, best in panel = 1)."""
    base = base_rows(frame)
    if base.empty:
        return None
    panels = cases(base)
    names = [name for _, name, _ in PROFILE_METRICS]
    angles = np.linspace(0, 2 * np.pi, len(names), endpoint=False)
    closed = np.append(angles, angles[0])
    fig, axes = panel_grid(len(panels), polar=True)
    records = []
    for ax, case in zip(axes, panels, strict=True):
        rows = base[base["case"] == case]
        scores = profile_scores(rows)
        for index, row in rows.iterrows():
            values = scores.loc[index, names].to_numpy(dtype=float)
            ax.plot(closed, np.append(values, values[0]), color=colour(row["policy"]),
                    label=row["label"], linewidth=1.4)
            ax.fill(closed, np.append(values, values[0]), color=colour(row["policy"]), alpha=0.08)
            records.append({"case": case, "policy": row["label"],
                            **{n: round(float(v), 3) for n, v in zip(names, values, strict=True)}})
        ax.set_xticks(angles, names, fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_yticklabels([])
        ax.set_title(case, fontsize=9, pad=14)
    fig.suptitle("Normalised multi-metric profiles (larger is better)")
    fig.tight_layout()
    figure_legend(fig, axes)
    notes = ["Delay metrics (AW, MW, AS, AR) are scored best/value, SU and EE value/best."]
    return Figure("profiles", "Multi-metric profiles (Fig. 4)", fig, pd.DataFrame(records), notes)


def _tradeoff_panel(ax, rows: pd.DataFrame, frontier: str = "step") -> list[dict]:
    """Mean wait against wasted energy of ``rows`` on ``ax``, nondominated points joined.

    ``frontier`` is ``step`` (Fig. 6) or ``dashed`` (Fig. 10: dashed segments
    between the nondominated points). Returns one record per row.
    """
    x, y = _num(rows, "mean_wait"), _num(rows, "energy_wasted") / J_PER_MWH
    front = pareto_mask(x, y)
    order = np.argsort(x[front])
    if frontier == "dashed":
        ax.plot(x[front][order], y[front][order], "k--", linewidth=1, label="Pareto frontier")
    else:
        ax.step(x[front][order], y[front][order], where="post", color="k", linewidth=1,
                label="Pareto frontier")
    records = []
    for i, (_, row) in enumerate(rows.iterrows()):
        ax.scatter(x[i], y[i], color=colour(row["policy"]), marker="o" if front[i] else "x",
                   s=45, label=row["label"], zorder=3)
        records.append({"policy": row["label"], "mean wait (s)": x[i],
                        "wasted energy (MWh)": y[i], "Pareto": "yes" if front[i] else "no"})
    ax.set_xlabel("mean waiting time (s)")
    ax.set_ylabel("wasted energy (MWh)")
    ax.grid(alpha=0.3)
    return records


def pareto(frame: pd.DataFrame) -> Figure | None:
    """Fig. 6: mean waiting time against wasted energy, with the Pareto frontier."""
    base = tradeoff_rows(frame)
    if base.empty:
        return None
    panels = cases(base)
    fig, axes = panel_grid(len(panels))
    records = []
    for ax, case in zip(axes, panels, strict=True):
        records += [{"case": case, **record}
                    for record in _tradeoff_panel(ax, base[base["case"] == case])]
        ax.set_title(case, fontsize=9)
    fig.suptitle("Waiting time vs energy waste (o: Pareto, x: dominated)")
    fig.tight_layout()
    figure_legend(fig, axes)
    return Figure("pareto", "Waiting-time / energy trade-off (Fig. 6)", fig,
                  pd.DataFrame(records))


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
    records, drawn, letter = [], [], iter("abcdefghijklmnopqrstuvwxyz")
    for line, workload in zip(axes, workloads, strict=True):
        sub = rows[rows["workload"] == workload]
        platforms = list(dict.fromkeys(sub["platform"]))
        for ax in line[len(platforms):]:
            ax.set_visible(False)
        for ax, platform in zip(line, platforms, strict=False):
            panel = sub[sub["platform"] == platform]
            records += [{"workload": workload, "platform": platform, **record}
                        for record in _tradeoff_panel(ax, panel, frontier="dashed")]
            ax.set_title(f"({next(letter, '?')}) {platform} {workload}", fontsize=9)
            drawn.append(ax)
    fig.suptitle("Cross-platform waiting time vs energy waste (o: Pareto, x: dominated)")
    fig.tight_layout()
    figure_legend(fig, drawn)
    notes = ["Each workload run on more than one platform, at default options; dashed "
             "segments join the nondominated points of a panel."]
    return Figure("cross_platform", "Cross-platform comparison (Fig. 10)", fig,
                  pd.DataFrame(records), notes)


def _read_decisions(path: Path) -> pd.DataFrame | None:
    if not path.is_file():
        return None
    wanted = {"time", "mode", "arrival_cv", "arrival_lag1", "arrival_ks", "arrival_ks_limit"}
    table = pd.read_csv(path, usecols=lambda c: c in wanted)
    if "mode" not in table or table["mode"].isna().all():
        return None
    return table


def modes(frame: pd.DataFrame, runs_dir: Path) -> Figure | None:
    """Fig. 5: mode M(t) over time (1 fallback, 2 ICON) and the screen diagnostics."""
    base = base_rows(frame)
    chosen = []
    for case in cases(base):
        rows = base[(base["case"] == case) & base["policy"].isin(ICON_FAMILY)]
        for _, row in rows.iterrows():
            log = _read_decisions(runs_dir / str(row["id"]) / "decisions.csv")
            if log is not None:
                chosen.append((row, log))
                break
    if not chosen:
        return None
    fig, axes = plt.subplots(len(chosen), 2, figsize=(12, 2.6 * len(chosen)), squeeze=False)
    records = []
    for (row, log), (left, right) in zip(chosen, axes, strict=True):
        hours = log["time"].to_numpy(dtype=float) / 3600
        level = np.where(log["mode"] == "icon", 2, 1)
        end = float(row.get("makespan") or hours[-1] * 3600) / 3600
        spans = np.diff(np.append(hours, max(end, hours[-1])))
        icon_h, fallback_h = spans[level == 2].sum(), spans[level == 1].sum()
        switches = int((np.diff(level) != 0).sum())
        left.step(np.append(hours, end), np.append(level, level[-1]), where="post",
                  color=colour(row["policy"]), linewidth=0.8)
        left.set_yticks([1, 2], ["1 fallback", "2 ICON"])
        left.set_ylim(0.7, 2.3)
        left.set_xlim(0, end)
        left.set_title(f"{row['case']} - {row['label']}: M(t)", fontsize=9)
        left.text(1.01, 0.8, f"{icon_h:.1f} h", transform=left.transAxes, fontsize=8)
        left.text(1.01, 0.15, f"{fallback_h:.1f} h", transform=left.transAxes, fontsize=8)
        left.set_xlabel("simulation time (h)")
        for column, name in (("arrival_cv", "cv_A"), ("arrival_lag1", "rho1_A")):
            if column in log:
                right.plot(hours, log[column], linewidth=0.7, label=name)
        if "arrival_ks" in log and "arrival_ks_limit" in log:
            right.plot(hours, log["arrival_ks"] / log["arrival_ks_limit"], linewidth=0.7,
                       label="D_n,A / limit")
        right.axhline(1.0, color="grey", linestyle=":", linewidth=0.8)
        right.set_title("inter-arrival diagnostics (recent window)", fontsize=9)
        right.set_xlabel("simulation time (h)")
        right.legend(fontsize=7, loc="upper right")
        right.set_xlim(0, end)
        records.append({"case": row["case"], "policy": row["label"], "ICON (h)": icon_h,
                        "fallback (h)": fallback_h,
                        "ICON share (%)": 100 * icon_h / end if end > 0 else 0.0,
                        "mode switches": switches, "decisions": len(log)})
    fig.tight_layout()
    return Figure("modes", "Mode occupancy and screen diagnostics (Fig. 5)", fig,
                  pd.DataFrame(records))


def sweep(frame: pd.DataFrame, option: str) -> Figure | None:
    """Fig. 8-9: mean wait and wasted energy against a swept option (``t_m`` or ``alpha``)."""
    rows = sweep_rows(frame, option)
    if rows.empty:
        return None
    panels = cases(rows)
    fig, axes = plt.subplots(2, len(panels), figsize=(4.8 * len(panels), 6.2), squeeze=False)
    records = []
    scale = 1 / 3600 if option == "t_m" else 1.0
    for k, case in enumerate(panels):
        top, bottom = axes[0][k], axes[1][k]
        sub = rows[rows["case"] == case]
        for policy, group in sub.groupby("policy", sort=False):
            x = _num(group, option) * scale
            wait, waste = _num(group, "mean_wait"), _num(group, "energy_wasted") / J_PER_MWH
            label = group["label"].iloc[0]
            top.plot(x, wait, "-o", color=colour(policy), label=label)
            bottom.plot(x, waste, "-s", color=colour(policy), label=label)
            for i in range(len(group)):
                records.append({"case": case, "policy": label, SWEEPS[option]: x[i],
                                "mean wait (s)": wait[i], "wasted energy (MWh)": waste[i],
                                "ICON share (%)": 100 * _num(group, "icon_time_share")[i]})
        for ax in (top, bottom):
            if option == "alpha":
                ax.set_xscale("log")
            ax.grid(alpha=0.3)
        top.set_title(case, fontsize=9)
        top.set_ylabel("mean wait (s)")
        bottom.set_ylabel("wasted energy (MWh)")
        bottom.set_xlabel(SWEEPS[option])
    fig.suptitle(f"Sweep of {SWEEPS[option]}")
    fig.tight_layout()
    figure_legend(fig, list(axes[0]))
    number = "8" if option == "t_m" else "9"
    return Figure(f"sweep_{option}", f"{SWEEPS[option]} sweep (Fig. {number})", fig,
                  pd.DataFrame(records))
