"""Two campaigns side by side: each run of one paired with the same run of the other.

Runs pair when they have the same platform, workload (and job limit),
policy and changed options; an option set to one value throughout one
campaign and to another (or absent) throughout the other is a campaign-wide
setting (e.g. an engine option) and does not stop runs from pairing. For
every paired run and every metric of ``metrics.json`` (except the run's
wall time) the comparison gives both values, their difference and the
relative difference 100 (B - A) / |A| (0 when both are 0, infinite when
only A is 0 or only one side has the value).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from snficon.analysis.metrics import RunMetrics

#: metrics.json keys that are not simulation results (they differ from run to run).
NOT_COMPARED = frozenset({"wall_time_s"})
KEY = ("platform", "workload", "workload_jobs", "policy", "pairing_options")
LONG_COLUMNS = ("case", "policy", "policy id", "options", "metric", "A", "B", "difference",
                "difference (%)", "run A", "run B")


@dataclass
class Comparison:
    """Campaign A (``name_a``) against campaign B, run by run and metric by metric."""

    name_a: str
    name_b: str
    long: pd.DataFrame  # one row per (paired run, metric): LONG_COLUMNS
    only_a: pd.DataFrame  # runs of A with no partner in B: case, policy, options, id
    only_b: pd.DataFrame
    campaign_options: dict[str, tuple[str, str]] = field(default_factory=dict)
    columns_only: dict[str, list[str]] = field(default_factory=dict)

    @property
    def pairs(self) -> int:
        """How many runs paired."""
        return int(self.long[["run A", "run B"]].drop_duplicates().shape[0])

    def worst(self) -> pd.Series | None:
        """The (run, metric) row of largest |relative difference|; None when nothing paired."""
        ranked = self.long[self.long["difference (%)"].notna()]
        if ranked.empty:
            return None
        return ranked.loc[ranked["difference (%)"].abs().idxmax()]

    def above(self, percent: float) -> pd.DataFrame:
        """The rows whose |relative difference| exceeds ``percent``, largest first."""
        rows = self.long[self.long["difference (%)"].abs() > percent]
        return rows.reindex(rows["difference (%)"].abs().sort_values(ascending=False).index)


def metric_names(frame: pd.DataFrame, runs_dir: Path) -> list[str]:
    """The metrics of the campaign: RunMetrics' fields and the keys of its runs' metrics.json."""
    names = dict.fromkeys(RunMetrics.__dataclass_fields__)
    for run in frame["id"].astype(str):
        path = runs_dir / run / "metrics.json"
        if path.is_file():
            names.update(dict.fromkeys(json.loads(path.read_text(encoding="utf-8"))))
    return [name for name in names if name not in NOT_COMPARED and name in frame]


def _options(text: str) -> dict[str, str]:
    return dict(item.partition("=")[::2] for item in str(text).split() if "=" in item)


def campaign_wide(frame_a: pd.DataFrame, frame_b: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Options with one value throughout each campaign, differing between them ('' = unset)."""
    opts_a, opts_b = frame_a["options"].map(_options), frame_b["options"].map(_options)
    keys = set().union(*opts_a, *opts_b) if len(opts_a) + len(opts_b) else set()
    wide = {}
    for key in sorted(keys):
        values_a = {options.get(key, "") for options in opts_a}
        values_b = {options.get(key, "") for options in opts_b}
        if len(values_a) == 1 and len(values_b) == 1 and values_a != values_b:
            wide[key] = (values_a.pop(), values_b.pop())
    return wide


def _keyed(frame: pd.DataFrame, ignored: set[str]) -> pd.DataFrame:
    frame = frame.copy()
    frame["pairing_options"] = frame["options"].map(
        lambda text: " ".join(f"{k}={v}" for k, v in sorted(_options(text).items())
                              if k not in ignored))
    frame["workload_jobs"] = frame["workload_jobs"].astype(str).replace({"nan": "", "None": ""})
    return frame


def relative_difference(a: float, b: float) -> float:
    """100 (b - a) / |a|; 0 when both are 0, inf when only ``a`` is 0 or one side is missing."""
    missing_a, missing_b = not math.isfinite(a), not math.isfinite(b)
    if missing_a and missing_b:
        return float("nan")
    if missing_a or missing_b:
        return float("inf")
    if a == 0:
        return 0.0 if b == 0 else float("inf")
    return 100 * (b - a) / abs(a)


def compare_campaigns(frame_a: pd.DataFrame, runs_a: Path, frame_b: pd.DataFrame, runs_b: Path,
                      name_a: str = "A", name_b: str = "B") -> Comparison:
    """Pair the finished runs of two results frames (:func:`~snficon.report.data.load_results`)."""
    wide = campaign_wide(frame_a, frame_b)
    a, b = _keyed(frame_a, set(wide)), _keyed(frame_b, set(wide))
    metrics = [m for m in metric_names(frame_a, runs_a) if m in metric_names(frame_b, runs_b)]
    merged = a.merge(b, on=list(KEY), how="outer", suffixes=(" A", " B"), indicator=True)
    records = []
    for _, row in merged[merged["_merge"] == "both"].iterrows():
        for metric in metrics:
            value_a = pd.to_numeric(pd.Series([row[f"{metric} A"]]), errors="coerce").iloc[0]
            value_b = pd.to_numeric(pd.Series([row[f"{metric} B"]]), errors="coerce").iloc[0]
            value_a, value_b = float(value_a), float(value_b)
            if np.isnan(value_a) and np.isnan(value_b):
                continue
            records.append({"case": row["case A"], "policy": row["label A"],
                            "policy id": row["policy"], "options": row["pairing_options"],
                            "metric": metric,
                            "A": value_a, "B": value_b, "difference": value_b - value_a,
                            "difference (%)": relative_difference(value_a, value_b),
                            "run A": row["id A"], "run B": row["id B"]})
    long = pd.DataFrame(records, columns=list(LONG_COLUMNS))

    def alone(side: str, suffix: str) -> pd.DataFrame:
        rows = merged[merged["_merge"] == side]
        return pd.DataFrame({"case": rows[f"case {suffix}"], "policy": rows[f"label {suffix}"],
                             "options": rows["pairing_options"],
                             "id": rows[f"id {suffix}"]}).reset_index(drop=True)

    skip = {"options", "changed", "label", "rank", "case"}
    columns_only = {name_a: sorted(set(frame_a.columns) - set(frame_b.columns) - skip),
                    name_b: sorted(set(frame_b.columns) - set(frame_a.columns) - skip)}
    return Comparison(name_a, name_b, long, alone("left_only", "A"), alone("right_only", "B"),
                      wide, columns_only)


#: The metrics of the side-by-side table in the report: column, title, divisor.
SIDE_BY_SIDE = (("mean_wait", "AW (min)", 60.0), ("energy_wasted", "EW (MWh)", 3.6e9),
                ("icon_time_share", "ICON share", 0.01))


def side_by_side(comparison: Comparison) -> pd.DataFrame:
    """One row per paired run: AW, EW and ICON share of A and B with their relative
    differences, and the run's largest |relative difference| over every metric."""
    long = comparison.long
    if long.empty:
        return pd.DataFrame()
    rows = []
    for (case, policy, options), group in long.groupby(["case", "policy", "options"],
                                                       sort=False):
        by = group.set_index("metric")
        record = {"case": case, "policy": policy, "options": options}
        for metric, title, scale in SIDE_BY_SIDE:
            if metric in by.index:
                record[f"{title} {comparison.name_a}"] = by.loc[metric, "A"] / scale
                record[f"{title} {comparison.name_b}"] = by.loc[metric, "B"] / scale
                record[f"{title} diff (%)"] = by.loc[metric, "difference (%)"]
        ranked = group["difference (%)"].abs()
        worst = group.loc[ranked.idxmax()] if ranked.notna().any() else None
        record["largest abs. diff (%)"] = (abs(worst["difference (%)"]) if worst is not None
                                           else 0.0)
        record["in metric"] = worst["metric"] if worst is not None else ""
        rows.append(record)
    return pd.DataFrame(rows)


def compare_figure(comparison: Comparison):
    """Per case, each policy's default-options point in A (filled) and B (hollow), joined.

    Returns a :class:`~snficon.report.panels.Figure` or None when no default
    run paired.
    """
    from snficon.report.panels import Figure, figure_legend, panel_grid
    from snficon.report.style import policy_colour, policy_marker

    long = comparison.long
    base = long[(long["options"] == "") & long["metric"].isin(["mean_wait", "energy_wasted"])]
    if base.empty:
        return None
    wide = base.pivot_table(index=["case", "policy", "policy id", "run A"], columns="metric",
                            values=["A", "B"], aggfunc="first").dropna()
    if wide.empty:
        return None
    panels = list(dict.fromkeys(wide.index.get_level_values("case")))
    fig, axes = panel_grid(len(panels))
    records = []
    for ax, case in zip(axes, panels, strict=True):
        sub = wide.xs(case, level="case")
        for (label, name, _), row in sub.iterrows():
            hue, marker = policy_colour(name), policy_marker(name)
            xa, ya = row[("A", "mean_wait")] / 60, row[("A", "energy_wasted")] / 3.6e9
            xb, yb = row[("B", "mean_wait")] / 60, row[("B", "energy_wasted")] / 3.6e9
            ax.annotate("", xy=(xb, yb), xytext=(xa, ya),
                        arrowprops={"arrowstyle": "->", "color": hue, "linewidth": 0.9})
            ax.plot([xa], [ya], marker=marker, color=hue, linestyle="none", markersize=7,
                    label=label)
            ax.plot([xb], [yb], marker=marker, markerfacecolor="none", markeredgecolor=hue,
                    linestyle="none", markersize=7, markeredgewidth=1.3)
            records.append({"case": case, "policy": label,
                            f"AW {comparison.name_a} (min)": xa,
                            f"AW {comparison.name_b} (min)": xb,
                            f"EW {comparison.name_a} (MWh)": ya,
                            f"EW {comparison.name_b} (MWh)": yb})
        ax.set_title(case, fontsize=9)
        ax.set_xlabel("mean waiting time AW (min)")
        ax.set_ylabel("wasted energy EW (MWh)")
        ax.grid(alpha=0.3)
        ax.set_axisbelow(True)
        ax.margins(0.12)
    fig.suptitle(f"{comparison.name_a} (filled) -> {comparison.name_b} (hollow), "
                 "default options", fontsize=10)
    fig.tight_layout()
    figure_legend(fig, axes)
    caption = (f"Each policy's run at default options in campaign {comparison.name_a} "
               f"(filled marker) and the same run in {comparison.name_b} (hollow marker), "
               "joined by an arrow. x: mean of start - submission over the jobs that ran "
               "(min); y: energy of every node while not computing, from 0 to the last "
               "job's end (MWh).")
    return Figure("compare", f"{comparison.name_a} vs {comparison.name_b}", fig,
                  pd.DataFrame(records), caption)

