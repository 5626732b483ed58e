"""Find the line of a key in a TOML text, for error messages.

:mod:`tomllib` reports positions only for syntax errors; for a value that
parses but is wrong, the campaign reader names the key as a path such as
``("group", 1, "sweep", "alpha")`` (array tables indexed from 0) and this
module finds where it is written. It understands ``[table]``, ``[[array]]``
headers and ``key =`` lines (dotted and quoted keys included), which covers
campaign files; keys inside inline tables resolve to the inline table's line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

Path = tuple[str | int, ...]

_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
                  r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_PART = re.compile(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""")


def _parts(dotted: str) -> list[str]:
    return [part.strip("\"'") for part in _PART.findall(dotted)]


def line_of(text: str, path: Sequence[str | int]) -> int | None:
    """1-based line where ``path`` (or its longest written prefix) is defined; None if nowhere."""
    target = tuple(path)
    arrays: dict[tuple[str, ...], int] = {}
    table: Path = ()
    best: tuple[int, int] | None = None  # (matched length, line)
    depth = 0  # open brackets and braces of a value spanning lines
    quote: str | None = None  # the quote of an open multi-line string
    for number, line in enumerate(text.splitlines(), start=1):
        if quote or depth:
            depth, quote = _scan(line, depth, quote)
            continue
        header = _HEADER.match(line)
        if header:
            names = _parts(header.group(2))
            if header.group(1) == "[[":
                arrays[tuple(names)] = arrays.get(tuple(names), -1) + 1
            table = _with_indices(names, arrays)
            best = _better(best, table, target, number)
            continue
        match = _KEY.match(line)
        if match:
            best = _better(best, table + tuple(_parts(match.group(1))), target, number)
            depth, quote = _scan(line[match.end():], 0, None)
    return best[1] if best else None


def _scan(text: str, depth: int, quote: str | None) -> tuple[int, str | None]:
    """Bracket depth and open multi-line string quote after ``text`` (strings, comments skipped)."""
    i = 0
    while i < len(text):
        if quote is not None:
            end = text.find(quote, i)
            if end < 0:
                return depth, quote
            i, quote = end + 3, None
            continue
        if text.startswith(('"""', "\'\'\'"), i):
            quote, i = text[i:i + 3], i + 3
            continue
        char = text[i]
        if char in "\"'":
            end = text.find(char, i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if char == "#":
            break
        depth += char in "[{"
        depth -= char in "]}"
        i += 1
    return max(depth, 0), quote


def _with_indices(names: list[str], arrays: dict[tuple[str, ...], int]) -> Path:
    """``[group.sweep]`` inside the third ``[[group]]`` is ``("group", 2, "sweep")``."""
    path: list[str | int] = []
    for i, name in enumerate(names):
        path.append(name)
        prefix = tuple(names[: i + 1])
        if prefix in arrays:
            path.append(arrays[prefix])
    return tuple(path)


def _better(best: tuple[int, int] | None, written: Path, target: Path,
            number: int) -> tuple[int, int] | None:
    """Keep the line whose written path is the longest prefix of ``target``."""
    if not written or target[: len(written)] != written:
        return best
    if best is None or len(written) > best[0]:
        return (len(written), number)
    return best
