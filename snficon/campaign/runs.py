"""One run's folder: its id, its status, and :func:`execute`, all an executor calls.

``RESULTS/runs/<id>/`` holds ``params.json`` (the parameters the id hashes),
``provenance.json`` (the code and input files that made it), Batsim's output
files (``out_jobs.csv``, ...), ``decisions.csv`` for the paper's policies,
``workload.json`` when the workload was cut to its first jobs,
``conversion.json`` when it was converted from a trace (the cache entry it
read, :mod:`snficon.campaign.conversion`), and either
``metrics.json`` and, written last, ``manifest.json`` (done,
:mod:`snficon.manifest`) or ``error.txt`` (failed). The folder is filled under
a temporary name and renamed when complete, so a run killed half-way leaves
no folder that counts; the next campaign run does it again.
A run interrupted in this process (Ctrl-C) removes its scratch folder; one
whose process was killed leaves it to :func:`clean_scratch`. A published
done folder is never replaced (by a failure record or a second execution)
unless it is stale: made by other code or inputs than the run would be now
(:mod:`snficon.campaign.provenance`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snficon.adapter.scheduler import ADAPTER_OPTIONS
from snficon.analysis.advice import advice_metrics
from snficon.analysis.carbon import carbon_from_outputs
from snficon.analysis.decision_log import iter_decision_log
from snficon.analysis.metrics import RunMetrics, metrics_from_outputs, write_metrics
from snficon.analysis.modes import MODE_COLUMNS, mode_summary
from snficon.analysis.time_limits import FieldNames, has_checkpoints, time_limit_metrics
from snficon.campaign.conversion import (
    CACHE,
    TraceConversion,
    converted_workload,
    write_run_record,
)
from snficon.campaign.errors import CorruptedRunError
from snficon.campaign.provenance import read_provenance, stale_reason, write_provenance
from snficon.carbon.mapping import MappedSignal
from snficon.carbon.signal import parse_instant, read_signal
from snficon.core.carbon_layer import LAYER_METHODS, CarbonLayerParams, trained_advisor
from snficon.core.carbon_signal import fill_signal_options, signal_option_names
from snficon.errors import InputError
from snficon.fileio import atomic_write_text, incomplete_marker, incomplete_reason
from snficon.lifeline import process_alive
from snficon.manifest import write_manifest
from snficon.policy_table import POLICIES

if TYPE_CHECKING:
    from snficon.campaign.expand import RunSpec

PARAMS = "params.json"
METRICS = "metrics.json"
ERROR = "error.txt"
DECISIONS = "decisions.csv"
WORKLOAD = "workload.json"
PREFIX = "out"  # Batsim's -e: out_jobs.csv, out_schedule.csv, ...
ID_LENGTH = 16  # hex digits of SHA-256 kept in a run id

DONE, FAILED, TODO = "done", "failed", "todo"


def run_id(params: dict[str, Any]) -> str:
    """The id of a run: SHA-256 of its parameters as sorted-key compact JSON (signac's calc_id)."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_LENGTH]


def run_status(folder: str | Path) -> str:
    """``done`` (metrics.json and params re-hash to the name), ``failed`` (error.txt) or ``todo``
    (also when metrics.json is corrupt, :func:`metrics_problem`).

    Raises CorruptedRunError when ``params.json`` does not hash to the
    folder's name, or a folder has metrics but no parameters.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return TODO
    params_path = folder / PARAMS
    if params_path.is_file():
        try:
            stored = run_id(json.loads(params_path.read_text(encoding="utf-8")))
        except (ValueError, TypeError) as exc:
            raise CorruptedRunError(f"{params_path}: unreadable ({exc}); delete the folder "
                                    "to run it again") from None
        if stored != folder.name:
            raise CorruptedRunError(f"{params_path}: the parameters hash to {stored}, not to "
                                    f"the folder's name; the folder was edited or moved: "
                                    "delete it to run it again")
    elif (folder / METRICS).is_file():
        raise CorruptedRunError(f"{folder}: metrics.json without params.json; delete the folder "
                                "to run it again")
    if (folder / METRICS).is_file():
        return DONE if metrics_problem(folder) is None else TODO
    return FAILED if (folder / ERROR).is_file() else TODO


def metrics_problem(folder: str | Path) -> tuple[Path, str] | None:
    """(the file, what is wrong) when ``folder`` holds a ``metrics.json`` that is not a JSON
    object (a write cut short by a full disk or a crash); None when it has none or a good one.

    Such a run is not done (:func:`run_status`): it is run again.
    """
    path = Path(folder) / METRICS
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        return path, f"unreadable ({exc})"
    except ValueError as exc:
        return path, f"not valid JSON, the file is truncated or corrupt ({exc})"
    if not isinstance(document, dict):
        return path, f"not a JSON object but {type(document).__name__}"
    return None


def error_summary(folder: str | Path) -> str:
    """The first line of a failed run's ``error.txt`` (``Type: message``)."""
    try:
        lines = (Path(folder) / ERROR).read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    return lines[0] if lines else ""


def write_run_metrics(prefix: str | Path, decisions: str | Path | None, path: str | Path,
                      extra: dict[str, Any] | None = None,
                      carbon: MappedSignal | None = None,
                      workloads: Sequence[str | Path] = (),
                      fields: FieldNames | None = None) -> tuple[RunMetrics, dict[str, Any]]:
    """Metrics of the outputs at ``prefix`` plus SNF-ICON's mode occupancy, written to ``path``.

    The mode keys (``icon_time_share``, ``fallback_time_share``,
    ``spare_planning_points``) are added when the decision log exists and
    logged a mode (SNF-ICON and its variants). With a carbon signal, the
    emissions (``carbon_total_kg``, ``carbon_compute_kg``,
    ``carbon_wasted_kg``, :mod:`snficon.analysis.carbon`) are added when the
    run has an energy file, with ``carbon_signal`` (the file's name) and
    ``carbon_start`` (the instant of t = 0). Outputs marked unfinished
    (:func:`snficon.fileio.mark_incomplete`) raise InputError: their metrics
    would describe part of a run as if it were the whole. The time-limit keys
    (:class:`~snficon.analysis.time_limits.TimeLimitMetrics`) when a job of
    ``workloads`` (the run's ``-w`` files) carries checkpoint fields named by
    ``fields``.
    """
    reason = incomplete_reason(prefix)
    if reason is not None:
        raise InputError(f"{incomplete_marker(prefix)}: the run did not finish ({reason}); "
                         "no metrics are computed from its output files")
    metrics = metrics_from_outputs(prefix)
    extra = dict(extra or {})
    if carbon is not None:
        emissions = carbon_from_outputs(prefix, carbon)
        if emissions is not None:
            extra.update(emissions.as_dict(), carbon_signal=Path(carbon.signal.source).name,
                         carbon_start=carbon.start_text)
    fields = fields or FieldNames()
    if workloads and has_checkpoints(workloads, fields):
        extra.update(asdict(time_limit_metrics(prefix, workloads, fields)))
    log = Path(decisions) if decisions is not None else None
    if log is not None and log.is_file():
        modes = mode_summary(iter_decision_log(log, MODE_COLUMNS), metrics.makespan or 0.0)
        if modes.icon_time_share or modes.fallback_time_share:
            extra.update(icon_time_share=modes.icon_time_share,
                         fallback_time_share=modes.fallback_time_share,
                         spare_planning_points=modes.spare_planning_points)
    write_metrics(metrics, path, extra)
    return metrics, extra


def advice_extra(policy: str, options: dict[str, Any], carbon: MappedSignal | None,
                 prefix: str | Path, workloads: Sequence[str | Path]) -> dict[str, Any]:
    """Idealised-vs-realised metrics of a run with a carbon signal
    (:func:`snficon.analysis.advice.advice_metrics`): with a start-time advisor layer, its
    plan replayed with the run's parameters; without, the arrivals (Observed)."""
    if carbon is None or policy not in POLICIES:
        return {}
    composition = POLICIES[policy].composition(
        {k: v for k, v in options.items() if k not in ADAPTER_OPTIONS})
    layers = [name for name in composition.layers if name in LAYER_METHODS]
    params = (composition.params[layers[0]] if layers else CarbonLayerParams())
    advisor = (trained_advisor(params, LAYER_METHODS[layers[0]], carbon) if layers else None)
    return advice_metrics(prefix, workloads, carbon, params.advisor_params("coast").grid,
                          params.coast_busy_w, advisor)


def truncate_workload(source: str | Path, jobs: int, target: str | Path) -> Path:
    """Write the first ``jobs`` jobs of a Batsim workload (file order) and their profiles."""
    try:
        document = json.loads(Path(source).read_text(encoding="utf-8"))
        kept = document["jobs"][:jobs]
        total = len(document["jobs"])
        profiles = document["profiles"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{source}: cannot read the workload's jobs ({exc})") from None
    if total < jobs:
        raise InputError(f"{source}: {total} jobs, fewer than the {jobs} the campaign asks for")
    used = {job.get("profile") for job in kept if isinstance(job, dict)}
    document.update(jobs=kept, profiles={k: v for k, v in profiles.items() if k in used})
    return atomic_write_text(target, json.dumps(document) + "\n")


def current(spec: RunSpec, folder: str | Path) -> bool:
    """Whether ``folder`` holds ``spec``'s run done by the code and inputs of now
    (:mod:`snficon.campaign.provenance`)."""
    return run_status(folder) == DONE and stale_of(spec, folder) is None


def stale_of(spec: RunSpec, folder: str | Path) -> str | None:
    """Why the done run in ``folder`` was made by other code or inputs than ``spec``'s
    (None: it was not, or ``spec`` records no provenance)."""
    if spec.provenance is None:
        return None
    return stale_reason(read_provenance(folder), spec.provenance)


def execute(spec: RunSpec) -> Path:
    """Run ``spec`` into ``runs_dir/<id>`` unless done by the code of now; return the folder.

    A failing simulation is recorded in ``error.txt`` (with the outputs written
    until the failure) instead of raised, so that a campaign goes on. The
    folder's ``provenance.json`` records the code and inputs that made it.
    """
    final = Path(spec.runs_dir) / spec.run_id
    if current(spec, final):
        return final
    work = _scratch(spec, "tmp")
    try:
        _simulate(spec, work)
    except Exception as exc:  # a run's failure is data, not a campaign error
        text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
        atomic_write_text(work / ERROR, f"{text}\n\n{traceback.format_exc()}")
    except BaseException:  # Ctrl-C or exit: nothing to publish, nothing left behind
        shutil.rmtree(work, ignore_errors=True)
        raise
    return _publish(spec, work, final)


def record_failure(spec: RunSpec, message: str) -> Path:
    """Record a run that died outside :func:`execute` (a killed worker) as failed."""
    work = _scratch(spec, "tmp")
    atomic_write_text(work / ERROR, message.rstrip("\n") + "\n")
    return _publish(spec, work, Path(spec.runs_dir) / spec.run_id)


def _scratch(spec: RunSpec, kind: str) -> Path:
    """An empty hidden folder beside the final one, named after this host and process."""
    work = Path(spec.runs_dir) / f".{kind}-{spec.run_id}-{socket.gethostname()}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    text = json.dumps(spec.params, sort_keys=True, indent=2, allow_nan=False) + "\n"
    atomic_write_text(work / PARAMS, text)
    if spec.provenance is not None:
        write_provenance(work, spec.provenance)
    return work


def _simulate(spec: RunSpec, work: Path) -> None:
    from snficon.drivers.session import simulate_in_process  # heavy: imported in the worker

    workload = spec.workload_path
    convert = spec.params.get("convert")
    if convert is not None:  # a trace: its conversion, from the cache or made into it
        cache = spec.cache_dir or str(Path(spec.runs_dir).parent / CACHE)
        converted = converted_workload(workload, spec.params["workload_sha256"],
                                       TraceConversion(**convert), cache)
        write_run_record(converted, work)
        workload = str(converted.path)
    jobs = spec.params.get("jobs")
    if jobs is not None:
        workload = str(truncate_workload(workload, int(jobs), work / WORKLOAD))
    policy = spec.params["policy"]
    options = dict(spec.params["options"])
    decisions = None
    if policy in POLICIES:
        decisions = work / DECISIONS
        options.update(platform=spec.platform_path, decisions=str(decisions))
    carbon = run_carbon(spec)
    if carbon is not None and spec.carbon_path is not None:
        options = fill_signal_options(options, signal_option_names(options),
                                      str(spec.carbon_path), carbon.start_text,
                                      carbon.signal.fill_rule, carbon.wrap)
    jitter = {key: spec.params[key] for key in ("transition_jitter", "seed")
              if key in spec.params}
    started = time.perf_counter()
    simulate_in_process(spec.platform_path, [workload], policy, options,
                        export_prefix=work / PREFIX, **jitter)
    wall_s = time.perf_counter() - started
    advice = advice_extra(policy, options, carbon, work / PREFIX, [workload])
    write_run_metrics(work / PREFIX, decisions, work / METRICS,
                      {"wall_time_s": wall_s, **jitter, **advice},
                      carbon=carbon, workloads=[workload], fields=FieldNames.from_options(options))


def run_carbon(spec: RunSpec) -> MappedSignal | None:
    """The carbon signal of a run, mapped as its ``params["carbon"]`` says (None without)."""
    setting = spec.params.get("carbon")
    if setting is None or spec.carbon_path is None:
        return None
    signal = read_signal(spec.carbon_path, setting["fill"])
    return MappedSignal(signal, parse_instant(setting["start"]), wrap=setting["wrap"])


def _publish(spec: RunSpec, work: Path, final: Path) -> Path:
    """Rename the complete ``work`` folder to ``final``, replacing an earlier failed or stale
    attempt.

    When ``final`` is already done by the code of now (another process
    finished the same run meanwhile, e.g. a Dask worker of an interrupted
    campaign), ``work`` is dropped and the done folder kept.
    """
    if current(spec, final):
        shutil.rmtree(work, ignore_errors=True)
        return final
    if (work / METRICS).is_file():  # a done run: its manifest last (snficon.manifest)
        write_manifest(work, spec.params)
    old = None
    if final.exists():
        old = final.with_name(f".old-{spec.run_id}-{socket.gethostname()}-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(work, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return final


def clean_scratch(runs_dir: str | Path) -> int:
    """Remove the hidden folders left by runs of this host whose process is gone.

    Called by the campaign's own process when none of its runs is in progress (before
    the first, or once an interruption stopped them), so folders of this very process
    are left-overs too: a Ctrl-C of a serial campaign can land between a scratch
    folder's creation and the ``try`` that would remove it.
    """
    removed = 0
    host = socket.gethostname()
    me = os.getpid()
    for folder in Path(runs_dir).glob(".*-*"):
        kind, _, rest = folder.name[1:].partition("-")
        owner, _, pid = rest[ID_LENGTH + 1:].rpartition("-")
        if kind in ("tmp", "old") and owner == host and pid.isdigit() and (
                int(pid) == me or not process_alive(int(pid))):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed

