"""``pybatsim snficon``: the ``snficon`` row of :data:`snficon.policy_table.POLICIES`."""

from snficon.adapter.scheduler import scheduler_class

Snficon = scheduler_class("snficon")
