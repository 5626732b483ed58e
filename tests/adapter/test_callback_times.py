"""Requested calls delivered a few ulps early or late (``snficon.core.clock``).

SimGrid's clock is a sum of floating-point steps, so Batsim may deliver a
``REQUESTED_CALL`` a few ulps before or after the time the scheduler asked
for. The engine here delivers calls exactly; a link between the scheduler and
the engine moves every ``CALL_ME_LATER`` the scheduler sends by ``shift`` ulps
before the engine sees it, so the call arrives that far from the asked time.

Case: 4 nodes idle from 0, IPM timeout 100 s, one 10-s job at t = 0 on one
node. The idle timers of the three other nodes expire at 100, that of the
job's node (node 0) at 110. Whatever the shift, the scheduler must switch the three
nodes off in its answer to the call near 100 and the fourth in its answer to
the call near 110: a call within the tolerance of an expiry *is* the expiry.
Had the early call at 100 - 2 ulps been taken as "not yet", the scheduler
would have asked for 100 again and, remembering that it had already asked,
stayed silent: the nodes would never sleep.
"""

from __future__ import annotations

import math

import pytest

from snficon.drivers.inprocess import EngineLink, LinkedBatsim
from snficon.drivers.session import build_engine
from snficon.drivers.transcript import Transcript
from snficon.registry import load_scheduler
from tests.engine.conftest import write_workload


class ShiftingLink(EngineLink):
    """An engine link that moves every requested call by ``shift`` ulps."""

    def __init__(self, engine, transcript, shift: int) -> None:
        super().__init__(engine, transcript)
        self.shift = shift

    def send(self, message):
        for event in message["events"]:
            if event["type"] == "CALL_ME_LATER":
                when = event["data"]["timestamp"]
                for _ in range(abs(self.shift)):
                    when = math.nextafter(when, math.inf if self.shift > 0 else -math.inf)
                event["data"]["timestamp"] = when
        super().send(message)


@pytest.mark.parametrize("shift", [-3, -1, 0, 1, 3])
def test_calls_a_few_ulps_off_still_expire_the_timers(tmp_path, platform4, shift):
    workload = write_workload(tmp_path / "w.json",
                              [{"id": "1", "subtime": 0.0, "res": 1}])
    engine = build_engine(platform4, [workload])
    scheduler = load_scheduler("snfIpm", {"platform": str(platform4), "timeout": 100})
    transcript = Transcript()
    link = ShiftingLink(engine, transcript, shift)
    LinkedBatsim(scheduler, link).start()
    link.finish()
    switch_offs = []
    for (direction, message), (_, answer) in zip(transcript.entries[::2],
                                                  transcript.entries[1::2], strict=True):
        assert direction == "sim->sched"
        if any(e["type"] == "REQUESTED_CALL" for e in message["events"]):
            offs = [e["data"]["resources"] for e in answer["events"]
                    if e["type"] == "SET_RESOURCE_STATE" and e["data"]["state"] != "0"]
            switch_offs.append((message["now"], offs))
        for event in answer["events"]:  # never a call for a time already passed
            if event["type"] == "CALL_ME_LATER":
                assert event["data"]["timestamp"] > message["now"]
    times = [round(now, 6) for now, offs in switch_offs if offs]
    assert times == [100.0, 110.0]
    assert [offs for _, offs in switch_offs if offs] == [["1-3"], ["0"]]  # the job ran on 0
    tables = engine.outputs()
    assert [change[2] for change in tables.pstate_changes].count(1) == 2  # both reached sleep
