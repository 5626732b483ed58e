"""Random simulation cases for the property tests: platform, workload, scheduler seed.

A :class:`Case` is written to a folder (platform XML by the project's
generator, Batsim JSON workload) and run with the ``Randomsched`` scheduler,
in-process or against a real ``pybatsim`` process. Hypothesis settings are
shared here so that every property test is deterministic and database-free.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from snficon.drivers.session import SimulationResult, simulate_in_process, simulate_with_pybatsim
from snficon.platform.generate import (
    NodeModel,
    render_heterogeneous_platform,
    render_platform,
    write_platform,
)

SCHEDULER = Path(__file__).resolve().with_name("randomsched.py")
COMPUTE_SPEED_FLOPS = 1e9  # pstate 0 of every generated host ("1Gf")
MAX_NODES = 8
MAX_JOBS = 30

#: Deterministic, database-free settings for every property test of this folder.
PROPERTY_SETTINGS = settings(
    deadline=None, derandomize=True, database=None, print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def profile_runtime(profile: dict[str, Any]) -> float:
    """Seconds a profile runs on a generated host (``cpu`` at 1 Gflop/s, or ``delay``)."""
    if profile["type"] == "delay":
        return float(profile["delay"])
    return float(profile["cpu"]) / COMPUTE_SPEED_FLOPS


@dataclass(frozen=True)
class Case:
    """One random simulation: node groups, workload document and scheduler seed."""

    groups: tuple[tuple[int, NodeModel], ...]
    padded_names: bool
    profiles: dict[str, dict[str, Any]]
    jobs: tuple[dict[str, Any], ...]
    seed: int

    @property
    def nb_nodes(self) -> int:
        return sum(count for count, _ in self.groups)

    def node_models(self) -> list[NodeModel]:
        """The model of each node, by Batsim resource id (file order: <= 8 nodes)."""
        return [model for count, model in self.groups for _ in range(count)]

    def runtime(self, job: dict[str, Any]) -> float:
        """Seconds the job would run without a walltime (0 for a zero-flop job)."""
        return profile_runtime(self.profiles[job["profile"]])

    def busy(self, job: dict[str, Any]) -> bool:
        """True if the job draws the busy wattage (``parallel_homogeneous``)."""
        return self.profiles[job["profile"]]["type"] == "parallel_homogeneous"

    def platform_xml(self) -> str:
        if self.padded_names:
            return render_heterogeneous_platform(list(self.groups))
        assert len(self.groups) == 1
        return render_platform(self.groups[0][1], self.groups[0][0])

    def workload_document(self) -> dict[str, Any]:
        return {"nb_res": self.nb_nodes, "jobs": list(self.jobs), "profiles": self.profiles}

    def write(self, folder: Path) -> tuple[Path, Path]:
        """Write the platform and workload files into ``folder``; return their paths."""
        platform = write_platform(folder / "platform.xml", self.platform_xml())
        workload = folder / "workload.json"
        workload.write_text(json.dumps(self.workload_document()), encoding="utf-8")
        return platform, workload


# ---------------------------------------------------------------------- strategies

def _power() -> st.SearchStrategy[float]:
    return st.one_of(st.integers(0, 3000).map(float),
                     st.floats(0.0, 3000.0, allow_nan=False, allow_infinity=False))


def _duration() -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from([1.0, 7.3, 8.0, 32.0, 600.0]),
                     st.floats(0.01, 1500.0, allow_nan=False, allow_infinity=False))


@st.composite
def node_models(draw: st.DrawFn) -> NodeModel:
    """A node model with random wattages and transition durations."""
    return NodeModel(name="random", busy_w=draw(_power()), idle_w=draw(_power()),
                     sleep_w=draw(_power()), off_s=draw(_duration()), off_w=draw(_power()),
                     on_s=draw(_duration()), on_w=draw(_power()))


@st.composite
def node_groups(draw: st.DrawFn, mixed_durations: bool
                ) -> tuple[tuple[tuple[int, NodeModel], ...], bool]:
    """1-3 groups of 1-8 nodes in all; a single group may use unpadded names.

    Unless ``mixed_durations``, every group has the first group's switch-off
    and switch-on durations (wattages still differ).
    """
    total = draw(st.integers(1, MAX_NODES))
    nb_groups = draw(st.integers(1, min(3, total)))
    cuts = sorted(draw(st.lists(st.integers(1, total - 1), min_size=nb_groups - 1,
                                max_size=nb_groups - 1, unique=True))) if nb_groups > 1 else []
    counts = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
    models = [draw(node_models()) for _ in counts]
    if not mixed_durations:
        models = [replace(m, off_s=models[0].off_s, on_s=models[0].on_s) for m in models]
    groups = tuple(zip(counts, models, strict=True))
    padded = nb_groups > 1 or draw(st.booleans())
    return groups, padded


@st.composite
def profiles(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    """1-5 profiles: delays (> 0) and parallel_homogeneous, ``cpu`` 0 included."""
    delay = st.one_of(st.integers(1, 300).map(float), st.floats(0.001, 500.0))
    cpu = st.one_of(st.just(0.0), st.integers(1, 300).map(lambda s: s * COMPUTE_SPEED_FLOPS),
                    st.floats(1e3, 5e11))
    kinds = draw(st.lists(st.sampled_from(["delay", "parallel_homogeneous"]),
                          min_size=1, max_size=5))
    result: dict[str, dict[str, Any]] = {}
    for index, kind in enumerate(kinds):
        if kind == "delay":
            result[f"p{index}"] = {"type": "delay", "delay": draw(delay)}
        else:
            result[f"p{index}"] = {"type": kind, "cpu": draw(cpu), "com": 0.0}
    return result


def _walltime(draw: st.DrawFn, runtime: float) -> float:
    """-1, or a walltime shorter than, equal to or longer than ``runtime``."""
    choice = draw(st.sampled_from(["none", "none", "shorter", "equal", "longer"]))
    if choice == "none" or runtime == 0 and choice != "longer":
        return -1.0
    if choice == "shorter":
        return runtime * draw(st.floats(0.05, 0.95))
    if choice == "equal":
        return runtime
    return runtime * draw(st.floats(1.0, 3.0)) + draw(st.floats(0.001, 10.0))


@st.composite
def cases(draw: st.DrawFn, mixed_durations: bool = False) -> Case:
    """A random platform, workload (1-30 jobs) and scheduler seed.

    ``mixed_durations`` lets nodes of one platform have different transition
    durations (see ``test_engine_properties`` for why it is off by default).
    """
    groups, padded = draw(node_groups(mixed_durations))
    nb_nodes = sum(count for count, _ in groups)
    profile_map = draw(profiles())
    # A small pool of submission times makes simultaneous submissions frequent.
    pool = draw(st.lists(st.one_of(st.integers(0, 200).map(float), st.floats(0.0, 300.0)),
                         min_size=1, max_size=8))
    sizes = st.one_of(st.integers(1, nb_nodes), st.integers(1, nb_nodes + 3))
    jobs = []
    for index in range(draw(st.integers(1, MAX_JOBS))):
        name = draw(st.sampled_from(sorted(profile_map)))
        job: dict[str, Any] = {"id": index, "subtime": draw(st.sampled_from(pool)),
                               "res": draw(sizes), "profile": name}
        job["walltime"] = _walltime(draw, profile_runtime(profile_map[name]))
        jobs.append(job)
    seed = draw(st.integers(0, 2**31 - 1))
    return Case(groups=groups, padded_names=padded, profiles=profile_map, jobs=tuple(jobs),
                seed=seed)


# ---------------------------------------------------------------------- running

@contextlib.contextmanager
def preserved_interpreter_state() -> Iterator[None]:
    """Undo what pybatsim changes in this process: ``sys.path`` entries its loader
    adds for a scheduler file and the recursion limit ``Batsim`` raises."""
    saved_path, saved_limit = list(sys.path), sys.getrecursionlimit()
    try:
        yield
    finally:
        sys.path[:] = saved_path
        sys.setrecursionlimit(saved_limit)


def run_case(case: Case, folder: Path, *, over_zmq: bool = False) -> SimulationResult:
    """Write ``case`` into ``folder`` and simulate it; outputs go to ``folder/out_*``."""
    platform, workload = case.write(folder)
    options = {"seed": case.seed}
    prefix = folder / "out"
    if over_zmq:
        return simulate_with_pybatsim(platform, [workload], str(SCHEDULER), options,
                                      export_prefix=prefix, record=True, answer_timeout_s=60)
    with preserved_interpreter_state():
        return simulate_in_process(platform, [workload], str(SCHEDULER), options,
                                   export_prefix=prefix, record=True)
