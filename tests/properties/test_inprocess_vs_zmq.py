"""The in-process and ZeroMQ paths decide the same: identical outputs and transcripts.

The ZeroMQ run spawns a real ``pybatsim`` process (about half a second), so
this property runs on a handful of examples only.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings

from snficon.conformance import compare_outputs, compare_transcripts

from .cases import PROPERTY_SETTINGS, Case, cases, run_case

ZMQ_EXAMPLES = 5


@settings(PROPERTY_SETTINGS, max_examples=ZMQ_EXAMPLES)
@given(case=cases(mixed_durations=True))
def test_inprocess_and_zmq_runs_are_identical(case: Case) -> None:
    """Same scheduler, same seed: same messages in the same order, same output files."""
    with tempfile.TemporaryDirectory(prefix="snficon-zmq-") as folder:
        here, there = Path(folder) / "inprocess", Path(folder) / "zmq"
        here.mkdir()
        there.mkdir()
        local = run_case(case, here)
        remote = run_case(case, there, over_zmq=True)
        assert local.transcript is not None and remote.transcript is not None
        assert compare_transcripts(local.transcript, remote.transcript) == []
        assert compare_outputs(here / "out", there / "out") == []
        assert len(local.transcript.entries) == len(remote.transcript.entries)
