"""``pybatsim rlBudiarjo``: the ``rlBudiarjo`` row of :data:`snficon.policy_table.POLICIES`."""

from snficon.adapter.scheduler import scheduler_class

RlBudiarjo = scheduler_class("rlBudiarjo")
