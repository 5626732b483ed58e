"""Fig. 5: mode occupancy per window and the screen diagnostics, checked against the runs."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from snficon.analysis.decision_log import read_decision_log
from snficon.analysis.modes import mode_summary
from snficon.report import modes
from snficon.report.data import load_results
from snficon.report.modes import icon_time, occupancy_window_h
from tests.report.conftest import read_results_csv

VARIANTS = {"SNF-ICON": "snficon", "SNF-ICON-NG": "snficon-ng", "SNF-ICON-NF": "snficon-nf",
            "SNF-ICON-NGNF": "snficon-ngnf"}


def test_icon_time_integrates_the_modes():
    times = np.array([0.0, 10.0, 30.0, 60.0])
    icon = np.array([True, False, True, True])
    # ICON over [0, 10) and [30, 100]; end 100
    spent = icon_time(times, icon, 100.0, np.array([0.0, 5.0, 10.0, 20.0, 45.0, 100.0, 150.0]))
    assert spent.tolist() == [0.0, 5.0, 10.0, 10.0, 25.0, 80.0, 80.0]


def test_occupancy_window_gives_at_most_100_windows():
    assert occupancy_window_h(680.0) == 12.0
    assert occupancy_window_h(2100.0) == 24.0
    assert occupancy_window_h(5.0) == 0.25
    for hours in (1.0, 99.0, 700.0, 2400.0, 9000.0):
        assert hours / occupancy_window_h(hours) <= 100


@pytest.fixture(scope="module")
def frame(family_results: Path):
    return load_results(family_results)


def test_fig5a_shares_are_the_runs_mode_occupancy(family_results: Path, frame):
    figure = modes.mode_occupancy(frame, family_results / "runs")
    try:
        raw = read_results_csv(family_results)
        table = figure.table.set_index("policy")
        assert sorted(table.index) == sorted(VARIANTS)  # all four variants
        for label, policy in VARIANTS.items():
            source = raw[("p8", "m120", policy, "")]
            # icon_time_share was computed by the campaign (snficon.analysis.modes)
            assert table.loc[label, "ICON share (%)"] == pytest.approx(
                100 * float(source["icon_time_share"]))
            assert table.loc[label, "ICON (h)"] + table.loc[label, "fallback (h)"] == \
                pytest.approx(float(source["makespan"]) / 3600)
        assert table.loc["SNF-ICON-NF", "fallback (h)"] == 0.0
        windows = figure.data
        window_h = float(table["window (h)"].iloc[0])
        for label, policy in VARIANTS.items():
            own = windows[windows["policy"] == label]
            lengths = own["window end (h)"] - own["window start (h)"]
            assert (lengths <= window_h + 1e-9).all()
            weighted = (own["ICON share (%)"] * lengths).sum() / lengths.sum()
            assert weighted == pytest.approx(table.loc[label, "ICON share (%)"])
            # one window recomputed from the decision log with the campaign's own reader
            source = raw[("p8", "m120", policy, "")]
            rows = read_decision_log(family_results / "runs" / source["id"] / "decisions.csv")
            for k in (1, len(own) - 1):  # a full window and the last (shorter) one
                start, stop = own.iloc[k][["window start (h)", "window end (h)"]] * 3600
                share = _window_share(rows, float(start), float(stop))
                assert own.iloc[k]["ICON share (%)"] == pytest.approx(100 * share)
        ax = figure.figure.axes[0]
        assert "ICON share" in ax.get_ylabel() and f"{window_h:g}-h" in ax.get_ylabel()
        texts = " ".join(t.get_text() for t in ax.texts)
        for label in VARIANTS:
            assert f"{label}: {table.loc[label, 'ICON (h)']:.1f} h" in texts
    finally:
        plt.close(figure.figure)


def _window_share(rows: list[dict], start: float, stop: float) -> float:
    """ICON share of [start, stop] from decision rows, by :func:`mode_summary` on [0, stop]
    minus [0, start] (an independent integration)."""
    upto_stop = mode_summary(rows, stop).icon_time_share * stop
    upto_start = mode_summary(rows, start).icon_time_share * start if start > 0 else 0.0
    return (upto_stop - upto_start) / (stop - start)


def test_fig5b_draws_the_logged_diagnostics_with_the_thresholds(family_results: Path, frame):
    figure = modes.screen_diagnostics(frame, family_results / "runs")
    try:
        raw = read_results_csv(family_results)
        source = raw[("p8", "m120", "snficon", "")]
        rows = read_decision_log(family_results / "runs" / source["id"] / "decisions.csv")
        logged = {round(float(r["time"]) / 3600, 12): r for r in rows}
        data = figure.data
        assert set(data["policy"]) == {"SNF-ICON"}
        assert len(data) > 10
        for _, point in data.iterrows():
            row = logged[round(point["time (h)"], 12)]
            for column, key in (("cv_A", "arrival_cv"), ("rho_1,A", "arrival_lag1"),
                                ("D_n,A", "arrival_ks"), ("KS limit", "arrival_ks_limit")):
                if row[key] is None:
                    assert np.isnan(point[column])
                else:
                    assert point[column] == pytest.approx(row[key])
        delta_cv, delta_rho = float(source["delta_cv"]), float(source["delta_rho"])
        summary = figure.table.iloc[0]
        assert (summary["delta_cv"], summary["delta_rho"]) == (delta_cv, delta_rho)
        assert summary["arrival accepted (%)"] <= min(
            summary["cv in band (%)"], summary["|rho_1| <= delta_rho (%)"],
            summary["D <= limit (%)"]) + 1e-9
        cv_axis, lag_axis, ks_axis = figure.figure.axes[:3]
        band = cv_axis.patches[0].get_extents().transformed(cv_axis.transData.inverted())
        assert (band.y0, band.y1) == pytest.approx((1 - delta_cv, 1 + delta_cv))
        band = lag_axis.patches[0].get_extents().transformed(lag_axis.transData.inverted())
        assert (band.y0, band.y1) == pytest.approx((-delta_rho, delta_rho))
        assert [ax.get_ylabel() for ax in (cv_axis, lag_axis, ks_axis)] == [
            "cv_A", "rho_1,A", "D_n,A"]
        limit_line = [line for line in ks_axis.lines if line.get_label() == "KS limit"][0]
        assert np.nanmax(limit_line.get_ydata()) == pytest.approx(np.nanmax(data["KS limit"]))
    finally:
        plt.close(figure.figure)
