"""A carbon-intensity signal file: read, checked, its gaps filled by a stated rule.

The file is CSV with the header ``timestamp_utc,gco2_per_kwh`` (further
columns are ignored; lines starting with ``#`` are comments, e.g. the label
of a synthetic file). Each row gives the intensity (gCO2/kWh, finite, >= 0)
of the interval that *starts* at ``timestamp_utc`` (ISO 8601; ``Z`` or an
offset, converted to UTC; a time without offset is read as UTC, as the
column's name says). Rows must be strictly increasing in time.

**Step.** The step is the most common difference between consecutive rows
(e.g. 30 min); every difference must be a whole multiple of it, otherwise
the file is refused (``irregular step``). A difference of k steps, k >= 2,
is a *gap* of k - 1 missing intervals. The last interval ends one step after
the last row.

**Gaps** are filled by one explicit rule, chosen by the caller and recorded
in :attr:`CarbonSignal.fill_rule` and :attr:`CarbonSignal.gaps`:

- ``linear`` (default): the missing intervals take values on the straight
  line between the interval before the gap and the one after it, by time;
- ``hold``: they take the value of the interval before the gap;
- ``refuse``: a gap is an error.

The real GB 2023 file (``gb-neso-national-2023.csv``) has four gaps, 101
intervals in all (5 on 26 January, 1 on 31 January, 4 on 7 June and 91
from 20 to 22 October, an outage of the source); under ``linear`` the
October gap becomes a two-day ramp without its daily cycle, which lowers
that stretch's contrast: campaigns that care should avoid starts there or use
``hold`` and say so.

Every error names the file and line.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from snficon.carbon.series import StepSeries
from snficon.errors import InputError

TIME_COLUMN = "timestamp_utc"
VALUE_COLUMN = "gco2_per_kwh"
FILL_RULES = ("linear", "hold", "refuse")


@dataclass(frozen=True)
class Gap:
    """Missing intervals of a signal file: the first missing start (POSIX s) and how many."""

    first_missing_s: float
    intervals: int
    line: int  # the file line of the row after the gap


@dataclass(frozen=True)
class CarbonSignal:
    """A dense carbon-intensity series (gCO2/kWh) on POSIX time, gaps already filled.

    ``series.t0_s`` is the start of the first interval; ``series.end_s`` the
    end of the last. ``synthetic`` marks generated (not measured) data.
    """

    source: str
    series: StepSeries
    fill_rule: str = "linear"
    gaps: tuple[Gap, ...] = ()
    synthetic: bool = False
    label: str = ""  # the file's comment lines, e.g. the generator's description
    measured: np.ndarray = field(default_factory=lambda: np.zeros(0, bool), repr=False,
                                 compare=False)  # False where a value was filled

    @property
    def first_s(self) -> float:
        return self.series.t0_s

    @property
    def step_s(self) -> float:
        return self.series.step_s

    @property
    def period_s(self) -> float:
        """Span of the signal (end of the last interval minus start of the first)."""
        return self.series.end_s - self.series.t0_s

    @property
    def filled_intervals(self) -> int:
        return sum(gap.intervals for gap in self.gaps)

    def summary(self) -> str:
        """One line: source, span, step, intervals, filled ones, min/mean/max."""
        v = self.series.values
        kind = "synthetic, " if self.synthetic else ""
        return (f"{self.source}: {kind}{format_instant(self.first_s)} .. "
                f"{format_instant(self.series.end_s)}, step {self.step_s:g} s, "
                f"{v.size} intervals ({self.filled_intervals} filled by {self.fill_rule!r} in "
                f"{len(self.gaps)} gap(s)), min/mean/max {v.min():.4g}/{v.mean():.4g}/"
                f"{v.max():.4g} gCO2/kWh")


def parse_instant(text: str, where: str = "") -> float:
    """POSIX seconds of an ISO 8601 instant (``2023-03-01T00:00Z``); no offset means UTC."""
    prefix = f"{where}: " if where else ""
    try:
        moment = datetime.fromisoformat(text.strip())
    except (ValueError, AttributeError):
        raise InputError(f"{prefix}not an ISO 8601 instant: {text!r} "
                         "(expected e.g. 2023-03-01T00:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def format_instant(seconds: float) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` of POSIX ``seconds`` (fractions dropped)."""
    return datetime.fromtimestamp(math.floor(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_signal(path: str | Path, fill: str = "linear") -> CarbonSignal:
    """Read and check a signal file; fill its gaps by ``fill`` (see the module's rules)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: carbon signal file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the carbon signal: {exc}") from None
    return parse_signal(text, str(path), fill)


def parse_signal(text: str, source: str, fill: str = "linear") -> CarbonSignal:
    """:func:`read_signal` on the file's text; ``source`` names it in errors."""
    if fill not in FILL_RULES:
        raise InputError(f"{source}: unknown gap rule {fill!r} (known: {', '.join(FILL_RULES)})")
    lines, comments = _data_lines(text)
    if not lines:
        raise InputError(f"{source}: empty carbon signal (expected a header "
                         f"{TIME_COLUMN},{VALUE_COLUMN})")
    header_line, header = lines[0]
    columns = next(csv.reader([header]))
    columns = [c.strip() for c in columns]
    missing = [c for c in (TIME_COLUMN, VALUE_COLUMN) if c not in columns]
    if missing:
        raise InputError(f"{source}: line {header_line}: header lacks {missing} "
                         f"(expected {TIME_COLUMN},{VALUE_COLUMN}), got {header!r}")
    t_col, v_col = columns.index(TIME_COLUMN), columns.index(VALUE_COLUMN)
    times, values, numbers = [], [], []
    for number, line in lines[1:]:
        cells = next(csv.reader([line]))
        if len(cells) <= max(t_col, v_col):
            raise InputError(f"{source}: line {number}: expected {len(columns)} columns, "
                             f"got {line!r}")
        where = f"{source}: line {number}: {TIME_COLUMN}"
        times.append(parse_instant(cells[t_col], where))
        values.append(_intensity(cells[v_col], f"{source}: line {number}"))
        numbers.append(number)
    if len(times) < 2:
        raise InputError(f"{source}: {len(times)} data row(s); a signal needs at least two "
                         "(the step is the spacing of its rows)")
    step, ks = _steps(source, times, numbers)
    return _filled(source, times, values, numbers, step, ks, fill, comments)


def _data_lines(text: str) -> tuple[list[tuple[int, str]], list[str]]:
    """Non-blank, non-comment lines with their numbers (from 1), and the comments."""
    lines, comments = [], []
    for number, line in enumerate(io.StringIO(text), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            comments.append(stripped.lstrip("#").strip())
            continue
        lines.append((number, stripped))
    return lines, comments


def _intensity(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}: {VALUE_COLUMN} is not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{where}: {VALUE_COLUMN} must be finite and >= 0, got {text!r}")
    return value


def _steps(source: str, times: list[float], numbers: list[int]) -> tuple[float, np.ndarray]:
    """The step (most common spacing) and each spacing in steps; refuses disorder."""
    t = np.asarray(times)
    diffs = np.diff(t)
    bad = np.flatnonzero(diffs <= 0)
    if bad.size:
        i = int(bad[0]) + 1
        what = "duplicate" if diffs[i - 1] == 0 else "unsorted (time goes back)"
        raise InputError(f"{source}: line {numbers[i]}: {what}: {format_instant(t[i])} after "
                         f"{format_instant(t[i - 1])} (line {numbers[i - 1]})")
    spacings, counts = np.unique(diffs, return_counts=True)
    step = float(spacings[np.argmax(counts)])  # ties: the smallest
    ratio = diffs / step
    ks = np.rint(ratio)
    off = np.flatnonzero(np.abs(ratio - ks) > 1e-6)
    if off.size:
        i = int(off[0]) + 1
        raise InputError(f"{source}: line {numbers[i]}: irregular step: {diffs[i - 1]:g} s "
                         f"after the row of line {numbers[i - 1]}, not a multiple of the "
                         f"file's step {step:g} s")
    return step, ks.astype(np.int64)


def _filled(source: str, times: list[float], values: list[float], numbers: list[int],
            step: float, ks: np.ndarray, fill: str, comments: list[str]) -> CarbonSignal:
    """The dense series: each row at its slot, gaps filled by ``fill``."""
    slots = np.concatenate(([0], np.cumsum(ks)))
    dense = np.full(int(slots[-1]) + 1, np.nan)
    dense[slots] = values
    measured = ~np.isnan(dense)
    gaps = []
    for i in np.flatnonzero(ks > 1):
        lo, hi = int(slots[i]), int(slots[i + 1])
        gap = Gap(first_missing_s=times[0] + (lo + 1) * step, intervals=hi - lo - 1,
                  line=numbers[i + 1])
        if fill == "refuse":
            raise InputError(f"{source}: line {gap.line}: gap of {gap.intervals} interval(s) "
                             f"from {format_instant(gap.first_missing_s)} (gap rule 'refuse')")
        if fill == "hold":
            dense[lo + 1:hi] = dense[lo]
        else:
            weights = np.arange(1, hi - lo) / (hi - lo)
            dense[lo + 1:hi] = dense[lo] + weights * (dense[hi] - dense[lo])
        gaps.append(gap)
    label = "\n".join(comments)
    measured.flags.writeable = False
    return CarbonSignal(source=source, series=StepSeries(times[0], step, dense),
                        fill_rule=fill, gaps=tuple(gaps),
                        synthetic="synthetic" in label.lower(), label=label, measured=measured)


def signal_csv_text(signal: CarbonSignal) -> str:
    """The signal as a file :func:`read_signal` reads back (its label as comment lines)."""
    out = [f"# {line}\n" for line in signal.label.splitlines() if line.strip()]
    out.append(f"{TIME_COLUMN},{VALUE_COLUMN}\n")
    series = signal.series
    for k, value in enumerate(series.values):
        out.append(f"{format_instant(series.t0_s + k * series.step_s)},{value:.6g}\n")
    return "".join(out)
