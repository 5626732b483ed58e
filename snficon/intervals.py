"""Sets of machine ids and their text: Batsim's resource strings (``"0-3 7 9-10"``).

One module for both sides of the protocol: the engine parses and writes the
sets in its messages and output files, the adapter turns decisions into them
(through pybatsim's ProcSet). It imports nothing of the project.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

_ID = r"(?:0|[1-9][0-9]*)"
#: A resource set written as Batsim writes one: plain decimal ids, one space between
#: intervals (with increasing, non-adjacent intervals, checked apart, it is canonical).
_CANONICAL_TEXT = re.compile(rf"{_ID}(?:-{_ID})?(?: {_ID}(?:-{_ID})?)*", re.ASCII)


def parse_resources(text: str) -> tuple[np.ndarray, str]:
    """Machine ids of a Batsim resource set (``"0-3 7 9-10"``), sorted and unique, and the
    set's canonical text (intervals in increasing order, as Batsim writes them).

    Raises ValueError on anything else (an empty set included).
    """
    if not isinstance(text, str):
        raise ValueError(f"not a string: {text!r}")
    tokens = text.split()
    if not tokens:
        raise ValueError("empty resource set")
    if len(tokens) == 1:  # one interval (the usual allocation): no list of ids
        low, sep, high = tokens[0].partition("-")
        first = int(low)
        last = int(high) if sep else first
        if first < 0 or last < first:
            raise ValueError(f"bad interval {tokens[0]!r}")
        if first == last:
            return np.array([first], dtype=np.int64), str(first)
        return np.arange(first, last + 1, dtype=np.int64), f"{first}-{last}"
    ids: list[int] = []
    ordered, previous = True, -2
    for token in tokens:
        low, sep, high = token.partition("-")
        first = int(low)
        last = int(high) if sep else first
        if first < 0 or last < first:
            raise ValueError(f"bad interval {token!r}")
        ordered = ordered and first > previous + 1 and (first < last or not sep)
        previous = last
        if sep:
            ids.extend(range(first, last + 1))
        else:
            ids.append(first)
    nodes = np.array(ids, dtype=np.int64)
    if ordered and _CANONICAL_TEXT.fullmatch(text):  # already Batsim's text: keep it
        return nodes, text
    if not ordered:
        nodes = np.unique(nodes)
    return nodes, format_resources(nodes)


def intervals(nodes: Iterable[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive machine ids, ascending: [0, 1, 2, 7] -> [(0, 2), (7, 7)]."""
    ids = sorted({int(n) for n in nodes})
    runs: list[tuple[int, int]] = []
    first = last = ids[0]
    for node in ids[1:]:
        if node != last + 1:
            runs.append((first, last))
            first = node
        last = node
    runs.append((first, last))
    return runs


def format_resources(nodes: Iterable[int]) -> str:
    """Batsim's text for a set of machine ids: intervals joined by spaces (``"0-3 7"``)."""
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in intervals(nodes))
