"""What every figure of the report is made of: the figure record and the panel layout.

A builder returns a :class:`Figure`: the matplotlib figure, its caption (what
is drawn, each metric's definition and unit), the table shown under it in the
report and the table written beside its PNG and SVG as ``NAME.csv`` (the
numbers actually drawn).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure as MplFigure  # noqa: E402


@dataclass
class Figure:
    """A drawn figure, its caption and the numbers behind it.

    ``table`` is shown in the report; ``data`` (default: ``table``) is what
    was drawn, point by point, and is written as ``NAME.csv``.
    """

    name: str
    title: str
    figure: MplFigure
    table: pd.DataFrame
    caption: str = ""
    notes: list[str] = field(default_factory=list)
    data: pd.DataFrame | None = None

    @property
    def drawn(self) -> pd.DataFrame:
        """The table written beside the images (``NAME.csv``)."""
        return self.table if self.data is None else self.data


def panel_grid(count: int, width: float = 4.6, height: float = 3.6, polar: bool = False,
               columns: int = 3) -> tuple[MplFigure, list]:
    """A figure of ``count`` panels, ``columns`` to a row (the spare cells hidden)."""
    cols = max(1, min(columns, count))
    rows = math.ceil(count / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False,
                             subplot_kw={"projection": "polar"} if polar else None)
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def figure_legend(fig: MplFigure, axes: list, columns: int = 7,
                  rank: dict[str, int] | None = None) -> None:
    """One legend below the panels, with every label of every panel once.

    ``rank`` orders the labels it names (the policies, in the paper's
    order); the others (frontier, baselines) come first, as drawn.
    """
    seen: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if not label.startswith("_"):
                seen.setdefault(label, handle)
    rank = rank or {}
    seen = dict(sorted(seen.items(), key=lambda item: rank.get(item[0], -1)))
    if seen:
        rows = math.ceil(len(seen) / columns)
        fig.legend(list(seen.values()), list(seen), loc="lower center", fontsize=8,
                   ncols=min(columns, len(seen)), bbox_to_anchor=(0.5, 0.0))
        height = fig.get_size_inches()[1]
        fig.tight_layout(rect=(0, min(0.3, (0.25 + 0.22 * rows) / height), 1, 1))


def marker_handles(rows: pd.DataFrame, extra: list | None = None) -> list:
    """Legend handles: ``extra`` first, then one filled marker per policy of ``rows``.

    Used where a policy's marker is filled in some panels and hollow in
    others, so that the legend shows each policy once, the same way.
    """
    from matplotlib.lines import Line2D

    from snficon.report.style import policy_colour, policy_marker

    handles = list(extra or [])
    ordered = rows.drop_duplicates("policy").sort_values("rank", kind="stable")
    for policy, label in zip(ordered["policy"], ordered["label"], strict=True):
        handles.append(Line2D([], [], linestyle="none", marker=policy_marker(policy),
                              markersize=7, color=policy_colour(policy), label=label))
    return handles


def legend_below(fig: MplFigure, handles: list, columns: int = 5) -> None:
    """``handles`` as one legend below the panels (the figure's layout made room for)."""
    rows = math.ceil(len(handles) / columns)
    fig.legend(handles=handles, loc="lower center", fontsize=8,
               ncols=min(columns, len(handles)), bbox_to_anchor=(0.5, 0.0))
    height = fig.get_size_inches()[1]
    fig.tight_layout(rect=(0, min(0.3, (0.25 + 0.22 * rows) / height), 1, 1))


def style_handles() -> list:
    """Legend entries explaining filled (nondominated) and hollow (dominated) markers."""
    from matplotlib.lines import Line2D

    return [Line2D([], [], linestyle="none", marker="o", markersize=7, color="#555555",
                   label="nondominated (filled)"),
            Line2D([], [], linestyle="none", marker="o", markersize=7, markerfacecolor="none",
                   markeredgecolor="#555555", label="dominated (hollow)")]


def label_ranks(rows: pd.DataFrame) -> dict[str, int]:
    """Label -> paper order of the policies in ``rows`` (columns ``label`` and ``rank``)."""
    return dict(zip(rows["label"], rows["rank"], strict=True)) if not rows.empty else {}


def column(rows: pd.DataFrame, name: str, scale: float = 1.0) -> np.ndarray:
    """``rows[name]`` as floats divided by ``scale`` (NaN where missing or not a number)."""
    if name not in rows:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows[name], errors="coerce").to_numpy(dtype=float) / scale


def close(fig: MplFigure) -> None:
    """Free a drawn figure."""
    plt.close(fig)
