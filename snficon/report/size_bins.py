"""Fig. 7: waiting time by requested job size, as box plots of the per-job waits.

As in the paper's Fig. 7, each base case (platform x workload at default
options) is a panel; the jobs are binned by node count (1, 2, 3-4, 5-8, ...)
and each bin has one box per policy: the box spans the interquartile range,
the centre line is the median and the whiskers reach the 5th and 95th
percentiles (no outlier dots). The waiting-time axis is in minutes on a log
scale; the paper displays zero waits at one second, so waits under
:data:`WAIT_FLOOR_S` are drawn there. Bins without jobs are left out.

The waits are those of the jobs that ran (start - submission), read from each
run's ``out_jobs.csv`` with :func:`snficon.analysis.batsim_outputs.read_jobs`,
the reader behind the campaign's ``mean_wait``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from snficon.analysis.batsim_outputs import read_jobs  # noqa: E402
from snficon.report.data import base_rows  # noqa: E402
from snficon.report.panels import Figure, figure_legend, panel_grid  # noqa: E402
from snficon.report.style import policy_colour  # noqa: E402

#: Job-size bins (requested nodes); larger jobs fall in one last bin.
SIZE_BINS = ((1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, 32), (33, 64), (65, 128),
             (129, 256), (257, 512), (513, 1024), (1025, 2048))
#: Bin names in axis order.
BIN_LABELS = (*(str(low) if low == high else f"{low}-{high}" for low, high in SIZE_BINS),
              f">{SIZE_BINS[-1][1]}")
#: Waits below this (s), zero included, are drawn at it on the log axis (paper: "Zero waits
#: are displayed at one second on the logarithmic axis").
WAIT_FLOOR_S = 1.0
#: Whisker percentiles (paper: "whiskers show the 5th-95th percentiles").
WHISKERS = (5.0, 95.0)
#: Columns of the table behind the figure (waits in minutes).
STAT_COLUMNS = {"p5": "p5 (min)", "q1": "Q1 (min)", "median": "median (min)",
                "q3": "Q3 (min)", "p95": "p95 (min)", "mean": "mean (min)"}


@dataclass(frozen=True)
class BoxStats:
    """Box-plot statistics of one bin's waits (s): count, whisker ends, quartiles, mean."""

    n: int
    p5: float
    q1: float
    median: float
    q3: float
    p95: float
    mean: float


def bin_label(nodes: int) -> str:
    """The name of the size bin of a job on ``nodes`` nodes (``"3-4"``, ``">2048"``)."""
    for (low, high), name in zip(SIZE_BINS, BIN_LABELS, strict=False):
        if low <= nodes <= high:
            return name
    return BIN_LABELS[-1]


def box_stats(waits_s: np.ndarray) -> BoxStats:
    """Percentiles 5, 25, 50, 75, 95 (numpy's default, linear) and mean of ``waits_s``.

    ``waits_s`` must hold at least one wait; an empty bin has no box.
    """
    waits = np.asarray(waits_s, dtype=float)
    if waits.size == 0:
        raise ValueError("box_stats: no waits (an empty bin has no box)")
    p5, q1, median, q3, p95 = np.percentile(waits, [WHISKERS[0], 25, 50, 75, WHISKERS[1]])
    return BoxStats(int(waits.size), float(p5), float(q1), float(median), float(q3),
                    float(p95), float(waits.mean()))


def run_waits(run_dir: Path) -> pd.DataFrame:
    """``bin`` and ``wait_s`` of every job that ran in ``run_dir/out_jobs.csv``.

    The bin is the job's allocated node count, which is its requested count
    (jobs are rigid). Rejected jobs never waited to run and are left out.
    """
    jobs = [job for job in read_jobs(run_dir / "out_jobs.csv")
            if job.ran and job.start is not None]
    return pd.DataFrame({"bin": [bin_label(job.nodes) for job in jobs],
                         "wait_s": [job.start - job.submit for job in jobs]})


def size_bin_table(frame: pd.DataFrame, runs_dir: Path) -> pd.DataFrame:
    """One row per (case, bin, policy) with jobs: count and :class:`BoxStats` in minutes.

    Rows follow the cases, then the bins, then the policies in the paper's
    order; the run's ``_policy`` key and ``_rank`` are kept for drawing. Runs without an
    ``out_jobs.csv`` are skipped; bins without jobs have no row.
    """
    records = []
    for _, row in base_rows(frame).iterrows():
        run_dir = runs_dir / str(row["id"])
        if not (run_dir / "out_jobs.csv").is_file():
            continue
        waits = run_waits(run_dir)
        for name, group in waits.groupby("bin", sort=False):
            stats = box_stats(group["wait_s"].to_numpy())
            records.append({"case": row["case"], "policy": row["label"], "size": name,
                            "jobs": stats.n,
                            **{column: getattr(stats, key) / 60
                               for key, column in STAT_COLUMNS.items()},
                            "_policy": row["policy"], "_rank": row["rank"]})
    if not records:
        return pd.DataFrame()
    table = pd.DataFrame(records)
    table["_bin"] = table["size"].map(BIN_LABELS.index)
    table = table.sort_values(["case", "_bin", "_rank"], kind="stable")
    return table.drop(columns="_bin").reset_index(drop=True)


def _counts(rows: pd.DataFrame, name: str) -> str:
    jobs = rows.loc[rows["size"] == name, "jobs"]
    low, high = int(jobs.min()), int(jobs.max())
    return f"n={low}" if low == high else f"n={low}-{high}"


def size_bins(frame: pd.DataFrame, runs_dir: Path) -> Figure | None:
    """Fig. 7: per base case, box plots of the waits (min, log) by job size and policy.

    ``None`` when no base run has an ``out_jobs.csv``. Each bin's tick
    label gives its job count (a range when the policies ran different
    numbers of its jobs).
    """
    table = size_bin_table(frame, runs_dir)
    if table.empty:
        return None
    floor_min = WAIT_FLOOR_S / 60
    panels = list(dict.fromkeys(table["case"]))
    fig, axes = panel_grid(len(panels), width=5.6)
    for ax, case in zip(axes, panels, strict=True):
        rows = table[table["case"] == case]
        present = [name for name in BIN_LABELS if name in set(rows["size"])]
        policies = list(dict.fromkeys(rows.sort_values("_rank", kind="stable")["_policy"]))
        width = 0.8 / len(policies)
        for k, policy in enumerate(policies):
            sub = rows[rows["_policy"] == policy]
            positions = [present.index(name) - 0.4 + (k + 0.5) * width for name in sub["size"]]
            stats = [{"whislo": max(r["p5 (min)"], floor_min), "q1": max(r["Q1 (min)"], floor_min),
                      "med": max(r["median (min)"], floor_min),
                      "q3": max(r["Q3 (min)"], floor_min),
                      "whishi": max(r["p95 (min)"], floor_min), "fliers": []}
                     for _, r in sub.iterrows()]
            ax.bxp(stats, positions=positions, widths=0.85 * width, patch_artist=True,
                   showfliers=False, manage_ticks=False, label=sub["policy"].iloc[0],
                   boxprops={"facecolor": policy_colour(policy), "alpha": 0.75, "linewidth": 0.8},
                   medianprops={"color": "black", "linewidth": 1.2},
                   whiskerprops={"linewidth": 0.8}, capprops={"linewidth": 0.8})
        ax.set_xticks(np.arange(len(present)),
                      [f"{name}\n{_counts(rows, name)}" for name in present], fontsize=7)
        ax.set_xlim(-0.6, len(present) - 0.4)
        ax.set_yscale("log")
        top = max(float(rows["p95 (min)"].max()), floor_min)
        ax.set_ylim(floor_min / 2, top * 2 if top > floor_min else floor_min * 10)
        ax.set_xlabel("job size (requested nodes)", fontsize=8)
        ax.set_ylabel(f"waiting time (min, log scale)\nwaits < {WAIT_FLOOR_S:g} s drawn "
                      f"at {WAIT_FLOOR_S:g} s", fontsize=8)
        ax.set_title(case, fontsize=9)
        ax.grid(axis="y", alpha=0.3, which="major")
        ax.set_axisbelow(True)
    fig.suptitle("Waiting time by job size at default options (box: IQR and median, "
                 "whiskers: 5th-95th percentiles)", fontsize=10)
    fig.tight_layout()
    figure_legend(fig, axes, rank=dict(zip(table["policy"], table["_rank"], strict=True)))
    caption = ("Per base case, the waits (start - submission of the jobs that ran, in "
               "minutes, on a log axis) binned by the job's requested node count, one box per "
               "policy. Boxes span the interquartile range (Q1-Q3) with the median as centre "
               f"line; whiskers reach the {WHISKERS[0]:g}th and {WHISKERS[1]:g}th "
               f"percentiles; no outlier dots. Waits under {WAIT_FLOOR_S:g} s (zero "
               f"included) are drawn at {WAIT_FLOOR_S:g} s; the table gives the exact "
               "values. Job-size bins without jobs are left out; each bin's tick label gives "
               "its job count.")
    return Figure("size_bins", "Waiting time by job size (Fig. 7)", fig,
                  table.drop(columns=["_policy", "_rank"]), caption)
