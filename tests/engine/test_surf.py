"""A solve's step from the minimum kept between steps is the step of the full scan."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from snficon.engine.surf import Action, Surf


class ScanningSurf(Surf):
    """The general path: every solve scans the rated actions for their minimum."""

    def solve(self) -> float:
        self._rated_next = None
        return super().solve()


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


def _state(surf: Surf, actions: list[Action]) -> tuple:
    return (_bits(surf.now), [a.seq for a in surf.take_finished()],
            [a.seq for a in surf.take_failed()],
            [(a.alive, _bits(a.remains), _bits(a.max_duration)) for a in actions])


def _run(surf: Surf, seed: int) -> list[tuple]:
    """Random execs, sleeps, zero-work actions, cancels and removals, then solves."""
    rng = np.random.default_rng(seed)
    hosts = np.arange(2, dtype=np.int64)
    actions: list[Action] = []
    trace = []
    for _ in range(600):
        choice = rng.random()
        if choice < 0.35:
            speeds = rng.uniform(1e8, 3e9, 2)
            flops = float(rng.choice([0.0, 1.0, rng.uniform(1e9, 1e13)], p=[0.05, 0.3, 0.65]))
            actions.append(surf.execute(hosts, flops, speeds, None))
        elif choice < 0.55:
            duration = float(rng.choice([rng.uniform(0, 5e3), rng.uniform(0, 1e-9)], p=[0.9, 0.1]))
            actions.append(surf.sleep(duration, -1, None))
        elif choice < 0.6:
            actions.append(surf.communicate(None))
        elif choice < 0.7 and actions:
            victim = actions[int(rng.integers(0, len(actions)))]
            if victim.alive:
                (surf.cancel if rng.random() < 0.5 else surf.remove)(victim)
        else:
            trace.append(_bits(surf.solve()))
        trace.append(_state(surf, actions))
    return trace


@pytest.mark.parametrize("seed", range(6))
def test_kept_minimum_steps_as_the_full_scan(seed):
    assert _run(Surf(), seed) == _run(ScanningSurf(), seed)
