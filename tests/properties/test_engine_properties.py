"""Property tests of the embedded engine under a random, protocol-abiding scheduler.

Random small platforms (1-8 nodes, random wattages and transition times,
possibly heterogeneous) and workloads (1-30 jobs, delay and
parallel_homogeneous profiles, zero-flop jobs, simultaneous submissions,
oversized jobs, walltimes shorter than the runtime) are run in-process with
``Randomsched``; the properties are checked from the output files and the
transcript only, never from the engine's internals.

Node groups of one platform may have different transition durations: a
multi-machine ``SET_RESOURCE_STATE`` then switches each machine after its own
1/speed, as Batsim does.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import example, given, settings

from snficon.platform.generate import NodeModel

from .cases import PROPERTY_SETTINGS, Case, cases, run_case
from .checks import check_all, read_outputs
from .replay import Replay

#: Let nodes of one platform have different switch durations (see the module docstring).
MIXED_DURATIONS = True


def _run_and_check(case: Case) -> Replay:
    with tempfile.TemporaryDirectory(prefix="snficon-prop-") as folder:
        result = run_case(case, Path(folder))
        assert result.engine.finished, "the run did not reach SIMULATION_ENDS"
        assert result.transcript is not None
        replay = Replay(case, result.transcript.entries)
        assert replay.end_time is not None, "no SIMULATION_ENDS in the transcript"
        check_all(case, replay, read_outputs(Path(folder) / "out"))
    return replay


#: Found by hypothesis: one 0-W node and only a job larger than the platform, so
#: nothing starts and nothing switches: Batsim's energy file then has no row at all.
NOTHING_RUNS = Case(
    groups=((1, NodeModel("random", busy_w=0.0, idle_w=0.0, sleep_w=0.0, off_s=1.0, off_w=0.0,
                          on_s=1.0, on_w=0.0)),),
    padded_names=False, profiles={"p0": {"type": "delay", "delay": 1.0}},
    jobs=({"id": 0, "subtime": 0.0, "res": 2, "profile": "p0", "walltime": -1.0},), seed=1)


#: Found by hypothesis: a job submitted 6e-8 s after the start. The message of its arrival
#: prints the same time as the first (0.000000), while out_machine_states.csv has a row at
#: 0 and rows at 5.96046e-08: the check compares the replay with the last of them only.
SUB_MICROSECOND_ARRIVAL = Case(
    groups=((4, NodeModel("random", busy_w=0.0, idle_w=0.0, sleep_w=0.0, off_s=1.0, off_w=0.0,
                          on_s=1.0, on_w=0.0)),),
    padded_names=False, profiles={"p0": {"type": "delay", "delay": 1.0},
                                  "p1": {"type": "delay", "delay": 1.0}},
    jobs=({"id": 0, "subtime": 5.960464477539063e-08, "res": 1, "profile": "p0",
           "walltime": -1.0},), seed=0)


@settings(PROPERTY_SETTINGS, max_examples=100)
@given(case=cases(mixed_durations=MIXED_DURATIONS))
@example(case=NOTHING_RUNS)
@example(case=SUB_MICROSECOND_ARRIVAL)
def test_random_schedules_keep_batsim_invariants(case: Case) -> None:
    """Jobs, node occupancy, walltimes, energy and machine states all add up."""
    _run_and_check(case)
