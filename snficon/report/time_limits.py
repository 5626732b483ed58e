"""The time-limit layer's results as its paper gives them: Table 1 and a figure.

Rows are the runs of the time-limit layer (a ``tl_policy`` column) with the
paper's Table 1 metrics (:class:`snficon.analysis.time_limits.TimeLimitMetrics`),
one row per case, scheduler and daemon policy (Baseline, Early Cancellation,
Extension, Hybrid), with each policy's change against the Baseline of the same
case and scheduler, in percent, as the paper reports it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snficon.report.panels import Figure, panel_grid
from snficon.report.style import policy_colour

#: The daemon's policies in the paper's order, with its names.
TL_POLICIES = {"baseline": "Baseline", "early-cancel": "Early Cancellation",
               "extend": "Extension", "hybrid": "Hybrid"}
#: Table 1's columns: results column -> shown name.
COLUMNS = {
    "tail_waste_node_s": "tail waste (node-s)",
    "tail_waste_core_s": "tail waste (core-s)",
    "cpu_time_node_s": "CPU time (node-s)",
    "jobs_completed": "completed",
    "jobs_timeout": "timeout",
    "jobs_early_cancelled": "early-cancelled",
    "jobs_extended": "extended",
    "checkpoints": "checkpoints",
    "weighted_mean_wait": "weighted wait (s)",
    "mean_wait": "mean wait (s)",
    "makespan": "makespan (s)",
}
#: Columns whose change against the Baseline the table gives (the paper's percentages).
CHANGES = {"tail_waste_node_s": "tail waste vs Baseline (%)",
           "cpu_time_node_s": "CPU time vs Baseline (%)",
           "weighted_mean_wait": "weighted wait vs Baseline (%)"}


def time_limit_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs of the time-limit layer, one per case, scheduler and daemon policy (at the
    other options' first value), in the paper's policy order."""
    if "tl_policy" not in frame or "tail_waste_node_s" not in frame:
        return frame.iloc[0:0]
    rows = frame[frame["tl_policy"].isin(list(TL_POLICIES))].copy()
    if rows.empty:
        return rows
    rows["tl_rank"] = rows["tl_policy"].map(list(TL_POLICIES).index)
    other = [c for c in rows["changed"].explode().dropna().unique() if c != "tl_policy"]
    for column in other:  # runs that differ only by the daemon policy
        if column in rows:
            rows = rows[rows[column].astype(str) == rows[column].astype(str).iloc[0]]
    return rows.sort_values(["case", "rank", "tl_rank"], kind="stable")


def time_limit_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 1 of the time-limits paper for each case and scheduler of ``frame``."""
    rows = time_limit_rows(frame)
    if rows.empty:
        return pd.DataFrame()
    out = []
    for (case, label), group in rows.groupby(["case", "label"], sort=False):
        baseline = group[group["tl_policy"] == "baseline"]
        for _, row in group.iterrows():
            record = {"case": case, "scheduler": label,
                      "policy": TL_POLICIES[row["tl_policy"]]}
            for column, name in COLUMNS.items():
                if column in row and pd.notna(row[column]):
                    record[name] = row[column]
            for column, name in CHANGES.items():
                if baseline.empty or column not in row:
                    continue
                base = float(baseline.iloc[0][column])
                record[name] = (100.0 * (float(row[column]) - base) / base if base else
                                np.nan)
            out.append(record)
    return pd.DataFrame(out)


def time_limit_figure(frame: pd.DataFrame) -> Figure | None:
    """Tail waste and node-weighted mean wait per daemon policy, one bar per scheduler."""
    table = time_limit_table(frame)
    if table.empty:
        return None
    cases = list(dict.fromkeys(table["case"]))
    rows = time_limit_rows(frame)
    names = dict(zip(rows["label"], rows["policy"], strict=False))
    fig, flat = panel_grid(2 * len(cases), width=5.4, height=3.4, columns=2)
    axes = np.array(flat, dtype=object).reshape(len(cases), 2)
    policies = list(TL_POLICIES.values())
    for i, case in enumerate(cases):
        part = table[table["case"] == case]
        schedulers = list(dict.fromkeys(part["scheduler"]))
        width = 0.8 / len(schedulers)
        for j, scheduler in enumerate(schedulers):
            bars = part[part["scheduler"] == scheduler].set_index("policy").reindex(policies)
            where = np.arange(len(policies)) + (j - (len(schedulers) - 1) / 2) * width
            colour = policy_colour(names.get(scheduler, scheduler))
            axes[i, 0].bar(where, bars["tail waste (node-s)"] / 3600, width, label=scheduler,
                           color=colour)
            axes[i, 1].bar(where, bars["weighted wait (s)"] / 3600, width, label=scheduler,
                           color=colour)
        for ax, ylabel in zip(axes[i], ("tail waste (node-h)", "node-weighted wait (h)"),
                              strict=True):
            ax.set_xticks(np.arange(len(policies)), policies, fontsize=8)
            ax.set_ylabel(ylabel)
            ax.set_title(case, fontsize=9)
        axes[i, 0].legend(fontsize=8)
    caption = ("Tail waste (the node time between a job's last checkpoint and its end, lost "
               "when it is killed at its limit) and the node-weighted mean wait (wait x "
               "allocated nodes / sum of nodes, as the time-limits paper defines it) for each "
               "daemon policy, one bar per scheduler. Hours of node time and of wait.")
    return Figure("time_limits", "Checkpoint-aware time limits: tail waste and weighted wait",
                  fig, table, caption)
