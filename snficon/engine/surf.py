"""SimGrid 3.32's clock and the actions of its ptask (L07) host model, as Batsim 4.2.1 uses it.

Batsim sets ``host/model:ptask_L07`` (``batsim.cpp``), so every activity is an
``L07Action`` of one model (``src/surf/ptask_L07.cpp``), kept in one list in
creation order (``Action::Action`` pushes it at the back of the started set):

* a job's ``parallel_homogeneous`` profile is one parallel task over its hosts
  (``task_execution.cpp`` ``execute_parallel_task``) and a pstate transition is
  ``this_actor::execute(1)`` on the machine (``pstate.cpp``): an *exec* whose
  remaining work is a fraction (``CpuAction(model, 1.0, ...)``: cost 1) and
  whose rate is ``min(speed / flops)`` over its hosts (``L07Action::update_bound``;
  the fair-bottleneck solver gives the bound when no host is shared). With no
  flop to compute, ``L07Action::L07Action`` sets the remains to 0 and the
  solver gives the variable the value 1 (``FairBottleneck::do_solve``);
* ``sleep_for`` (delay jobs, ``CALL_ME_LATER`` waiters, the job submitter, the
  request-reply actor waiting for an answer's ``now``) and ``wait_for``
  timeouts are *sleeps*: ``CpuL07::sleep`` makes an action with a
  ``max_duration`` and a zero sharing penalty (rate 0);
* a message between Batsim's actors is a *comm*: 1 byte between two actors on
  ``master_host``, a route without links, so remains 0 and rate 1: it ends at
  the next solve without moving the clock.

:meth:`Surf.solve` is ``EngineImpl::solve``: the next step ``delta`` is the
minimum over actions of ``remains / rate`` and ``max_duration``
(``Model::next_occurring_event_full``); the clock is *incremented* by it
(``now_ += time_delta``: a sum of per-step deltas, rounded at each step, not
the exact time of an event) and every action is updated
(``HostL07Model::update_actions_state``): ``remains -= rate * delta`` and
``max_duration -= delta`` through ``double_update``, which snaps anything below
its precision to 0 -- ``sg_maxmin_precision * sg_surf_precision`` = 1e-14 for
remains (``Action::update_remains``), ``sg_surf_precision`` = 1e-9 s for
durations (``Action::update_max_duration``). The actions that reach 0 finish,
in list order.

Sleeps are not scanned at each step: they wait in a heap of ``(end, seq,
action)`` (SimPy's event heap) keyed by an estimate of their end on the clock,
and only those whose estimate is within rounding of the step's end are
brought up to date and looked at (:class:`SleepHeap`). Bringing a sleep up to
date replays, one by one, the deltas of the steps it missed, so its
``max_duration`` is exactly the value SimGrid's step-by-step subtraction gives;
the steps' order of ends stays the list order (``seq``). The cost of a step
thus does not grow with the number of sleeps pending (a scheduler with 100,000
``CALL_ME_LATER`` requests waiting).

Those thresholds are why Batsim sometimes reports two ends "at the same time"
in two steps: a job whose true end lies more than 1e-14 of its work after
another event's step ends one step later, at a clock value that may print the
same (a rounding artefact, not a model choice). Times that are exact in
SimGrid (integer seconds added to an integer clock, 1/speed transitions) stay
exact here.

The sums are only the same as SimGrid's when their terms are: Batsim reads
the workload and every answer with rapidjson's default number parser, which
is a few ulps off the correctly rounded value for some numbers of 16 or 17
significant digits (:func:`~.wire.rapidjson_double`), and the engine reads
them the same way (``drivers.session.build_engine``).
"""

from __future__ import annotations

import math

import numpy as np

from snficon.engine.sleeps import SleepHeap

#: ``sg_maxmin_precision`` (``maxmin/precision``, SimGrid 3.32 default).
MAXMIN_PRECISION = 1e-5
#: ``sg_surf_precision`` (``surf/precision``, SimGrid 3.32 default), in seconds.
SURF_PRECISION = 1e-9
#: Threshold under which a remaining amount of work becomes 0 (``Action::update_remains``).
REMAINS_PRECISION = MAXMIN_PRECISION * SURF_PRECISION
#: ``NO_MAX_DURATION`` of ``Action.hpp``.
NO_MAX_DURATION = -1.0

EXEC = 0
SLEEP = 1
COMM = 2

_NO_HOSTS = np.zeros(0, dtype=np.int64)


def _seq_of(action: Action) -> int:
    return action.seq


class Action:
    """One L07 action: an exec (or comm) with remains and rate, or a sleep with a max duration.

    ``hosts`` are the compute hosts whose CPU the action uses (energy updates
    of ``on_action_state_change``); ``loads`` tells whether it computes on
    them (busy wattage). ``activity`` is what ends with it.
    """

    __slots__ = ("seq", "kind", "rate", "remains", "max_duration", "hosts", "loads",
                 "activity", "alive", "end", "born", "synced")

    def __init__(self, seq: int, kind: int, rate: float, remains: float, max_duration: float,
                 hosts: np.ndarray, loads: bool, activity: object) -> None:
        self.seq = seq
        self.kind = kind
        self.rate = rate
        self.remains = remains
        self.max_duration = max_duration
        self.hosts = hosts
        self.loads = loads
        self.activity = activity
        self.alive = True
        #: A sleep's end on the clock as estimated when it started (its heap key).
        self.end = 0.0
        #: The step count when a sleep started, and when its ``max_duration`` was last
        #: brought up to date (:class:`SleepHeap`).
        self.born = 0
        self.synced = 0


class Surf:
    """The started actions of the host model and SimGrid's clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self._actions: dict[int, Action] = {}
        #: The same actions split by what the step updates: those with a rate (execs and
        #: comms: their remains) and those with a max duration (sleeps); no action has both.
        self._rated: dict[int, Action] = {}
        self._sleeps = SleepHeap()
        self._seq = 0
        #: Execs and comms with no work left (comms, zero-flop jobs): the next solve
        #: has delta 0 (``next_occurring_event_full`` returns 0 for them).
        self._instant: list[Action] = []
        #: Sleeps shorter than the precision: they end at the next solve, whatever its delta.
        self._tiny: list[Action] = []
        self.finished: list[Action] = []
        self.failed: list[Action] = []

    # ------------------------------------------------------------------ creation

    def _add(self, kind: int, rate: float, remains: float, max_duration: float,
             hosts: np.ndarray, loads: bool, activity: object) -> Action:
        action = Action(self._seq, kind, rate, remains, max_duration, hosts, loads, activity)
        self._seq += 1
        self._actions[action.seq] = action
        if rate > 0.0:
            self._rated[action.seq] = action
        if kind == SLEEP:
            self._sleeps.add(action, self.now)
        if remains == 0.0 and kind != SLEEP:
            self._instant.append(action)
        elif 0.0 <= max_duration < SURF_PRECISION:
            self._tiny.append(action)
        return action

    def execute(self, hosts: np.ndarray, flops: float, speeds: np.ndarray,
                activity: object) -> Action:
        """A parallel task of ``flops`` on each of ``hosts`` whose speeds are ``speeds``.

        ``L07Action::L07Action``: cost 1, bound ``min(speed / flops)``; no flop at
        all gives remains 0 and rate 1 (the solver's value for a variable that
        consumes nothing).
        """
        if flops > 0.0:
            # the minimum of a Python list: ndarray.min's dispatch costs about 1 us a call
            # (27,528 calls on SDSC Blue, most of them on one host)
            rate = min(speeds.tolist()) / flops
            return self._add(EXEC, rate, 1.0, NO_MAX_DURATION, hosts, True, activity)
        return self._add(EXEC, 1.0, 0.0, NO_MAX_DURATION, hosts, False, activity)

    def sleep(self, duration: float, host: int, activity: object) -> Action:
        """``CpuL07::sleep``: an action of zero rate that ends after ``duration`` s."""
        hosts = _NO_HOSTS if host < 0 else np.array([host], dtype=np.int64)
        return self._add(SLEEP, 0.0, 1.0, duration, hosts, False, activity)

    def communicate(self, activity: object) -> Action:
        """A 1-byte message between two actors of ``master_host`` (no link on the route)."""
        return self._add(COMM, 1.0, 0.0, NO_MAX_DURATION, _NO_HOSTS, False, activity)

    # ------------------------------------------------------------------ removal

    def remove(self, action: Action) -> None:
        """Destroy a started action (its activity was cleaned before it ended)."""
        if action.alive:
            action.alive = False
            self._forget(action)
            if action in self._instant:
                self._instant.remove(action)
            if action in self._tiny:
                self._tiny.remove(action)

    def _forget(self, action: Action) -> None:
        seq = action.seq
        del self._actions[seq]
        if action.kind == SLEEP:
            self._sleeps.discard(action)
        else:
            self._rated.pop(seq, None)

    def cancel(self, action: Action) -> None:
        """``Action::cancel``: the action leaves the started set for the failed one."""
        self.remove(action)
        self.failed.append(action)

    def has_instant(self) -> bool:
        """True when the next solve has delta 0 (something ends at once)."""
        return bool(self._instant or self._tiny)

    # ------------------------------------------------------------------ the step

    def solve(self) -> float:
        """One ``EngineImpl::solve``: advance the clock to the next end; return the delta.

        The actions that ended are in :attr:`finished`, in list order. Returns
        -1 when no action can end (nothing started, or only waits with no
        duration).
        """
        if self._instant:
            return self.instant_step()
        rated = self._rated.values()  # a view: nothing is forgotten until the end
        sleeps = self._sleeps
        if not self._actions:
            return -1.0
        best = math.inf
        for action in rated:
            remains = action.remains
            value = remains / action.rate if remains > 0.0 else 0.0
            if value < best:
                best = value
        due = sleeps.due(self.now + best)
        for action in due:
            duration = action.max_duration
            if duration < best:
                best = duration
        self._tiny = []
        self.now += best
        ended: list[Action] = []
        for action in rated:
            remains = action.remains - action.rate * best
            if remains < REMAINS_PRECISION:
                remains = 0.0
                ended.append(action)
            action.remains = remains
        ended_rated = len(ended)
        kept: list[Action] = []
        for action in due:
            duration = action.max_duration - best
            if duration < SURF_PRECISION:
                duration = 0.0
                ended.append(action)
                sleeps.end(action)
            else:
                kept.append(action)
            action.max_duration = duration
        sleeps.advance(best)
        for action in kept:
            sleeps.keep(action)
        if ended:
            if len(ended) - ended_rated > 1 or 0 < ended_rated < len(ended):
                ended.sort(key=_seq_of)  # list order: the sleeps came by end, not seq
            for action in ended:
                action.alive = False
                del self._actions[action.seq]
                self._rated.pop(action.seq, None)
            self.finished.extend(ended)
        return best

    def instant_step(self) -> float:
        """A solve whose delta is 0 (a comm or a zero-flop exec is pending).

        Nothing moves: only the actions already at 0 and the sleeps under the
        duration precision (``double_update`` snaps them to 0) end, in list order.
        """
        if len(self._instant) == 1 and not self._tiny:  # the usual case: one comm
            ended = self._instant
        else:
            ended = sorted(self._instant + self._tiny, key=lambda a: a.seq)
            self._tiny = []
        self._instant = []
        for action in ended:
            if action.max_duration != NO_MAX_DURATION:
                action.max_duration = 0.0
            action.alive = False
            self._forget(action)
        self.finished.extend(ended)
        return 0.0

    def take_finished(self) -> list[Action]:
        done, self.finished = self.finished, []
        return done

    def take_failed(self) -> list[Action]:
        done, self.failed = self.failed, []
        return done
