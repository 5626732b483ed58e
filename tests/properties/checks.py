"""Properties of a finished run, checked from its output files against a :class:`Replay`.

Each ``check_*`` function raises :class:`~.replay.ReplayError` (an
``AssertionError``) naming the first row that breaks its property.
"""

from __future__ import annotations

import bisect
import csv
import math
from collections import Counter
from pathlib import Path

from procset import ProcSet

from .cases import Case
from .replay import MESSAGE_TIME_TOL, JobTrace, Replay, require

ZERO_JOB_REPORTED_S = 1e-5  # Batsim reports a zero-flop job as lasting 1e-5 s
PRINTED_TIME_TOL = 1e-6  # %f prints six decimals
ENERGY_REL_TOL = 1e-6
ENERGY_ABS_TOL = 1e-5


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def read_outputs(prefix: Path) -> dict[str, list[dict[str, str]]]:
    """The rows of each Batsim output file written under ``prefix``."""
    names = ("jobs", "machine_states", "consumed_energy", "schedule", "pstate_changes")
    return {name: read_csv(Path(f"{prefix}_{name}.csv")) for name in names}


def close(a: float, b: float, tol: float = PRINTED_TIME_TOL) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=tol)


def expected_run(case: Case, trace: JobTrace) -> tuple[float, str]:
    """(simulated duration, final state) the job must have: walltime kills included.

    Batsim 4.2.1's ``do_delay_task`` kills a ``delay`` job whose delay *equals*
    its walltime (it sleeps the whole delay only if ``delay < walltime``); a
    parallel task that ends at its walltime has ended (its execution ends in
    the same SimGrid step as the timeout and was started first).
    """
    runtime = case.runtime(trace.job)
    walltime = float(trace.job["walltime"])
    delay = case.profiles[trace.job["profile"]]["type"] == "delay"
    if walltime > 0 and (runtime > walltime or (delay and runtime == walltime)):
        return walltime, "COMPLETED_WALLTIME_REACHED"
    return runtime, "COMPLETED_SUCCESSFULLY"


# ---------------------------------------------------------------------- jobs

def check_jobs_accounted(case: Case, replay: Replay, rows: list[dict[str, str]]) -> None:
    """Every job once in ``out_jobs.csv``, finished once or rejected (and only if oversized)."""
    seen = Counter(row["job_id"] for row in rows)
    expected = Counter(str(job["id"]) for job in case.jobs)
    require(seen == expected, f"out_jobs.csv ids {sorted(seen.items())} != workload ids")
    for row in rows:
        trace = replay.jobs[f"w0!{row['job_id']}"]
        oversized = int(trace.job["res"]) > case.nb_nodes
        require(trace.submitted is not None, f"job {row['job_id']} never submitted")
        if row["final_state"] == "REJECTED":
            require(trace.rejected and trace.completions == 0 and trace.started is None,
                    f"job {row['job_id']}: REJECTED in out_jobs.csv but not in the transcript")
        else:
            require(not trace.rejected and trace.completions == 1,
                    f"job {row['job_id']}: {trace.completions} JOB_COMPLETED, "
                    f"rejected={trace.rejected}")
            require(row["final_state"] == trace.final_state,
                    f"job {row['job_id']}: {row['final_state']} != {trace.final_state}")
        require(trace.rejected == oversized,
                f"job {row['job_id']} (res {trace.job['res']}, {case.nb_nodes} nodes): "
                f"rejected={trace.rejected}")


def check_job_times(case: Case, replay: Replay, rows: list[dict[str, str]]) -> None:
    """Starts after submission; durations, walltime kills, allocation and energy per job."""
    for row in rows:
        if row["final_state"] == "REJECTED":
            continue
        trace = replay.jobs[f"w0!{row['job_id']}"]
        assert trace.started is not None and trace.ended is not None
        where = f"job {row['job_id']}"
        start = float(row["starting_time"])
        require(start >= float(row["submission_time"]) - PRINTED_TIME_TOL,
                f"{where} starts at {start} before its submission {row['submission_time']}")
        require(close(start, trace.started), f"{where}: start {start} != {trace.started}")
        duration, state = expected_run(case, trace)
        require(row["final_state"] == state, f"{where}: {row['final_state']}, expected {state}")
        # both message times are Batsim's six-decimal prints of the clock: each is off by
        # up to half a microsecond
        require(close(trace.ended, trace.started + duration, 2 * MESSAGE_TIME_TOL),
                f"{where}: completed at {trace.ended}, expected {trace.started + duration}")
        reported = duration if duration > 0 else ZERO_JOB_REPORTED_S
        require(close(float(row["execution_time"]), reported),
                f"{where}: execution_time {row['execution_time']} != {reported}")
        require(close(float(row["finish_time"]), trace.started + reported),
                f"{where}: finish_time {row['finish_time']} != {trace.started + reported}")
        require(row["allocated_resources"] == trace.alloc,
                f"{where}: allocation {row['allocated_resources']} != {trace.alloc}")
        energy = replay.job_energy(trace)
        # the replay's duration comes from two rounded message times
        power = energy / (trace.ended - trace.started) if trace.ended > trace.started else 0.0
        require(math.isclose(float(row["consumed_energy"]), energy, rel_tol=ENERGY_REL_TOL,
                             abs_tol=ENERGY_ABS_TOL + 2 * MESSAGE_TIME_TOL * power),
                f"{where}: consumed_energy {row['consumed_energy']} != {energy}")


def check_no_node_overlap(case: Case, rows: list[dict[str, str]]) -> None:
    """No node runs two jobs at once (a zero-flop job occupies its nodes for no time)."""
    jobs = {str(job["id"]): job for job in case.jobs}
    spans: dict[int, list[tuple[float, float, str]]] = {}
    for row in rows:
        if row["final_state"] == "REJECTED":
            continue
        start = float(row["starting_time"])
        zero = case.runtime(jobs[row["job_id"]]) == 0
        end = start if zero else float(row["finish_time"])
        for node in ProcSet.from_str(row["allocated_resources"]):
            spans.setdefault(node, []).append((start, end, row["job_id"]))
    for node, items in spans.items():
        items.sort()
        for (_, end, first), (start, _, second) in zip(items, items[1:], strict=False):
            require(start >= end - PRINTED_TIME_TOL,
                    f"node {node} runs jobs {first} (until {end}) and {second} (from {start})")


# ---------------------------------------------------------------------- energy and states

def _candidate_times(replay: Replay, printed: float) -> list[float]:
    """The replayed change times a ``%f``-printed time may stand for."""
    times = sorted(set(replay.change_times))
    low = bisect.bisect_left(times, printed - 2 * PRINTED_TIME_TOL)
    high = bisect.bisect_right(times, printed + 2 * PRINTED_TIME_TOL)
    near = [t for t in times[low:high] if close(t, printed)]
    require(bool(near), f"no state change near t={printed}")
    return near


def check_energy(replay: Replay, rows: list[dict[str, str]]) -> None:
    """Every ``out_consumed_energy.csv`` row (the last one: the total) matches the models.

    Batsim writes a row when a job starts or ends and when a switch is asked for or
    done: a run where neither happened (every job rejected) has none.
    """
    acted = (any(job.started is not None for job in replay.jobs.values())
             or any(len(node.times) > 1 for node in replay.nodes))
    require(bool(rows) == acted, f"out_consumed_energy.csv has {len(rows)} row(s) but "
            f"{'' if acted else 'no '}job started or node switched")
    # The replay's times are six-decimal message times: each power change it places may be
    # off by MESSAGE_TIME_TOL, which moves the energy by at most that much x the change.
    moved = MESSAGE_TIME_TOL * sum(
        sum(abs(b - a) for a, b in zip(node.watts, node.watts[1:], strict=False))
        + max(node.watts, default=0.0) for node in replay.nodes)
    for line, row in enumerate(rows, start=2):
        energy = float(row["energy"])
        expected = [replay.energy_until(t) for t in _candidate_times(replay, float(row["time"]))]
        require(any(math.isclose(energy, e, rel_tol=ENERGY_REL_TOL,
                                 abs_tol=ENERGY_ABS_TOL + moved)
                    for e in expected),
                f"out_consumed_energy.csv line {line} (t={row['time']}): energy {energy} "
                f"!= {expected} computed from the transcript")


def printed_unit(text: str) -> float:
    """One unit in the last place of a time printed with six significant digits (``%g``)."""
    value = abs(float(text))
    return 10.0 ** (math.floor(math.log10(value)) - 5) if value > 0 else 1e-6


def check_machine_states(case: Case, replay: Replay, rows: list[dict[str, str]]) -> None:
    """Counts sum to the number of nodes; the last row of each printed time matches the replay.

    Times here are the clock printed with six significant digits, the replay's times come
    from six-decimal messages: a printed time stands for every change time within one
    printed unit (plus the messages' rounding). When those candidates do not all leave the
    same counts, the row must match one of them. Of printed times that one message time
    stands for (they print alike with six decimals), only the last is checked.
    """
    columns = ("nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing")
    changes = sorted(set(replay.change_times))
    last_row: dict[str, tuple[int, ...]] = {}
    candidates: dict[str, list[float]] = {}
    for line, row in enumerate(rows, start=2):
        counts = tuple(int(row[c]) for c in columns)
        require(sum(counts) == case.nb_nodes,
                f"out_machine_states.csv line {line}: counts {counts} do not sum to "
                f"{case.nb_nodes}")
        printed = row["time"]
        if printed not in candidates:
            reach = printed_unit(printed) + PRINTED_TIME_TOL
            low = bisect.bisect_left(changes, float(printed) - reach)
            high = bisect.bisect_right(changes, float(printed) + reach)
            candidates[printed] = changes[low:high]
        require(bool(candidates[printed]), f"out_machine_states.csv line {line}: nothing "
                                           f"changed at t={printed}")
        last_row[printed] = counts
    # Rows of clock times a message prints alike (six decimals: 0 and 6e-8) stand for one
    # message time of the replay, which sees only the state after the last of them.
    last_of_message: dict[str, str] = {}
    for printed in last_row:
        last_of_message[f"{float(printed):.6f}"] = printed
    for printed in last_of_message.values():
        counts = last_row[printed]
        near = candidates[printed]
        # As in Batsim, a machine of a request changes state when its own switch ends, with no
        # row and unseen by the scheduler until the request's last machine is done: while a
        # request of uneven durations is in progress, rows cannot be replayed from messages.
        if any(asked < when < done for when in near for asked, done in replay.uneven_switches):
            continue
        expected = {replay.counts_at(when) for when in near}
        require(counts in expected, f"out_machine_states.csv at t={printed}: {counts} is none "
                                    f"of {sorted(expected)} replayed from the transcript")


def check_all(case: Case, replay: Replay, outputs: dict[str, list[dict[str, str]]]) -> None:
    """Every output-file property of one run."""
    check_jobs_accounted(case, replay, outputs["jobs"])
    check_job_times(case, replay, outputs["jobs"])
    check_no_node_overlap(case, outputs["jobs"])
    check_energy(replay, outputs["consumed_energy"])
    check_machine_states(case, replay, outputs["machine_states"])
