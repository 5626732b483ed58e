"""Benchmark: the engine's cost per message with many CALL_ME_LATER requests pending.

    uv run python benchmarks/timers_bench.py                       # 10, 10 k and 100 k pending
    uv run python benchmarks/timers_bench.py --pending 100000 --jobs 2000

A tiny scheduler, written against the protocol itself (no pybatsim, so the
figure is the engine's), answers ``SIMULATION_BEGINS`` with ``--pending``
``CALL_ME_LATER`` requests far in the future (10^6 s and later, all distinct),
then rejects each of ``--jobs`` delay jobs submitted one second apart. The
figure is the number of messages the engine answers per second of CPU time
(the process's) over the job phase, which is when the timers are pending: a
rate that does not fall as ``--pending`` grows means the per-message cost does
not grow with the number of timers pending. The end of the run (every timer
firing) is not timed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from snficon.drivers.session import build_engine
from snficon.platform.generate import AOBA, render_platform, write_platform

#: When the far timers fire (s): after every job of the workload was submitted.
FAR = 1.0e6


def _inputs(folder: Path, jobs: int) -> tuple[Path, Path]:
    platform = write_platform(folder / "platform.xml", render_platform(AOBA, 4))
    workload = folder / "workload.json"
    workload.write_text(json.dumps({
        "nb_res": 4,
        "profiles": {"d1": {"type": "delay", "delay": 1.0}},
        "jobs": [{"id": str(i), "subtime": float(i), "res": 1, "profile": "d1",
                  "walltime": -1} for i in range(jobs)]}))
    return platform, workload


def _answer(now: float, events: list[dict]) -> dict:
    return {"now": now, "events": events}


def messages_per_cpu_second(pending: int, jobs: int) -> float:
    """Messages answered per CPU second while ``pending`` far timers wait."""
    with tempfile.TemporaryDirectory() as folder:
        platform, workload = _inputs(Path(folder), jobs)
        engine = build_engine(platform, [workload], energy=False)
        message = engine.first_message()
        now = message["now"]
        calls = [{"timestamp": now, "type": "CALL_ME_LATER",
                  "data": {"timestamp": FAR + i}} for i in range(pending)]
        message = engine.answer(_answer(now, calls))
        answered = 0
        started = time.process_time()
        while message is not None and answered < jobs:
            now = message["now"]
            events = [{"timestamp": now, "type": "REJECT_JOB",
                       "data": {"job_id": event["data"]["job_id"]}}
                      for event in message["events"] if event["type"] == "JOB_SUBMITTED"]
            message = engine.answer(_answer(now, events))
            answered += 1
        elapsed = time.process_time() - started
        return answered / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, nargs="+", default=[10, 10_000, 100_000])
    parser.add_argument("--jobs", type=int, default=2000, help="messages timed per case")
    args = parser.parse_args()
    print(f"{'pending':>8}  {'messages/CPU s':>14}")
    for pending in args.pending:
        rate = messages_per_cpu_second(pending, args.jobs)
        print(f"{pending:>8}  {rate:>14,.0f}")


if __name__ == "__main__":
    main()
