"""The campaign's results table: one row per run, parameters then metrics.

Columns: ``id``, ``status`` (done, failed, todo), ``groups`` (the groups
that listed the run, ``;``-separated), ``policy``, ``platform``,
``workload``, ``workload_jobs`` (empty: the whole workload), the changed
options (those differing from the policy's defaults, ``options``), then
every resolved option (one column each, empty where a policy has no such
option), then the keys of ``metrics.json``, then ``error``. Runs with a
carbon signal have ``carbon_signal`` (the campaign's label) and
``carbon_start`` whatever their status. An option whose
name is also a metric's is prefixed ``option_``.

``results.csv`` is always written; ``results.parquet`` too when pyarrow is
importable. Both are written to a temporary name and renamed.
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snficon.campaign.expand import RunSpec
from snficon.campaign.runs import DONE, FAILED, METRICS, error_summary, run_status
from snficon.fileio import atomic_write_bytes, atomic_write_text

if TYPE_CHECKING:  # pandas costs most of a command's start-up: imported where a table is made
    import pandas as pd

LOG = logging.getLogger(__name__)

BASE_COLUMNS = ("id", "status", "groups", "policy", "platform", "workload", "workload_jobs",
                "options")


def results_frame(specs: Sequence[RunSpec]) -> pd.DataFrame:
    """The table of ``specs`` as they stand on disk."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    metric_names: list[str] = []
    option_names: list[str] = []
    for spec in specs:
        folder = Path(spec.runs_dir) / spec.run_id
        status = run_status(folder)
        metrics: dict[str, Any] = {}
        if status == DONE:
            metrics = json.loads((folder / METRICS).read_text(encoding="utf-8"))
        carbon = spec.params.get("carbon")
        if carbon is not None:  # the campaign's label and the alignment, done or not
            metrics.update(carbon_signal=carbon["signal"], carbon_start=carbon["start"])
        for name in metrics:
            if name not in metric_names:
                metric_names.append(name)
        for name in spec.params["options"]:
            if name not in option_names:
                option_names.append(name)
        rows.append({
            "id": spec.run_id, "status": status, "groups": ";".join(spec.groups),
            "policy": spec.params["policy"], "platform": spec.params["platform"],
            "workload": spec.params["workload"], "workload_jobs": spec.params["jobs"],
            "options": " ".join(f"{k}={option_text(v)}" for k, v in spec.changed),
            "_options": spec.params["options"], "_metrics": metrics,
            "error": error_summary(folder) if status == FAILED else ""})
    clash = set(metric_names) | set(BASE_COLUMNS) | {"error"}
    renamed = {name: f"option_{name}" if name in clash else name for name in option_names}
    records = []
    for row in rows:
        options, metrics = row.pop("_options"), row.pop("_metrics")
        error = row.pop("error")
        row.update({renamed[name]: options.get(name) for name in sorted(option_names)})
        row.update({name: metrics.get(name) for name in metric_names})
        row["error"] = error
        records.append(row)
    columns = (list(BASE_COLUMNS) + [renamed[n] for n in sorted(option_names)]
               + metric_names + ["error"])
    frame = pd.DataFrame({name: pd.Series([row[name] for row in records], dtype=object)
                          for name in columns}, columns=columns)
    return _typed(frame)


def option_text(value: Any) -> str:
    """An option value as one would write it in TOML (``10.0`` -> ``10``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Number columns as float64, integer and boolean ones as nullable Int64 and boolean."""
    import pandas as pd

    for column in frame.columns:
        values = [v for v in frame[column] if v is not None and not pd.isna(v)]
        if not values:
            continue
        if all(isinstance(v, bool) for v in values):
            frame[column] = frame[column].astype("boolean")
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            frame[column] = frame[column].astype("Int64")
        elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            frame[column] = frame[column].astype("float64")
    return frame


def parquet_available() -> bool:
    """Whether pandas can write Parquet here (pyarrow installed)."""
    return importlib.util.find_spec("pyarrow") is not None


def write_results(specs: Sequence[RunSpec], results_dir: str | Path) -> list[Path]:
    """Write ``results.csv`` (and ``results.parquet`` with pyarrow); return the files written."""
    frame = results_frame(specs)
    folder = Path(results_dir)
    written = [atomic_write_text(folder / "results.csv", frame.to_csv(index=False))]
    if parquet_available():
        written.append(_write_parquet(frame, folder / "results.parquet"))
    else:
        LOG.info("results.parquet not written: pyarrow is not installed")
    return written


def _write_parquet(frame: pd.DataFrame, target: Path) -> Path:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return atomic_write_bytes(target, buffer.getvalue())
