"""Trace jobs: the common record between trace readers and the Batsim writer.

Every source (an SWF trace, the paper authors' SPARS JSON, the Markovian
generator) becomes a tuple of :class:`TraceJob`; :mod:`snficon.workload.writer`
turns that into a Batsim JSON workload (SPEC section 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TraceJob:
    """One job of a trace, before it becomes a Batsim job.

    ``id`` is the trace's job number; ``res`` the number of nodes it needs;
    ``subtime`` its submission time (s); ``runtime`` how long it really runs
    (s); ``reqtime`` the runtime its user requested (s), which the scheduler
    plans with and which it may overrun (SPEC section 4).
    """

    id: int
    res: int
    subtime: float
    runtime: float
    reqtime: float


@dataclass(frozen=True)
class ReadReport:
    """What a trace reader did with its input.

    ``records`` is the number of job records it read (it stops once it has
    the jobs it was asked for), ``kept`` how many became jobs, ``dropped`` the
    number of records left out per reason, ``reqtime_missing`` how many kept
    jobs had no requested time (then ``reqtime = runtime``),
    ``nb_res_source`` where the platform size came from, ``skipped`` how many
    kept records were passed over before the jobs (``--skip``) and
    ``origin_s`` the source submission time that became subtime 0.
    """

    source: str
    format: str
    records: int
    kept: int
    dropped: dict[str, int] = field(default_factory=dict)
    reqtime_missing: int = 0
    nb_res: int | None = None
    nb_res_source: str = ""
    stopped_early: bool = False
    skipped: int = 0
    origin_s: float = 0.0

    def lines(self) -> list[str]:
        """The report as human-readable lines (the CLI prints them)."""
        more = " (stopped once enough jobs were kept)" if self.stopped_early else ""
        out = [f"input: {self.source} ({self.format})",
               f"records read: {self.records}{more}",
               *([f"kept jobs skipped: {self.skipped} (subtimes relative to the last "
                  f"skipped job's submission, {self.origin_s:.10g} s)"]
                 if self.skipped else []),
               f"jobs kept: {self.kept}",
               f"records dropped: {sum(self.dropped.values())}"]
        out += [f"  {reason}: {count}" for reason, count in sorted(self.dropped.items())]
        out.append(f"reqtime missing, set to runtime: {self.reqtime_missing}")
        if self.nb_res is not None:
            out.append(f"nb_res: {self.nb_res} ({self.nb_res_source})")
        return out


@dataclass(frozen=True)
class Trace:
    """Jobs read from a trace file, the platform size and the reader's report."""

    jobs: tuple[TraceJob, ...]
    nb_res: int
    report: ReadReport
