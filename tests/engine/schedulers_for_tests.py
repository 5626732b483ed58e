"""Tiny pybatsim schedulers that each break (or probe) one rule of the protocol."""

from __future__ import annotations

from batsim.batsim import BatsimScheduler
from procset import ProcSet


class OneShot(BatsimScheduler):
    """Answers the first job submission with ``act(job)``; otherwise FCFS on nodes 0..res-1."""

    def __init__(self, act):
        super().__init__({})
        self.act = act
        self.done = False

    def onJobSubmission(self, job):  # noqa: N802
        if not self.done:
            self.done = True
            self.act(self.bs, job)
        else:
            job.allocation = ProcSet((0, job.requested_resources - 1))
            self.bs.execute_jobs([job])

    def onJobCompletion(self, job):  # noqa: N802
        pass

    def onMachinePStateChanged(self, nodes, pstate):  # noqa: N802
        pass

    def onRequestedCall(self):  # noqa: N802
        pass


class Idle(BatsimScheduler):
    """Never starts nor rejects anything."""

    def onJobSubmission(self, job):  # noqa: N802
        pass
