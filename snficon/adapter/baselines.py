"""The baselines as pybatsim schedulers: ``snfIpm`` and ``fcfsbIpm``."""

from __future__ import annotations

from functools import partial
from typing import Any

from snficon.adapter.scheduler import Policy, PolicyScheduler
from snficon.core.baseline import BaselineParams, decide_fcfs_easy_ipm, decide_snf_ipm
from snficon.platform.model import PowerModel


class SnfIpmScheduler(PolicyScheduler):
    """SNF+IPM (options: ``timeout``, ``platform``, ``decisions``)."""

    def configure(self, options: dict[str, Any]) -> None:
        self.params = BaselineParams.from_options(options)

    def make_policy(self, power: PowerModel) -> Policy:
        return partial(decide_snf_ipm, params=self.params)


class FcfsbIpmScheduler(SnfIpmScheduler):
    """FCFS/EASY+IPM, the PSAS+IPM baseline (options: ``timeout``, ``platform``, ``decisions``)."""

    def make_policy(self, power: PowerModel) -> Policy:
        return partial(decide_fcfs_easy_ipm, params=self.params)
