"""Run a campaign's specs: skip the finished ones, execute the rest, write the table.

A run is due while its folder lacks ``metrics.json`` (signac-flow's
postcondition), so running a campaign again resumes it: finished runs are
skipped, failed and unfinished ones are tried again. The results table is
written at the end, also after an interruption: on Ctrl-C or SIGTERM the
executor drops the queued runs and kills those in progress, the table of what
is done is written and :class:`CampaignInterrupted` (a ``KeyboardInterrupt``)
is raised. Signals arriving during that clean-up are ignored
(:mod:`snficon.interrupts`), so it always completes.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from snficon.campaign.cluster_settings import ClusterSettings
from snficon.campaign.errors import CorruptedRunError
from snficon.campaign.executors import make_executor
from snficon.campaign.expand import RunSpec
from snficon.campaign.lock import results_lock
from snficon.campaign.results import write_results
from snficon.campaign.runs import (
    DONE,
    FAILED,
    clean_scratch,
    error_summary,
    metrics_problem,
    record_failure,
    run_status,
    stale_of,
)
from snficon.interrupts import signal_of

LOG = logging.getLogger(__name__)
#: Where the Slurm workers' temporary TLS credentials are written (mode 0600, shared).
CREDENTIALS = ".dask-credentials"


@dataclass(frozen=True)
class Progress:
    """Where a campaign stands; ``left_s`` is None until a run finished."""

    total: int  # runs in the campaign
    skipped: int  # already done before this invocation
    done: int  # finished in this invocation
    failed: int  # failed in this invocation
    running: int
    queued: int
    elapsed_s: float
    left_s: float | None


@dataclass
class CampaignOutcome:
    """What an invocation did; ``failures`` pairs run ids with their error's first line."""

    total: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    #: Done runs made by other code or inputs, with the reason: run again (or reused).
    stale: list[tuple[str, str]] = field(default_factory=list)
    reused_stale: bool = False
    files: list[Path] = field(default_factory=list)
    interrupted: bool = False  # stopped by Ctrl-C: the runs not done are left to a resume
    signum: int = signal.SIGINT  # the signal that stopped it (SIGINT or SIGTERM)


class CampaignInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped a campaign; the table of what is done was written.

    ``outcome.done`` counts the runs this invocation finished (those whose
    folders were published before the workers were killed); ``signum`` is the
    signal (:func:`snficon.interrupts.exit_code_of` gives the exit status).
    """

    def __init__(self, outcome: CampaignOutcome) -> None:
        super().__init__(f"campaign interrupted: {outcome.skipped + outcome.done} of "
                         f"{outcome.total} runs done")
        self.outcome = outcome
        self.signum = outcome.signum


def statuses(specs: Sequence[RunSpec]) -> dict[str, str]:
    """Run id -> status; raises CorruptedRunError naming every corrupted folder."""
    found: dict[str, str] = {}
    corrupted: list[str] = []
    for spec in specs:
        try:
            found[spec.run_id] = run_status(Path(spec.runs_dir) / spec.run_id)
        except CorruptedRunError as exc:
            corrupted.append(str(exc))
    if corrupted:
        raise CorruptedRunError("\n".join(corrupted))
    return found


def run_campaign(specs: Sequence[RunSpec], results_dir: str | Path, *,
                 executor: str = "local", workers: int | None = None,
                 address: str | None = None,
                 on_progress: Callable[[Progress], None] | None = None,
                 reuse_stale: bool = False, cluster: ClusterSettings | None = None,
                 cluster_kind: str = "slurm") -> CampaignOutcome:
    """Execute the specs not done yet (in ``results_dir/runs``) and write the results table.

    The ``slurm`` executor takes its workers from ``cluster`` (the ``[cluster]``
    table), on a cluster of ``cluster_kind`` (``local``: the same code on this
    machine, :func:`snficon.campaign.cluster.make_cluster`); ``workers`` does
    not apply to it.

    A done run made by other code or inputs (:func:`~snficon.campaign.runs.stale_of`)
    is listed in ``outcome.stale`` and run again, or kept with ``reuse_stale``.
    Raises :class:`CampaignInterrupted` on Ctrl-C, once the runs in progress
    are killed and the table is written, and
    :class:`~snficon.campaign.errors.ResultsBusyError` when another campaign
    holds ``results_dir`` (:mod:`snficon.campaign.lock`).
    """
    results = Path(results_dir)
    (results / "runs").mkdir(parents=True, exist_ok=True)
    with results_lock(results):
        return _run_locked(specs, results, executor=executor, workers=workers,
                           address=address, on_progress=on_progress, reuse_stale=reuse_stale,
                           cluster=cluster, cluster_kind=cluster_kind)


def _run_locked(specs: Sequence[RunSpec], results: Path, *, executor: str,
                workers: int | None, address: str | None,
                on_progress: Callable[[Progress], None] | None, reuse_stale: bool,
                cluster: ClusterSettings | None, cluster_kind: str) -> CampaignOutcome:
    """:func:`run_campaign` once the results folder is locked."""
    clean_scratch(results / "runs")
    before = statuses(specs)
    for spec in specs:
        problem = metrics_problem(Path(spec.runs_dir) / spec.run_id)
        if problem is not None:
            LOG.warning("%s: %s: running the run again", problem[0], problem[1])
    stale = [(spec.run_id, reason) for spec in specs if before[spec.run_id] == DONE
             for reason in [stale_of(spec, Path(spec.runs_dir) / spec.run_id)] if reason]
    rerun = set() if reuse_stale else {ident for ident, _ in stale}
    todo = [spec for spec in specs if before[spec.run_id] != DONE or spec.run_id in rerun]
    outcome = CampaignOutcome(total=len(specs), skipped=len(specs) - len(todo), stale=stale,
                              reused_stale=reuse_stale)
    for ident, reason in stale:
        LOG.warning("run %s is stale (%s): %s", ident, reason,
                    "reused (reuse_stale)" if reuse_stale else "running it again")
    started = time.monotonic()

    def report(running: int) -> None:
        if on_progress is None:
            return
        finished = outcome.done + outcome.failed
        elapsed = time.monotonic() - started
        left = elapsed / finished * (len(todo) - finished) if finished else None
        on_progress(Progress(total=len(specs), skipped=outcome.skipped, done=outcome.done,
                             failed=outcome.failed, running=running,
                             queued=len(todo) - finished - running, elapsed_s=elapsed,
                             left_s=left))

    try:
        if todo:
            count = (len(todo) if executor == "slurm"
                     else min(workers or os.cpu_count() or 1, len(todo)))
            with make_executor(executor, count, address, cluster, cluster_kind,
                               results / CREDENTIALS) as pool:
                report(min(pool.workers, len(todo)))
                for spec, result in pool.run(todo):
                    folder = Path(spec.runs_dir) / spec.run_id
                    if isinstance(result, BaseException):
                        LOG.warning("run %s: the worker failed: %s", spec.run_id, result)
                        record_failure(spec, f"{type(result).__name__}: {result}")
                    if run_status(folder) == DONE:
                        outcome.done += 1
                    else:
                        outcome.failed += 1
                        outcome.failures.append((spec.run_id, _first_error(folder)))
                    remaining = len(todo) - outcome.done - outcome.failed
                    report(min(pool.workers, remaining))
    except KeyboardInterrupt as stop:  # the executor has killed the runs in progress
        outcome.interrupted = True
        outcome.signum = signal_of(stop)
    finally:
        outcome.files = write_results(specs, results)
    clean_scratch(results / "runs")  # those of killed runs and of workers that died
    if outcome.interrupted:
        now = statuses(specs)
        outcome.done = sum(now[spec.run_id] == DONE for spec in todo)
        raise CampaignInterrupted(outcome)
    return outcome


def _first_error(folder: Path) -> str:
    return error_summary(folder) if run_status(folder) == FAILED else "no metrics written"
