"""Batsim resource sets: parsing any way of writing a set gives its ids and Batsim's text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from snficon.intervals import parse_resources


def batsim_text(ids: set[int]) -> str:
    """Batsim's text of a set, written here from its definition: maximal runs, ascending."""
    ordered = sorted(ids)
    pieces = []
    start = ordered[0]
    for previous, current in zip(ordered, [*ordered[1:], None], strict=True):
        if current != previous + 1 if current is not None else True:
            pieces.append(str(start) if start == previous else f"{start}-{previous}")
            start = current
    return " ".join(pieces)


@st.composite
def writings(draw: st.DrawFn) -> tuple[set[int], str]:
    """A set of ids and one text naming it: runs split, merged, reordered, overlapping,
    written ``a-a``, with leading zeros or extra spaces."""
    ids = draw(st.sets(st.integers(0, 300), min_size=1, max_size=60))
    ordered = sorted(ids)
    runs: list[tuple[int, int]] = []
    for node in ordered:
        if runs and node == runs[-1][1] + 1 and draw(st.booleans()):
            runs[-1] = (runs[-1][0], node)
        else:
            runs.append((node, node))
    if draw(st.booleans()):
        runs = draw(st.permutations(runs))
    if runs and draw(st.booleans()):
        runs.append(draw(st.sampled_from(runs)))  # a repeated interval
    pieces = []
    for first, last in runs:
        style = draw(st.sampled_from(["plain", "plain", "range", "zeros"]))
        if style == "zeros":
            pieces.append(f"0{first}" if first == last else f"0{first}-{last}")
        elif style == "range" or first != last:
            pieces.append(f"{first}-{last}")
        else:
            pieces.append(str(first))
    separator = draw(st.sampled_from([" ", " ", "  "]))
    return ids, separator.join(pieces)


@given(writings())
def test_any_writing_gives_the_sorted_ids_and_batsims_text(case: tuple[set[int], str]) -> None:
    ids, text = case
    nodes, canonical = parse_resources(text)
    assert nodes.dtype == np.int64
    assert nodes.tolist() == sorted(ids)
    assert canonical == batsim_text(ids)


@pytest.mark.parametrize("text", ["0-3 7 9-10", "5", "0-1151", "1 3 5"])
def test_batsims_own_text_is_kept(text: str) -> None:
    assert parse_resources(text)[1] == text


@pytest.mark.parametrize("text", ["", "  ", "3-1", "-1", "a", "1-b", "1 2-0"])
def test_a_text_that_is_no_set_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_resources(text)
