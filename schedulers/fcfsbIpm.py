"""``pybatsim fcfsbIpm``: the ``fcfsbIpm`` row of :data:`snficon.policy_table.POLICIES`."""

from snficon.adapter.scheduler import scheduler_class

FcfsbIpm = scheduler_class("fcfsbIpm")
