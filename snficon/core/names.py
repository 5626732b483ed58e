"""Names several parts of the project spell out, defined once.

Triggers of a scheduler invocation and the controller's modes are the values
of the decision log's ``trigger`` and ``mode`` columns (SPEC section 7); the
idle timeout is the IPM default of the paper's Table I.
"""

from __future__ import annotations


class Trigger:
    """Why the scheduler was invoked (SPEC section 7)."""

    INITIAL = "initial"  # the simulation begins
    ARRIVAL = "arrival"  # a job was submitted
    COMPLETION = "completion"  # a job ended
    CALLBACK = "callback"  # a requested call (CALL_ME_LATER) fell due
    TRANSITION = "transition"  # a node finished a pstate switch


#: Every trigger, in the order the decision log documents them.
TRIGGERS = (Trigger.INITIAL, Trigger.ARRIVAL, Trigger.COMPLETION, Trigger.CALLBACK,
            Trigger.TRANSITION)
#: When several kinds of events share a message, the trigger logged is the first here.
TRIGGER_PRIORITY = (Trigger.INITIAL, Trigger.ARRIVAL, Trigger.COMPLETION, Trigger.TRANSITION,
                    Trigger.CALLBACK)
#: Invocations at which spare planning may happen (the paper's set E, Definition 5).
PLANNING_TRIGGERS = frozenset({Trigger.INITIAL, Trigger.ARRIVAL, Trigger.COMPLETION})


class Mode:
    """SNF-ICON's modes (Algorithm 1): the ICON spare target, or the IPM fallback."""

    ICON = "icon"
    FALLBACK = "fallback"


MODES = (Mode.ICON, Mode.FALLBACK)

#: IPM's idle timeout Delta_t (s), Table I: an idle node sleeps once idle this long.
DEFAULT_TIMEOUT_S = 7200.0


class CheckpointField:
    """Workload job fields of the time-limit layer (:mod:`snficon.core.time_limits`).

    The workload generators write them and the metrics read them; the
    layer's ``tl_*_field`` options rename them. ``LIMIT``: the job's time limit
    (s; the requested time the scheduler plans with), enforced by the layer
    (the job itself has ``walltime: -1``). ``INTERVAL``: the checkpoint interval
    (s) of a checkpointing job (absent: the job does not checkpoint).
    ``OFFSET``: when the first interval begins after the start (s, default 0):
    checkpoint k >= 1 falls at start + offset + k x interval. ``CORES``:
    cores per allocated node, for CPU times in core-seconds.
    """

    LIMIT = "reqtime"
    INTERVAL = "checkpoint_interval"
    OFFSET = "checkpoint_offset"
    CORES = "cores_per_node"
