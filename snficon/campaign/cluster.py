"""Dask clusters made from a campaign's ``[cluster]`` settings: Slurm jobs, or this machine.

:func:`make_cluster` is the one place a cluster is built, so that
``--executor slurm`` and a :class:`~distributed.LocalCluster` with the same
settings run the same code: the executor (:mod:`snficon.campaign.executors`)
builds the cluster, lets it scale between ``minimum_workers`` and
``maximum_workers`` with the queued runs (:func:`start_scaling`) and submits
the runs to it. Slurm's kind is dask-jobqueue's ``SLURMCluster``: each Slurm
job it submits (``cluster.job_script()`` shows the script) starts
``processes`` single-threaded Dask workers, each running one simulation at a
time; they must import ``snficon`` with the same Python (the campaign's own
interpreter, on a file system the compute nodes share) and see the results
folder at the same path.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from snficon.campaign.cluster_settings import ClusterSettings, walltime_seconds
from snficon.campaign.errors import ExecutorUnavailableError
from snficon.errors import InputError

CLUSTER_KINDS = ("slurm", "local")
#: Name of the Slurm jobs the workers run in (``squeue -n snficon-worker``).
JOB_NAME = "snficon-worker"


def slurm_arguments(settings: ClusterSettings) -> dict[str, Any]:
    """dask-jobqueue ``SLURMCluster`` keywords for ``settings``: only those set, so that
    the site's Dask configuration (``jobqueue.slurm``) gives the others."""
    given = {"queue": settings.queue, "account": settings.account, "cores": settings.cores,
             "memory": settings.memory, "walltime": settings.walltime,
             "processes": settings.worker_processes(),
             "local_directory": settings.local_directory}
    arguments: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
    if settings.job_extra_directives:
        arguments["job_extra_directives"] = list(settings.job_extra_directives)
    if settings.job_script_prologue:
        arguments["job_script_prologue"] = list(settings.job_script_prologue)
    arguments.update(job_name=JOB_NAME, scheduler_options={"dashboard_address": None})
    return arguments


def temporary_security() -> Any:
    """Dask TLS with a certificate authority and keys made for this campaign alone
    (``distributed.Security.temporary()``): the scheduler and workers accept only a peer
    holding them, so nobody else who reaches the scheduler's port can submit code."""
    from distributed import Security

    try:
        return Security.temporary()
    except ImportError:
        raise ExecutorUnavailableError(
            "the dask and slurm executors secure their scheduler with TLS, which needs the "
            "package 'cryptography' (pip install cryptography)") from None


def make_cluster(settings: ClusterSettings, kind: str,
                 credentials_dir: str | Path | None = None) -> Any:
    """A Dask cluster of ``kind`` (:data:`CLUSTER_KINDS`) for ``settings``, with no worker yet.

    ``slurm``: a ``SLURMCluster`` (its scheduler runs in this process; workers
    come as Slurm jobs once :func:`start_scaling` asks for them). ``local``:
    a ``LocalCluster`` of single-threaded worker processes on this machine
    (``cores``, ``memory``, ``walltime`` and the job lines do not apply).
    Both speak TLS with temporary credentials (:func:`temporary_security`);
    the Slurm workers read theirs from files dask-jobqueue writes (mode 0600)
    into ``credentials_dir``, which must be on a file system the compute
    nodes share (the campaign gives ``RESULTS/.dask-credentials``; without
    it, this machine's temporary folder), and removes when the cluster is
    closed.
    Raises InputError when dask-jobqueue refuses the settings (e.g. no
    ``cores`` or ``memory`` given here nor in the Dask configuration).
    """
    security = temporary_security()
    if kind == "slurm":
        try:
            from dask_jobqueue import SLURMCluster
        except ImportError:
            raise ExecutorUnavailableError(
                "the slurm executor needs dask-jobqueue, which is not installed "
                "(pip install dask-jobqueue)") from None
        if settings.walltime is not None:
            walltime_seconds(settings.walltime)  # checked once more: a malformed one is refused
        if credentials_dir is None:  # not shared with the nodes: to look at a job script
            credentials_dir = tempfile.gettempdir()
        else:
            Path(credentials_dir).mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            return SLURMCluster(**slurm_arguments(settings), security=security,
                                shared_temp_directory=str(credentials_dir))
        except ValueError as exc:  # e.g. "You must specify how much cores and memory ..."
            where = f"{settings.source} [cluster]" if settings.source else "[cluster]"
            raise InputError(f"{where}: dask-jobqueue refuses the settings: {exc} (give "
                             "them in the table or as --cluster-* options)") from None
    if kind == "local":
        from dask.distributed import LocalCluster

        return LocalCluster(n_workers=0, threads_per_worker=1, processes=True,
                            dashboard_address=None, security=security,
                            local_directory=settings.local_directory)
    raise InputError(f"unknown cluster kind {kind!r} (known: {', '.join(CLUSTER_KINDS)})")


def check_slurm_available() -> None:
    """Raise ExecutorUnavailableError when ``sbatch`` is not on the PATH: the workers could
    never start and the campaign would wait for them for ever."""
    if shutil.which("sbatch") is None:
        raise ExecutorUnavailableError(
            "--executor slurm submits its Dask workers as Slurm jobs with sbatch, which is "
            "not on the PATH here: run the campaign on a machine of the cluster that can "
            "submit jobs (a login node), or use --executor local or dask")


#: Seconds ``sbatch --test-only`` may take (it asks the Slurm controller).
TEST_ONLY_TIMEOUT_S = 120


def check_job_script(cluster: Any, settings: ClusterSettings) -> None:
    """Have Slurm check the worker job script (``sbatch --test-only``: validated, not
    submitted); raise InputError with sbatch's own message when it refuses it (an unknown
    partition or account, a walltime above the partition's limit...), since adaptive
    scaling would otherwise only log each refused submission while the campaign waits."""
    with tempfile.TemporaryDirectory(prefix="snficon-slurm-") as folder:
        script = Path(folder) / "worker.sh"
        script.write_text(cluster.job_script(), encoding="utf-8")
        try:
            checked = subprocess.run(["sbatch", "--test-only", str(script)],
                                     capture_output=True, text=True,
                                     timeout=TEST_ONLY_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ExecutorUnavailableError(f"sbatch --test-only could not check the worker "
                                           f"job script: {exc}") from None
    if checked.returncode != 0:
        said = (checked.stderr or checked.stdout).strip() or f"exit status {checked.returncode}"
        where = f"{settings.source} [cluster]" if settings.source else "[cluster]"
        raise InputError(f"{where}: Slurm refuses the worker job script (sbatch --test-only): "
                         f"{said}")


def start_scaling(cluster: Any, settings: ClusterSettings, runs: int, default: int) -> int:
    """Let ``cluster`` scale between ``minimum_workers`` and its worker bound, which is
    ``maximum_workers``, else one Slurm job's processes, else ``default``, and at most
    ``runs`` (the runs to do: more workers would idle); return that bound."""
    per_job = getattr(getattr(cluster, "_dummy_job", None), "worker_processes", None)
    bound = settings.maximum_workers or settings.worker_processes() or per_job or default
    bound = max(1, min(bound, runs))
    cluster.adapt(minimum=min(settings.minimum_workers, bound), maximum=bound)
    return bound
