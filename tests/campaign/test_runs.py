"""Run folders: a done run is never replaced, whatever publishes after it."""

from __future__ import annotations

from pathlib import Path

from snficon.campaign.config import read_campaign
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runs import METRICS, execute, record_failure, run_status


def test_a_done_run_is_not_replaced_by_a_late_failure_record(tiny_campaign: Path,
                                                              tmp_path: Path):
    """E.g. a worker of an interrupted campaign dying after a resumed one finished the run."""
    spec = make_specs(expand(read_campaign(tiny_campaign)).plans, tmp_path / "runs")[0]
    folder = execute(spec)
    assert run_status(folder) == "done"
    metrics = (folder / METRICS).read_bytes()
    assert record_failure(spec, "BrokenProcessPool: a worker died") == folder
    assert run_status(folder) == "done" and not (folder / "error.txt").exists()
    assert (folder / METRICS).read_bytes() == metrics
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [spec.run_id]  # no scratch left
