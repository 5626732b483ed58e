"""Where runs execute: one small interface, four back ends.

An executor sees only :func:`snficon.campaign.runs.execute` and the specs
(signac-flow's ``flow/scheduling/base.py``): it yields each spec with the
folder ``execute`` returned, or with the exception that escaped it (a worker
that died), in completion order.

Leaving the ``with`` block normally waits for the runs in progress
(:meth:`Executor.close`); leaving it on Ctrl-C or SIGTERM (a
``KeyboardInterrupt``, :mod:`snficon.interrupts`) stops
at once (:meth:`Executor.abort`): runs not started are dropped and those in
progress are killed. A killed run leaves only its hidden scratch folder,
which never counts as done (:mod:`snficon.campaign.runs`).

- ``serial``: in this process, one after another (debugging, tests);
- ``local``: up to ``workers`` processes on this machine, one per run;
- ``dask``: Dask distributed, on a LocalCluster of ``workers`` processes
  (TLS with temporary credentials: no other client can use it) or
  on an existing scheduler (``address``, e.g. one dask-jobqueue started on a
  Slurm cluster; its workers must import ``snficon`` and see RESULTS);
- ``slurm``: Dask workers submitted as Slurm jobs (dask-jobqueue), scaling
  with the queued runs, as the campaign's ``[cluster]`` table says
  (:mod:`snficon.campaign.cluster`).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import connection
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from snficon.campaign.cluster import (
    check_job_script,
    check_slurm_available,
    make_cluster,
    start_scaling,
    temporary_security,
)
from snficon.campaign.cluster_settings import ClusterSettings
from snficon.campaign.errors import ExecutorUnavailableError, WorkerDiedError
from snficon.campaign.expand import RunSpec
from snficon.campaign.runs import execute
from snficon.errors import InputError
from snficon.interrupts import STOP_SIGNALS, default_stop_signals_in_child
from snficon.lifeline import die_with_parent

LOG = logging.getLogger(__name__)

Outcome = tuple[RunSpec, Path | BaseException]
EXECUTORS = ("local", "dask", "slurm", "serial")
#: Seconds a killed worker process gets to exit before it is killed with SIGKILL.
KILL_GRACE_S = 2.0


class Executor:
    """Runs specs; a context manager that releases its workers on exit."""

    name = "base"

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def run(self, specs: Sequence[RunSpec]) -> Iterator[Outcome]:
        raise NotImplementedError

    def close(self) -> None:
        """Stop the workers, dropping runs not started yet; wait for those in progress."""

    def abort(self) -> None:
        """Stop now: drop the runs not started and kill those in progress."""
        self.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            self.abort()
        else:
            self.close()


class SerialExecutor(Executor):
    """In this process, in order."""

    name = "serial"

    def __init__(self, workers: int = 1) -> None:
        super().__init__(1)

    def run(self, specs: Sequence[RunSpec]) -> Iterator[Outcome]:
        for spec in specs:
            try:
                yield spec, execute(spec)
            except Exception as exc:
                yield spec, exc


def _ignore_interrupts() -> None:
    """Dask worker start-up: Ctrl-C is the campaign's to handle; it terminates the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _interrupt_plugin() -> Any:
    """A worker plugin calling :func:`_ignore_interrupts` in each worker, also in those an
    adaptive cluster starts later (its ``setup`` runs in the worker's main thread)."""
    from dask.distributed import WorkerPlugin

    class IgnoreInterrupts(WorkerPlugin):
        name = "snficon-ignore-interrupts"

        def setup(self, worker: Any) -> None:
            _ignore_interrupts()

    return IgnoreInterrupts()


class LocalExecutor(Executor):
    """Up to ``workers`` processes on this machine, one per run.

    Each run gets its own process, forked on Linux (nothing to re-import, no
    ``__main__`` guard needed) and spawned elsewhere, as fork is unsafe
    there. A process that dies (the kernel's out-of-memory killer, a
    ``kill -9``) fails only the run it held: the others go on and the next
    run starts in a new process, where a shared pool would be broken for
    every run queued on it. The memory of a run is returned to the system
    when it ends.

    The workers ignore SIGINT (a terminal's Ctrl-C reaches the whole process
    group): the campaign process handles it and terminates them
    (:meth:`abort`); SIGTERM ends a worker at once (a forked worker would
    otherwise inherit the campaign's handler, :mod:`snficon.interrupts`).
    They end with the campaign process, also when it is killed with SIGKILL
    (:func:`snficon.lifeline.die_with_parent`).
    """

    name = "local"

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        method = "fork" if sys.platform.startswith("linux") else "spawn"
        self.context = multiprocessing.get_context(method)
        if method == "fork":  # imported once here rather than in every run's process
            import snficon.drivers.session  # noqa: F401
        self.running: dict[str, _Worker] = {}

    def run(self, specs: Sequence[RunSpec]) -> Iterator[Outcome]:
        queue = deque(specs)
        while queue or self.running:
            while queue and len(self.running) < self.workers:
                self._start(queue.popleft())
            waited = {w.process.sentinel: w for w in self.running.values()}
            waited.update({w.receiver: w for w in self.running.values()})
            finished: dict[str, _Worker] = {}
            for ready in connection.wait(list(waited)):
                finished[waited[ready].spec.run_id] = waited[ready]
            for worker in finished.values():
                del self.running[worker.spec.run_id]
                yield worker.spec, worker.outcome()

    def _start(self, spec: RunSpec) -> None:
        receiver, sender = self.context.Pipe(duplex=False)
        process = self.context.Process(target=_run_in_worker, args=(spec, sender, os.getpid()),
                                       name=f"snficon-run-{spec.run_id}", daemon=True)
        # Ctrl-C or SIGTERM during the fork would raise in the fork's hooks, where Python
        # ignores exceptions: they wait until the worker is started and recorded for abort().
        with _stop_signals_blocked():
            process.start()
            sender.close()  # the worker's end: its exit is then seen as the end of the pipe
            self.running[spec.run_id] = _Worker(spec, process, receiver)

    def close(self) -> None:
        """Wait for the runs in progress (none are queued here once :meth:`run` returned)."""
        for worker in list(self.running.values()):
            worker.process.join()
            worker.receiver.close()
        self.running.clear()

    def abort(self) -> None:
        """Terminate the worker processes, waiting at most :data:`KILL_GRACE_S` for each."""
        processes = [worker.process for worker in self.running.values()]
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(KILL_GRACE_S)
            if process.is_alive():
                LOG.warning("worker %s ignored SIGTERM: killing it", process.pid)
                process.kill()
                process.join(KILL_GRACE_S)
        self.running.clear()


@dataclass
class _Worker:
    """A run's process and the end of the pipe its result comes back on."""

    spec: RunSpec
    process: BaseProcess
    receiver: Connection

    def outcome(self) -> Path | BaseException:
        """The folder :func:`execute` returned, the exception it raised, or a
        :class:`WorkerDiedError` when the process died without answering."""
        result: Path | BaseException | None = None
        try:
            if self.receiver.poll():
                result = self.receiver.recv()
        except (EOFError, OSError):
            result = None
        finally:
            self.process.join()
            self.receiver.close()
        if result is not None:
            return result
        return WorkerDiedError(f"the worker process running it (pid {self.process.pid}) "
                               f"{_death(self.process.exitcode)}; no other run was affected")


def _death(status: int | None) -> str:
    """How a process ended, from its exit code (negative: the signal that killed it)."""
    if status is not None and status < 0:
        name = signal.Signals(-status).name
        hint = (" (as the kernel's out-of-memory killer does: see `dmesg` or the system log)"
                if -status == signal.SIGKILL else "")
        return f"was killed by {name}{hint}"
    return f"exited with status {status} before reporting a result"


@contextmanager
def _stop_signals_blocked() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM are held back (delivered on leaving it)."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _run_in_worker(spec: RunSpec, sender: Connection, parent_pid: int) -> None:
    """A worker process: :func:`execute` ``spec`` and send back its folder or its exception."""
    default_stop_signals_in_child()
    if hasattr(signal, "pthread_sigmask"):  # blocked by the parent around the fork
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    die_with_parent(parent_pid)
    result: Path | BaseException
    try:
        result = execute(spec)
    except Exception as exc:
        result = exc
    try:
        sender.send(result)
    except Exception:  # an exception that does not pickle: its text
        sender.send(RuntimeError(f"{type(result).__name__}: {result}"))
    sender.close()


class DaskExecutor(Executor):
    """Dask distributed: a LocalCluster of ``workers`` processes, the scheduler ``address``,
    or a ``cluster`` made for the campaign (:func:`snficon.campaign.cluster.make_cluster`),
    which the executor closes."""

    name = "dask"

    def __init__(self, workers: int, address: str | None = None, cluster: Any = None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ExecutorUnavailableError(
                "the dask executor needs Dask distributed, which is not installed "
                "(package 'distributed', e.g. pip install 'dask[distributed]'); "
                "use --executor local meanwhile") from None
        self.cluster: Any = cluster
        if cluster is not None:
            self.client = Client(cluster)
            if isinstance(cluster, LocalCluster):  # its workers share our terminal
                self.client.register_plugin(_interrupt_plugin())
        elif address:
            self.client = Client(address)
            workers = len(self.client.scheduler_info().get("workers", {})) or workers
        else:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                        processes=True, dashboard_address=None,
                                        security=temporary_security())
            self.client = Client(self.cluster)
            # Our worker processes share the terminal: Ctrl-C is handled here (abort).
            self.client.run(_ignore_interrupts)
        self.futures: list[Any] = []
        super().__init__(workers)

    def run(self, specs: Sequence[RunSpec]) -> Iterator[Outcome]:
        from dask.distributed import as_completed as dask_completed

        futures = {self.client.submit(execute, spec, key=f"snficon-run-{spec.run_id}",
                                      pure=False): spec for spec in specs}
        self.futures = list(futures)
        for future in dask_completed(list(futures)):
            try:
                yield futures[future], future.result()
            except Exception as exc:
                yield futures[future], exc

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def abort(self) -> None:
        """Cancel every run, then close the client and our cluster: a LocalCluster's worker
        processes are killed, a Slurm cluster's jobs cancelled (scancel).

        On an existing scheduler (``address``) the workers are not ours to
        stop: a run already executing there finishes in the background (a
        thread cannot be killed) and publishes its folder, which a resumed
        campaign then counts as done.
        """
        try:
            if self.futures:
                self.client.cancel(self.futures, force=True)
        finally:
            local = self._local_workers()
            if local:
                self._terminate_workers()
            try:
                self.client.close(timeout=KILL_GRACE_S)
                if self.cluster is not None:  # scancel may take longer than local kills
                    self.cluster.close(timeout=KILL_GRACE_S if local else None)
            except TimeoutError as exc:  # the workers are dead; the rest is bookkeeping
                LOG.warning("dask: closing the cluster after an interrupt: %s", exc)

    def _local_workers(self) -> bool:
        """Whether the workers are processes of this machine (a LocalCluster): a Slurm
        cluster's are killed by cancelling their jobs, which closing it does."""
        from dask.distributed import LocalCluster

        return isinstance(self.cluster, LocalCluster)

    def _terminate_workers(self) -> None:
        """SIGTERM the LocalCluster's worker processes, their nannies told not to restart them.

        A cancelled task runs on in its worker's thread, which only the end
        of the process stops.
        """
        nannies = list(self.cluster.workers.values())
        for nanny in nannies:
            nanny.close_gracefully(reason="snficon-interrupted")
        for nanny in nannies:
            pid = nanny.pid
            if pid:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass


class ClusterExecutor(DaskExecutor):
    """Dask on a cluster made from the ``[cluster]`` settings: Slurm jobs (``kind`` slurm)
    or this machine's processes (``local``, the same code without Slurm), scaling
    between ``minimum_workers`` and ``maximum_workers`` (at most ``runs``)."""

    name = "slurm"

    def __init__(self, settings: ClusterSettings, runs: int, kind: str = "slurm",
                 credentials_dir: str | Path | None = None) -> None:
        if kind == "slurm":
            check_slurm_available()
        cluster = make_cluster(settings, kind, credentials_dir)
        try:
            if kind == "slurm":
                check_job_script(cluster, settings)
            bound = start_scaling(cluster, settings, runs, default=os.cpu_count() or 1)
            super().__init__(bound, cluster=cluster)
        except BaseException:
            cluster.close()
            raise


def make_executor(name: str, workers: int | None = None, address: str | None = None,
                  cluster: ClusterSettings | None = None, cluster_kind: str = "slurm",
                  credentials_dir: str | Path | None = None) -> Executor:
    """The executor called ``name`` (one of :data:`EXECUTORS`).

    ``dask`` on its own LocalCluster and ``slurm`` speak TLS with temporary
    credentials (:func:`snficon.campaign.cluster.temporary_security`); the
    Slurm workers read theirs from ``credentials_dir``. On a scheduler
    ``address`` the client uses the Dask configuration's security settings.

    ``slurm`` takes its workers from ``cluster`` (the ``[cluster]`` settings) on
    a cluster of ``cluster_kind`` (``local``: the same path on this machine);
    ``workers`` is then the number of runs to do, which bounds the workers.
    """
    count = workers if workers is not None else (os.cpu_count() or 1)
    if count < 1:
        raise InputError(f"workers: expected a positive count, got {count}")
    if address and name != "dask":
        raise InputError(f"a scheduler address is for the dask executor, not {name!r}")
    if name == "serial":
        return SerialExecutor()
    if name == "local":
        return LocalExecutor(count)
    if name == "dask":
        return DaskExecutor(count, address)
    if name == "slurm":
        return ClusterExecutor(cluster or ClusterSettings(), count, cluster_kind,
                               credentials_dir)
    raise InputError(f"unknown executor {name!r} (known: {', '.join(EXECUTORS)})")
