"""Benchmark of the embedded engine on a large synthetic case (run by hand, not by pytest).

    uv run python benchmarks/engine_bench.py                      # 1152 AOBA nodes, 20,000 jobs
    uv run python benchmarks/engine_bench.py --mode inprocess --profile
    uv run python benchmarks/engine_bench.py --mode inprocess --repeat 5     # medians
    uv run python benchmarks/engine_bench.py --nodes 256 --jobs 5000 --mode zmq

The case: a homogeneous AOBA platform written by the project's generator and
a workload of ``parallel_homogeneous`` jobs (one profile per job) with
log-uniform sizes and runtimes and Poisson arrivals whose rate keeps the
offered load near ``--load`` (default 0.95) of the platform. The scheduler is
the conformance probe (``../shared/conformance/probe.py``: FCFS, idle-timeout
sleep, wake on demand, CALL_ME_LATER); without ``../shared`` it is snficon's
own ``fcfs`` policy.

Each mode runs in its own child process (so peak memory is that run's):
``inprocess`` drives the scheduler by function calls, ``zmq`` spawns a real
``pybatsim`` process and talks to it over ZeroMQ on loopback; the figures
(peak RSS included) are the engine process's. Protocol events are counted in
both directions by wrapping the engine's ``first_message``/``answer``, which
also times the engine's own share of the run.

Target: in-process >= 60,000 (issue 10) protocol events per CPU second in the engine
(its thread's CPU time, which a machine busy with other work does not inflate as it
does the wall time). The end-to-end rate is printed too, but the scheduler side
bounds it: at 1152 nodes the probe scans every node several times per message and
builds its allocations with ``ProcSet(*ids)``, which merges one id at a time
(quadratic in procset 1.0); pybatsim parses every allocation the same way. With the
probe, the engine is under a tenth of the wall time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine, free_loopback_port, pybatsim_command
from snficon.drivers.zmq_link import run_over_zmq
from snficon.engine.simulator import BatsimEngine
from snficon.platform.generate import AOBA, render_platform, write_platform
from snficon.registry import PROJECT_ROOT, load_scheduler

REPO = Path(__file__).resolve().parents[1]
PROBE = REPO.parent / "shared" / "conformance" / "probe.py"
COMPUTE_SPEED_FLOPS = 1e9
TARGET_EVENTS_PER_S = 60_000
IDLE_TIMEOUT_S = 1800.0


# ---------------------------------------------------------------------- the case

def write_workload(path: Path, nodes: int, jobs: int, seed: int, load: float) -> dict[str, float]:
    """Write the synthetic workload; return a few figures describing it."""
    rng = np.random.default_rng(seed)
    max_size = max(1, nodes // 8)
    sizes = np.minimum(np.floor(2.0 ** rng.uniform(0, math.log2(max_size) + 1, jobs)), nodes)
    runtimes = np.exp(rng.uniform(math.log(60.0), math.log(4 * 3600.0), jobs))
    mean_gap = float(np.mean(sizes * runtimes)) / (nodes * load)
    subtimes = np.cumsum(rng.exponential(mean_gap, jobs))
    document = {
        "nb_res": nodes,
        "jobs": [{"id": i, "subtime": round(float(subtimes[i]), 3), "res": int(sizes[i]),
                  "profile": str(i), "walltime": -1} for i in range(jobs)],
        "profiles": {str(i): {"type": "parallel_homogeneous",
                              "cpu": round(float(runtimes[i]), 3) * COMPUTE_SPEED_FLOPS,
                              "com": 0} for i in range(jobs)},
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    return {"mean_size": float(sizes.mean()), "mean_runtime_s": float(runtimes.mean()),
            "mean_interarrival_s": mean_gap, "last_submission_s": float(subtimes[-1])}


def write_case(folder: Path, nodes: int, jobs: int, seed: int, load: float
               ) -> tuple[Path, Path, dict[str, float]]:
    """Platform (AOBA x ``nodes``) and workload files in ``folder``."""
    platform = write_platform(folder / "platform.xml", render_platform(AOBA, nodes))
    workload = folder / "workload.json"
    figures = write_workload(workload, nodes, jobs, seed, load)
    return platform, workload, figures


def scheduler_choice(name: str = "auto") -> tuple[str, dict[str, Any]]:
    """Scheduler spec and options: ``auto`` is the probe when ``../shared`` is there, else
    the tests' plain FCFS scheduler ``tests/engine/fcfs.py`` (same idle timeout)."""
    if name == "probe" or name == "auto" and PROBE.is_file():
        return str(PROBE), {"idle_timeout": IDLE_TIMEOUT_S}
    return str(REPO / "tests" / "engine" / "fcfs.py"), {"timeout": IDLE_TIMEOUT_S}


# ---------------------------------------------------------------------- counting

@dataclass
class ProtocolCount:
    """Messages and events seen in both directions, and wall time spent inside the engine."""

    messages: int = 0
    events: int = 0
    engine_s: float = 0.0
    #: CPU time of this thread inside the engine: what a loaded machine does not inflate.
    engine_cpu_s: float = 0.0

    def add(self, message: dict[str, Any] | None) -> None:
        if message is not None:
            self.messages += 1
            self.events += len(message["events"])


def count_protocol(engine: BatsimEngine) -> ProtocolCount:
    """Wrap the engine's two entry points so that every message is counted."""
    counts = ProtocolCount()
    first_message: Callable[[], dict[str, Any]] = engine.first_message
    answer: Callable[[Any], dict[str, Any] | None] = engine.answer

    def counted_first() -> dict[str, Any]:
        started, cpu = time.perf_counter(), time.thread_time()
        message = first_message()
        counts.engine_s += time.perf_counter() - started
        counts.engine_cpu_s += time.thread_time() - cpu
        counts.add(message)
        return message

    def counted_answer(reply: Any) -> dict[str, Any] | None:
        counts.add(reply)
        started, cpu = time.perf_counter(), time.thread_time()
        message = answer(reply)
        counts.engine_s += time.perf_counter() - started
        counts.engine_cpu_s += time.thread_time() - cpu
        counts.add(message)
        return message

    engine.first_message = counted_first  # type: ignore[method-assign]
    engine.answer = counted_answer  # type: ignore[method-assign]
    return counts


# ---------------------------------------------------------------------- runs

@dataclass
class RunFigures:
    """What one run measured."""

    mode: str
    setup_s: float
    wall_s: float
    messages: int
    events: int
    jobs_finished: int
    peak_rss_mib: float
    engine_s: float
    engine_cpu_s: float
    utilisation: float
    scheduler_peak_rss_mib: float | None = None

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s

    @property
    def messages_per_s(self) -> float:
        return self.messages / self.wall_s


def _peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0  # KiB on Linux


def _run_outcome(engine: BatsimEngine) -> tuple[int, float]:
    """Jobs finished and the share of node-time spent computing until the makespan."""
    schedule: dict[str, Any] = engine.outputs().schedule
    node_time = engine.platform.nb_nodes * float(schedule["makespan"])
    busy = float(schedule["time_computing"]) / node_time if node_time else 0.0
    return int(schedule["nb_jobs_finished"]), busy


def run_inprocess(platform: Path, workload: Path, scheduler_name: str,
                  profile: bool) -> RunFigures:
    """Engine and scheduler in this process, optionally under cProfile."""
    spec, options = scheduler_choice(scheduler_name)
    started = time.perf_counter()
    engine = build_engine(platform, [workload])
    counts = count_protocol(engine)
    scheduler = load_scheduler(spec, options)
    setup = time.perf_counter() - started
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    run_in_process(engine, scheduler)
    if profiler:
        profiler.disable()
    wall = time.perf_counter() - started
    if profiler:
        print_profile(profiler)
    finished, utilisation = _run_outcome(engine)
    return RunFigures("inprocess", setup, wall, counts.messages, counts.events, finished,
                      _peak_rss_mib(), counts.engine_s, counts.engine_cpu_s, utilisation)


def run_zmq(platform: Path, workload: Path, scheduler_name: str, log_dir: Path) -> RunFigures:
    """Engine here, scheduler in a real ``pybatsim`` process over loopback ZeroMQ."""
    spec, options = scheduler_choice(scheduler_name)
    started = time.perf_counter()
    engine = build_engine(platform, [workload])
    counts = count_protocol(engine)
    endpoint = f"tcp://127.0.0.1:{free_loopback_port()}"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT_ROOT), *filter(None,
                                                                  [env.get("PYTHONPATH")])])
    with open(log_dir / "pybatsim.err.log", "w", encoding="utf-8") as errors:
        process = subprocess.Popen(pybatsim_command(spec, options, endpoint), env=env,
                                   stdout=subprocess.DEVNULL, stderr=errors)
        setup = time.perf_counter() - started
        started = time.perf_counter()
        try:
            run_over_zmq(engine, endpoint, answer_timeout_s=600.0,
                         peer_alive=lambda: process.poll() is None)
        finally:
            wall = time.perf_counter() - started
            process.wait(timeout=60)
    finished, utilisation = _run_outcome(engine)
    return RunFigures("zmq", setup, wall, counts.messages, counts.events, finished,
                      _peak_rss_mib(), counts.engine_s, counts.engine_cpu_s, utilisation,
                      _peak_rss_mib(resource.RUSAGE_CHILDREN))


# ---------------------------------------------------------------------- reports

def _component(filename: str) -> str:
    """Which part of the stack a profiled function belongs to."""
    path = filename.replace(os.sep, "/")
    for marker, name in (("snficon/engine/", "snficon engine"), ("site-packages/batsim/",
                         "pybatsim"), ("probe.py", "probe scheduler"), ("snficon/policies/",
                         "fcfs scheduler"), ("procset", "procset"), ("numpy", "numpy"),
                         ("json", "json"), ("logging", "logging"), ("copy.py", "copy")):
        if marker in path:
            return name
    return "builtins/other" if filename.startswith("~") or "<" in filename else "other python"


def print_profile(profiler: cProfile.Profile, top: int = 25) -> None:
    """Top functions by cumulative time, then own time per component (share of the run)."""
    stream = io.StringIO()
    stats = pstats.Stats(profiler, stream=stream)
    stats.sort_stats("cumulative").print_stats(top)
    print(stream.getvalue())
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(top)
    print(stream.getvalue())
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats("snficon/engine", 15)
    print(stream.getvalue())
    own: dict[str, float] = defaultdict(float)
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    for (filename, _line, _name), (_cc, _nc, tottime, _cum, _callers) in raw.items():
        own[_component(filename)] += tottime
    total = sum(own.values()) or 1.0
    print("own time by component (profiled):")
    for name, seconds in sorted(own.items(), key=lambda item: -item[1]):
        print(f"  {name:<18} {seconds:8.2f} s  {100 * seconds / total:5.1f} %")


def print_medians(runs: list[RunFigures]) -> None:
    """The median engine CPU time and engine-only rate of repeated runs of one mode."""
    cpu = statistics.median(figures.engine_cpu_s for figures in runs)
    rate = statistics.median(figures.events / figures.engine_cpu_s for figures in runs)
    print(f"{runs[0].mode:<10} median of {len(runs)} runs: {cpu:.2f} s of engine CPU, "
          f"{rate:,.0f} events per CPU second engine-only")


def print_figures(figures: RunFigures) -> None:
    extra = ""
    if figures.scheduler_peak_rss_mib is not None:
        extra = f"  (pybatsim process peak RSS {figures.scheduler_peak_rss_mib:.0f} MiB)"
    print(f"{figures.mode:<10} setup {figures.setup_s:6.2f} s  wall {figures.wall_s:7.2f} s  "
          f"messages {figures.messages:>7}  events {figures.events:>7}  "
          f"{figures.events_per_s:>9,.0f} events/s  {figures.messages_per_s:>8,.0f} msg/s  "
          f"peak RSS {figures.peak_rss_mib:.0f} MiB  jobs finished {figures.jobs_finished}  "
          f"utilisation {100 * figures.utilisation:.0f} %{extra}")
    engine_rate = figures.events / figures.engine_cpu_s
    print(f"{'':<10} inside the engine (first_message/answer): {figures.engine_s:.2f} s = "
          f"{100 * figures.engine_s / figures.wall_s:.0f} % of the wall time, "
          f"{figures.engine_cpu_s:.2f} s of CPU: {engine_rate:,.0f} events per CPU second "
          f"engine-only ({figures.events / figures.engine_s:,.0f} per wall second); the "
          f"scheduler side (pybatsim and the scheduler) took the other "
          f"{figures.wall_s - figures.engine_s:.2f} s")
    if figures.mode == "inprocess":
        verdict = "met" if engine_rate >= TARGET_EVENTS_PER_S else "MISSED"
        print(f"{'':<10} target {TARGET_EVENTS_PER_S:,} events per CPU second in the engine: "
              f"{verdict}")


# ---------------------------------------------------------------------- command line

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1152, help="AOBA nodes (default 1152)")
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    parser.add_argument("--load", type=float, default=0.95,
                        help="offered load the arrival rate aims at (default 0.95)")
    parser.add_argument("--mode", choices=("inprocess", "zmq", "both"), default="both")
    parser.add_argument("--scheduler", choices=("auto", "probe", "fcfs"), default="auto",
                        help="auto: the conformance probe if ../shared exists, else fcfs")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each mode (a child process each); medians after them")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the in-process run; print the top 25 functions")
    parser.add_argument("--worker", nargs=2, metavar=("PLATFORM", "WORKLOAD"),
                        help=argparse.SUPPRESS)
    return parser


def worker(args: argparse.Namespace) -> int:
    """Run one mode on given files and print its figures as the last (JSON) line."""
    platform, workload = (Path(p) for p in args.worker)
    if args.mode == "inprocess":
        figures = run_inprocess(platform, workload, args.scheduler, args.profile)
    else:
        figures = run_zmq(platform, workload, args.scheduler, workload.parent)
    print(json.dumps(asdict(figures)))
    return 0


def run_mode(mode: str, platform: Path, workload: Path, args: argparse.Namespace) -> RunFigures:
    """Run ``mode`` in a child process so that its peak memory is its own."""
    command = [sys.executable, str(Path(__file__).resolve()), "--mode", mode,
               "--scheduler", args.scheduler, "--worker", str(platform), str(workload)]
    if args.profile and mode == "inprocess":
        command.append("--profile")
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
    *before, last = done.stdout.rstrip("\n").split("\n")
    if before:
        print("\n".join(before))
    return RunFigures(**json.loads(last))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.worker:
        return worker(args)
    spec, options = scheduler_choice(args.scheduler)
    if args.scheduler == "probe" and not PROBE.is_file():
        print(f"error: {PROBE.relative_to(REPO.parent)} not found", file=sys.stderr)
        return 2
    if args.scheduler == "auto" and not PROBE.is_file():
        print(f"note: {PROBE.relative_to(REPO.parent)} not found: using tests/engine/fcfs.py")
    with tempfile.TemporaryDirectory(prefix="snficon-bench-") as name:
        folder = Path(name)
        started = time.perf_counter()
        platform, workload, shape = write_case(folder, args.nodes, args.jobs, args.seed,
                                               args.load)
        print(f"case: {args.nodes} AOBA nodes, {args.jobs} jobs (seed {args.seed}, load "
              f"{args.load}): mean size {shape['mean_size']:.1f}, mean runtime "
              f"{shape['mean_runtime_s']:.0f} s, mean inter-arrival "
              f"{shape['mean_interarrival_s']:.1f} s; generated in "
              f"{time.perf_counter() - started:.1f} s")
        print(f"scheduler: {Path(spec).name} {json.dumps(options)}")
        modes = ("inprocess", "zmq") if args.mode == "both" else (args.mode,)
        for mode in modes:
            runs = [run_mode(mode, platform, workload, args) for _ in range(args.repeat)]
            for figures in runs:
                print_figures(figures)
            if len(runs) > 1:
                print_medians(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
