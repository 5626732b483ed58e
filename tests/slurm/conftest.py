"""The session's one-node Slurm (see slurm_node.py): skips the Slurm tests, saying why,
where none can be had; stops what it started when the session ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.slurm.slurm_node import SlurmNode, Unavailable, bring_up


@pytest.fixture(scope="session")
def slurm() -> Iterator[SlurmNode]:
    try:
        node = bring_up()
    except Unavailable as why:
        pytest.skip(f"no Slurm: {why}")
    try:
        yield node
    finally:
        node.stop()
