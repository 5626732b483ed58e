"""Analysis of finished runs: SPEC section 6 metrics and the section 7 decision log.

Everything here reads Batsim's output files only, so a run of the real Batsim,
of the embedded engine in-process or of the engine over ZeroMQ is measured the
same way.
"""
