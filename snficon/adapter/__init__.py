"""The pybatsim side: protocol hooks in, decisions of the pure core out."""
