"""Compare two runs message by message and file by file (the conformance check).

Used against the recordings of real Batsim 4.2.1 in ``conformance/cases`` and,
by later test suites, to check that the in-process and ZeroMQ paths of a
scheduler decide the same. Each function returns a list of human-readable
differences; an empty list means the runs agree.

Tolerances: timestamps to 1e-9 relative; numbers in output files to 1e-6
relative (Batsim prints six digits), and the ``%g`` times of the machine-state
and pstate files to one unit of their last printed digit. Ignored: the ``workloads`` file names and
the ``config`` map of ``SIMULATION_BEGINS`` and the wall-clock and version
columns of ``out_schedule.csv``.

One Batsim quirk is tolerated rather than reproduced bit for bit: the
``epower`` of an ``out_consumed_energy.csv`` row written at the same printed
time as the row before it. Batsim computes it as (energy - previous energy) /
(time - previous time); SimGrid's clock arithmetic sometimes leaves the two
times one ulp apart (a job started "at" the end of another), and the quotient
of two one-ulp differences then prints as 8192 or 16384 W (recording
``aoba16-delay``, e.g. t=32296.132) where an exact clock gives ``NA``. The
value carries no information; every other cell of those rows is compared.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from snficon.drivers.session import build_engine
from snficon.drivers.transcript import SCHED_TO_SIM, SIM_TO_SCHED, Transcript
from snficon.engine.outputs import IDENTITY_COLUMNS, OUTPUT_SUFFIXES, WALL_CLOCK_COLUMNS

MESSAGE_REL_TOL = 1e-9
OUTPUT_REL_TOL = 1e-6
_BEGINS_IGNORED = ("workloads", "config")


def _close(a: float, b: float, rel: float) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=rel)


def _diff_values(a: Any, b: Any, path: str, rel: float, out: list[str]) -> None:
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        if not _close(float(a), float(b), rel):
            out.append(f"{path}: {a!r} != {b!r}")
    elif isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                out.append(f"{path}.{key}: only in {'expected' if key in a else 'actual'}")
            else:
                _diff_values(a[key], b[key], f"{path}.{key}", rel, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items != {len(b)} items")
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            _diff_values(x, y, f"{path}[{index}]", rel, out)
    elif a != b:
        out.append(f"{path}: {a!r} != {b!r}")


def _comparable(message: dict[str, Any]) -> dict[str, Any]:
    events = []
    for event in message.get("events", []):
        if event.get("type") == "SIMULATION_BEGINS":
            data = {k: v for k, v in event.get("data", {}).items() if k not in _BEGINS_IGNORED}
            workloads = event.get("data", {}).get("workloads", {})
            data["workload_names"] = sorted(workloads)
            event = {**event, "data": data}
        events.append(event)
    return {**message, "events": events}


def compare_transcripts(expected: Transcript, actual: Transcript, *,
                        rel: float = MESSAGE_REL_TOL, limit: int = 20) -> list[str]:
    """Differences between two transcripts: same messages, same order, same data."""
    out: list[str] = []
    if len(expected.entries) != len(actual.entries):
        out.append(f"{len(expected.entries)} messages expected, {len(actual.entries)} found")
    for index, ((d1, m1), (d2, m2)) in enumerate(
            zip(expected.entries, actual.entries, strict=False)):
        where = f"message {index} ({d1}, t={m1.get('now')})"
        if d1 != d2:
            out.append(f"{where}: direction {d1} != {d2}")
            break
        before = len(out)
        _diff_values(_comparable(m1), _comparable(m2), where, rel, out)
        if len(out) > before and len(out) >= limit:
            break
    return out[:limit]


def _read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [row for row in csv.reader(handle)]


def _as_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _same_instant_epower(header: list[str], row: list[str], previous: list[str] | None,
                         col: int) -> bool:
    """True for the ill-conditioned ``epower`` cell described in the module docstring."""
    return (header[col] == "epower" and previous is not None
            and row[0] == previous[0] and header[0] == "time")


def _last_digit(text: str) -> float:
    """The value of one unit in the last printed digit of a number's text."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def _adjacent_g_texts(x: str, y: str, column: str, file_name: str) -> bool:
    """True for two times of a ``%g`` column (six significant digits) one printed unit apart.

    A time on a rounding boundary (92335.15) prints as either neighbour when the
    two clocks differ by an ulp, which says nothing about the run.
    """
    if column != "time" or not file_name.endswith(("machine_states.csv", "pstate_changes.csv")):
        return False
    return abs(float(x) - float(y)) <= max(_last_digit(x), _last_digit(y)) * (1 + 1e-9)


def compare_csv(expected: Path, actual: Path, *, rel: float = OUTPUT_REL_TOL,
                ignore_columns: Iterable[str] = (), limit: int = 20) -> list[str]:
    """Differences between two CSV files: same header, rows and cells (numbers to ``rel``)."""
    a, b = _read_csv(expected), _read_csv(actual)
    name = actual.name
    if not a or not b:
        return [f"{name}: empty file"] if a != b else []
    if a[0] != b[0]:
        return [f"{name}: header {a[0]} != {b[0]}"]
    out: list[str] = []
    if len(a) != len(b):
        out.append(f"{name}: {len(a) - 1} rows expected, {len(b) - 1} found")
    ignored = {i for i, column in enumerate(a[0]) if column in set(ignore_columns)}
    for line, (row_a, row_b) in enumerate(zip(a[1:], b[1:], strict=False), start=2):
        previous = a[line - 2] if line > 2 else None
        for col, (x, y) in enumerate(zip(row_a, row_b, strict=False)):
            if col in ignored or x == y or _same_instant_epower(a[0], row_a, previous, col):
                continue
            fx, fy = _as_float(x), _as_float(y)
            if fx is None or fy is None or not (
                    _close(fx, fy, rel) or _adjacent_g_texts(x, y, a[0][col], name)):
                out.append(f"{name} line {line} column {a[0][col]}: {x!r} != {y!r}")
        if len(row_a) != len(row_b):
            out.append(f"{name} line {line}: {len(row_a)} cells != {len(row_b)}")
        if len(out) >= limit:
            break
    return out[:limit]


def compare_outputs(expected_prefix: str | Path, actual_prefix: str | Path, *,
                    rel: float = OUTPUT_REL_TOL,
                    suffixes: Iterable[str] = OUTPUT_SUFFIXES) -> list[str]:
    """Differences between the Batsim output files of two runs, given their ``-e`` prefixes."""
    out: list[str] = []
    for suffix in suffixes:
        expected = Path(f"{expected_prefix}_{suffix}.csv")
        actual = Path(f"{actual_prefix}_{suffix}.csv")
        if not actual.exists() or not expected.exists():
            missing = actual if not actual.exists() else expected
            out.append(f"{missing} is missing")
            continue
        ignore = WALL_CLOCK_COLUMNS | IDENTITY_COLUMNS if suffix == "schedule" else ()
        out.extend(compare_csv(expected, actual, rel=rel, ignore_columns=ignore))
    return out


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?'
                    r"|[{}\[\]:,]|true|false|null")
_SIX_DECIMALS = re.compile(r"^-?\d+\.\d{6}$")


def compare_raw(expected: str, actual: str, *, rel: float = MESSAGE_REL_TOL,
                where: str = "message") -> list[str]:
    """Differences between two message texts as Batsim writes them.

    Everything but numbers must be the same text; a number must have the same
    form (an integer, or a double with six decimals) and the same value to
    ``rel`` (the energy of an ``ANSWER`` is summed differently and may differ
    in its last printed digit).
    """
    a, b = _TOKEN.findall(expected), _TOKEN.findall(actual)
    if len(a) != len(b):
        return [f"{where}: {len(a)} JSON tokens expected, {len(b)} found"]
    out: list[str] = []
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        numbers = x[0] in "-0123456789" and y[0] in "-0123456789"
        if not numbers or bool(_SIX_DECIMALS.match(x)) != bool(_SIX_DECIMALS.match(y)) \
                or ("." in x) != ("." in y) or not _close(float(x), float(y), rel):
            out.append(f"{where}: {x} != {y}")
    return out


def replay_answers(platform: str | Path, workloads: Sequence[str | Path],
                   recorded: Sequence[dict[str, Any]]) -> tuple[Any, Transcript, list[str]]:
    """Run the engine against recorded answers, fed in order as their text (no scheduler).

    ``recorded`` are the lines of a replay transcript (``dir``, ``msg``, ``raw``):
    the answer at position ``2k+1`` answers the engine's ``k``-th message.
    Returns the engine, the transcript of the run (decoded messages) and the
    text of each message the engine sent. Stops at the first error, which is
    raised once what happened until then is returned in the exception's
    ``replay`` attribute.
    """
    engine = build_engine(platform, workloads)
    transcript = Transcript()
    texts: list[str] = []
    answers = [line["raw"] for line in recorded if line["dir"] == SCHED_TO_SIM]
    try:
        message = engine.first_message()
        for answer in answers:
            if message is None:
                break
            transcript.record(SIM_TO_SCHED, message)
            texts.append(engine.message_text())
            transcript.record(SCHED_TO_SIM, json.loads(answer))
            message = engine.answer_text(answer)
        if message is not None:
            transcript.record(SIM_TO_SCHED, message)
            texts.append(engine.message_text())
    except Exception as exc:
        exc.replay = (engine, transcript, texts)  # type: ignore[attr-defined]
        raise
    return engine, transcript, texts
