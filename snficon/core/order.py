"""Queue orders: smallest-need-first (paper eq. 4) and first-come-first-served."""

from __future__ import annotations

from collections.abc import Sequence

from snficon.core.view import QueuedJob


def snf_order(queue: Sequence[QueuedJob]) -> list[QueuedJob]:
    r"""Sort the queue by the smallest-need-first key (paper, Definition 3, eq. 4).

    .. math:: j \prec_{SNF} k \iff (r_j, \tau_j, z_j) <_{lex} (r_k, \tau_k, z_k)

    requested nodes first, then requested time, then the arrival rank.
    """
    return sorted(queue, key=lambda job: (job.res, job.req_time_s, job.order))


def fcfs_order(queue: Sequence[QueuedJob]) -> list[QueuedJob]:
    """Sort the queue by arrival (submission time, then arrival rank)."""
    return sorted(queue, key=lambda job: (job.submit_s, job.order))
