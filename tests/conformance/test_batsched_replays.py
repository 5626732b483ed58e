"""Drop-in for Batsim under a scheduler other than pybatsim: the batsched replays.

Each case of ``conformance/replay`` holds a real Batsim 4.2.1 run driven by
batsched with every message's raw text. The recorded answers are fed to the
engine in order -- in-process as texts, and over ZeroMQ by a small process
standing in for batsched (``replayer.py``) -- and every message the engine
sends must equal the recording, decoded and as text (numbers written with
Batsim's six decimals), before the output files are compared.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from snficon.conformance import compare_outputs, compare_raw, compare_transcripts, replay_answers
from snficon.drivers.session import build_engine, free_loopback_port
from snficon.drivers.transcript import Transcript
from snficon.drivers.zmq_link import run_over_zmq
from tests.conftest import SHARED

REPLAY_DIR = SHARED / "conformance" / "replay"
REPLAYS = sorted(p.parent.name for p in REPLAY_DIR.glob("*/case.json"))
REPLAYER = Path(__file__).with_name("replayer.py")
#: Cases whose divergence is known and not reproduced yet (none today).
KNOWN_DIVERGENCE: set[str] = set()


def _lines(case: str) -> list[dict]:
    with open(REPLAY_DIR / case / "transcript.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _check(case: str, transcript: Transcript, texts: list[str], out: Path) -> None:
    lines = _lines(case)
    recorded = Transcript([(line["dir"], line["msg"]) for line in lines])
    assert compare_transcripts(recorded, transcript) == []
    recorded_texts = [line["raw"] for line in lines if line["dir"] == "sim->sched"]
    assert len(texts) == len(recorded_texts)
    differences = [d for i, (a, b) in enumerate(zip(recorded_texts, texts, strict=True))
                   if i > 0  # SIMULATION_BEGINS: its workload paths and map orders differ
                   for d in compare_raw(a, b, where=f"message {2 * i}")]
    assert differences == []
    assert compare_outputs(REPLAY_DIR / case / "out", out) == []


def _mark(case: str):
    if case in KNOWN_DIVERGENCE:
        return pytest.param(case, marks=pytest.mark.xfail(strict=True, reason="clock ulp"))
    return case


@pytest.mark.parametrize("case", [_mark(c) for c in REPLAYS])
def test_replay_in_process(shared_dir: Path, tmp_path: Path, case: str):
    setup = json.loads((REPLAY_DIR / case / "case.json").read_text())
    engine, transcript, texts = replay_answers(
        REPLAY_DIR / setup["platform"], [REPLAY_DIR / setup["workload"]], _lines(case))
    assert engine.finished
    engine.outputs().write(tmp_path / "out")
    _check(case, transcript, texts, tmp_path / "out")


@pytest.mark.parametrize("case", [_mark(c) for c in REPLAYS])
def test_replay_over_zmq(shared_dir: Path, tmp_path: Path, case: str):
    setup = json.loads((REPLAY_DIR / case / "case.json").read_text())
    endpoint = f"tcp://127.0.0.1:{free_loopback_port()}"
    received = tmp_path / "received.json"
    process = subprocess.Popen([sys.executable, str(REPLAYER),
                                str(REPLAY_DIR / case / "transcript.jsonl"), endpoint,
                                str(received)])
    engine = build_engine(REPLAY_DIR / setup["platform"], [REPLAY_DIR / setup["workload"]])
    transcript = Transcript()
    try:
        run_over_zmq(engine, endpoint, answer_timeout_s=60, transcript=transcript,
                     peer_alive=lambda: process.poll() is None)
    finally:
        engine.outputs().write(tmp_path / "out")
        process.wait(timeout=60)
    _check(case, transcript, json.loads(received.read_text()), tmp_path / "out")


def test_raw_comparison_sees_number_formats():
    assert compare_raw('{"now":1.000000}', '{"now":1.0}') != []
    assert compare_raw('{"now":1.000000,"x":"a"}', '{"now":1.000000,"x":"b"}') != []
    assert compare_raw('{"e":1631844297.599999}', '{"e":1631844297.600000}') == []
