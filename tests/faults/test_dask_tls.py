"""The campaign's own Dask schedulers speak TLS with temporary credentials: a client
without them is refused (a real LocalCluster on loopback), and the Slurm cluster's
workers are given theirs (the job script, without Slurm)."""

from __future__ import annotations

import stat

import pytest

pytest.importorskip("distributed")
pytest.importorskip("cryptography")

import dask  # noqa: E402
from distributed import Client, Security  # noqa: E402

from snficon.campaign.cluster import make_cluster  # noqa: E402
from snficon.campaign.cluster_settings import ClusterSettings  # noqa: E402
from snficon.campaign.executors import DaskExecutor  # noqa: E402


def _increment(value: int) -> int:
    return value + 1


def test_the_dask_executors_scheduler_refuses_a_client_without_its_credentials():
    with DaskExecutor(1) as executor:
        address = executor.cluster.scheduler_address
        assert address.startswith("tls://127.0.0.1:"), address
        assert executor.client.submit(_increment, 1).result(timeout=30) == 2  # its own client

        plain = "tcp://" + address.removeprefix("tls://")
        with pytest.raises(OSError):  # no TLS: the handshake never completes
            Client(plain, timeout="3s")
        with pytest.raises(OSError, match="TLS certificate does not match"):
            Client(address, security=Security.temporary(), timeout="3s")  # another CA


def test_the_slurm_cluster_gives_its_workers_temporary_tls_credentials(tmp_path):
    pytest.importorskip("dask_jobqueue")  # its configuration defaults, before they are set
    credentials = tmp_path / "results" / ".dask-credentials"
    settings = ClusterSettings(cores=1, memory="1GB")
    with dask.config.set({"jobqueue.slurm.interface": "lo"}):  # loopback only, here
        cluster = make_cluster(settings, "slurm", credentials)
    try:
        assert cluster.security.require_encryption
        assert cluster.scheduler_address.startswith("tls://127.0.0.1:")
        script = cluster.job_script()
        assert "tls://" in script
        files = sorted(credentials.iterdir())
        assert files, "no credentials written for the workers"
        for option in ("--tls-ca-file", "--tls-cert", "--tls-key"):
            value = script.split(option, 1)[1].split()[0]
            assert value.startswith(str(credentials)), (option, value)
        assert stat.S_IMODE(credentials.stat().st_mode) == 0o700
        for path in files:
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        cluster.close()
