"""Read and write robin experiment files (batexpe 1.2's flat YAML of seven keys).

Written files put every value on one line, strings as double-quoted YAML
scalars (JSON string syntax, which YAML 1.1 and 1.2 read alike)::

    batcmd: "batsim -p platforms/aoba-64.xml -w workloads/markovian-3000.json -E -e out/r/x/out"
    schedcmd: "pybatsim snficon -t 0 -o '{\\"alpha\\": 5000.0, ...}'"
    output-dir: "out/r/x"
    simulation-timeout: 604800
    ready-timeout: 10
    success-timeout: 3600
    failure-timeout: 5

Timeouts must be whole numbers of seconds, as robin reads them (see
:func:`parse_robin`).

Reading uses PyYAML when it is importable, else a small parser for this flat
format (``key: value`` lines, plain, single- or double-quoted scalars).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snficon.errors import InputError
from snficon.fileio import atomic_write_text

#: The keys of a robin file, all required, in robin's order.
KEYS = ("batcmd", "schedcmd", "output-dir", "simulation-timeout", "ready-timeout",
        "success-timeout", "failure-timeout")
TIMEOUT_KEYS = KEYS[3:]

#: The longest timeout robin can hold: it computes ``time.Duration(seconds) * time.Second``,
#: nanoseconds in a signed 64-bit integer.
MAX_TIMEOUT_S = (2**63 - 1) // 10**9

#: ``robin generate``'s defaults (seconds).
DEFAULT_TIMEOUTS = {"simulation-timeout": 604800, "ready-timeout": 10,
                    "success-timeout": 3600, "failure-timeout": 5}


@dataclass(frozen=True)
class RobinFile:
    """One robin experiment: the two commands, the output folder and the timeouts (s)."""

    batcmd: str
    schedcmd: str
    output_dir: str
    simulation_timeout: float
    ready_timeout: float
    success_timeout: float
    failure_timeout: float
    source: str = "<robin file>"

    def as_dict(self) -> dict[str, Any]:
        """The seven keys as robin spells them."""
        return {key: getattr(self, key.replace("-", "_")) for key in KEYS}


def render_robin(experiment: RobinFile, comment: str = "") -> str:
    """The YAML text of ``experiment`` (an optional ``#`` comment block first)."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    for key, value in experiment.as_dict().items():
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        lines.append(f"{key}: {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def write_robin(path: str | Path, experiment: RobinFile, comment: str = "") -> Path:
    """Write ``experiment`` to ``path`` (folders created); return the path."""
    return atomic_write_text(path, render_robin(experiment, comment))


def read_robin(path: str | Path) -> RobinFile:
    """Load and check a robin file; InputError names the file, the key and its line."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{source}: robin file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{source}: cannot read the robin file: {exc}") from None
    return parse_robin(text, source)


def parse_robin(text: str, source: str = "<robin file>") -> RobinFile:
    """Check the YAML ``text`` of a robin file (see :func:`read_robin`).

    Besides the keys and their types, what robin 1.2 would misread is refused:
    a timeout with a fraction of a second or beyond robin's range.
    """
    data = _load(text, source)
    if not isinstance(data, dict):
        raise InputError(f"{source}: a robin file is a mapping of the keys "
                         f"{', '.join(KEYS)}; got {type(data).__name__}")
    unknown = [str(key) for key in data if key not in KEYS]
    if unknown:
        key = unknown[0]
        raise InputError(f"{source}{_at(text, key)}: unknown key {key!r} (robin's keys: "
                         f"{', '.join(KEYS)})")
    missing = [key for key in KEYS if key not in data]
    if missing:
        raise InputError(f"{source}: key {missing[0]!r} is missing (robin needs all of "
                         f"{', '.join(KEYS)})")
    values: dict[str, Any] = {}
    for key in KEYS[:3]:
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{source}{_at(text, key)}: key {key!r}: expected a non-empty "
                             f"string, got {value!r}")
        values[key.replace("-", "_")] = value.strip()
    for key in TIMEOUT_KEYS:
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value) or value <= 0:
            raise InputError(f"{source}{_at(text, key)}: key {key!r}: expected a number of "
                             f"seconds > 0, got {value!r}")
        _robin_reads_alike(value, key, source + _at(text, key))
        values[key.replace("-", "_")] = float(value)
    return RobinFile(source=source, **values)


def _robin_reads_alike(seconds: float, key: str, where: str) -> None:
    """Refuse a timeout that robin 1.2 would read as another one.

    robin turns a timeout into ``time.Duration(seconds) * time.Second``: the
    conversion to a whole number of seconds drops the fraction (``0.5`` becomes
    0 s, so a ready-timeout of 0.5 fails at once and a success-timeout of 0.5
    kills the other process at once), and beyond :data:`MAX_TIMEOUT_S` the
    nanoseconds overflow.
    """
    if seconds != int(seconds):
        raise InputError(f"{where}: key {key!r}: robin reads timeouts as whole seconds and "
                         f"would wait {int(seconds)} s, not {seconds!r}; write a whole "
                         f"number of seconds >= 1")
    if seconds > MAX_TIMEOUT_S:
        raise InputError(f"{where}: key {key!r}: {seconds!r} s overflows robin's timeout "
                         f"(at most {MAX_TIMEOUT_S} s)")


def _at(text: str, key: str) -> str:
    """``:LINE`` where ``key`` is written at the start of a line, else nothing."""
    pattern = re.compile(rf"""^\s*["']?{re.escape(key)}["']?\s*:""")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return f":{number}"
    return ""


def _load(text: str, source: str) -> Any:
    try:
        import yaml
    except ImportError:
        return parse_flat_yaml(text, source)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"{source}{where}: YAML syntax error: {problem}") from None


_LINE = re.compile(r"""^(?P<key>[A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*:(?:\s+(?P<value>.*))?$""")


def parse_flat_yaml(text: str, source: str = "<yaml>") -> dict[str, Any]:
    """A flat ``key: value`` YAML mapping (the subset robin files use), without PyYAML."""
    data: dict[str, Any] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#") or line.strip() in ("---", "..."):
            continue
        match = _LINE.match(line)
        if match is None:
            raise InputError(f"{source}:{number}: expected 'key: value', got {raw.strip()!r}")
        key = match.group("key").strip("\"'")
        if key in data:
            raise InputError(f"{source}:{number}: key {key!r} is given twice")
        data[key] = _scalar((match.group("value") or "").strip(), source, number)
    return data


def _scalar(text: str, source: str, number: int) -> Any:
    if text.startswith('"'):
        try:
            value, end = json.JSONDecoder().raw_decode(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{source}:{number}: bad double-quoted string ({exc.msg})") from None
        _trailing(text[end:], source, number)
        return value
    if text.startswith("'"):
        match = re.match(r"'((?:[^']|'')*)'", text)
        if match is None:
            raise InputError(f"{source}:{number}: unterminated single-quoted string")
        _trailing(text[match.end():], source, number)
        return match.group(1).replace("''", "'")
    text = re.split(r"\s+#", text, maxsplit=1)[0].strip()
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE", "false", "False", "FALSE"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _trailing(rest: str, source: str, number: int) -> None:
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        raise InputError(f"{source}:{number}: unexpected text after the string: {rest!r}")
