"""Pending sleeps in a heap: same clock, same ends, same order as SimGrid's step-by-step update."""

from __future__ import annotations

import random

import numpy as np

from snficon.engine.surf import REMAINS_PRECISION, SURF_PRECISION, Surf

HOSTS = np.arange(2, dtype=np.int64)


class EagerSurf:
    """SimGrid's step as written in ``HostL07Model::update_actions_state``: every action
    is updated at every step (the reference the heap must match bit for bit)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.actions: list[list] = []  # [name, rate, remains, max_duration]

    def sleep(self, duration: float, name: str) -> None:
        self.actions.append([name, 0.0, 1.0, duration])

    def execute(self, seconds: float, name: str) -> None:
        self.actions.append([name, 1e9 / (seconds * 1e9), 1.0, -1.0])  # speed / flops

    def solve(self) -> tuple[float, list[str]]:
        best = min(a[2] / a[1] if a[1] > 0 else a[3] for a in self.actions)
        self.now += best
        ended = []
        for action in self.actions:
            if action[1] > 0:
                action[2] -= action[1] * best
                if action[2] < REMAINS_PRECISION:
                    ended.append(action)
            else:
                action[3] -= best
                if action[3] < SURF_PRECISION:
                    ended.append(action)
        for action in ended:
            self.actions.remove(action)
        return best, [action[0] for action in ended]


def _durations(rng: random.Random) -> float:
    """Durations that end together, nearly together, or far apart."""
    return rng.choice([1.0, 0.1, 0.3, 1e-10, 7.25, 1e6 + 0.1]) * rng.choice([1, 3, 10]) \
        + rng.choice([0.0, 0.0, 1e-12, 2e-9, rng.random() * 100])


def test_the_heap_gives_the_clock_and_ends_of_the_step_by_step_update():
    rng = random.Random(1234)
    for trial in range(20):
        surf, eager = Surf(), EagerSurf()
        names = {}
        for step in range(300):
            for _ in range(rng.choice([0, 0, 1, 3])):
                name = f"s{trial}.{step}.{len(names)}"
                duration = _durations(rng)
                names[surf.sleep(duration, -1, name).activity] = name
                eager.sleep(duration, name)
            if rng.random() < 0.2:
                name = f"e{trial}.{step}"
                seconds = _durations(rng) + 0.5
                surf.execute(HOSTS, seconds * 1e9, np.array([1e9, 1e9]), name)
                eager.execute(seconds, name)
            if not eager.actions:
                continue
            best, ended = eager.solve()
            assert surf.solve() == best
            assert surf.now == eager.now
            assert [action.activity for action in surf.take_finished()] == ended


def test_sleeps_ending_at_the_same_time_end_in_the_order_they_started():
    surf = Surf()
    late = surf.sleep(5.0, -1, "late")
    surf.sleep(1.0, -1, "first")
    assert surf.solve() == 1.0
    surf.take_finished()
    # Started at 1 for 4 s: the same end as ``late``, whose duration went 5 -> 4.
    same = surf.sleep(4.0, -1, "same")
    earlier_seq = surf.sleep(4.0 - 1e-10, -1, "within the precision")
    assert surf.solve() == 4.0 - 1e-10
    assert [action.activity for action in surf.take_finished()] == [
        late.activity, same.activity, earlier_seq.activity]


def test_many_pending_sleeps_end_in_the_order_they_started_and_removed_ones_never_end():
    surf = Surf()
    sleeps = [surf.sleep(1000.0 - (i % 3), -1, i) for i in range(3000)]
    for action in sleeps[::2]:
        surf.remove(action)
    ends = []
    while surf.solve() >= 0.0:
        ends.append((surf.now, [action.activity for action in surf.take_finished()]))
    kept = [i for i in range(3000) if i % 2]
    assert ends == [(998.0, [i for i in kept if i % 3 == 2]),
                    (999.0, [i for i in kept if i % 3 == 1]),
                    (1000.0, [i for i in kept if i % 3 == 0])]


def test_a_sleep_pending_over_thousands_of_steps_ends_as_in_the_step_by_step_update():
    # Old deltas are dropped as the steps go (past 2,048 of them): the long sleeps, started
    # early, still replay every delta since they started.
    rng = random.Random(7)
    surf, eager = Surf(), EagerSurf()
    for name, duration in (("long", 3000.123456789), ("longer", 4000.0 + 1e-7)):
        surf.sleep(duration, -1, name)
        eager.sleep(duration, name)
    ends = []
    for step in range(12000):
        if len(eager.actions) < 40:
            duration = rng.choice([0.1, 0.7, 1.3]) + rng.random() * 1e-3
            surf.sleep(duration, -1, f"short{step}")
            eager.sleep(duration, f"short{step}")
        best, ended = eager.solve()
        assert surf.solve() == best and surf.now == eager.now
        assert [action.activity for action in surf.take_finished()] == ended
        ends += [(eager.now, name) for name in ended if name.startswith("long")]
    assert [name for _, name in ends] == ["long", "longer"]
