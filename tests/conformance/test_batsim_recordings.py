"""The acceptance test of the engine: replay the recordings of real Batsim 4.2.1.

Every case of ``conformance/cases`` is run with the probe scheduler its
``case.json`` names (``probe.py`` when it names none), in-process and over
ZeroMQ with a real pybatsim process, and compared with the recording message
by message and output file by output file (:mod:`snficon.conformance`). A
case whose ``case.json`` says ``"expect": "error"`` (Batsim aborted) must stop
with a protocol error naming what Batsim names, after the same messages, and
still write its output files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snficon.conformance import compare_outputs, compare_transcripts
from snficon.drivers.session import simulate_in_process, simulate_with_pybatsim
from snficon.drivers.transcript import Transcript
from snficon.errors import ProtocolError
from tests.conftest import SHARED

CASES_DIR = SHARED / "conformance" / "cases"
CASES = sorted(p.parent.name for p in CASES_DIR.glob("*/case.json"))
RUNNERS = {"inprocess": simulate_in_process, "zmq": simulate_with_pybatsim}


def test_every_recorded_case_is_collected():
    if not CASES_DIR.is_dir():
        pytest.skip("../shared/conformance is absent")
    assert {"energy4-delay", "fast16-clock", "energy4-kill-queued"} <= set(CASES)


@pytest.mark.parametrize("mode", sorted(RUNNERS))
@pytest.mark.parametrize("case", CASES)
def test_engine_reproduces_batsim(shared_dir: Path, tmp_path: Path, case: str, mode: str):
    cases = shared_dir / "conformance" / "cases"
    setup = json.loads((cases / case / "case.json").read_text())
    probe = shared_dir / "conformance" / setup.get("probe", "probe.py")
    recorded = Transcript.read(cases / case / "transcript.jsonl")
    transcript = Transcript()

    def run():
        return RUNNERS[mode](cases / setup["platform"], [cases / setup["workload"]], str(probe),
                             setup["probe_options"], export_prefix=tmp_path / "out",
                             transcript=transcript)

    if setup.get("expect") == "error":
        with pytest.raises(ProtocolError) as caught:
            run()
        message = str(caught.value)
        assert "KILL_JOB" in message
        job = setup["batsim_error"].split("'")[1]  # "... job_id 'w0!8' refers to ..."
        assert job in message
        # The run went exactly as Batsim's until the fatal answer...
        assert compare_transcripts(recorded, transcript) == []
        # ...and what happened until then is written (Batsim leaves empty files).
        jobs = (tmp_path / "out_jobs.csv").read_text().splitlines()
        assert len(jobs) > 1
        return
    run()
    assert compare_transcripts(recorded, transcript) == []
    assert compare_outputs(cases / case / "out", tmp_path / "out") == []


def test_comparison_detects_a_changed_message(shared_dir: Path):
    """The helper is only worth something if it fails on a difference."""
    recorded = Transcript.read(shared_dir / "conformance/cases/energy4-delay/transcript.jsonl")
    altered = Transcript([(d, json.loads(json.dumps(m))) for d, m in recorded.entries])
    altered.entries[5][1]["now"] += 1e-3
    altered.entries[7][1]["events"][0]["data"]["alloc"] = "3"
    differences = compare_transcripts(recorded, altered)
    assert any("now" in d for d in differences)
    assert any("alloc" in d for d in differences)


def test_comparison_detects_a_changed_output(shared_dir: Path, tmp_path: Path):
    source = shared_dir / "conformance/cases/energy4-compute"
    for name in ("jobs", "schedule", "machine_states", "pstate_changes", "consumed_energy"):
        text = (source / f"out_{name}.csv").read_text()
        if name == "consumed_energy":  # one energy value off by 1e-5 relative
            lines = text.splitlines()
            cells = lines[-1].split(",")
            cells[1] = f"{float(cells[1]) * (1 + 1e-5):f}"
            text = "\n".join([*lines[:-1], ",".join(cells)]) + "\n"
        (tmp_path / f"out_{name}.csv").write_text(text)
    differences = compare_outputs(source / "out", tmp_path / "out")
    assert len(differences) == 1 and "energy" in differences[0]
