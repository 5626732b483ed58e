"""The baselines as pybatsim schedulers: ``snfIpm`` and ``fcfsbIpm``."""

from __future__ import annotations

from functools import partial
from typing import Any

from snficon.adapter.scheduler import Policy, PolicyScheduler
from snficon.core.baseline import BaselineParams, decide_fcfs_easy_ipm, decide_snf_ipm


class SnfIpmScheduler(PolicyScheduler):
    """SNF+IPM (options: ``timeout``, ``platform``)."""

    def make_policy(self, options: dict[str, Any]) -> Policy:
        return partial(decide_snf_ipm, params=BaselineParams.from_options(options))


class FcfsbIpmScheduler(PolicyScheduler):
    """FCFS/EASY+IPM, the PSAS+IPM baseline (options: ``timeout``, ``platform``)."""

    def make_policy(self, options: dict[str, Any]) -> Policy:
        return partial(decide_fcfs_easy_ipm, params=BaselineParams.from_options(options))
