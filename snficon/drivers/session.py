"""One simulation from files to output files, in-process or against a pybatsim process.

Both paths run the same :class:`BatsimEngine`; only the transport differs.
Output files are written even when the run stops on an error (a protocol
violation, a crashed or dead scheduler, Ctrl-C or SIGTERM), so that what
happened until then is kept; they are then marked ``PREFIX_INCOMPLETE.txt``
(:func:`snficon.fileio.mark_incomplete`). A scheduler that raises an
exception (in-process) or whose process dies (pybatsim) ends the run with
:class:`SchedulerCrashError`, which names the scheduler, the exception and,
for a process, the log file holding its traceback.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snficon.drivers.inprocess import EngineLink, run_in_process
from snficon.drivers.progress import RunProgress
from snficon.drivers.transcript import Transcript
from snficon.drivers.zmq_link import run_over_zmq
from snficon.engine.jitter import TransitionJitter
from snficon.engine.outputs import OutputTables
from snficon.engine.simulator import BatsimEngine
from snficon.engine.wire import rapidjson_double
from snficon.errors import InputError, SchedulerCrashError, SchedulerTimeoutError, SnficonError
from snficon.fileio import clear_incomplete, mark_incomplete
from snficon.lifeline import exec_dies_with_parent
from snficon.platform.reader import read_platform, warn_hosts_without_energy
from snficon.registry import PROJECT_ROOT, load_scheduler
from snficon.workload.packed import read_packed_workload


@dataclass
class SimulationResult:
    """What a run produced: the output tables, the files written, the transcript."""

    engine: BatsimEngine
    files: list[Path] = field(default_factory=list)
    transcript: Transcript | None = None

    @property
    def tables(self) -> OutputTables:
        return self.engine.outputs()


def build_engine(platform: str | Path, workloads: Sequence[str | Path], *,
                 energy: bool = True, transition_jitter: float = 0.0,
                 seed: int | None = None) -> BatsimEngine:
    """Load the inputs (validating them) and make an engine at time 0.

    ``transition_jitter`` > 0 draws switch durations from Normal(mean, jitter x
    mean) with ``seed`` (:mod:`snficon.engine.jitter`; not Batsim's model).
    """
    loaded_platform = read_platform(platform)
    if energy:
        warn_hosts_without_energy(loaded_platform)
    # Batsim reads the workload with rapidjson's default number parser (``workload.cpp``
    # ``Workload::load_from_json``: ``Document::Parse``), not a correctly rounded one.
    # Packed: the jobs' texts, decoded one at a time as the engine reaches them.
    loaded = [read_packed_workload(path, parse_float=rapidjson_double) for path in workloads]
    labels = [str(Path(path).resolve()) for path in workloads]
    jitter = None
    if transition_jitter:
        if seed is None:
            raise InputError("a transition jitter needs a seed (e.g. --seed 42)")
        jitter = TransitionJitter(transition_jitter, seed)
    return BatsimEngine(loaded_platform, loaded, energy=energy, workload_labels=labels,
                        transition_jitter=jitter)


def _write_outputs(engine: BatsimEngine, prefix: str | Path | None,
                   transcript: Transcript | None, result: SimulationResult,
                   stopped: BaseException | None = None) -> None:
    """Write the output files; mark them unfinished when ``stopped`` ended the run early."""
    if prefix is None:
        return
    result.files = engine.outputs().write(prefix)
    if transcript is not None:
        result.files.append(transcript.write(f"{prefix}_transcript.jsonl"))
    if stopped is None:
        clear_incomplete(prefix)
    else:
        why = str(stopped).splitlines()[0] if str(stopped) else ""
        mark_incomplete(prefix, f"stopped at t={engine.now:g} by {type(stopped).__name__}"
                                + (f": {why}" if why else ""))


#: errno values of a failing output (a full disk or quota, an I/O error, a read-only disk).
OUTPUT_ERRNOS = frozenset((errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EFBIG))


def output_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is an output that could not be written (not a scheduler's bug)."""
    return isinstance(exc, OSError) and exc.errno in OUTPUT_ERRNOS


def _write_outputs_after(engine: BatsimEngine, prefix: str | Path | None,
                         transcript: Transcript | None, result: SimulationResult,
                         stopped: BaseException | None) -> None:
    """:func:`_write_outputs`; when the run already stopped on an error, a failure to write
    (a full disk) leaves that error to propagate, unmarked outputs being dropped by the
    caller (:mod:`snficon.staging`)."""
    try:
        _write_outputs(engine, prefix, transcript, result, stopped)
    except OSError:
        if stopped is None:
            raise


def _raised_by_engine(exc: BaseException) -> bool:
    """Whether ``exc`` rose on the engine's side of the link (a bug there), not the scheduler's.

    pybatsim calls the scheduler's hooks itself and reaches the engine only
    through :class:`EngineLink`'s methods, so a traceback through one of them
    comes from the engine.
    """
    link_file = sys.modules[EngineLink.__module__].__file__
    return any(frame.filename == link_file and frame.name in _LINK_METHODS
               for frame in traceback.extract_tb(exc.__traceback__))


_LINK_METHODS = frozenset(("recv", "send", "_deliver", "finish"))


def scheduler_crash(scheduler: str, now: float, exc: BaseException) -> SchedulerCrashError:
    """A one-line error naming the scheduler, the time and the exception (and where it rose)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" in {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return SchedulerCrashError(f"the scheduler {scheduler} crashed at t={now:g}: "
                               f"{type(exc).__name__}{': ' + text if text else ''}{where}")


def simulate_in_process(platform: str | Path, workloads: Sequence[str | Path], scheduler: str,
                        options: dict[str, Any] | None = None, *, energy: bool = True,
                        export_prefix: str | Path | None = None,
                        record: bool = False,
                        transcript: Transcript | None = None,
                        transition_jitter: float = 0.0,
                        seed: int | None = None,
                        progress: RunProgress | None = None) -> SimulationResult:
    """Run the scheduler (policy name or pybatsim ``.py`` file) in this process.

    ``progress`` (e.g. :func:`snficon.drivers.progress.terminal_progress`) shows
    how far the run is, and is closed when it ends.

    ``record`` keeps the messages in a new transcript; or pass ``transcript``,
    which then holds them even when the run stops on an error.
    ``transition_jitter`` and ``seed``: see :func:`build_engine`.
    """
    engine = build_engine(platform, workloads, energy=energy,
                          transition_jitter=transition_jitter, seed=seed)
    instance = load_scheduler(scheduler, options)
    if transcript is None and record:
        transcript = Transcript()
    result = SimulationResult(engine=engine, transcript=transcript)
    if export_prefix is not None:
        engine.tables.stream_to(export_prefix)
    stopped: BaseException | None = None
    try:
        run_in_process(engine, instance, transcript, progress)
    except SnficonError as exc:
        stopped = exc
        raise
    except Exception as exc:
        if _raised_by_engine(exc) or output_failure(exc):
            stopped = exc
            raise
        stopped = scheduler_crash(scheduler, engine.now, exc)
        raise stopped from exc
    except BaseException as exc:  # Ctrl-C, SIGTERM
        stopped = exc
        raise
    finally:
        if progress is not None:
            progress.close()
        _write_outputs_after(engine, export_prefix, transcript, result, stopped)
    return result


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def pybatsim_command(scheduler: str, options: dict[str, Any] | None, endpoint: str) -> list[str]:
    """The ``pybatsim`` command line for a scheduler (long decisions allowed: ``-t 0``)."""
    return [sys.executable, "-m", "batsim.cmds.launcher", scheduler, "-t", "0",
            "-s", endpoint, "-o", json.dumps(options or {}), "-v", "warning"]


def simulate_with_pybatsim(platform: str | Path, workloads: Sequence[str | Path],
                           scheduler: str, options: dict[str, Any] | None = None, *,
                           energy: bool = True, export_prefix: str | Path | None = None,
                           record: bool = False, answer_timeout_s: float = 600.0,
                           log_dir: str | Path | None = None,
                           transcript: Transcript | None = None) -> SimulationResult:
    """Run the scheduler as a separate ``pybatsim`` process, over ZeroMQ on loopback
    (``record``/``transcript`` as for :func:`simulate_in_process`).

    The process ends with this one, also when this one is killed with SIGKILL
    (on Linux, :func:`snficon.lifeline.exec_dies_with_parent`): it would
    otherwise stay listening on its port for ever.
    """
    engine = build_engine(platform, workloads, energy=energy)
    port = free_loopback_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PROJECT_ROOT), *filter(None, [env.get("PYTHONPATH")])])
    logs = Path(log_dir) if log_dir else None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    out = open(logs / "sched.out.log", "w") if logs else subprocess.DEVNULL  # noqa: SIM115
    err = open(logs / "sched.err.log", "w") if logs else subprocess.PIPE  # noqa: SIM115
    process = subprocess.Popen(
        pybatsim_command(scheduler, options, f"tcp://127.0.0.1:{port}"),
        env=env, stdout=out, stderr=err, text=True,
        preexec_fn=exec_dies_with_parent())  # ends with us, also after a kill -9
    if transcript is None and record:
        transcript = Transcript()
    result = SimulationResult(engine=engine, transcript=transcript)
    if export_prefix is not None:
        engine.tables.stream_to(export_prefix)
    stopped: BaseException | None = None
    try:
        run_over_zmq(engine, f"tcp://127.0.0.1:{port}", answer_timeout_s=answer_timeout_s,
                     transcript=transcript, peer_alive=lambda: process.poll() is None)
    except SchedulerTimeoutError as exc:
        if process.poll() is None:
            stopped = exc
            raise
        if logs:
            detail = f"; its traceback is in {logs / 'sched.err.log'}"
        else:
            detail = ("; its last output:\n" + process.stderr.read()[-2000:]
                      if process.stderr is not None else "")
        what = str(exc).removeprefix("the scheduler process ")
        stopped = SchedulerCrashError(f"the scheduler {scheduler} crashed: its pybatsim process "
                                      f"(exit status {process.returncode}) {what}{detail}")
        raise stopped from None
    except BaseException as exc:  # a protocol error, Ctrl-C, SIGTERM
        stopped = exc
        raise
    finally:
        if stopped is not None and process.poll() is None:
            process.terminate()  # it waits for a message that will not come
        _write_outputs_after(engine, export_prefix, transcript, result, stopped)
        try:
            process.wait(timeout=10 if stopped is None else 2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (out, err):
            if hasattr(stream, "close"):
                stream.close()
        if process.stderr is not None:
            process.stderr.close()
    return result
