r"""The paper's generated Markovian workload (paper section VI-B, SPEC section 4).

Job sizes are geometric on {1, 2, ...} with parameter ``p``, capped at
``cap`` nodes; interarrival, run and requested times are exponential and
independent (so many jobs overrun their request). The mean interarrival time
is chosen so that the offered load is ``load``:

.. math:: m = \frac{E[r] \, \bar{s}}{N \rho}

with :math:`E[r]` the mean job size, :math:`\bar s` the mean runtime,
:math:`N` the number of nodes and :math:`\rho` the load.

With the defaults, :func:`generate_markovian` regenerates the paper's
``generated-markovian-3000.json``: sizes, runtimes and requested times bit for
bit; submission times to about 2e-11 relative with ``res_mean="capped"`` (the
SPEC's formula), and bit for bit with ``res_mean="truncated"``, the mean the
authors' file was in fact made with (see :func:`mean_truncated_geometric`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snficon.errors import InputError
from snficon.workload.trace import TraceJob

RES_MEANS = ("capped", "truncated")


def mean_capped_geometric(p: float, cap: int) -> float:
    r"""Mean of :math:`\min(X, c)` for :math:`X` geometric on {1, 2, ...} (SPEC section 4).

    .. math:: E[\min(X, c)] = \sum_{k=0}^{c-1} (1-p)^k = \frac{1 - (1-p)^c}{p}
    """
    return (1.0 - (1.0 - p) ** cap) / p


def mean_truncated_geometric(p: float, cap: int) -> float:
    r"""Mean of :math:`X` geometric on {1, 2, ...} conditioned on :math:`X \le c`.

    .. math:: E[X \mid X \le c] = \frac{\sum_{k=1}^{c} k\,p(1-p)^{k-1}}
                                       {\sum_{k=1}^{c} p(1-p)^{k-1}}

    evaluated in that order with numpy. It differs from
    :func:`mean_capped_geometric` by about 2e-11 relative for p = 0.35,
    c = 64, and is the value the paper's Markovian file was generated with
    (its submission times match this one bit for bit).
    """
    k = np.arange(1, cap + 1)
    pmf = p * (1.0 - p) ** (k - 1)
    return float((k * pmf).sum() / pmf.sum())


@dataclass(frozen=True)
class MarkovianParams:
    """Parameters of the Markovian generator; the defaults are the paper's.

    ``seed`` seeds ``numpy.random.default_rng``; ``n_jobs`` jobs; ``load`` the
    offered load rho; ``nodes`` the platform size N (also the output's
    ``nb_res``); ``mean_runtime_s`` and ``mean_reqtime_s`` the means of the
    exponential run and requested times; ``p`` and ``cap`` the job-size
    geometric and its cap; ``res_mean`` which mean job size sets the arrival
    rate (``capped``: the SPEC's formula; ``truncated``: the authors' value).
    """

    seed: int = 43
    n_jobs: int = 3000
    load: float = 0.4
    nodes: int = 64
    mean_runtime_s: float = 7200.0
    mean_reqtime_s: float = 8640.0
    p: float = 0.35
    cap: int = 64
    res_mean: str = "capped"

    def __post_init__(self) -> None:
        checks = [
            (self.n_jobs >= 1, "n_jobs", "at least 1"),
            (self.load > 0, "load", "positive"),
            (self.nodes >= 1, "nodes", "at least 1"),
            (self.mean_runtime_s > 0, "mean_runtime_s", "positive"),
            (self.mean_reqtime_s > 0, "mean_reqtime_s", "positive"),
            (0 < self.p <= 1, "p", "in (0, 1]"),
            (self.cap >= 1, "cap", "at least 1"),
        ]
        for ok, name, rule in checks:
            if not ok:
                raise InputError(f"Markovian parameter {name} must be {rule}, "
                                 f"got {getattr(self, name)!r}")
        if self.res_mean not in RES_MEANS:
            raise InputError(f"Markovian parameter res_mean must be one of "
                             f"{', '.join(RES_MEANS)}, got {self.res_mean!r}")

    @property
    def mean_res(self) -> float:
        """E[r], the mean job size used for the arrival rate."""
        if self.res_mean == "truncated":
            return mean_truncated_geometric(self.p, self.cap)
        return mean_capped_geometric(self.p, self.cap)

    @property
    def mean_interarrival_s(self) -> float:
        """m = E[r] * mean runtime / (N * load), the mean gap between submissions."""
        return self.mean_res * self.mean_runtime_s / (self.nodes * self.load)


def generate_markovian(params: MarkovianParams | None = None) -> tuple[TraceJob, ...]:
    """Draw the Markovian workload (SPEC section 4), jobs numbered 1..n.

    The four arrays are drawn from one ``default_rng(seed)`` in this order:
    sizes ``min(geometric(p), cap)``, interarrivals ``exponential(m)``,
    runtimes ``exponential(mean_runtime_s)``, requested times
    ``exponential(mean_reqtime_s)``. Submission times are the cumulative sums
    of the interarrivals, so the first job arrives after one gap.
    """
    params = params or MarkovianParams()
    n = params.n_jobs
    rng = np.random.default_rng(seed=params.seed)
    res = np.minimum(rng.geometric(p=params.p, size=n), params.cap)
    interarrivals = rng.exponential(params.mean_interarrival_s, n)
    runtimes = rng.exponential(params.mean_runtime_s, n)
    reqtimes = rng.exponential(params.mean_reqtime_s, n)
    subtimes = np.cumsum(interarrivals)
    return tuple(
        TraceJob(id=i + 1, res=int(res[i]), subtime=float(subtimes[i]),
                 runtime=float(runtimes[i]), reqtime=float(reqtimes[i]))
        for i in range(n))
