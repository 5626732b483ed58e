"""The embedded engine (``simulator``): the same run whichever driver carries its messages."""

from __future__ import annotations

from pathlib import Path

from snficon.drivers.session import simulate_in_process
from tests.conftest import FCFS_SCHEDULER

from .conftest import write_workload


def test_in_process_and_zmq_agree_on_the_fcfs_policy(platform4: Path, tmp_path: Path):
    from snficon.conformance import compare_outputs, compare_transcripts
    from snficon.drivers.session import simulate_with_pybatsim

    jobs = [{"id": i, "subtime": 7.5 * i, "res": 1 + i % 4} for i in range(1, 25)]
    workload = write_workload(tmp_path / "w.json", jobs)
    options = {"timeout": 20}
    a = simulate_in_process(platform4, [workload], FCFS_SCHEDULER, options,
                            export_prefix=tmp_path / "a", record=True)
    b = simulate_with_pybatsim(platform4, [workload], FCFS_SCHEDULER, options,
                               export_prefix=tmp_path / "b", record=True)
    assert a.transcript is not None and b.transcript is not None
    assert len(a.transcript.entries) > 40
    assert compare_transcripts(a.transcript, b.transcript) == []
    assert compare_outputs(tmp_path / "a", tmp_path / "b") == []
