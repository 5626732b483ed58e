"""Reading a campaign's results table and choosing the rows each figure needs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from snficon.errors import InputError
from snficon.report.style import policy_label, policy_rank

#: Radar spokes (Fig. 4), in the paper's order: column, short name, long name, and how the
#: spoke is scored. ``"cost"``: a delay or wasted-energy metric turned into an efficiency
#: score, (max - value) / (max - min) within the panel (best 1, worst 0; all equal: 1).
#: ``"share"``: a share in [0, 1] drawn as it is (SU). EE is the score of the wasted energy.
PROFILE_METRICS = (
    ("mean_wait", "AW", "average wait", "cost"),
    ("max_wait", "MW", "maximum wait", "cost"),
    ("mean_slowdown", "AS", "average slowdown", "cost"),
    ("mean_response", "AR", "average response", "cost"),
    ("utilization", "SU", "system utilization", "share"),
    ("energy_wasted", "EE", "energy efficiency", "cost"),
)

#: Sweepable options and their display names (Fig. 8-9).
SWEEPS = {"t_m": "T_M (h)", "alpha": "alpha"}

J_PER_MWH = 3.6e9
S_PER_MIN = 60.0


#: Columns every results table has (``snficon.campaign.results.BASE_COLUMNS`` names them).
REQUIRED_COLUMNS = ("id", "policy", "platform", "workload")
#: Metric columns the report computes with: each must hold numbers in the runs done.
NUMBER_COLUMNS = (*(column for column, _, _, _ in PROFILE_METRICS), "energy_total",
                  "energy_compute", "energy_wasted_to_end", "makespan", "jobs",
                  "carbon_total_kg", "carbon_compute_kg", "carbon_wasted_kg")


def load_results(folder: str | Path) -> pd.DataFrame:
    """The runs that finished (status ``done``) of ``folder/results.csv`` (or .parquet).

    Raises :class:`InputError` naming the file when it cannot be read as a
    table, lacks one of :data:`REQUIRED_COLUMNS`, or holds something other
    than a number in a metric of :data:`NUMBER_COLUMNS` (naming the row).
    """
    root = Path(folder)
    csv, parquet = root / "results.csv", root / "results.parquet"
    if not csv.is_file() and not parquet.is_file():
        raise InputError(f"report: no results.csv in {root} (make one with "
                         "'snficon campaign FILE -o RESULTS')")
    source = csv if csv.is_file() else parquet
    try:
        if source == csv:
            frame = pd.read_csv(csv, dtype={"options": str, "groups": str,
                                            "workload_jobs": object})
        else:
            frame = pd.read_parquet(parquet)
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        # UnicodeDecodeError is a ValueError; pyarrow's errors for a bad Parquet file too
        why = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{source}: not a results table: {why}") from None
    _check_columns(frame, source)
    for column in ("options", "groups"):
        if column not in frame:
            frame[column] = ""
        frame[column] = frame[column].fillna("").astype(str)
    if "status" in frame:
        frame = frame[frame["status"] == "done"]
    frame = frame.copy()
    frame["case"] = frame["platform"].astype(str) + " / " + frame["workload"].astype(str)
    frame["label"] = frame["policy"].map(policy_label)
    frame["rank"] = frame["policy"].map(policy_rank)
    frame["changed"] = frame["options"].map(_option_keys)
    return frame.reset_index(drop=True)


def _check_columns(frame: pd.DataFrame, source: Path) -> None:
    """InputError when ``frame`` (read from ``source``) lacks a column or a metric is text."""
    missing = [column for column in REQUIRED_COLUMNS if column not in frame]
    if missing:
        raise InputError(f"{source}: not a results table: no column {', '.join(missing)} "
                         f"(it has: {', '.join(map(str, frame.columns[:12]))})")
    done = frame["status"] == "done" if "status" in frame else pd.Series(True, frame.index)
    for column in NUMBER_COLUMNS:
        if column not in frame or pd.api.types.is_numeric_dtype(frame[column]):
            continue
        values = frame.loc[done, column]
        numbers = pd.to_numeric(values, errors="coerce")
        bad = values[numbers.isna() & values.notna()]
        if not bad.empty:
            row = int(bad.index[0])
            raise InputError(f"{source}: row {row + 1} (line {row + 2}), run "
                             f"{frame.at[row, 'id']}: {column} is not a number: "
                             f"{str(bad.iloc[0])[:40]!r}")
        frame[column] = numbers.reindex(frame.index)


def _option_keys(text: str) -> tuple[str, ...]:
    return tuple(sorted(item.partition("=")[0] for item in text.split() if "=" in item))


#: Options that name what a policy *is* rather than a variant of it: a run that sets only these
#: is still the policy's base run. RL Budiarjo's ``model`` (a trained network) is one: the
#: paper's Fig. 3 and 4 show the policy with its model trained on the case's dataset.
IDENTITY_OPTIONS = frozenset({"model"})


def base_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (case, policy) at the policy's default options.

    A run that changes only :data:`IDENTITY_OPTIONS` counts too and is preferred
    to the default (a trained model over ``untrained``); of several (models of
    several seeds), the first by option text.
    """
    rows = frame[frame["changed"].map(lambda keys: set(keys) <= IDENTITY_OPTIONS)]
    rows = rows.assign(_default=rows["changed"].map(len) == 0)
    rows = rows.sort_values(["case", "rank", "_default", "options"])
    rows = rows.drop_duplicates(["case", "policy"]).drop(columns="_default")
    return rows.reset_index(drop=True)


def tradeoff_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The :func:`base_rows` with a finite mean wait and wasted energy (Fig. 6 and 10)."""
    base = base_rows(frame)
    finite = [np.isfinite(pd.to_numeric(base.get(column, pd.Series(np.nan, index=base.index)),
                                        errors="coerce").astype(float))
              for column in ("mean_wait", "energy_wasted")]
    return base[finite[0] & finite[1]].reset_index(drop=True)


def cross_platform_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The :func:`tradeoff_rows` of the workloads run on more than one platform (Fig. 10).

    The ``platform`` and ``workload`` columns hold the campaign's labels
    (e.g. ``aoba-64``, ``das2-fs2``). Empty when no workload ran on two.
    """
    rows = tradeoff_rows(frame)
    platforms = rows.groupby("workload")["platform"].transform("nunique")
    rows = rows[platforms > 1]
    return rows.sort_values(["workload", "platform", "rank"]).reset_index(drop=True)


def cases(frame: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame.sort_values("case")["case"]))


def sweep_rows(frame: pd.DataFrame, option: str) -> pd.DataFrame:
    """Rows that vary only ``option`` (plus the default runs of the same case and policy)."""
    if option not in frame.columns:
        return frame.iloc[0:0]
    varied = frame[frame["changed"] == (option,)]
    if varied.empty:
        return varied
    keys = set(zip(varied["case"], varied["policy"], strict=True))
    defaults = base_rows(frame)
    defaults = defaults[[(c, p) in keys for c, p in zip(defaults["case"], defaults["policy"],
                                                         strict=True)]]
    rows = pd.concat([varied, defaults]).drop_duplicates(["case", "policy", option])
    return rows.sort_values(["case", "rank", option]).reset_index(drop=True)


def profile_scores(rows: pd.DataFrame) -> pd.DataFrame:
    r"""Per-spoke radar values in [0, 1] of ``rows`` (one panel), larger is better (Fig. 4).

    A ``cost`` spoke (AW, MW, AS, AR, and EE from the wasted energy EW) is the
    efficiency score

    .. math:: s_k = \frac{\max_j v_j - v_k}{\max_j v_j - \min_j v_j}

    over the panel's policies j (best 1, worst 0; 1 for all when they are
    equal); SU is the utilization itself. A missing value scores 0.
    """
    scores = pd.DataFrame(index=rows.index)
    for column, name, _, kind in PROFILE_METRICS:
        values = pd.to_numeric(rows.get(column), errors="coerce").astype(float)
        if kind == "share":
            scores[name] = values
            continue
        low, high = values.min(), values.max()
        if not np.isfinite(low) or not np.isfinite(high):
            scores[name] = np.nan
        elif high - low <= 1e-12 * max(1.0, abs(high)):
            scores[name] = np.where(values.notna(), 1.0, np.nan)
        else:
            scores[name] = (high - values) / (high - low)
    return scores.fillna(0.0).clip(0.0, 1.0)


def pareto_mask(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Points not dominated (both coordinates minimised)."""
    keep = np.ones(len(x), dtype=bool)
    for i in range(len(x)):
        dominated = (x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i]))
        keep[i] = not dominated.any()
    return keep
