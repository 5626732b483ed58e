"""Fig. 7 (snficon/report/size_bins.py): box plots of the per-job waits by job size."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb
from matplotlib.patches import PathPatch

from snficon.report import build_report
from snficon.report.data import load_results
from snficon.report.size_bins import (
    STAT_COLUMNS,
    WAIT_FLOOR_S,
    bin_label,
    box_stats,
    size_bin_table,
    size_bins,
)
from snficon.report.style import policy_colour as colour

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _boxes(ax) -> list[PathPatch]:
    return [patch for patch in ax.patches if isinstance(patch, PathPatch)]


def _direct_waits(run_dir: Path, nodes: int) -> np.ndarray:
    """start - submission of the jobs on ``nodes`` nodes that ran, read with pandas alone."""
    jobs = pd.read_csv(run_dir / "out_jobs.csv")
    jobs = jobs[(jobs["final_state"] != "REJECTED")
                & (jobs["requested_number_of_resources"] == nodes)]
    return (jobs["starting_time"] - jobs["submission_time"]).to_numpy(dtype=float)


class TestBinLabel:
    def test_paper_bins(self):
        assert [bin_label(n) for n in (1, 2, 3, 4, 5, 8, 9, 33, 64, 65)] == [
            "1", "2", "3-4", "3-4", "5-8", "5-8", "9-16", "33-64", "33-64", "65-128"]

    def test_beyond_the_last_bin(self):
        assert bin_label(5000) == ">2048"


class TestBoxStats:
    def test_numpy_percentiles_and_mean(self):
        # Linear interpolation (numpy's default) on 0, 10, 20, 30, 40:
        # positions 0.2, 1, 2, 3, 3.8 -> 2, 10, 20, 30, 38.
        stats = box_stats(np.array([40.0, 0.0, 30.0, 10.0, 20.0]))
        assert (stats.n, stats.p5, stats.q1, stats.median, stats.q3, stats.p95, stats.mean) == (
            5, pytest.approx(2.0), 10.0, 20.0, 30.0, pytest.approx(38.0), 20.0)

    def test_empty_bin_has_no_stats(self):
        with pytest.raises(ValueError, match="empty bin"):
            box_stats(np.array([]))


def test_fig7_file_is_a_valid_image(small_results: Path, tmp_path: Path):
    written = build_report(small_results, tmp_path, gantt_hours=1)
    png = tmp_path / "figures" / "size_bins.png"
    assert png in written.figures
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    pixels = plt.imread(png)
    assert pixels.ndim == 3 and pixels.shape[0] > 200 and pixels.shape[1] > 400
    assert pixels.std() > 0  # something is drawn
    markdown = (tmp_path / "report.md").read_text()
    assert ("| case | policy | size | jobs | p5 (min) | Q1 (min) | median (min) | Q3 (min) "
            "| p95 (min) | mean (min) |") in markdown


def test_table_matches_numpy_percentiles_of_out_jobs(small_results: Path):
    frame = load_results(small_results)
    table = size_bin_table(frame, small_results / "runs")
    base = frame[(frame["changed"].map(len) == 0) & (frame["platform"] == "p4")
                 & (frame["policy"] == "snficon")]
    run_dir = small_results / "runs" / str(base["id"].iloc[0])
    rows = table[(table["case"] == "p4 / w10") & (table["policy"] == "SNF-ICON")]
    assert list(rows["size"]) == ["1", "2", "3-4"]
    row = rows[rows["size"] == "2"].iloc[0]
    waits = _direct_waits(run_dir, 2)
    assert row["jobs"] == len(waits) == 3
    expected = np.percentile(waits, [5, 25, 50, 75, 95]) / 60
    got = row[["p5 (min)", "Q1 (min)", "median (min)", "Q3 (min)", "p95 (min)"]]
    np.testing.assert_allclose(got.to_numpy(dtype=float), expected, rtol=1e-12)
    assert row["mean (min)"] == pytest.approx(waits.mean() / 60)
    # Not a vacuous check: the job submitted after the idle timeout waits for a wake-up.
    assert row["Q3 (min)"] > 0 and row["p95 (min)"] > row["Q3 (min)"]
    # And the drawn box of that policy and bin spans these quartiles (floored at 1 s).
    figure = size_bins(frame, small_results / "runs")
    assert figure is not None
    try:
        ax = next(ax for ax in figure.figure.axes if ax.get_title() == "p4 / w10")
        mine = to_rgb(colour("snficon"))
        boxes = sorted((b for b in _boxes(ax) if to_rgb(b.get_facecolor()) == mine),
                       key=lambda b: b.get_path().vertices[:, 0].mean())
        assert len(boxes) == 3  # bins 1, 2, 3-4
        ys = boxes[1].get_path().vertices[:, 1]
        floor = WAIT_FLOOR_S / 60
        assert ys.min() == pytest.approx(max(expected[1], floor))
        assert ys.max() == pytest.approx(max(expected[3], floor))
    finally:
        plt.close(figure.figure)


def test_fig7_is_a_box_plot_in_minutes_on_a_log_axis(small_results: Path):
    figure = size_bins(load_results(small_results), small_results / "runs")
    assert figure is not None
    try:
        axes = [ax for ax in figure.figure.axes if ax.get_visible() and _boxes(ax)]
        assert [ax.get_title() for ax in axes] == ["p4 / w10", "t4 / w10"]  # one per case
        for ax in axes:
            assert ax.get_yscale() == "log"
            assert "min, log scale" in ax.get_ylabel() and "drawn at 1 s" in ax.get_ylabel()
            assert len(_boxes(ax)) == 3 * 3  # 3 bins x 3 policies
            floor = WAIT_FLOOR_S / 60
            assert min(b.get_path().vertices[:, 1].min() for b in _boxes(ax)) == \
                pytest.approx(floor)
            assert ax.get_ylim()[0] < floor
            markers = [line for line in ax.lines if line.get_marker() not in (None, "None", "")]
            assert markers == []  # no outlier dots
    finally:
        plt.close(figure.figure)
    assert set(figure.table.columns) >= {"case", "policy", "size", "jobs",
                                         *STAT_COLUMNS.values()}
    assert "_policy" not in figure.table
    assert (figure.table["median (min)"] == 0).any()  # zero waits are kept exact
    assert "5th and 95th percentiles" in figure.caption


def _job_row(job_id: int, nodes: int, submit: float, wait: float,
             state: str = "COMPLETED_SUCCESSFULLY") -> dict:
    ran = state != "REJECTED"
    start = submit + wait
    return {"job_id": job_id, "workload_name": "w", "profile": "d10",
            "submission_time": submit, "requested_number_of_resources": nodes,
            "requested_time": 10.0, "success": int(ran), "final_state": state,
            "starting_time": start if ran else -1.0, "execution_time": 10.0 if ran else 0.0,
            "finish_time": start + 10 if ran else -1.0,
            "waiting_time": wait if ran else -1.0, "turnaround_time": 0.0, "stretch": 0.0,
            "allocated_resources": (f"0-{nodes - 1}" if nodes > 1 else "0") if ran else "",
            "consumed_energy": 100.0 if ran else "", "metadata": ""}


def test_an_empty_bin_is_left_out(tmp_path: Path):
    """Jobs on 1, 3-4 and 9-16 nodes only (a rejected 2-node job): bins 2 and 5-8 are absent."""
    results = tmp_path / "results"
    rows = []
    for k, policy in enumerate(("fcfsbIpm", "snficon")):
        run_id = f"run{k}"
        jobs = [_job_row(1, 1, 0, 0), _job_row(2, 1, 5, 30 * (k + 1)),
                _job_row(3, 3, 10, 120), _job_row(4, 4, 20, 600),
                _job_row(5, 2, 30, 0, state="REJECTED"), _job_row(6, 12, 40, 3600)]
        (results / "runs" / run_id).mkdir(parents=True)
        pd.DataFrame(jobs).to_csv(results / "runs" / run_id / "out_jobs.csv", index=False)
        rows.append({"id": run_id, "status": "done", "policy": policy, "platform": "p16",
                     "workload": "w6", "options": ""})
    pd.DataFrame(rows).to_csv(results / "results.csv", index=False)
    figure = size_bins(load_results(results), results / "runs")
    assert figure is not None
    try:
        (ax,) = [ax for ax in figure.figure.axes if ax.get_visible()]
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert ticks == ["1\nn=2", "3-4\nn=2", "9-16\nn=1"]
        assert len(_boxes(ax)) == 3 * 2  # 3 bins x 2 policies, no empty slot
        assert ax.get_xlim()[1] < 3
    finally:
        plt.close(figure.figure)
    assert list(dict.fromkeys(figure.table["size"])) == ["1", "3-4", "9-16"]
    assert list(figure.table["policy"][:2]) == ["FCFS/B+IPM", "SNF-ICON"]
    one = figure.table[(figure.table["size"] == "1") & (figure.table["policy"] == "SNF-ICON")]
    assert one["median (min)"].iloc[0] == pytest.approx(np.median([0, 60]) / 60)
