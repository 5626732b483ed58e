"""The decision log of SPEC section 7: one row per scheduler invocation.

Every policy writes it; a column that does not apply to a policy or an
invocation is None, an empty cell in the CSV. :class:`DecisionLog` writes each
row as it comes (memory stays flat over a whole trace) and puts the file in
place atomically at the end.
"""

from __future__ import annotations

import csv
import io
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import MISSING, dataclass, fields
from pathlib import Path

import numpy as np

from snficon.core.names import MODES, TRIGGERS
from snficon.errors import InputError
from snficon.fileio import AtomicTextStream, atomic_write_text


@dataclass(frozen=True, kw_only=True)
class DecisionRow:
    """One invocation: the SPEC section 7 columns, in order (s, 1/s, W, J, us), then the
    paper's section V-A diagnostics SPEC 7 does not list.

    ``arrival_*`` and ``service_*`` are the screens of the two series (sample
    size, mean, CV, lag-1 autocorrelation, KS distance, KS limit, accepted);
    ``lam``, ``mu``, ``pi_a``, ``horizon`` the estimates; ``target_x`` the
    chosen spare target x* and ``target_w``/``_e``/``_j`` its W, E and J.
    Then: ``screen_reason`` (the failed rules of a rejected window),
    ``ratio_mean``/``ratio_sigma`` (log-mean and sigma of actual / requested
    runtime, App. A), ``size_mean``/``size_max`` (the requested-size pmf, eq. 19),
    ``planned_jobs`` (waiting jobs the plan placed), ``target_below_*`` and
    ``target_above_*`` (J, W, E of x* - 1 and x* + 1) and ``kills``.
    """

    time: float
    trigger: str
    mode: str | None = None
    spare_planning_point: bool | None = None
    gate_open: bool | None = None
    arrival_n: int | None = None
    arrival_mean: float | None = None
    arrival_cv: float | None = None
    arrival_lag1: float | None = None
    arrival_ks: float | None = None
    arrival_ks_limit: float | None = None
    arrival_accepted: bool | None = None
    service_n: int | None = None
    service_mean: float | None = None
    service_cv: float | None = None
    service_lag1: float | None = None
    service_ks: float | None = None
    service_ks_limit: float | None = None
    service_accepted: bool | None = None
    lam: float | None = None
    mu: float | None = None
    pi_a: float | None = None
    horizon: float | None = None
    target_x: int | None = None
    target_w: float | None = None
    target_e: float | None = None
    target_j: float | None = None
    starts: int
    wakes: int
    shutdowns: int
    wall_us: float
    screen_reason: str | None = None
    ratio_mean: float | None = None
    ratio_sigma: float | None = None
    size_mean: float | None = None
    size_max: int | None = None
    planned_jobs: int | None = None
    target_below_j: float | None = None
    target_below_w: float | None = None
    target_below_e: float | None = None
    target_above_j: float | None = None
    target_above_w: float | None = None
    target_above_e: float | None = None
    kills: int = 0

    def __post_init__(self) -> None:
        if self.trigger not in TRIGGERS:
            raise ValueError(f"trigger {self.trigger!r} is not one of {TRIGGERS}")
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(f"mode {self.mode!r} is not one of {MODES}")


#: The CSV header: DecisionRow's fields in SPEC section 7's order.
COLUMNS = tuple(field.name for field in fields(DecisionRow))
#: Where each column a policy fills (all but time, trigger and wall_us) is in a row.
_FILLED_INDEX = {name: index for index, name in enumerate(COLUMNS)
                 if name not in ("time", "trigger", "wall_us")}
_TIME, _TRIGGER, _WALL_US = (COLUMNS.index(name) for name in ("time", "trigger", "wall_us"))
#: Every column's default (None but ``kills``; the required counts must be given).
_DEFAULTS: dict[str, object] = {
    field.name: (None if field.default is MISSING else field.default)
    for field in fields(DecisionRow)}
_PLAIN = frozenset({str, int, float})
#: A row of defaults as the csv writer takes it (None is written as an empty cell).
_DEFAULT_CELLS: list[object] = [_DEFAULTS[name] for name in COLUMNS]
_STRINGS = frozenset({"trigger", "mode", "screen_reason"})
_BOOLS = frozenset({"spare_planning_point", "gate_open", "arrival_accepted",
                    "service_accepted"})
_INTS = frozenset({"arrival_n", "service_n", "target_x", "starts", "wakes", "shutdowns",
                   "size_max", "planned_jobs", "kills"})


class DecisionLog:
    """The decision rows of one run.

    With a ``path``, each row is written as it is appended (to a temporary file
    beside ``path``, renamed into place by :meth:`close`) and nothing is kept.
    Without one, the rows are kept for :meth:`rows` and :meth:`to_csv`, unless
    ``keep`` is False (a run that asked for no log: rows are only counted).
    """

    #: Rows buffered as CSV text before they are written to the file.
    FLUSH_EVERY = 512

    def __init__(self, path: str | Path | None = None, *, keep: bool = True) -> None:
        self.path = None if path is None else Path(path)
        self.keep = keep
        self._kept: list[DecisionRow] = []
        self._count = 0
        self._stream = AtomicTextStream(self.path) if self.path is not None else None
        self._pending = io.StringIO()
        self._writer = csv.writer(self._pending, lineterminator="\n")
        if self._stream is not None:
            self._writer.writerow(COLUMNS)

    def append(self, row: DecisionRow) -> None:
        """Add one invocation's row."""
        self._count += 1
        if self._stream is None:
            if self.keep:
                self._kept.append(row)
            return
        self._writer.writerow([_cell(getattr(row, name)) for name in COLUMNS])
        if self._count % self.FLUSH_EVERY == 0:
            self._flush()

    @property
    def wanted(self) -> bool:
        """Whether appended rows go anywhere (a file or :meth:`rows`); a run that asked
        for no log need not build them."""
        return self._stream is not None or self.keep

    def record(self, time: float, trigger: str, wall_us: float,
               columns: dict[str, object]) -> None:
        """Add one invocation's row from its columns (those of :class:`DecisionRow`
        but ``time``, ``trigger``, ``wall_us``; absent ones take the row's defaults).

        A streamed log writes the cells straight from ``columns``: the same text as
        ``append(DecisionRow(...))``, without building the record.
        """
        if self._stream is None:
            if self.keep:
                self.append(DecisionRow(time=time, trigger=trigger, wall_us=wall_us,
                                        **columns))
            else:
                self._count += 1
            return
        if trigger not in TRIGGERS:
            raise ValueError(f"trigger {trigger!r} is not one of {TRIGGERS}")
        mode = columns.get("mode")
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {MODES}")
        cells = _DEFAULT_CELLS.copy()
        try:
            # None, str, int and float are written by the csv module as _cell writes
            # them ('' for None, str() of the rest, which is repr for a float)
            for name, value in columns.items():
                cells[_FILLED_INDEX[name]] = (value if value is None or type(value) in _PLAIN
                                              else _cell(value))
        except KeyError:
            unknown = columns.keys() - _FILLED_INDEX.keys()
            raise TypeError(f"not decision-log columns: {sorted(unknown)}") from None
        for index, value in ((_TIME, time), (_TRIGGER, trigger), (_WALL_US, wall_us)):
            cells[index] = value if type(value) in _PLAIN else _cell(value)
        self._count += 1
        self._writer.writerow(cells)
        if self._count % self.FLUSH_EVERY == 0:
            self._flush()

    def __len__(self) -> int:
        return self._count

    def rows(self) -> Iterator[DecisionRow]:
        """The rows, in the order they were appended (a log without a path only)."""
        if self._stream is not None:
            raise RuntimeError(f"the decision log is written to {self.path}, not kept: "
                               "read it back with read_decision_log")
        if not self.keep:
            raise RuntimeError("the decision log was made with keep=False: no row was kept")
        yield from self._kept

    def close(self) -> Path | None:
        """Put the file in place (header only if no row came); None without a path."""
        if self._stream is None:
            return None
        self._flush()
        return self._stream.commit()

    def to_csv(self, path: str | Path) -> Path:
        """Write the kept rows as CSV (header = :data:`COLUMNS`, None as an empty cell),
        atomically."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows([_cell(getattr(row, name)) for name in COLUMNS] for row in self.rows())
        return atomic_write_text(path, buffer.getvalue())

    def _flush(self) -> None:
        assert self._stream is not None
        self._stream.write(self._pending.getvalue())
        self._pending.seek(0)
        self._pending.truncate()


def _cell(value: object) -> str:
    """CSV text of a value: '' for None, True/False, repr precision for floats."""
    if value is None:
        return ""
    kind = type(value)  # the common exact types first: the log has a row per invocation
    if kind is float:
        return repr(value)
    if kind is int or kind is str:
        return str(value)
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return str(value)


def read_decision_log(path: str | Path) -> list[dict[str, object]]:
    """The rows of a decision-log CSV as dicts of typed values (None for an empty cell).

    Each dict can rebuild its row: ``DecisionRow(**row)``. A missing file, a
    wrong header or a bad cell raises :class:`~snficon.errors.InputError`.
    """
    return list(iter_decision_log(path))


def iter_decision_log(path: str | Path,
                      columns: Sequence[str] = COLUMNS) -> Iterator[dict[str, object]]:
    """:func:`read_decision_log` one row at a time, for a log too long to hold whole
    (a whole trace logs one row per scheduler invocation). The header is checked
    before the first row; errors are raised when the row that has them is reached.

    ``columns``: the columns each dict has (all by default); a summary that reads a
    few of them (:func:`~snficon.analysis.modes.mode_summary`) parses only those
    cells, and a bad cell elsewhere goes unnoticed.
    """
    unknown = set(columns) - set(COLUMNS)
    if unknown:
        raise ValueError(f"not decision-log columns: {sorted(unknown)}")
    wanted = [(name, COLUMNS.index(name)) for name in columns]
    try:
        with open(path, newline="", encoding="utf-8") as stream:
            reader = csv.reader(stream)
            header = tuple(next(reader, ()))
            if header != COLUMNS:
                raise InputError(f"{path}: not a decision log, header {list(header)}")
            for line, cells in enumerate(reader, start=2):
                if len(cells) != len(COLUMNS):
                    raise InputError(f"{path}: line {line}: {len(cells)} cells, expected "
                                     f"{len(COLUMNS)}")
                yield {name: _parse(path, line, name, cells[index]) for name, index in wanted}
    except FileNotFoundError:
        raise InputError(f"{path}: missing decision log") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"{path}: cannot read: {error}") from None


def _parse(path: str | Path, line: int, name: str, text: str) -> object:
    if text == "":
        return None
    if name in _STRINGS:
        return text
    if name in _BOOLS:
        if text not in ("True", "False"):
            raise InputError(f"{path}: line {line}: {name} is not True/False: {text!r}")
        return text == "True"
    try:
        value = int(text) if name in _INTS else float(text)
    except ValueError:
        raise InputError(f"{path}: line {line}: {name} is not a number: {text!r}") from None
    return value
