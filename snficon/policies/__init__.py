"""Scheduling policies, as pybatsim scheduler classes (see :mod:`snficon.registry`)."""
