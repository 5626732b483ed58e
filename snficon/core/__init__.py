"""The pure decision core: a view of the cluster in, decisions out (no sockets, no pybatsim)."""
