"""The pending sleeps of the host model, in a heap: a step looks only at those about to end.

SimGrid's L07 model updates every started action at every step
(``HostL07Model::update_actions_state``): a sleep's ``max_duration`` loses the
step's delta, rounded, step after step. Doing the same here made a step cost
one subtraction per pending sleep, so a scheduler keeping 100,000
``CALL_ME_LATER`` requests pending got a few hundred answers per second.

:class:`SleepHeap` keeps them as SimPy keeps its events: a heap of
``(end, seq, action)`` where ``end`` is the clock when the sleep started plus
its duration. That estimate differs from the clock at which SimGrid's
subtractions end the sleep only by rounding: at each step the clock's sum and
the sleep's difference each lose at most half an ulp of their magnitude, so
after ``k`` steps the two differ by at most ``k * 2**-52 * end``. A step asks
for the sleeps whose estimate lies within four times that bound (and the
duration precision) of its own end (:meth:`SleepHeap.due`); only those are
brought up to date, by replaying one by one the deltas of the steps they missed
(:meth:`SleepHeap.sync`), which gives exactly the value of the step-by-step
subtraction. The others cannot end at this step, nor be its minimum.

The deltas are kept from the step the oldest pending sleep started (8 bytes
a step); the heap drops removed sleeps lazily, and is rebuilt when they are
more than half of it.
"""

from __future__ import annotations

import heapq
from array import array
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from snficon.engine.surf import Action

#: The relative slack of an estimated end per step since the oldest sleep started:
#: four times the rounding bound ``2**-52`` of the clock's sum plus the sleep's difference.
_SLACK = 2.0 ** -50
#: Removed sleeps left in the heap before it is rebuilt (and at least half of it).
_REBUILD_AT = 1024


class SleepHeap:
    """The pending sleeps, by estimated end, and the deltas of the steps since the oldest."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Action]] = []
        #: The alive sleeps in start order (the first is the oldest).
        self._alive: dict[int, Action] = {}
        #: ``_deltas[i]`` is the delta of step ``_base + i``; no pending sleep started
        #: before step ``_base``.
        self._deltas = array("d")
        self._base = 0
        #: The length of ``_deltas`` past which those older than the oldest sleep are dropped.
        self._trim_at = 2 * _REBUILD_AT
        #: Steps so far (solves that moved the clock by a delta, 0 included).
        self.steps = 0
        self._removed = 0

    def __len__(self) -> int:
        return len(self._alive)

    def add(self, action: Action, now: float) -> None:
        """A sleep starts at clock ``now``; its ``max_duration`` is current."""
        action.end = now + action.max_duration
        action.born = action.synced = self.steps
        self._alive[action.seq] = action
        heapq.heappush(self._heap, (action.end, action.seq, action))

    def discard(self, action: Action) -> None:
        """A sleep left before its end (removed, or ended by a solve of no time)."""
        if self._alive.pop(action.seq, None) is not None:
            self._removed += 1
            if self._removed > _REBUILD_AT and 2 * self._removed > len(self._heap):
                self._heap = [entry for entry in self._heap if entry[2].alive]
                heapq.heapify(self._heap)
                self._removed = 0

    def sync(self, action: Action) -> None:
        """Bring ``max_duration`` up to date: subtract the deltas of the steps it missed,
        one at a time, as SimGrid's step did."""
        missed = self.steps - action.synced
        if missed:
            value = action.max_duration
            if missed == 1:  # the usual case: a sleep looked at the step before
                value -= self._deltas[-1]
            else:
                for delta in self._deltas[action.synced - self._base:]:
                    value -= delta
            action.max_duration = value
            action.synced = self.steps

    def due(self, reach: float) -> list[Action]:
        """Take out, up to date, every sleep that may end at a step ending no later than
        clock ``reach`` or than the earliest sleep, whichever comes first.

        Those sleeps hold the step's minimum duration (when a sleep is) and all the
        sleeps the step can end; the caller puts back those that do not end
        (:meth:`keep`).
        """
        heap = self._heap
        while heap and not heap[0][2].alive:
            heapq.heappop(heap)
            self._removed -= 1
        if not heap:
            return []
        top = heap[0][0]
        if top < reach:
            reach = top
        # Steps since the oldest sleep started, at most (no sleep started before _base).
        slack = _SLACK * (self.steps - self._base + 2) * (reach if reach > 1.0 else 1.0)
        # A duration under the precision ends a step (``double_update``): 1e-9 s.
        bound = reach + 2.0 * slack + 1e-9
        due = []
        while heap and heap[0][0] <= bound:
            action = heapq.heappop(heap)[2]
            if action.alive:
                self.sync(action)
                due.append(action)
            else:
                self._removed -= 1
        return due

    def keep(self, action: Action) -> None:
        """Put back, after :meth:`advance`, a sleep taken by :meth:`due` that did not end
        (its ``max_duration`` is that of the new step)."""
        action.synced = self.steps
        heapq.heappush(self._heap, (action.end, action.seq, action))

    def end(self, action: Action) -> None:
        """A sleep taken by :meth:`due` ended."""
        del self._alive[action.seq]

    def advance(self, delta: float) -> None:
        """A step moved the clock by ``delta`` (the sleeps taken by :meth:`due` are
        updated by the caller); deltas older than the oldest pending sleep are dropped."""
        self.steps += 1
        if not self._alive:
            if self._deltas:
                del self._deltas[:]
            self._base = self.steps
            return
        deltas = self._deltas
        deltas.append(delta)
        if len(deltas) > self._trim_at:
            oldest = next(iter(self._alive.values())).born
            del deltas[:oldest - self._base]
            self._base = oldest
            self._trim_at = max(2 * _REBUILD_AT, 2 * len(deltas))
