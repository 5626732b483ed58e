"""Convert a trace (SWF or SPARS JSON) into a Batsim JSON workload (SPEC section 4)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from snficon.errors import InputError
from snficon.workload.spars import read_spars
from snficon.workload.swf import read_swf
from snficon.workload.textio import first_text_char
from snficon.workload.trace import ReadReport, Trace
from snficon.workload.writer import BatsimOptions, WriteReport, write_batsim_workload

TRACE_FORMATS = ("swf", "spars")


def detect_format(path: str | Path) -> str:
    """``swf`` or ``spars``: from the name (``.swf[.gz]``, ``.json[.gz]``), else the content
    (a SPARS file starts with ``{``)."""
    name = Path(path).name.lower().removesuffix(".gz")
    if name.endswith(".swf"):
        return "swf"
    if name.endswith(".json"):
        return "spars"
    return "spars" if first_text_char(path) == "{" else "swf"


def read_trace(path: str | Path, *, max_jobs: int | None = None, nb_res: int | None = None,
               drop_oversized: bool = False, fmt: str | None = None, skip: int = 0) -> Trace:
    """Read an SWF or SPARS trace (format detected unless ``fmt`` is given).

    ``skip`` passes over the first kept records (SPEC 4 rules apply first);
    ``max_jobs`` of those after them are read.
    """
    fmt = fmt or detect_format(path)
    if fmt not in TRACE_FORMATS:
        raise InputError(f"trace format must be one of {', '.join(TRACE_FORMATS)}, got {fmt!r}")
    reader = read_swf if fmt == "swf" else read_spars
    return reader(path, max_jobs=max_jobs, nb_res=nb_res, drop_oversized=drop_oversized,
                  skip=skip)


@dataclass(frozen=True)
class ConversionReport:
    """The reader's and the writer's reports for one conversion."""

    output: str
    read: ReadReport
    write: WriteReport

    def lines(self) -> list[str]:
        """The report as human-readable lines (the CLI prints them)."""
        return [*self.read.lines(), *self.write.lines(), f"output: {self.output}"]


def convert_trace(source: str | Path, output: str | Path, *, max_jobs: int | None = None,
                  nb_res: int | None = None, drop_oversized: bool = False,
                  options: BatsimOptions | None = None, skip: int = 0) -> ConversionReport:
    """Read ``source`` (see :func:`read_trace`) and write it to ``output`` as Batsim JSON.

    Raises :class:`InputError` when no record is kept.
    """
    trace = read_trace(source, max_jobs=max_jobs, nb_res=nb_res, drop_oversized=drop_oversized,
                       skip=skip)
    if not trace.jobs:
        skipped = f", {trace.report.skipped} kept records skipped" if skip else ""
        raise InputError(f"{source}: no job kept ({trace.report.records} records read"
                         f"{skipped})")
    written = write_batsim_workload(output, trace.jobs, trace.nb_res, options)
    return ConversionReport(output=str(output), read=trace.report, write=written)
