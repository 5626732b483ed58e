r"""Fig. 5: SNF-ICON's mode occupancy (a) and its recent-window arrival diagnostics (b).

(a) For each base case and each member of the SNF-ICON family, the share of
time spent in ICON mode (M(t) = 2, eq. 12) within consecutive windows of
equal length (24 h on the paper's traces), with the total hours in ICON and
fallback on the right, as the paper writes them. A mode holds from one
invocation to the next; the last holds until the last job's end, the window
of ``icon_time_share`` (:mod:`snficon.analysis.modes`).

(b) For each base case, the arrival screen of the fallback-enabled SNF-ICON
run at each invocation: the coefficient of variation cv_A with its accepted
band :math:`|cv - 1| \le \delta_{cv}` (eq. 6), the lag-one autocorrelation
:math:`\hat\rho_{1,A}` with :math:`|\hat\rho_1| \le \delta_\rho` (eq. 9), and the
KS distance D_n,A under its limit :math:`\kappa_m \kappa_0 / \sqrt{n}` (eq. 10).
Blank stretches are invocations with fewer than n_min recent samples.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from snficon.report.data import base_rows, cases
from snficon.report.panels import Figure
from snficon.report.style import ICON_FAMILY, policy_colour, policy_linestyle

#: Window lengths (h) the occupancy may use: the shortest giving at most
#: :data:`MAX_WINDOWS` windows over the longest run (24 h on the paper's traces).
WINDOW_CHOICES_H = (0.25, 0.5, 1.0, 2.0, 3.0, 6.0, 12.0, 24.0, 48.0, 168.0)
MAX_WINDOWS = 100
#: Table I's screen thresholds, used when a run's results row does not give them.
DEFAULT_DELTA_CV, DEFAULT_DELTA_RHO = 0.45, 0.65
#: Upper end of the cv_A axis (a few bursty windows reach 10 and more).
CV_TOP = 4.0
#: Upper end of the D_n,A axis: D is at most 1; the limit is drawn up to here.
KS_TOP = 1.6
DIAGNOSTICS = ("arrival_n", "arrival_cv", "arrival_lag1", "arrival_ks", "arrival_ks_limit",
               "arrival_accepted")


def read_modes(path: Path) -> pd.DataFrame | None:
    """``time`` and ``mode`` of a decision log; ``None`` without one or without modes."""
    if not path.is_file():
        return None
    log = pd.read_csv(path, usecols=lambda c: c in ("time", "mode", *DIAGNOSTICS))
    if "mode" not in log or log["mode"].isna().all():
        return None
    return log


def occupancy_window_h(longest_h: float) -> float:
    """The window length (h): the shortest of :data:`WINDOW_CHOICES_H` giving <= 100 windows."""
    for window in WINDOW_CHOICES_H:
        if longest_h / window <= MAX_WINDOWS:
            return window
    return WINDOW_CHOICES_H[-1]


def icon_time(times_s: np.ndarray, icon: np.ndarray, end_s: float, edges_s: np.ndarray
              ) -> np.ndarray:
    """Seconds in ICON mode in [0, t] for each t of ``edges_s``.

    Invocation i's mode holds over [times_s[i], times_s[i+1]) and the last
    over [times_s[-1], end_s]; time before the first invocation and after
    ``end_s`` counts as neither.
    """
    stops = np.append(times_s[1:], max(end_s, times_s[-1]))
    begins, stops = np.minimum(times_s, end_s), np.minimum(stops, end_s)
    grid = np.concatenate([begins, stops[-1:]])
    spent = np.concatenate([[0.0], np.cumsum(np.where(icon, stops - begins, 0.0))])
    return np.interp(edges_s, grid, spent, left=0.0, right=spent[-1])


def _chosen_runs(frame: pd.DataFrame, runs_dir: Path) -> list[tuple[str, pd.Series, pd.DataFrame]]:
    """(case, results row, decision log) of every SNF-ICON-family base run with modes."""
    base = base_rows(frame)
    chosen = []
    for case in cases(base):
        rows = base[(base["case"] == case) & base["policy"].isin(ICON_FAMILY)]
        for _, row in rows.sort_values("rank").iterrows():
            log = read_modes(runs_dir / str(row["id"]) / "decisions.csv")
            if log is not None:
                chosen.append((case, row, log))
    return chosen


def _end_s(row: pd.Series, log: pd.DataFrame) -> float:
    makespan = pd.to_numeric(pd.Series([row.get("makespan")]), errors="coerce").iloc[0]
    return float(makespan) if np.isfinite(makespan) else float(log["time"].iloc[-1])


def mode_occupancy(frame: pd.DataFrame, runs_dir: Path) -> Figure | None:
    """Fig. 5a: ICON share per window for all four variants, per base case."""
    chosen = _chosen_runs(frame, runs_dir)
    if not chosen:
        return None
    panels = list(dict.fromkeys(case for case, _, _ in chosen))
    window_h = occupancy_window_h(max(_end_s(row, log) for _, row, log in chosen) / 3600)
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 1.9 * len(panels) + 1.4),
                             squeeze=False)
    axes = list(axes[:, 0])
    summary, windows, notes = [], [], []
    for ax, case in zip(axes, panels, strict=True):
        curves: list[tuple[str, np.ndarray]] = []
        runs = [(row, log) for c, row, log in chosen if c == case]
        end_h = max(_end_s(row, log) for row, log in runs) / 3600
        for k, (row, log) in enumerate(runs):
            end_s = _end_s(row, log)
            times = log["time"].to_numpy(dtype=float)
            icon = (log["mode"] == "icon").to_numpy()
            fallback = (log["mode"] == "fallback").to_numpy()
            edges = np.append(np.arange(0.0, end_s, window_h * 3600), end_s)
            spent = np.diff(icon_time(times, icon, end_s, edges))
            share = 100 * spent / np.diff(edges)
            icon_h = icon_time(times, icon, end_s, np.array([end_s]))[0] / 3600
            fallback_h = icon_time(times, fallback, end_s, np.array([end_s]))[0] / 3600
            level = np.where(icon, 2, np.where(fallback, 1, 0))
            same = [name for name, other in curves
                    if len(other) == len(share) and np.allclose(other, share)]
            if same:
                notes.append(f"{case}: {row['label']}'s curve is {same[0]}'s (drawn over it).")
            curves.append((row["label"], share))
            hue, label = policy_colour(row["policy"]), row["label"]
            ax.step(edges / 3600, np.append(share, share[-1]), where="post", color=hue,
                    linestyle=policy_linestyle(row["policy"]), linewidth=1.3, label=label)
            ax.text(1.005, 0.92 - 0.24 * k, f"{label}: {icon_h:.1f} h | {fallback_h:.1f} h",
                    transform=ax.transAxes, fontsize=7.5, color=hue, va="top")
            summary.append({"case": case, "policy": label, "window (h)": window_h,
                            "ICON (h)": icon_h, "fallback (h)": fallback_h,
                            "ICON share (%)": 100 * icon_h * 3600 / end_s if end_s > 0 else 0.0,
                            "mode switches": int((np.diff(level) != 0).sum()),
                            "decisions": len(log)})
            windows += [{"case": case, "policy": label, "window start (h)": a / 3600,
                         "window end (h)": b / 3600, "ICON share (%)": s}
                        for a, b, s in zip(edges[:-1], edges[1:], share, strict=True)]
        ax.text(1.005, 1.0, "ICON | fallback", transform=ax.transAxes, fontsize=7.5,
                va="bottom")
        ax.set_xlim(0, end_h)
        ax.set_ylim(-4, 104)
        ax.set_yticks([0, 50, 100])
        ax.set_ylabel(f"ICON share (%)\nper {window_h:g}-h window", fontsize=8)
        ax.set_title(case, fontsize=9, loc="left")
        ax.grid(alpha=0.3)
        ax.set_axisbelow(True)
    axes[-1].set_xlabel("simulation time (h)")
    fig.suptitle("Mode occupancy: share of time in ICON mode (M(t) = 2) per window; "
                 "the rest is SNF+IPM fallback (M(t) = 1)", fontsize=10, x=0.43)
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    fig.legend(list(handles.values()), list(handles), loc="lower center",
               ncols=len(handles), fontsize=8)
    height = fig.get_size_inches()[1]
    fig.tight_layout(rect=(0, 0.5 / height, 0.84, 1 - 0.35 / height))
    caption = (f"Per base case, for each SNF-ICON variant with a decision log: the share "
               f"of each {window_h:g}-h window of simulated time spent in ICON mode, in %. "
               "A mode holds from one scheduler invocation to the next, the last one until "
               "the last job's end. On the right: total hours in ICON | in fallback, as in "
               "the paper. The NF variants never fall back (forced ICON), so their share is "
               "100 %. The CSV holds every window's share.")
    return Figure("modes", "Mode occupancy (Fig. 5a)", fig, pd.DataFrame(summary), caption,
                  notes, data=pd.DataFrame(windows))


def _thresholds(row: pd.Series) -> tuple[float, float]:
    values = []
    for name, default in (("delta_cv", DEFAULT_DELTA_CV), ("delta_rho", DEFAULT_DELTA_RHO)):
        value = pd.to_numeric(pd.Series([row.get(name)]), errors="coerce").iloc[0]
        values.append(float(value) if np.isfinite(value) else default)
    return values[0], values[1]


def _changes(log: pd.DataFrame) -> pd.DataFrame:
    """The rows where a diagnostic changed (the values are steps between invocations)."""
    values = log[[c for c in DIAGNOSTICS if c in log]]
    changed = values.ne(values.shift()) & ~(values.isna() & values.shift().isna())
    keep = changed.any(axis=1).to_numpy().copy()
    keep[0] = True
    return log[keep]


def screen_diagnostics(frame: pd.DataFrame, runs_dir: Path) -> Figure | None:
    """Fig. 5b: cv_A, rho_1,A and D_n,A over time with their acceptance bands, per case."""
    chosen, workloads = [], set()
    for case, row, log in _chosen_runs(frame, runs_dir):
        if row["workload"] not in workloads and set(DIAGNOSTICS) <= set(log.columns):
            chosen.append((case, row, log))
            workloads.add(row["workload"])
    if not chosen:
        return None
    columns = min(2, len(chosen))
    blocks = -(-len(chosen) // columns)
    fig = plt.figure(figsize=(6.4 * columns, 4.4 * blocks + 0.6))
    outer = fig.add_gridspec(blocks, columns, hspace=0.45, wspace=0.22)
    summary, points, notes = [], [], []
    for k, (case, row, log) in enumerate(chosen):
        delta_cv, delta_rho = _thresholds(row)
        end_h = _end_s(row, log) / 3600
        steps = _changes(log)
        hours = steps["time"].to_numpy(dtype=float) / 3600
        hue = policy_colour(row["policy"])
        inner = outer[k // columns, k % columns].subgridspec(3, 1, hspace=0.12)
        axes = [fig.add_subplot(inner[i]) for i in range(3)]
        cv, lag1 = steps["arrival_cv"].to_numpy(float), steps["arrival_lag1"].to_numpy(float)
        ks, limit = steps["arrival_ks"].to_numpy(float), steps["arrival_ks_limit"].to_numpy(float)
        band = {"color": "#dfe8f3", "zorder": 0}
        axes[0].axhspan(1 - delta_cv, 1 + delta_cv, **band, label="accepted range")
        axes[0].axhline(1.0, color="#888888", linewidth=0.8)
        axes[0].plot(hours, cv, ".", color=hue, markersize=1.6)
        axes[0].set_ylabel("cv_A", fontsize=8)
        top = float(np.nanmax(cv)) if np.isfinite(cv).any() else 2.0
        axes[0].set_ylim(0, min(CV_TOP, max(2.0, 1.05 * top)))
        if top > CV_TOP:
            notes.append(f"{case}: cv_A reaches {top:.3g}; values above {CV_TOP:g} are "
                         "outside the panel (the CSV has them).")
        axes[1].axhspan(-delta_rho, delta_rho, **band)
        for level in (-delta_rho, delta_rho):
            axes[1].axhline(level, color="#888888", linewidth=0.8, linestyle=":")
        axes[1].plot(hours, lag1, ".", color=hue, markersize=1.6)
        axes[1].set_ylabel("rho_1,A", fontsize=8)
        axes[1].set_ylim(-1.05, 1.05)
        axes[2].fill_between(hours, 0, limit, step="post", **band)
        axes[2].step(hours, limit, where="post", color="#555555", linewidth=0.8,
                     linestyle=":", label="KS limit")
        axes[2].plot(hours, ks, ".", color=hue, markersize=1.6)
        axes[2].set_ylabel("D_n,A", fontsize=8)
        highest = float(np.nanmax(limit)) if np.isfinite(limit).any() else 1.0
        axes[2].set_ylim(0, min(KS_TOP, max(1.05, 1.05 * highest)))
        axes[2].set_xlabel("simulation time (h)", fontsize=8)
        axes[0].set_title(f"{case} - {row['label']}: delta_cv = {delta_cv:g}, "
                          f"delta_rho = {delta_rho:g}", fontsize=9, loc="left")
        for i, ax in enumerate(axes):
            ax.set_xlim(0, end_h)
            ax.tick_params(labelsize=7, labelbottom=i == 2)
            ax.grid(alpha=0.3, linestyle="--")
            ax.set_axisbelow(True)
        summary.append(_diagnostic_summary(case, row, log, delta_cv, delta_rho))
        points += [{"case": case, "policy": row["label"], "time (h)": h, "n": n,
                    "cv_A": c, "rho_1,A": r, "D_n,A": d, "KS limit": lim, "accepted": a}
                   for h, n, c, r, d, lim, a in zip(
                       hours, steps["arrival_n"], cv, lag1, ks, limit,
                       steps["arrival_accepted"], strict=True)]
    handles = [plt.Rectangle((0, 0), 1, 1, color="#dfe8f3", label="accepted range"),
               plt.Line2D([], [], color="#555555", linestyle=":", label="threshold / KS limit"),
               plt.Line2D([], [], color="#888888", label="cv = 1 (exponential)")]
    fig.legend(handles=handles, loc="lower center", ncols=3, fontsize=8)
    fig.suptitle("Recent-window inter-arrival diagnostics of the Markovianity screen "
                 "(shaded: accepted range; blank: fewer than n_min samples)", fontsize=10)
    fig.subplots_adjust(top=1 - 0.75 / fig.get_size_inches()[1],
                        bottom=0.85 / fig.get_size_inches()[1], left=0.07, right=0.98)
    caption = ("Per workload (on the first platform it ran on: the inter-arrival times are "
               "the workload's), the arrival screen of the first SNF-ICON variant with a "
               "decision log (the complete method when present), one dot per scheduler "
               "invocation where a value changed, over the inter-arrival times of the last "
               "T_M seconds: cv_A, the "
               "coefficient of variation (eq. 5), accepted when |cv_A - 1| <= delta_cv "
               "(eq. 6); rho_1,A, the lag-one autocorrelation (eq. 8), accepted when "
               "|rho_1,A| <= delta_rho (eq. 9); D_n,A, the Kolmogorov-Smirnov distance to "
               "the fitted exponential, accepted under the limit kappa_m kappa_0 / sqrt(n) "
               "(eq. 10, dotted, drawn up to 1.6; D is at most 1, so a limit above 1 accepts any "
               "sample). All "
               "three are dimensionless. The table gives, per case, "
               "the share of the time (from the first invocation to the last job's end) "
               "each condition held; the CSV every value drawn.")
    return Figure("screen", "Markovianity screen diagnostics (Fig. 5b)", fig,
                  pd.DataFrame(summary), caption, notes, data=pd.DataFrame(points))


def _diagnostic_summary(case: str, row: pd.Series, log: pd.DataFrame, delta_cv: float,
                        delta_rho: float) -> dict:
    """Time shares (%) of the run's invocations where each screen condition held."""
    times = log["time"].to_numpy(dtype=float)
    end = max(_end_s(row, log), times[-1])
    spans = np.diff(np.append(times, end))
    total = spans.sum() or 1.0
    cv, lag1 = log["arrival_cv"].to_numpy(float), log["arrival_lag1"].to_numpy(float)
    ks, limit = log["arrival_ks"].to_numpy(float), log["arrival_ks_limit"].to_numpy(float)
    accepted = log["arrival_accepted"].astype(str).str.lower().eq("true").to_numpy()

    def share(mask: np.ndarray) -> float:
        return 100 * float(spans[mask].sum()) / total

    return {"case": case, "policy": row["label"], "delta_cv": delta_cv, "delta_rho": delta_rho,
            "screen evaluated (%)": share(np.isfinite(cv)),
            "cv in band (%)": share(np.abs(cv - 1) <= delta_cv),
            "|rho_1| <= delta_rho (%)": share(np.abs(lag1) <= delta_rho),
            "D <= limit (%)": share(ks <= limit),
            "arrival accepted (%)": share(accepted)}
