"""Carbon-aware start times in the report: the per-method table, the carbon-peak plane
(COAST's Fig. 2, left) and the gamma sweep (its Fig. 2, right), idealised beside realised.

A run's *method* is its start-time advisor layer (``coast``, ``carbon-greedy``,
``carbon-wait``) or Observed (none). Each run is set against the Observed run
of the same case, scheduler and carbon start alignment (``carbon_start``):

- carbon: the cluster's emissions to the last job end (``carbon_total_kg``,
  from Batsim's output files) and its change (%) vs Observed;
- added wait: the run's mean wait minus Observed's (h);
- peak slot load and load variance: nodes per 30-min slot of the realised
  starts (``real_*``, :mod:`snficon.analysis.advice`) and their change (%);
- job carbon: the jobs' own compute carbon (COAST's job model) at their
  realised starts (``real_job_carbon_kg``) and its change, to compare with
- idealised: the same metrics of the advisor's plan (every job at its
  target, COAST's own evaluation): ``ideal_job_carbon_kg`` (the jobs' compute
  energy only) vs Observed's arrivals, and the plan's added wait.

Means are over the alignments; a method lacking its Observed partner is left out.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from snficon.report.panels import Figure, panel_grid
from snficon.report.style import policy_marker

OBSERVED = "Observed"
METHOD_LABELS = {"": OBSERVED, "carbon-greedy": "Carbon-greedy", "carbon-wait": "Carbon+waiting",
                 "coast": "COAST"}
METHOD_COLOURS = {OBSERVED: "#7f7f7f", "Carbon-greedy": "#d62728", "Carbon+waiting": "#ff7f0e",
                  "COAST": "#1f77b4"}
DEFAULT_GAMMA = 5e-4
NEEDED = ("carbon_total_kg", "carbon_start", "real_peak_slot_load", "ideal_job_carbon_kg")


def has_carbon(frame: pd.DataFrame) -> bool:
    """Whether any run of ``frame`` was accounted with a carbon signal."""
    return "carbon_total_kg" in frame and bool(frame["carbon_total_kg"].notna().any())


def _method(layers: object) -> str:
    text = "" if not isinstance(layers, str) else layers
    names = [n.strip(" []'\"") for n in text.replace(",", " ").split()]
    found = [METHOD_LABELS[n] for n in names if n in METHOD_LABELS and n]
    return found[0] if found else OBSERVED


def paired_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Every carbon run with its method and its changes vs the matching Observed run."""
    if any(column not in frame for column in NEEDED):
        return pd.DataFrame()
    rows = frame[frame["carbon_total_kg"].notna()].copy()
    if rows.empty:
        return rows
    rows["method"] = rows.get("layers", pd.Series("", index=rows.index)).map(_method)
    gamma = pd.to_numeric(rows.get("coast_gamma", pd.Series(np.nan, index=rows.index)),
                          errors="coerce")
    rows["gamma"] = gamma.where(rows["method"] != OBSERVED)
    key = ["case", "policy", "carbon_start"]
    observed = rows[rows["method"] == OBSERVED].drop_duplicates(key)
    compared = ["carbon_total_kg", "mean_wait", "real_peak_slot_load", "real_load_variance",
                "real_job_carbon_kg", "ideal_job_carbon_kg", "ideal_peak_slot_load",
                "ideal_load_variance"]
    partner = observed[key + compared].rename(columns={c: f"{c}_obs" for c in compared})
    joined = rows.merge(partner, on=key, how="inner")

    def change(column: str) -> pd.Series:
        return 100.0 * (joined[column] / joined[f"{column}_obs"] - 1.0)

    joined["carbon_change_pct"] = change("carbon_total_kg")
    joined["added_wait_h"] = (joined["mean_wait"] - joined["mean_wait_obs"]) / 3600.0
    joined["peak_change_pct"] = change("real_peak_slot_load")
    joined["variance_change_pct"] = change("real_load_variance")
    joined["job_carbon_change_pct"] = change("real_job_carbon_kg")
    joined["ideal_carbon_change_pct"] = change("ideal_job_carbon_kg")
    joined["ideal_peak_change_pct"] = change("ideal_peak_slot_load")
    joined["ideal_added_wait_h"] = joined["ideal_added_wait_s"] / 3600.0
    return joined.reset_index(drop=True)


def method_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The per-method table at COAST's default gamma: means over the alignments, per case
    and scheduler."""
    rows = paired_rows(frame)
    if rows.empty:
        return rows
    rows = rows[rows["gamma"].isna() | np.isclose(rows["gamma"].fillna(DEFAULT_GAMMA),
                                                  DEFAULT_GAMMA)]
    table = rows.groupby(["case", "label", "method"], sort=False).agg(
        alignments=("carbon_start", "nunique"),
        carbon_t=("carbon_total_kg", lambda s: s.mean() / 1e3),
        carbon_change_pct=("carbon_change_pct", "mean"),
        added_wait_h=("added_wait_h", "mean"),
        peak_slot_load=("real_peak_slot_load", "mean"),
        peak_change_pct=("peak_change_pct", "mean"),
        load_variance=("real_load_variance", "mean"),
        job_carbon_change_pct=("job_carbon_change_pct", "mean"),
        ideal_carbon_change_pct=("ideal_carbon_change_pct", "mean"),
        ideal_added_wait_h=("ideal_added_wait_h", "mean"),
        ideal_peak_change_pct=("ideal_peak_change_pct", "mean"),
    ).reset_index()
    order = {name: i for i, name in enumerate(METHOD_COLOURS)}
    table["_m"] = table["method"].map(order)
    return table.sort_values(["case", "label", "_m"], kind="stable").drop(columns="_m") \
        .reset_index(drop=True)


def carbon_peak_plane(frame: pd.DataFrame) -> Figure | None:
    """COAST's Fig. 2 (left) per case: change in peak slot load against change in carbon
    vs Observed, realised (filled) and idealised (hollow), one marker per scheduler."""
    table = method_table(frame)
    table = table[table["method"] != OBSERVED] if not table.empty else table
    if table.empty:
        return None
    cases = list(dict.fromkeys(table["case"]))
    fig, axes = panel_grid(len(cases), width=5.0, height=4.2)
    for ax, case in zip(axes, cases, strict=True):
        rows = table[table["case"] == case]
        for _, row in rows.iterrows():
            colour = METHOD_COLOURS[row["method"]]
            marker = policy_marker(_policy_of(frame, row["label"]))
            ax.scatter(row["peak_change_pct"], row["carbon_change_pct"], color=colour,
                       marker=marker, s=46, zorder=3)
            ax.scatter(row["ideal_peak_change_pct"], row["ideal_carbon_change_pct"],
                       facecolors="none", edgecolors=colour, marker=marker, s=46, zorder=3)
            ax.annotate("", (row["peak_change_pct"], row["carbon_change_pct"]),
                        (row["ideal_peak_change_pct"], row["ideal_carbon_change_pct"]),
                        arrowprops={"arrowstyle": "->", "color": colour, "alpha": 0.5})
        ax.axhline(0, color="k", linewidth=0.6)
        ax.axvline(0, color="k", linewidth=0.6)
        ax.set_title(case, fontsize=9)
        ax.set_xlabel("peak slot load vs Observed (%)")
        ax.set_ylabel("carbon vs Observed (%)")
    handles = [plt.Line2D([], [], color=c, marker="o", linestyle="", label=m)
               for m, c in METHOD_COLOURS.items() if m in set(table["method"])]
    handles += [plt.Line2D([], [], color="k", marker=policy_marker(_policy_of(frame, label)),
                           linestyle="", label=label) for label in dict.fromkeys(table["label"])]
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 7), fontsize=8)
    caption = ("Carbon-peak plane (COAST Fig. 2 style): per case, each method's change in "
               "peak 30-min slot load (nodes; every slot a job's window meets counts its "
               "nodes) against its change in carbon, both in % vs Observed (no shifting) at "
               "the same start alignment, means over the alignments. Filled: realised in "
               "simulation (cluster emissions to the last job end, kg CO2, from Batsim's "
               "outputs; peak of the realised starts); hollow: idealised, the advisor's plan "
               "with every job at its target (the jobs' compute energy only), as COAST's own "
               "evaluation; arrows run from the promise to the outcome. Lower left is better.")
    return Figure("carbon-peak", "Carbon-peak plane: idealised vs realised", fig,
                  table.round(3), caption)


def _policy_of(frame: pd.DataFrame, label: str) -> str:
    names = frame.loc[frame["label"] == label, "policy"]
    return str(names.iloc[0]) if len(names) else label


def gamma_sweep(frame: pd.DataFrame) -> Figure | None:
    """COAST's Fig. 2 (right): carbon change, peak change and added wait against gamma,
    realised (solid) and idealised (dashed), per case and scheduler."""
    rows = paired_rows(frame)
    if rows.empty:
        return None
    rows = rows[rows["method"] == "COAST"]
    groups = [(key, g) for key, g in rows.groupby(["case", "label"], sort=False)
              if g["gamma"].nunique() >= 2]
    if not groups:
        return None
    panels = (("carbon vs Observed (%)", "carbon_change_pct", "ideal_carbon_change_pct"),
              ("peak slot load vs Observed (%)", "peak_change_pct", "ideal_peak_change_pct"),
              ("added wait (h)", "added_wait_h", "ideal_added_wait_h"))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.0))
    drawn = []
    for (case, label), group in groups:
        means = group.groupby("gamma").agg({c: "mean" for _, a, b in panels for c in (a, b)})
        means = means.sort_index()
        for ax, (title, real, ideal) in zip(axes, panels, strict=True):
            line = ax.plot(means.index, means[real], marker="o", label=f"{label}, {case}")[0]
            ax.plot(means.index, means[ideal], marker="o", linestyle="--",
                    color=line.get_color(), fillstyle="none")
            ax.set_xscale("symlog", linthresh=1e-4)
            ax.set_xlabel("gamma")
            ax.set_ylabel(title)
            ax.axvline(DEFAULT_GAMMA, color="grey", linewidth=0.6, linestyle=":")
        drawn.append(means.reset_index().assign(case=case, label=label))
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    data = pd.concat(drawn, ignore_index=True)
    caption = ("COAST's gamma sweep (COAST Fig. 2 style): the congestion weight gamma against "
               "the change in carbon and in peak 30-min slot load (% vs Observed at the same "
               "start alignment) and the added mean wait (h), means over the alignments. "
               "Solid: realised in simulation; dashed, hollow: idealised (the advisor's plan, "
               "every job at its target). Dotted: the paper's gamma = 5e-4. The x axis is "
               "linear below 1e-4 (gamma = 0 is drawn).")
    return Figure("gamma-sweep", "COAST's gamma sweep", fig, data.round(4), caption)
