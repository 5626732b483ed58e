"""pybatsim entry modules: ``pybatsim NAME`` imports ``schedulers.NAME``, class ``Name``.

Each module is a thin shim over a class of the :mod:`snficon` library. Put the
repository root on ``PYTHONPATH`` so that pybatsim finds this package.
"""
