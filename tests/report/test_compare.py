"""``snficon report --compare``: two campaigns run by run, and ``--fail-above``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from snficon import cli
from snficon.report import build_report
from snficon.report.compare import compare_campaigns, compare_figure, relative_difference
from snficon.report.data import load_results
from tests.report.conftest import read_results_csv, relabelled


def test_relative_difference():
    assert relative_difference(200.0, 210.0) == pytest.approx(5.0)
    assert relative_difference(-4.0, -2.0) == pytest.approx(50.0)
    assert relative_difference(0.0, 0.0) == 0.0
    assert relative_difference(0.0, 1.0) == math.inf
    assert relative_difference(1.0, float("nan")) == math.inf
    assert math.isnan(relative_difference(float("nan"), float("nan")))


def _compare(a: Path, b: Path):
    return compare_campaigns(load_results(a), a / "runs", load_results(b), b / "runs", "A", "B")


def test_a_campaign_against_itself_has_no_difference(family_results: Path):
    comparison = _compare(family_results, family_results)
    assert comparison.pairs == 18
    assert comparison.only_a.empty and comparison.only_b.empty
    assert (comparison.long["difference"] == 0).all()
    keys = set().union(*(json.loads(path.read_text()) for path in
                         (family_results / "runs").glob("*/metrics.json")))
    assert set(comparison.long["metric"]) == keys - {"wall_time_s"}
    assert "icon_time_share" in keys
    assert comparison.above(0.0).empty


def test_differences_are_the_results_differences(family_results: Path, slow_on_results: Path):
    comparison = _compare(family_results, slow_on_results)
    assert comparison.pairs == 6  # the base runs; the sweeps are only in A
    assert len(comparison.only_a) == 12 and comparison.only_b.empty
    a, b = read_results_csv(family_results), read_results_csv(slow_on_results)
    for _, row in comparison.long.iterrows():
        key = ("p8", "m120", row["policy id"], "")
        for side, source, run in (("A", a, "run A"), ("B", b, "run B")):
            assert row[run] == source[key]["id"]
            text = source[key][row["metric"]]
            if text == "":
                assert math.isnan(row[side])
            else:
                assert row[side] == pytest.approx(float(text))
        if math.isfinite(row["A"]) and row["A"] != 0:
            assert row["difference (%)"] == pytest.approx(100 * (row["B"] - row["A"])
                                                          / abs(row["A"]))
    # a four times slower switch-on makes jobs wait longer
    waits = comparison.long[comparison.long["metric"] == "mean_wait"]
    assert (waits["difference"] > 0).all()
    worst = comparison.worst()
    assert abs(worst["difference (%)"]) == comparison.long["difference (%)"].abs().max()


def test_a_campaign_wide_option_does_not_stop_pairing(family_results: Path, tmp_path: Path):
    """An option set throughout one campaign only (an engine setting, say) is reported,
    not used to pair."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "runs").symlink_to(family_results / "runs")
    rows = pd.read_csv(family_results / "results.csv", dtype=str, keep_default_na=False)
    rows["options"] = (rows["options"] + " transition_jitter=0.1").str.strip()
    rows.to_csv(other / "results.csv", index=False)
    comparison = _compare(family_results, other)
    assert comparison.pairs == 18
    assert comparison.campaign_options == {"transition_jitter": ("", "0.1")}


def run_cli(*argv: str) -> int:
    return cli.main(["report", *argv])


def test_cli_compare_and_fail_above(family_results: Path, slow_on_results: Path,
                                    tmp_path: Path, capsys):
    assert run_cli(str(family_results), "-o", str(tmp_path / "same"), "--no-figures",
                   "--compare", str(family_results), "--fail-above", "0") == 0
    out = capsys.readouterr().out
    assert "18 paired runs" in out and "every metric equal" in out
    status = run_cli(str(family_results), "-o", str(tmp_path / "diff"), "--no-figures",
                     "--compare", str(slow_on_results), "--fail-above", "1")
    captured = capsys.readouterr()
    assert status == 1
    assert "differ by more than 1 %" in captured.err and "mean_wait" in captured.err
    comparison = _compare(family_results, slow_on_results)
    worst = abs(comparison.worst()["difference (%)"])
    assert run_cli(str(family_results), "-o", str(tmp_path / "loose"), "--no-figures",
                   "--compare", str(slow_on_results), "--fail-above", str(worst * 1.01)) == 0
    assert not (tmp_path / "loose" / "figures").exists()
    capsys.readouterr()
    text = (tmp_path / "diff" / "report.md").read_text()
    assert "## Comparison:" in text
    table = pd.read_csv(tmp_path / "diff" / "tables" / "compare.csv")
    assert len(table) == 6
    assert table["largest abs. diff (%)"].max() == pytest.approx(worst)
    long = pd.read_csv(tmp_path / "diff" / "tables" / "compare_all_metrics.csv")
    assert len(long) == len(comparison.long)


def test_compare_figure_draws_both_campaigns(family_results: Path, slow_on_results: Path):
    comparison = _compare(family_results, slow_on_results)
    figure = compare_figure(comparison)
    try:
        waits = comparison.long[comparison.long["metric"] == "mean_wait"].set_index("policy")
        waste = comparison.long[comparison.long["metric"] == "energy_wasted"].set_index("policy")
        assert len(figure.table) == 6
        for _, row in figure.table.iterrows():
            assert row["AW A (min)"] == pytest.approx(waits.loc[row["policy"], "A"] / 60)
            assert row["AW B (min)"] == pytest.approx(waits.loc[row["policy"], "B"] / 60)
            assert row["EW B (MWh)"] == pytest.approx(waste.loc[row["policy"], "B"] / 3.6e9)
        ax = figure.figure.axes[0]
        filled = [line for line in ax.lines if line.get_markerfacecolor() != "none"]
        hollow = [line for line in ax.lines if line.get_markerfacecolor() == "none"]
        assert sorted(line.get_xdata()[0] for line in filled) == pytest.approx(
            sorted(figure.table["AW A (min)"]))
        assert sorted(line.get_xdata()[0] for line in hollow) == pytest.approx(
            sorted(figure.table["AW B (min)"]))
    finally:
        plt.close(figure.figure)


def test_cli_refuses_bad_compare_options(family_results: Path, tmp_path: Path, capsys):
    assert run_cli(str(family_results), "-o", str(tmp_path / "r"), "--fail-above", "1") == 2
    assert "--fail-above needs --compare" in capsys.readouterr().err
    assert run_cli(str(family_results), "--compare", str(family_results), "-o",
                   str(tmp_path / "r"), "--fail-above", "-1") == 2
    assert run_cli(str(family_results), "--compare", str(tmp_path / "nothing"), "-o",
                   str(tmp_path / "r")) == 2
    assert "no results.csv" in capsys.readouterr().err


def test_the_7a_table_gets_the_other_campaigns_column(family_results: Path,
                                                      slow_on_results: Path, tmp_path: Path):
    mine = relabelled(family_results, tmp_path / "exact", platform="aoba-64",
                      workload="markovian-3000")
    other = relabelled(slow_on_results, tmp_path / "jittered", platform="aoba-64",
                       workload="markovian-3000")
    build_report(mine, tmp_path / "report", compare=other, figures=False)
    table = pd.read_csv(tmp_path / "report" / "tables" / "section_7a.csv")
    assert list(table.columns[3:6]) == ["paper (%)", "this campaign (%)", "jittered (%)"]
    assert table["jittered (%)"].notna().all()
    assert "jittered" in (tmp_path / "report" / "report.md").read_text()
