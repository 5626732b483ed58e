"""Drivers: the one place that knows both sides of the protocol.

The engine (:mod:`snficon.engine`) simulates; schedulers (:mod:`snficon.adapter`,
any pybatsim class) decide. A driver carries the messages between them: in
the same process (:mod:`.inprocess`), over ZeroMQ (:mod:`.zmq_link`), as a
whole run from files to output files (:mod:`.session`) or as the
``snficon-batsim`` command (:mod:`.batsim_cli`). :mod:`.transcript` records
what crossed.
"""
