"""``pybatsim snfIpm``: the ``snfIpm`` row of :data:`snficon.policy_table.POLICIES`."""

from snficon.adapter.scheduler import scheduler_class

SnfIpm = scheduler_class("snfIpm")
