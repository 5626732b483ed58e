"""The scheduler's share of a run as real Batsim sees it: pybatsim's cost and the adapter's.

Batsim's ``scheduling_time`` (``out_schedule.csv``) is the time it waits for the
scheduler's answers: pybatsim decoding each message (``json.loads``), its
``Batsim._read_bat_msg`` walking the events (and formatting the whole message
for its logger, even when logging is off), the adapter's hooks and the policy,
then pybatsim encoding the answer. Real Batsim is not needed to measure that:
the messages of an in-process run are recorded, encoded as Batsim sends them,
and replayed through pybatsim's ``Batsim`` class with the same scheduler
(a network handler that returns the recorded text; ``LinkedBatsim`` of
:mod:`snficon.drivers.inprocess` stands in for the socket). The answers are
checked against the recorded ones. CPU time per message is split into
decoding/encoding, the scheduler's hooks (of which the policy) and the rest,
pybatsim's own walk over the events::

    uv run python benchmarks/scheduler_share.py [--cases sdsc-blue] [--policies snficon]

The paper's inputs are read from ../shared and converted on the fly.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from snficon.drivers.inprocess import LinkedBatsim
from snficon.drivers.session import simulate_in_process
from snficon.drivers.transcript import SCHED_TO_SIM, SIM_TO_SCHED
from snficon.registry import load_scheduler

REPO = Path(__file__).resolve().parents[1]
INPUTS = REPO.parent / "shared" / "data" / "paper-inputs"
CASES = {
    "das2-fs1": ("DAS2-fs1-0-3000.json", "aoba-64.xml"),
    "markovian": ("generated-markovian-3000.json", "aoba-64.xml"),
    "sdsc-blue": ("SDSC-BLUE-2000-4.2-cln-0-3000.json", "aoba-1152.xml"),
}
HOOKS = ("onSimulationBegins", "onSimulationEnds", "onJobSubmission", "onJobCompletion",
         "onJobsKilled", "onMachinePStateChanged", "onRequestedCall", "onNoMoreEvents")


class Clock:
    """CPU seconds accumulated by named parts."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def timed(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[part] = self.seconds.get(part, 0.0) + time.process_time() - began
        return wrapper


class ReplayLink:
    """A pybatsim network handler that answers with recorded Batsim messages (as text)."""

    def __init__(self, messages: list[str], clock: Clock) -> None:
        self.messages = iter(messages)
        self.answers: list[dict[str, Any]] = []
        self.recv = clock.timed("json", self._recv)
        self.send = clock.timed("json", self._send)

    def bind(self) -> None:
        """Nothing to bind."""

    def close(self) -> None:
        """Nothing to close."""

    def _recv(self, blocking: bool = False) -> dict[str, Any]:
        return json.loads(next(self.messages))  # pybatsim's NetworkHandler.recv

    def _send(self, message: dict[str, Any]) -> None:
        self.answers.append(json.loads(json.dumps(message)))  # NetworkHandler.send


def replay(policy: str, options: dict[str, Any], messages: list[str]) -> tuple[Clock, list]:
    """Run the scheduler over the recorded messages; CPU time by part, and its answers."""
    clock = Clock()
    scheduler = load_scheduler(policy, options)
    for hook in HOOKS:
        setattr(scheduler, hook, clock.timed("adapter", getattr(scheduler, hook)))
    link = ReplayLink(messages, clock)
    batsim = LinkedBatsim(scheduler, link)  # reads SIMULATION_BEGINS
    if scheduler.policy is not None:
        scheduler.policy = clock.timed("policy", scheduler.policy)
    began = time.process_time()
    batsim.start()
    clock.seconds["total"] = time.process_time() - began
    return clock, link.answers


def convert(source: Path, target: Path) -> Path:
    from snficon.cli import main

    if main(["workload", "convert", str(source), "-o", str(target)]) != 0:
        raise SystemExit(f"could not convert {source}")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["sdsc-blue"], choices=list(CASES))
    parser.add_argument("--policies", nargs="+", default=["snficon"])
    parser.add_argument("--decisions", action="store_true",
                        help="also write the decision log (pybatsim -o decisions=FILE)")
    args = parser.parse_args()
    if not INPUTS.is_dir():
        raise SystemExit(f"{INPUTS} is absent: the paper's inputs come from ../shared")
    with tempfile.TemporaryDirectory(prefix="snficon-share-") as folder:
        work = Path(folder)
        print(f"{'case':10s} {'policy':13s} {'msgs':>6s} {'total':>7s} {'json':>7s} "
              f"{'pybatsim':>8s} {'adapter':>7s} {'policy':>7s}   (CPU s; us/msg)")
        for case in args.cases:
            workload_name, platform_name = CASES[case]
            workload = convert(INPUTS / workload_name, work / f"{case}.json")
            platform = REPO / "platforms" / platform_name
            for policy in args.policies:
                options: dict[str, Any] = {"platform": str(platform)}
                if args.decisions:
                    options["decisions"] = str(work / f"{case}-{policy}.csv")
                run = simulate_in_process(platform, [workload], policy, dict(options),
                                          record=True)
                assert run.transcript is not None
                entries = run.transcript.entries
                messages = [json.dumps(m) for d, m in entries if d == SIM_TO_SCHED]
                recorded = [m for d, m in entries if d == SCHED_TO_SIM]
                clock, answers = replay(policy, options, messages)
                if answers != recorded:
                    raise SystemExit(f"{case} {policy}: the replayed answers differ")
                s = clock.seconds
                own = s["total"] - s.get("json", 0.0) - s.get("adapter", 0.0)
                adapter = s.get("adapter", 0.0) - s.get("policy", 0.0)
                per = 1e6 / len(messages)
                print(f"{case:10s} {policy:13s} {len(messages):6d} {s['total']:7.2f} "
                      f"{s.get('json', 0.0):7.2f} {own:8.2f} {adapter:7.2f} "
                      f"{s.get('policy', 0.0):7.2f}   "
                      f"({s['total'] * per:.0f} = {s.get('json', 0.0) * per:.0f} + "
                      f"{own * per:.0f} + {adapter * per:.0f} + "
                      f"{s.get('policy', 0.0) * per:.0f})", flush=True)


if __name__ == "__main__":
    main()
