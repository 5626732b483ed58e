"""Report generation on a small real campaign: every figure is a valid image with its CSV,
the tables are there, and the CSV beside each image is the table the report shows."""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from snficon.commands import report as report_command
from snficon.errors import InputError
from snficon.report import build_report, tradeoff
from snficon.report.build import SKIP_REASONS, markdown_table
from snficon.report.data import (
    cross_platform_rows,
    load_results,
    pareto_mask,
    profile_scores,
    sweep_rows,
)

FIGURES = ("base_comparison", "profiles", "modes", "screen", "pareto", "size_bins",
           "sweep_alpha", "sweep_alpha_metrics", "sweep_t_m", "sweep_t_m_metrics",
           "cross_platform", "gantt")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def report_dir(small_results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    written = build_report(small_results, out)
    assert written.skipped == []
    return out


@pytest.mark.parametrize("name", FIGURES)
def test_every_figure_is_a_valid_png_and_svg_with_its_csv(report_dir: Path, name: str):
    png = report_dir / "figures" / f"{name}.png"
    svg = report_dir / "figures" / f"{name}.svg"
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    assert png.stat().st_size > 1000
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    table = pd.read_csv(report_dir / "figures" / f"{name}.csv")
    assert len(table) > 0 and len(table.columns) >= 2


@pytest.mark.parametrize("name", ["base_comparison", "profiles", "pareto", "sweep_alpha",
                                  "cross_platform"])
def test_figure_csv_is_the_table_the_report_shows(report_dir: Path, name: str):
    """The CSV beside the image and the report's Markdown table under it hold the same rows."""
    csv = pd.read_csv(report_dir / "figures" / f"{name}.csv", keep_default_na=False)
    text = (report_dir / "report.md").read_text()
    section = text.split(f"(figures/{name}.png)")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0] == "| " + " | ".join(csv.columns) + " |"
    assert len(rows) == 1 + len(csv)
    for line, record in zip(rows[1:], csv.itertuples(index=False), strict=True):
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        assert cells[:2] == [str(record[0]), str(record[1])]


def test_every_figure_has_a_caption_with_units(report_dir: Path):
    text = (report_dir / "report.md").read_text()
    for name in FIGURES:
        section = text.split(f"(figures/{name}.png)")[1].split("\n## ")[0]
        captions = [line for line in section.splitlines() if line.startswith("*")]
        assert captions, name
        assert any(unit in captions[0] for unit in ("min", "MWh", "hours", "%", "dimensionless"))


def test_no_temporary_files_left(report_dir: Path):
    leftovers = [p.name for p in report_dir.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_markdown_has_the_tables(report_dir: Path):
    text = (report_dir / "report.md").read_text()
    for heading in ("Summary", "Base comparison", "Multi-metric profiles", "Mode occupancy",
                    "screen diagnostics (Fig. 5b)", "Waiting-time / energy", "job size",
                    "alpha sweep (Fig. 9)", "T_M (h) sweep (Fig. 8)",
                    "alpha sweep per metric", "Cross-platform comparison (Fig. 10)",
                    "Gantt chart"):
        assert heading in text, heading
    for name in FIGURES:
        assert f"(figures/{name}.png)" in text
    assert text.count("| case | policy |") >= 8
    summary = text.split("## Summary")[1].split("##")[0]
    for label in ("FCFS/B+IPM", "SNF+IPM", "SNF-ICON"):
        assert f"| {label} |" in summary
    assert ("| AW (min) | MW (min) | AS | AR (min) | SU | EW (MWh) | AW score | MW score | "
            "AS score | AR score | SU score | EE score |") in text
    assert "| state | node-hours |" in text
    assert ("| workload | platform | policy | AW (min) | EW (MWh) | Pareto | identical to |"
            in text)
    assert "(s)" not in text.split("## Gantt")[0]  # waits in minutes throughout
    assert "Not drawn" not in text and "not drawn" not in text


def test_html_has_the_figures_inline(report_dir: Path):
    text = (report_dir / "report.html").read_text()
    assert text.count('src="data:image/png;base64,') == len(FIGURES)
    assert text.count("<table>") >= len(FIGURES)
    assert "figures/" not in text


def test_sweeps_include_the_default_point(small_results: Path):
    frame = load_results(small_results)
    alpha = sweep_rows(frame, "alpha")
    assert sorted(alpha["alpha"]) == [10, 5000, 20000]
    t_m = sweep_rows(frame, "t_m")
    assert sorted(t_m["t_m"]) == [3600, 7200, 14400]


def test_report_command(small_results: Path, tmp_path: Path, capsys):
    parser = argparse.ArgumentParser(prog="snficon")
    report_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", str(small_results), "-o", str(tmp_path / "r"),
                              "--gantt-hours", "1"])
    assert args.func(args) == 0
    assert (tmp_path / "r" / "report.html").is_file()
    assert f"{3 * len(FIGURES)} files" in capsys.readouterr().out


def test_cross_platform_has_a_panel_per_workload_and_platform(small_results: Path):
    frame = load_results(small_results)
    figure = tradeoff.cross_platform(frame)
    assert figure is not None
    try:
        axes = [ax for ax in figure.figure.axes if ax.get_visible() and ax.get_title()]
        assert [ax.get_title() for ax in axes] == ["(a) p4 w10", "(b) t4 w10"]
        assert all(ax.get_xlabel() == "mean waiting time AW (min)" for ax in axes)
    finally:
        plt.close(figure.figure)
    table = figure.table
    assert len(table) == 6
    assert table.groupby("platform")["policy"].apply(list).to_dict() == {
        "p4": ["FCFS/B+IPM", "SNF+IPM", "SNF-ICON"], "t4": ["FCFS/B+IPM", "SNF+IPM", "SNF-ICON"]}
    # The numbers are the results table's, and every panel has a nondominated point.
    rows = frame[frame["changed"].map(len) == 0].set_index(["platform", "label"])
    for _, row in table.iterrows():
        assert row["AW (min)"] == pytest.approx(rows.loc[(row["platform"], row["policy"]),
                                                         "mean_wait"] / 60)
    assert set(table[table["Pareto"] == "yes"]["platform"]) == {"p4", "t4"}
    # The two platforms' node models differ, so their energies do too.
    waste = table.groupby("platform")["EW (MWh)"].sum()
    assert waste["p4"] != pytest.approx(waste["t4"])


def test_cross_platform_skipped_with_a_sentence_on_one_platform(small_results: Path,
                                                                 tmp_path: Path):
    """Results holding one platform only: no Fig. 10 file, the report says why."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "runs").symlink_to(small_results / "runs")
    rows = pd.read_csv(small_results / "results.csv", dtype=str, keep_default_na=False)
    rows[rows["platform"] == "p4"].to_csv(results / "results.csv", index=False)
    assert cross_platform_rows(load_results(results)).empty
    written = build_report(results, tmp_path / "report", gantt_hours=1)
    assert written.skipped == ["cross-platform comparison"]
    assert not list((tmp_path / "report" / "figures").glob("cross_platform.*"))
    sentence = SKIP_REASONS["cross-platform comparison"]
    assert "more than one platform" in sentence
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert sentence in markdown and "Not drawn" not in markdown
    assert "(figures/cross_platform.png)" not in markdown
    assert "more than one platform" in (tmp_path / "report" / "report.html").read_text()


def test_missing_results_is_an_input_error(tmp_path: Path):
    with pytest.raises(InputError, match="results.csv"):
        load_results(tmp_path)


def test_pareto_mask():
    x = np.array([1.0, 2.0, 3.0, 2.0])
    y = np.array([3.0, 1.0, 0.5, 2.0])
    assert pareto_mask(x, y).tolist() == [True, True, True, False]


def test_profile_scores_are_the_papers_efficiency_scores():
    """(max - v) / (max - min) per cost spoke (EE from the wasted energy), SU as it is."""
    rows = pd.DataFrame({"mean_wait": [100.0, 50.0, 75.0], "max_wait": [10.0, 20.0, 30.0],
                         "mean_slowdown": [1.0, 2.0, 1.5], "mean_response": [5.0, 5.0, 5.0],
                         "utilization": [0.4, 0.2, 0.3],
                         "energy_wasted": [3.0e9, 1.0e9, 2.0e9], "ee": [0.1, 0.9, 0.5]})
    scores = profile_scores(rows)
    assert scores["AW"].tolist() == [0.0, 1.0, 0.5]
    assert scores["MW"].tolist() == [1.0, 0.5, 0.0]
    assert scores["AR"].tolist() == [1.0, 1.0, 1.0]  # all equal: 1
    assert scores["SU"].tolist() == [0.4, 0.2, 0.3]  # drawn as it is
    assert scores["EE"].tolist() == [0.0, 1.0, 0.5]  # from energy_wasted, not metrics' ee


def test_markdown_table_escapes_and_blanks():
    table = pd.DataFrame({"a": ["x|y", None], "b": [1.23456, float("nan")]})
    assert markdown_table(table).splitlines() == [
        "| a | b |", "|---|---|", "| x\\|y | 1.235 |", "|  |  |"]
