"""Where runs execute: one small interface, three back ends.

An executor sees only :func:`snficon.campaign.runs.execute` and the specs
(signac-flow's ``flow/scheduling/base.py``): it yields each spec with the
folder ``execute`` returned, or with the exception that escaped it (a worker
that died), in completion order.

- ``serial``: in this process, one after another (debugging, tests);
- ``local``: a process pool of ``workers`` processes on this machine;
- ``dask``: Dask distributed, on a LocalCluster of ``workers`` processes or
  on an existing scheduler (``address``, e.g. one dask-jobqueue started on a
  Slurm cluster; its workers must import ``snficon`` and see RESULTS).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from snficon.campaign.errors import ExecutorUnavailableError
from snficon.campaign.expand import RunSpec
from snficon.campaign.runs import execute
from snficon.errors import InputError

Outcome = tuple[RunSpec, Path | BaseException]
EXECUTORS = ("local", "dask", "serial")


class Executor:
    """Runs specs; a context manager that releases its workers on exit."""

    name = "base"

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def run(self, specs: Sequence[RunSpec]) -> Iterator[Outcome]:
        raise NotImplementedError

    def close(self) -> None:
        """Stop the workers, dropping runs not started yet."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
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


class LocalExecutor(Executor):
    """A pool of ``workers`` processes.

    On Linux they are forked (nothing to re-import, no ``__main__`` guard
    needed); elsewhere spawned, as fork is unsafe there.
    """

    name = "local"

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        method = "fork" if sys.platform.startswith("linux") else "spawn"
        context = multiprocessing.get_context(method)
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)

    def run(self, specs: Sequence[RunSpec]) -> Iterator[Outcome]:
        futures: dict[Future[Path], RunSpec] = {self.pool.submit(execute, s): s for s in specs}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as exc:
                yield futures[future], exc

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(Executor):
    """Dask distributed: a LocalCluster of ``workers`` processes, or the scheduler ``address``."""

    name = "dask"

    def __init__(self, workers: int, address: str | None = None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ExecutorUnavailableError(
                "the dask executor needs Dask distributed, which is not installed "
                "(package 'distributed', e.g. pip install 'dask[distributed]'); "
                "use --executor local meanwhile") from None
        self.cluster: Any = None
        if address:
            self.client = Client(address)
            workers = len(self.client.scheduler_info().get("workers", {})) or workers
        else:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                        processes=True, dashboard_address=None)
            self.client = Client(self.cluster)
        super().__init__(workers)

    def run(self, specs: Sequence[RunSpec]) -> Iterator[Outcome]:
        from dask.distributed import as_completed as dask_completed

        futures = {self.client.submit(execute, spec, key=f"snficon-run-{spec.run_id}",
                                      pure=False): spec for spec in specs}
        for future in dask_completed(list(futures)):
            try:
                yield futures[future], future.result()
            except Exception as exc:
                yield futures[future], exc

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(name: str, workers: int | None = None,
                  address: str | None = None) -> Executor:
    """The executor called ``name`` (one of :data:`EXECUTORS`)."""
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
    raise InputError(f"unknown executor {name!r} (known: {', '.join(EXECUTORS)})")
